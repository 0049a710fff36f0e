"""A `kgym-gym serve` started on this machine for one client (kgym eval's default, tests and
benchmarks): a free loopback port, its own state directory, stopped when done."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType


def wait_until_ready(
    proc: subprocess.Popen[bytes],
    ready: Callable[[], bool],
    what: str,
    log: Callable[[], str],
    timeout: float,
) -> None:
    """Polls ``ready`` until it holds; a child that exits first, or does not get there within
    ``timeout`` seconds (then it is killed), is an error naming ``what`` and its log's end."""
    deadline = time.monotonic() + timeout
    while not ready():
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited: {log()[-2000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            raise TimeoutError(f"{what} did not start")
        time.sleep(0.05)


def stop_child(proc: subprocess.Popen[bytes], sig: int, timeout: float = 30.0) -> int:
    """Sends ``sig`` and waits; a child that does not stop in time is killed (it must not
    outlive its client). Its exit status."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def gym_exe() -> str:
    """The `kgym-gym` installed beside this interpreter (a venv need not be on PATH)."""
    return shutil.which("kgym-gym") or str(Path(sys.executable).parent / "kgym-gym")


@dataclass
class LocalGym:
    """One `kgym-gym serve` process on a free loopback port."""

    state_dir: Path
    args: list[str] = field(default_factory=list)
    gpus: str = "none"  # CPU mode unless asked for GPUs ("auto", "all", "0,1")
    env: dict[str, str] = field(default_factory=dict)  # added to the environment
    proc: subprocess.Popen[bytes] | None = None
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> LocalGym:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        port_file = self.state_dir / "port"
        port_file.unlink(missing_ok=True)
        env = dict(os.environ, **self.env)
        with open(self.state_dir / "serve.log", "ab") as log:  # the child keeps its own copy
            self.proc = subprocess.Popen(
                [gym_exe(), "serve", "--port", "0", "--port-file", str(port_file)]
                + ["--state-dir", str(self.state_dir), "--gpus", self.gpus]
                + ["--python", sys.executable]
                + self.args,
                stdout=subprocess.DEVNULL,
                stderr=log,
                env=env,
            )
        try:
            wait_until_ready(self.proc, port_file.exists, "kgym-gym serve", self.log, timeout)
        except BaseException:
            self.proc = None
            raise
        self.port = int(port_file.read_text())
        return self

    def log(self) -> str:
        path = self.state_dir / "serve.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc is None:
            return 0
        proc, self.proc = self.proc, None
        return stop_child(proc, sig)

    def __enter__(self) -> LocalGym:
        try:
            return self.start()
        except BaseException:
            self.stop(signal.SIGKILL)  # an interrupt while it starts leaves nothing behind
            raise

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
