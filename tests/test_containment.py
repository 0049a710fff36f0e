"""Faults in a candidate end only its own child; the next evaluation is unaffected.

The static screen would refuse most of these candidates before they run (they import os,
signal, ...), so these tests turn it off to exercise the sandbox itself.
"""

from __future__ import annotations

import os
import time

import pytest

from conftest import DEVICE, run, solution_source

BASE = solution_source("01_relu")


def with_forward_prefix(statement: str, imports: str = "") -> str:
    """The honest ReLU solution with a statement run at the start of forward()."""
    source = imports + "\n" + BASE
    marker = "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
    assert marker in source
    return source.replace(marker, marker + f"        {statement}\n", 1)


FAULTS = {
    "segfault": (
        "crashed",
        # (os.kill would be stopped by the audit hook first: faulthandler's test helper faults.)
        with_forward_prefix("faulthandler._sigsegv()", "import faulthandler"),
    ),
    "os_exit": ("crashed", with_forward_prefix("os._exit(0)", "import os")),
    "abort": ("crashed", with_forward_prefix("os.abort()", "import os")),
    "sys_exit": ("runtime_error", with_forward_prefix("sys.exit(0)", "import sys")),
    "hang": ("timeout", with_forward_prefix("while True: pass")),
    "sleep_at_import": ("timeout", "import time\ntime.sleep(60)\n" + BASE),
    "raise_at_import": ("compile_error", "raise RuntimeError('no')\n" + BASE),
    "memory_error": ("runtime_error", with_forward_prefix("raise MemoryError('host OOM')")),
}

ILLEGAL_ACCESS = BASE.replace(
    "tl.store(y_ptr + offs, y, mask=mask)", "tl.store(y_ptr + offs + (1 << 40), y, mask=mask)"
)
assert ILLEGAL_ACCESS != BASE
if DEVICE == "cuda":
    # A CUDA fault poisons the child's context; the verdict depends on where it surfaces.
    FAULTS["cuda_illegal_access"] = ("runtime_error|crashed", ILLEGAL_ACCESS)
    FAULTS["gpu_oom"] = (
        "runtime_error",
        with_forward_prefix("torch.empty(1 << 45, dtype=torch.uint8, device=x.device)"),
    )


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_fault_is_contained_and_classified(name: str) -> None:
    expected, source = FAULTS[name]
    started = time.monotonic()
    # A fault that must end in a timeout needs no more than the 10 s test_timeout_names_phase
    # uses; the others get room for a slow machine.
    result = run("01_relu", source, timeout_s=10 if expected == "timeout" else 20, screen=False)
    assert result["status"] in expected.split("|"), result["error"]
    assert result["error"]["phase"]
    assert result["error"]["message"]
    assert time.monotonic() - started < 40
    # The next evaluation is unaffected.
    after = run("01_relu", BASE, trials=2)
    assert after["status"] == "ok"


def test_crash_message_names_signal_and_phase() -> None:
    result = run("01_relu", FAULTS["segfault"][1], timeout_s=30, screen=False)
    assert "SIGSEGV" in result["error"]["message"]
    assert result["error"]["phase"] in ("compile", "correctness")


def test_timeout_names_phase() -> None:
    result = run("01_relu", FAULTS["hang"][1], timeout_s=10, screen=False)
    assert result["error"]["phase"] == "compile"
    assert "10 s" in result["error"]["message"]


def test_runtime_error_traceback_names_candidate_line() -> None:
    source = with_forward_prefix("raise ValueError('bad shape')")
    result = run("01_relu", source, screen=False)
    assert result["status"] == "runtime_error"
    assert result["error"]["type"] == "ValueError"
    assert 'File "candidate.py", line' in result["error"]["traceback"]
    assert "raise ValueError('bad shape')" in result["error"]["traceback"]
    # Harness frames are trimmed away.
    assert "kgym/harness" not in result["error"]["traceback"]


def test_output_flood_is_bounded() -> None:
    source = with_forward_prefix("print('x' * 100000)")
    result = run("01_relu", source, trials=2, screen=False)
    assert result["status"] == "ok"
    assert result["sandbox"]["stdout_bytes"] > 100000
    assert len(result["sandbox"]["stdout_tail"]) < 20000


def test_forked_children_do_not_survive() -> None:
    source = with_forward_prefix(
        "os.fork() == 0 and (time.sleep(120) or os._exit(0))", "import os, time"
    )
    started = time.monotonic()
    result = run("01_relu", source, trials=1, timeout_s=30, screen=False)
    assert time.monotonic() - started < 30
    # The forked child is still alive after the call: that is work outside the measured window.
    assert result["status"] == "rejected"
    # (The audit hook now stops the fork itself, before the guards would see a live child.)
    assert any(f["rule"] in ("thread-or-process", "audit-hook") for f in result["findings"])


def test_scrubbed_environment_and_private_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KGYM_TEST_SECRET", "leak")
    source = with_forward_prefix(
        "assert 'KGYM_TEST_SECRET' not in os.environ and os.getcwd().startswith(os.environ['TMPDIR'])"
        " and 'kgym-job-' in os.getcwd(), 'environment leaked'",
        "import os",
    )
    assert run("01_relu", source, trials=1, screen=False)["status"] == "ok"


def test_sandbox_reports_network_isolation_and_window_priority() -> None:
    result = run("01_relu", BASE, trials=1, baseline="eager")  # timed where a GPU is
    sandbox = result["sandbox"]
    assert isinstance(sandbox["network_isolated"], bool)
    if not sandbox["network_isolated"]:
        assert sandbox["network_note"]
    priority = sandbox["window_priority"]
    if DEVICE != "cuda":
        assert priority is None  # Triton's interpreter: no timing window
    elif os.geteuid() == 0:  # the supervisor may: the judge's thread and its two runners'
        assert priority["raised"] == 3 and priority["note"] is None, priority
        # Real-time where the machine allows it, else the ordinary policy's strongest settings.
        assert priority["policy"] in ("SCHED_FIFO", "nice -20, 0.1 ms slice"), priority
    else:
        assert priority["raised"] == 0 and priority["note"], priority


def test_syscall_filter_binds_the_judge_and_the_candidate() -> None:
    # Task code runs in the judge, unscreened: a task source that tries ptrace, a user
    # namespace and a mount is refused by the kernel (EPERM) and says so through its reference.
    probe = (
        "import ctypes, errno\n"
        "_libc = ctypes.CDLL(None, use_errno=True)\n"
        "def _refused(rc):\n"
        "    return rc == -1 and ctypes.get_errno() == errno.EPERM\n"
        "_REFUSED = all([_refused(_libc.ptrace(0, 0, None, None)),\n"
        "                _refused(_libc.unshare(0x10000000)),\n"
        "                _refused(_libc.mount(b'none', b'/tmp', b'tmpfs', 0, None))])\n"
        "assert _REFUSED, 'a refused system call was allowed'\n"
    )
    from kgym.check import CheckOptions, check
    from kgym.tasks import Task, find_task

    relu = find_task("01_relu")
    task = Task(id="probe", path=relu.path, source=probe + relu.source, description="")
    options = CheckOptions(device=DEVICE, trials=1, baseline="none" if DEVICE == "cuda" else None)
    result = check(task, BASE, options)
    assert result["sandbox"]["syscalls_filtered"] is True, result["sandbox"]["syscalls_note"]
    assert result["status"] == "ok", (result["status"], result.get("error"))
