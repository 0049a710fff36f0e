"""The service answers at the harness' report (check::ResultCallback): the judge sends its report,
closes its channel, and only then ends its runners and exits; the answer does not wait for that.
Through `kgym-gym serve`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from service_util import Gym, call

from conftest import DEVICE, solution_source

RELU = solution_source("01_relu")
WRONG = RELU.replace("tl.where(x > 0.0, x, 0.0)", "tl.where(x > 0.0, x, 1.0)")


def one_slot(tmp: Path) -> Gym:
    if DEVICE == "cuda":
        return Gym(tmp, ["--workers-per-gpu", "1", "--no-cache"], gpus="0")
    return Gym(tmp, ["--cpu-workers", "1", "--no-cache"])


def evaluate(gym: Gym, source: str, seed: int) -> dict[str, Any]:
    body = {
        "task": {"id": "01_relu"},
        "candidate": {"source": source},
        "options": {"trials": 2, "seed": seed},
    }
    status, job, _ = call(gym.url + "/v1/evaluate?wait=120", "POST", body)
    assert status == 200 and job["status"] == "done", job
    # What the store kept is what was answered.
    status, stored, _ = call(f"{gym.url}/v1/jobs/{job['id']}")
    assert status == 200 and stored["result"] == job["result"]
    return job["result"]


def test_verdicts_are_answered_at_the_report(tmp_path: Path) -> None:
    with one_slot(tmp_path) as gym:
        results = [evaluate(gym, source, seed) for seed, source in enumerate([RELU, WRONG, RELU])]
        status, health, _ = call(gym.url + "/healthz")
        # The slot's last job, answered, is ending or has ended; it ends soon either way.
        for _ in range(100):
            if call(gym.url + "/healthz")[1]["ending"] == 0:
                break
            time.sleep(0.1)
        else:
            raise AssertionError("the last job's child did not end")
        metrics = call(gym.url + "/metrics")[1]
        assert "kgym_jobs_ending 0" in str(metrics), metrics  # the same count, for Prometheus
    assert [r["status"] for r in results] == ["ok", "incorrect", "ok"], results
    for r in results:
        sandbox = r["sandbox"]
        assert sandbox["answered_before_exit"] is True, sandbox
        assert sandbox["exit_code"] is None and sandbox["signal"] is None
        assert sandbox["timed_out"] is False
        assert r["durations_ms"]["total"] > 0
    # Running counts jobs not answered; `ending`, answered jobs whose slot is still ending them.
    assert status == 200 and health["running"] == 0 and health["ending"] in (0, 1)
