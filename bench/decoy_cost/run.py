"""What the decoy phase costs an evaluation on this machine, and what the deterministic-mode
switch it uses would cost through torch's public setter (which imports Inductor's config).

Usage: python bench/decoy_cost/run.py [--repeats 3] [--out FILE]

Writes results-<machine>.md beside this file (or --out).

Each figure comes from a fresh interpreter (imports are once per process, as in a runner):
- the time of ``torch.use_deterministic_algorithms(True, warn_only=True)`` after ``import
  torch`` (the public setter, which imports Inductor's config and Dynamo with it), against
  ``torch._C._set_deterministic_algorithms`` (the flag alone, which the decoy phase uses);
- the phases of a CPU ``kgym check`` of ``01_relu``'s built-in solution (`durations_ms`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from record import header, record, results_path  # noqa: E402

SETTER = """
import time, warnings, torch
warnings.simplefilter("ignore")
t = time.perf_counter()
{call}
print(json.dumps(time.perf_counter() - t))
"""

CHECK = """
import json
from kgym.check import CheckOptions, check
from kgym.tasks import find_task
t = find_task("01_relu")
r = check(t, t.solution_path().read_text(), CheckOptions(device="cpu", trials=3))
print(json.dumps({"status": r["status"], **r["durations_ms"]}))
"""


def fresh(code: str) -> object:
    out = subprocess.run(
        [sys.executable, "-c", "import json\n" + code], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, help="default: results-<machine>.md beside this file")
    args = parser.parse_args()
    public = [
        float(fresh(SETTER.format(call="torch.use_deterministic_algorithms(True, warn_only=True)")))
        for _ in range(args.repeats)
    ]
    flag = [
        float(
            fresh(
                SETTER.format(call="torch._C._set_deterministic_algorithms(True, warn_only=True)")
            )
        )
        for _ in range(args.repeats)
    ]
    checks = [fresh(CHECK) for _ in range(args.repeats)]
    median = statistics.median
    rows = [
        f"| public setter `torch.use_deterministic_algorithms` | {median(public) * 1e3:.0f} ms |",
        f"| the flag alone `torch._C._set_deterministic_algorithms` | {median(flag) * 1e3:.2f} ms |",
    ]
    phases = ["startup", "load", "init", "correctness", "decoy", "total"]
    check_rows = [
        f"| {p} | {median(float(c[p]) for c in checks):.0f} ms |"  # type: ignore[index]
        for p in phases
    ]
    import torch

    command = f"python bench/decoy_cost/run.py --repeats {args.repeats}"
    title = "Cost of the decoy phase's deterministic mode"
    text = (
        "\n".join(header(title, command))
        + (
            f"- torch {torch.__version__}\n\n"
            "Medians of fresh interpreters, after `import torch`:\n\n"
            "| switch | time |\n|---|---|\n" + "\n".join(rows) + "\n\n"
            "A CPU `kgym check` of `01_relu`'s built-in solution with the code as it is "
            f"(statuses: {sorted({str(c['status']) for c in checks})}), phases (`durations_ms`):\n\n"  # type: ignore[index]
            "| phase | median |\n|---|---|\n" + "\n".join(check_rows) + "\n"
        )
    )
    record(args.out or results_path(HERE), [text], {"text": text}, False)
    print(text)


if __name__ == "__main__":
    main()
