"""The judge's watch on the candidate's GPU memory (harness/gpu_memory.py), with the driver's
readings and the process tree made up: which processes count as the candidate's, the limit,
the kill on a breach, and a driver that cannot tell."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from conftest import DEVICE, run, solution_source
from kgym.harness.gpu_memory import (
    MIB,
    MemoryWatch,
    descends_from,
    killer,
    parent_of,
    share_bytes,
)
from kgym.harness.judge.gpu_watch import over_share

JUDGE, REFERENCE, MIDDLE, RUNNER, HELPER, STRANGER = 100, 101, 102, 103, 104, 999
# The candidate's runner and the helper it started descend from the intermediate; the
# stranger (another user's process on the GPU) from nothing of the job's.
PARENTS = {REFERENCE: JUDGE, MIDDLE: JUDGE, RUNNER: 105, 105: MIDDLE, HELPER: RUNNER}


def watch(readings: list[dict[int, int] | None], by_uid: bool = False, **kw: object) -> tuple:
    killed: list[int] = []
    feed = iter(readings)
    w = MemoryWatch(
        read=lambda: next(feed),
        judge_pid=JUDGE,
        reference_pid=REFERENCE,
        candidate_root=MIDDLE,
        by_uid=by_uid,
        slack_bytes=4096 * MIB,
        on_breach=lambda: killed.append(MIDDLE),
        parent=PARENTS.get,
        is_mine=lambda pid: pid != STRANGER,
        **kw,  # type: ignore[arg-type]
    )
    return w, killed


def test_the_candidates_tree_counts_and_nothing_else() -> None:
    w, killed = watch(
        [
            {
                JUDGE: 9000 * MIB,
                REFERENCE: 600 * MIB,
                RUNNER: 600 * MIB,
                HELPER: 3000 * MIB,
                STRANGER: 50000 * MIB,
            }
        ]
    )
    assert w.sample() is None
    assert w.candidate_peak == 3600 * MIB  # the runner and its helper; not the judge's 9 GB
    assert w.reference_peak == 600 * MIB
    assert w.limit() == 600 * MIB + 4096 * MIB
    assert killed == []
    record = w.record()
    assert record["available"] and record["candidate_peak_mib"] == 3600.0
    assert record["attribution"] == "the candidate's process tree"


def test_a_hog_is_killed_and_named_with_its_figures() -> None:
    w, killed = watch(
        [{REFERENCE: 600 * MIB, RUNNER: 600 * MIB}, {REFERENCE: 600 * MIB, RUNNER: 125 << 30}]
    )
    assert w.sample() is None
    breach = w.sample()
    assert breach is not None and "128000 MiB" in breach and "4696 MiB" in breach
    assert killed == [MIDDLE]
    assert w.sample() == breach  # stays; the driver is not read again, nothing killed twice
    assert killed == [MIDDLE]
    assert w.record()["breach"] == breach


def test_the_job_over_its_share_is_a_resource_limit_not_a_hack() -> None:
    # Each within its own bound (the candidate's slack), together over the job's share.
    w, killed = watch(
        [
            {JUDGE: 2000 * MIB, REFERENCE: 600 * MIB, RUNNER: 600 * MIB},
            {JUDGE: 9000 * MIB, REFERENCE: 3000 * MIB, RUNNER: 3000 * MIB},
        ],
        share_bytes=12000 * MIB,
        phase=lambda: "correctness",
    )
    assert w.sample() is None and w.job_now == 3200 * MIB
    breach = w.sample()
    assert breach is not None and "15000 MiB" in breach and "12000 MiB" in breach
    assert w.share_breach == breach and w.breach is None  # not the candidate's hack
    assert w.share_breach_phase == "correctness"
    assert killed == [MIDDLE]
    record = w.record()
    assert record["job_peak_mib"] == 15000.0 and record["share_mib"] == 12000.0
    assert record["share_breach"] == breach


def test_the_judges_arenas_are_planned_within_the_share() -> None:
    reading = {JUDGE: 2000 * MIB, REFERENCE: 600 * MIB, RUNNER: 600 * MIB}
    w, _ = watch([reading, reading], share_bytes=8000 * MIB)  # each planning reads the driver
    # 4800 MiB left of the share, a quarter of it kept for the runners' own growth.
    assert w.within_share(100_000 * MIB, 141_000 * MIB) == (3600 * MIB, 8000 * MIB)
    assert w.within_share(1000 * MIB, 141_000 * MIB)[0] == 1000 * MIB  # the device's free
    unbounded, _ = watch([])
    assert unbounded.within_share(5 * MIB, 9 * MIB) == (5 * MIB, 9 * MIB)  # not even read


def test_the_share_is_the_operators_or_the_gpu_divided_by_its_jobs() -> None:
    assert share_bytes(4096, 4, 141_000 * MIB) == 4096 * MIB
    assert share_bytes(0, 4, 141_000 * MIB) == 35_250 * MIB
    assert share_bytes(0, 0, 1000 * MIB) == 1000 * MIB


def test_over_its_share_the_job_ends_with_a_resource_limit() -> None:
    w, _ = watch(
        [{JUDGE: 9000 * MIB, REFERENCE: 3000 * MIB, RUNNER: 3000 * MIB}],
        share_bytes=12000 * MIB,
        phase=lambda: "init",
    )
    assert over_share(w, "correctness") == (None, None)
    breach = w.sample()
    limit, error = over_share(w, "correctness")
    assert limit == {"kind": "gpu_memory", "limit_mib": 12000, "message": breach, "phase": "init"}
    assert error is not None and error["type"] == "ResourceLimit" and error["phase"] == "init"
    assert over_share(None, "init") == (None, None)


def test_without_a_share_the_job_is_not_bounded_as_a_whole() -> None:
    w, killed = watch([{JUDGE: 90000 * MIB, REFERENCE: 600 * MIB, RUNNER: 600 * MIB}])
    assert w.sample() is None and w.share_breach is None and killed == []
    assert w.record()["share_mib"] is None


def test_by_uid_a_process_outside_the_tree_still_counts() -> None:
    # A double-forked helper (or one /proc hides): not in the tree, but of the job's uid.
    orphan = 555
    reading = {REFERENCE: 600 * MIB, RUNNER: 600 * MIB, orphan: 8000 * MIB, STRANGER: 1 << 40}
    by_tree, _ = watch([reading])
    assert by_tree.sample() is None and by_tree.candidate_peak == 600 * MIB
    by_uid, killed = watch([reading], by_uid=True)
    assert by_uid.sample() is not None and killed == [MIDDLE]
    assert by_uid.candidate_peak == 8600 * MIB  # the stranger (another uid) is never counted


def test_the_reference_sets_the_limit_and_its_set_up_is_waited_for() -> None:
    # The candidate's set-up loads 20 GB of weights before the reference's has: the weights the
    # reference will load are allowed for from the first reading.
    weights = 20000 * MIB
    w, killed = watch(
        [{REFERENCE: 600 * MIB, RUNNER: 600 * MIB}, {REFERENCE: 600 * MIB, RUNNER: 21000 * MIB}],
        reference_setup_bytes=weights,
    )
    w.sample()
    assert w.sample() is None and killed == []
    assert w.limit() == 2 * (600 * MIB + weights)  # as much again as the reference, above slack


def test_the_other_sizes_model_is_allowed_beside_the_set_ups() -> None:
    # At the other sizes (about the task's own on a GPU) the candidate's runner builds a
    # second model of 3000 MiB of weights and keeps its set-up's: allowed, and no more.
    w, killed = watch([{REFERENCE: 5000 * MIB, RUNNER: 12500 * MIB}])
    w.other_model_bytes = 3000 * MIB
    assert w.sample() is None and killed == []
    assert w.limit() == 2 * 5000 * MIB + 3000 * MIB
    over, killed = watch([{REFERENCE: 5000 * MIB, RUNNER: 13500 * MIB}])
    over.other_model_bytes = 3000 * MIB
    assert over.sample() is not None and killed
    assert over.record()["other_model_mib"] == 3000.0


def test_a_driver_that_cannot_tell_leaves_the_watch_unavailable() -> None:
    blind, _ = watch([{4242: 600 * MIB}])  # pids of another PID namespace
    assert blind.sample() is None
    assert blind.record() == {
        "available": False,
        "reason": "the driver lists no process of the reference's runner (its pids are "
        "another PID namespace's)",
    }
    stopped, _ = watch([{REFERENCE: 1}, None, None, None])
    for _ in range(4):
        stopped.sample()
    assert stopped.record() == {
        "available": False,
        "reason": "the driver stopped reporting the processes' memory",
    }


def test_the_thread_samples_and_rests_inside_a_hold() -> None:
    calls: list[float] = []

    def read() -> dict[int, int]:
        calls.append(time.monotonic())
        return {REFERENCE: 600 * MIB, RUNNER: 600 * MIB}

    w = MemoryWatch(read, JUDGE, REFERENCE, MIDDLE, False, 4096 * MIB, lambda: None)
    w.start()
    time.sleep(0.3)
    with w.hold():
        resting = len(calls)
        time.sleep(0.3)
        assert len(calls) <= resting + 1  # at most a reading already under way
    time.sleep(0.2)
    w.stop()
    assert len(calls) >= resting + 2 and w.samples == len(calls)


def test_parent_and_descent_from_the_real_proc() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert parent_of(child.pid) == os.getpid()
        assert descends_from(child.pid, os.getpid())
        assert not descends_from(os.getpid(), child.pid)
    finally:
        child.kill()
        child.wait()
    assert parent_of(child.pid) is None  # gone


def test_an_honest_candidate_is_measured_within_its_limit() -> None:
    result = run("01_relu", solution_source("01_relu"))
    assert result["status"] == "ok", result.get("error")
    memory = result["judge"]["gpu_memory"]
    if DEVICE != "cuda":
        assert memory == {"available": False, "reason": "the job runs on the CPU"}
        return
    assert memory["available"], memory
    assert memory["breach"] is None and memory["samples"] >= 3
    assert 0 < memory["candidate_peak_mib"] <= memory["candidate_limit_mib"]
    assert memory["reference_peak_mib"] > 0


@pytest.mark.skipif(DEVICE != "cuda", reason="GPU memory is read from the driver")
def test_a_candidate_that_holds_gpu_memory_is_killed_and_rejected() -> None:
    hog = (
        solution_source("01_relu")
        + "\n_HELD = [torch.empty(1 << 30, dtype=torch.uint8, device='cuda') for _ in range(12)]\n"
    )
    result = run("01_relu", hog)
    assert result["status"] == "rejected", result
    assert "gpu-memory" in {f["rule"] for f in result["findings"]}
    memory = result["judge"]["gpu_memory"]
    assert memory["candidate_peak_mib"] > memory["candidate_limit_mib"]
    assert memory["breach"].startswith("the candidate's processes held")
    assert memory["killed"] is True  # the runner has the job's uid: the judge may kill it


def test_lent_arenas_are_the_judges_and_a_calls_working_memory_is_allowed_with_its_copy() -> None:
    lent = {"candidate": 6000 * MIB, "reference": 0}
    w, killed = watch(
        [
            {REFERENCE: 600 * MIB, RUNNER: 600 * MIB + 6000 * MIB + 2000 * MIB},
            {REFERENCE: 600 * MIB, RUNNER: 600 * MIB + 6000 * MIB + 9000 * MIB},
            {REFERENCE: 600 * MIB, RUNNER: 600 * MIB + 6000 * MIB + 11000 * MIB},
        ],
        lent=lent.get,
    )
    assert w.sample() is None and w.candidate_peak == 2600 * MIB  # the lent arena taken off
    # A large call: twice it, and the decoy check's copy of that, is more than the slack.
    w.working_bytes = 2500 * MIB
    assert w.limit() == 600 * MIB + 10000 * MIB
    assert w.sample() is None and killed == []  # 9.6 GB of its own, within 10.6
    assert w.sample() is not None and killed == [MIDDLE]  # 11.6 GB
    assert w.record()["reference_call_working_mib"] == 2500.0


def test_the_decoy_checks_copies_of_what_the_candidate_holds_are_allowed() -> None:
    """An honest transpose on an H100 (bench/hostile/results-h100.md, run C): its runner held
    6,138 MiB of its own beside a 1 GiB arena, a 1 GiB reference call and a reference's runner
    of 532 MiB. A decoy call holds the candidate's last output and its new one, the arena as
    the judge wrote it, an offset manner's two copies of the inputs, and the check's copy of
    the whole storage of every tensor a kernel takes: the arena's and the candidate's own
    (its output), which the candidate's allowance bounds."""
    arena, runner_context = 1024 * MIB, 532 * MIB
    held = runner_context + 2 * arena + arena + 2 * arena + (arena + 2 * arena)
    w, killed = watch(
        [
            {REFERENCE: 532 * MIB, RUNNER: held + arena},
            {REFERENCE: 532 * MIB, RUNNER: held + arena + 64 * MIB},
        ],
        lent={"candidate": arena, "reference": 0}.get,
    )
    w.working_bytes = arena
    w.allow_copies(arena)
    assert w.sample() is None and killed == [] and w.candidate_peak == held
    assert w.record()["check_copy_mib"] == 4 * 1024
    assert w.sample() is not None and killed == [MIDDLE]  # beyond every copy it may hold


def test_a_judge_that_cannot_see_the_candidates_runner_counts_nothing_and_says_so() -> None:
    # A /proc that hides the runner (hidepid, another Landlock domain) and no uid of its own:
    # the runner's memory would never count.
    hidden, _ = watch([{REFERENCE: 600 * MIB, RUNNER: 50000 * MIB}], candidate_pid=RUNNER)
    hidden.parent = lambda pid: None
    assert hidden.sample() is None
    assert hidden.record() == {
        "available": False,
        "reason": "the judge cannot tell the candidate's processes apart",
    }
    seen, killed = watch([{REFERENCE: 600 * MIB, RUNNER: 50000 * MIB}], candidate_pid=RUNNER)
    assert seen.sample() is not None and killed == [MIDDLE]


def test_what_the_driver_cannot_tell_about_a_stranger_changes_nothing_about_the_candidate() -> None:
    w, killed = watch(
        [
            {REFERENCE: 600 * MIB, RUNNER: 600 * MIB, STRANGER: None},
            None,  # a read that failed: tolerated
            {REFERENCE: 600 * MIB, RUNNER: 9000 * MIB},
        ]
    )
    assert w.sample() is None and w.unavailable is None
    assert w.sample() is None and w.unavailable is None and w.failed_reads == 1
    assert w.sample() is not None and killed == [MIDDLE]
    blind, _ = watch([{REFERENCE: 600 * MIB, RUNNER: None}])
    assert blind.sample() is None
    assert blind.record() == {
        "available": False,
        "reason": "the driver does not report the runners' memory",
    }


def test_no_reading_once_the_candidate_is_gone_and_a_failed_kill_is_said() -> None:
    gone, _ = watch([{REFERENCE: 600 * MIB, RUNNER: 50000 * MIB}], candidate_gone=lambda: True)
    assert gone.sample() is None and gone.samples == 0  # its pids may be someone else's now

    def refused() -> None:
        raise PermissionError(1, "Operation not permitted")

    w, _ = watch([{REFERENCE: 600 * MIB, RUNNER: 50000 * MIB}])
    w.on_breach = refused
    breach = w.sample()
    assert breach is not None and "could not be killed at once" in breach
    assert w.record()["killed"] is False


def test_a_watch_whose_thread_fails_says_so() -> None:
    calls = {"n": 0}

    def read() -> dict[int, int | None]:
        calls["n"] += 1
        if calls["n"] > 1:
            raise AttributeError("an arena closed under the reading")
        return {REFERENCE: 600 * MIB, RUNNER: 600 * MIB}

    w = MemoryWatch(read, JUDGE, REFERENCE, MIDDLE, False, 4096 * MIB, lambda: None)
    w.start()
    deadline = time.monotonic() + 5
    while w.unavailable is None and time.monotonic() < deadline:
        time.sleep(0.02)
    w.stop()
    assert w.record() == {
        "available": False,
        "reason": "the watch stopped: AttributeError: an arena closed under the reading",
    }


def test_the_killer_kills_its_process_and_only_it() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    kill = killer(child.pid)
    kill()
    assert child.wait(timeout=10) == -9
    kill()  # gone and reaped: nothing is hit, nothing raised
