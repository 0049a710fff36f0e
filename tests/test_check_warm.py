"""``kgym.check.check`` forks its harness child from a warm fork server (the service's), kept
for the next check: one per interpreter and job environment, one per check running at once,
and a crashed candidate ends only its own child."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from test_containment import with_forward_prefix

from conftest import run, solution_source
from kgym import check as check_module


def _servers() -> list[int]:
    return sorted(s.server_pid for idle in check_module._IDLE.values() for s in idle)


def test_checks_are_forked_from_one_warm_server_a_crash_does_not_end() -> None:
    honest = solution_source("01_relu")
    assert run("01_relu", honest, trials=1)["status"] == "ok"
    before = _servers()
    assert before and all(pid > 0 for pid in before)
    crash = with_forward_prefix("os._exit(0)", "import os")
    assert run("01_relu", crash, trials=1, screen=False)["status"] == "crashed"
    result = run("01_relu", honest, trials=1)
    assert result["status"] == "ok", result.get("error")
    assert _servers() == before  # the same server, alive, forked all three


def test_checks_at_once_take_servers_of_their_own() -> None:
    honest = solution_source("01_relu")
    statuses: list[str] = []
    threads = [
        threading.Thread(target=lambda: statuses.append(run("01_relu", honest, trials=1)["status"]))
        for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses == ["ok", "ok"]
    assert len(_servers()) >= 2


@pytest.mark.skipif(Path("/dev/nvidiactl").exists(), reason="auto takes the GPU here")
def test_a_server_for_an_auto_job_imports_under_the_device_it_will_take() -> None:
    """Triton reads TRITON_INTERPRET when it is imported: a server serving ``auto`` jobs on a
    machine without a GPU imports it as a CPU job's harness would (a server that did not
    compiled the candidates' kernels, and a host call of a jit function failed there)."""
    import json

    from kgym import _core
    from kgym.check import CheckOptions
    from kgym.tasks import find_task

    job = CheckOptions(device="auto").job(find_task("01_relu"), "")
    env = dict(_core.job_environment(json.dumps(job)))
    assert env.get("TRITON_INTERPRET") == "1"
