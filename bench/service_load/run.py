"""Load on a CPU machine: many concurrent clients against one `kgym-gym serve` (CPU mode).

Requests mix result-cache hits, static-screen rejections, fresh interpreter evaluations and bad
requests. Checks: every request answered exactly once (no job id twice, none lost), every error
a JSON error, the service's memory bounded. Writes ``results-cpu.md`` and ``latency-cpu.png``
beside this file (or to --out-dir); --save keeps the whole run as JSON.

    python bench/service_load/run.py                      # 200 clients, 5,000 requests
    python bench/service_load/run.py --clients 20 --requests 300 --json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import random
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from service_util import Gym, call, descendants  # noqa: E402


def rss_mib(pid: int) -> float:
    """A process's resident memory; 0 for one that has ended since it was listed (a job's
    child between ``descendants`` and this read: the sampler thread died of it in CI once)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    for line in text.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def build_mix(requests: int, fresh: int, seed: int) -> list[tuple[str, dict[str, Any]]]:
    """(kind, request body) pairs: `fresh` unique evaluations, the rest hits/rejects/bad."""
    solutions = sorted((ROOT / "tasks" / "solutions").glob("*.py"))
    screened = [
        p
        for p in sorted((ROOT / "tests" / "hostile").glob("*.py"))
        if "# expect: rejected" in p.read_text() and "forbidden-import" in p.read_text()
    ]
    rng = random.Random(seed)
    base = {"trials": 1, "timing_budget_ms": 100}

    def body(path: Path, **options: Any) -> dict[str, Any]:
        task = path.stem.split("__")[0]
        return {
            "task": {"id": task},
            "candidate": {"source": path.read_text()},
            "options": {**base, **options},
        }

    mix: list[tuple[str, dict[str, Any]]] = []
    hot = [body(p) for p in solutions[:4]]  # warmed before the run: cache hits
    for i in range(fresh):
        mix.append(("fresh", body(solutions[i % 4], seed=1000 + i)))
    kinds = ["hit", "hit", "hit", "reject", "reject", "bad"]
    while len(mix) < requests:
        kind = rng.choice(kinds)
        if kind == "hit":
            mix.append(("hit", rng.choice(hot)))
        elif kind == "reject":
            mix.append(("reject", body(rng.choice(screened))))
        else:
            mix.append(("bad", {"task": {"id": "no_such_task"}, "candidate": {"source": "x"}}))
    rng.shuffle(mix)
    return [("warm", h) for h in hot] + mix


def run(clients: int, requests: int, fresh: int, workers: int, seed: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kgym-load-") as state:
        gym = Gym(Path(state), ["--cpu-workers", str(workers)]).start()
        try:
            mix = build_mix(requests, fresh, seed)
            for kind, req in [m for m in mix if m[0] == "warm"]:
                status, job, _ = call(gym.url + "/v1/evaluate?wait=600", "POST", req)
                assert status == 200 and job["status"] == "done", (kind, status, job)
            work = [m for m in mix if m[0] != "warm"]
            answers: list[dict[str, Any]] = []
            lock = threading.Lock()
            cursor = iter(range(len(work)))
            rss: list[tuple[float, float, float]] = []
            started = time.perf_counter()
            stop = threading.Event()

            def sample() -> None:
                assert gym.proc is not None
                while not stop.is_set():
                    workers = sum(rss_mib(p) for p, _ in descendants(gym.proc.pid))
                    rss.append((time.perf_counter() - started, rss_mib(gym.proc.pid), workers))
                    time.sleep(0.25)

            def client() -> None:
                while True:
                    with lock:
                        i = next(cursor, None)
                    if i is None:
                        return
                    kind, req = work[i]
                    t0 = time.perf_counter()
                    try:
                        status, out, _ = call(gym.url + "/v1/evaluate?wait=600", "POST", req)
                    except Exception as exc:  # noqa: BLE001 - a lost request is a finding
                        status, out = -1, {"transport_error": repr(exc)}
                    with lock:
                        answers.append(
                            {
                                "i": i,
                                "kind": kind,
                                "status": status,
                                "latency_s": time.perf_counter() - t0,
                                "body": out,
                            }
                        )

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            threads = [threading.Thread(target=client) for _ in range(clients)]
            for t in threads:
                t.start()
            done_at = 0
            while any(t.is_alive() for t in threads):
                time.sleep(2)
                if len(answers) - done_at >= max(1, len(work) // 10):
                    done_at = len(answers)
                    print(f"  {done_at}/{len(work)} answered", file=sys.stderr)
            for t in threads:
                t.join()
            wall = time.perf_counter() - started
            stop.set()
            sampler.join()
            _, metrics, _ = call(gym.url + "/metrics")
        finally:
            gym.stop()

    ids = [a["body"].get("id") for a in answers if isinstance(a["body"], dict)]
    ids = [i for i in ids if i]
    problems: list[str] = []
    if sorted(a["i"] for a in answers) != list(range(len(work))):
        problems.append("some request was not answered exactly once")
    if len(ids) != len(set(ids)):
        problems.append("a job id was answered twice")
    expected = {"hit": ("ok",), "fresh": ("ok",), "reject": ("rejected",)}
    verdicts: Counter[str] = Counter()
    for a in answers:
        body, kind = a["body"], a["kind"]
        if kind == "bad":
            good = a["status"] == 404 and body.get("error", {}).get("code") == "unknown_task"
        else:
            got = body.get("result", {}).get("status") if a["status"] == 200 else None
            good = got in expected[kind]
            if kind == "hit":
                good = good and body.get("cached") is True
        verdicts[f"{kind}:{'as expected' if good else 'UNEXPECTED'}"] += 1
        if not good and len(problems) < 20:
            problems.append(f"{kind} request {a['i']}: HTTP {a['status']} {str(body)[:200]}")
    lat = {
        k: sorted(a["latency_s"] for a in answers if a["kind"] == k) for k in expected | {"bad": 0}
    }

    def pct(xs: list[float], q: float) -> float | None:
        return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else None

    return {
        "clients": clients,
        "requests": len(work),
        "fresh_evaluations": fresh,
        "workers": workers,
        "wall_s": wall,
        "requests_per_s": len(work) / wall,
        "verdicts": dict(verdicts),
        "problems": problems,
        "latency_s": {
            k: {"p50": pct(v, 0.5), "p99": pct(v, 0.99), "max": v[-1] if v else None}
            for k, v in lat.items()
        },
        "rss_mib": {"max": max(r[1] for r in rss), "first": rss[0][1], "last": rss[-1][1]},
        "worker_rss_mib": {"max": max(r[2] for r in rss), "last": rss[-1][2]},
        "rss_trace": rss,
        "latencies": [(a["kind"], a["latency_s"]) for a in answers],
        "cache_hits_metric": next(
            (ln for ln in metrics.splitlines() if ln.startswith("kgym_cache_hits_total")), ""
        ),
    }


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    for kind in ("hit", "reject", "bad", "fresh"):
        xs = [lat * 1e3 for k, lat in report["latencies"] if k == kind]
        if xs:
            a.hist(xs, bins=50, alpha=0.6, label=f"{kind} ({len(xs)})", log=True)
    a.set_xlabel("latency (ms)")
    a.set_ylabel("requests")
    a.set_title(f"{report['clients']} clients, {report['requests']} requests")
    a.legend()
    ts, rs, ws = zip(*report["rss_trace"], strict=True)
    b.plot(ts, rs, label="kgym-gym serve")
    b.plot(ts, ws, label="its fork servers + job children")
    b.set_xlabel("time (s)")
    b.set_ylabel("RSS (MiB)")
    b.set_yscale("log")
    b.set_title("memory")
    b.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clients", type=int, default=200)
    p.add_argument("--requests", type=int, default=5000)
    p.add_argument("--fresh", type=int, default=40, help="unique interpreter evaluations")
    p.add_argument("--workers", type=int, default=2, help="service workers (--cpu-workers)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out-dir", type=Path, default=Path(__file__).parent)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--save", type=Path, help="also write the whole run as JSON here")
    args = p.parse_args(argv)
    report = run(args.clients, args.requests, args.fresh, args.workers, args.seed)
    meta = {
        "command": "python bench/service_load/run.py " + " ".join(argv or sys.argv[1:]),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {platform.platform()}, CPU only",
    }
    summary = {k: v for k, v in report.items() if k not in ("rss_trace", "latencies")}
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if args.save:
        args.save.write_text(json.dumps({"meta": meta, **report}, indent=1))
    plot(report, args.out_dir / "latency-cpu.png")
    lines = [
        "# Service load on a CPU machine",
        "",
        f"- command: `{meta['command']}`",
        f"- date: {meta['date']}; machine: {meta['machine']}",
        f"- {report['clients']} concurrent clients, {report['requests']} requests "
        f"({report['fresh_evaluations']} fresh interpreter evaluations on "
        f"{report['workers']} workers; the rest cache hits, screen rejections, bad requests)",
        f"- wall {report['wall_s']:.1f} s, {report['requests_per_s']:.0f} requests/s",
        f"- verdicts: {report['verdicts']}",
        f"- problems: {report['problems'] or 'none'}",
        f"- service RSS: first {report['rss_mib']['first']:.0f} MiB, max "
        f"{report['rss_mib']['max']:.0f} MiB, last {report['rss_mib']['last']:.0f} MiB; "
        f"its fork servers and job children together: max "
        f"{report['worker_rss_mib']['max']:.0f} MiB, last {report['worker_rss_mib']['last']:.0f} MiB",
        "",
        "| kind | p50 s | p99 s | max s |",
        "| --- | --- | --- | --- |",
    ]
    for kind, q in report["latency_s"].items():
        if q["p50"] is not None:
            lines.append(f"| {kind} | {q['p50']:.3f} | {q['p99']:.3f} | {q['max']:.3f} |")
    lines += ["", "![latency and memory](latency-cpu.png)", ""]
    (args.out_dir / "results-cpu.md").write_text("\n".join(lines))
    print(json.dumps(summary, indent=1) if args.json else "\n".join(lines))
    return 0 if not report["problems"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
