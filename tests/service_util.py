"""Starting a real `kgym-gym serve` for tests and benchmarks, and a minimal stdlib HTTP caller."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from kgym.local_gym import LocalGym, gym_exe  # noqa: F401 - re-exported for the tests

# The service started for one client lives in the package (kgym eval starts one too).
Gym = LocalGym


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
        try:
            tasks = list(Path(f"/proc/{parent}/task").glob("*"))
        except OSError:  # it ended after its parent listed it
            continue
        for task in tasks:
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


def wait_for_status(
    url: str, job_id: str, status: str, timeout: float = 60.0, token: str | None = None
) -> None:
    """Polls a job until it reaches `status` (e.g. running)."""
    deadline = time.monotonic() + timeout
    while call(f"{url}/v1/jobs/{job_id}", token=token)[1]["status"] != status:
        if time.monotonic() > deadline:
            raise TimeoutError(f"job {job_id} never reached {status}")
        time.sleep(0.05)
