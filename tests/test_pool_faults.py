"""The worker pool under faults (docs/scale.md): a real `redis-server` with its append-only file,
a `kgym-gym serve --redis` front door and `kgym-gym worker` processes standing in for hosts, all
in CPU mode. Whatever is killed, paused or restarted, every job ends in a result or a clear
error, none is lost and none is counted twice."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from service_util import Gym, call, gym_exe

from conftest import solution_source
from kgym.local_pool import PoolWorker, RedisServer


def pool_missing() -> str:
    """Why the pool cannot be tested here ("" when it can)."""
    if shutil.which("redis-server") is None:
        return "redis-server is not installed (apt-get install redis-server)"
    # A URL this build refuses at once: a build without hiredis says so instead.
    probe = subprocess.run(
        [gym_exe(), "worker", "--redis", "not-a-url"], capture_output=True, text=True, timeout=60
    )
    if "without Redis support" in probe.stderr:
        return "this kgym-gym was built without hiredis (no worker pool)"
    return ""


MISSING = pool_missing()
pytestmark = pytest.mark.skipif(bool(MISSING), reason=MISSING)

LEASE_S = 2.0
RELU = solution_source("01_relu")


def slow(seconds_per_call: float, tag: int) -> str:
    """The reference ReLU with a busy loop in forward; `tag` makes each candidate's text, and
    so its cache key, its own. The judge calls it about 50 times on a CPU: 0.1 s a call is a
    job of about 7 s (0.4 s made jobs of 25 s, and a worker paused past its lease waited on
    the other's minute-long job)."""
    loops = int(seconds_per_call * 25_000_000)
    return RELU.replace(
        "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n",
        "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
        f"        for _ in range({loops} + {tag}):\n            pass\n",
        1,
    )


def request(source: str) -> dict[str, Any]:
    return {"task": {"id": "01_relu"}, "candidate": {"source": source}, "options": {"trials": 1}}


@dataclass
class Pool:
    root: Path
    redis: RedisServer
    gym: Gym
    workers: list[PoolWorker] = field(default_factory=list)

    def add_worker(self, *args: str) -> PoolWorker:
        w = PoolWorker(
            self.root / f"worker{len(self.workers)}",
            self.redis.url,
            pool="faults",
            args=["--cpu-workers", "1", "--lease", str(LEASE_S), "--poll", "0.2", *args],
        )
        self.workers.append(w.start())
        return w

    def submit(self, sources: list[str]) -> list[str]:
        status, out, _ = call(
            self.gym.url + "/v1/evaluate:batch", "POST", {"requests": [request(s) for s in sources]}
        )
        assert status == 202, out
        return [j["id"] for j in out["jobs"]]

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [e for w in self.workers for e in w.events() if e.get("event") == kind]

    def running_on(self, job: str, timeout: float = 60.0) -> PoolWorker:
        """The worker that started `job` last."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for w in self.workers:
                if any(e.get("event") == "started" and e["job"] == job for e in w.events()):
                    return w
            time.sleep(0.05)
        raise TimeoutError(f"no worker started {job}")

    def wait_all(self, ids: list[str], timeout: float = 150.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        jobs = []
        for job_id in ids:
            left = max(1.0, deadline - time.monotonic())
            status, job, _ = call(f"{self.gym.url}/v1/jobs/{job_id}?wait={left:.0f}")
            assert status == 200, job
            jobs.append(job)
        return jobs

    def assert_each_once(self, jobs: list[dict[str, Any]], metrics: bool = True) -> None:
        """Every job finished, with a result or a clear error, and counted once: one recorded
        answer in the pool, one finished job in the front door's metrics (which a restarted
        front door counts from its start)."""
        for job in jobs:
            assert job["status"] in ("done", "failed"), job
            if job["status"] == "done":
                assert job["result"]["status"] == "ok", job["result"]
            else:
                assert job["error"]["code"] and job["error"]["message"], job
        # A worker logs its answer just after Redis took it, and the front door may have
        # recorded and served it in between: the logs are given a moment to catch up.
        deadline = time.monotonic() + 10
        while True:
            recorded = Counter(
                e["job"] for e in self.events("answered") if e["answer"] == "recorded"
            )
            if all(recorded[j["id"]] for j in jobs) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert {j["id"]: recorded[j["id"]] for j in jobs} == {j["id"]: 1 for j in jobs}
        if not metrics:
            return
        _, text, _ = call(self.gym.url + "/metrics")
        finished = sum(
            float(m.group(1))
            for m in re.finditer(r"^kgym_jobs_finished_total\{[^}]*\} (\S+)$", text, re.M)
        )
        assert finished == len(jobs), text


@pytest.fixture()
def pool(tmp_path: Path) -> Iterator[Pool]:
    redis = RedisServer(tmp_path / "redis").start()
    gym = Gym(
        tmp_path / "frontdoor",
        ["--redis", redis.url, "--pool", "faults", "--pool-device", "cpu", "--no-cache"],
    )
    p = Pool(tmp_path, redis, gym)
    try:
        gym.start()
        yield p
    finally:
        for w in p.workers:
            w.stop(signal.SIGKILL)
        gym.stop()
        redis.stop()


def test_kill_9_of_workers_mid_batch(pool: Pool) -> None:
    hosts = [pool.add_worker(), pool.add_worker()]
    ids = pool.submit([slow(0.1, i) for i in range(4)])
    victim = pool.running_on(ids[0])
    time.sleep(0.5)
    os.kill(victim.pid, signal.SIGKILL)  # its fork server and job child die with it
    survivor = pool.add_worker()  # a host joins while the dead one's job waits out its lease
    time.sleep(1.0)
    [other] = [w for w in hosts if w is not victim]
    other.stop(signal.SIGKILL)  # the second original host dies too, mid-job
    killed = {e["job"] for w in hosts for e in w.events() if e.get("event") == "started"}
    unanswered = killed - {e["job"] for w in hosts for e in w.events() if e.get("answer")}
    assert unanswered, "no job was running on the killed hosts"
    jobs = pool.wait_all(ids)
    pool.assert_each_once(jobs)
    assert all(j["status"] == "done" for j in jobs)
    for job in jobs:
        if job["id"] in unanswered:
            assert job["attempts"] >= 2, job  # started on a dead host, then again
    taken_over = {e["job"] for e in survivor.events() if e.get("event") == "started"}
    assert unanswered <= taken_over


def test_a_worker_paused_past_its_lease_does_not_count_twice(pool: Pool) -> None:
    pool.add_worker()
    pool.add_worker()
    [job_id] = pool.submit([slow(0.2, 0)])
    paused = pool.running_on(job_id)
    os.kill(paused.pid, signal.SIGSTOP)
    try:
        [job] = pool.wait_all([job_id], timeout=90)  # another worker took it after the lease
        assert job["status"] == "done" and job["attempts"] == 2, job
    finally:
        os.kill(paused.pid, signal.SIGCONT)
    # Back from the pause: its heartbeat finds the lease gone (it stops the job), or its late
    # answer is refused. Either way it says so, and the job keeps its one answer.
    deadline = time.monotonic() + 30
    late: list[dict[str, Any]] = []
    while not late and time.monotonic() < deadline:
        late = [
            e
            for e in paused.events()
            if e.get("job") == job_id
            and (e.get("event") == "lease_lost" or e.get("answer") in ("lease_lost", "duplicate"))
        ]
        time.sleep(0.1)
    assert late, paused.events()
    time.sleep(1.0)
    again = call(f"{pool.gym.url}/v1/jobs/{job_id}")[1]
    assert again["finished_at"] == job["finished_at"] and again["result"] == job["result"]
    pool.assert_each_once([again])


def test_redis_killed_and_restarted_from_its_append_only_file(pool: Pool) -> None:
    pool.add_worker()
    pool.add_worker()
    ids = pool.submit([slow(0.1, i) for i in range(4)])
    pool.running_on(ids[0])
    time.sleep(0.5)
    pool.redis.stop(signal.SIGKILL)  # no chance to save: the AOF (fsync always) is all there is
    time.sleep(1.5)  # the front door and the workers find it gone and keep retrying
    pool.redis.start()
    jobs = pool.wait_all(ids)
    pool.assert_each_once(jobs)
    assert all(j["status"] == "done" for j in jobs)
    status, after, _ = call(pool.gym.url + "/v1/evaluate?wait=90", "POST", request(RELU))
    assert status == 200 and after["result"]["status"] == "ok", after


def test_front_door_killed_and_restarted_loses_nothing(pool: Pool) -> None:
    pool.add_worker()
    pool.add_worker()
    ids = pool.submit([slow(0.1, i) for i in range(4)])
    pool.running_on(ids[0])
    pool.gym.stop(signal.SIGKILL)
    time.sleep(2.0)  # the workers go on; their answers wait in Redis
    pool.gym.start()
    jobs = pool.wait_all(ids)
    pool.assert_each_once(jobs, metrics=False)
    assert all(j["status"] == "done" and j["attempts"] == 1 for j in jobs), jobs
    health = call(pool.gym.url + "/healthz")[1]
    assert health["workers"] == 2 and health["pool"]["reachable"] is True, health


def test_a_job_whose_workers_keep_dying_fails_clearly(pool: Pool) -> None:
    first = pool.add_worker("--max-deliveries", "1")
    [job_id] = pool.submit([slow(0.2, 0)])
    pool.running_on(job_id)
    first.stop(signal.SIGKILL)
    pool.add_worker("--max-deliveries", "1")
    [job] = pool.wait_all([job_id], timeout=60)
    assert job["status"] == "failed" and job["error"]["code"] == "worker_lost", job
    assert "handed to workers" in job["error"]["message"]
    pool.assert_each_once([job])
