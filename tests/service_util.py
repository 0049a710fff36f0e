"""Starting a real `kgym-gym serve` for tests and benchmarks, and a minimal stdlib HTTP caller."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def gym_exe() -> str:
    """The `kgym-gym` installed beside this interpreter (a venv need not be on PATH)."""
    return shutil.which("kgym-gym") or str(Path(sys.executable).parent / "kgym-gym")


@dataclass
class Gym:
    """One `kgym-gym serve` process on a free loopback port."""

    state_dir: Path
    args: list[str] = field(default_factory=list)
    gpus: str = "none"  # CPU mode unless a GPU benchmark asks for one
    env: dict[str, str] = field(default_factory=dict)  # added to the environment
    proc: subprocess.Popen[bytes] | None = None
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> Gym:
        exe = gym_exe()
        port_file = self.state_dir / "port"
        port_file.unlink(missing_ok=True)
        env = dict(os.environ, KGYM_PYTHON=sys.executable, **self.env)
        self.proc = subprocess.Popen(
            [exe, "serve", "--port", "0", "--port-file", str(port_file)]
            + ["--state-dir", str(self.state_dir), "--gpus", self.gpus]
            + self.args,
            stdout=subprocess.DEVNULL,
            stderr=open(self.state_dir / "serve.log", "ab"),  # noqa: SIM115 - owned by the child
            env=env,
        )
        deadline = time.monotonic() + timeout
        while not port_file.exists():
            if self.proc.poll() is not None:
                raise RuntimeError(f"kgym-gym serve exited: {self.log()[-2000:]}")
            if time.monotonic() > deadline:
                raise TimeoutError("kgym-gym serve did not start")
            time.sleep(0.05)
        self.port = int(port_file.read_text())
        return self

    def log(self) -> str:
        path = self.state_dir / "serve.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc is None:
            return 0
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(30)
        finally:
            self.proc = None


def call(
    url: str,
    method: str = "GET",
    body: Any = None,
    token: str | None = None,
    raw: bytes | None = None,
    timeout: float = 120.0,
) -> tuple[int, Any, dict[str, str]]:
    """(status, parsed JSON or text, headers) for one request; HTTP errors are returned too."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            status, text, headers = resp.status, resp.read().decode(), dict(resp.headers)
    except urllib.error.HTTPError as err:
        status, text, headers = err.code, err.read().decode(), dict(err.headers)
    try:
        return status, json.loads(text), headers
    except json.JSONDecodeError:
        return status, text, headers


def descendants(pid: int) -> list[tuple[int, str]]:
    """(pid, command line) of every process below `pid`, read from /proc, parents first."""
    found: list[tuple[int, str]] = []
    frontier = [pid]
    while frontier:
        parent = frontier.pop(0)
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                children = (task / "children").read_text().split()
            except OSError:
                continue
            for child in map(int, children):
                try:
                    raw = Path(f"/proc/{child}/cmdline").read_bytes()
                except OSError:
                    continue
                found.append((child, raw.replace(b"\0", b" ").decode(errors="replace").strip()))
                frontier.append(child)
    return found


def wait_for_status(url: str, job_id: str, status: str, timeout: float = 60.0) -> None:
    """Polls a job until it reaches `status` (e.g. running)."""
    deadline = time.monotonic() + timeout
    while call(f"{url}/v1/jobs/{job_id}")[1]["status"] != status:
        if time.monotonic() > deadline:
            raise TimeoutError(f"job {job_id} never reached {status}")
        time.sleep(0.05)
