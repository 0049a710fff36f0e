"""The sandbox attack probe of tests/test_sandbox_escape.py, with the job sandbox on and off.

The probe runs as a task source (unscreened, in the judge: the weakest side) and tries to read
a secret file and /etc/shadow, scan other processes' environments, see the host's processes,
signal the supervisor, open host devices, overwrite a file in the host's /dev/shm, write outside
the job, reach a socket on the host's loopback, list other jobs' directories, read the shipped
reference solutions and leave a process behind. Each attempt is recorded as got / refused, once
with the job's namespaces, view and unprivileged uid (the default) and once without them
(`private_view: false`, `sandbox_uid: -1`). Writes ``results-<machine>.md`` beside this file (or
to --out-dir).

    python bench/sandbox_attacks/run.py [--device cpu|cuda] [--json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

import test_sandbox_escape as probe  # noqa: E402
from record import results_path  # noqa: E402

from kgym import _core  # noqa: E402
from kgym.check import CheckOptions  # noqa: E402
from kgym.tasks import Task, find_task  # noqa: E402

# What counts as the attempt getting through, per probe key.
GOT = {
    "secret_file": lambda v, b: v.startswith("secret-"),
    "shadow": lambda v, b: v.startswith("root:"),
    "env_scan": lambda v, b: v not in ("[]",) and not v.startswith("ERR:"),
    "pids": lambda v, b: not v.startswith("ERR:") and v.count(",") >= 9,
    "supervisor": lambda v, b: v == "REACHED",
    "devices": lambda v, b: "OPENED:" in v,
    "shm": lambda v, b: v == "SHM-WRITTEN",
    "outside": lambda v, b: v == "OUTSIDE-WRITTEN",
    "uid": lambda v, b: v == "UID=0",
    "net": lambda v, b: v == "CONNECTED",
    "listing": lambda v, b: b.decoy.name in v,
    "solutions": lambda v, b: v not in ("[]",) and not v.startswith("ERR:"),
}
LABELS = {
    "secret_file": "read a file planted outside the job",
    "shadow": "read /etc/shadow",
    "env_scan": "find the supervisor's secret in /proc/*/environ",
    "pids": "see the host's processes (10 or more pids)",
    "supervisor": "signal the supervisor (kill 0)",
    "devices": "open /dev/kmsg, loop0, kvm, mem, sda or vda",
    "shm": "overwrite a host file in /dev/shm",
    "outside": "write a file outside the job",
    "uid": "run as root",
    "net": "connect to the host's loopback",
    "listing": "list another job's directory",
    "solutions": "read the shipped reference solutions",
    "survivor": "leave a process running after the job",
}


def one_run(device: str, sandboxed: bool) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix="kgym-bench-attack-"))
    bait = probe.Bait(workdir)
    os.environ[probe.SECRET_ENV] = bait.mark
    try:
        relu = find_task("01_relu")
        source = bait.constants() + probe.PROBE + relu.source
        task = Task(id="probe", path=relu.path, source=source, description="")
        options = CheckOptions(
            device=device, trials=1, timeout_s=120, baseline="none" if device == "cuda" else None
        )
        job = options.job(task, probe.BASE)
        if not sandboxed:
            job["private_view"] = False
            job["sandbox_uid"] = -1
        started = time.monotonic()
        result = json.loads(_core.evaluate(json.dumps(job), None))
        wall = time.monotonic() - started
        got = probe.probed(result)
        time.sleep(0.5)
        rows = {key: bool(test(got.get(key, "ERR:missing"), bait)) for key, test in GOT.items()}
        rows["survivor"] = bool(probe.survivors(bait.sleep))
        for pid in probe.survivors(bait.sleep):
            os.kill(pid, 9)
        return {
            "sandboxed": sandboxed,
            "status": result["status"],
            "wall_s": round(wall, 2),
            "private_view": result["sandbox"]["private_view"],
            "unprivileged": (result.get("judge") or {}).get("unprivileged"),
            "got": rows,
        }
    finally:
        bait.close()
        os.environ.pop(probe.SECRET_ENV, None)


def machine(device: str) -> str:
    name = platform.node()
    if device == "cuda":
        import torch

        name += f", {torch.cuda.get_device_name(0)}"
    return f"{name} ({platform.machine()}, {os.cpu_count()} cores, Linux {platform.release()})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--out-dir", type=Path, default=Path(__file__).resolve().parent)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    runs = []
    for sandboxed in (True, False):
        print(f"probe with the sandbox {'on' if sandboxed else 'off'}...", file=sys.stderr)
        runs.append(one_run(args.device, sandboxed))
    report = {
        "command": "python bench/sandbox_attacks/run.py --device " + args.device,
        "machine": machine(args.device),
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "runs": runs,
    }
    args.out_dir.mkdir(parents=True, exist_ok=True)
    on, off = runs
    lines = [
        f"# Sandbox attack probe ({args.device})",
        "",
        f"- command: `{report['command']}`",
        f"- machine: {report['machine']}",
        f"- date: {report['date']}",
        "",
        "One task source tries each attack from inside the judge (unscreened). `got` means the",
        "attempt succeeded.",
        "",
        "| attempt | sandbox on | sandbox off |",
        "| --- | --- | --- |",
    ]
    for key, label in LABELS.items():
        lines.append(
            f"| {label} | {'got' if on['got'][key] else 'refused'} "
            f"| {'got' if off['got'][key] else 'refused'} |"
        )
    got_on = sum(on["got"].values())
    got_off = sum(off["got"].values())
    lines += [
        "",
        f"Sandbox on: {got_on} of {len(LABELS)} attempts got through; off: {got_off}.",
        f"Status of the (honest) evaluation around the probe: on `{on['status']}` "
        f"({on['wall_s']} s), off `{off['status']}` ({off['wall_s']} s). "
        f"private_view on: {on['private_view']}, judge unprivileged: {on['unprivileged']}.",
        "",
    ]
    name = "cpu" if args.device == "cpu" else None
    results_path(args.out_dir, name).write_text("\n".join(lines))
    print(json.dumps(report, indent=2) if args.json else "\n".join(lines))


if __name__ == "__main__":
    main()
