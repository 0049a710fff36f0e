"""Retention under a clock that jumps, with Debian's libfaketime (the machine's clock is never
moved): results younger than the retention bound survive a jump of 8 days either way, at start
and while the service runs (docs/service-api.md, Storage)."""

from __future__ import annotations

from pathlib import Path

import pytest
from service_util import Gym, call

LIBFAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")
SETTLED = {"task": {"id": "01_relu"}, "candidate": {"source": "class ModelNew(:\n"}}

pytestmark = pytest.mark.skipif(
    not LIBFAKETIME.exists(), reason="needs Debian's libfaketime (apt-get install libfaketime)"
)


def faked(offset_file: Path) -> dict[str, str]:
    """The service's clock from `offset_file` (re-read at every call); the boot clock real."""
    return {
        "LD_PRELOAD": str(LIBFAKETIME),
        "FAKETIME_TIMESTAMP_FILE": str(offset_file),
        "FAKETIME_NO_CACHE": "1",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
    }


def finished_jobs(g: Gym, n: int) -> list[str]:
    """`n` finished jobs at once (a candidate settled at submission needs no worker)."""
    status, out, _ = call(g.url + "/v1/evaluate:batch", "POST", {"requests": [SETTLED] * n})
    assert status == 200, out
    return [j["id"] for j in out["jobs"]]


def retain(g: Gym, force: bool = False) -> dict:
    status, report, _ = call(g.url + f"/v1/admin/retention?force={str(force).lower()}", "POST")
    assert status == 200, report
    return report


def test_a_clock_jump_deletes_no_young_result(tmp_path: Path) -> None:
    clock = tmp_path / "clock"
    clock.write_text("+0\n")
    args = ["--cpu-workers", "1", "--retain-days", "7"]
    with Gym(tmp_path, args, env=faked(clock)) as g:
        ids = finished_jobs(g, 200)
        # While it runs: the clock jumps 8 days ahead, then 8 days back.
        for jump in ("+8d", "-8d"):
            clock.write_text(f"{jump}\n")
            report = retain(g)
            assert report["deleted_by_age"] == 0 and report["finished_before"] == 200, report
        later = finished_jobs(g, 5)  # stamped 8 days back
    # At start: the clock has jumped before the service starts (and stays there).
    for jump in ("+8d", "-8d"):
        clock.write_text(f"{jump}\n")
        with Gym(tmp_path, args, env=faked(clock)) as g:
            report = retain(g)
            assert report["deleted_by_age"] == 0 and report["older_than_retention"] == 0, report
            for job_id in [*ids[:3], *ids[-3:], *later]:
                assert call(f"{g.url}/v1/jobs/{job_id}")[0] == 200


def test_retention_by_count_keeps_the_latest_arrivals(tmp_path: Path) -> None:
    args = ["--cpu-workers", "1", "--retain-jobs", "50"]
    with Gym(tmp_path, args) as g:
        ids = finished_jobs(g, 120)
        report = retain(g)
        assert report["deleted_by_count"] == 70, report
        assert call(f"{g.url}/v1/jobs/{ids[69]}")[0] == 404
        assert call(f"{g.url}/v1/jobs/{ids[70]}")[0] == 200
        health = call(g.url + "/healthz")[1]
        assert health["retention"]["deleted_by_count"] == 70
