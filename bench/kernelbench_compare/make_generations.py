"""A generations file for `kgym eval` on KernelBench from the candidates of
bench/kernelbench_policy: per level-2 task three samples (all-Triton `strict.py`, cuBLAS +
Triton epilogue `hybrid.py`, pure PyTorch `torch_only.py`), per level-1 task one (`triton.py`).

    python bench/kernelbench_compare/make_generations.py --out gens.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

CANDIDATES = Path(__file__).resolve().parents[1] / "kernelbench_policy" / "candidates"
SAMPLES = ("strict.py", "hybrid.py", "torch_only.py")


def build() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for level_dir in sorted(CANDIDATES.glob("level*")):
        for task in sorted(p for p in level_dir.iterdir() if p.is_dir()):
            files = (
                [task / "triton.py"]
                if (task / "triton.py").exists()
                else [task / s for s in SAMPLES]
            )
            for sample, path in enumerate(files):
                rows.append(
                    {
                        "task": f"{level_dir.name}/{task.name}",
                        "sample": sample,
                        "turn": 1,
                        "completion": "```python\n" + path.read_text() + "\n```\n",
                        "candidate": path.name,
                    }
                )
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
