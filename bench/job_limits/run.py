"""What KernelBench jobs take of a host, to size the job limits' defaults (memory_limit_mib,
pids_limit, disk_limit_mib, gpu_memory_share_mib).

Every task of the chosen KernelBench levels is evaluated at its own (native) sizes through one
`kgym-gym serve` with its slots as in production (--workers-per-gpu jobs beside each other on a
GPU), its candidate the task's own Model under the name ModelNew with its output passed twice
through a Triton negation (screen off, hybrid policy, the task's inputs): a job that goes through
every phase, timing and profile included. With --candidates, the Triton candidates of
bench/kernelbench_policy (which pass, and so are timed and profiled) run too. Each job's Result
says what it took: sandbox.resources (the cgroup's memory and pids peaks, the directory's peak)
and judge.gpu_memory.job_peak_mib (the job's processes on the GPU, from the driver). The job
limits of the service are the defaults unless given: a job over one is reported, so the run says
whether the defaults let every task through.

    python bench/job_limits/run.py --kernelbench .kernelbench/KernelBench --levels 1 2 3 \\
        --machine h200          # results-h200-level123.md and .json beside this file
    python bench/job_limits/run.py --kernelbench ... --gpus none --limit 4   # CPU: a smoke run

Writes the table (one row per level: the largest and the 99th percentile of each figure, and
the tasks over a limit) and the JSON (every job's figures) as results-<machine>-level<levels>.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from service_util import Gym, call  # noqa: E402

POLICY_CANDIDATES = ROOT / "bench" / "kernelbench_policy" / "candidates"
FIGURES = ("memory_peak_mib", "pids_peak", "disk_peak_mib", "gpu_job_peak_mib", "wall_s")


# The task's own Model, its floating-point output passed twice through a Triton negation: every
# call launches kernels that matter (neither copies its input nor can be left out), so the job
# goes through every phase, timing and profile included, at the task's own sizes.
OWN_MODEL_WRAPPER = """

import triton
import triton.language as tl


@triton.jit
def _kgym_negate(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, -tl.load(x_ptr + offsets, mask=mask), mask=mask)


def _kgym_negated(t):
    t = t.contiguous()
    y = torch.empty_like(t)
    _kgym_negate[(triton.cdiv(t.numel(), 1024),)](t, y, t.numel(), BLOCK=1024)
    return y


class ModelNew(Model):
    def forward(self, *args):
        out = super().forward(*args)
        if isinstance(out, torch.Tensor) and out.is_floating_point():
            return _kgym_negated(_kgym_negated(out))
        return out
"""


def own_model_candidate(task_source: str) -> str:
    """The task's own Model as the candidate, with Triton kernels that matter around it."""
    return task_source + OWN_MODEL_WRAPPER


def jobs_of(kernelbench: Path, levels: list[int], limit: int, candidates: bool) -> list[dict]:
    out = []
    for level in levels:
        tasks = sorted((kernelbench / f"level{level}").glob("*.py"), key=task_number)
        if limit:
            step = max(1, len(tasks) // limit)
            tasks = tasks[::step][:limit]
        for task in tasks:
            source = task.read_text()
            out.append(
                {
                    "level": level,
                    "task": task.stem,
                    "candidate": "own model",
                    "source": source,
                    "code": own_model_candidate(source),
                }
            )
            folder = POLICY_CANDIDATES / f"level{level}" / task.stem
            if candidates and folder.is_dir():
                for file in sorted(folder.glob("*.py")):
                    out.append(
                        {
                            "level": level,
                            "task": task.stem,
                            "candidate": file.stem,
                            "source": source,
                            "code": file.read_text(),
                        }
                    )
    return out


def task_number(path: Path) -> int:
    head = path.stem.split("_", 1)[0]
    return int(head) if head.isdigit() else 10**6


def request(job: dict, device: str, timeout: float) -> dict:
    options: dict[str, Any] = {"torch_compute": "hybrid", "inputs": "task", "timeout_s": timeout}
    options["screen"] = job["candidate"] != "own model"
    if device == "cpu":
        options.update(baseline="none", profile=False)
    return {
        "task": {"id": job["task"], "source": job["source"]},
        "candidate": {"source": job["code"]},
        "options": options,
    }


def figures(answer: dict) -> dict[str, Any]:
    result = answer.get("result") or {}
    resources = (result.get("sandbox") or {}).get("resources") or {}
    gpu = (result.get("judge") or {}).get("gpu_memory") or {}
    durations = result.get("durations_ms") or {}
    limit = result.get("resource_limit")
    return {
        "status": result.get("status") or answer.get("status"),
        "resource_limit": limit.get("kind") if isinstance(limit, dict) else None,
        "memory_peak_mib": resources.get("memory_peak_mib"),
        "pids_peak": resources.get("pids_peak"),
        "disk_peak_mib": resources.get("disk_peak_mib"),
        "gpu_job_peak_mib": gpu.get("job_peak_mib"),
        "gpu_share_mib": gpu.get("share_mib"),
        "cgroup": resources.get("cgroup"),
        "wall_s": round((durations.get("total") or 0) / 1e3, 2),
        "error": ((result.get("error") or {}).get("message") or "")[:200],
        "rejected_by": sorted(
            {f["rule"] for f in result.get("findings") or [] if f.get("severity") == "reject"}
        ),
    }


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, int(math.ceil(q * len(s))) - 1)]


def summary(rows: list[dict]) -> list[dict]:
    out = []
    for level in sorted({r["level"] for r in rows}):
        mine = [r for r in rows if r["level"] == level]
        entry: dict[str, Any] = {"level": level, "jobs": len(mine)}
        for f in FIGURES:
            values = [float(r[f]) for r in mine if isinstance(r.get(f), (int, float))]
            entry[f"{f}_max"] = max(values) if values else None
            entry[f"{f}_p99"] = percentile(values, 0.99)
        entry["over_a_limit"] = [
            f"{r['task']} ({r['resource_limit']})" for r in mine if r.get("resource_limit")
        ]
        entry["statuses"] = {
            s: sum(r["status"] == s for r in mine) for s in {r["status"] for r in mine}
        }
        out.append(entry)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernelbench", type=Path, required=True, help="KernelBench's task root")
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--limit", type=int, default=0, help="tasks per level, spread (0: all)")
    parser.add_argument("--candidates", action="store_true", help="also the policy bench's")
    parser.add_argument("--gpus", default="all", help="the service's --gpus (none: CPU)")
    parser.add_argument("--workers-per-gpu", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=300.0, help="each job's timeout_s")
    parser.add_argument(
        "--limit-flag",
        action="append",
        default=[],
        help="a job-limit flag for the service, e.g. --limit-flag=--memory-limit-mib=24576",
    )
    parser.add_argument("--deadline-s", type=float, default=0, help="submit nothing after this")
    parser.add_argument("--out-dir", type=Path, default=HERE)
    parser.add_argument(
        "--machine", default="", help="names the results files (default: gpu, or cpu)"
    )
    args = parser.parse_args()
    machine = args.machine or ("cpu" if args.gpus == "none" else "gpu")
    stem = f"results-{machine}-level{''.join(str(level) for level in args.levels)}"
    args.out = args.out_dir / f"{stem}.md"
    args.json = args.out_dir / f"{stem}.json"
    args.out_dir.mkdir(parents=True, exist_ok=True)

    jobs = jobs_of(args.kernelbench, args.levels, args.limit, args.candidates)
    device = "cpu" if args.gpus == "none" else "cuda"
    print(f"job_limits: {len(jobs)} jobs on {device}", file=sys.stderr, flush=True)
    started = time.monotonic()
    rows: list[dict] = []
    service_args = ["--workers-per-gpu", str(args.workers_per_gpu), "--no-cache"]
    service_args += [flag for given in args.limit_flag for flag in given.split("=", 1)]
    with tempfile.TemporaryDirectory() as tmp, Gym(Path(tmp), service_args, gpus=args.gpus) as g:
        # A window of jobs in flight (the slots, and as many waiting), so that a deadline stops
        # the submissions while what was submitted still finishes within the command's time.
        window = 2 * args.workers_per_gpu * max(1, gpu_count()) if device == "cuda" else 4
        pending: list[tuple[dict, str]] = []
        done = 0

        def finish_oldest() -> None:
            nonlocal done
            job, job_id = pending.pop(0)
            answer = call(f"{g.url}/v1/jobs/{job_id}?wait=600", timeout=700)[1]
            while answer.get("status") in ("queued", "running"):
                answer = call(f"{g.url}/v1/jobs/{job_id}?wait=600", timeout=700)[1]
            rows.append({**strip(job), **figures(answer)})
            done += 1
            r = rows[-1]
            print(
                f"  {done}/{len(jobs)} level{job['level']} {job['task']} ({job['candidate']}): "
                f"{r['status']}, {r['memory_peak_mib']} MiB, {r['pids_peak']} processes, "
                f"GPU {r['gpu_job_peak_mib']} MiB",
                file=sys.stderr,
                flush=True,
            )

        for job in jobs:
            if args.deadline_s and time.monotonic() - started > args.deadline_s:
                rows.append({**strip(job), "status": "not run (deadline)"})
                continue
            while len(pending) >= window:
                finish_oldest()
            body = request(job, device, args.timeout)
            status, answer, _ = call(g.url + "/v1/evaluate", "POST", body)
            if status not in (200, 202):
                rows.append(
                    {**strip(job), "status": f"refused {status}", "error": str(answer)[:200]}
                )
                continue
            pending.append((job, answer["id"]))
        while pending:
            finish_oldest()
    levels = summary(rows)
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    gpu = (
        subprocess.run(
            ["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader"],
            capture_output=True,
            text=True,
        ).stdout.splitlines()
        if shutil.which("nvidia-smi")
        else []
    )
    results = {
        "command": "python bench/job_limits/run.py " + " ".join(sys.argv[1:]),
        "machine": f"{platform.node()} ({platform.machine()}; {gpu[0] if gpu else 'no GPU'})",
        "date": dt.date.today().isoformat(),
        "commit": commit,
        "levels": levels,
        "jobs": rows,
    }
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    args.out.write_text(markdown(results))
    print(args.out.read_text())
    return 0


def gpu_count() -> int:
    out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    return len([line for line in out.splitlines() if line.startswith("GPU ")])


def strip(job: dict) -> dict:
    return {"level": job["level"], "task": job["task"], "candidate": job["candidate"]}


def markdown(r: dict) -> str:
    def fmt(v: Any) -> str:
        return "-" if v is None else f"{v:.0f}" if isinstance(v, float) else str(v)

    lines = [
        "# What KernelBench jobs take of a host",
        "",
        f"Command: `{r['command']}`; machine: {r['machine']}; date: {r['date']}; "
        f"commit {r['commit']}.",
        "",
        "| level | jobs | host memory MiB (max / p99) | processes (max / p99) | directory MiB "
        "(max / p99) | GPU memory MiB (max / p99) | wall s (max) | over a limit | statuses |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for e in r["levels"]:
        lines.append(
            f"| {e['level']} | {e['jobs']} | {fmt(e['memory_peak_mib_max'])} / "
            f"{fmt(e['memory_peak_mib_p99'])} | {fmt(e['pids_peak_max'])} / {fmt(e['pids_peak_p99'])} "
            f"| {fmt(e['disk_peak_mib_max'])} / {fmt(e['disk_peak_mib_p99'])} | "
            f"{fmt(e['gpu_job_peak_mib_max'])} / {fmt(e['gpu_job_peak_mib_p99'])} | "
            f"{fmt(e['wall_s_max'])} | {', '.join(e['over_a_limit']) or 'none'} | "
            f"{e['statuses']} |"
        )
    heavy = sorted(r["jobs"], key=lambda j: -(j.get("memory_peak_mib") or 0))[:10]
    lines += [
        "",
        "The ten jobs with the most host memory:",
        "",
        "| level | task | candidate | status | host MiB | processes | GPU MiB |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for j in heavy:
        lines.append(
            f"| {j['level']} | {j['task']} | {j['candidate']} | {j['status']} | "
            f"{fmt(j.get('memory_peak_mib'))} | {fmt(j.get('pids_peak'))} | "
            f"{fmt(j.get('gpu_job_peak_mib'))} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
