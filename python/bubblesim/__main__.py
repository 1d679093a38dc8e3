"""``python3 -m bubblesim``: the commands that take Python generator plugins (``--plugin FILE.py``).

The C++ ``bubblesim`` command loads C++ plugins (.so); generators written in Python are given to
this entry point instead, which runs the same engine and writes the same reports:

    python3 -m bubblesim run --plugin my_schedules.py scenario.yaml [--format json]
    python3 -m bubblesim sweep --plugin my_schedules.py sweep.yaml -o out.csv [--resume]
    python3 -m bubblesim check-plugin my_schedules.py

Exit codes as the CLI's: 0 ok, 1 a schedule failed (or the contract), 2 bad input.
"""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

import bubblesim


def _parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python3 -m bubblesim", description=__doc__.split("\n")[0])
    top.add_argument("--plugin", action="append", default=[],
                     help="a Python file that registers generators (repeatable)")
    sub = top.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a scenario and print its report")
    run.add_argument("scenario")
    run.add_argument("--plugin", action="append", default=[], dest="more_plugins")
    run.add_argument("--format", choices=["text", "json"], default="text")
    run.add_argument("--schedule", action="append", default=[])
    run.add_argument("--baseline", default="")
    run.add_argument("--max-ops", type=int, default=bubblesim.DEFAULT_MAX_OPS)
    run.add_argument("--fail-on", choices=["failure", "none"], default="failure")
    sweep = sub.add_parser("sweep", help="run a sweep on local processes into a CSV")
    sweep.add_argument("sweep")
    sweep.add_argument("--plugin", action="append", default=[], dest="more_plugins")
    sweep.add_argument("-o", "--output", required=True)
    sweep.add_argument("--resume", action="store_true")
    sweep.add_argument("-j", "--jobs", type=int, default=None)
    sweep.add_argument("--max-ops", type=int, default=bubblesim.DEFAULT_MAX_OPS)
    sweep.add_argument("--shard", default=None)
    check = sub.add_parser("check-plugin", help="run the generator contract on a plugin's generators")
    check.add_argument("file")
    return top


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    plugins = args.plugin + getattr(args, "more_plugins", [])
    try:
        if args.command == "check-plugin":
            before = set(bubblesim.generators())
            bubblesim.load_plugin(args.file)
            code = 0
            for name in [g for g in bubblesim.generators() if g not in before]:
                result = bubblesim.check_generator(name)
                print(f"{name}: {'pass' if result.ok else 'FAIL'} ({result.accepted} inputs "
                      f"accepted, {result.rejected} rejected)")
                for failure in result.failures:
                    print(f"  {failure}")
                code = code or (0 if result.ok else 1)
            return code
        for plugin in plugins:
            bubblesim.load_plugin(plugin)
        if args.command == "run":
            report = bubblesim.run(args.scenario, schedules=args.schedule, baseline=args.baseline,
                                   max_ops=args.max_ops)
            sys.stdout.write(report.to_json() + "\n" if args.format == "json" else report.text)
            return 1 if report.failed and args.fail_on == "failure" else 0
        summary = bubblesim.sweep(args.sweep, args.output, resume=args.resume,
                                  max_ops=args.max_ops, shard=args.shard, plugins=plugins,
                                  max_workers=args.jobs)
        for note in summary.notes:
            print(note, file=sys.stderr)
        print(f"wrote {args.output}: {summary.points} points, {summary.failed} invalid",
              file=sys.stderr)
        return 0
    except bubblesim.ScenarioError as e:
        print(e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
