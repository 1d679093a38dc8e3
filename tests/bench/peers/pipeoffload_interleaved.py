#!/usr/bin/env python3
"""Runs PipeOffload's interleaved schedule with offload, to compare `optimized` against it.

PipeOffload (Wan et al. 2025, sail-sg) lives in the zero-bubble repository
(sail-sg/zero-bubble-pipeline-parallelism, commit 39f2c186, "Add flags for PipeOffload"). Its
runtime, with --cpu-offload and an interleaved (virtual) pipeline, does:
  local_order = group_interleaved_1f1b.create_schedule(config, cpu_offload=True, ...,
                    interleave_group_size=G, offload_chunk_num=C)
  run_schedule_passes(config, local_order, offload_time=k)   # add_time, then add_offload
This driver imports those files by path (only the standard library is needed; the one import of
megatron.training is stubbed) and calls the same steps: create_schedule, then passes.add_time
(the timeline: every op as early as its dependency and its device allow, the delay between
devices) and offloading.add_offload (postpones warm-up F's, puts the D2H / H2D copies of the
activations of chunks < C into the timeline's gaps, drops those that do not fit). The copies
never move a compute op, so the span is add_time's.

k (--offload-time): one chunk's activation copied one way takes k x (T_F + T_B + T_W) of that
chunk while the two GPUs of a pair share the link (`parallel_offload_time`); the schedule
alternates each GPU's D2H and H2D copies on a grid of that length, the pair's GPUs in opposite
phase; during warm-up a lone copy takes 0.7 of it.

Per case it prints the stage span (largest per-device span, first compute op start to last
compute op end) and the peak activation memory in chunk activations: `peak_own` is the peer's own
count (offloading.get_peak_memory: F +1, reload start +1, copy-to-host end -1, W -1, in its list
order); `peak_events` recounts the same timeline with every allocation at an instant before every
release there (F and reload at their start, W and copy-to-host at their end), which is how
bubblesim's timing model takes ties. Chunk activations are M_B / chunks (M_B: one microbatch on
one device of a straight pipeline), so peak / chunks is the budget in M_B units.

Usage: pipeoffload_interleaved.py CHECKOUT
  CHECKOUT  a local copy of the repository's scheduler folder, e.g.
            git -C MIRROR archive 39f2c186 megatron/core/pipeline_parallel/zerobubble/scheduler |
            tar -x -C /tmp/pipeoffload
Prints CSV rows: p,m,f,b,w,c,k,group,span,peak_own,peak_events,offloaded,note (per chunk costs;
note: why the peer refused the shape, its span empty then).
"""
import contextlib
import importlib
import io
import os
import sys
import types

SCHEDULER = "megatron/core/pipeline_parallel/zerobubble/scheduler"
PACKAGE = SCHEDULER.replace("/", ".")
CHUNKS = 2  # virtual pipeline size (two chunks per device, the README's setting)
OFFLOAD_CHUNKS = 1  # --offload-chunk-num 1 (the README's quick start)
# p, m, per-chunk T_F, T_B, T_W, delay
CASES = [(4, 8, 1, 1, 1, 0), (4, 16, 1, 1, 1, 0), (8, 16, 1, 1, 1, 0),
         (4, 8, 2, 3, 1, 1), (4, 16, 2, 3, 1, 1), (8, 16, 2, 3, 1, 1)]
KS = [1.0, 0.75, 0.5]


def load(checkout):
    """Imports the scheduler package from CHECKOUT without the rest of Megatron."""
    for name in ["megatron", "megatron.core", "megatron.core.pipeline_parallel",
                 "megatron.core.pipeline_parallel.zerobubble"]:
        pkg = types.ModuleType(name)
        pkg.__path__ = []
        sys.modules[name] = pkg
    training = types.ModuleType("megatron.training")
    training.get_args = lambda: types.SimpleNamespace(offload_overlap_sr=False)
    sys.modules["megatron.training"] = training
    pkg = types.ModuleType(PACKAGE)
    pkg.__path__ = [os.path.join(checkout, SCHEDULER)]
    sys.modules[PACKAGE] = pkg
    mods = {}
    for name in ["graph", "group_interleaved_1f1b", "passes", "offloading"]:
        mods[name] = importlib.import_module(PACKAGE + "." + name)
    return mods


def groups(p):
    """--interleave-group-size: the README allows ceil(p / 2) to p."""
    return sorted({(p + 1) // 2, p})


def measure(mods, local_order):
    graph = mods["graph"]
    ft = graph.FuncType
    compute = {ft.F, ft.B, ft.W, ft.BW, ft.R}
    span = 0.0
    for nodes in local_order:
        ops = [n for n in nodes if n.type in compute]
        span = max(span, max(n.completion_time for n in ops) - min(n.start_time for n in ops))
    peak_own = max(mods["offloading"].get_peak_memory(local_order))
    peak_events, offloaded = 0, 0
    for nodes in local_order:
        events = []  # (time, order at one instant, delta)
        for n in nodes:
            if n.type in (ft.W, ft.BW):
                events.append((n.completion_time, 0, -1))
            elif n.type in (ft.F, ft.OFFLOAD_RECV_PREP):
                events.append((n.start_time, 1, 1))
            elif n.type == ft.OFFLOAD_SEND_END:
                events.append((n.completion_time, 2, -1))
                offloaded += 1
        mem = 0
        for _, _, delta in sorted(events):
            mem += delta
            peak_events = max(peak_events, mem)
    return span, peak_own, peak_events, offloaded


def run(mods, p, m, f, b, w, c, k, group):
    graph, gi = mods["graph"], mods["group_interleaved_1f1b"]
    config = graph.GraphConfig.basic_config(f=float(f), b=float(b), w=float(w), n_stages=p,
                                            n_micro=m, max_chunks=CHUNKS)
    config.cost_comm = float(c)
    with contextlib.redirect_stdout(io.StringIO()):  # it prints its schedules
        order = gi.create_schedule(config, cpu_offload=True, recompute_granularity=None,
                                   recompute_method=None, recompute_num_layers=None,
                                   interleave_group_size=group, offload_chunk_num=OFFLOAD_CHUNKS)
        order = mods["passes"].add_time(config, order)
        order = mods["offloading"].add_offload(config, order, k)
    return measure(mods, order)


def main():
    mods = load(sys.argv[1])
    print("p,m,f,b,w,c,k,group,span,peak_own,peak_events,offloaded,note")
    for p, m, f, b, w, c in CASES:
        for k in KS:
            for group in groups(p):
                try:
                    span, own, events, offloaded = run(mods, p, m, f, b, w, c, k, group)
                except (AssertionError, RuntimeError, IndexError) as e:  # the peer refuses the shape
                    reason = str(e).replace(",", ";")
                    print(f"{p},{m},{f},{b},{w},{c},{k},{group},,,,,refused: {reason}")
                    continue
                print(f"{p},{m},{f},{b},{w},{c},{k},{group},{span:g},{own},{events},{offloaded},")


if __name__ == "__main__":
    main()
