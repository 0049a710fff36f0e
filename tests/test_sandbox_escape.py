"""The sandbox attack suite: untrusted code trying to read, signal, outlive, leak or damage.

Two kinds of untrusted code reach kgym: task sources sent by clients (run unscreened in the
judge, the weakest side) and candidates (run in their runner, screen off here so that the
sandbox itself is what is tested). Each probe tries many things and prints what it got; the
assertions are about leaks, survivors and damage on the host, never about verdicts (except
the honest control at the end).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import DEVICE, run, solution_source
from kgym.check import CheckOptions, check
from kgym.tasks import Task, find_task

BASE = solution_source("01_relu")
SECRET_ENV = "KGYM_ATTACK_SECRET"

# Runs at import: every attempt is independent; the findings are printed as one line.
PROBE = r"""
import glob as _glob, json as _json, os as _os, signal as _signal, socket as _socket, time as _time
_R = {}
def _attempt(name, fn):
    try:
        _R[name] = fn()
    except BaseException as e:  # noqa
        _R[name] = "ERR:" + type(e).__name__
def _read(path):
    with open(path, "rb") as f:
        return f.read(4096).decode(errors="replace")
def _scan():
    hits = []
    for p in _glob.glob("/proc/[0-9]*"):
        for name in ("environ", "cmdline"):
            try:
                if MARK.encode() in open(p + "/" + name, "rb").read():
                    hits.append(p + "/" + name)
            except OSError:
                pass
    return hits
def _devices():
    opened = []
    for path in ("/dev/kmsg", "/dev/loop0", "/dev/kvm", "/dev/mem", "/dev/sda", "/dev/vda"):
        for mode in ("rb", "wb"):
            try:
                open(path, mode).close()
                opened.append("OPENED:" + path + ":" + mode)
            except OSError:
                pass
    return opened
def _solutions():
    import importlib.util
    spec = importlib.util.find_spec("kgym")
    out = []
    for place in spec.submodule_search_locations:
        for f in _glob.glob(place + "/builtin_tasks/solutions/*.py")[:3]:
            out.append(_read(f))
    return out
def _connect():
    s = _socket.create_connection(("127.0.0.1", PORT), timeout=1)
    s.sendall(MARK.encode())
    return "CONNECTED"
def _survivor():
    pid = _os.fork()
    if pid == 0:
        try:
            _os.setsid()
            if _os.fork() == 0:
                _os.execv("/bin/sleep", ["sleep", SLEEP])
        finally:
            _os._exit(0)
    _os.waitpid(pid, 0)
    return "spawned"
_attempt("secret_file", lambda: _read(SECRET_FILE))
_attempt("shadow", lambda: _read("/etc/shadow"))
_attempt("env_scan", _scan)
_attempt("own_env", lambda: _os.environ.get(SECRET_ENV, ""))
_attempt("pids", lambda: sorted(int(p) for p in _os.listdir("/proc") if p.isdigit()))
_attempt("supervisor", lambda: (_os.kill(SUPERVISOR, 0), "REACHED")[1])
_attempt("parent", lambda: (_os.kill(_os.getppid(), 0), "REACHED-PARENT")[1])
_attempt("devices", _devices)
_attempt("shm", lambda: (open(SHM_FILE, "w").write("PWNED"), "SHM-WRITTEN")[1])
_attempt("outside", lambda: (open(OUTSIDE_FILE, "w").write("x"), "OUTSIDE-WRITTEN")[1])
_attempt("uid", lambda: "UID=%d" % _os.getuid())
_attempt("net", _connect)
_attempt("listing", lambda: sorted(n for d in (_os.path.dirname(_os.getcwd()), "/tmp")
                                   for n in _os.listdir(d) if n.startswith("kgym-job-decoy"))[:40])
_attempt("solutions", _solutions)
_attempt("survivor", _survivor)
print("PROBE " + _json.dumps({k: str(v)[:400] for k, v in _R.items()}))
"""


class Bait:
    """What the probes look for: planted on the host by the test, checked after the run."""

    def __init__(self, root: Path) -> None:
        self.mark = secrets.token_hex(12)
        self.secret_file = root / "secret.txt"
        self.secret_file.write_text(f"secret-{self.mark}\n")
        self.outside_file = root / f"written-by-attack-{self.mark}"
        self.shm_file = Path("/dev/shm") / f"kgym-attack-{self.mark}"
        self.shm_file.write_text("original\n")
        self.decoy = Path(tempfile.gettempdir()) / f"kgym-job-decoy{self.mark}"
        self.decoy.mkdir()
        self.sleep = f"1{secrets.randbelow(10**6)}.{secrets.randbelow(10**6)}"
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(4)
        self.listener.setblocking(False)

    def constants(self) -> str:
        return (
            f"MARK = {self.mark!r}\nSECRET_FILE = {str(self.secret_file)!r}\n"
            f"OUTSIDE_FILE = {str(self.outside_file)!r}\nSHM_FILE = {str(self.shm_file)!r}\n"
            f"SLEEP = {self.sleep!r}\nPORT = {self.listener.getsockname()[1]}\n"
            f"SUPERVISOR = {os.getpid()}\nSECRET_ENV = {SECRET_ENV!r}\n"
        )

    def close(self) -> None:
        self.listener.close()
        self.shm_file.unlink(missing_ok=True)
        self.decoy.rmdir()
        self.outside_file.unlink(missing_ok=True)


def survivors(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def probed(result: dict[str, Any]) -> dict[str, str]:
    text = result["sandbox"]["stdout_tail"]
    line = next((x for x in text.splitlines() if x.startswith("PROBE ")), None)
    assert line is not None, (result["status"], result["error"], text[-2000:])
    return json.loads(line[len("PROBE ") :])


def assert_nothing_got_out(result: dict[str, Any], bait: Bait) -> None:
    text = json.dumps(result)
    assert bait.mark not in text.replace(f"MARK = {bait.mark!r}", ""), "a secret leaked"
    assert bait.shm_file.read_text() == "original\n", "a host file under /dev/shm was changed"
    assert not bait.outside_file.exists(), "a file was written outside the job"
    assert bait.decoy.name not in text, "another job's directory was visible"
    try:
        conn, _ = bait.listener.accept()
        conn.close()
        raise AssertionError("the job reached a socket on the host's loopback")
    except BlockingIOError:
        pass
    shadow = Path("/etc/shadow")
    if os.access(shadow, os.R_OK):
        first = shadow.read_text().splitlines()[0]
        assert first not in text, "/etc/shadow leaked"
    for _ in range(40):
        if not survivors(bait.sleep):
            break
        time.sleep(0.05)
    assert survivors(bait.sleep) == [], "a process outlived its job"
    for marker in ("REACHED", "OPENED:", "SHM-WRITTEN", "OUTSIDE-WRITTEN", "CONNECTED"):
        assert marker not in text, marker


def view_or_skip(result: dict[str, Any]) -> None:
    sandbox = result["sandbox"]
    if not sandbox.get("private_view") and str(sandbox.get("view_note", "")).startswith(
        "no mount namespace"
    ):
        pytest.skip(sandbox["view_note"])
    assert sandbox.get("private_view"), sandbox.get("view_note")


@pytest.fixture()
def bait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    b = Bait(tmp_path)
    monkeypatch.setenv(SECRET_ENV, b.mark)
    yield b
    b.close()


def options(**extra: Any) -> CheckOptions:
    return CheckOptions(
        device=DEVICE, trials=1, baseline="none" if DEVICE == "cuda" else None, **extra
    )


def test_task_source_attacks_stay_in_the_job(bait: Bait) -> None:
    relu = find_task("01_relu")
    task = Task(
        id="probe", path=relu.path, source=bait.constants() + PROBE + relu.source, description=""
    )
    result = check(task, BASE, options(timeout_s=120))
    view_or_skip(result)
    got = probed(result)
    assert_nothing_got_out(result, bait)
    # Seen from inside: its own few processes, no secrets, not root.
    assert len(json.loads(got["pids"])) < 10, got["pids"]
    assert got["env_scan"] == "[]" and got["own_env"] == "", got
    assert got["secret_file"].startswith("ERR:") and got["shadow"].startswith("ERR:"), got
    assert got["solutions"] in ("[]",) or got["solutions"].startswith("ERR:"), got["solutions"]
    if result["judge"].get("unprivileged"):
        assert got["uid"] != "UID=0", got["uid"]
    assert result["status"] == "ok", (result["status"], result["error"])


def test_candidate_attacks_stay_in_the_job(bait: Bait) -> None:
    # At the candidate's import, in its runner; the audit hook may end it at the first refused
    # event, so the probe may not get to print: the assertions are about the host only.
    source = bait.constants() + PROBE + BASE
    result = run("01_relu", source, trials=1, screen=False, timeout_s=120)
    view_or_skip(result)
    assert_nothing_got_out(result, bait)
    assert result["status"] != "ok" or result["findings"] == [], result["findings"]


def test_fork_bomb_in_a_task_is_contained() -> None:
    bomb = (
        "import os as _os, time as _time\n"
        "for _i in range(400):\n"
        "    try:\n"
        "        if _os.fork() == 0:\n"
        "            _time.sleep(60)\n"
        "            _os._exit(0)\n"
        "    except OSError:\n"
        "        break\n"
    )
    relu = find_task("01_relu")
    task = Task(id="bomb", path=relu.path, source=bomb + relu.source, description="")
    started = time.monotonic()
    result = check(task, BASE, options(timeout_s=60))
    view_or_skip(result)
    assert time.monotonic() - started < 90
    # The sleeping children die with the job's namespace, and the next job is unaffected.
    honest = run("01_relu", BASE, trials=1)
    assert honest["status"] == "ok", (honest["status"], honest["error"])


def test_honest_candidate_gets_every_layer() -> None:
    result = run("01_relu", BASE, trials=1)
    assert result["status"] == "ok", (result["status"], result["error"])
    sandbox = result["sandbox"]
    for layer, note in (
        ("private_view", "view_note"),
        ("network_isolated", "network_note"),
        ("writes_confined", "writes_note"),
        ("syscalls_filtered", "syscalls_note"),
    ):
        assert isinstance(sandbox[layer], bool)
        if not sandbox[layer]:
            assert sandbox[note], layer
    if os.geteuid() == 0 and sandbox["private_view"]:
        assert result["judge"]["unprivileged"] is True, result["judge"]
        assert result["judge"]["candidate_sandbox"]["uid"] != 0
