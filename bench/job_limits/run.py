"""What KernelBench jobs take of a host, to size the job limits' defaults (memory_limit_mib,
pids_limit, disk_limit_mib, gpu_memory_share_mib), and whether the per-job limits engage there.

KernelBench tasks are evaluated at their own (native) sizes through one `kgym-gym serve` whose
slots are as in production (--workers-per-gpu jobs beside each other on a GPU), each candidate
the task's own Model under the name ModelNew with its output passed twice through a Triton
negation (screen off, hybrid policy, the task's inputs): a job that goes through every phase,
timing and profile included (with a shorter timing budget: the figures are memory, not speed).
With --candidates the Triton candidates of bench/kernelbench_policy run too. Each job's Result
says what it took: sandbox.resources (the cgroup's memory and pids peaks, the directory's peak,
and whether the job was in a cgroup at all) and judge.gpu_memory.job_peak_mib against share_mib
(the job's processes on the GPU, from the driver). The service's job limits are the defaults
unless --limit-flag gives others: a job over one is reported, so the run says whether the
defaults let every task through.

Without time for every task, --heaviest N takes each level's N heaviest tasks (inputs and
weights, measured on the meta device: sizes.py) and --spread M as many others; --budget-s stops
submitting in time and cancels what is left at the budget, so the command ends within it.
--probe runs meanwhile, in a CPU-mode service of its own with small limits, a job over its
memory, one over its directory and one over its processes beside two honest ones
(bench/service_abuse/tenants.py): whether the kernel's limits engage on this host.

    python bench/job_limits/run.py --heaviest 6 --spread 2 --budget-s 200 --probe   # an H200
    python bench/job_limits/run.py --gpus none --heaviest 2 --spread 0 --levels 1   # CPU smoke

Writes results-<machine>.md (the limits in force, per level the largest and the 99th-percentile
figure, every job's row, the probe) and results-<machine>.json (every job's figures) beside this
file or in --out-dir, after every finished job, so that a run cut short leaves what it measured.
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "service_abuse"))
sys.path.insert(0, str(HERE))

from host_sample import HostSampler  # noqa: E402
from record import header, machine  # noqa: E402
from service_util import Gym, call  # noqa: E402
from sizes import pick  # noqa: E402

POLICY_CANDIDATES = ROOT / "bench" / "kernelbench_policy" / "candidates"
FIGURES = ("memory_peak_mib", "pids_peak", "disk_peak_mib", "gpu_job_peak_mib", "wall_s")
# Seconds before the budget's end after which nothing more is submitted: what is running by
# then finishes within them, and what is left at the end is cancelled.
SUBMIT_MARGIN_S = 60.0

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


def jobs_of(args: argparse.Namespace) -> list[dict]:
    """The jobs in the order they are submitted: each level's heaviest first, the levels taking
    turns, then the spread and the policy bench's candidates."""
    per_level = []
    for level in args.levels:
        tasks = list((args.kernelbench / f"level{level}").glob("*.py"))
        chosen = pick(tasks, args.heaviest, args.spread)
        per_level.append([(level, task, size) for task, size in chosen])
    ordered = [job for rank in zip_longest(per_level) for job in rank]
    out = []
    for level, task, size in ordered:
        source = task.read_text()
        base = {"level": level, "task": task.stem, "task_mib": mib(size), "source": source}
        out.append({**base, "candidate": "own model", "code": source + OWN_MODEL_WRAPPER})
        folder = POLICY_CANDIDATES / f"level{level}" / task.stem
        if args.candidates and folder.is_dir():
            for file in sorted(folder.glob("*.py")):
                out.append({**base, "candidate": file.stem, "code": file.read_text()})
    return out


def zip_longest(lists: list[list[Any]]) -> list[list[Any]]:
    longest = max((len(x) for x in lists), default=0)
    return [[x[i] for x in lists if i < len(x)] for i in range(longest)]


def mib(size: int) -> float | None:
    return round(size / (1 << 20), 1) if size >= 0 else None


def request(job: dict, device: str, timeout: float) -> dict:
    options: dict[str, Any] = {
        "torch_compute": "hybrid",
        "inputs": "task",
        "timeout_s": timeout,
        "trials": 2,
        "timing_budget_ms": 1000.0,
        "screen": job["candidate"] != "own model",
    }
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
        "gpu_memory_reason": gpu.get("reason"),
        "resources": {k: v for k, v in resources.items() if not k.endswith("_peak_mib")},
        "wall_s": round((durations.get("total") or 0) / 1e3, 2),
        "error": ((result.get("error") or {}).get("message") or "")[:300],
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
        statuses = [str(r.get("status")) for r in mine]
        entry["statuses"] = {s: statuses.count(s) for s in sorted(set(statuses))}
        out.append(entry)
    return out


class Service(Gym):
    """The sizing's service: a GPU machine's fork servers and keeper may take a while to start."""

    def __enter__(self) -> Gym:
        try:
            return self.start(timeout=240)
        except BaseException:
            self.stop(signal.SIGKILL)
            raise


class Probe:
    """The kernel's limits on this host, meanwhile: tenants.limits_beside_honest in CPU mode."""

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self.error = ""
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            from tenants import limits_beside_honest

            with tempfile.TemporaryDirectory() as tmp:
                self.rows = limits_beside_honest(Path(tmp), "none", 2)
        except Exception as exc:  # noqa: BLE001 - the run says why the probe has no rows
            self.error = f"{type(exc).__name__}: {exc}"[:500]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--kernelbench",
        type=Path,
        default=ROOT / ".kernelbench" / "KernelBench",
        help="KernelBench's task root (level1/, level2/, level3/)",
    )
    parser.add_argument("--levels", type=int, nargs="+", help="default: every level there")
    parser.add_argument("--heaviest", type=int, default=0, help="each level's heaviest tasks")
    parser.add_argument("--spread", type=int, default=0, help="and as many others per level")
    parser.add_argument("--candidates", action="store_true", help="also the policy bench's")
    parser.add_argument("--gpus", default="all", help="the service's --gpus (none: CPU)")
    parser.add_argument("--workers-per-gpu", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=150.0, help="each job's timeout_s")
    parser.add_argument(
        "--limit-flag",
        action="append",
        default=[],
        help="a job-limit flag for the service, e.g. --limit-flag=--memory-limit-mib=24576",
    )
    parser.add_argument("--budget-s", type=float, default=0, help="the whole run (0: none)")
    parser.add_argument("--probe", action="store_true", help="the limits' probe beside")
    parser.add_argument("--out-dir", type=Path, default=HERE)
    parser.add_argument("--machine", default="", help="names the results files")
    args = parser.parse_args()
    started = time.monotonic()
    if args.levels is None:
        args.levels = [n for n in (1, 2, 3) if (args.kernelbench / f"level{n}").is_dir()]
    name = args.machine or machine()
    args.md = args.out_dir / f"results-{name}.md"
    args.json = args.out_dir / f"results-{name}.json"
    args.out_dir.mkdir(parents=True, exist_ok=True)
    device = "cpu" if args.gpus == "none" else "cuda"

    probe = Probe() if args.probe else None
    if probe is not None:
        probe.thread.start()
    jobs = jobs_of(args)
    say(f"job_limits: {len(jobs)} jobs on {device}, levels {args.levels}")
    rows: list[dict] = []
    service_args = ["--workers-per-gpu", str(args.workers_per_gpu), "--no-cache"]
    service_args += ["--cpu-workers", "4"]
    service_args += [flag for given in args.limit_flag for flag in given.split("=", 1)]

    def left() -> float:
        return args.budget_s - (time.monotonic() - started) if args.budget_s else 1e9

    with (
        HostSampler() as sampler,
        tempfile.TemporaryDirectory() as tmp,
        Service(Path(tmp), service_args, args.gpus) as g,
    ):
        say(f"job_limits: service up after {time.monotonic() - started:.0f} s")
        # A window of jobs in flight (the slots, and as many waiting), so that the budget stops
        # the submissions while what was submitted still finishes.
        window = 2 * args.workers_per_gpu if device == "cuda" else 4
        pending: list[tuple[dict, str]] = []

        def finish_oldest() -> None:
            job, job_id = pending.pop(0)
            answer: dict = {"status": "running"}
            while answer.get("status") in ("queued", "running") and left() > 2:
                wait = max(1, min(600, int(left() - 2)))
                answer = call(f"{g.url}/v1/jobs/{job_id}?wait={wait}", timeout=wait + 30)[1]
            if answer.get("status") in ("queued", "running"):
                call(f"{g.url}/v1/jobs/{job_id}", "DELETE")
                answer = {"status": "cancelled at the budget"}
            rows.append({**strip(job), **figures(answer)})
            r = rows[-1]
            if r["memory_peak_mib"] is None:  # no cgroup counted it: the sampler's figures
                r["memory_peak_mib"], r["pids_peak"] = sampler.peak(
                    answer.get("started_at"), answer.get("finished_at")
                )
                r["host_figures"] = "sampled" if r["memory_peak_mib"] is not None else None
            say(
                f"  {len(rows)}/{len(jobs)} level{job['level']} {job['task']} "
                f"({job['candidate']}): {r['status']}, {r['memory_peak_mib']} MiB, "
                f"{r['pids_peak']} processes, GPU {r['gpu_job_peak_mib']} MiB "
                f"({time.monotonic() - started:.0f} s)"
            )
            write(args, rows, probe, started)

        for job in jobs:
            if left() < SUBMIT_MARGIN_S:
                rows.append({**strip(job), "status": "not run (budget)"})
                continue
            while len(pending) >= window:
                finish_oldest()
            # A job that runs into the budget times out with a Result (its figures) first.
            body = request(job, device, min(args.timeout, max(10.0, left() - 15)))
            status, answer, _ = call(g.url + "/v1/evaluate", "POST", body)
            if status not in (200, 202):
                rows.append({**strip(job), "status": f"refused {status}", "error": str(answer)})
                continue
            pending.append((job, answer["id"]))
        while pending:
            finish_oldest()
    if probe is not None:
        probe.thread.join(timeout=max(1.0, left()))
    write(args, rows, probe, started)
    print(args.md.read_text())
    return 0


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def strip(job: dict) -> dict:
    return {k: job[k] for k in ("level", "task", "candidate", "task_mib")}


def write(args: argparse.Namespace, rows: list[dict], probe: Probe | None, t0: float) -> None:
    command = "python bench/job_limits/run.py " + " ".join(sys.argv[1:])
    results = {
        "command": command,
        "seconds": round(time.monotonic() - t0, 1),
        "levels": summary(rows),
        "jobs": rows,
        "probe": probe.rows if probe is not None else None,
        "probe_error": probe.error if probe is not None else None,
    }
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    args.md.write_text("\n".join(markdown(command, results)) + "\n")


def fmt(v: Any) -> str:
    return "-" if v is None else f"{v:.0f}" if isinstance(v, float) else str(v)


def markdown(command: str, r: dict) -> list[str]:
    lines = header("What KernelBench jobs take of a host", command)
    jobs = [j for j in r["jobs"] if isinstance(j.get("resources"), dict) and j["resources"]]
    if jobs:
        res = jobs[0]["resources"]
        cgroups = sorted({str(j["resources"].get("cgroup")) for j in jobs})
        limited = sum(bool(j["resources"].get("limited")) for j in jobs)
        disk = sum(bool(j["resources"].get("disk_limited")) for j in jobs)
        notes = sorted(
            {str(j["resources"].get(k) or "") for j in jobs for k in ("note", "disk_note")}
        )
        notes = [n for n in notes if n]
        shares = sorted({j.get("gpu_share_mib") for j in jobs if j.get("gpu_share_mib")})
        lines += [
            f"Limits in force: memory {res.get('memory_limit_mib')} MiB, pids "
            f"{res.get('pids_limit')}, directory {res.get('disk_limit_mib')} MiB, GPU share "
            f"{', '.join(fmt(s) for s in shares) or '-'} MiB. Cgroup: {', '.join(cgroups)}; "
            f"{limited}/{len(jobs)} jobs in a cgroup of their own, {disk}/{len(jobs)} on a "
            f"tmpfs of their size. Notes: {'; '.join(notes) or 'none'}. Run: {r['seconds']} s.",
            *(
                [
                    f"Host memory and processes of {sampled} jobs that no cgroup counted: sampled "
                    "from /proc (host_sample.py: the proportional set size of the job's uid "
                    "every 0.25 s).",
                ]
                if (sampled := sum(j.get("host_figures") == "sampled" for j in jobs))
                else []
            ),
            "",
        ]
    lines += [
        "| level | jobs | host memory MiB (max / p99) | processes (max / p99) | directory MiB "
        "(max / p99) | GPU memory MiB (max / p99) | wall s (max) | over a limit | statuses |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for e in r["levels"]:
        lines.append(
            f"| {e['level']} | {e['jobs']} | {fmt(e['memory_peak_mib_max'])} / "
            f"{fmt(e['memory_peak_mib_p99'])} | {fmt(e['pids_peak_max'])} / "
            f"{fmt(e['pids_peak_p99'])} | {fmt(e['disk_peak_mib_max'])} / "
            f"{fmt(e['disk_peak_mib_p99'])} | {fmt(e['gpu_job_peak_mib_max'])} / "
            f"{fmt(e['gpu_job_peak_mib_p99'])} | {fmt(e['wall_s_max'])} | "
            f"{', '.join(e['over_a_limit']) or 'none'} | {e['statuses']} |"
        )
    lines += [
        "",
        "| level | task | candidate | inputs+weights MiB | status | limit | host MiB | processes "
        "| directory MiB | GPU MiB (share) | wall s | error |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for j in r["jobs"]:
        error = (j.get("error") or "").replace("|", "/").replace("\n", " ")[:120]
        lines.append(
            f"| {j['level']} | {j['task']} | {j['candidate']} | {fmt(j.get('task_mib'))} | "
            f"{j.get('status')} | {j.get('resource_limit') or ''} | "
            f"{fmt(j.get('memory_peak_mib'))} | {fmt(j.get('pids_peak'))} | "
            f"{fmt(j.get('disk_peak_mib'))} | {fmt(j.get('gpu_job_peak_mib'))} "
            f"({fmt(j.get('gpu_share_mib'))}) | {fmt(j.get('wall_s'))} | {error} |"
        )
    if r["probe"] is not None:
        lines += [
            "",
            "The probe (a CPU-mode service of its own: memory 1024 MiB, pids 256, directory "
            "128 MiB; bench/service_abuse/tenants.py):",
            "",
            "| attack | after | held | cgroup |",
            "| --- | --- | --- | --- |",
        ]
        for p in r["probe"]:
            held = "yes" if p["ok"] else "**no**"
            lines.append(f"| {p['attack']} | {p['after']} | {held} | {p.get('cgroup')} |")
        if r["probe_error"]:
            lines.append(f"\nThe probe failed: {r['probe_error']}")
    return lines


if __name__ == "__main__":
    sys.exit(main())
