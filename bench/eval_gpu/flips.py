"""The share of Fast@p verdicts that differ between two `kgym eval` runs of the same
generations (one verdict per attempt: accepted with speedup >= p, under the run's policy), the
statuses that differ, and how far the speedups of attempts timed in both runs moved.

    python bench/eval_gpu/flips.py RUN_A RUN_B [--p 1.2] [--json] [--results FILE]

--results writes the benchmark's results file: these figures, then RUN_A's report.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from kgym.evaluation.attempt import attempt_from_result
from kgym.evaluation.metrics import is_fast

Key = tuple[str, int, int]


def attempts(run: Path) -> dict[Key, Any]:
    out = {}
    for line in (run / "results.jsonl").open():
        row = json.loads(line)
        out[row["task"], row["sample"], row["turn"]] = attempt_from_result(
            row["result"], row["task"], row.get("level"), row["sample"], row["turn"]
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs=2, type=Path)
    parser.add_argument("--p", type=float, default=1.2)
    parser.add_argument("--policy", default="hybrid")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--results", type=Path, help="write the results file here")
    args = parser.parse_args()
    a, b = (attempts(r) for r in args.runs)
    common = sorted(a.keys() & b.keys())
    flipped = [
        k
        for k in common
        if is_fast(a[k], args.policy, args.p) != is_fast(b[k], args.policy, args.p)
    ]
    statuses = [k for k in common if a[k].status != b[k].status]
    moves = sorted(
        (abs(a[k].speedup / b[k].speedup - 1.0), k, a[k].speedup, b[k].speedup)
        for k in common
        if a[k].speedup and b[k].speedup
    )
    report = {
        "p": args.p,
        "attempts": len(common),
        "flipped": len(flipped),
        "share": len(flipped) / len(common) if common else None,
        "which": [{"attempt": list(k), "speedups": [a[k].speedup, b[k].speedup]} for k in flipped],
        "status_differs": [list(k) for k in statuses],
        "timed_in_both": len(moves),
        "speedup_move_median": statistics.median(m[0] for m in moves) if moves else None,
        "speedup_moves_over_2pct": [
            {"attempt": list(k), "speedups": [x, y]} for d, k, x, y in moves if d > 0.02
        ],
    }
    if args.results:
        write_results(args.results, args.runs[0], report)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{len(flipped)} of {len(common)} Fast@{args.p} verdicts differ: {report['which']}")
        print(f"statuses that differ: {len(statuses)}; timed in both runs: {len(moves)}")
        if moves:
            print(
                f"speedup moved by {report['speedup_move_median']:.1%} (median), "
                f"{moves[-1][0]:.1%} at most ({moves[-1][1]}); over 2%: "
                f"{len(report['speedup_moves_over_2pct'])}"
            )
    return 0


def write_results(path: Path, run_a: Path, report: dict[str, Any]) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from record import header, record  # noqa: PLC0415 - bench/record.py

    moves = report["speedup_moves_over_2pct"]
    largest = max((abs(m["speedups"][0] / m["speedups"][1] - 1.0) for m in moves), default=0.0)
    lines = [
        *header(
            "kgym eval of the built-in generations, twice", "bash bench/eval_gpu/device.sh OUT"
        ),
        "## The two runs against each other",
        "",
        f"| attempts | Fast@{report['p']} verdicts that differ | statuses that differ | timed in "
        "both | speedup move (median) | moves over 2% | largest move |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        f"| {report['attempts']} | {report['flipped']} ({report['share']:.1%}) | "
        f"{len(report['status_differs'])} | {report['timed_in_both']} | "
        f"{report['speedup_move_median']:.1%} | {len(moves)} | {largest:.1%} |",
        "",
        "## The first run's report",
        "",
    ]
    report_md = run_a / "report.md"
    if report_md.is_file():
        text = report_md.read_text()
        lines += [
            ln.replace("# ", "### ", 1) if ln.startswith("#") else ln for ln in text.splitlines()
        ]
    record(path, lines, report, False)


if __name__ == "__main__":
    raise SystemExit(main())
