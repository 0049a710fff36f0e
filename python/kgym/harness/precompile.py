"""The candidate's compilation before its job holds the GPU.

A candidate's first call compiles its Triton kernels (and, in Triton 3.6, builds each kernel's
launcher with gcc): 0.35 s of a lone job, 0.8-1.9 s in a batch, on the CPU, inside the job's
shared hold of the GPU lock, where it keeps the next timing window waiting
(``bench/service_gpu``). Compiling needs no GPU: Triton compiles for a target it
is told, and a kernel compiled by a process that launches nothing has the cache key the GPU's
first call looks for (``bench/precompile``). So the candidate's runner forks a child
before it makes its CUDA context, and that child, which can never reach the GPU, runs the
candidate's forward once on the task's inputs as meta tensors (shapes, no memory) that pass
for CUDA tensors (``looks_like_cuda``: code that branches on ``x.is_cuda`` takes its GPU
branch), with every Triton launch made compile-only, into a cache of its own, which the
runner takes as its Triton cache once the child has ended. The runner's first call, inside the hold, then finds
its kernels and launchers built.

The child runs candidate code outside the GPU's lock and beside its runner's trusted start, so
what it may do is bounded by construction, not by what the candidate's code looks like:

- it cannot reach the GPU: forked before the runner's CUDA context (a fork after it would
  inherit the driver's descriptors), it keeps only its pipe and the audit descriptor (its
  standard streams go to ``/dev/null``), then stacks a Landlock layer
  (``_core.confine_away_from_devices``, ``sandbox/device_fence``) under which the GPU's device
  nodes (``/dev/nvidia*``) do not open and no device file reached another way takes an ioctl;
  without that layer it runs nothing;
- it cannot touch what the runner reads or the runner itself: under the same layer it writes
  only beneath its own directory (not the runner's cache, whose driver helpers the runner loads
  while the child runs), and no signal of its reaches a process outside the layer (the runner
  included), nor does it connect to an abstract socket outside it;
- it has every layer of the runner (uid, PID namespace, seccomp filter, write fence, rlimits)
  and the runner's audit hook, writing to the runner's audit descriptor;
- it ends before the runner runs candidate code, and so does everything it started: the
  runner waits for it (bounded, ``finish``), then kills every other process of its PID
  namespace, of which it is the only member besides that namespace's init. Only a runner in a
  PID namespace of its own starts one. The child's cache then becomes the runner's: the runner
  loads from it only at the candidate's own launches, where its code could have written the
  cache itself (the runner's driver helpers are loaded before, from its own cache).

What it is told (the task's file, sizes, seed) comes from the judge in the runner's warm-up
request; the GPU's capability too where the judge's fork server knows it (``triton_warm``),
else from the runner once its context is made, through a pipe the child reads when its first
kernel compiles (``arch_from`` in its outcome).
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import tempfile
import time
from pathlib import Path
from typing import Any

from kgym.harness.real_type import is_a
from kgym.harness.triton_launcher import build_launcher

# The child's directory, in the runner's: its Triton cache and its scratch (gcc's, ptxas').
CHILD_DIR = "precompile"
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
    compiled; to torch's callers a GPU is there (``torch.cuda.is_available()``, as in the
    runner; its device is not reached). ``depth`` counts the compilations in progress (the
    audit hook's ``in_launch``: Triton's own gcc and ptxas runs are vouched for only then);
    ``launchers`` gets each launcher's outcome (``build_launcher``).

    Long on purpose: the stand-ins it installs (the driver, the launcher, the autotuner's
    benchmark) close over one another's state and must be installed together, before any
    candidate code runs."""
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
        # (kernel[grid](...) passes grid and warmup among the keywords.)
        for config in self.configs:
            self.fn.run(*args, **{**kwargs, **config.all_kwargs(), "grid": (1,), "warmup": True})

    JITFunction.run = warm_up  # type: ignore[method-assign]
    Autotuner.run = every_config  # type: ignore[method-assign]
    torch.cuda.is_available = lambda: True


def looks_like_cuda() -> Any:
    """A torch function mode under which the child's meta tensors pass for CUDA tensors of its
    GPU (``is_cuda``, ``device``, ``get_device``) and anything asked for on CUDA is made on the
    meta device instead (a ``device`` argument, ``.cuda()``, ``.to("cuda")``). Solutions branch
    on ``x.is_cuda`` (the CUDA path's block sizes and warps, the interpreter's otherwise); on
    plain meta tensors the child compiled the other branch's kernel, which the GPU's first call
    never looks for: the built-in ``14_conv2d_relu_maxpool``'s first call took as long with
    the compilation ahead as without it (bench/service_gpu). What it cannot stand in
    for (``torch.cuda``'s own calls: the device's properties, streams) still fails the child,
    and the first call compiles, as before."""
    import torch
    from torch.overrides import TorchFunctionMode

    cuda = torch.device("cuda", 0)
    is_cuda = torch.Tensor.is_cuda.__get__
    device_of = torch.Tensor.device.__get__

    def on_meta(value: Any) -> Any:
        # A device index names a CUDA device where torch takes a device ("device=0").
        if is_a(value, int) and not is_a(value, bool):
            return torch.device("meta")
        if is_a(value, str | torch.device) and torch.device(value).type == "cuda":
            return torch.device("meta")
        return value

    class LooksLikeCuda(TorchFunctionMode):
        def __torch_function__(
            self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
        ) -> Any:
            kwargs = kwargs or {}
            if func == is_cuda:
                return bool(args[0].is_meta) or func(*args)
            if func == device_of:
                found = func(*args)
                return cuda if found.type == "meta" else found
            if func == torch.Tensor.get_device:
                return 0 if args[0].is_meta else func(*args, **kwargs)
            if func == torch.Tensor.cuda:
                return args[0].to("meta")
            if func == torch.Tensor.to and len(args) > 1:
                args = (args[0], on_meta(args[1]), *args[2:])  # after it, flags
            if "device" in kwargs:
                kwargs = {**kwargs, "device": on_meta(kwargs["device"])}
            return func(*args, **kwargs)

    return LooksLikeCuda()


class Precompile:
    """The runner's handle on its child: ``start`` (before the CUDA context), ``send_arch``
    (after it), ``finish`` (before any candidate code runs in the runner)."""

    def __init__(self, pid: int, arch_fd: int, own: Path, spec: dict[str, Any]) -> None:
        self.pid = pid
        self.arch_fd = arch_fd
        self.own = own
        self.spec = spec
        self.began = time.perf_counter()

    @classmethod
    def start(cls, spec: dict[str, Any], audit_fd: int) -> Precompile:
        """Forks the child, with a directory of its own beside the runner's cache."""
        own = Path.cwd() / CHILD_DIR
        own.mkdir(exist_ok=True)
        arch_read, arch_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child, measured through its exit code
            os.close(arch_write)
            _child(spec, own, arch_read, audit_fd)
        os.close(arch_read)
        return cls(pid, arch_write, own, spec)

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
        the namespace, and takes the child's cache as this process's. ``status``:
        done, failed, no fence (the layer could not be applied: nothing ran), timed out, audit
        (stopped by the job's audit hook), killed by SIG..., exited with code N; ``swept``:
        whether nothing is left (false without ``sweep``, and then the cache is not taken)."""
        self._close_arch()
        deadline = time.monotonic() + max(wait_s, 0.0)
        status: int | None = None
        timed_out = False
        while status is None:
            pid, raw = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                status = raw
            elif time.monotonic() >= deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGKILL)
                status = os.waitpid(self.pid, 0)[1]
                timed_out = True
            else:
                time.sleep(0.005)
        swept = _sweep() if sweep else False
        return {
            "status": "timed out" if timed_out else self._named(status),
            "seconds": round(time.perf_counter() - self.began, 3),
            "arch_from": "judge" if is_a(self.spec.get("arch"), int) else "runner",
            "cache_entries": self._take_cache() if swept else 0,
            "swept": swept,
        }

    def _take_cache(self) -> int:
        """The child's Triton cache becomes this process's (``TRITON_CACHE_DIR``, which Triton
        reads at every use); returns its entries. Used where it was built, not moved: a kernel's
        group file names its files by absolute path, and Triton takes a group whose files are
        not there for a miss. Only a real directory (the child may have put anything there) and
        only once the child and all it started are gone; the runner's own driver helpers were
        loaded from its own cache before."""
        built = self.own / "triton-cache"
        try:
            if not stat.S_ISDIR(os.lstat(built).st_mode):
                return 0
            with os.scandir(built) as entries:
                count = sum(1 for _ in entries)
        except OSError:
            return 0
        os.environ["TRITON_CACHE_DIR"] = str(built)
        return count

    def _named(self, status: int) -> str:
        from kgym.harness.audit import AUDIT_EXIT_CODE

        if os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            try:
                return f"killed by {signal.Signals(number).name}"
            except ValueError:  # a real-time signal has no name
                return f"killed by signal {number}"
        code = os.WEXITSTATUS(status)
        named = {DONE: "done", FAILED: "failed", NO_FENCE: "no fence"}
        if self.spec.get("audit"):
            named[AUDIT_EXIT_CODE] = "audit"
        return named.get(code, f"exited with code {code}")


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


def _child(
    spec: dict[str, Any], own: Path, arch_fd: int, audit_fd: int
) -> None:  # pragma: no cover
    """The forked child (see the module's docstring); never returns: its exit code is its
    report."""
    code = FAILED
    try:
        from kgym import _core
        from kgym.harness.descriptors import close_all_but

        # Its standard streams go nowhere, and it keeps no socket: it speaks to no one.
        null = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        close_all_but({0, 1, 2, arch_fd, audit_fd} - {-1})
        # The runner's kernel trace is the runner's: its descriptors are closed above, and
        # nothing here names them.
        os.environ.pop("CUDA_INJECTION64_PATH", None)
        os.environ.pop("KGYM_KERNEL_TRACE_FDS", None)
        applied, _ = _core.confine_away_from_devices(str(own))
        if not applied:
            code = NO_FENCE
            return
        # Its cache and scratch (Triton's, gcc's, ptxas') in its own directory, the only one
        # it may write; Triton reads the cache's place at every use.
        os.environ["TRITON_CACHE_DIR"] = str(own / "triton-cache")
        os.environ["TMPDIR"] = str(own)
        tempfile.tempdir = None
        import torch

        from kgym.harness import loader
        from kgym.harness.loader import TASK_MODULE, candidate_module_name

        torch.set_grad_enabled(False)
        depth = [0]
        # The GPU's capability: the judge's (from its fork server), else the runner's, once its
        # context is made (read when the first kernel compiles).
        arch = spec.get("arch")
        compile_only(int(arch) if is_a(arch, int) else None, arch_fd, depth)
        # The task's code first (before the hook, as the judge's own load is): inputs as meta
        # tensors, their shapes and dtypes without their memory.
        task = loader.load_module(Path(spec["task_file"]), TASK_MODULE)
        loader.apply_sizes(task, str(spec.get("sizes", "gpu")))
        with torch.device("meta"), looks_like_cuda():
            torch.manual_seed(int(spec.get("seed", 0)))
            init_inputs = list(task.get_init_inputs())
            inputs = list(task.get_inputs())
        candidate_file = str(spec["candidate_file"])
        if spec.get("audit"):
            from kgym.harness import audit

            audit.install(
                candidate_file,
                audit_fd,
                [str(p) for p in spec.get("protected", [])],
                in_launch=lambda: depth[0] > 0,
            )
        module = loader.load_module(Path(candidate_file), candidate_module_name())
        with torch.device("meta"), looks_like_cuda():
            torch.manual_seed(int(spec.get("seed", 0)))
            model = module.ModelNew(*init_inputs)
            model(*inputs)
        code = DONE
    except BaseException:  # noqa: BLE001 - the candidate's, or no compilation: said by the code
        code = FAILED
    finally:
        os._exit(code)
