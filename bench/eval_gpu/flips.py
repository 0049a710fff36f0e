"""The share of Fast@p verdicts that differ between two `kgym eval` runs of the same
generations (one verdict per attempt: accepted with speedup >= p, under the run's policy).

    python bench/eval_gpu/flips.py RUN_A RUN_B [--p 1.2] [--json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kgym.evaluation.attempt import attempt_from_result
from kgym.evaluation.metrics import is_fast


def verdicts(run: Path, p: float, policy: str) -> dict[tuple[str, int, int], bool]:
    out = {}
    for line in (run / "results.jsonl").open():
        row = json.loads(line)
        a = attempt_from_result(
            row["result"], row["task"], row.get("level"), row["sample"], row["turn"]
        )
        out[row["task"], row["sample"], row["turn"]] = is_fast(a, policy, p)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs=2, type=Path)
    parser.add_argument("--p", type=float, default=1.2)
    parser.add_argument("--policy", default="hybrid")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    a, b = (verdicts(r, args.p, args.policy) for r in args.runs)
    common = sorted(a.keys() & b.keys())
    flipped = [k for k in common if a[k] != b[k]]
    report = {
        "p": args.p,
        "attempts": len(common),
        "flipped": len(flipped),
        "share": len(flipped) / len(common) if common else None,
        "which": [list(k) for k in flipped],
    }
    print(
        json.dumps(report)
        if args.json
        else f"{len(flipped)} of {len(common)} Fast@{args.p} verdicts differ: {flipped}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
