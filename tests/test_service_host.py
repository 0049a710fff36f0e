"""The host against its tenants: per-job limits from the kernel (memory, processes, the job
directory's size), what a crash leaves on disk, and health that tells the truth about the disk
and the database (docs/threat-model.md, "The host's side")."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from service_util import Gym, call, wait_for_status

from conftest import ROOT, solution_source

RELU = solution_source("01_relu")
RELU_TASK = (ROOT / "tasks" / "01_relu.py").read_text()
MIB = 1 << 20

# The limits of the test service: small, so that the hostile jobs cross them in seconds.
MEMORY_MIB, PIDS, DISK_MIB = 768, 192, 64
LIMITS = ["--memory-limit-mib", str(MEMORY_MIB), "--pids-limit", str(PIDS)]
LIMITS += ["--disk-limit-mib", str(DISK_MIB)]

# Task code runs in the judge: each of these is a hostile task's module-level code.
MEMORY_HOG = f"""
_hog = bytearray({3 * MEMORY_MIB} * {MIB})  # three times the limit, every page touched
"""
DISK_HOG = f"""
import os
for _i in range({2 * DISK_MIB // 8}):  # twice the limit, in 8 MiB files
    with open(f"fill-{{_i}}", "wb") as _f:
        _f.write(b"x" * (8 * {MIB}))
"""
FORK_BOMB = f"""
import os, time
_children = []
for _i in range({2 * PIDS}):
    _pid = os.fork()
    if _pid == 0:
        time.sleep(60)
        os._exit(0)
    _children.append(_pid)
"""


def root_with_cgroups() -> bool:
    if os.geteuid() != 0:
        return False
    text = Path("/proc/self/mountinfo").read_text()
    return " - cgroup " in text or " - cgroup2 " in text


needs_root = pytest.mark.skipif(
    not root_with_cgroups(), reason="per-job limits need root and a cgroup hierarchy"
)


def job(task_source: str, candidate: str = RELU, **options: object) -> dict:
    options.setdefault("trials", 1)
    return {
        "task": {"id": "host", "source": task_source},
        "candidate": {"source": candidate},
        "options": options,
    }


@pytest.fixture()
def gym(tmp_path: Path) -> Iterator[Gym]:
    g = Gym(tmp_path, ["--cpu-workers", "4", "--no-cache", *LIMITS]).start()
    yield g
    g.stop()


@needs_root
def test_jobs_over_their_limits_end_resource_limit_beside_honest_ones(gym: Gym) -> None:
    hostile = {
        "memory": job(RELU_TASK + MEMORY_HOG),
        "disk": job(RELU_TASK + DISK_HOG),
        "pids": job(RELU_TASK + FORK_BOMB),
    }
    honest = job(RELU_TASK)
    requests = [*hostile.values(), honest]
    status, out, _ = call(gym.url + "/v1/evaluate:batch?wait=300", "POST", {"requests": requests})
    assert status == 200, out
    jobs = out["jobs"]
    for (kind, _), answer in zip(hostile.items(), jobs, strict=False):
        result = answer["result"]
        assert result["status"] == "runtime_error", (kind, result["status"], result["error"])
        assert result["resource_limit"]["kind"] == kind, (kind, result["resource_limit"])
        assert result["error"]["type"] == "ResourceLimit"
        assert result["sandbox"]["resources"]["limited"] is True
    ok = jobs[-1]["result"]
    assert ok["status"] == "ok", ok["error"]
    assert ok["resource_limit"] is None
    assert ok["sandbox"]["resources"]["disk_limited"] is True
    assert ok["sandbox"]["resources"]["memory_peak_mib"] < MEMORY_MIB
    # Nothing of them is left once their slots are free: no job directory.
    deadline = time.monotonic() + 30
    while list((gym.state_dir / "jobs").iterdir()):
        assert time.monotonic() < deadline, list((gym.state_dir / "jobs").iterdir())
        time.sleep(0.1)
    assert call(gym.url + "/healthz")[0] == 200


def test_the_result_says_which_limits_a_job_had(tmp_path: Path) -> None:
    with Gym(tmp_path, ["--cpu-workers", "1"]) as g:
        status, out, _ = call(g.url + "/v1/evaluate?wait=120", "POST", job(RELU_TASK))
        assert status == 200, out
        resources = out["result"]["sandbox"]["resources"]
    assert resources["memory_limit_mib"] == 32768 and resources["pids_limit"] == 2048
    assert resources["cgroup"] in ("v1", "v2", "none")
    if resources["cgroup"] == "none":
        assert resources["limited"] is False and resources["note"]  # says why


@needs_root
def test_a_killed_service_leaves_no_job_folder_after_the_next_start(tmp_path: Path) -> None:
    slow = job(RELU_TASK + "\nimport time\ntime.sleep(60)\n")
    g = Gym(tmp_path, ["--cpu-workers", "1"]).start()
    jobs = tmp_path / "jobs"
    try:
        status, queued, _ = call(g.url + "/v1/evaluate", "POST", slow)
        assert status == 202
        wait_for_status(g.url, queued["id"], "running")
        assert g.proc is not None
        service_root = Path(f"/proc/{g.proc.pid}/root")
        # The folder is made before its tmpfs is mounted and filled: wait for the file itself.
        # Its files are on its tmpfs, mounted where only the service and its children see it.
        deadline = time.monotonic() + 30
        while not any(
            (service_root / p.relative_to("/") / "candidate.py").exists()
            for p in jobs.iterdir()
            if p.name.startswith("kgym-job-")
        ):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        (folder,) = [p for p in jobs.iterdir() if p.name.startswith("kgym-job-") and p.is_dir()]
        assert str(folder) not in Path("/proc/self/mountinfo").read_text()
    finally:
        g.stop(signal.SIGKILL)
    assert folder.exists()  # what the crash left: the folder, its mount gone with the service
    assert not list(folder.iterdir())
    with Gym(tmp_path, ["--cpu-workers", "1"]) as again:
        assert not folder.exists()
        assert "removed what jobs of an earlier run left: 1 job directories" in again.log()
        # The job itself runs again, from the store, with a folder of its own.
        call(f"{again.url}/v1/jobs/{queued['id']}", "DELETE")


@needs_root
def test_a_check_killed_mid_job_leaves_nothing_after_the_next_check(tmp_path: Path) -> None:
    """`kgym check` shares the temporary directory and has no mount namespace of its own: a
    kill -9 mid-job leaves its folder and tmpfs, which the next check removes (the folder's
    lock is free once its supervisor is gone)."""
    task = tmp_path / "slow.py"
    task.write_text(RELU_TASK + "\nimport time\ntime.sleep(60)\n")
    candidate = tmp_path / "relu.py"
    candidate.write_text(RELU)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    kgym = [sys.executable, "-m", "kgym.cli", "check"]
    killed = subprocess.Popen([*kgym, str(task), str(candidate)], env=env)
    try:
        deadline = time.monotonic() + 60
        while not any((d / "candidate.py").exists() for d in scratch.glob("kgym-job-*")):
            assert time.monotonic() < deadline and killed.poll() is None
            time.sleep(0.05)
    finally:
        killed.kill()
        killed.wait()
    (folder,) = [d for d in scratch.glob("kgym-job-*") if d.is_dir()]
    assert str(folder) in Path("/proc/self/mountinfo").read_text()  # its tmpfs, on the host
    time.sleep(2.5)  # a lock younger than 2 s may belong to a directory being made
    done = subprocess.run(
        [*kgym, "01_relu", str(candidate), "--json"], env=env, capture_output=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["status"] == "ok"
    assert not list(scratch.iterdir())
    assert str(folder) not in Path("/proc/self/mountinfo").read_text()


@needs_root
def test_health_says_degraded_on_a_full_disk_and_counts_database_errors(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=96m", "tmpfs", str(state)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.decode()}")
    try:
        with Gym(state, ["--cpu-workers", "1"]) as g:
            assert call(g.url + "/healthz")[0] == 200
            filler = state / "filler"
            subprocess.run(
                ["dd", "if=/dev/zero", f"of={filler}", "bs=1M", "count=200"], capture_output=True
            )
            settled = {"task": {"id": "01_relu"}, "candidate": {"source": "class ModelNew(:\n"}}
            deadline = time.monotonic() + 20
            statuses = set()
            while time.monotonic() < deadline:
                statuses.add(call(g.url + "/v1/evaluate", "POST", settled)[0])
                status, health, _ = call(g.url + "/healthz")
                if status == 503:
                    break
                time.sleep(0.5)
            assert status == 503 and health["status"] == "degraded", health
            assert any(p.startswith("disk") for p in health["problems"]), health
            assert 503 in statuses  # the submission that could not be stored, not a 500
            metrics = call(g.url + "/metrics")[1]
            errors = [
                line for line in metrics.splitlines() if line.startswith("kgym_db_errors_total{op=")
            ]
            assert errors and any(float(line.split()[-1]) > 0 for line in errors), metrics
            filler.unlink()
            deadline = time.monotonic() + 20
            while call(g.url + "/healthz")[0] != 200:
                assert time.monotonic() < deadline, call(g.url + "/healthz")[1]
                time.sleep(0.5)
    finally:
        subprocess.run(["umount", "-l", str(state)], capture_output=True)


def test_a_batch_body_of_many_values_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    with Gym(tmp_path, ["--cpu-workers", "1"]) as g:
        assert g.proc is not None
        call(g.url + "/healthz")
        before = hwm_kib(g.proc.pid)
        values = b'{"requests": [' + b",".join([b"{}"] * 1_300_000) + b"]}"
        assert len(values) < 4 << 20
        status, err, _ = call(g.url + "/v1/evaluate:batch", "POST", raw=values)
        assert status == 413 and "JSON values" in err["error"]["message"], err
        grown_mib = (hwm_kib(g.proc.pid) - before) / 1024
    # The body's text (about 4 MiB, twice: the parser's buffer and the request), not a million
    # parsed objects (about 150 MiB).
    assert grown_mib < 40, grown_mib


def hwm_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def test_clients_file_errors_are_said_at_start(tmp_path: Path) -> None:
    from service_util import gym_exe

    bad = tmp_path / "clients.json"
    bad.write_text(json.dumps({"clients": [{"name": "a b", "token": "x" * 20, "scopes": []}]}))
    out = subprocess.run(
        [gym_exe(), "serve", "--clients-file", str(bad), "--state-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "clients[0].name" in out.stderr, out.stderr
