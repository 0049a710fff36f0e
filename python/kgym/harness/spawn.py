"""The judge's side of a runner: forking it into its confinement, talking to it, watching it.

Runners are forked from the judge before the judge touches CUDA (a process forked after CUDA is
initialised cannot use it). The reference's runner is forked first; then the judge moves its
next child into a new PID namespace and forks the candidate's, which is PID 1 there: it cannot
name the judge or the reference's runner (so it cannot signal them), and everything it starts
dies with it. What confinement each runner got is read by the judge from ``/proc/<pid>/status``,
not taken from the runner's word.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgym import _core
from kgym.harness import kernel_trace, protocol, triton_warm
from kgym.harness.descriptors import close_all_but
from kgym.harness.kernel_trace import ChildEnds, TraceChannel


class RunnerGone(Exception):
    """The runner died, or broke the protocol; ``audit`` holds what its audit hook reported."""

    def __init__(self, how: str, audit: str = "", protocol_error: bool = False) -> None:
        super().__init__(how)
        self.how = how
        self.audit = audit
        self.protocol_error = protocol_error


@dataclass
class RunnerHandle:
    role: str
    pid: int
    sock: socket.socket
    audit_fd: int
    directory: Path
    layers: dict[str, Any] = field(default_factory=dict)
    # The process to wait for: the runner itself, or the intermediate that waits for it in its
    # place and exits with its status (128 + signal when it was killed).
    reaper: int = 0
    status: int | None = None
    stopped: bool = False
    # The judge's end of the runner's kernel trace (kernel_trace.py); None without one.
    trace: TraceChannel | None = None

    def __post_init__(self) -> None:
        if not self.reaper:
            self.reaper = self.pid

    def request(
        self, message: dict[str, Any], payload: Any = None, fds: list[int] | None = None
    ) -> dict[str, Any]:
        self.send(message, payload, fds)
        return self.receive()

    def send(
        self, message: dict[str, Any], payload: Any = None, fds: list[int] | None = None
    ) -> None:
        """The first half of a request, so that two runners can work on theirs at once."""
        self._guarded(lambda: protocol.send(self.sock, message, payload, fds))

    def receive(self) -> dict[str, Any]:
        reply: dict[str, Any] = self._guarded(lambda: protocol.recv_untrusted(self.sock))
        return reply

    def _guarded(self, io: Any) -> Any:
        try:
            return io()
        except protocol.PeerClosed as exc:
            raise self._gone(str(exc)) from exc
        except protocol.ProtocolError as exc:
            raise self._gone(str(exc), protocol_error=self.alive()) from exc
        except OSError as exc:
            raise self._gone(str(exc)) from exc

    def alive(self) -> bool:
        if self.status is not None:
            return False
        pid, status = os.waitpid(self.reaper, os.WNOHANG)
        if pid == 0:
            return True
        self.status = self._decode(status)
        return False

    def _decode(self, status: int) -> int:
        """The runner's own wait status, also when an intermediate relayed it."""
        if self.reaper == self.pid or not os.WIFEXITED(status):
            return status
        code = os.WEXITSTATUS(status)
        if code >= 128:
            return code - 128  # a wait status for "killed by signal code - 128"
        return code << 8

    def _gone(self, why: str, protocol_error: bool = False) -> RunnerGone:
        if protocol_error:
            self.kill()
            return RunnerGone(f"broke the protocol ({why})", protocol_error=True)
        deadline = time.monotonic() + 5.0
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        if self.alive():
            self.kill()
        return RunnerGone(self.describe_exit(), audit=self.audit_text())

    def audit_text(self) -> str:
        try:
            os.set_blocking(self.audit_fd, False)
            return os.read(self.audit_fd, 4096).decode(errors="replace").strip()
        except (BlockingIOError, OSError):
            return ""

    def describe_exit(self) -> str:
        if self.status is None:
            return "is still running"
        if os.WIFSIGNALED(self.status):
            return f"was killed by {signal.Signals(os.WTERMSIG(self.status)).name}"
        return f"exited with code {os.WEXITSTATUS(self.status)}"

    def exit_code(self) -> int | None:
        if self.status is None or not os.WIFEXITED(self.status):
            return None
        return os.WEXITSTATUS(self.status)

    def pause(self) -> None:
        """SIGSTOP: while the other runner is timed, or while the job holds no GPU lock, this
        one launches nothing. A runner already gone is left to the next request to report."""
        if self.status is None and not self.stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGSTOP)
            self.stopped = True

    def resume(self) -> None:
        if self.stopped and self.status is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGCONT)
        self.stopped = False

    def kill(self) -> None:
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                _, status = os.waitpid(self.reaper, 0)
                self.status = self._decode(status)
            except (ProcessLookupError, ChildProcessError):
                self.status = 0

    def close(self) -> None:
        self.begin_close()
        self.finish_close()

    def begin_close(self) -> None:
        """Asks the runner to exit, then kills it without waiting: a judge ends its two
        runners side by side (``finish_close`` reaps), since the end of a process that holds
        a CUDA context is the driver's slow teardown of that context."""
        self.resume()
        if self.alive():
            try:
                self.sock.settimeout(5.0)
                self.request({"op": "exit"})
            except (RunnerGone, OSError):
                pass
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)

    def finish_close(self) -> None:
        self.kill()  # reaps it (killed again first, at no cost)
        self.sock.close()
        os.close(self.audit_fd)
        if self.trace is not None:
            self.trace.close()

    def observed(self) -> dict[str, Any]:
        """The confinement seen from outside, in /proc/<pid>/status (read while it is alive)."""
        fields: dict[str, str] = {}
        try:
            with open(f"/proc/{self.pid}/status") as f:
                for line in f:
                    key, _, value = line.partition(":")
                    fields[key] = value.strip()
        except OSError:
            return {"observed": False}
        nspid = fields.get("NSpid", "").split()
        return {
            "observed": True,
            "capabilities_dropped": fields.get("CapEff") == "0000000000000000"
            and fields.get("CapPrm") == "0000000000000000",
            "no_new_privs": fields.get("NoNewPrivs") == "1",
            "pid_namespace": len(nspid) > 1,
            "uid": int(fields.get("Uid", "-1").split()[0]),
        }


def _become_runner(
    role: str,
    directory: Path,
    sock: socket.socket,
    audit_write: int,
    uid: int,
    trace: Trace,
    own_proc: bool = False,
) -> None:
    """In the forked runner: confinement, then serve; never returns."""
    try:
        if own_proc:
            _core.confine_private_proc()
        keep = {0, 1, 2, sock.fileno(), audit_write} | _trace_fds(trace)
        _core.channel_close()  # the report channel and the token stay the judge's
        close_all_but(keep)
        os.chdir(directory)
        os.environ["HOME"] = str(directory)
        os.environ["TMPDIR"] = str(directory)
        # tempfile caches its directory at the first call, and a judge-side import may have made
        # it (dill, which torch imports when installed, does at import): the runner's is its own.
        tempfile.tempdir = None
        os.environ["TRITON_CACHE_DIR"] = str(directory / "triton-cache")
        if trace is not None:
            # Read by the CUDA driver at its initialisation, the runner's warm-up: the trace's
            # library is loaded then, before any candidate code (kernel_trace.py).
            os.environ["CUDA_INJECTION64_PATH"] = str(trace[0])
            os.environ[kernel_trace.ENVIRONMENT] = trace[1].environment()
        _core.confine_undumpable()
        # (Leaving root for `uid` makes the process dumpable again: the CUDA driver writes to
        # its /proc files. Nothing else of that uid can name it: its own PID namespace; the one
        # process that shares it, the candidate's compilation ahead (precompile.py), is under a
        # Landlock layer of its own, which denies it ptrace and signals to its runner, and the
        # seccomp filter refuses ptrace besides.)
        _core.confine_drop_capabilities(uid)
        _core.confine_writes([str(directory)], ["/dev"])
        _core.confine_syscalls()  # last: private /proc above needed mount
        from kgym.harness.runner import runner_main

        runner_main(sock, role, audit_write, own_pid_namespace=own_proc)
    finally:
        os._exit(70)


def _exit_code_of(status: int) -> int:
    """An exit code that carries a wait status on: 128 + signal when killed."""
    return 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _relay(
    role: str,
    directory: Path,
    parent_sock: socket.socket,
    child_sock: socket.socket,
    audit_write: int,
    pid_read: int,
    pid_write: int,
    uid: int,
    trace: Trace,
) -> None:
    """The intermediate: enters a new PID namespace and forks its init (PID 1 there), which
    forks the runner (PID 2) and reaps whatever is orphaned in the namespace; each exits with
    the runner's status. The runner is not PID 1 because the kernel drops signals that PID 1
    sends itself without a handler: a candidate's own SIGSEGV or SIGABRT would not end it.
    When the init ends, the kernel kills everything left in the namespace. Every process here
    stays single-threaded (after unsharing CLONE_NEWPID a process cannot create threads) and
    dies with its parent (PR_SET_PDEATHSIG follows the parent thread)."""
    code = 71
    try:
        parent_sock.close()
        os.close(pid_read)
        # Only what it and its init pass on: not the judge's report channel.
        _core.channel_close()
        close_all_but({0, 1, 2, child_sock.fileno(), audit_write, pid_write} | _trace_fds(trace))
        _core.confine_die_with_parent()
        applied, note = _core.confine_new_pid_namespace()
        init = os.fork()
        if init == 0:
            _namespace_init(
                role, directory, child_sock, audit_write, pid_write, applied, note, uid, trace
            )
        child_sock.close()
        os.close(audit_write)
        os.close(pid_write)
        _close_trace(trace)
        _, status = os.waitpid(init, 0)
        code = _exit_code_of(status)
    finally:
        os._exit(code)


def _namespace_init(
    role: str,
    directory: Path,
    child_sock: socket.socket,
    audit_write: int,
    pid_write: int,
    applied: bool,
    note: str,
    uid: int,
    trace: Trace,
) -> None:
    code = 72
    try:
        _core.confine_die_with_parent()
        runner = os.fork()
        if runner == 0:
            _core.confine_die_with_parent()
            # Its pid as the judge sees it: /proc is still the host's procfs here.
            outer = os.readlink("/proc/self")
            os.write(pid_write, f"{outer} {int(applied)} {note}".encode())
            os.close(pid_write)
            _become_runner(role, directory, child_sock, audit_write, uid, trace, applied)
        child_sock.close()
        os.close(audit_write)
        os.close(pid_write)
        _close_trace(trace)
        while True:
            pid, status = os.waitpid(-1, 0)
            if pid == runner:
                code = _exit_code_of(status)
                break
    except ChildProcessError:
        pass
    finally:
        os._exit(code)


def spawn(
    role: str,
    workdir: Path,
    new_pid_namespace: bool,
    uid: int = -1,
    trace_library: Path | None = None,
) -> RunnerHandle:
    """Forks a runner for ``role`` ("reference" or "candidate"), confined, serving requests.

    With ``new_pid_namespace`` an intermediate child enters a new PID namespace, whose init
    forks the runner (``_relay``). The judge signals the runner by its pid and waits for it
    through the intermediate. With ``trace_library`` (on a GPU) the runner's CUDA driver loads
    the kernel trace, whose judge's end is the handle's ``trace``.
    """
    directory = workdir / f"runner-{role}"
    directory.mkdir(exist_ok=True)
    (directory / "triton-cache").mkdir(exist_ok=True)
    if uid > 0:
        for path in (directory, directory / "triton-cache"):
            os.chown(path, uid, uid)
    triton_warm.seed_cache(directory / "triton-cache", uid)
    parent_sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    audit_read, audit_write = os.pipe()
    layers: dict[str, Any] = {}
    channel: TraceChannel | None = None
    trace: Trace = None
    if trace_library is not None:
        channel, ends = TraceChannel.pair()
        trace = (trace_library, ends)
    if not new_pid_namespace:
        pid = os.fork()
        if pid == 0:
            parent_sock.close()
            _core.confine_die_with_parent()
            _become_runner(role, directory, child_sock, audit_write, uid, trace)
    else:
        pid_read, pid_write = os.pipe()
        middle = os.fork()
        if middle == 0:
            _relay(
                role,
                directory,
                parent_sock,
                child_sock,
                audit_write,
                pid_read,
                pid_write,
                uid,
                trace,
            )
        os.close(pid_write)
        _close_trace(trace)
        raw = b""
        while chunk := os.read(pid_read, 4096):
            raw += chunk
        answer = raw.decode(errors="replace").split(" ", 2)
        os.close(pid_read)
        if not answer or not answer[0].isdigit():
            os.waitpid(middle, 0)
            if channel is not None:
                channel.close()
            raise RuntimeError("the candidate's runner could not be started")
        layers["pid_namespace"] = len(answer) > 1 and answer[1] == "1"
        if len(answer) > 2 and answer[2]:
            layers["pid_namespace_note"] = answer[2]
        child_sock.close()
        os.close(audit_write)
        return RunnerHandle(
            role,
            int(answer[0]),
            parent_sock,
            audit_read,
            directory,
            layers,
            reaper=middle,
            trace=channel,
        )
    child_sock.close()
    os.close(audit_write)
    _close_trace(trace)
    return RunnerHandle(role, pid, parent_sock, audit_read, directory, layers, trace=channel)


# The kernel trace a runner's CUDA driver loads: the library and the runner's ends of its pipes.
Trace = tuple[Path, ChildEnds] | None


def _trace_fds(trace: Trace) -> set[int]:
    return trace[1].fds() if trace is not None else set()


def _close_trace(trace: Trace) -> None:
    if trace is not None:
        trace[1].close()
