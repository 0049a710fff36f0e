"""`kgym-gym gpu-keeper`, the process that holds a CUDA context on each GPU of a service
(cpp/kgym/service/gpu_keeper.hpp): what it says where it can hold nothing (here, on the CI's
CPU), and on a GPU (KGYM_TEST_DEVICE=cuda) that it holds one until its stdin closes and that
the service reports it in /healthz."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from service_util import Gym, call, descendants, gym_exe

from conftest import DEVICE

ON_GPU = DEVICE == "cuda"


def _keeper(parent: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [gym_exe(), "gpu-keeper", "--parent", str(parent)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def test_the_keeper_says_what_it_holds_and_ends_when_its_stdin_closes() -> None:
    keeper = _keeper(os.getpid())
    assert keeper.stdout is not None and keeper.stdin is not None
    line = keeper.stdout.readline().strip()
    if ON_GPU:
        assert line == "holding"
        assert keeper.poll() is None  # it holds until told otherwise
    else:
        # Nothing to hold: it says why (no driver on a CPU machine) and does not linger.
        assert line and line != "holding"
    keeper.stdin.close()
    assert keeper.wait(timeout=20) == 0


def test_a_keeper_whose_parent_is_not_the_one_named_holds_nothing() -> None:
    """A keeper whose service is gone before it starts (it was reparented) leaves at once."""
    keeper = _keeper(1 if os.getpid() != 1 else 2)
    out, _ = keeper.communicate(timeout=20)
    assert keeper.returncode == 0
    assert out == ""


@pytest.mark.skipif(not ON_GPU, reason="a keeper holds a context on a GPU only")
def test_a_gpu_service_runs_one_keeper_per_gpu_and_reports_it(tmp_path: Path) -> None:
    gym = Gym(tmp_path, ["--workers-per-gpu", "2"], gpus="0")
    gym.start()
    assert gym.proc is not None
    try:
        deadline = time.monotonic() + 30
        health = call(gym.url + "/healthz")[1]
        while health.get("gpu_keepers", {}).get("gpu0") == "starting":
            assert time.monotonic() < deadline
            time.sleep(0.1)
            health = call(gym.url + "/healthz")[1]
        keepers = [pid for pid, cmd in descendants(gym.proc.pid) if " gpu-keeper " in f"{cmd} "]
        assert health["gpu_keepers"] == {"gpu0": "holding"}
        assert len(keepers) == 1  # one per GPU, shared by its two slots
    finally:
        gym.stop()
    for pid in keepers:
        assert not Path(f"/proc/{pid}").exists()  # stopped and reaped with the service
