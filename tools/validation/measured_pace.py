"""Where the replay's missing time is, for docs/validation.md (used by validate_measured.py).

Two analyses of the 24 measured cells, each printed as a section of the doc:

pace_rows: every schedule of every model ran at three microbatch counts, so its iteration time
splits into a per-microbatch cost (the steady state's pace, the slope over m) and a fixed part
(warm-up, cool-down, optimizer step: the intercept). Measured and predicted are split alike.
Ops that all run slower would show in both parts; a pipeline paced by one device slower than the
stage the profile describes shows in the slope alone.

straggler_scan: the replay with one device slowed (`faults.stragglers`, docs/reliability.md), for
each device and a few slowdowns: how close one slower GPU brings both models at once.
"""
import statistics

from validation_common import pct

SLOWDOWNS = (1.03, 1.045, 1.06, 1.075, 1.09)


def _fit(points):
    """Least-squares (intercept, slope) of [(m, seconds)]."""
    mx = statistics.mean(m for m, _ in points)
    my = statistics.mean(t for _, t in points)
    slope = (sum((m - mx) * (t - my) for m, t in points) /
             sum((m - mx) ** 2 for m, _ in points))
    return my - slope * mx, slope


def pace_rows(rows):
    """[(model, schedule, measured (fixed s, per-microbatch s), predicted (fixed, per-mb))] from
    the rows of run_config (((model, m, schedule), measured, predicted, error))."""
    series = {}
    for (model, m, schedule), meas, pred, _ in rows:
        series.setdefault((model, schedule), []).append((int(m), meas, pred))
    out = []
    for (model, schedule), pts in series.items():
        if len(pts) < 2:
            continue
        out.append((model, schedule, _fit([(m, t) for m, t, _ in pts]),
                    _fit([(m, p) for m, _, p in pts])))
    return out


def pace_section(rows):
    lines = ["", "## Where the missing time is: the steady state's pace", "",
             "Each schedule ran at three microbatch counts, so its iteration time splits into a "
             "cost per microbatch (the slope over m: the steady state's pace) and a fixed part "
             "(the intercept: warm-up, cool-down, optimizer step), measured and predicted alike "
             "(least squares over m = 24, 32, 64):", "",
             "| model | schedule | per microbatch, measured (ms) | predicted (ms) | difference | "
             "fixed, measured (ms) | predicted (ms) | difference |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for model, schedule, (mf, ms), (pf, ps) in pace_rows(rows):
        lines.append(f"| {model} | {schedule} | {1e3 * ms:.2f} | {1e3 * ps:.2f} | "
                     f"{pct((ps - ms) / ms)} | {1e3 * mf:.0f} | {1e3 * pf:.0f} | "
                     f"{1e3 * (pf - mf):+.0f} ms |")
    lines += ["", PACE_READING]
    return lines


PACE_READING = """\
How to read it: the missing time is in the pace. The fixed parts agree within a few tens of
milliseconds (for 1F1B within 10 ms; 1F1B-I of the 1.5B model is the exception, its pace right
and its fixed part 60 ms short); if every op ran a few percent slower than Table 9, 1F1B's
fixed part, about seven stages' worth of ops, would grow by the same few percent (30 ms for the
6.2B model), and it does not. A 1F1B or ZB steady state runs at the pace of its slowest device,
while its warm-up and cool-down pass through every device once. Table 9 gives the median
stage's times (the authors' runtime takes the median over the stages' profiles). So the
measurements say: one device of the pipeline was slower than the median stage."""


def straggler_scan(binary, cells, run_config, table10, slowdowns=SLOWDOWNS):
    """{(device, slowdown): (run_config result, Table 10 rows)} with `faults.stragglers` slowing
    one device's compute ops by `slowdown`; every device of the first cell's pipeline."""
    stages = int(cells[0]["stages"])
    out = {}
    for device in range(stages):
        for s in slowdowns:
            straggler = dict(straggler=(device, s))
            out[(device, s)] = (run_config(binary, cells, straggler),
                                table10(binary, cells, straggler))
    return out


def _signed_by_model(result):
    by = {}
    for (model, _, _), _, _, e in result["rows"]:
        by.setdefault(model, []).append(e)
    return {m: statistics.mean(v) for m, v in by.items()}


def straggler_section(scan):
    slowdowns = sorted({s for _, s in scan})
    devices = sorted({d for d, _ in scan})
    last = devices[-1]
    lines = ["", "## One slower GPU (`faults.stragglers`)", "",
             "The replay again with one device's compute ops slowed by a factor "
             "(`faults: {stragglers: [{device: d, slowdown: s}]}`, docs/reliability.md), for "
             "every device and a few factors. Each cell: mean |error| / max over the 24 cells, "
             "then the mean signed error of the 1.5B and of the 6.2B cells (both models ran on "
             "the same eight GPUs), then Table 10's ratio error for 1.5B and 6.2B:", "",
             "| device | " + " | ".join(f"x{s}" for s in slowdowns) + " |",
             "|---|" + "---|" * len(slowdowns)]
    for d in devices:
        where = " (first stage)" if d == 0 else " (last stage)" if d == last else ""
        cells = []
        for s in slowdowns:
            r, t10 = scan[(d, s)]
            signed = _signed_by_model(r)
            kept = "" if not r["bad"] else f", order {r['pairs'] - len(r['bad'])}/{r['pairs']}"
            cells.append(f"{100 * r['mae']:.2f}% / {100 * r['worst']:.2f}%{kept}; "
                         + ", ".join(pct(signed[m]) for m in sorted(signed)) + "; T10 "
                         + ", ".join(pct(row[4]) for row in t10))
        lines.append(f"| {d}{where} | " + " | ".join(cells) + " |")
    lines += ["", STRAGGLER_READING]
    return lines


STRAGGLER_READING = """\
How to read it: on the first stage (one layer fewer, with slack) a slower GPU changes little; on
the last stage (with the LM head and the loss) it is already the 1.5B pipeline's slowest, and a
slower GPU there overshoots that model. On any middle device one factor of about 1.06-1.075
brings the mean signed error of both models near zero together, and the mean absolute error
under 1.5%: the two models' gaps (3% and 5.5% in the pace) are one GPU's slowness seen through
two different stage layouts. Where that GPU sits also moves Table 10's ratio: with it on
devices 1-4 the predicted ratio falls 2-6% short of the measured one, on devices 5 and 6 it
stays within 3%. This explains the gap by a mechanism the replay
has (a pipeline runs at its slowest device's pace), but its size is one more calibrated number:
the paper publishes only the median stage's profile, not each GPU's. A user predicting their own
cluster measures each GPU (tools/profile, docs/calibration.md "Between chips") and gives the
slow ones as `faults.stragglers` or the spread as `variability: {per: device}`."""
