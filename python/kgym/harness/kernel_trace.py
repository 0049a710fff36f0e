"""The judge's end of a runner's kernel trace (``native/kernel_trace.c``).

The trace is recorded by a library the CUDA driver loads into the runner at its initialisation
(``CUDA_INJECTION64_PATH``), before any candidate code is imported, and answers over a pipe
with frames sealed by a key that only the judge and that library know: the key goes through a
pipe the library reads once at its start and closes. The judge's commands are sealed with the
same key, numbered, and carry a fresh nonce that the answer must name, so a command the
candidate writes into the pipe (it shares the runner's process) is refused and ends the trace,
and no answer can stand for another command's. What the candidate's Python could do to the
pipes (write into them, read from them, close them) shows as a frame that fails its seal, an
answer to another command, an error or no answer, never as a trace; each rejects the candidate
(``kernel-trace-tampered``, ``kernel-trace-missing``). The runners' own torch profiler is no
longer used: it ran in the candidate's process as Python objects the candidate could reach.
"""

from __future__ import annotations

import hmac
import os
import secrets
import select
import time
from dataclasses import dataclass
from typing import Any

MAGIC = b"KGTR"
MAC_BYTES = 32
KEY_BYTES = 32
NONCE_BYTES = 16
MAX_PAYLOAD = 1 << 20  # 512 names of at most 200 characters fit many times over
ENVIRONMENT = "KGYM_KERNEL_TRACE_FDS"
# How long the judge waits for a trace's answer. The library answers from a thread of its own
# once CUPTI has flushed its buffers: milliseconds for the thousands of launches of a window.
ANSWER_TIMEOUT_S = 20.0
READY_TIMEOUT_S = 5.0
OTHER_KERNELS = "<other kernels>"


class TraceError(RuntimeError):
    """No trustworthy answer: ``tampered`` when a frame failed its seal or its form."""

    def __init__(self, message: str, tampered: bool = False) -> None:
        super().__init__(message)
        self.tampered = tampered


@dataclass
class ChildEnds:
    """The descriptors the runner keeps for its trace library: the key's pipe (read once, then
    closed by the library), the judge's commands, the answers."""

    key: int
    commands: int
    answers: int

    def environment(self) -> str:
        return f"{self.key},{self.commands},{self.answers}"

    def fds(self) -> set[int]:
        return {self.key, self.commands, self.answers}

    def close(self) -> None:
        for fd in self.fds():
            _close(fd)


class TraceChannel:
    """The judge's side: commands out, sealed answers in."""

    def __init__(self, commands: int, answers: int, key: bytes) -> None:
        self.commands, self.answers, self.key = commands, answers, key
        self.sequence = 0  # frames read
        self.commands_sent = 0
        self.nonce = ""  # the last command's, in hex: its answer must name it
        self.buffer = b""
        self.state = "new"  # "ready" once the library said so, or the reason it is not

    @classmethod
    def pair(cls) -> tuple[TraceChannel, ChildEnds]:
        key = secrets.token_bytes(KEY_BYTES)
        key_read, key_write = os.pipe()
        os.write(key_write, key)
        os.close(key_write)
        command_read, command_write = os.pipe()
        answer_read, answer_write = os.pipe()
        return cls(command_write, answer_read, key), ChildEnds(key_read, command_read, answer_write)

    # -- frames --------------------------------------------------------------------------------
    def _fill(self, size: int, deadline: float) -> None:
        while len(self.buffer) < size:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.answers], [], [], left)[0]:
                raise TraceError("the kernel trace did not answer")
            chunk = os.read(self.answers, 65536)
            if not chunk:
                raise TraceError("the kernel trace's pipe was closed")
            self.buffer += chunk

    def _take(self, size: int) -> bytes:
        head, self.buffer = self.buffer[:size], self.buffer[size:]
        return head

    def read_frame(self, timeout_s: float) -> str:
        """The next frame's payload, checked against the key and the sequence."""
        deadline = time.monotonic() + timeout_s
        self._fill(8, deadline)
        header = self._take(8)
        size = int.from_bytes(header[4:], "little")
        if header[:4] != MAGIC or size > MAX_PAYLOAD:
            raise TraceError("a kernel trace frame of the wrong form", tampered=True)
        self._fill(size + MAC_BYTES, deadline)
        payload = self._take(size)
        mac = self._take(MAC_BYTES)
        sealed = self.sequence.to_bytes(8, "little") + payload
        expected = hmac.digest(self.key, sealed, "sha256")
        if not hmac.compare_digest(mac, expected):
            raise TraceError("a kernel trace frame that fails its seal", tampered=True)
        self.sequence += 1
        return payload.decode(errors="replace")

    # -- the protocol --------------------------------------------------------------------------
    def await_ready(self, timeout_s: float = READY_TIMEOUT_S) -> str:
        """After the runner's CUDA context exists: "ready", or why the trace is not there."""
        try:
            text = self.read_frame(timeout_s)
        except TraceError as exc:
            self.state = f"the kernel trace did not start ({exc})"
            return self.state
        self.state = "ready" if text == "ready" else f"the kernel trace did not start: {text}"
        return self.state

    def sealed_command(self, command: bytes) -> bytes:
        """``command`` (``b"S"`` or ``b"E"``) as the library takes it: the letter, a fresh nonce,
        and the HMAC of its number, the letter and the nonce."""
        nonce = secrets.token_bytes(NONCE_BYTES)
        body = b"C" + self.commands_sent.to_bytes(8, "little") + command + nonce
        self.commands_sent += 1
        self.nonce = nonce.hex()
        return command + nonce + hmac.digest(self.key, body, "sha256")

    def send(self, command: bytes) -> None:
        """``b"S"`` starts recording, ``b"E"`` ends it, in turn; the answer is read by
        ``started`` or ``kernels``, so that two runners' traces start and stop at once."""
        try:
            os.write(self.commands, self.sealed_command(command))
        except OSError as exc:
            raise TraceError(f"the kernel trace's command pipe failed ({exc})") from exc

    def _answer(self, word: str) -> str:
        """The answer to the last command: ``word``, its nonce, the rest."""
        text = self.read_frame(ANSWER_TIMEOUT_S)
        head, _, rest = text.partition(" ")
        nonce, _, rest = rest.partition(" ") if head in (word, "error") else ("", "", "")
        if head == word and nonce == self.nonce:
            return rest
        if head == "error" and nonce == self.nonce:
            raise TraceError(f"the kernel trace failed: {rest[:300]}")
        # Sealed by the library, but not this command's answer: a command written by someone
        # else (which ends the trace), or answered for another.
        raise TraceError(f"the kernel trace answered another command: {text[:300]!r}", True)

    def started(self) -> None:
        self._answer("started")

    def kernels(self) -> dict[str, Any]:
        """The kernels recorded since the start, summed by name: {available, kernels, records,
        dropped}. Kernels only: memory copies and sets are other activity kinds, not recorded
        (the runner's own copy of each output into shared memory is one)."""
        return parse_kernels(self._answer("kernels"))

    def close(self) -> None:
        _close(self.commands)
        _close(self.answers)


def parse_kernels(text: str) -> dict[str, Any]:
    """The rest of an ``E`` answer (after its nonce) read into the record the judge's profile
    phase takes: "<records> <dropped>" then a line per kernel name."""
    lines = text.split("\n")
    head = lines[0].split(" ")
    try:
        if len(head) != 2:
            raise ValueError(head)
        kernels = []
        for line in lines[1:]:
            if line:
                calls, total_ns, name = line.split("\t", 2)
                kernels.append({"name": name, "calls": int(calls), "total_ms": int(total_ns) / 1e6})
        return {
            "available": True,
            "kernels": kernels,
            "records": int(head[0]),
            "dropped": int(head[1]),
        }
    except ValueError as exc:
        raise TraceError(f"the kernel trace answered {text[:300]!r}") from exc


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
