"""The README's two commands in a fresh clone: how long `bash scripts/demo.sh` takes from a bare
clone (set-up, build, then the demo) and `bash scripts/test.sh` right after it (lint, the C++
tests under ASan and UBSan, pytest), which is what CI runs (`.ci/run`) and must keep under 30
minutes.

    python bench/ci_time/run.py [--clone-dir /tmp/kgym-fresh] [--ref HEAD] [--json]

Clones this repository's REF into --clone-dir (removed first), runs the two commands there one
after the other, and writes results-<machine>.md beside this file: the wall time of each, of
test.sh's phases (from its `==` lines), and what the demo and the tests reported.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))
from record import header, record, results_path  # noqa: E402


def timed(argv: list[str], cwd: Path) -> dict[str, Any]:
    """Runs a command, echoing its output; its wall time, the time each `== phase` line began,
    and its output's last lines."""
    began = time.monotonic()
    phases: list[tuple[str, float]] = []
    tail: list[str] = []
    proc = subprocess.Popen(
        argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        sys.stderr.write(line)
        if line.startswith("== "):
            phases.append((line[3:].strip(), time.monotonic() - began))
        tail = [*tail[-199:], line.rstrip("\n")]
    code = proc.wait()
    return {"wall_s": time.monotonic() - began, "code": code, "phases": phases, "tail": tail}


def minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {int(seconds % 60)} s"


def found(pattern: str, lines: list[str]) -> str:
    for line in reversed(lines):
        m = re.search(pattern, line)
        if m:
            return m.group(0)
    return "not found"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clone-dir", type=Path, default=Path("/tmp/kgym-fresh"))
    p.add_argument("--ref", default="HEAD", help="the commit to clone (default HEAD)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = p.parse_args()
    shutil.rmtree(args.clone_dir, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", str(ROOT), str(args.clone_dir)], check=True)
    subprocess.run(["git", "-C", str(args.clone_dir), "checkout", "-q", args.ref], check=True)
    commit = subprocess.run(
        ["git", "-C", str(args.clone_dir), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    demo = timed(["bash", "scripts/demo.sh"], args.clone_dir)
    test = timed(["bash", "scripts/test.sh"], args.clone_dir)
    marks = [("set-up and build", 0.0), *test["phases"], ("end", test["wall_s"])]
    phase_cells = ", ".join(
        f"{name} {minutes(marks[i + 1][1] - start)}" for i, (name, start) in enumerate(marks[:-1])
    )
    data = {
        "commit": commit,
        "demo": {k: demo[k] for k in ("wall_s", "code")},
        "test": {k: test[k] for k in ("wall_s", "code", "phases")},
    }
    demo_said = found(r"\d+ evaluations: [^|]*", demo["tail"])
    pytest_said = found(r"\d+ passed[^=]*", test["tail"])
    ctest_said = found(r"\d+% tests passed[^|]*", test["tail"])
    command = "python bench/ci_time/run.py " + " ".join(sys.argv[1:])
    lines = [
        *header("The README's two commands in a fresh clone", command),
        f"`git clone` of {commit}, then `bash scripts/demo.sh` from the bare clone (set-up, build, "
        "the demo) and `bash scripts/test.sh` right after it, nothing else running.",
        "",
        "| command | wall | exit | what it reported |",
        "| --- | --- | --- | --- |",
        f"| `bash scripts/demo.sh` | {minutes(demo['wall_s'])} | {demo['code']} | {demo_said} |",
        f"| `bash scripts/test.sh` | {minutes(test['wall_s'])} | {test['code']} | "
        f"{pytest_said}; C++: {ctest_said} |",
        "",
        f"`test.sh` by phase: {phase_cells}.",
    ]
    record(results_path(HERE), lines, data, args.json)
    return 0 if demo["code"] == 0 and test["code"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
