"""What the decoy phase costs an evaluation on this machine, and what the deterministic-mode
switch it uses would cost through torch's public setter (which imports Inductor's config).

Usage: python bench/decoy_cost/run.py [--repeats 3] [--out bench/decoy_cost/results.md]

Each figure comes from a fresh interpreter (imports are once per process, as in a runner):
- the time of ``torch.use_deterministic_algorithms(True, warn_only=True)`` after ``import
  torch`` (the public setter, which the decoy phase used before 2026-11-26), against
  ``torch._C._set_deterministic_algorithms`` (the flag alone, which it uses now);
- the phases of a CPU ``kgym check`` of ``01_relu``'s built-in solution (`durations_ms`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

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
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("results.md"))
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

    text = (
        "# Cost of the decoy phase's deterministic-mode switch (CPU)\n\n"
        f"Command: `python bench/decoy_cost/run.py --repeats {args.repeats}`\n\n"
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, no GPU; torch "
        f"{torch.__version__}; date {dt.datetime.now(dt.UTC).isoformat(timespec='seconds')}.\n\n"
        "Medians of fresh interpreters, after `import torch`:\n\n"
        "| switch | time |\n|---|---|\n" + "\n".join(rows) + "\n\n"
        "A CPU `kgym check` of `01_relu`'s built-in solution with the code as it is "
        f"(statuses: {sorted({str(c['status']) for c in checks})}), phases (`durations_ms`):\n\n"  # type: ignore[index]
        "| phase | median |\n|---|---|\n" + "\n".join(check_rows) + "\n"
    )
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
