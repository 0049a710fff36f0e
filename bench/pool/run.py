"""The worker pool (docs/scale.md) against the embedded service, in CPU mode or on a GPU.

Throughput: for each worker count W, one batch of distinct jobs through (a) the embedded
service with W CPU workers and (b) a pool front door with W `kgym-gym worker` processes of one
slot each, all on this machine with a real redis-server (AOF, fsync always). With --gpu, (a) is
the embedded service with W workers on the GPU and (b) one worker process with W slots on it, as
a GPU host of a pool runs (its slots share the GPU's timing lock). Overhead: the same
jobs one at a time (submit, wait, next) through a one-slot embedded service and a one-slot pool;
the difference of the mean latencies is what the pool adds per job (publish, take, heartbeat,
answer, collect). Writes ``results-<machine>.md`` and ``throughput-<machine>.png`` beside this
file (or to --out-dir): ``cpu`` in CPU mode, the GPU's model with --gpu.

    python bench/pool/run.py                      # workers 1,2,4; 24 jobs a batch
    python bench/pool/run.py --workers 1,2 --jobs 8 --json
    python bench/pool/run.py --gpu --jobs 8 --repeats 1 --latency-jobs 4
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
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from service_util import Gym, call  # noqa: E402

from kgym.local_pool import PoolWorker, RedisServer  # noqa: E402

RELU = (ROOT / "tasks" / "solutions" / "01_relu.py").read_text()


def request(i: int) -> dict[str, Any]:
    # Distinct candidate text per job (a comment), so that no answer comes from another's.
    source = f"{RELU}\n# job {i}\n"
    return {"task": {"id": "01_relu"}, "candidate": {"source": source}, "options": {"trials": 2}}


def log(msg: str) -> None:
    print(f"[pool-bench] {msg}", file=sys.stderr, flush=True)


class Setup:
    """An embedded service with W CPU workers, or a pool front door with W one-slot workers."""

    def __init__(
        self, root: Path, mode: str, workers: int, fsync: str = "always", gpu: bool = False
    ) -> None:
        self.root, self.mode, self.n = root, mode, workers
        self.redis: RedisServer | None = None
        self.workers: list[PoolWorker] = []
        args = ["--no-cache"]
        slots = ["--workers-per-gpu", str(workers)] if gpu else ["--cpu-workers", str(workers)]
        if mode == "pool":
            self.redis = RedisServer(root / "redis", appendfsync=fsync).start()
            device = "cuda" if gpu else "cpu"
            args += ["--redis", self.redis.url, "--pool", "bench", "--pool-device", device]
        else:
            args += slots
        # A pool's front door needs no GPU; its worker has the GPU.
        gym_gpus = "all" if gpu and mode == "embedded" else "none"
        self.gym = Gym(root / "frontdoor", args, gpus=gym_gpus).start()
        if mode == "pool" and gpu:
            url = self.redis.url if self.redis else ""
            worker = PoolWorker(root / "worker0", url, pool="bench", args=slots, gpus="all")
            self.workers.append(worker.start())
        elif mode == "pool":
            share = max(1, (os.cpu_count() or 1) // workers)
            for i in range(workers):
                w = PoolWorker(
                    root / f"worker{i}",
                    self.redis.url if self.redis else "",
                    pool="bench",
                    # Each worker's share of this machine's cores, as the embedded service
                    # gives its W workers (a real host would use all of its own).
                    args=["--cpu-workers", "1", "--threads-per-job", str(share)],
                )
                self.workers.append(w.start())

    def run_batch(self, first: int, count: int) -> float:
        """Seconds from submitting `count` jobs to the last one's answer."""
        started = time.perf_counter()
        status, out, _ = call(
            self.gym.url + "/v1/evaluate:batch?wait=600",
            "POST",
            {"requests": [request(first + i) for i in range(count)]},
            timeout=660,
        )
        elapsed = time.perf_counter() - started
        assert status == 200, out
        bad = [j for j in out["jobs"] if j["status"] != "done" or j["result"]["status"] != "ok"]
        assert not bad, bad[:1]
        return elapsed

    def latencies(self, first: int, count: int) -> list[tuple[float, float]]:
        """(seconds from the request to its answer, seconds of that minus the evaluation's own
        wall time as its supervisor measured it) per job, one job at a time."""
        out = []
        for i in range(count):
            started = time.perf_counter()
            status, job, _ = call(
                self.gym.url + "/v1/evaluate?wait=300", "POST", request(first + i)
            )
            latency = time.perf_counter() - started
            assert status == 200 and job["result"]["status"] == "ok", job
            out.append((latency, latency - job["result"]["durations_ms"]["total"] / 1e3))
        return out

    def close(self) -> None:
        for w in self.workers:
            w.stop()
        self.gym.stop()
        if self.redis:
            self.redis.stop()


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    redis = subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout
    return (
        f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; {redis.strip()}"
    )


def plot(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    gpu = results.get("device") == "cuda"
    embedded = "embedded (W slots on the GPU)" if gpu else "embedded (W CPU workers)"
    pool = "pool (one worker, W slots)" if gpu else "pool (W workers)"
    for mode, label in (("embedded", embedded), ("pool", pool)):
        rows = [r for r in results["throughput"] if r["mode"] == mode]
        ax.plot(
            [r["workers"] for r in rows], [r["jobs_per_s"] for r in rows], marker="o", label=label
        )
    ax.set_xlabel("workers (W)")
    ax.set_ylabel("jobs / s")
    ax.set_ylim(bottom=0)
    ax.set_xticks(results["workers"])
    where = results.get("gpu", "GPU") if gpu else f"CPU mode, {os.cpu_count()} cores"
    ax.set_title(f"01_relu, {where}, {results['jobs']} jobs a batch", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def write_markdown(results: dict[str, Any], path: Path) -> None:
    gpu = results.get("device") == "cuda"
    lines = [
        f"# Worker pool: throughput and overhead ({'on a GPU' if gpu else 'CPU mode'})",
        "",
        f"- Command: `{results['command']}`",
        f"- Machine: {results['machine']}" + (f"; GPU: {results['gpu']}" if gpu else ""),
        f"- Date: {results['date']}; commit {results['commit']}",
        f"- Jobs: `01_relu`'s reference solution, trials=2, distinct text per job, `--no-cache`; "
        f"{results['jobs']} jobs a batch after a warm-up batch of one job per worker.",
    ]
    if gpu:
        lines += [
            "- W is the number of jobs on the GPU at once: the embedded service's "
            "`--workers-per-gpu W`, or one pool worker process with `--workers-per-gpu W`.",
            "- Everything ran on this one machine: the front door, redis-server (AOF) and the "
            "worker.",
        ]
    else:
        lines += [
            "- The machine is shared with other work: batch rates vary by up to a third from "
            "run to run, which is why each setup is measured several times.",
            "- Everything ran on this one machine: the front door, redis-server (AOF, fsync "
            "always) and the worker processes standing in for hosts share its cores.",
        ]
    lines += [
        "",
        "## Throughput",
        "",
        f"Median of {results.get('repeats', 1)} batches per setup, (min-max) beside it.",
        "",
        "| W | embedded jobs/s | pool jobs/s | pool / embedded |",
        "| --- | --- | --- | --- |",
    ]
    by = {(r["mode"], r["workers"]): r for r in results["throughput"]}

    def cell(r: dict[str, Any]) -> str:
        each = r.get("jobs_per_s_each", [r["jobs_per_s"]])
        return f"{r['jobs_per_s']:.2f} ({min(each):.2f}-{max(each):.2f})"

    for w in results["workers"]:
        e, p = by[("embedded", w)], by[("pool", w)]
        lines.append(f"| {w} | {cell(e)} | {cell(p)} | {p['jobs_per_s'] / e['jobs_per_s']:.2f} |")
    o = results["overhead"]
    base = o["embedded"]["outside_median_s"]
    lines += [
        "",
        f"![throughput](throughput{suffix(results)}.png)",
        "",
        "## Overhead per job",
        "",
        f"{o['jobs']} jobs one at a time through one slot (submit, wait for the answer, next). "
        "*Outside evaluation* is the client's latency minus the evaluation's own wall time "
        "(`durations_ms.total`, measured by the supervisor around the job's child): HTTP, "
        "queueing, the store and, in the pool, publishing, taking, the answer and its "
        "collection. Its difference to the embedded service is the pool's overhead.",
        "",
        "| setup | latency (median) | outside evaluation (median) | added by the pool |",
        "| --- | --- | --- | --- |",
    ]
    for name, label in (
        ("embedded", "embedded"),
        ("pool-always", "pool, Redis appendfsync always"),
        ("pool-everysec", "pool, Redis appendfsync everysec"),
    ):
        r = o[name]
        added = "" if name == "embedded" else f"{(r['outside_median_s'] - base) * 1e3:.1f} ms"
        lines.append(
            f"| {label} | {r['median_s'] * 1e3:.0f} ms | {r['outside_median_s'] * 1e3:.1f} ms | "
            f"{added} |"
        )
    lines += [
        "",
        "## Reading",
        "",
        results["reading"],
        "",
    ]
    path.write_text("\n".join(lines))


def suffix(results: dict[str, Any]) -> str:
    """``-cpu`` for a CPU-mode run, ``-<model>`` (``-h100``) for a GPU run."""
    if results.get("device") != "cuda":
        return "-cpu"
    words = str(results.get("gpu", "gpu")).replace("NVIDIA", "").split()
    return "-" + (words[0].lower().rstrip(",") if words else "gpu")


def write_reports(results: dict[str, Any], out_dir: Path) -> None:
    results["reading"] = reading(results)
    out_dir.mkdir(parents=True, exist_ok=True)
    plot(results, out_dir / f"throughput{suffix(results)}.png")
    write_markdown(results, out_dir / f"results{suffix(results)}.md")
    log(f"wrote {out_dir / f'results{suffix(results)}.md'}")


def gpu_reading(results: dict[str, Any], ratios: list[float]) -> str:
    o = results["overhead"]
    added = [
        (o[name]["outside_median_s"] - o["embedded"]["outside_median_s"]) * 1e3
        for name in ("pool-always", "pool-everysec")
    ]
    return (
        f"On the GPU the pool's throughput is {min(ratios):.2f} to {max(ratios):.2f} times the "
        "embedded service's with the same number of slots on the same GPU; alone, a job spends "
        f"{min(added):.1f} to {max(added):.1f} ms more outside its evaluation in the pool. The "
        "pool's worker runs the same slots as the embedded service (one process, its slots "
        "sharing the GPU's timing lock), so what differs is only the way a job reaches a slot "
        "and its answer comes back: Redis, the stream, the lease and the collection."
    )


def reading(results: dict[str, Any]) -> str:
    by = {(r["mode"], r["workers"]): r["jobs_per_s"] for r in results["throughput"]}
    ratios = [by[("pool", w)] / by[("embedded", w)] for w in results["workers"]]
    if results.get("device") == "cuda":
        return gpu_reading(results, ratios)
    cores = os.cpu_count() or 1
    return (
        f"The pool's throughput is {min(ratios):.2f} to {max(ratios):.2f} times the embedded "
        "service's on the same jobs and worker counts, within the run-to-run spread of this "
        "shared machine; alone, a job spends a few milliseconds more outside its evaluation "
        f"in the pool. This machine has {cores} cores, and the front door, Redis and every "
        "worker share them, so the curve shows how the pool keeps its workers busy (a free "
        "slot takes the next job; none waits behind a busy worker), not the speed-up of real "
        "hosts, each of which brings its own cores or GPUs. A CPU-mode 01_relu job is short "
        "and partly spent outside its CPU-bound part (fork, report channel, SQLite), so more "
        "jobs than cores at once still add throughput. Each pool worker was given its share of "
        "the cores (`--threads-per-job` = cores / W), as the embedded service gives its W "
        "workers; an earlier run without it, where each worker process took every core for its "
        "job as it would on a host of its own, gave the pool 0.7 to 0.8 of the embedded "
        "throughput at W = 2 and 4: workers that share a machine should be given their share."
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--workers", default="1,2,4", help="worker counts to measure (default 1,2,4)")
    ap.add_argument("--jobs", type=int, default=24, help="jobs in each measured batch")
    ap.add_argument("--repeats", type=int, default=3, help="measured batches per setup")
    ap.add_argument("--latency-jobs", type=int, default=10, help="jobs one at a time (overhead)")
    ap.add_argument("--out-dir", type=Path, default=Path(__file__).resolve().parent)
    ap.add_argument("--json", action="store_true", help="print the results as JSON on stdout")
    ap.add_argument(
        "--gpu",
        action="store_true",
        help="jobs on this machine's GPU (W slots on it); writes results-<model>.* instead",
    )
    ap.add_argument(
        "--render",
        type=Path,
        metavar="RESULTS_JSON",
        help="only write the results file and the plot again from --save's JSON (no measurement)",
    )
    ap.add_argument("--save", type=Path, help="also write the results as JSON here (for --render)")
    args = ap.parse_args()
    if args.render:
        results = json.loads(args.render.read_text())
        write_reports(results, args.out_dir)
        return 0
    workers = [int(x) for x in args.workers.split(",") if x.strip()]
    if not workers or min(workers) < 1 or min(args.jobs, args.latency_jobs, args.repeats) < 1:
        ap.error("--workers: positive counts; --jobs, --latency-jobs, --repeats: at least 1")

    results: dict[str, Any] = {
        "workers": workers,
        "jobs": args.jobs,
        "repeats": args.repeats,
        "device": "cuda" if args.gpu else "cpu",
        "throughput": [],
    }
    serial = 0
    with tempfile.TemporaryDirectory(prefix="kgym-pool-bench-") as tmp:
        for w in workers:
            for mode in ("embedded", "pool"):
                log(f"{mode}, W={w}: starting")
                s = Setup(Path(tmp) / f"{mode}-{w}", mode, w, gpu=args.gpu)
                try:
                    s.run_batch(serial, w)  # warm-up: every worker's first job
                    serial += w
                    rates = []
                    for rep in range(args.repeats):
                        seconds = s.run_batch(serial, args.jobs)
                        serial += args.jobs
                        rates.append(args.jobs / seconds)
                        log(
                            f"{mode}, W={w}, batch {rep + 1}/{args.repeats}: {args.jobs} jobs "
                            f"in {seconds:.1f} s = {rates[-1]:.2f} jobs/s"
                        )
                finally:
                    s.close()
                results["throughput"].append(
                    {
                        "mode": mode,
                        "workers": w,
                        "jobs_per_s_each": rates,
                        "jobs_per_s": statistics.median(rates),
                    }
                )
        lat: dict[str, list[tuple[float, float]]] = {}
        for mode, fsync in (("embedded", ""), ("pool", "always"), ("pool", "everysec")):
            name = mode if mode == "embedded" else f"pool-{fsync}"
            log(f"{name}: {args.latency_jobs} jobs one at a time through one slot")
            s = Setup(Path(tmp) / f"latency-{name}", mode, 1, fsync, gpu=args.gpu)
            try:
                s.latencies(serial, 1)  # warm-up
                serial += 1
                lat[name] = s.latencies(serial, args.latency_jobs)
                serial += args.latency_jobs
            finally:
                s.close()
    results["overhead"] = {"jobs": args.latency_jobs}
    for name, rows in lat.items():
        total = [t for t, _ in rows]
        outside = [o for _, o in rows]
        results["overhead"][name] = {
            "latency_s": total,
            "outside_evaluation_s": outside,
            "median_s": statistics.median(total),
            "outside_median_s": statistics.median(outside),
        }
    results["command"] = "python bench/pool/run.py " + " ".join(sys.argv[1:])
    results["machine"] = machine()
    results["date"] = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    results["commit"] = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    if args.gpu:
        results["gpu"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
        ).stdout.strip()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if args.save:
        args.save.write_text(json.dumps(results, indent=2) + "\n")
    write_reports(results, args.out_dir)
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
