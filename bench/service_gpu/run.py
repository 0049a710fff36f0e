"""The gym service on a GPU: throughput against process-per-evaluation, latency by phase,
timing precision across runs and restarts, and faults during a batch.

Each part writes ``PART.json`` into --out-dir; ``report`` turns the parts there into
``results-<machine>.md`` and its plots beside this file.

    python bench/service_gpu/run.py throughput --profile --limit 30 --workers 16 --out-dir OUT
    python bench/service_gpu/run.py latency --latency-also 01_relu --latency-gap 3 --out-dir OUT
    python bench/service_gpu/run.py precision faults --out-dir OUT
    python bench/service_gpu/run.py report --out-dir OUT

throughput: one mixed set of candidates (correct, incorrect, compile errors, crashes, hangs,
screen rejections) over the built-in suite, evaluated twice side by side in one run: by the
service (warm fork servers, several jobs per GPU, timing windows exclusive) and by a
process-per-evaluation baseline (``kgym-gym check`` per candidate: a fresh Python that imports
torch and triton, one at a time on the GPU) with the same options.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from service_util import Gym, call, descendants, gym_exe  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from record import commit  # noqa: E402

SOLUTIONS = ROOT / "tasks" / "solutions"
HONEST = [
    "06_softmax__online_looped",
    "08_layer_norm__stats_then_apply",
    "09_rms_norm__rsqrt_reshape",
    "11_batched_matmul__ieee_3d_grid",
    "14_conv2d_relu_maxpool__direct_conv_then_pool",
    "16_cross_entropy__chunked_online_lse",
    "17_transpose__strided_3d_grid_lambda",
    "18_attention__stats_then_output",
]
HANG_TIMEOUT_S = 10.0
TIMEOUT_S = 120.0

WRONG_OUTPUT = """

_Right = ModelNew


class ModelNew(_Right):  # the kernels run, the answer is off by a scale
    def forward(self, *args):
        return super().forward(*args) * 1.5
"""
RAISES = """

_Fine = ModelNew


class ModelNew(_Fine):  # crashes in Python after building the module
    def forward(self, *args):
        raise RuntimeError("index bookkeeping went wrong")
"""
ILLEGAL_ACCESS = """

@triton.jit
def _stray_store(p):
    tl.store(p + (1 << 40), 1.0)


_Fine = ModelNew


class ModelNew(_Fine):  # a kernel that writes far outside its buffer: CUDA illegal address
    def forward(self, *args):
        probe = torch.empty(1, device=args[0].device)
        _stray_store[(1,)](probe)
        return super().forward(*args)
"""
HANGS = """

_Fine = ModelNew


class ModelNew(_Fine):  # never returns
    def forward(self, *args):
        while True:
            pass
"""


def task_of(path: Path) -> str:
    return path.stem.split("__")[0]


def build_mix(folder: Path) -> list[dict[str, Any]]:
    """The candidates: (kind, task, file, timeout); written into `folder`."""
    solutions = sorted(SOLUTIONS.glob("*.py"))
    mix: list[dict[str, Any]] = []

    def add(kind: str, task: str, source: str, timeout: float = TIMEOUT_S) -> None:
        path = folder / f"{len(mix):02d}_{kind}_{task}.py"
        path.write_text(source)
        mix.append({"kind": kind, "task": task, "file": str(path), "timeout_s": timeout})

    for p in solutions:
        add("correct", task_of(p), p.read_text())
    for name in HONEST:
        add("correct", task_of(Path(name)), (ROOT / "tests" / "honest" / f"{name}.py").read_text())
    for p in sorted((ROOT / "tasks" / "wrong").glob("*.py")):
        kind = "compile_error" if "syntax" in p.stem or "undefined" in p.stem else "incorrect"
        add(kind, task_of(p), p.read_text())
    for p in solutions[:6]:
        add("incorrect", task_of(p), p.read_text() + WRONG_OUTPUT)
    for p in solutions[2:10]:  # an unknown Triton builtin: fails when the kernel is compiled
        src = p.read_text()
        if "tl.load(" in src:
            add("compile_error", task_of(p), src.replace("tl.load(", "tl.lod(", 1))
    for p in solutions[4:8]:
        add("crash", task_of(p), p.read_text() + RAISES)
    for p in solutions[8:12]:
        add("crash", task_of(p), p.read_text() + ILLEGAL_ACCESS)
    for p in solutions[12:16]:
        add("hang", task_of(p), p.read_text() + HANGS, HANG_TIMEOUT_S)
    hostile = sorted((ROOT / "tests" / "hostile").glob("*.py"))
    for p in [h for h in hostile if "forbidden-import" in h.read_text()][:4]:
        add("screen_reject", task_of(p), p.read_text())
    # In the order a trainer's batch arrives in: mixed, not grouped by kind (seeded).
    random.Random(0).shuffle(mix)
    return mix


PROFILE = False  # --profile: both sides record the kernels of the timed calls (PR)
# --warm-first: the service runs one evaluation before the batch, as a trainer's gym has after
# its first step.
WARM_FIRST = False


def options_for(entry: dict[str, Any], seed: int) -> dict[str, Any]:
    # The service's defaults are the CLI's: only the seed, the time limit and profiling are set.
    return {"seed": seed, "timeout_s": entry["timeout_s"], "profile": PROFILE}


def run_baseline(mix: list[dict[str, Any]], seed: int, log: Any) -> list[dict[str, Any]]:
    """A fresh `kgym-gym check` (and so a fresh harness Python) per candidate, one at a time."""
    rows = []
    for i, entry in enumerate(mix):
        started = time.perf_counter()
        proc = subprocess.run(
            [gym_exe(), "check", str(ROOT / "tasks" / f"{entry['task']}.py"), entry["file"]]
            + ["--json", "--seed", str(seed)]
            + ([] if PROFILE else ["--no-profile"])
            + ["--timeout", str(entry["timeout_s"])],
            capture_output=True,
            text=True,
            timeout=entry["timeout_s"] + 120,
        )
        wall = time.perf_counter() - started
        try:
            result = json.loads(proc.stdout)
        except json.JSONDecodeError:
            result = {"status": "no_result", "stderr": proc.stderr[-500:]}
        rows.append({"status": result.get("status"), "wall_s": wall, "result": slim(result)})
        print(f"baseline {i + 1}/{len(mix)} {entry['kind']:<13} {result.get('status')}", file=log)
    return rows


def slim(result: dict[str, Any]) -> dict[str, Any]:
    timing = result.get("timing") or {}
    return {
        "status": result.get("status"),
        "speedup": timing.get("speedup"),
        "durations_ms": result.get("durations_ms"),
        "error": (result.get("error") or {}).get("message", "")[:300] or None,
        "findings": [f.get("rule") for f in result.get("findings") or []],
        # How many of the timing window's threads the supervisor raised (null: nothing timed).
        "window_priority": (result.get("sandbox") or {}).get("window_priority"),
        # The candidate's compilation ahead of its first hold (absent: none ran).
        "precompile": (result.get("judge") or {}).get("precompile"),
        # Whether the judge's own kernel made the exact check of float32 outputs, or why not.
        "fused_exact_check": (result.get("judge") or {}).get("fused_exact_check"),
    }


def run_service(
    mix: list[dict[str, Any]],
    seed: int,
    workers: int,
    state: Path,
    log: Any,
) -> tuple[list[dict[str, Any]], float, str]:
    gym = start_gym(state, workers, "--no-cache")
    try:
        # Ready means the fork servers have imported torch and triton: what a running gym is.
        wait_ready(gym)
        if WARM_FIRST:
            body = {
                "task": {"id": "01_relu"},
                "candidate": {"source": (SOLUTIONS / "01_relu.py").read_text()},
                "options": {"seed": seed, "profile": PROFILE},
            }
            status, job, _ = call(gym.url + "/v1/evaluate?wait=300", "POST", body, timeout=400)
            assert status == 200, job
            wait_ready(gym)
        started = time.perf_counter()
        body = {
            "requests": [
                {
                    "task": {"id": e["task"]},
                    "candidate": {"source": Path(e["file"]).read_text()},
                    "options": options_for(e, seed),
                }
                for e in mix
            ]
        }
        status, batch, _ = call(gym.url + "/v1/evaluate:batch", "POST", body)
        assert status in (200, 202), batch
        rows = []
        for i, job in enumerate(batch["jobs"]):
            _, done, _ = call(gym.url + f"/v1/jobs/{job['id']}?wait=600", timeout=700)
            result = done.get("result") or {}
            rows.append({"status": result.get("status"), "job": done.get("status")})
            rows[-1]["finished_at"] = done.get("finished_at")
            rows[-1]["result"] = slim(result)
            print(
                f"service {i + 1}/{len(mix)} {mix[i]['kind']:<13} {result.get('status')}", file=log
            )
        wall = time.perf_counter() - started
        _, metrics, _ = call(gym.url + "/metrics")
        return rows, wall, str(metrics)
    finally:
        gym.stop()


GPUS = "all"  # --gpus; "none" smoke-tests the script on a CPU machine


def start_gym(state: Path, workers: int, *extra: str) -> Gym:
    args = ["--workers-per-gpu", str(workers), "--cpu-workers", str(workers), *extra]
    return Gym(state, args, gpus=GPUS).start()


def wait_ready(gym: Gym, timeout: float = 180.0) -> None:
    """Waits until every worker's fork server has finished its imports (its CPU goes quiet)."""
    assert gym.proc is not None
    deadline = time.monotonic() + timeout
    last = -1.0
    while time.monotonic() < deadline:
        total = 0.0
        for pid, _ in descendants(gym.proc.pid):
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
            except (OSError, IndexError, ValueError):
                continue
        if total == last and total > 0:
            return
        last = total
        time.sleep(1.0)


def part_throughput(args: argparse.Namespace, log: Any) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kgym-tp-") as tmp:
        folder = Path(tmp) / "candidates"
        folder.mkdir()
        mix = build_mix(folder)
        if args.limit:
            mix = mix[:: max(1, len(mix) // args.limit)][: args.limit]
        print(f"throughput: {len(mix)} candidates", file=log)
        service_rows, service_wall, metrics = run_service(
            mix, args.seed, args.workers, Path(tmp), log
        )
        # Other --workers-per-gpu, the same candidates, against the one baseline below.
        others = {}
        for workers in args.also_workers:
            print(f"throughput: the service with {workers} workers per GPU", file=log)
            rows, wall, _ = run_service(mix, args.seed, workers, Path(tmp) / f"w{workers}", log)
            others[str(workers)] = {"wall_s": wall, "per_min": 60 * len(mix) / wall, "rows": rows}
        # The same service again (--repeat), for a median over runs spread across the call:
        # one run's wall time moves by 10% or more between calls.
        walls = [service_wall]
        for round_index in range(1, args.repeat):
            print(f"throughput: the service again, round {round_index + 1}", file=log)
            _, wall, _ = run_service(
                mix, args.seed, args.workers, Path(tmp) / f"r{round_index}", log
            )
            walls.append(wall)
        baseline_started = time.perf_counter()
        baseline_rows = run_baseline(mix, args.seed, log)
        baseline_wall = time.perf_counter() - baseline_started
    agree = sum(
        s["status"] == b["status"] for s, b in zip(service_rows, baseline_rows, strict=True)
    )
    for other in others.values():
        other["ratio"] = baseline_wall / other["wall_s"]
        other["verdicts_agree"] = sum(
            s["status"] == b["status"] for s, b in zip(other["rows"], baseline_rows, strict=True)
        )
        other["speedups"] = speedup_agreement(other["rows"], baseline_rows)
        other["locks"] = lock_summary(other["rows"])
        other["timeline"] = window_timeline(other["rows"])
    return {
        "candidates": len(mix),
        "mix": {k: sum(e["kind"] == k for e in mix) for k in sorted({e["kind"] for e in mix})},
        "workers_per_gpu": args.workers,
        "options": "defaults (5 trials, timing budget 4 s, target CI 1%), "
        f"profile {'on' if PROFILE else 'off'}, "
        f"{'one untimed evaluation before each batch, ' if WARM_FIRST else ''}"
        f"timeout {TIMEOUT_S:.0f} s ({HANG_TIMEOUT_S:.0f} s for the hangs)",
        "service": {"wall_s": service_wall, "per_min": 60 * len(mix) / service_wall},
        "baseline": {"wall_s": baseline_wall, "per_min": 60 * len(mix) / baseline_wall},
        "ratio": baseline_wall / service_wall,
        "verdicts_agree": agree,
        "speedups": speedup_agreement(service_rows, baseline_rows),
        "locks": lock_summary(service_rows),
        "timeline": window_timeline(service_rows),
        "other_workers_per_gpu": others,
        "repeats": {
            "wall_s": walls,
            "median_wall_s": statistics.median(walls),
            "ratio_of_median": baseline_wall / statistics.median(walls),
        },
        "rows": [
            {**e, "service": s, "baseline": b}
            for e, s, b in zip(mix, service_rows, baseline_rows, strict=True)
        ],
        "service_metrics": [ln for ln in metrics.splitlines() if "_total" in ln][:60],
    }


def speedup_agreement(
    service_rows: list[dict[str, Any]], baseline_rows: list[dict[str, Any]]
) -> dict[str, Any]:
    """How far each speedup the service measured (jobs beside each other on the GPU) lies from
    the one the baseline measured for the same candidate (alone): |log(service / baseline)|,
    in percent. A neighbour that disturbed a timing window would show here."""
    gaps = []
    for s, b in zip(service_rows, baseline_rows, strict=True):
        mine, alone = s["result"].get("speedup"), b["result"].get("speedup")
        if mine and alone:
            gaps.append(abs(math.log(mine / alone)) * 100)
    if not gaps:
        return {"pairs": 0}
    return {
        "pairs": len(gaps),
        "median_gap_pct": statistics.median(gaps),
        "max_gap_pct": max(gaps),
    }


PHASES_BEFORE_TIMING = ("startup", "load", "init", "compile", "correctness", "decoy")


def window_timeline(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """When the GPU timed, from each job's finish time and its phases (the supervisor's):
    a timed job's window is its timing and profile phases (its runners end inside the hold),
    placed after the phases before it. The first window's opening counts from the batch's
    first job start; the gaps are the times between windows when no job timed."""
    starts: list[float] = []
    spans: list[tuple[float, float]] = []
    for row in rows:
        durations = (row.get("result") or {}).get("durations_ms") or {}
        if "total" not in durations or row.get("finished_at") is None:
            continue
        began = float(row["finished_at"]) - float(durations["total"]) / 1e3
        starts.append(began)
        if "timing" in durations:
            opened = began + sum(float(durations.get(p) or 0.0) for p in PHASES_BEFORE_TIMING) / 1e3
            length = (float(durations["timing"]) + float(durations.get("profile") or 0.0)) / 1e3
            spans.append((opened, opened + length))
    if not spans:
        return {"windows": 0}
    spans.sort()
    gaps = [later[0] - earlier[1] for earlier, later in zip(spans, spans[1:])]
    return {
        "windows": len(spans),
        "first_window_opened_s": round(spans[0][0] - min(starts), 2),
        "windows_s": round(sum(end - begin for begin, end in spans), 2),
        "gaps_s": [round(g, 2) for g in gaps if g > 0.05],
        "idle_between_windows_s": round(sum(g for g in gaps if g > 0), 2),
    }


def lock_summary(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Seconds summed over jobs: the timing windows, and the waits for the GPU lock (shared and
    exclusive)."""
    total = {"timing_windows_s": 0.0, "shared_wait_s": 0.0, "timing_wait_s": 0.0}
    keys = {
        "timing_windows_s": "harness_timing",
        "shared_wait_s": "harness_gpu_lock_wait",
        "timing_wait_s": "harness_timing_lock_wait",
    }
    for row in rows:
        durations = row["result"].get("durations_ms") or {}
        for name, key in keys.items():
            total[name] += float(durations.get(key) or 0.0) / 1e3
    return total


def latency_runs(
    args: argparse.Namespace,
    log: Any,
    task: str = "06_softmax",
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Six evaluations of the task's solution on a warm gym, one at a time; medians of the last
    five (the first stores the reference timing). ``options``: added to each request's."""
    source = (SOLUTIONS / f"{task}.py").read_text()
    with tempfile.TemporaryDirectory(prefix="kgym-lat-") as tmp:
        gym = start_gym(Path(tmp), args.workers)
        try:
            wait_ready(gym)
            runs = []
            for i in range(6):
                time.sleep(args.latency_gap)
                body = {"task": {"id": task}, "candidate": {"source": source}}
                body["options"] = {"seed": 100 + i, **(options or {})}
                started = time.perf_counter()
                status, job, _ = call(gym.url + "/v1/evaluate?wait=300", "POST", body, timeout=400)
                round_trip = time.perf_counter() - started
                assert status == 200, job
                result = job["result"]
                assert result["status"] == "ok", result.get("error")
                durations = result["durations_ms"]
                supervised = sum(
                    v for k, v in durations.items() if k != "total" and not k.startswith("harness_")
                )
                runs.append(
                    {
                        "round_trip_s": round_trip,
                        # The judge's exit and the sandbox's end of the job, after its last phase.
                        "after_last_phase_ms": durations["total"] - supervised,
                        "queue_wait_s": job["started_at"] - job["created_at"],
                        "status": result["status"],
                        "durations_ms": result["durations_ms"],
                        "reference_check": (result.get("timing") or {}).get("reference_check"),
                        # Whether the judge's own kernel made the exact check, or why not.
                        "fused_exact_check": (result.get("judge") or {}).get("fused_exact_check"),
                        # How noisy each series' samples were: what decides the window's rounds.
                        "series": {
                            role: {
                                key: ((result.get("timing") or {}).get(role) or {}).get(key)
                                for key in ("samples", "median_ms", "p25_ms", "p75_ms", "cv")
                            }
                            for role in ("candidate", "reference")
                        },
                        "speedup_ci": (result.get("timing") or {}).get("speedup_ci"),
                        "timing_method": {
                            key: ((result.get("timing") or {}).get("method") or {}).get(key)
                            for key in (
                                "rounds",
                                "calls_per_sample",
                                "calls_per_sample_by_series",
                                "stop_reason",
                                "judge_s",
                                "checks",
                                "sample_overhead_ms",
                                "output_copy_ms",
                                "canary_ms",
                                "arena_slots",
                            )
                        },
                    }
                )
                print(
                    f"latency {task} {i}: {round_trip:.2f} s {result['status']}, "
                    f"{runs[-1]['after_last_phase_ms']:.0f} ms after the last phase",
                    file=log,
                )
        finally:
            gym.stop()
    measured = runs[1:]
    phases = sorted({k for r in measured for k in r["durations_ms"]})
    return {
        "task": task,
        "gap_s": args.latency_gap,
        "runs": runs,
        "median_ms": {
            p: statistics.median(r["durations_ms"].get(p, 0.0) for r in measured) for p in phases
        },
        "round_trip_median_s": statistics.median(r["round_trip_s"] for r in measured),
        "after_last_phase_median_ms": statistics.median(r["after_last_phase_ms"] for r in measured),
        "queue_wait_median_s": statistics.median(r["queue_wait_s"] for r in measured),
    }


def part_latency(args: argparse.Namespace, log: Any) -> dict[str, Any]:
    out = {"candidate": "tasks/solutions/06_softmax.py (default options: profile on)"}
    out |= latency_runs(args, log)
    if args.compare_no_profile:
        print("latency: again, profile off", file=log)
        out["without_profile"] = latency_runs(args, log, options={"profile": False})
    for task in [t for t in args.latency_also.split(",") if t]:
        out.setdefault("other_tasks", {})[task] = latency_runs(args, log, task)
        if args.compare_no_profile:
            without = latency_runs(args, log, task, options={"profile": False})
            out.setdefault("other_tasks_without_profile", {})[task] = without
    return out


NAIVE = r"""
import importlib.util, json, sys, torch
def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod); return mod
task, cand = load(sys.argv[1], "task"), load(sys.argv[2], "cand")
init = task.get_init_inputs()
ref = task.Model(*init).cuda().eval()
new = cand.ModelNew(*init).cuda().eval()
new.load_state_dict(ref.state_dict(), strict=False)
xs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in task.get_inputs()]
def mean_ms(fn, calls=100):
    for _ in range(10): fn(*xs)
    torch.cuda.synchronize()
    times = []
    for _ in range(calls):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(*xs); b.record(); b.synchronize(); times.append(a.elapsed_time(b))
    return sum(times) / len(times)
with torch.no_grad():
    print(json.dumps([mean_ms(ref) / mean_ms(new) for _ in range(10)]))
"""


def cv(xs: list[float]) -> float:
    return statistics.pstdev(xs) / statistics.mean(xs) if len(xs) > 1 else 0.0


def timing_detail(result: dict[str, Any]) -> dict[str, Any]:
    t = result.get("timing") or {}
    method = t.get("method") or {}
    return {
        "speedup": t.get("speedup"),
        "speedup_ci": t.get("speedup_ci"),
        "reference_ms": (t.get("reference") or {}).get("median_ms"),
        "candidate_ms": (t.get("candidate") or {}).get("median_ms"),
        "rounds": method.get("rounds"),
        "stop_reason": method.get("stop_reason"),
        "lock_wait_ms": (result.get("durations_ms") or {}).get("timing_lock_wait"),
    }


def naive_speedups(task: str) -> list[list[float]]:
    """3 fresh processes, each timing 10 times the naive way."""
    runs = []
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(NAIVE)
    try:
        for _ in range(3):
            proc = subprocess.run(
                [sys.executable, f.name]
                + [str(ROOT / "tasks" / f"{task}.py"), str(SOLUTIONS / f"{task}.py")],
                capture_output=True,
                text=True,
                timeout=600,
            )
            runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    finally:
        os.unlink(f.name)
    return runs


def spread(runs: list[list[float]]) -> dict[str, Any]:
    return {
        "speedups": runs,
        "cv_within_run": [cv(r) for r in runs],
        "cv_across_restarts": cv([statistics.mean(r) for r in runs]),
        "cv_all": cv([s for r in runs for s in r]),
    }


def part_precision(args: argparse.Namespace, log: Any) -> dict[str, Any]:
    """For each TASK:WORKERS in --precision: 10 evaluations of the task's solution in one gym
    (one batch, so up to WORKERS at once), the gym started 3 times; then the naive timing."""
    out: dict[str, Any] = {}
    naive: dict[str, list[list[float]]] = {}
    for item in args.precision.split(","):
        task, workers = item.split(":")
        source = (SOLUTIONS / f"{task}.py").read_text()
        runs: list[list[float]] = []
        details: list[list[dict[str, Any]]] = []
        for restart in range(3):
            with tempfile.TemporaryDirectory(prefix="kgym-prec-") as tmp:
                gym = start_gym(Path(tmp), int(workers), "--no-cache")
                try:
                    wait_ready(gym)
                    body = {"task": {"id": task}, "candidate": {"source": source}}
                    body["options"] = {"seed": 7, "profile": False}
                    status, batch, _ = call(
                        gym.url + "/v1/evaluate:batch?wait=600",
                        "POST",
                        {"requests": [body] * 10},
                        timeout=700,
                    )
                    assert status == 200, batch
                    details.append([timing_detail(j["result"]) for j in batch["jobs"]])
                finally:
                    gym.stop()
            runs.append([d["speedup"] for d in details[-1]])
            print(f"precision {item} restart {restart}: cv {cv(runs[-1]):.4f}", file=log)
        if task not in naive:
            naive[task] = naive_speedups(task)
        out[f"{task}, {workers} workers"] = {
            "task": task,
            "workers_per_gpu": int(workers),
            "kgym": {**spread(runs), "evaluations": details},
            "naive": spread(naive[task]),
        }
    return out


def part_faults(args: argparse.Namespace, log: Any) -> dict[str, Any]:
    """kill -9 of a job child, of a fork server and of the whole service during one batch."""
    solutions = sorted(SOLUTIONS.glob("*.py"))
    with tempfile.TemporaryDirectory(prefix="kgym-faults-") as tmp:
        gym = start_gym(Path(tmp), 2, "--no-cache")
        wait_ready(gym)
        hang = solutions[0].read_text() + HANGS
        reqs = [{"task": {"id": "01_relu"}, "candidate": {"source": hang}}] * 2
        reqs = [dict(r, options={"timeout_s": 60, "seed": i}) for i, r in enumerate(reqs)]
        reqs += [
            {"task": {"id": task_of(p)}, "candidate": {"source": p.read_text()}}
            for p in solutions[:10]
        ]
        status, batch, _ = call(gym.url + "/v1/evaluate:batch", "POST", {"requests": reqs})
        assert status == 202, batch
        ids = [j["id"] for j in batch["jobs"]]
        events = []

        def running_children() -> list[tuple[int, int]]:
            assert gym.proc is not None
            pairs = []
            for pid, cmd in descendants(gym.proc.pid):
                if "kgym.harness.forkserver" in cmd:
                    kids = [c for c, _ in descendants(pid)]
                    if kids and Path(f"/proc/{pid}/status").exists():
                        pairs.append((pid, kids[0]))
            # A server's job child has the same command line: keep servers, not children.
            kids = {k for _, k in pairs}
            return [(s, k) for s, k in pairs if s not in kids]

        time.sleep(8.0)
        pairs = running_children()
        server, child = pairs[0]
        os.kill(child, signal.SIGKILL)
        events.append(f"kill -9 job child {child} (server {server})")
        time.sleep(3.0)
        pairs = running_children()
        server, child = pairs[0]
        os.kill(server, signal.SIGKILL)
        events.append(f"kill -9 fork server {server}")
        time.sleep(3.0)
        _, before_kill, _ = call(gym.url + "/metrics")
        gym.stop(signal.SIGKILL)
        events.append("kill -9 kgym-gym serve")
        gym.start()
        wait_ready(gym)
        jobs = []
        try:
            for job_id in ids:
                _, done, _ = call(gym.url + f"/v1/jobs/{job_id}?wait=600", timeout=700)
                result = done.get("result") or {}
                jobs.append(
                    {
                        "id": job_id,
                        "job_status": done.get("status"),
                        "attempts": done.get("attempts"),
                        "result_status": result.get("status"),
                        "error": (result.get("error") or {}).get("message", "")[:200] or None,
                    }
                )
            _, metrics, _ = call(gym.url + "/metrics")
        finally:
            gym.stop()
    lost = [j for j in jobs if j["job_status"] not in ("done", "failed", "cancelled")]
    return {
        "events": events,
        "jobs": jobs,
        "lost": len(lost),
        "restarts_metric": [ln for ln in str(before_kill).splitlines() if "restarts_total{" in ln],
        "restarts_metric_after_restart": [
            ln for ln in str(metrics).splitlines() if "restarts_total{" in ln
        ],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "parts", nargs="+", choices=["throughput", "latency", "precision", "faults", "report"]
    )
    p.add_argument("--out-dir", type=Path, required=True, help="where each part's JSON goes")
    p.add_argument(
        "--results-dir",
        type=Path,
        default=Path(__file__).parent,
        help="report: where results-<machine>.md and its plots go (default: beside this file)",
    )
    p.add_argument("--workers", type=int, default=8, help="--workers-per-gpu of the service")
    p.add_argument(
        "--also-workers",
        type=lambda text: [int(w) for w in text.split(",") if w],
        default=[],
        help="throughput: W,... more --workers-per-gpu measured against the same baseline",
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--precision",
        default="06_softmax:8,06_softmax:1,10_matmul:8",
        help="TASK:WORKERS_PER_GPU,... evaluated for precision",
    )
    p.add_argument("--gpus", default="all", help="the service's --gpus (none: a CPU smoke test)")
    p.add_argument("--limit", type=int, default=0, help="throughput: only this many candidates")
    p.add_argument(
        "--profile", action="store_true", help="throughput: profile on (PR) on both sides"
    )
    p.add_argument(
        "--compare-no-profile",
        action="store_true",
        help="latency: also measure each task with the option profile off (no kernel record in "
        "the timed rounds), in the same run",
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="throughput: run the service this many times against the one baseline; the JSON's "
        "`repeats` has their median",
    )
    p.add_argument(
        "--latency-also",
        default="",
        help="latency: TASK,... whose solutions are measured the same way after 06_softmax's",
    )
    p.add_argument(
        "--warm-first",
        action="store_true",
        help="throughput: each service runs one evaluation before its batch (untimed), as a "
        "trainer's gym has after its first step",
    )
    p.add_argument(
        "--latency-gap",
        type=float,
        default=0.0,
        metavar="S",
        help="latency: seconds the gym sits idle before each request (a trainer between its "
        "requests)",
    )
    p.add_argument("--json", action="store_true", help="print each part's JSON")
    args = p.parse_args(argv)
    global GPUS, PROFILE, WARM_FIRST
    GPUS = args.gpus
    PROFILE = args.profile
    WARM_FIRST = args.warm_first
    args.out_dir.mkdir(parents=True, exist_ok=True)
    parts = {"throughput": part_throughput, "latency": part_latency}
    parts |= {"precision": part_precision, "faults": part_faults}
    for name in args.parts:
        if name == "report":
            from report import write_report  # noqa: PLC0415 - beside this file

            write_report(args.out_dir, args.results_dir)
            continue
        started = time.perf_counter()
        data = parts[name](args, sys.stderr)
        data["meta"] = meta(argv, time.perf_counter() - started)
        (args.out_dir / f"{name}.json").write_text(json.dumps(data, indent=1))
        if args.json:
            print(json.dumps(data))
        print(f"{name}: done in {data['meta']['seconds']:.0f} s", file=sys.stderr)
    return 0


def meta(argv: list[str] | None, seconds: float) -> dict[str, Any]:
    try:
        gpu = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        gpu = "no GPU (CPU smoke test)"
    import torch  # noqa: PLC0415
    import triton  # noqa: PLC0415

    return {
        "command": "python bench/service_gpu/run.py " + " ".join(argv or sys.argv[1:]),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "commit": commit(),
        "gpu": gpu,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "seconds": seconds,
    }


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    raise SystemExit(main())
