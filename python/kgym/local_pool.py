"""A worker pool on one machine (docs/scale.md): a `redis-server` with its append-only file on a
private unix socket, and `kgym-gym worker` processes standing in for hosts. The fault tests and
the pool benchmark use it; across machines the same commands run on each host."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from kgym.local_gym import gym_exe, stop_child, wait_until_ready


@dataclass
class RedisServer:
    """`redis-server` on a unix socket under `data_dir`, persisting every write to its
    append-only file before answering (appendfsync always, by default), so that even a
    `kill -9` loses nothing it acknowledged. Restartable on the same directory."""

    data_dir: Path
    appendfsync: str = "always"  # or "everysec": faster, may lose the last second on a crash
    proc: subprocess.Popen[bytes] | None = None

    @property
    def socket(self) -> Path:
        return self.data_dir / "redis.sock"

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def start(self, timeout: float = 20.0) -> RedisServer:
        exe = shutil.which("redis-server")
        if exe is None:
            raise FileNotFoundError(
                "redis-server is not installed (Debian: apt-get install redis-server)"
            )
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.socket.unlink(missing_ok=True)
        with open(self.data_dir / "redis.log", "ab") as log:
            self.proc = subprocess.Popen(
                [exe, "--port", "0", "--unixsocket", str(self.socket), "--unixsocketperm", "700"]
                + [
                    "--dir",
                    str(self.data_dir),
                    "--appendonly",
                    "yes",
                    "--appendfsync",
                    self.appendfsync,
                ]
                + ["--save", "", "--daemonize", "no"],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:
            wait_until_ready(self.proc, self.ping, "redis-server", self.log, timeout)
        except BaseException:
            self.proc = None
            raise
        return self

    def ping(self) -> bool:
        return self.cli("PING").strip() == "PONG"

    def cli(self, *args: str) -> str:
        """One command through redis-cli ("" when the server cannot be reached)."""
        if not self.socket.exists():
            return ""
        out = subprocess.run(
            ["redis-cli", "-s", str(self.socket), *args], capture_output=True, text=True, timeout=10
        )
        return out.stdout if out.returncode == 0 else ""

    def log(self) -> str:
        path = self.data_dir / "redis.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc is None:
            return 0
        proc, self.proc = self.proc, None
        return stop_child(proc, sig)


@dataclass
class PoolWorker:
    """One `kgym-gym worker --json` process; its events are read back from its log."""

    state_dir: Path
    redis_url: str
    pool: str = "default"
    args: list[str] = field(default_factory=list)
    gpus: str = "none"  # CPU mode unless asked for GPUs ("all", "0,1")
    proc: subprocess.Popen[bytes] | None = None

    @property
    def events_path(self) -> Path:
        return self.state_dir / "events.jsonl"

    def start(self, timeout: float = 60.0) -> PoolWorker:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        with open(self.events_path, "ab") as out, open(self.state_dir / "worker.log", "ab") as err:
            self.proc = subprocess.Popen(
                [gym_exe(), "worker", "--redis", self.redis_url, "--pool", self.pool, "--json"]
                + ["--state-dir", str(self.state_dir), "--gpus", self.gpus]
                + ["--python", sys.executable]
                + self.args,
                stdout=out,
                stderr=err,
                env=env,
            )
        try:
            wait_until_ready(
                self.proc,
                lambda: any(e.get("event") == "worker" for e in self.events()),
                "kgym-gym worker",
                self.log,
                timeout,
            )
        except BaseException:
            self.proc = None
            raise
        return self

    def events(self) -> list[dict[str, Any]]:
        if not self.events_path.exists():
            return []
        out = []
        for line in self.events_path.read_text(errors="replace").splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a line cut by a kill -9
        return out

    def log(self) -> str:
        path = self.state_dir / "worker.log"
        return path.read_text(errors="replace") if path.exists() else ""

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60.0) -> int:
        if self.proc is None:
            return 0
        proc, self.proc = self.proc, None
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)  # a paused worker cannot act on SIGTERM
        return stop_child(proc, sig, timeout)

    def __enter__(self) -> PoolWorker:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
