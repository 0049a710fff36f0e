"""The runners' kernel trace (harness/kernel_trace.py, native/kernel_trace.c): the library is
built here against Triton's own CUPTI, loaded and started as the CUDA driver would start it, and
its sealed answers read by the judge's end. Without a GPU its CUPTI cannot record (``S`` answers
with CUPTI's error), which still runs every frame through the seal; with KGYM_TEST_DEVICE=cuda
the runners' traces record real kernels in tests/test_check_api.py's GPU runs."""

from __future__ import annotations

import ctypes
import hmac
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from kgym.harness import kernel_trace_build
from kgym.harness.kernel_trace import TraceChannel, TraceError, parse_kernels

CUPTI = kernel_trace_build.find_cupti()
needs_cupti = pytest.mark.skipif(CUPTI is None, reason="no CUPTI with headers (Triton's) here")


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if CUPTI is None:
        pytest.skip("no CUPTI with headers (Triton's) here")
    return kernel_trace_build.build(tmp_path_factory.mktemp("trace"))


@needs_cupti
def test_the_library_builds_without_warnings_and_exports_the_drivers_entry(library: Path) -> None:
    assert CUPTI is not None
    record = kernel_trace_build._record_type(CUPTI.include)
    done = subprocess.run(
        [
            kernel_trace_build._compiler(),
            "-fsyntax-only",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-std=gnu11",
            f"-I{CUPTI.include}",
            *[f"-idirafter{d}" for d in CUPTI.cuda_includes],
            f"-DKGYM_KERNEL_RECORD={record}",
            str(kernel_trace_build.SOURCE),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert hasattr(ctypes.CDLL(str(library)), "InitializeInjection")


def _started_in_a_child(library: Path, script: str) -> subprocess.CompletedProcess[str]:
    """Runs ``script`` in a fresh interpreter that loads the library and calls its entry, as
    the CUDA driver does at its initialisation; ``channel`` is the judge's end."""
    program = textwrap.dedent(
        f"""
        import ctypes, os, sys
        from kgym.harness.kernel_trace import TraceChannel, TraceError
        channel, ends = TraceChannel.pair()
        os.environ["KGYM_KERNEL_TRACE_FDS"] = ends.environment()
        library = ctypes.CDLL({str(library)!r})
        library.InitializeInjection()
        """
    ) + textwrap.dedent(script)
    return subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=False
    )


def test_the_librarys_answers_are_sealed_read_and_the_key_is_gone(library: Path) -> None:
    done = _started_in_a_child(
        library,
        """
        key_fd = int(ends.environment().split(",")[0])
        print("key closed", not os.path.exists(f"/proc/self/fd/{key_fd}"))
        getenv = ctypes.CDLL(None).getenv
        getenv.restype = ctypes.c_char_p
        print("variable", getenv(b"KGYM_KERNEL_TRACE_FDS"))
        print("first", channel.await_ready(5.0))
        channel.send(b"S")
        try:
            channel.started()
        except TraceError as exc:  # no GPU: CUPTI cannot record, and says so, sealed
            print("start", "sealed" if not exc.tampered else "tampered", str(exc)[:80])
        channel.send(b"E")
        print("end", channel.kernels())
        for _ in range(2):  # the graded calls' trace, then the window's: starts and ends alternate
            channel.send(b"S")
            try:
                channel.started()
            except TraceError as exc:
                print("again", "sealed" if not exc.tampered else "tampered")
            channel.send(b"E")
            print("end", channel.kernels())
        """,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines.count("end {'available': True, 'kernels': [], 'records': 0, 'dropped': 0}") == 3
    assert "again tampered" not in lines
    assert lines[0] == "key closed True"
    assert lines[1] == "variable None"  # unset in the C environment at its start
    assert lines[2] == "first ready"
    if lines[3].startswith("start"):  # a CPU machine
        assert lines[3].startswith("start sealed the kernel trace failed: cuptiActivityEnable")


def test_bytes_written_into_the_answer_pipe_by_anyone_else_fail_the_seal(library: Path) -> None:
    """The candidate shares the runner's process and may write into the library's pipe: what
    it writes cannot pass as the trace's answer, sealed or not, and cannot be replayed."""
    done = _started_in_a_child(
        library,
        """
        answers_w = int(ends.environment().split(",")[2])
        import hmac
        def frame(payload, key):
            mac = hmac.digest(key, channel.sequence.to_bytes(8, "little") + payload, "sha256")
            return b"KGTR" + len(payload).to_bytes(4, "little") + payload + mac
        print("first", channel.await_ready(5.0))  # the library's own, written at its start
        channel.sequence, sequence = 0, channel.sequence
        os.write(answers_w, frame(b"started", bytes(32)))  # a guessed key
        channel.sequence = sequence
        try:
            channel.started()
            print("second passed")
        except TraceError as exc:
            print("second", "tampered" if exc.tampered else "missing", exc)
        """,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == [
        "first ready",
        "second tampered a kernel trace frame that fails its seal",
    ]


def test_commands_the_judge_did_not_seal_are_refused(library: Path) -> None:
    """The candidate can write into the command pipe (it shares the runner's process; a
    /proc/self/fd link of the read end opens for writing). A command it writes (an 'E' after a
    burst of its own launches) must not make the library answer the judge's command with a
    record of the candidate's choosing."""
    done = _started_in_a_child(
        library,
        """
        import time
        command_r = int(ends.environment().split(",")[1])
        print("first", channel.await_ready(5.0))
        channel.send(b"S")
        try:
            channel.started()
        except TraceError:
            pass  # no GPU: CUPTI cannot record here, and says so
        injected = os.open(f"/proc/self/fd/{command_r}", os.O_WRONLY)
        os.write(injected, b"E")
        time.sleep(0.5)
        channel.send(b"E")
        try:
            channel.kernels()
            print("judge's end passed")
        except TraceError as exc:
            print("judge's end refused", "tampered" if exc.tampered else "missing")
        """,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[0] == "first ready"
    assert lines[1].startswith("judge's end refused"), lines


def test_the_judges_own_command_written_again_is_refused(library: Path) -> None:
    """A command read from the pipe and written again (or twice) is sealed for its number
    only: the second is refused, and the trace answers nothing more."""
    done = _started_in_a_child(
        library,
        """
        print("first", channel.await_ready(5.0))
        frame = channel.sealed_command(b"S")
        os.write(channel.commands, frame)
        os.write(channel.commands, frame)
        for _ in range(2):
            try:
                channel.started()
                print("answer started")
            except TraceError as exc:
                print("answer", "tampered" if exc.tampered else "error", str(exc)[:120])
        """,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[0] == "first ready"
    # A GPU starts recording; this CPU's CUPTI says it cannot (the library's own error).
    assert lines[1] in ("answer started",) or lines[1].startswith("answer error")
    assert lines[2].startswith("answer tampered the kernel trace answered another command")
    assert "a command that fails its seal" in lines[2]


def _channel_and_library_end() -> tuple[TraceChannel, Any]:
    channel, ends = TraceChannel.pair()
    key = os.read(ends.key, 32)

    class Library:
        sequence = 0

        def say(self, text: str, with_key: bytes = key) -> None:
            payload = text.encode()
            sealed = self.sequence.to_bytes(8, "little") + payload
            mac = hmac.digest(with_key, sealed, "sha256")
            os.write(ends.answers, b"KGTR" + len(payload).to_bytes(4, "little") + payload + mac)
            self.sequence += 1

    return channel, Library()


def test_a_replayed_frame_fails_its_seal() -> None:
    channel, library = _channel_and_library_end()
    library.say("ready")
    assert channel.await_ready(1.0) == "ready"
    channel.sealed_command(b"S")
    library.sequence = 0  # the same frame again
    library.say(f"started {channel.nonce}")
    with pytest.raises(TraceError, match="fails its seal") as failed:
        channel.started()
    assert failed.value.tampered


def test_an_answer_must_name_its_commands_nonce() -> None:
    channel, library = _channel_and_library_end()
    channel.sealed_command(b"S")
    library.say("started 00112233445566778899aabbccddeeff")  # another command's answer
    with pytest.raises(TraceError, match="answered another command") as failed:
        channel.started()
    assert failed.value.tampered
    channel.sealed_command(b"E")
    library.say(f"error {channel.nonce} CUPTI says no")  # the library's own failure
    with pytest.raises(TraceError, match="failed: CUPTI says no") as failed:
        channel.kernels()
    assert not failed.value.tampered


def test_a_silent_trace_is_missing_not_tampered() -> None:
    channel, _ = _channel_and_library_end()
    with pytest.raises(TraceError, match="did not answer") as failed:
        channel.read_frame(0.2)
    assert not failed.value.tampered


def test_the_kernels_answer_is_read_by_name() -> None:
    read = parse_kernels("7 0\n5\t2500000\trelu_kernel\n2\t1000\tat::native::fill\n")
    assert read["kernels"] == [
        {"name": "relu_kernel", "calls": 5, "total_ms": 2.5},
        {"name": "at::native::fill", "calls": 2, "total_ms": 0.001},
    ]
    assert (read["records"], read["dropped"]) == (7, 0)
    for bad in ("ready", "x 0\n", "1 0\nnot a line\n"):
        with pytest.raises(TraceError):
            parse_kernels(bad)


class _Trace:
    def __init__(self, events: list[str], role: str, answer: Any) -> None:
        self.events, self.role, self.answer = events, role, answer

    def send(self, command: bytes) -> None:
        self.events.append(f"send {self.role}")

    def _reply(self) -> Any:
        self.events.append(f"read {self.role}")
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def started(self) -> None:
        self._reply()

    def kernels(self) -> Any:
        return self._reply()


class _Runners:
    def __init__(self, reference: Any, candidate: Any) -> None:
        self.events: list[str] = []
        self.traces = {
            "reference": _Trace(self.events, "reference", reference),
            "candidate": _Trace(self.events, "candidate", candidate),
        }

    def __getitem__(self, role: str) -> Any:
        class Handle:
            trace = self.traces[role]

        return Handle()


def test_both_traces_are_told_before_either_answer_is_read() -> None:
    from kgym.harness.judge.findings import Findings
    from kgym.harness.judge.timing.sampling import record_kernels

    findings = Findings()
    runners = _Runners({"kernels": []}, {"kernels": ["mine"]})
    assert record_kernels(runners, findings, on=False) == {"kernels": ["mine"]}  # type: ignore[arg-type]
    assert runners.events == [
        "send reference",
        "send candidate",
        "read reference",
        "read candidate",
    ]
    assert findings.items == []


@pytest.mark.parametrize(
    ("failure", "rule"),
    [
        (TraceError("a kernel trace frame that fails its seal", True), "kernel-trace-tampered"),
        (TraceError("the kernel trace did not answer"), "kernel-trace-missing"),
    ],
)
def test_a_candidate_trace_that_fails_rejects(failure: TraceError, rule: str) -> None:
    from kgym.harness.judge.findings import Findings
    from kgym.harness.judge.timing.sampling import record_kernels

    findings = Findings()
    assert record_kernels(_Runners({}, failure), findings, on=False) == {}  # type: ignore[arg-type]
    assert [f["rule"] for f in findings.items] == [rule]
    assert findings.rejected()


def test_a_reference_trace_that_fails_is_the_jobs_failure() -> None:
    from kgym.harness.judge.findings import Findings
    from kgym.harness.judge.timing.sampling import record_kernels

    runners = _Runners(TraceError("the kernel trace did not answer"), {})
    with pytest.raises(RuntimeError, match="reference's kernel trace failed"):
        record_kernels(runners, Findings(), on=True)  # type: ignore[arg-type]


def test_fewer_triton_launches_than_timed_calls_is_an_incomplete_trace() -> None:
    from kgym.harness.judge.findings import Findings
    from kgym.harness.judge.profile import profile_of

    timing = {"samples": {"candidate": [1.0] * 20}}
    recorded = {
        "calls": 100,
        "profile": {"kernels": [{"name": "relu_kernel", "calls": 60, "total_ms": 6.0}]},
    }
    findings = Findings()
    profile_of(recorded, timing, {"relu_kernel"}, findings)
    assert [f["rule"] for f in findings.items] == ["kernel-trace-incomplete"]
    full = {
        **recorded,
        "profile": {"kernels": [{"name": "relu_kernel", "calls": 100, "total_ms": 6.0}]},
    }
    findings = Findings()
    assert profile_of(full, timing, {"relu_kernel"}, findings)["available"]
    assert findings.items == []
    dropped = {**full, "profile": {**full["profile"], "dropped": 3}}
    profile_of(dropped, timing, {"relu_kernel"}, findings)
    assert [f["detail"] for f in findings.items] == ["the kernel trace dropped 3 records"]


def _runners_with_traces(reference: str, candidate: str) -> Any:
    from types import SimpleNamespace

    from kgym.harness.judge.findings import Findings
    from kgym.harness.judge.runners import Runners

    runners = Runners(Findings())
    for role, state in (("reference", reference), ("candidate", candidate)):
        runners.handles[role] = SimpleNamespace(  # type: ignore[assignment]
            trace=SimpleNamespace(await_ready=lambda state=state: state)
        )
    runners._await_traces()
    return runners


def test_a_trace_that_starts_only_for_the_reference_is_the_candidates_failure() -> None:
    both = _runners_with_traces("ready", "ready")
    assert both.trace == {"available": True, "reason": ""} and both.findings.items == []
    host = _runners_with_traces("the kernel trace did not start: no CUPTI", "no CUPTI")
    assert host.trace["available"] is False and "no CUPTI" in host.trace["reason"]
    assert host.findings.items == []  # the host's: no profile, no verdict
    own = _runners_with_traces("ready", "the kernel trace did not start: error no thread")
    assert own.trace["available"] is False
    assert [f["rule"] for f in own.findings.items] == ["kernel-trace-missing"]


def test_launches_are_counted_before_the_shortest_names_are_folded() -> None:
    """More than 500 kernel names keep the 499 longest; the candidate's many short Triton
    launches still count toward the timed calls."""
    from kgym.harness.judge.findings import Findings
    from kgym.harness.judge.profile import profile_of

    names = [f"k{i}" for i in range(600)]
    recorded = {
        "calls": 600,
        "profile": {"kernels": [{"name": n, "calls": 1, "total_ms": 0.001} for n in names]},
    }
    findings = Findings()
    profile_of(recorded, {"samples": {"candidate": [1.0]}}, set(names), findings)
    assert findings.items == []


@pytest.mark.skipif(
    os.environ.get("KGYM_TEST_DEVICE") != "cuda", reason="CUPTI subscribes only with a GPU"
)
def test_the_trace_holds_cuptis_one_subscriber(library: Path) -> None:
    """Another CUPTI client in the runner's process (a profiler the candidate starts) would
    take the records away: once the driver has loaded the trace, a second subscriber is
    refused (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED); without it one is taken."""
    assert CUPTI is not None
    script = textwrap.dedent(
        f"""
        import ctypes, os, sys
        if sys.argv[1] == "traced":
            from kgym.harness.kernel_trace import TraceChannel
            channel, ends = TraceChannel.pair()
            os.environ["KGYM_KERNEL_TRACE_FDS"] = ends.environment()
            os.environ["CUDA_INJECTION64_PATH"] = {str(library)!r}
        import torch
        torch.zeros(1, device="cuda")
        if sys.argv[1] == "traced":
            assert channel.await_ready() == "ready"
        handle = ctypes.c_void_p()
        print(ctypes.CDLL({str(CUPTI.shared_object)!r}).cuptiSubscribe(ctypes.byref(handle), None, None))
        """
    )
    codes = {}
    for mode in ("traced", "plain"):
        done = subprocess.run(
            [sys.executable, "-c", script, mode], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr[-2000:]
        codes[mode] = int(done.stdout.split()[-1])
    assert codes == {"traced": 39, "plain": 0}
