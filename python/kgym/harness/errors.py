"""Classifying and trimming the candidate's errors for results and feedback."""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from types import TracebackType

MAX_TRACEBACK_LINES = 24
MAX_MESSAGE_CHARS = 2000


class EvaluationFailure(Exception):
    """Ends an evaluation with a given status (raised by the harness, not by candidates)."""

    def __init__(
        self,
        status: str,
        phase: str,
        exc: BaseException | None = None,
        message: str = "",
        record: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message or (str(exc) if exc else status))
        self.status = status
        self.phase = phase
        self.exc = exc
        self.message = message
        self.record = record  # an error record made elsewhere (the candidate's runner's)


@dataclass
class JitRanges:
    """Line ranges of the candidate's @triton.jit functions (for classifying kernel errors)."""

    ranges: list[tuple[int, int]]

    def contains(self, line: int) -> bool:
        return any(start <= line <= end for start, end in self.ranges)


def _frames(tb: TracebackType | None) -> list[traceback.FrameSummary]:
    return list(traceback.extract_tb(tb)) if tb is not None else []


def candidate_frames(exc: BaseException, candidate_file: str) -> list[traceback.FrameSummary]:
    return [f for f in _frames(exc.__traceback__) if f.filename.endswith(candidate_file)]


def is_triton_compile_error(exc: BaseException, jit: JitRanges, candidate_file: str) -> bool:
    """True when the failure is Triton refusing the kernel rather than the kernel misbehaving.

    Compiled Triton raises its CompilationError family. Under the interpreter a kernel body runs
    as Python, so a name, attribute or type error whose innermost candidate frame is inside a
    @triton.jit function counts as a compile error too: the compiler would have refused it.
    """
    if type(exc).__name__ == "InterpreterError":
        # The interpreter wraps what went wrong inside a kernel; judge the original error.
        inner = exc.__cause__ or exc.__context__
        if inner is not None and inner is not exc:
            return is_triton_compile_error(inner, jit, candidate_file) or (
                isinstance(inner, (NameError, AttributeError, TypeError))
                and "triton.language" in str(inner)
            )
    module = type(exc).__module__ or ""
    if module.startswith("triton.compiler") or type(exc).__name__ in {
        "CompilationError",
        "CompileTimeAssertionFailure",
        "UnsupportedLanguageConstruct",
    }:
        return True
    if isinstance(exc, (NameError, AttributeError, TypeError, SyntaxError)):
        frames = candidate_frames(exc, candidate_file)
        if frames and frames[-1].lineno is not None and jit.contains(frames[-1].lineno):
            return True
        if isinstance(exc, AttributeError) and "triton.language" in str(exc):
            return True
    return False


def trimmed_traceback(exc: BaseException, keep_files: tuple[str, ...]) -> str:
    """The traceback restricted to the candidate's and task's own frames, plus the exception."""
    lines: list[str] = []
    for frame in _frames(exc.__traceback__):
        if not frame.filename.endswith(keep_files):
            continue
        name = frame.filename.rsplit("/", 1)[-1]
        lines.append(f'  File "{name}", line {frame.lineno}, in {frame.name}')
        if frame.line:
            lines.append(f"    {frame.line.strip()}")
    if isinstance(exc, SyntaxError) and exc.filename and exc.filename.endswith(keep_files):
        lines.append(f'  File "{exc.filename.rsplit("/", 1)[-1]}", line {exc.lineno}')
        if exc.text:
            lines.append(f"    {exc.text.strip()}")
    lines.extend(traceback.format_exception_only(type(exc), exc)[-1:])
    lines = [line.rstrip("\n") for line in lines]
    if len(lines) > MAX_TRACEBACK_LINES:
        lines = lines[:4] + ["  ..."] + lines[-(MAX_TRACEBACK_LINES - 5) :]
    return "\n".join(lines)


def error_record(phase: str, exc: BaseException, keep_files: tuple[str, ...]) -> dict[str, str]:
    message = str(exc).strip() or type(exc).__name__
    if len(message) > MAX_MESSAGE_CHARS:
        message = message[:MAX_MESSAGE_CHARS] + " [...]"
    return {
        "phase": phase,
        "type": type(exc).__name__,
        "message": message,
        "traceback": trimmed_traceback(exc, keep_files),
    }


def failure_record(failure: EvaluationFailure, task_file: str) -> dict[str, str] | None:
    """The Result's ``error`` for an evaluation a check ended: none for a rejection (its
    findings say why), else the record a runner sent, or one made from the exception."""
    if failure.status == "rejected":
        return None
    if failure.record is not None:
        return failure.record
    if failure.exc is not None:
        error = error_record(failure.phase, failure.exc, (task_file,))
        if failure.message:
            error["message"] = failure.message
        return error
    return {
        "phase": failure.phase,
        "type": "EvaluationError",
        "message": failure.message,
        "traceback": "",
    }
