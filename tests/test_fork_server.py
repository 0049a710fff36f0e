"""The fork server against run_child: the same Result, the same process, the same limits."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import DEVICE, solution_source
from kgym import _core
from kgym.tasks import find_task

pytestmark = pytest.mark.skipif(
    not hasattr(_core, "ForkServer"), reason="kgym._core was built without the fork server"
)

INTERPRETER = {"executable": sys.executable, "options": ["-I", "-X", "faulthandler"]}
SERVER_PROGRAM = {**INTERPRETER, "module": "kgym.harness.forkserver"}
HARNESS_PROGRAM = {**INTERPRETER, "module": "kgym.harness", "args": ["job.json"]}
PASSED_THROUGH = ("PATH", "LD_LIBRARY_PATH", "LANG", "LC_ALL")
PASSED_PREFIXES = ("CUDA_", "NVIDIA_", "TRITON_", "CUBLAS_", "NCCL_", "NVSHMEM_", "TORCH_SYMM_MEM_")


def base_environment() -> list[tuple[str, str]]:
    """The machine's GPU and toolchain variables, as check::evaluate passes them on (with its one
    CUDA hardware queue a context, unless the operator set another)."""
    env = [
        (k, v)
        for k, v in os.environ.items()
        if (k in PASSED_THROUGH or k.startswith(PASSED_PREFIXES))
        and k not in ("TRITON_INTERPRET", "TRITON_CACHE_DIR")
    ]
    if "CUDA_DEVICE_MAX_CONNECTIONS" not in os.environ:
        env.append(("CUDA_DEVICE_MAX_CONNECTIONS", "1"))
    return env


def started_server(*args: str) -> Iterator[Any]:
    with tempfile.TemporaryDirectory(prefix="kgym-fs-home-") as home:
        env = [*base_environment(), ("HOME", home), ("TMPDIR", home)]
        env.append(("PYTHONDONTWRITEBYTECODE", "1"))
        if DEVICE == "cpu":
            env.append(("TRITON_INTERPRET", "1"))  # fixed when the server imports triton
        fs = _core.ForkServer({**SERVER_PROGRAM, "args": list(args)}, env)
        error = fs.start()
        assert error == "", error
        yield fs
        del fs


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    yield from started_server()


@pytest.fixture(scope="module")
def server_with_compiler_stack() -> Iterator[Any]:
    # What a GPU server imports, on any device (a CPU server skips it otherwise).
    yield from started_server("--compiler-stack")


def make_job(tmp: Path, candidate: str, timeout_s: float = 120.0) -> tuple[str, dict[str, Any]]:
    """A job directory as check::evaluate writes it; returns (CheckJob JSON, ChildSpec dict)."""
    task = find_task("01_relu")
    workdir = Path(tempfile.mkdtemp(prefix="job-", dir=tmp))
    (workdir / "task.py").write_text(task.source)
    (workdir / "candidate.py").write_text(candidate)
    harness_job = {
        "task_id": task.id,
        "device": DEVICE,
        "sizes": "auto",
        "trials": 2,
        "seed": 0,
        "atol": None,
        "rtol": None,
        "timing": {"enabled": False},
        "profile": False,
        "torch_compute": "strict",
        "gpu_memory_slack_mib": 4096,  # check::evaluate always writes it (read on a GPU)
        "task_file": "task.py",
        "candidate_file": "candidate.py",
        "report_fd": 3,
    }
    (workdir / "job.json").write_text(json.dumps(harness_job))
    check_job = {
        "task_id": task.id,
        "task_source": task.source,
        "candidate": candidate,
        "device": DEVICE,
        "timeout_s": timeout_s,
    }
    env = [*base_environment(), ("HOME", str(workdir)), ("TMPDIR", str(workdir))]
    env += [("PYTHONDONTWRITEBYTECODE", "1"), ("PYTHONUNBUFFERED", "1")]
    env.append(("TRITON_CACHE_DIR", str(workdir / ".triton")))
    env.append(("OMP_NUM_THREADS", "1"))  # a slot's share of the cores, as the service gives
    if DEVICE == "cpu":
        env.append(("TRITON_INTERPRET", "1"))
    spec = {
        "program": HARNESS_PROGRAM,
        "env": env,
        "workdir": str(workdir),
        "token": os.urandom(32).hex(),
        # As check::evaluate: the harness draws its own write fences, and a fence around the
        # whole job would stop the candidate runner mounting the private /proc CUDA needs.
        "limits": {"wall_seconds": timeout_s, "confine_writes": False},
    }
    return json.dumps(check_job), spec


def run_both(tmp: Path, server: Any, candidate: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(through run_child, through the fork server): each {'outcome': ..., 'result': ...}."""
    out = []
    for launcher in (None, server):
        job, spec = make_job(tmp, candidate)
        r = _core.sandbox_run_harness(job, spec, launcher)
        out.append({"outcome": r["outcome"], "result": json.loads(r["result"])})
    return out[0], out[1]


def incorrect_source() -> str:
    src = solution_source("01_relu")
    assert "tl.where(x > 0.0, x, 0.0)" in src
    return src.replace("tl.where(x > 0.0, x, 0.0)", "tl.where(x > 0.0, x, 1.0)")


CANDIDATES = {
    "correct": lambda: solution_source("01_relu"),
    "incorrect": incorrect_source,
    # (ctypes would be stopped by the candidate runner's audit hook before it faulted.)
    "segfault": lambda: "import faulthandler\nfaulthandler._sigsegv()\n",
    "os_exit": lambda: "import os\nos._exit(3)\n",
    "raises": lambda: "raise RuntimeError('no model here')\n",
}
EXPECTED = {
    "correct": "ok",
    "incorrect": "incorrect",
    "segfault": "crashed",
    "os_exit": "crashed",
    "raises": "compile_error",
}


def drawn_apart(correctness: dict[str, Any] | None) -> dict[str, Any] | None:
    """The correctness record without what the judge draws per evaluation: how many trials
    (all passed, or the same one failed), each stress set's scaled atol (its verdict kept), and
    where a refused output differs most (the element, from the draw; that it differs stays)."""
    if correctness is None:
        return None
    c = dict(correctness)
    c["all_passed"] = c.pop("passed") == c.pop("trials")
    c["input_sets"] = {k: v.get("passed") for k, v in c["input_sets"].items()}
    if isinstance(c.get("mismatch"), str):
        c["mismatch"] = c["mismatch"].split(" (")[0]
    return c


@pytest.mark.parametrize("name", list(CANDIDATES))
def test_same_result_as_run_child(tmp_path: Path, server: Any, name: str) -> None:
    exec_run, fork_run = run_both(tmp_path, server, CANDIDATES[name]())
    a, b = exec_run["result"], fork_run["result"]
    assert fork_run["outcome"]["started"], fork_run["outcome"]["start_error"]
    assert b["status"] == a["status"] == EXPECTED[name], (a, b)
    for key in ("compiled", "correct", "hacked", "findings"):
        assert b[key] == a[key], key
    assert drawn_apart(b["correctness"]) == drawn_apart(a["correctness"])
    assert (a["error"] is None) == (b["error"] is None)
    if a["error"] is not None:
        assert (b["error"]["phase"], b["error"]["type"]) == (
            a["error"]["phase"],
            a["error"]["type"],
        )
    for key in ("exit_code", "signal", "network_isolated", "writes_confined", "timed_out"):
        assert b["sandbox"][key] == a["sandbox"][key], key


def test_server_survives_candidate_crashes(tmp_path: Path, server: Any) -> None:
    pid, restarts = server.server_pid, server.restarts
    for name in ("segfault", "os_exit"):
        job, spec = make_job(tmp_path, CANDIDATES[name]())
        r = _core.sandbox_run_harness(job, spec, server)
        # The candidate's process died; the judge, the job's own process, reported it.
        assert r["outcome"]["started"]
        assert json.loads(r["result"])["status"] == "crashed"
    assert (server.server_pid, server.restarts) == (pid, restarts)
    _, spec = make_job(tmp_path, solution_source("01_relu"))
    assert server.run(spec)["exit_code"] == 0


def live_in_directory(directory: Path) -> list[int]:
    """Processes whose working directory is inside ``directory`` (zombies have none)."""
    live = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if cwd.startswith(str(directory)):
            live.append(int(entry.name))
    return live


def test_hung_candidate_is_killed_at_the_deadline(tmp_path: Path, server: Any) -> None:
    job, spec = make_job(tmp_path, "import time\ntime.sleep(60)\n", timeout_s=3.0)
    pid = server.server_pid
    started = time.monotonic()
    r = _core.sandbox_run_harness(job, spec, server)
    assert time.monotonic() - started < 10
    outcome, result = r["outcome"], json.loads(r["result"])
    assert outcome["timed_out"] and outcome["signal"] == signal.SIGKILL
    assert result["status"] == "timeout"
    assert server.server_pid == pid


def test_killed_server_fails_the_job_and_is_restarted(tmp_path: Path, server: Any) -> None:
    # The candidate (which leaves a mark that it started) sleeps: it may not outlive the server.
    # (It cannot start children of its own: the audit hook stops that.)
    candidate = "import time\nopen('started', 'w').write('yes')\ntime.sleep(60)\n"
    job, spec = make_job(tmp_path, candidate, timeout_s=60.0)
    victim, restarts = server.server_pid, server.restarts
    killer = threading.Timer(3.0, os.kill, (victim, signal.SIGKILL))
    killer.start()
    started = time.monotonic()
    try:
        r = _core.sandbox_run_harness(job, spec, server)
    finally:
        killer.cancel()
    assert time.monotonic() - started < 15
    outcome, result = r["outcome"], json.loads(r["result"])
    assert not outcome["started"]
    assert "fork server died during the job" in outcome["start_error"], outcome["start_error"]
    assert "SIGKILL" in outcome["start_error"]
    assert result["status"] == "infra_error"
    assert (Path(spec["workdir"]) / "runner-candidate" / "started").exists(), outcome
    time.sleep(0.2)
    # (In its PID namespace the candidate cannot see its process group: look for any process
    # still working in the job's directory instead.)
    assert live_in_directory(Path(spec["workdir"])) == []

    job, spec = make_job(tmp_path, solution_source("01_relu"))
    after = _core.sandbox_run_harness(job, spec, server)
    assert json.loads(after["result"])["status"] == "ok", after
    assert server.restarts == restarts + 1
    assert server.server_pid not in (victim, -1)


INTROSPECT = """
import json, os, sys, tempfile
def target(fd):
    try:  # "socket:[inode]" -> "socket": inode numbers differ between runs
        return os.readlink(f"/proc/self/fd/{fd}").split(":[")[0]
    except OSError:
        return "?"
print(json.dumps({
    "env": dict(os.environ),
    "fds": sorted((fd, target(fd)) for fd in os.listdir("/proc/self/fd")),
    "cwd": os.getcwd(),
    "pid": os.getpid(),
    "argv": sys.argv,
    "path": sys.path,
    "flags": list(sys.flags),
    "tempdir": tempfile.gettempdir(),
    "home": os.path.expanduser("~"),
    "limits": [l for l in open("/proc/self/limits") if "file size" in l or "core" in l],
    "no_new_privs": [l for l in open("/proc/self/status") if l.startswith("NoNewPrivs")],
    "threads": __import__("torch").get_num_threads(),
}), flush=True)
os._exit(0)
"""


def test_environment_and_descriptors_match_run_child(tmp_path: Path, server: Any) -> None:
    seen = []
    for launcher in (None, server):
        job, spec = make_job(tmp_path, INTROSPECT)
        r = _core.sandbox_run_harness(job, spec, launcher)
        stdout = r["outcome"]["stdout_tail"]
        seen.append(json.loads(stdout.replace(spec["workdir"], "<job>")))
    exec_view, fork_view = seen
    assert fork_view == exec_view
    # The job's share of the cores holds in a forked child too, whose OpenMP had read its
    # thread count when the server loaded torch.
    assert fork_view["threads"] == 1
    # The candidate runs in its runner's private directory, as PID 2 of its own PID namespace
    # (its init is PID 1).
    private = "<job>/runner-candidate"
    assert fork_view["env"]["HOME"] == fork_view["env"]["TMPDIR"] == private
    assert fork_view["cwd"] == fork_view["tempdir"] == fork_view["home"] == private
    assert fork_view["pid"] == 2
    # stdin, stdout, stderr, the runner's socket to the judge and listdir's own descriptor: the
    # harness has taken the report channel off fd 3 and closed the token's fd 4 before the
    # candidate was imported. On a GPU the runner has started CUDA by then, and the driver's
    # own descriptors (its device files, event and pipe handles) come on top.
    fds = fork_view["fds"]
    own = [(fd, t) for fd, t in fds if int(fd) <= 2 or DEVICE == "cpu" or not is_cuda_driver(t)]
    assert len(own) <= 6, fds
    assert not any("<job>" in t for _, t in fds), fds  # nothing of the job's files is open


def is_cuda_driver(target: str) -> bool:
    return target.startswith(("/dev/nvidia", "anon_inode", "pipe"))


FLOOD = """
import os
# The report channel is the judge's: the candidate's runner has only its socket to the judge
# (on a GPU, the CUDA driver may hold sockets of its own). Flood every socket with garbage.
sockets = []
for fd in os.listdir("/proc/self/fd"):
    try:
        if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
            os.set_blocking(int(fd), False)
            sockets.append(int(fd))
    except OSError:
        pass
chunk = b"x" * 65536
while True:
    for fd in sockets:
        try:
            os.write(fd, chunk)
        except OSError:
            pass
"""


def test_report_flood_is_cut_as_by_run_child(tmp_path: Path, server: Any) -> None:
    seen = []
    for launcher in (None, server):
        job, spec = make_job(tmp_path, FLOOD, timeout_s=60.0)
        spec["limits"]["max_report_bytes"] = 1 << 20
        r = _core.sandbox_run_harness(job, spec, launcher)
        seen.append((r["outcome"], json.loads(r["result"])))
    (exec_outcome, exec_result), (fork_outcome, fork_result) = seen
    # The judge reads the garbage as a reply that breaks the protocol and kills the runner.
    assert not exec_outcome["timed_out"] and not fork_outcome["timed_out"]
    assert fork_result["status"] == exec_result["status"] == "rejected"
    assert {f["rule"] for f in fork_result["findings"]} == {"runner-protocol"}


def test_not_the_harness_is_refused(server: Any) -> None:
    outcome = server.run(
        {"program": {"executable": "/bin/sh", "args": ["-c", "true"]}, "workdir": "/tmp"}
    )
    assert not outcome["started"]
    assert "kgym.harness" in outcome["start_error"]


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`python -c code` in this environment less TRITON_INTERPRET (a GPU server's), plus env."""
    base = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={**base, **env},
    )


def test_warm_up_imports_the_compiler_stack_without_touching_cuda() -> None:
    # The profiler's first start imports these in every runner otherwise, and a candidate's
    # first kernel computes Triton's key and imports Gluon; a forked runner could not use CUDA
    # had any of it initialised it.
    code = (
        "import sys, torch\n"
        "from kgym.harness import forkserver\n"
        "forkserver.warm_up()\n"
        "assert 'torch._dynamo' in sys.modules and 'torch._inductor.config' in sys.modules\n"
        "from triton.runtime import cache\n"
        "assert cache.triton_key.cache_info().currsize == 1\n"
        "assert 'triton.experimental.gluon' in sys.modules\n"
        "from kgym.harness import triton_warm\n"
        # On a GPU the helpers are built (gcc, the driver's library); elsewhere they may be or not.
        f"assert triton_warm.has_helpers() or {DEVICE != 'cuda'}\n"
        "assert not torch.cuda.is_initialized()\n"
        "assert not forkserver._cuda_driver_initialised()\n"
        "print('ok')\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n"


@pytest.mark.parametrize(
    ("env", "args", "imported"),
    [
        # A CPU server imports Dynamo, which every judge's TorchDispatchMode needs, and no
        # more (no kernel trace, no warm Triton compiler).
        ({"TRITON_INTERPRET": "1"}, [], "True False"),
        ({"TRITON_INTERPRET": "1"}, ["--compiler-stack"], "True True"),
        ({}, ["--without-compiler-stack"], "False False"),  # started again without it
    ],
)
def test_cpu_servers_import_dynamo_alone_and_one_started_again_nothing(
    env: dict[str, str], args: list[str], imported: str
) -> None:
    code = (
        "import sys\n"
        f"sys.argv += {args!r}\n"
        "from kgym.harness import forkserver\n"
        "forkserver.import_compiler_stack()\n"
        "print('torch._dynamo' in sys.modules, 'kgym.harness.kernel_trace_build' in sys.modules)\n"
    )
    done = _python(code, **env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{imported}\n"


# The same command again, by exec, in the same process; the second run skips the imports.
STARTED_AGAIN = "start first\nstart again\nno dynamo\n"


@pytest.mark.parametrize(
    ("hazard", "stdout", "said"),
    [
        ("forkserver._cuda_driver_initialised = lambda: True", STARTED_AGAIN, "initialised CUDA"),
        (
            "ids = iter([{'1'}, {'1', '2'}])\nforkserver._thread_ids = lambda: next(ids)",
            STARTED_AGAIN,
            "started threads",
        ),
        # The fork that compiles the fused check stops OpenBLAS's pool threads in the server
        # (its prepare handler: 16 threads before, 1 after on a 16-core GPU machine): a thread
        # gone is no hazard, and the server keeps the stack.
        (
            "ids = iter([{'1', '2', '3'}, {'1'}])\nforkserver._thread_ids = lambda: next(ids)",
            "start first\ndynamo\n",
            "",
        ),
    ],
)
def test_a_server_starts_again_without_the_stack_only_if_its_imports_are_unsafe_to_fork(
    hazard: str, stdout: str, said: str
) -> None:
    code = (
        "import os, sys\n"
        "from kgym.harness import forkserver\n"
        "again = forkserver.WITHOUT_COMPILER_STACK in sys.argv\n"
        "print('start', 'again' if again else 'first', flush=True)\n"
        f"{hazard}\n"
        "forkserver.import_compiler_stack()\n"
        "print('dynamo' if 'torch._dynamo' in sys.modules else 'no dynamo', flush=True)\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout == stdout
    assert said in done.stderr
    if not said:
        assert "starting again" not in done.stderr


HOSTILE = Path(__file__).parent / "hostile"
JUDGED_ALIKE = {
    "correct": lambda: solution_source("01_relu"),
    "incorrect": incorrect_source,
    **{
        name: lambda name=name: (HOSTILE / f"01_relu__{name}.py").read_text()
        for name in ("patch_harness_sys_modules", "patch_task_model_forward", "patch_perf_counter")
    },
}


@pytest.mark.parametrize("name", list(JUDGED_ALIKE))
def test_runners_that_inherit_the_compiler_stack_are_judged_alike(
    tmp_path: Path, server_with_compiler_stack: Any, name: str
) -> None:
    exec_run, fork_run = run_both(tmp_path, server_with_compiler_stack, JUDGED_ALIKE[name]())
    a, b = exec_run["result"], fork_run["result"]
    assert fork_run["outcome"]["started"], fork_run["outcome"]["start_error"]
    for key in ("status", "compiled", "correct", "hacked"):
        assert b[key] == a[key], (key, a, b)
    assert {f["rule"] for f in b["findings"]} == {f["rule"] for f in a["findings"]}


def test_the_candidates_runner_inherits_the_compiler_stack(
    tmp_path: Path, server_with_compiler_stack: Any
) -> None:
    probe = "import sys\nraise RuntimeError(f\"dynamo={'torch._dynamo' in sys.modules}\")\n"
    job, spec = make_job(tmp_path, probe)
    result = json.loads(_core.sandbox_run_harness(job, spec, server_with_compiler_stack)["result"])
    assert result["status"] == "compile_error"
    assert "dynamo=True" in result["error"]["message"], result["error"]


def test_the_servers_triton_helpers_are_copied_into_a_private_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kgym.harness import triton_warm

    monkeypatch.setattr(triton_warm, "_helpers", {})
    cache = tmp_path / "triton-cache"
    triton_warm.seed_cache(cache)
    assert not cache.exists()  # nothing built (a CPU server): nothing copied, nothing made
    helpers = {"KEY/cuda_utils.so": b"built by the server"}
    monkeypatch.setattr(triton_warm, "_helpers", helpers)
    triton_warm.seed_cache(cache)
    assert (cache / "KEY" / "cuda_utils.so").read_bytes() == b"built by the server"
    (cache / "KEY" / "cuda_utils.so").write_bytes(b"changed by one job")
    triton_warm.seed_cache(tmp_path / "another")  # a copy each: one job's change stays its own
    assert (tmp_path / "another" / "KEY" / "cuda_utils.so").read_bytes() == b"built by the server"


def test_only_the_judge_gets_the_compiled_fused_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kgym.harness import triton_warm

    monkeypatch.setattr(triton_warm, "_helpers", {"KEY/cuda_utils.so": b"helpers"})
    monkeypatch.setattr(triton_warm, "_judge_kernels", {"CHECK/fused.cubin": b"check"})
    triton_warm.seed_cache(tmp_path / "runner")
    assert not (tmp_path / "runner" / "CHECK").exists()
    triton_warm.seed_cache(tmp_path / "judge", judge_kernels=True)
    assert (tmp_path / "judge" / "CHECK" / "fused.cubin").read_bytes() == b"check"
    assert (tmp_path / "judge" / "KEY" / "cuda_utils.so").read_bytes() == b"helpers"


def test_the_copied_fused_checks_group_names_its_files_in_the_new_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Triton's group file names a kernel's files by absolute path; where one is missing it
    compiles again. The copy names them where they were copied."""
    import json

    from kgym.harness import triton_warm

    root = "/scratch/kgym-triton-judge-kernels-1"
    group = {"child_paths": {"k.cubin": f"{root}/HASH/k.cubin", "k.json": f"{root}/HASH/k.json"}}
    monkeypatch.setattr(triton_warm, "_helpers", {})
    monkeypatch.setattr(triton_warm, "_judge_kernels_root", root)
    monkeypatch.setattr(
        triton_warm,
        "_judge_kernels",
        {
            "HASH/__grp__k.json": json.dumps(group).encode(),
            "HASH/k.cubin": b"cubin",
            "OTHER/__grp__bad.json": b"not json",
        },
    )
    judge = tmp_path / "judge"
    triton_warm.seed_cache(judge, judge_kernels=True)
    copied = json.loads((judge / "HASH" / "__grp__k.json").read_text())
    where = str(judge.resolve())
    assert copied["child_paths"] == {
        "k.cubin": f"{where}/HASH/k.cubin",
        "k.json": f"{where}/HASH/k.json",
    }
    assert (judge / "HASH" / "k.cubin").read_bytes() == b"cubin"
    assert (judge / "OTHER" / "__grp__bad.json").read_bytes() == b"not json"


def test_triton_finds_the_copied_group_in_the_judges_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same with Triton's own cache manager: a group put in one cache, kept, copied into
    another (the first one gone) is found there."""
    import shutil

    from triton.runtime.cache import FileCacheManager

    from kgym.harness import triton_warm

    scratch = (tmp_path / "scratch").resolve()
    monkeypatch.setenv("TRITON_CACHE_DIR", str(scratch))
    made = FileCacheManager("KEYHASH")
    group = {"k.cubin": made.put(b"cubin", "k.cubin"), "k.json": made.put("{}", "k.json")}
    made.put_group("k.json", group)
    kept: dict[str, bytes] = {}
    triton_warm._keep_files(scratch, kept)
    shutil.rmtree(scratch)
    monkeypatch.setattr(triton_warm, "_helpers", {})
    monkeypatch.setattr(triton_warm, "_judge_kernels", kept)
    monkeypatch.setattr(triton_warm, "_judge_kernels_root", str(scratch))
    judge = tmp_path / "judge"
    triton_warm.seed_cache(judge, judge_kernels=True)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(judge))
    found = FileCacheManager("KEYHASH").get_group("k.json")
    assert found is not None and set(found) == {"k.cubin", "k.json"}


def test_the_fused_checks_compilation_is_a_child_and_says_why_not() -> None:
    """The server never touches CUDA: a child compiles. Without a GPU the child says so by its
    status, the server keeps nothing and goes on; a child that hangs is killed."""
    code = (
        "import os, time\n"
        "from kgym.harness import forkserver, triton_warm\n"
        "why = triton_warm._compile_judge_kernels()\n"
        f"assert (why == '') == {DEVICE == 'cuda'}, why\n"
        f"assert triton_warm.has_judge_kernels() == {DEVICE == 'cuda'}\n"
        "assert not forkserver._cuda_driver_initialised()\n"
        # What the child found the GPU to be, for the candidates' compilations ahead.
        f"assert (triton_warm.gpu_capability() is not None) == {DEVICE == 'cuda'}\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    time.sleep(60)\n"
        "    os._exit(0)\n"
        "began = time.monotonic()\n"
        "assert triton_warm._wait(pid, 0.3) is None\n"
        "assert time.monotonic() - began < 10\n"
        "if triton_warm.gpu_capability() is not None:\n"
        "    import torch\n"
        "    assert triton_warm.gpu_capability() == torch.cuda.get_device_capability(0)\n"
        "print('ok', why)\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok"), done.stdout


@pytest.mark.parametrize(
    ("written", "read"),
    [
        (b"9 0", (9, 0)),
        (b"12 1", (12, 1)),
        (b"", None),  # the child wrote nothing (no GPU)
        (b"9", None),
        (b"nine zero", None),
        (b"0 0", None),
        (b"9 0 " + b"0" * 100, None),
    ],
)
def test_the_capability_is_read_only_when_it_makes_sense(
    written: bytes, read: tuple[int, int] | None
) -> None:
    from kgym.harness import triton_warm

    said, told = os.pipe()
    os.write(told, written)
    os.close(told)
    try:
        assert triton_warm._read_capability(said) == read
    finally:
        os.close(said)


@pytest.mark.skipif(DEVICE != "cuda", reason="the compilation ahead runs for GPU jobs only")
def test_a_forked_judge_gives_its_compilation_ahead_the_servers_capability(
    tmp_path: Path, server: Any
) -> None:
    """Through the fork server the candidate's child compiles from its start, for the GPU the
    server's child found; a judge started afresh has no server, and its child waits for the
    runner's context. Either way the runner's first call finds its kernels compiled."""
    exec_run, fork_run = run_both(tmp_path, server, solution_source("01_relu"))
    for run_, arch_from in ((exec_run, "runner"), (fork_run, "judge")):
        result = run_["result"]
        assert result["status"] == "ok", result.get("error")
        ahead = result["judge"]["precompile"]
        assert ahead["status"] == "done", ahead
        assert ahead["arch_from"] == arch_from, ahead
        assert ahead["cache_entries"] >= 1, ahead
        assert result["judge"]["checks_warm_ahead_ms"] >= 0  # float32's, from the hold's start


def _in_an_unseeded_and_a_seeded_child(tmp_path: Path, warmed: str, child: str) -> str:
    """Code that warms the compiler as a fork server does (``triton_warm.<warmed>()`` must
    then hold), then forks one child with an unseeded and one with a seeded cache of its own
    (``cache``, ``seeded``; ``TRITON_CACHE_DIR``), runs ``child`` in each, and prints each
    child's exit status."""
    body = "".join(f"        {line}\n" for line in child.splitlines())
    return (
        "import os\n"
        "from pathlib import Path\n"
        "from kgym.harness import triton_warm\n"
        "triton_warm.warm_compiler()\n"
        f"assert triton_warm.{warmed}()\n"
        "for seeded in (False, True):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        f"        cache = Path({str(tmp_path)!r}) / f'cache-{{seeded}}'\n"
        "        os.environ['TRITON_CACHE_DIR'] = str(cache)\n"
        f"{body}"
        "    _, status = os.waitpid(pid, 0)\n"
        "    print(seeded, os.waitstatus_to_exitcode(status))\n"
    )


@pytest.mark.skipif(DEVICE != "cuda", reason="the fused check compiles for a GPU only")
def test_a_seeded_judge_loads_its_timing_kernels_without_compiling_them(tmp_path: Path) -> None:
    """What the copy is for: a judge forked from a warmed server, its cache seeded, finds the
    fused check and the normal draw compiled; unseeded, the same warm-ups add their compilation
    to the cache (so the check can fail)."""
    code = _in_an_unseeded_and_a_seeded_child(
        tmp_path,
        "has_judge_kernels",
        "triton_warm.seed_cache(cache, judge_kernels=seeded)\n"
        # A compilation adds files or writes them again (a new file each: a new inode).
        "files = lambda: {p: p.stat().st_ino for p in cache.rglob('*') if p.is_file()}\n"
        "before = files()\n"
        "import torch\n"
        "from kgym.harness.kernels import fast_normals, fused_check\n"
        "note = fused_check.warm(torch.device('cuda', 0))\n"
        "note = note or fast_normals.warm(torch.device('cuda', 0))\n"
        "changed = files() != before\n"
        "os._exit(10 + changed if note is None else 2)\n",
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    # Unseeded, the warm-up compiled (11: files added); seeded, it found them all (10).
    assert done.stdout == "False 11\nTrue 10\n", done.stderr


def test_the_copy_follows_no_link_and_writes_over_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kgym.harness import triton_warm

    monkeypatch.setattr(triton_warm, "_helpers", {"KEY/cuda_utils.so": b"built by the server"})
    outside = tmp_path / "outside"
    outside.mkdir()
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "KEY").symlink_to(outside)  # a folder of the cache is a link
    triton_warm.seed_cache(linked)
    assert list(outside.iterdir()) == []
    filed = tmp_path / "filed" / "KEY"
    filed.mkdir(parents=True)
    (filed / "cuda_utils.so").symlink_to(outside / "target")  # the file itself is a link
    triton_warm.seed_cache(tmp_path / "filed")
    assert not (outside / "target").exists()
    kept = tmp_path / "kept" / "KEY"
    kept.mkdir(parents=True)
    (kept / "cuda_utils.so").write_bytes(b"already there")
    triton_warm.seed_cache(tmp_path / "kept")
    assert (kept / "cuda_utils.so").read_bytes() == b"already there"


@pytest.mark.skipif(DEVICE != "cuda", reason="Triton builds its driver helpers on a GPU only")
def test_a_seeded_process_loads_the_helpers_without_building_them(tmp_path: Path) -> None:
    """What the copy is for: a runner forked from a warmed server, its cache seeded, loads
    Triton's driver helpers and builds nothing (a Triton whose cache keys changed would make
    every job build them again, silently)."""
    code = _in_an_unseeded_and_a_seeded_child(
        tmp_path,
        "has_helpers",
        "if seeded:\n"
        "    triton_warm.seed_cache(cache)\n"
        "import triton.runtime.build as build\n"
        "def refuse(*a, **k):\n"
        "    os._exit(3)  # Triton went to gcc\n"
        "build._build = refuse\n"
        "from triton.backends.nvidia.driver import CudaUtils\n"
        "CudaUtils()\n"
        "os._exit(0)\n",
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    # Unseeded, Triton builds (so the check can fail); seeded, it loads the copy.
    assert done.stdout == "False 3\nTrue 0\n", done.stderr
