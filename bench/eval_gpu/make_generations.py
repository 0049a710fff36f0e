"""A generations file for `kgym eval` from the built-in suite: per task, three turns, the
deliberately wrong candidate (tasks/wrong) and a hostile one (tests/hostile) before the
reference solution, where the task has them; the solution at the other turns.

    python bench/eval_gpu/make_generations.py --out gens.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def fenced(code: str) -> str:
    return "```python\n" + code + "\n```\n"


def build() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for task in sorted((ROOT / "tasks").glob("*.py")):
        solution = ROOT / "tasks" / "solutions" / task.name
        if not solution.exists():
            continue
        wrong = sorted((ROOT / "tasks" / "wrong").glob(f"{task.stem}__*.py"))
        hostile = sorted((ROOT / "tests" / "hostile").glob(f"{task.stem}__*.py"))
        turns = [p.read_text() for p in (wrong[:1] + hostile[:1])]
        turns += [solution.read_text()] * (3 - len(turns))
        for turn, code in enumerate(turns, 1):
            rows.append({"task": task.stem, "sample": 0, "turn": turn, "completion": fenced(code)})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    rows = build()
    args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(f"{len(rows)} rows to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
