"""The fork server: a warm interpreter that forks one sandboxed harness child per job.

The C++ supervisor (``kgym::sandbox::ForkServer``) starts it as
``python -I -X faulthandler -m kgym.harness.forkserver`` with the control socket on descriptor 3
and the environment the imports need (``TRITON_INTERPRET=1`` for CPU jobs: triton is imported
here, once). It imports what every evaluation imports (torch's compiler stack too:
``import_compiler_stack``), then hands over to ``_core.forkserver_serve``, which loops in C++:
for each job it forks, and the child applies the same sandbox as an exec'd harness child
(process group, network namespace, write fence, rlimits, descriptors 0-4 only) and takes the
job's environment and directory before it returns here. The child then runs the harness
exactly as ``python -m kgym.harness job.json`` would.

The server never runs a candidate and never initialises CUDA (a forked child could not use it):
nothing here calls into torch.cuda, ``torch.cuda.is_available()`` included.
"""

from __future__ import annotations

import gc
import os
import sys
import traceback
from typing import Any, NoReturn

from kgym import _core

CONTROL_FD = 3

# OpenMP's workers sleep when idle instead of spinning: the judge and its runners are forked
# from here, and jobs share cores (evaluations side by side, a service's slots). With libgomp's
# default spin, two CPU evaluations at once on two cores took about twice as long as with
# sleeping workers (bench/shared_cores): the judge's float64 checks are many small parallel
# regions, each waiting on a spinning thread that has no core. Read once, when torch loads
# libgomp below, and kept by every child; an operator's own setting stands.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def warm_up() -> None:
    """Imports everything an evaluation imports before it reads the candidate."""
    import torch  # noqa: F401
    import torch.testing  # noqa: F401
    import triton  # noqa: F401
    import triton.language  # noqa: F401
    import triton.testing  # noqa: F401

    from kgym.harness import (  # noqa: F401
        __main__,
        channel,
        compare,
        device,
        errors,
        guards,
        kernel_trace,
        loader,
    )
    from kgym.harness.judge import evaluation  # noqa: F401

    import_compiler_stack()


# The server's arguments: a GPU server's imports on a CPU server too (the tests' way to fork jobs
# from a server that holds the stack on a machine without a GPU); and the argument a server that
# re-executes itself without the stack starts with, which wins.
WITH_COMPILER_STACK = "--compiler-stack"
WITHOUT_COMPILER_STACK = "--without-compiler-stack"


def _cuda_driver_initialised() -> bool:
    """Whether anything in this process has initialised the CUDA driver (cuInit).

    Asked of the driver itself, without initialising it: before cuInit, cuDeviceGetCount
    answers CUDA_ERROR_NOT_INITIALIZED. A process whose driver was never loaded has not been
    initialised either, and the library is not loaded here just to ask."""
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
        if "libcuda.so" not in maps.read():
            return False
    import ctypes

    count = ctypes.c_int(0)
    cuda_error_not_initialized = 3
    driver = ctypes.CDLL("libcuda.so.1")
    return int(driver.cuDeviceGetCount(ctypes.byref(count))) != cuda_error_not_initialized


def _thread_ids() -> set[str]:
    """The process's threads. Compared by id, not counted: a fork's prepare handlers stop some
    pools' threads in the parent (OpenBLAS's: 16 on a 16-core GPU machine, gone after the fork
    that compiles the fused check), and a thread gone is no hazard; a new one is."""
    return set(os.listdir("/proc/self/task"))


def import_compiler_stack() -> None:
    """Imports Dynamo and Inductor here, once, for every job's runners to inherit, and does
    Triton's start-up work that is the same for every job (``triton_warm``).

    torch.compile of the reference (``baseline`` ``compile`` or ``both``) imports them at its
    first call, seconds of CPU work in the reference's runner. (They were imported for
    torch.profiler's first start too, in both runners, until the kernel trace replaced the
    profiler: kernel_trace.py.) CPU jobs (``TRITON_INTERPRET=1``, which kgym-gym sets for them
    alone) skip the rest of it and its cost (about 2 s more of each server's start on a 2-core
    CPU, and the memory), but Dynamo: every judge enters a ``TorchDispatchMode``
    (``stress.Tf32Operands``), whose first entry imports it, 0.9-1.4 s of each CPU job's
    correctness phase on a 2-core CPU before it was imported here. A GPU server also builds
    the runners' kernel trace here, once (``kernel_trace_build``).

    A forked child cannot use CUDA if its parent initialised the driver, and a thread that a
    fork leaves behind may hold a lock the child then waits for forever; so the imports must
    have done neither. Both are checked afterwards (the driver is asked, the process's threads
    are counted), and a server whose imports did either (some other torch build) replaces
    itself, by exec, with a server that skips them."""
    if WITHOUT_COMPILER_STACK in sys.argv:
        return
    cpu_jobs = os.environ.get("TRITON_INTERPRET") == "1" and WITH_COMPILER_STACK not in sys.argv
    import torch  # noqa: F401 - first: its own threads are not the stack's

    threads = _thread_ids()
    import torch._dynamo  # noqa: F401

    if not cpu_jobs:
        import torch._inductor.config  # noqa: F401

        from kgym.harness import kernel_trace_build, triton_warm

        triton_warm.warm_compiler()
        why_not = kernel_trace_build.warm()
        if why_not:
            print(f"kgym fork server: no kernel trace on this host ({why_not})", file=sys.stderr)

    why = ""
    if _cuda_driver_initialised():
        why = "initialised CUDA"
    elif started := len(_thread_ids() - threads):
        why = f"started threads ({started} new, {len(threads)} before)"
    if why:
        print(
            f"kgym fork server: importing torch's compiler stack (or warming Triton) {why}; "
            "starting again without it (each runner imports it when it needs it)",
            file=sys.stderr,
            flush=True,
        )
        os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:], WITHOUT_COMPILER_STACK])


def _refresh_environment_snapshots() -> None:
    """Values the imports computed from the server's environment, recomputed from the job's.

    A fresh interpreter computes them from the job's environment; without this a job would see
    the server's HOME or TMPDIR in them.
    """
    tempfile = sys.modules.get("tempfile")
    if tempfile is not None:
        tempfile.tempdir = None
    knobs = sys.modules.get("triton.knobs")
    home = getattr(type(getattr(knobs, "cache", None)), "__dict__", {}).get("home_dir")
    if home is not None and hasattr(home, "default"):
        home.default = os.path.expanduser("~/")  # TRITON_HOME's default: ~ at import time


# PEP 538's coercion targets: a fresh interpreter in the C locale sets LC_CTYPE to one of them.
_COERCION_TARGETS = ("C.UTF-8", "C.utf8", "UTF-8")


def _job_environment(job_env: dict[str, str], server_env: dict[str, str]) -> dict[str, str]:
    """The environment a fresh interpreter started with job_env would have: job_env plus the
    LC_CTYPE that PEP 538 adds when the locale is C or POSIX (the server's start-up added the same
    to its own, which shows that coercion is on and which target this machine has)."""
    target = server_env.get("LC_CTYPE")
    if target not in _COERCION_TARGETS or job_env.get("LC_ALL"):
        return job_env
    ctype = job_env.get("LC_CTYPE") or job_env.get("LANG") or "C"
    if ctype in ("C", "POSIX"):
        job_env = {**job_env, "LC_CTYPE": target}
    return job_env


def _exit_code(exc: SystemExit) -> int:
    """What the interpreter would exit with for this SystemExit."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def run_job(job: dict[str, Any]) -> NoReturn:
    """In the job child (already sandboxed): become ``python -m kgym.harness ARGS`` and run."""
    # The C environment is the job's already; os.environ is the server's snapshot until here.
    env: dict[str, str] = {}
    for key, value in job["env"]:
        env.setdefault(os.fsdecode(key), os.fsdecode(value))  # the first of duplicates, as exec
    env = _job_environment(env, dict(os.environ))
    os.environ.clear()
    os.environ.update(env)
    _refresh_environment_snapshots()
    from kgym.harness import __main__ as entry

    sys.argv = [entry.__file__, *job["args"]]
    code = 1
    try:
        entry.main(sys.argv)  # ends with os._exit(0) after its report
        code = 0
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException:  # noqa: BLE001 - reported as the interpreter would, then exit 1
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a closed stream must not change the exit code
                pass
    os._exit(code)


def serve(control_fd: int = CONTROL_FD) -> int:
    warm_up()
    # Nothing buffered here may be written again by every child.
    sys.stdout.flush()
    sys.stderr.flush()
    # The children then share the server's objects copy-on-write: no collection touches them.
    gc.collect()
    gc.freeze()
    job = _core.forkserver_serve(control_fd)
    if job is None:
        return 0  # the supervisor has gone
    run_job(job)


if __name__ == "__main__":
    sys.exit(serve())
