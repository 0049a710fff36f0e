"""The candidate's compilation before its job holds the GPU.

A candidate's first call compiles its Triton kernels (and, in Triton 3.6, builds each kernel's
launcher with gcc): 0.35 s of a lone job, 0.8-1.9 s in a batch, on the CPU, inside the job's
shared hold of the GPU lock, where it keeps the next timing window waiting
(``bench/service_gpu/results.md``). Compiling needs no GPU: Triton compiles for a target it
is told, and a kernel compiled by a process that launches nothing has the cache key the GPU's
first call looks for (``bench/precompile/results.md``). So the candidate's runner forks a child
before it makes its CUDA context, and that child, which can never reach the GPU, runs the
candidate's forward once on the task's inputs as meta tensors (shapes, no memory) with every
Triton launch made compile-only, into the runner's own Triton cache. The runner's first call,
inside the hold, then finds its kernels and launchers built.

The child runs candidate code outside the GPU's lock, so what it may do is bounded by
construction, not by what the candidate's code looks like:

- it cannot reach the GPU: forked before the runner's CUDA context (a fork after it would
  inherit the driver's descriptors), it closes every descriptor but its own two, then stacks a
  Landlock layer under which the GPU's device nodes (``/dev/nvidia*``) do not open
  (``_core.confine_away_from_devices``); without that layer it runs nothing;
- it has every layer of the runner (uid, PID namespace, seccomp filter, write fence, rlimits)
  and the runner's audit hook, writing to the runner's audit descriptor;
- it ends before the runner runs candidate code, and so does everything it started: the
  runner waits for it (bounded, ``finish``), then kills every other process of its PID
  namespace, of which it is the only member besides that namespace's init. Only a runner in a
  PID namespace of its own starts one;
- what it writes is the runner's own Triton cache, which the runner's candidate code could
  write just as well.

What it is told (the task's file, sizes, seed) comes from the judge in the runner's warm-up
request; the GPU's capability, from the runner once its context is made, through a pipe the
child reads when its first kernel compiles.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path
from typing import Any

# The child's own limit: past it the kernel ends it (SIGALRM's default action), whatever it runs.
CHILD_LIMIT_S = 60
# Exit codes of the child (the audit hook's own, 86, besides).
DONE, FAILED, NO_FENCE = 0, 3, 4
# How long the runner tries to end the processes its child left before it gives up.
SWEEP_S = 2.0


def compile_only(
    arch: int | None = None,
    arch_fd: int = -1,
    depth: list[int] | None = None,
    launchers: list[str] | None = None,
) -> None:
    """Triton in this process compiles for CUDA capability ``arch`` (or the one read from
    ``arch_fd`` when the first kernel compiles: ``major minor``) and launches nothing: a
    stand-in for its CUDA driver without a device, every launch a warm-up that also builds the
    kernel's launcher where Triton builds one per signature, an autotuner's configs each
    compiled. ``depth`` counts the compilations in progress (the audit hook's ``in_launch``:
    Triton's own gcc and ptxas runs are vouched for only then); ``launchers`` gets each
    launcher's outcome (``build_launcher``)."""
    import torch
    from triton.backends.compiler import GPUTarget
    from triton.runtime import driver
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.jit import JITFunction

    known = [arch]
    depth = depth if depth is not None else [0]

    def target_arch() -> int:
        if known[0] is None:
            raw = b""
            while chunk := os.read(arch_fd, 64):
                raw += chunk
            major, minor = (int(x) for x in raw.split())
            known[0] = major * 10 + minor
        assert known[0] is not None
        return known[0]

    class NoDevice:
        backend = "cuda"

        def is_active(self) -> bool:
            return True

        def get_current_device(self) -> int:
            return 0

        def get_current_stream(self, device: int | None = None) -> int:
            return 0

        def get_current_target(self) -> GPUTarget:
            return GPUTarget("cuda", target_arch(), 32)

        def get_active_torch_device(self) -> torch.device:
            return torch.device("meta")

        def get_device_interface(self) -> Any:
            return torch.cuda

        def get_benchmarker(self) -> Any:
            raise RuntimeError("no GPU here: compile only")

    driver.set_active(NoDevice())
    run = JITFunction.run
    launched: set[Any] = set()

    def warm_up(self: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
        depth[0] += 1
        try:
            kernel = run(self, *args, grid=grid, warmup=True, **kwargs)
            # Once a kernel: a forward that launches one kernel per row calls this as often.
            key = getattr(kernel, "hash", None) or id(kernel)
            if key not in launched:
                launched.add(key)
                built = build_launcher(kernel)
                if launchers is not None:
                    launchers.append(built)
            return kernel
        finally:
            depth[0] -= 1

    def every_config(self: Any, *args: Any, **kwargs: Any) -> None:
        for config in self.configs:
            self.fn.run(*args, grid=(1,), warmup=True, **{**kwargs, **config.all_kwargs()})

    JITFunction.run = warm_up  # type: ignore[method-assign]
    Autotuner.run = every_config  # type: ignore[method-assign]


def build_launcher(kernel: Any) -> str:
    """The kernel's launcher, where Triton builds one per signature (a C module built with gcc,
    most of a first call in Triton 3.6: ``bench/judge_compile/results.md``), into the same
    cache: "built", or why not (a Triton whose launcher is generic builds none)."""
    try:
        from triton.backends.nvidia.driver import CudaLauncher

        CudaLauncher(kernel.src, kernel.metadata)
    except Exception as exc:  # noqa: BLE001 - no launcher to build, or no driver library
        return f"{type(exc).__name__}: {str(exc)[:120]}"
    return "built"


class Precompile:
    """The runner's handle on its child: ``start`` (before the CUDA context), ``send_arch``
    (after it), ``finish`` (before any candidate code runs in the runner)."""

    def __init__(self, pid: int, arch_fd: int, cache: Path) -> None:
        self.pid = pid
        self.arch_fd = arch_fd
        self.cache = cache
        self.began = time.perf_counter()
        self.entries_before = _entries(cache)

    @classmethod
    def start(cls, spec: dict[str, Any], audit_fd: int) -> Precompile:
        cache = Path(os.environ.get("TRITON_CACHE_DIR") or ".")
        arch_read, arch_write = os.pipe()
        before = _entries(cache)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child, measured through its exit code
            os.close(arch_write)
            _child(spec, arch_read, audit_fd)
        os.close(arch_read)
        handle = cls(pid, arch_write, cache)
        handle.entries_before = before
        return handle

    def send_arch(self, capability: tuple[int, int] | None) -> None:
        """The GPU's capability (None: the context failed; the child then fails too)."""
        with contextlib.suppress(OSError):
            if capability is not None:
                os.write(self.arch_fd, f"{capability[0]} {capability[1]}".encode())
        self._close_arch()

    def _close_arch(self) -> None:
        if self.arch_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.arch_fd)
            self.arch_fd = -1

    def finish(self, wait_s: float, sweep: bool) -> dict[str, Any]:
        """Waits up to ``wait_s`` for the child, kills it past that, then (``sweep``: only in a
        PID namespace of the caller's own, where that is the candidate's) every process left in
        the namespace. ``status``: done, failed, no fence (the layer could not be applied:
        nothing ran), timed out, audit (stopped by the audit hook); ``swept``: whether nothing
        is left (false without ``sweep``)."""
        self._close_arch()
        deadline = time.monotonic() + max(wait_s, 0.0)
        status = None
        while status is None:
            pid, raw = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                status = raw
            elif time.monotonic() >= deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGKILL)
                _, status = os.waitpid(self.pid, 0)
                status = -1  # ours
            else:
                time.sleep(0.005)
        swept = _sweep() if sweep else False
        code = os.WEXITSTATUS(status) if status >= 0 and os.WIFEXITED(status) else None
        from kgym.harness.audit import AUDIT_EXIT_CODE

        named = {DONE: "done", FAILED: "failed", NO_FENCE: "no fence", AUDIT_EXIT_CODE: "audit"}
        if status == -1:
            outcome = "timed out"
        elif code in named:
            outcome = named[code]
        elif status >= 0 and os.WIFSIGNALED(status):
            outcome = f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
        else:
            outcome = f"exited with code {code}"
        return {
            "status": outcome,
            "seconds": round(time.perf_counter() - self.began, 3),
            "cache_entries": max(_entries(self.cache) - self.entries_before, 0),
            "swept": swept,
        }


def _entries(cache: Path) -> int:
    try:
        return sum(1 for _ in cache.iterdir())
    except OSError:
        return 0


def _sweep() -> bool:
    """SIGKILL to every process of this PID namespace but its init and this one (kill(-1, ...)
    reaches no further than the caller's namespace), until none is left to signal: true when
    none is, within ``SWEEP_S``. The namespace's init reaps what it inherits; a zombie still
    takes a signal, so the check is repeated until they are gone."""
    deadline = time.monotonic() + SWEEP_S
    while True:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            return True
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.002)


def _child(spec: dict[str, Any], arch_fd: int, audit_fd: int) -> None:  # pragma: no cover
    """The forked child (see the module's docstring); never returns: its exit code is its
    report."""
    code = FAILED
    try:
        from kgym import _core
        from kgym.harness.spawn import close_all_but

        # Not the runner's socket to the judge: the child speaks to no one.
        close_all_but({0, 1, 2, arch_fd, audit_fd} - {-1})

        applied, _ = _core.confine_away_from_devices("/dev", "nvidia")
        if not applied:
            code = NO_FENCE
            return
        signal.alarm(CHILD_LIMIT_S)
        import torch

        from kgym.harness import loader
        from kgym.harness.runner import CANDIDATE_MODULE, TASK_MODULE

        torch.set_grad_enabled(False)
        # The task's code first (before the hook, as the judge's own load is): inputs as meta
        # tensors, their shapes and dtypes without their memory.
        task = loader.load_module(Path(spec["task_file"]), TASK_MODULE)
        loader.apply_sizes(task, str(spec.get("sizes", "gpu")))
        with torch.device("meta"):
            torch.manual_seed(int(spec.get("seed", 0)))
            init_inputs = list(task.get_init_inputs())
            inputs = list(task.get_inputs())
        depth = [0]
        # The GPU's capability: the runner's, once its context is made (a test may give it).
        arch = spec.get("arch")
        compile_only(int(arch) if isinstance(arch, int) else None, arch_fd, depth)
        candidate_file = str(spec["candidate_file"])
        if spec.get("audit"):
            from kgym.harness import audit

            audit.install(
                candidate_file,
                audit_fd,
                [str(p) for p in spec.get("protected", [])],
                in_launch=lambda: depth[0] > 0,
            )
        module = loader.load_module(Path(candidate_file), CANDIDATE_MODULE)
        with torch.device("meta"):
            torch.manual_seed(int(spec.get("seed", 0)))
            model = module.ModelNew(*init_inputs)
            model(*inputs)
        code = DONE
    except BaseException:  # noqa: BLE001 - the candidate's, or no compilation: said by the code
        code = FAILED
    finally:
        os._exit(code)
