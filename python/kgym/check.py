"""Checking one candidate against one task through the C++ core (sandboxed child process)."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from kgym import _core
from kgym.tasks import Task, describe

MAX_SOURCE_BYTES = 4 << 20


@dataclass
class CheckOptions:
    """The options of a local check. Every field is an option of the core's table
    (kgym.options, cpp/kgym/check/options.cpp); None leaves it at the core's default, so
    defaults and bounds live in one place and bad values are refused by the core with the
    field's name."""

    device: str | None = None  # auto | cpu | cuda
    sizes: str | None = None  # auto | cpu | gpu
    trials: int | None = None
    seed: int | None = None
    extract: str | None = None  # auto | last_python_block | answer_tag | whole
    atol: float | None = None  # None: the task's tolerance
    rtol: float | None = None
    baseline: str | None = None  # eager | compile | both | none (no timing)
    timing_budget_ms: float | None = None
    timing_warmup_ms: float | None = None
    timing_min_samples: int | None = None
    timing_max_samples: int | None = None
    timing_target_rel_ci: float | None = None
    timing_batch_ms: float | None = None
    timing_verify_fraction: float | None = None
    profile: bool | None = None
    screen: bool | None = None  # the static screen; turn off only to study the runtime guards
    torch_compute: str | None = None  # strict | hybrid (docs/integrity-rules.md)
    inputs: str | None = None  # robust | task (stress sets or the task's inputs only)
    precision: str | None = None  # faithful | tolerant
    gpu_memory_slack_mib: int | None = None
    memory_limit_mib: int | None = None  # the job's host memory, its cgroup's
    pids_limit: int | None = None
    cpu_weight: int | None = None
    disk_limit_mib: int | None = None  # its directory's tmpfs
    gpu_memory_share_mib: int | None = None  # 0: the GPU's memory
    timeout_s: float | None = None
    python: str = ""  # the interpreter for harness children; default: this one

    def options(self) -> dict[str, Any]:
        """The options that were set, by name."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name != "python" and getattr(self, f.name) is not None
        }

    def job(self, task: Task, candidate: str) -> dict[str, Any]:
        return {
            "task_id": task.id,
            "task_source": task.source,
            "candidate": candidate,
            "python": self.python or sys.executable,
            **self.options(),
        }


def read_source(path: Path) -> str:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise FileNotFoundError(f"{path}: cannot be read ({exc.strerror})") from exc
    if size > MAX_SOURCE_BYTES:
        raise ValueError(f"{path}: larger than {MAX_SOURCE_BYTES} bytes")
    try:
        return path.read_text()
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text") from exc


def check(
    task: Task | Path | str,
    candidate: str,
    options: CheckOptions | None = None,
    on_phase: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Evaluates candidate text (source or raw completion) against a task; returns the Result."""
    options = options or CheckOptions()
    if not isinstance(task, Task):
        task = describe(Path(task))
    job = json.dumps(options.job(task, candidate))
    with _fork_server(job) as server:
        return json.loads(_core.evaluate(job, on_phase, server))


# Warm fork servers (sandbox/fork_server.hpp), the service's: a check forks its harness child
# from one that has imported torch and triton already, instead of starting Python afresh (1.3-2
# s a check, about 20 ms forked). Idle ones by what their imports saw (the interpreter and the
# job child's environment); one per check running at once.
_IDLE: dict[tuple[Any, ...], list[Any]] = {}
_HOMES: list[str] = []
_LOCK = threading.Lock()


@contextlib.contextmanager
def _fork_server(job: str) -> Iterator[Any]:
    """A started fork server for ``job``, taken from the idle ones or made; None (a fresh
    start) where none starts."""
    env = _core.job_environment(job)
    key = (json.loads(job)["python"], tuple(env))
    with _LOCK:
        idle = _IDLE.setdefault(key, [])
        server = idle.pop() if idle else None
        if server is None:
            home = _server_home()
            _HOMES.append(home)
            server = _core.job_fork_server(job, home)
    if server.start():
        server = None  # why it did not start is the server's log; the check starts afresh
    try:
        yield server
    finally:
        if server is not None:
            with _LOCK:
                _IDLE[key].append(server)


def _server_home() -> str:
    """A private HOME for a new server, under the user's cache, not the temporary directory
    (a check's own files there are its job's, and a killed check's are swept by the next):
    named by this process, and those of processes gone (killed before their exit) removed."""
    root = Path.home() / ".cache" / "kgym" / "forkservers"
    root.mkdir(parents=True, exist_ok=True)
    for old in root.iterdir():
        pid = old.name.split("-", 1)[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(old, ignore_errors=True)
    return tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=root)


@atexit.register
def _close_fork_servers() -> None:
    with _LOCK:
        for servers in _IDLE.values():
            for server in servers:
                server.close()
        _IDLE.clear()
    for home in _HOMES:
        shutil.rmtree(home, ignore_errors=True)


def feedback(result: dict[str, Any]) -> str:
    """The compact text a model sees for this result on its next turn."""
    return _core.render_feedback(json.dumps(result))


def extract(completion: str, rule: str = "auto") -> dict[str, Any]:
    return dict(_core.extract(completion, rule))
