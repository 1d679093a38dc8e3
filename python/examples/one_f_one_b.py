"""1F1B (PipeDream-Flush / DAPPLE) written in Python: the built-in `1f1b` reimplemented as a
bubblesim generator plugin, registered as `py-1f1b`.

Device r runs w = min(p - r - 1, m) warm-up forwards, then m - w rounds of (next forward, oldest
backward), then w cool-down backwards (Narayanan et al., PipeDream-Flush 2021; Fan et al., DAPPLE
2021). The backward is not split: B runs input and weight gradients as one op.

Use it from Python (`bubblesim.load_plugin("python/examples/one_f_one_b.py")`), in a sweep
(`bubblesim.sweep(..., plugins=[...])`) or with `python3 -m bubblesim run --plugin FILE SCENARIO`;
then name `py-1f1b` in a scenario's `schedules:`.
"""

import bubblesim


def one_f_one_b(inp: bubblesim.GeneratorInput) -> bubblesim.Table:
    p, m = inp.devices, inp.microbatches
    table = bubblesim.Table(devices=p, microbatches=m, placement="straight")
    for r in range(p):
        warmup = min(p - r - 1, m)
        ops = [bubblesim.Op("F", r, j) for j in range(warmup)]
        for i in range(m - warmup):
            ops.append(bubblesim.Op("F", r, warmup + i))
            ops.append(bubblesim.Op("B", r, i))
        ops += [bubblesim.Op("B", r, j) for j in range(m - warmup, m)]
        for op in ops:
            table.append(r, op)
    return table


def one_f_one_b_formula(inp: bubblesim.GeneratorInput) -> dict:
    p, m = inp.devices, inp.microbatches
    first = inp.costs[0]
    keys = ("forward_s", "backward_input_s", "backward_weight_s")
    uniform = all(all(c[k] == first[k] for k in keys) for c in inp.costs)
    return {
        "peak_activation_units": min(p, m),
        "bubble_ratio": (p - 1) / (m + p - 1) if uniform else None,
        "note": "bubble (p-1)/(m+p-1) with uniform stages and no communication; peak p-r on "
                "device r",
    }


bubblesim.register_generator(
    "py-1f1b", one_f_one_b, formula=one_f_one_b_formula, replace=True,
    description="one forward, one backward after a warm-up of p-r-1 forwards (PipeDream-Flush), "
                "in Python",
    placement="straight",
    source="Narayanan et al., PipeDream-Flush 2021; Fan et al., DAPPLE 2021")
