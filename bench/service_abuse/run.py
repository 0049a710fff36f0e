"""Hostile clients and tenants against `kgym-gym serve` (CPU mode unless --gpus).

Part `http`: normal clients keep asking (GET /v1/tasks and a POST answered from the cache) and
their latency is recorded, first alone, then while abusers run side by side: a flood of idle
connections (more than the connection cap), slow-header clients, a Content-Length longer than
the body, deeply nested JSON and concurrent 4 MB bodies. The service's peak memory (VmHWM) and
whether it kept serving are recorded, with ``latency-<machine>.png``.

Part `tenants` (tenants.py): one row per attack of a hostile tenant on the host and the other
tenants (jobs over their memory, disk and process limits beside honest ones, clock jumps, crash
leftovers, another client's jobs, fair share, ceilings, a full disk, a body of many values,
TLS). Each part replaces its own section (``## http``, ``## tenants``) of
``results-<machine>.md`` beside this file (or in --out-dir); --json prints the run.

    python bench/service_abuse/run.py                  # both parts, 20 s per http phase
    python bench/service_abuse/run.py --part tenants   # the tenants' rows only
    python bench/service_abuse/run.py --part tenants --gpus all   # on a GPU host
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from record import machine, record_part, results_path, run_lines  # noqa: E402
from service_util import Gym, call  # noqa: E402

TITLE = "Service under abuse"

MAX_CONNECTIONS = 1024


def status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def safe_call(*args: Any, **kwargs: Any) -> int:
    """The HTTP status, or 0 when the connection was refused, reset or closed."""
    try:
        return int(call(*args, **kwargs)[0])
    except OSError:
        return 0


def percentile(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


class NormalClients:
    """`n` threads alternating a task listing and a cached evaluation; latencies in ms."""

    def __init__(self, g: Gym, n: int, body: dict[str, Any]) -> None:
        self.g, self.n, self.body = g, n, body
        self.latencies: list[tuple[float, float]] = []  # (time since start, ms)
        self.failures = 0
        self.stop = threading.Event()
        self.lock = threading.Lock()

    def run(self, seconds: float) -> None:
        self.stop.clear()
        start = time.monotonic()

        def one() -> None:
            k = 0
            while not self.stop.is_set():
                t0 = time.monotonic()
                if k % 2:
                    status = safe_call(self.g.url + "/v1/tasks", timeout=30)
                else:
                    status = safe_call(self.g.url + "/v1/evaluate", "POST", self.body, timeout=30)
                ms = (time.monotonic() - t0) * 1e3
                with self.lock:
                    if status in (200, 202):
                        self.latencies.append((t0 - start, ms))
                    else:
                        self.failures += 1
                k += 1
                time.sleep(0.02)

        threads = [threading.Thread(target=one) for _ in range(self.n)]
        for t in threads:
            t.start()
        time.sleep(seconds)
        self.stop.set()
        for t in threads:
            t.join()


def abuse(g: Gym, seconds: float, log: list[str]) -> dict[str, Any]:
    """Runs every abuser for `seconds`; returns what each saw."""
    stop = threading.Event()
    seen: dict[str, Any] = {"idle_opened": 0, "slow": [], "short_body": [], "deep": [], "big": []}

    def idle_flood() -> None:
        socks = []
        try:
            while not stop.is_set() and len(socks) < MAX_CONNECTIONS + 100:
                try:
                    socks.append(socket.create_connection(("127.0.0.1", g.port), timeout=5))
                except OSError:
                    time.sleep(0.05)
            seen["idle_opened"] = len(socks)
            stop.wait()
        finally:
            for s in socks:
                s.close()

    def answer_status(s: socket.socket) -> int:
        s.settimeout(90)  # beyond the body deadline (60 s)
        try:
            data = s.recv(64)
        except OSError:
            return 0
        return int(data.split(b" ")[1]) if data.startswith(b"HTTP/1.1 ") else 0

    def slow_headers() -> None:
        while not stop.is_set():
            t0 = time.monotonic()
            with socket.create_connection(("127.0.0.1", g.port), timeout=5) as s:
                s.sendall(b"GET /v1/tasks HTTP/1.1\r\n")
                while not stop.is_set() and time.monotonic() - t0 < 15:
                    try:
                        s.sendall(b"X-Slow: 1\r\n")
                    except OSError:
                        break
                    time.sleep(0.5)
                seen["slow"].append((answer_status(s), time.monotonic() - t0))

    def short_body() -> None:
        while not stop.is_set():
            t0 = time.monotonic()
            with socket.create_connection(("127.0.0.1", g.port), timeout=5) as s:
                s.sendall(b"POST /v1/evaluate HTTP/1.1\r\nContent-Length: 1000\r\n\r\n{")
                seen["short_body"].append((answer_status(s), time.monotonic() - t0))

    def deep_json() -> None:
        body = b"[" * 100_000 + b"]" * 100_000
        while not stop.is_set():
            t0 = time.monotonic()
            status = safe_call(g.url + "/v1/evaluate", "POST", raw=body, timeout=30)
            seen["deep"].append((status, time.monotonic() - t0))

    def big_bodies() -> None:
        cand = "x" * 4_000_000  # a body just under the 4 MiB limit, parsed then refused
        body = json.dumps(
            {"requests": [{"task": {"id": "01_relu"}, "candidate": {"source": cand}}]}
        )
        while not stop.is_set():
            t0 = time.monotonic()
            status = safe_call(g.url + "/v1/evaluate:batch", "POST", raw=body.encode(), timeout=60)
            seen["big"].append((status, time.monotonic() - t0))

    workers = [threading.Thread(target=idle_flood)]
    workers += [threading.Thread(target=slow_headers) for _ in range(20)]
    workers += [threading.Thread(target=short_body) for _ in range(10)]
    workers += [threading.Thread(target=deep_json) for _ in range(2)]
    workers += [threading.Thread(target=big_bodies) for _ in range(8)]
    for w in workers:
        w.start()
    log.append(f"abusers started: {len(workers)} threads")
    time.sleep(seconds)
    stop.set()
    for w in workers:
        w.join()
    return seen


def summary(pairs: list[tuple[int, float]]) -> dict[str, Any]:
    statuses: dict[str, int] = {}
    for status, _ in pairs:
        statuses[str(status)] = statuses.get(str(status), 0) + 1
    times = [t for _, t in pairs]
    return {
        "count": len(pairs),
        "statuses": statuses,
        "median_s": statistics.median(times) if times else None,
        "max_s": max(times) if times else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each phase")
    parser.add_argument("--clients", type=int, default=8, help="normal clients")
    parser.add_argument("--out-dir", type=Path, default=Path(__file__).resolve().parent)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--part", choices=["http", "tenants", "all"], default="all")
    parser.add_argument(
        "--gpus", default="none", help="the service's --gpus for the tenants' jobs (none: CPU)"
    )
    parser.add_argument(
        "--honest-jobs", type=int, default=8, help="honest jobs beside the hostile ones"
    )
    args = parser.parse_args()
    log: list[str] = []

    def say(line: str) -> None:
        log.append(line)
        print(line, file=sys.stderr, flush=True)

    ok = True
    if args.part in ("tenants", "all"):
        ok = run_tenants(args, say) and ok
    if args.part in ("http", "all"):
        ok = run_http(args, say) and ok
    return 0 if ok else 1


def command() -> str:
    return "python bench/service_abuse/run.py " + " ".join(sys.argv[1:])


def run_tenants(args: argparse.Namespace, say: Any) -> bool:
    from tenants import run_all

    rows = run_all(args.gpus, args.honest_jobs, say)
    device = "CPU mode" if args.gpus == "none" else f"--gpus {args.gpus}"
    lines = [
        *run_lines(command()),
        "",
        f"The service in {device}. Before: the issue's figures (CPU mode, 7043e88).",
        "",
        "| attack | what | before | after | held |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['attack']} | {r['before']} | {r['after']} | "
            f"{'yes' if r['ok'] else '**no**'} |"
        )
    path = results_path(args.out_dir)
    record_part(path, TITLE, "tenants", lines, {"tenants": rows}, args.json)
    if not args.json:
        print(path.read_text())
    return all(r["ok"] for r in rows)


def run_http(args: argparse.Namespace, say: Any) -> bool:
    log: list[str] = []

    solution = (ROOT / "tasks" / "solutions" / "01_relu.py").read_text()
    body = {
        "task": {"id": "01_relu"},
        "candidate": {"source": solution},
        "options": {"trials": 1, "baseline": "none"},
    }
    with tempfile.TemporaryDirectory() as tmp:
        g = Gym(Path(tmp), ["--cpu-workers", "1"]).start()
        assert g.proc is not None
        try:
            say("warming the cache with one evaluation")
            assert call(g.url + "/v1/evaluate?wait=300", "POST", body, timeout=320)[0] == 200
            base_rss = status_kib(g.proc.pid, "VmRSS")
            say(f"phase 1: {args.clients} normal clients alone for {args.seconds:.0f} s")
            alone = NormalClients(g, args.clients, body)
            alone.run(args.seconds)
            say(f"phase 2: the same clients beside the abusers for {args.seconds:.0f} s")
            beside = NormalClients(g, args.clients, body)
            seen: dict[str, Any] = {}
            thread = threading.Thread(target=lambda: seen.update(abuse(g, args.seconds, log)))
            thread.start()
            beside.run(args.seconds)
            thread.join()
            alive = g.proc.poll() is None and call(g.url + "/healthz", timeout=10)[0] == 200
            peak_rss = status_kib(g.proc.pid, "VmHWM")
        finally:
            g.stop()

    def lat(c: NormalClients) -> dict[str, Any]:
        ms = [m for _, m in c.latencies]
        return {
            "requests": len(ms),
            "failures": c.failures,
            "p50_ms": percentile(ms, 0.5),
            "p99_ms": percentile(ms, 0.99),
            "max_ms": max(ms) if ms else None,
        }

    results = {
        "normal_alone": lat(alone),
        "normal_beside_abuse": lat(beside),
        "abuse": {
            "idle_connections_opened": seen.get("idle_opened", 0),
            "slow_headers": summary(seen.get("slow", [])),
            "short_body": summary(seen.get("short_body", [])),
            "deep_json": summary(seen.get("deep", [])),
            "big_bodies_4mb": summary(seen.get("big", [])),
        },
        "service_rss_mib": {"after_warmup": base_rss / 1024, "peak": peak_rss / 1024},
        "still_serving": alive,
    }
    path = results_path(args.out_dir)
    png = f"latency-{machine()}.png"
    record_part(path, TITLE, "http", http_lines(results, png), {"http": results}, args.json)
    plot(args.out_dir / png, alone, beside)
    if not args.json:
        print(path.read_text())
    return bool(alive and beside.latencies)


def http_lines(r: dict[str, Any], png: str) -> list[str]:
    a, b = r["normal_alone"], r["normal_beside_abuse"]
    lines = [
        *run_lines(command()),
        "",
        "The service in CPU mode.",
        "",
        "| normal clients | requests | failures | p50 ms | p99 ms | max ms |",
        "| --- | --- | --- | --- | --- | --- |",
        f"| alone | {a['requests']} | {a['failures']} | {a['p50_ms']:.1f} | {a['p99_ms']:.1f} "
        f"| {a['max_ms']:.1f} |",
        f"| beside the abusers | {b['requests']} | {b['failures']} | {b['p50_ms']:.1f} "
        f"| {b['p99_ms']:.1f} | {b['max_ms']:.1f} |",
        "",
        "| abuser | attempts | answers (HTTP status: count) | median s | max s |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, s in r["abuse"].items():
        if isinstance(s, dict):
            med = f"{s['median_s']:.2f}" if s["median_s"] is not None else "-"
            mx = f"{s['max_s']:.2f}" if s["max_s"] is not None else "-"
            lines.append(f"| {name} | {s['count']} | {s['statuses']} | {med} | {mx} |")
    lines += [
        "",
        f"Idle connections opened by the flood: {r['abuse']['idle_connections_opened']} "
        f"(cap {MAX_CONNECTIONS}; status 0 = closed without an answer).",
        f"Service memory: {r['service_rss_mib']['after_warmup']:.0f} MiB after warm-up, "
        f"peak {r['service_rss_mib']['peak']:.0f} MiB. Still serving afterwards: "
        f"{r['still_serving']}.",
        "",
        f"![latency of normal clients]({png})",
    ]
    return lines


def plot(path: Path, alone: NormalClients, beside: NormalClients) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(8, 4))
    for c, label in ((alone, "alone"), (beside, "beside the abusers")):
        ax.scatter([t for t, _ in c.latencies], [m for _, m in c.latencies], s=4, label=label)
    ax.set_xlabel("seconds into the phase")
    ax.set_ylabel("latency of a normal request (ms)")
    ax.set_yscale("log")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    sys.exit(main())
