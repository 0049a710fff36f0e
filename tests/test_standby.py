"""A slot's next job handed to a child started ahead (check/standby_launcher.hpp), through the
service: the same verdicts as a child started for the job, the set-up reported apart, other
jobs in children of their own, and nothing of a standby left once the service stops."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from service_util import Gym, call, descendants

from conftest import DEVICE, solution_source

RELU = solution_source("01_relu")
WRONG = RELU.replace("tl.where(x > 0.0, x, 0.0)", "tl.where(x > 0.0, x, 1.0)")


def one_slot(tmp: Path, standby: str = "on") -> Gym:
    """A gym of one slot, on the device the suite runs on (KGYM_TEST_DEVICE)."""
    env = {"KGYM_STANDBY": standby} if standby else {}
    if DEVICE == "cuda":
        return Gym(tmp, ["--workers-per-gpu", "1", "--no-cache"], gpus="0", env=env)
    return Gym(tmp, ["--cpu-workers", "1", "--no-cache"], env=env)


def evaluate(gym: Gym, source: str, seed: int, **options: Any) -> dict[str, Any]:
    body = {
        "task": {"id": "01_relu"},
        "candidate": {"source": source},
        "options": {"trials": 2, "seed": seed, **options},
    }
    status, job, _ = call(gym.url + "/v1/evaluate?wait=120", "POST", body)
    assert status == 200 and job["status"] == "done", job
    return job["result"]


def job_children(gym: Gym) -> list[int]:
    """The job children of the gym's fork servers (a standby among them)."""
    assert gym.proc is not None
    procs = descendants(gym.proc.pid)
    # A job child keeps its server's command line: the servers are those below no other.
    forked = [p for p, cmd in procs if "kgym.harness.forkserver" in cmd]
    return sorted({pid for p in forked for pid, _ in descendants(p)})


def alive(pid: int) -> bool:
    """Whether `pid` is a process that has not ended (a zombie has)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def uptime() -> float:
    return float(Path("/proc/uptime").read_text().split()[0])


def started_at(pid: int) -> float:
    """When `pid` started, in seconds since boot (as /proc/uptime counts); inf once gone."""
    try:
        ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return float("inf")
    return ticks / os.sysconf("SC_CLK_TCK")


def wait_for_standby(gym: Gym, answered: float) -> list[int]:
    """The processes of the slot's standby: every process below the fork server, once all of
    them started after the last answer came (`answered`, /proc/uptime's seconds then). The last
    job's child may still be ending after its answer (answers come at the judge's report); the
    standby is forked once it has ended."""
    for _ in range(300):
        children = job_children(gym)
        if children and all(started_at(p) >= answered for p in children):
            return children
        time.sleep(0.1)
    raise AssertionError("no standby under the fork server")


def test_the_next_job_runs_on_the_standby_with_the_same_verdicts(tmp_path: Path) -> None:
    with one_slot(tmp_path) as gym:
        first = evaluate(gym, RELU, seed=1)
        answered = uptime()
        assert first["sandbox"]["standby"] == {
            "used": False,
            "note": "no standby was ready (the slot's first job, or the last one ended it)",
        }
        wait_for_standby(gym, answered)
        results = {name: evaluate(gym, src, seed=2) for name, src in [("ok", RELU), ("w", WRONG)]}
        assert [r["status"] for r in results.values()] == ["ok", "incorrect"]
        for r in results.values():
            assert r["sandbox"]["standby"] == {"used": True, "note": None}
            # The set-up done ahead is the harness' own stretch, not the job's load.
            assert "harness_standby_load" in r["durations_ms"]
            assert "harness_standby_wait" in r["durations_ms"]
            for layer in ("network_isolated", "private_view", "syscalls_filtered"):
                assert r["sandbox"][layer] == first["sandbox"][layer], layer
            assert r["judge"]["unprivileged"] == first["judge"]["unprivileged"]
        # Another profile choice is other set-up: that job gets a child of its own.
        other = evaluate(gym, RELU, seed=4, profile=False)
        answered = uptime()
        assert other["status"] == "ok"
        assert other["sandbox"]["standby"] == {"used": False, "note": "the job's profile differs"}
        standby = wait_for_standby(gym, answered)
        assert gym.proc is not None
        gym.stop()
    time.sleep(0.2)
    for pid in standby:  # the service's stop ended the waiting standby and its runners
        assert not alive(pid), pid


def test_a_killed_standby_costs_its_job_nothing(tmp_path: Path) -> None:
    with one_slot(tmp_path) as gym:
        evaluate(gym, RELU, seed=1)
        for pid in wait_for_standby(gym, uptime()):
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.3)
        r = evaluate(gym, RELU, seed=2)
        assert r["status"] == "ok"
        assert r["sandbox"]["standby"] == {
            "used": False,
            "note": "the standby had ended before the job came",
        }
        assert evaluate(gym, RELU, seed=3)["sandbox"]["standby"]["used"] is True


@pytest.mark.parametrize("switch", ["", "off"])
def test_standbys_are_the_operators_choice(
    tmp_path: Path, switch: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Off unless KGYM_STANDBY=on: on a GPU they lengthened a batch's timing windows."""
    monkeypatch.delenv("KGYM_STANDBY", raising=False)
    with one_slot(tmp_path, standby=switch) as gym:
        evaluate(gym, RELU, seed=1)
        assert evaluate(gym, RELU, seed=2)["sandbox"]["standby"] is None
