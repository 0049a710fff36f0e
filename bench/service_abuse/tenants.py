"""The host and its tenants: one row per attack of a hostile tenant (run.py --part tenants).

Each row starts its own `kgym-gym serve` (CPU mode unless --gpus says otherwise), runs the attack
and records what it got: per-job limits beside honest jobs, clock jumps (Debian's libfaketime),
crash leftovers, two clients' isolation and fair share, a full disk, a body of many values and
the TLS front door. The "before" figures are those of the issue that asked for these defences
(CPU mode, commit 7043e88).
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import signal
import socket
import ssl
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from service_util import Gym, call, wait_for_status

ROOT = Path(__file__).resolve().parents[2]
RELU_TASK = (ROOT / "tasks" / "01_relu.py").read_text()
RELU = (ROOT / "tasks" / "solutions" / "01_relu.py").read_text()
SETTLED = {"task": {"id": "01_relu"}, "candidate": {"source": "class ModelNew(:\n"}}
LIBFAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")
MIB = 1 << 20

# The limits the hostile jobs are measured against (small, so that they cross them in seconds).
MEMORY_MIB, PIDS, DISK_MIB = 1024, 256, 128
HOSTILE = {
    "memory": f"\n_hog = bytearray({3 * MEMORY_MIB} * {MIB})\n",
    "disk": (
        f"\nfor _i in range({2 * DISK_MIB // 8}):\n"
        f"    with open(f'fill-{{_i}}', 'wb') as _f:\n"
        f"        _f.write(b'x' * (8 * {MIB}))\n"
    ),
    "pids": (
        f"\nimport os, time\nfor _i in range({2 * PIDS}):\n"
        "    if os.fork() == 0:\n        time.sleep(120)\n        os._exit(0)\n"
    ),
}


def vm_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def inline(source: str, **options: Any) -> dict[str, Any]:
    options.setdefault("trials", 1)
    return {
        "task": {"id": "t", "source": source},
        "candidate": {"source": RELU},
        "options": options,
    }


def row(name: str, attack: str, before: str, after: str, ok: bool, **figures: Any) -> dict:
    return {"name": name, "attack": attack, "before": before, "after": after, "ok": ok, **figures}


def limits_beside_honest(tmp: Path, gpus: str, honest_jobs: int) -> list[dict]:
    """The three hostile jobs and `honest_jobs` honest ones at once, each with its own slot."""
    slots = str(len(HOSTILE) + honest_jobs)  # one each: all at once
    args = ["--cpu-workers", slots, "--workers-per-gpu", slots, "--no-cache"]
    args += ["--memory-limit-mib", str(MEMORY_MIB), "--pids-limit", str(PIDS)]
    args += ["--disk-limit-mib", str(DISK_MIB)]
    with Gym(tmp, args, gpus=gpus) as g:
        assert g.proc is not None
        base = vm_kib(g.proc.pid, "VmRSS")
        requests = [inline(RELU_TASK + code) for code in HOSTILE.values()]
        requests += [inline(RELU_TASK, seed=i) for i in range(honest_jobs)]
        t0 = time.monotonic()
        status, out, _ = call(g.url + "/v1/evaluate:batch?wait=600", "POST", {"requests": requests})
        seconds = time.monotonic() - t0
        peak = vm_kib(g.proc.pid, "VmHWM")
        alive = call(g.url + "/healthz")[0] == 200
    assert status == 200, out
    jobs = out["jobs"]
    honest = [j["result"]["status"] for j in jobs[len(HOSTILE) :]]
    honest_ok = sum(s == "ok" for s in honest)
    rows = []
    before = {
        "memory": "3 GiB touched, no cgroup: the OOM killer may pick the service or a neighbour",
        "disk": "2 GiB written to the host's /tmp (only a 256 MiB per-file limit)",
        "pids": "up to 4096 processes (RLIMIT_NPROC headroom)",
    }
    for (kind, _), job in zip(HOSTILE.items(), jobs, strict=False):
        r = job["result"]
        got = (r.get("resource_limit") or {}).get("kind")
        rows.append(
            row(
                f"job over its {kind} limit",
                {
                    "memory": f"task code allocates 3x the limit ({3 * MEMORY_MIB} MiB)",
                    "disk": f"task code writes 2x its directory ({2 * DISK_MIB} MiB)",
                    "pids": f"task code forks {2 * PIDS} processes (limit {PIDS})",
                }[kind],
                before[kind],
                f"{r['status']}, resource_limit {got}; {honest_ok}/{len(honest)} honest jobs "
                f"beside it ok; service RSS {base / 1024:.0f} -> peak {peak / 1024:.0f} MiB",
                r["status"] == "runtime_error"
                and got == kind
                and honest_ok == len(honest)
                and alive,
                seconds=round(seconds, 1),
                cgroup=r["sandbox"]["resources"]["cgroup"],
            )
        )
    return rows


def gpu_share(tmp: Path, gpus: str) -> list[dict]:
    """On a GPU: task code (in the judge) takes 1.5 times the job's share of GPU memory."""
    share = 4096
    hog = (
        "\nimport torch\n"
        f"_hog = torch.ones({share * 3 // 2} * {MIB}, dtype=torch.uint8, device='cuda')\n"
    )
    args = ["--workers-per-gpu", "2", "--no-cache", "--gpu-memory-share-mib", str(share)]
    with Gym(tmp, args, gpus=gpus) as g:
        requests = [inline(RELU_TASK + hog), inline(RELU_TASK)]
        status, out, _ = call(g.url + "/v1/evaluate:batch?wait=600", "POST", {"requests": requests})
    assert status == 200, out
    hostile, honest = (j["result"] for j in out["jobs"])
    got = (hostile.get("resource_limit") or {}).get("kind")
    peak = ((hostile.get("judge") or {}).get("gpu_memory") or {}).get("job_peak_mib")
    return [
        row(
            "job over its GPU memory share",
            f"task code takes {share * 3 // 2} MiB of GPU memory (share {share} MiB)",
            "only the candidate's own memory was bounded (slack over the reference)",
            f"{hostile['status']}, resource_limit {got} (job peak {peak} MiB); the honest job "
            f"beside it {honest['status']}",
            hostile["status"] == "runtime_error"
            and got == "gpu_memory"
            and honest["status"] == "ok",
        )
    ]


def faked(clock: Path) -> dict[str, str]:
    return {
        "LD_PRELOAD": str(LIBFAKETIME),
        "FAKETIME_TIMESTAMP_FILE": str(clock),
        "FAKETIME_NO_CACHE": "1",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
    }


def clock_jumps(tmp: Path) -> list[dict]:
    if not LIBFAKETIME.exists():
        return [row("clock jumps", "-", "-", "skipped: libfaketime is not installed", False)]
    rows = []
    for jump in ("+8d", "-8d"):
        d = tmp / jump
        clock = d / "clock"
        d.mkdir()
        clock.write_text("+0\n")
        args = ["--cpu-workers", "1", "--retain-days", "7"]
        with Gym(d, args, env=faked(clock)) as g:
            out = call(g.url + "/v1/evaluate:batch", "POST", {"requests": [SETTLED] * 200})[1]
            ids = [j["id"] for j in out["jobs"]]
            clock.write_text(f"{jump}\n")
            running = call(g.url + "/v1/admin/retention", "POST")[1]
        with Gym(d, args, env=faked(clock)) as g:
            at_start = call(g.url + "/v1/admin/retention", "POST")[1]
            kept = sum(call(f"{g.url}/v1/jobs/{i}")[0] == 200 for i in ids)
        deleted = running["deleted_by_age"] + at_start["deleted_by_age"]
        rows.append(
            row(
                f"clock {jump}",
                f"200 finished jobs, then the clock {jump} while running and at the next start",
                "+8 d at start deleted all 200; a job run then kept a future created_at"
                if jump == "+8d"
                else "not measured; count retention went by finished_at, which it reorders",
                f"{deleted} deleted by retention, {kept}/200 still answered",
                deleted == 0 and kept == 200,
            )
        )
    return rows


def crash_leftovers(tmp: Path, gpus: str) -> list[dict]:
    slow = inline(RELU_TASK + "\nimport time\ntime.sleep(60)\n")
    g = Gym(tmp, ["--cpu-workers", "1"], gpus=gpus).start()
    try:
        job = call(g.url + "/v1/evaluate", "POST", slow)[1]
        wait_for_status(g.url, job["id"], "running")
        deadline = time.monotonic() + 30
        while not list((tmp / "jobs").glob("kgym-job-*")) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        g.stop(signal.SIGKILL)
    folders = [f for f in (tmp / "jobs").glob("kgym-job-*") if f.is_dir()]  # not their locks
    left = len(folders)
    files = sum(len(list(f.iterdir())) for f in folders)  # its tmpfs went with the service
    with Gym(tmp, ["--cpu-workers", "1"], gpus=gpus) as again:
        after = len([f for f in (tmp / "jobs").glob("kgym-job-*") if f.is_dir()])
        call(f"{again.url}/v1/jobs/{job['id']}", "DELETE")
    return [
        row(
            "kill -9 during a job",
            "kill -9 of the service while a job runs, then a restart",
            "the job folder (candidate.py, task.py, job.json) stays; a restart keeps it",
            f"{left} folder left by the kill (with {files} files), {after} after the next start",
            left == 1 and after == 0,
        )
    ]


def clients(path: Path) -> tuple[Path, dict[str, str]]:
    tokens = {name: f"{name}-token-{os.urandom(8).hex()}" for name in ("alice", "bob")}
    entries = [
        {
            "name": name,
            "token_sha256": hashlib.sha256(token.encode()).hexdigest(),
            "scopes": ["submit", "read_own"],
            "max_priority": 10,
            "max_timeout_s": 600,
        }
        for name, token in tokens.items()
    ]
    path.write_text(json.dumps({"clients": entries}))
    return path, tokens


def tenants(tmp: Path) -> list[dict]:
    cfile, tokens = clients(tmp / "clients.json")
    alice, bob = tokens["alice"], tokens["bob"]
    rows = []
    args = ["--cpu-workers", "1", "--no-cache", "--clients-file", str(cfile)]
    with Gym(tmp, args) as g:
        job = call(g.url + "/v1/evaluate", "POST", SETTLED, token=alice)[1]
        read = call(f"{g.url}/v1/jobs/{job['id']}", token=bob)[0]
        cancel = call(f"{g.url}/v1/jobs/{job['id']}", "DELETE", token=bob)[0]
        rows.append(
            row(
                "another client's job",
                "client B reads and cancels client A's job",
                "any token holder read and cancelled any job",
                f"read {read}, cancel {cancel}",
                read == 404 and cancel == 404,
            )
        )
        over = call(
            g.url + "/v1/evaluate", "POST", {**SETTLED, "options": {"priority": 1000}}, token=bob
        )[0]
        long = call(
            g.url + "/v1/evaluate", "POST", {**SETTLED, "options": {"timeout_s": 1800}}, token=bob
        )[0]
        rows.append(
            row(
                "priority and timeout ceilings",
                "a client asks for priority 1000 and timeout_s 1800 (ceilings 10 and 600)",
                "clients chose priority up to 1000 and timeout_s up to 1800",
                f"{over} and {long}",
                over == 403 and long == 403,
            )
        )
        task = {"id": "slow", "source": RELU_TASK + "\nimport time\ntime.sleep(2)\n"}
        first = {"task": task, "candidate": {"source": RELU}, "options": {"trials": 1}}
        running = call(g.url + "/v1/evaluate", "POST", first, token=alice)[1]
        wait_for_status(g.url, running["id"], "running", token=alice)
        queued = [{**first, "options": {"trials": 1, "seed": s}} for s in range(1, 201)]
        call(g.url + "/v1/evaluate:batch", "POST", {"requests": queued}, token=alice)
        mine = call(g.url + "/v1/evaluate", "POST", first, token=bob)[1]
        deadline = time.monotonic() + 120
        while call(f"{g.url}/v1/jobs/{mine['id']}", token=bob)[1]["status"] == "queued":
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        ran = call(f"{g.url}/v1/jobs/{running['id']}?wait=60", token=alice)[1]
        started = call(f"{g.url}/v1/jobs/{mine['id']}", token=bob)[1].get("started_at") or 0
        delay = started - ran["finished_at"]
        rows.append(
            row(
                "fair share",
                "client A: 1 job running and 200 queued; client B then submits 1",
                "FIFO within a priority: one client's 20 jobs made another wait 7.6 s",
                f"B's job started {delay:.2f} s after A's running job ended",
                0 <= delay < 1.0,
                delay_s=round(delay, 3),
            )
        )
    return rows


def full_disk(tmp: Path) -> list[dict]:
    state = tmp / "state"
    state.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96m", "tmpfs", str(state)]).returncode:
        return [row("full disk", "-", "-", "skipped: cannot mount a tmpfs (needs root)", False)]
    try:
        with Gym(state, ["--cpu-workers", "1"]) as g:
            subprocess.run(
                ["dd", "if=/dev/zero", f"of={state / 'filler'}", "bs=1M", "count=200"],
                capture_output=True,
            )
            submit = call(g.url + "/v1/evaluate", "POST", SETTLED)[0]
            time.sleep(5.5)  # the health probe writes at most every 5 s
            health_status, health, _ = call(g.url + "/healthz")
            errors = sum(
                float(line.split()[-1])
                for line in call(g.url + "/metrics")[1].splitlines()
                if line.startswith("kgym_db_errors_total{op=")
            )
    finally:
        subprocess.run(["umount", "-l", str(state)])
    return [
        row(
            "full disk",
            "the state directory's file system full",
            "submissions got 500 while /healthz said ok; no metric counted database errors",
            f"submission {submit}; /healthz {health_status} {health.get('status')} "
            f"({'; '.join(health.get('problems', []))[:120]}); kgym_db_errors_total {errors:.0f}",
            submit == 503 and health_status == 503 and errors > 0,
        )
    ]


def many_values(tmp: Path) -> list[dict]:
    with Gym(tmp, ["--cpu-workers", "1"]) as g:
        assert g.proc is not None
        call(g.url + "/healthz")
        before = vm_kib(g.proc.pid, "VmHWM")
        body = b'{"requests": [' + b",".join([b"{}"] * 1_300_000) + b"]}"
        t0 = time.monotonic()
        status = call(g.url + "/v1/evaluate:batch", "POST", raw=body)[0]
        seconds = time.monotonic() - t0
        grown = (vm_kib(g.proc.pid, "VmHWM") - before) / 1024
    return [
        row(
            "a 4 MiB batch body of {} values",
            f"POST :batch with {len(body) / MIB:.1f} MiB of 1.3 million {{}} objects",
            "~150 MiB of service memory for the request",
            f"{status} in {seconds:.2f} s; service peak memory +{grown:.0f} MiB",
            status == 413 and grown < 40,
            grown_mib=round(grown, 1),
        )
    ]


def tls(tmp: Path) -> list[dict]:
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    made = subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        capture_output=True,
    )
    if made.returncode:
        return [row("TLS", "-", "-", "skipped: openssl cannot make a certificate", False)]
    args = ["--cpu-workers", "1", "--tls-cert", str(cert), "--tls-key", str(key)]
    with Gym(tmp, args) as g:
        context = ssl.create_default_context(cafile=str(cert))
        conn = http.client.HTTPSConnection("127.0.0.1", g.port, context=context, timeout=30)
        times = []
        for _ in range(50):
            t0 = time.monotonic()
            conn.request("GET", "/v1/tasks")
            answer = conn.getresponse()
            answer.read()
            times.append((time.monotonic() - t0) * 1e3)
        with socket.create_connection(("127.0.0.1", g.port), timeout=30) as s:
            t0 = time.monotonic()
            s.sendall(b"\x16\x03\x01")
            closed = s.recv(10) == b""
            stall = time.monotonic() - t0
    times.sort()
    return [
        row(
            "TLS on the front door",
            "HTTPS round trips (Python's ssl, certificate verified); a client that stalls in the "
            "handshake",
            "no TLS on HTTP",
            f"{answer.status}, median {times[len(times) // 2]:.1f} ms a request on one "
            f"connection; a stalled handshake closed after {stall:.1f} s",
            answer.status == 200 and closed,
        )
    ]


def run_all(gpus: str, honest_jobs: int, say: Callable[[str], None]) -> list[dict]:
    rows: list[dict] = []
    parts: list[tuple[str, Callable[[Path], list[dict]]]] = [
        ("per-job limits", lambda t: limits_beside_honest(t, gpus, honest_jobs)),
        *([("GPU memory share", lambda t: gpu_share(t, gpus))] if gpus != "none" else []),
        ("clock jumps", clock_jumps),
        ("crash leftovers", lambda t: crash_leftovers(t, gpus)),
        ("tenants", tenants),
        ("full disk", full_disk),
        ("body of many values", many_values),
        ("TLS", tls),
    ]
    for name, part in parts:
        say(f"tenants: {name}")
        with tempfile.TemporaryDirectory() as tmp:
            try:
                rows += part(Path(tmp))
            except Exception as exc:  # noqa: BLE001 - a row that could not run says why
                rows.append(row(name, "-", "-", f"failed: {type(exc).__name__}: {exc}", False))
    return rows
