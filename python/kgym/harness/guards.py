"""Runtime integrity guards: what the static screen cannot see, checked around every candidate call.

Everything here is captured before the candidate is imported. After each call into the
candidate the guards compare the process' state with those references; a difference is a
finding of severity reject (docs/integrity-rules.md), and global torch state is restored so the
reference is never measured under the candidate's settings.
"""

from __future__ import annotations

import builtins
import dis
import inspect
import os
import signal
import sys
import threading
import time
import types
from collections.abc import Callable
from typing import Any

import numpy
import torch
import torch.testing  # noqa: F401
import triton
import triton.testing  # noqa: F401

from kgym.harness.dot_precision import DotPrecision
from kgym.harness.real_type import is_a

_TRITON_DIR = os.path.dirname(triton.__file__) + os.sep
# The most values a launch's tuple argument, and all its arguments together, may hold: each is
# read, and a longer one is refused rather than read in part (a function at its 65th place ran
# as Python under the interpreter); no kernel takes an answer's worth of numbers.
MAX_ARGUMENT_ITEMS = 1024

Finding = dict[str, Any]
WATCHED_SIGNALS = [
    s
    for s in (
        signal.SIGALRM,
        signal.SIGTERM,
        signal.SIGINT,
        signal.SIGUSR1,
        signal.SIGUSR2,
        signal.SIGCHLD,
        signal.SIGSEGV,
    )
    if s is not None
]


def _resolve(path: str) -> Any:
    """torch.cuda.Event.record -> the object, or None where this build lacks it."""
    root, *parts = path.split(".")
    obj: Any = {"torch": torch, "time": time, "builtins": builtins, "os": os}.get(root)
    if obj is None:
        obj = sys.modules.get(root)
    for part in parts:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


CRITICAL = [
    "torch.cuda.Event.record",
    "torch.cuda.Event.elapsed_time",
    "torch.cuda.Event.synchronize",
    "torch.cuda.Event.__init__",
    "torch.cuda.synchronize",
    "torch.cuda.empty_cache",
    "torch.cuda.mem_get_info",
    "torch.cuda.current_stream",
    "torch.cuda.Stream",
    "time.perf_counter",
    "time.time",
    "time.monotonic",
    "torch.allclose",
    "torch.equal",
    "torch.isnan",
    "torch.isinf",
    "torch.isfinite",
    "torch.where",
    "torch.zeros_like",
    "torch.empty",
    "torch.manual_seed",
    "torch.no_grad",
    "torch.testing.assert_close",
    "torch.Tensor.__eq__",
    "torch.Tensor.__sub__",
    "torch.Tensor.__gt__",
    "torch.Tensor.__or__",
    "torch.Tensor.__and__",
    "torch.Tensor.abs",
    "torch.Tensor.to",
    "torch.Tensor.clone",
    "torch.Tensor.detach",
    "torch.Tensor.max",
    "torch.Tensor.any",
    "torch.Tensor.all",
    "torch.Tensor.numel",
    "torch.Tensor.fill_",
    "torch.Tensor.zero_",
    "torch.Tensor.clamp_min",
    "torch.Tensor.untyped_storage",
    "torch.Tensor.__float__",
    "torch.Tensor.__bool__",
    "torch.nn.Module.__call__",
    "builtins.isinstance",
    "builtins.type",
    "builtins.float",
    "builtins.len",
    "builtins.max",
    "builtins.any",
    "builtins.print",
    "os.write",
    "os._exit",
    "triton.testing.do_bench",
    "triton.runtime.jit.JITFunction.run",
    "triton.runtime.interpreter.InterpretedFunction.run",
]


def torch_global_state() -> dict[str, Any]:
    state: dict[str, Any] = {
        "cudnn.enabled": torch.backends.cudnn.enabled,
        "cudnn.benchmark": torch.backends.cudnn.benchmark,
        "cudnn.deterministic": torch.backends.cudnn.deterministic,
        "cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
        "cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "cuda.matmul.allow_fp16_reduced_precision_reduction": torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "num_threads": torch.get_num_threads(),
        "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
        "default_dtype": torch.get_default_dtype(),
        "grad_enabled": torch.is_grad_enabled(),
    }
    bf16 = getattr(torch.backends.cuda.matmul, "allow_bf16_reduced_precision_reduction", None)
    if bf16 is not None:
        state["cuda.matmul.allow_bf16_reduced_precision_reduction"] = bf16
    return state


def restore_torch_global_state(state: dict[str, Any]) -> None:
    torch.backends.cudnn.enabled = state["cudnn.enabled"]
    torch.backends.cudnn.benchmark = state["cudnn.benchmark"]
    torch.backends.cudnn.deterministic = state["cudnn.deterministic"]
    torch.backends.cudnn.allow_tf32 = state["cudnn.allow_tf32"]
    torch.backends.cuda.matmul.allow_tf32 = state["cuda.matmul.allow_tf32"]
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = state[
        "cuda.matmul.allow_fp16_reduced_precision_reduction"
    ]
    if "cuda.matmul.allow_bf16_reduced_precision_reduction" in state:
        torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = state[
            "cuda.matmul.allow_bf16_reduced_precision_reduction"
        ]
    torch.set_float32_matmul_precision(state["float32_matmul_precision"])
    torch.set_num_threads(state["num_threads"])
    torch.use_deterministic_algorithms(state["deterministic_algorithms"])
    torch.set_default_dtype(state["default_dtype"])
    torch.set_grad_enabled(state["grad_enabled"])


def live_child_processes() -> list[int]:
    children: list[int] = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return children
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/children") as f:
                children += [int(pid) for pid in f.read().split()]
        except OSError:
            continue
    return children


# The places one kernel name's functions were written that are kept (a kernel made again per
# call from the same function keeps one).
MAX_ORIGINS = 16


# What a kernel may be given as a plain value (by real type: bool is its own).
_PLAIN_VALUES = frozenset({int, float, bool, str, type(None), torch.dtype})


def _global_names(code: types.CodeType) -> set[str]:
    """The names ``code`` (and the code it nests: comprehensions, inner functions) reads from
    its module, by the instructions that read them."""
    names: set[str] = set()
    for instruction in dis.get_instructions(code):
        if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            names.add(str(instruction.argval))
    for const in code.co_consts:
        if type(const) is types.CodeType:
            names |= _global_names(const)
    return names


class LaunchCounter:
    """Counts Triton kernel launches by wrapping the launchers' class methods (both modes)."""

    def __init__(self) -> None:
        self.count = 0
        self.names: dict[str, int] = {}
        # Where each launched kernel's Python function was written, every place a kernel of
        # that name came from (two functions may share a name): (file name, first line).
        self.origins: dict[str, list[tuple[str, int]]] = {}
        self.installed: list[tuple[type, Callable[..., Any]]] = []
        # The decoy check: while set, every launch of the kernel of this name ("*": any) has the
        # elements it wrote overwritten with noise (kgym.harness.ablation).
        self.ablate: str | None = None
        # The ablated launches' outputs moved by a few units in the last place instead of
        # replaced (ablation.launch_nudged): +1 up, -1 down, 0 not; how many elements moved.
        self.nudge = 0
        self.nudged_elements = 0
        self.ablated_launches = 0
        self.copying_launches = 0  # ablated launches that only copied another argument
        # Ablated launches the check could not read, each with its error (the decoy
        # finding carries them: a refusal they cause names its cause).
        self.unchecked_launches: list[str] = []
        # Each ablated launch's work, met with every tensor torch computes after it in the
        # call (ablation.Recomputation): recomputed by torch, it is no work of the kernel's.
        self.recomputations: list[Any] = []
        self.staging = False  # the decoy call takes staging copies as no work (ablation.py)
        self.copy_tolerance: tuple[float, float] | None = None  # the task's (atol, rtol)
        # The call's inputs as the judge wrote them, by storage address: not an answer's
        # source unless the candidate rewrote them (kgym.harness.ablation).
        self.arena: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}  # (now, as written)
        # The tensors the candidate's torch calls made in this call (TorchOpRecorder.made): an
        # answer a kernel may copy without taking it as an argument.
        self.torch_made: Callable[[], list[Any]] = list
        # The model's own tensors with their fingerprints as the ablated call began
        # (runner._owned_tensors): those rewritten since are copy sources.
        self.owned: list[tuple[Any, int, int]] = []
        self.depth = 0  # > 0 while a launch is in progress (torch calls inside are Triton's)
        self.precision = DotPrecision()  # what the launched kernels' matrix products used
        # Launches refused whatever the call (foreign_arguments, a launch inside another):
        # how many, and the latest one's (rule, detail). A count, not a list with a cap: a
        # full list would hide every later refusal from the calls that check for one.
        self.refused = 0
        self.last_refused: tuple[str, str] = ("", "")
        self._params: dict[Any, tuple[list[str], set[str], dict[str, Any]]] = {}  # per kernel
        self.triton_functions: tuple[type, ...] = ()  # JITFunction, InterpretedFunction
        self._triton_wrappers: tuple[type, ...] = ()  # TensorWrapper, TensorDescriptor
        self._constexpr: type | None = None  # tl.constexpr, whose value is read in turn
        self._triton_classes: frozenset[type] = frozenset()  # triton.language's classes
        self.interpreted: type | None = None  # InterpretedFunction, under the interpreter
        self._rewritten: dict[int, Any] = {}  # per kernel function: what the judge's rewriter made
        # Inside an interpreted launch, before its grid's dimensions are set: what Triton
        # operations make there are its own arguments' conversions, or the grid's.
        self.before_body = False
        self.launching: tuple[Any, str] | None = None  # the interpreted launch's (kernel, name)
        # The interpreted launch's tensors' storages, (starts, ends): what its kernel may
        # load and store (_fence_memory).
        self.argument_memory: tuple[Any, Any] = ((), ())
        self.fenced = False

    def meet_computed(self, made: torch.Tensor) -> None:
        """A tensor the candidate's torch calls computed in a decoy call, met with the work of
        every launch ablated before it (ablation.Recomputation); whatever it is, the check
        never fails the candidate's call."""
        for recomputation in self.recomputations:
            try:
                recomputation.meet(made)
            except Exception:  # noqa: BLE001 - a tensor the check cannot read credits nothing
                continue

    def note_origin(self, kernel: Any) -> None:
        """Where a kernel's function was written (its file and first line), for the judge to
        hold against the ``@triton.jit`` bodies it read (``policy._observe_origins``): of each
        kernel launched, given to a launch or named in a body, so that one made by calling
        ``triton.jit(fn)`` is seen however it is reached."""
        fn = kernel.__dict__.get("fn") if hasattr(kernel, "__dict__") else None
        code = fn.__code__ if type(fn) is types.FunctionType else None
        if code is None:
            return
        where = (os.path.basename(str(code.co_filename)), int(code.co_firstlineno))
        places = self.origins.setdefault(str(code.co_name), [])
        if where not in places and len(places) < MAX_ORIGINS:
            places.append(where)

    def foreign_arguments(self, kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        """What a launch hands its kernel that only Python can run ("" where nothing): any
        value but those Triton's compiler takes (``_foreign``), or a tensor given as a
        constexpr. Under the CPU interpreter a kernel calls what it is given as plain Python
        (numpy on its values, torch's methods on the tensor, an object's method, a function in
        a tuple or a ``tl.constexpr``); Triton's compiler takes none of them, so no kernel that
        runs on a GPU needs them. Every launch is read, timed ones too: a kernel's parameters
        are read once."""
        fn = getattr(kernel, "fn", None)
        params = self._params.get(fn) if fn is not None else None
        if params is None:
            try:
                signature = inspect.signature(fn).parameters if fn is not None else {}
            except (TypeError, ValueError):
                signature = {}
            names = list(signature)
            notes = getattr(fn, "__annotations__", {}) if fn is not None else {}
            constexprs = {n for n in names if "constexpr" in str(notes.get(n, ""))}
            defaults = {
                n: p.default
                for n, p in signature.items()
                if p.default is not inspect.Parameter.empty
            }
            params = (names, constexprs, defaults)
            if fn is not None:
                self._params[fn] = params
        names, constexprs, defaults = params
        # The kernel's own parameters only: the launch's options (grid, num_warps) are not its.
        given = [*zip(names, args), *((k, v) for k, v in kwargs.items() if k in names)]
        # And what a parameter the launch leaves out takes: its default, which the kernel
        # receives as if given (a numpy function as a constexpr's default runs as Python).
        named = {name for name, _ in given}
        given += [(n, v) for n, v in defaults.items() if n not in named]
        for name, value in given:
            what = self._foreign(value, name in constexprs)
            if what:
                return f"argument {name!r} is {what}"
        held = _count_values([value for _, value in given])
        if held > MAX_ARGUMENT_ITEMS:  # no kernel takes an answer's worth of numbers
            return f"its arguments hold {held} values"
        return ""

    def _foreign(self, value: Any, constexpr: bool, depth: int = 0) -> str:
        """What of ``value`` Triton's compiler would not take ("" where all of it is): the
        values a kernel is given are plain numbers, strings, dtypes, tensors (not as
        constexprs), Triton's own functions and objects, and tuples of those, read by real
        type, inside tuples and ``tl.constexpr`` too. Anything else, a callable or not, is
        Python the interpreter would run for the kernel (a method of an object, a function in
        a tuple or a constexpr)."""
        kind = type(value)
        if kind in _PLAIN_VALUES:
            return ""
        if is_a(value, torch.Tensor):
            return "a tensor given as a constexpr" if constexpr else ""
        if depth >= 4:
            return "a value nested four deep"
        if is_a(value, (tuple, list)):
            # Their own iterators, not a subclass's.
            items = tuple.__iter__(value) if is_a(value, tuple) else list.__iter__(value)
            held = list(items)
            if len(held) > MAX_ARGUMENT_ITEMS:  # read to its end, or refused: never in part
                return f"a sequence of {len(held)} values"
            for item in held:
                what = self._foreign(item, constexpr, depth + 1)
                if what:
                    return what
            return ""
        if kind is self._constexpr:
            return self._foreign(value.value, constexpr, depth + 1)
        if is_a(value, self.triton_functions):
            self.note_origin(value)  # a kernel handed to a launch is held to its origin too
            return ""
        if self._is_triton(value):
            return ""
        if callable(value):
            return f"a Python callable ({kind.__name__})"
        return f"a {kind.__name__}, which no Triton kernel takes"

    @staticmethod
    def as_compiled(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
        """A launch's arguments as Triton's compiler gives them to a kernel: every list a
        tuple (a copy), so that a kernel under the interpreter cannot hand values out
        through a list it appends to, which no compiled kernel can."""
        return _tuples(args), {k: _tuples(v) for k, v in kwargs.items()}

    def run_from_source(self, fn_self: Any, name: str) -> None:
        """Under the interpreter: the function a launch runs is the one Triton's rewriter makes
        from the kernel's source, which the judge read. The interpreter keeps it in a dict any
        code can write (``InterpretedFunction.rewritten_fn``), and a candidate that put a
        Python function there ran it as the kernel: made afresh by a rewriter of the judge's at
        the kernel's first launch, and at any later one whose entry is no longer it."""
        from triton.runtime.interpreter import FunctionRewriter, InterpretedFunction

        cache = InterpretedFunction.__dict__["rewritten_fn"]
        fn = fn_self.__dict__.get("fn")
        made = self._rewritten.get(id(fn))
        if made is not None and dict.get(cache, fn) is made:
            return
        if made is not None:
            self.refuse(
                "kernel-not-triton", f"{name}: the function the interpreter runs was replaced"
            )
        built = FunctionRewriter(fn, **dict(fn_self.__dict__.get("kwargs") or {})).rewrite_ast()
        dict.__setitem__(cache, fn, built)
        self._rewritten[id(fn)] = built

    def check_body_names(self) -> None:
        """Under the interpreter, as a launch's body is about to run (its grid and hooks have
        run): what every name the body reads from its module, its closure and its defaults is
        bound to, by real type, and so for each kernel it calls. A body may take only what a
        launch may be given (``_foreign``), Triton's modules and other kernels: a Python
        function bound to a name the source shows as a kernel, a constant or a local (a
        decorator of the candidate's named ``jit``, a comprehension's variable, a binding in a
        module-level ``if``, a walrus, a ``constexpr`` of its own) runs as Python there."""
        if self.launching is None:
            return
        kernel, name = self.launching
        self.launching = None
        what = self._kernel_names(kernel, set())
        if what:
            self.refuse("kernel-not-triton", f"{name}: {what}")

    def _kernel_names(self, kernel: Any, seen: set[int]) -> str:
        """``_body_names`` of a kernel's function and of what the interpreter runs for it
        (the function Triton's rewriter made from its source, in the interpreter's cache)."""
        fn = kernel.__dict__.get("fn")
        what = self._body_names(fn, seen)
        if not what and self.interpreted is not None:
            cache = self.interpreted.__dict__.get("rewritten_fn")
            if type(cache) is dict and fn is not None and dict.__contains__(cache, fn):
                what = self._body_names(dict.__getitem__(cache, fn), seen)
        return what

    def _body_names(self, fn: Any, seen: set[int]) -> str:
        if type(fn) is not types.FunctionType or id(fn) in seen or len(seen) > 256:
            return ""
        seen.add(id(fn))
        module = fn.__globals__
        held: list[tuple[str, Any]] = []
        for name in _global_names(fn.__code__):
            if dict.__contains__(module, name):
                held.append((name, dict.__getitem__(module, name)))
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                held.append((name, cell.cell_contents))
            except ValueError:  # an empty cell
                continue
        held += [("a default", v) for v in fn.__defaults__ or ()]
        held += [(k, v) for k, v in dict.items(fn.__kwdefaults__ or {})]
        for name, value in held:
            if is_a(value, self.triton_functions):
                self.note_origin(value)
                what = self._kernel_names(value, seen)
            elif type(value) is types.ModuleType:
                called = dict.get(vars(value), "__name__", "")
                language = called == "triton" or str(called).startswith("triton.language")
                what = "" if language else f"the module {called}, which is not Triton's language"
            else:
                what = self._foreign(value, True)
            if what:
                return f"the kernel body's name {name!r} is {what}"
        return ""

    def refuse(self, rule: str, detail: str) -> None:
        self.refused += 1
        self.last_refused = (rule, detail)

    def _is_triton(self, value: Any) -> bool:
        """A Triton function, one of triton.language's (its builtins, dtypes), or a tensor
        Triton wraps (``triton.reinterpret``, a tensor descriptor): read without running any
        of the candidate's code (no attribute of its objects)."""
        if is_a(value, self.triton_functions):
            return True
        if type(value) is types.FunctionType:
            # By where its code lies, not by the module it names (``functools.wraps(tl.exp)``
            # copies triton.language's name onto any function).
            return str(value.__code__.co_filename).startswith(_TRITON_DIR)
        if type(value) in self._triton_wrappers:
            return True
        # An object of one of triton.language's own classes (a dtype, a block type), by the
        # class itself: a class may name any module.
        return type(value) in self._triton_classes and not callable(value)

    def install(self) -> None:
        from triton.runtime.jit import JITFunction

        classes: list[type] = [JITFunction]
        try:
            from triton.runtime.interpreter import InterpretedFunction

            classes.append(InterpretedFunction)
        except ImportError:
            pass
        if os.environ.get("TRITON_INTERPRET") == "1":
            self.precision.install_interpreter()
            self._refuse_ops_outside_bodies()
            self._refuse_numbers_out_of_tensors()
        self.triton_functions = tuple(classes)
        import triton.language as tl
        from triton.runtime.jit import TensorWrapper

        wrappers: list[type] = [TensorWrapper]
        try:
            from triton.tools.tensor_descriptor import TensorDescriptor

            wrappers.append(TensorDescriptor)
        except ImportError:
            pass
        self._triton_wrappers = tuple(wrappers)
        self._constexpr = tl.constexpr
        self._triton_classes = frozenset(
            value
            for name, module in list(sys.modules.items())
            if name.startswith("triton.language") and module is not None
            for value in list(vars(module).values())
            if type(value) is type and str(getattr(value, "__module__", "")).startswith("triton.")
        )
        for cls in classes:
            wrapped = self._counting(cls.run)
            cls.run = wrapped  # type: ignore[method-assign]
            self.installed.append((cls, wrapped))

    def _refuse_numbers_out_of_tensors(self) -> None:
        """Under the interpreter, ``int()`` and ``float()`` of a Triton tensor in code of the
        candidate's are refused: they give a kernel body its values as Python numbers (the
        interpreter answers them through the ``__index__`` it patches in), which Python then
        computes with; a compiled kernel cannot take a runtime value out of Triton so.
        ``range()`` and ``if`` read values too (``__index__``, ``__bool__``), as a compiled
        loop's bound and branch do."""
        import triton.language as tl

        counter = self

        def taken_out(kind: type) -> Callable[[Any], Any]:
            def convert(value: Any) -> Any:
                caller = sys._getframe(1).f_code.co_filename
                if not caller.startswith(_TRITON_DIR):
                    counter.refuse(
                        "kernel-not-triton",
                        f"{kind.__name__}() of a Triton tensor: its values as Python numbers",
                    )
                return kind(value.handle.data.squeeze())

            return convert

        tl.core.tensor.__int__ = taken_out(int)  # type: ignore[attr-defined]
        tl.core.tensor.__float__ = taken_out(float)  # type: ignore[attr-defined]

    def _refuse_ops_outside_bodies(self) -> None:
        """Under the interpreter, a Triton operation made in a launch's grid or outside any
        launch is refused: only a kernel body computes with triton.language (a jit function
        called as a Python function patches it for good)."""
        try:
            from triton.runtime.interpreter import InterpretedFunction, TensorHandle
        except ImportError:
            return
        from triton.runtime.interpreter import InterpreterBuilder, _implicit_cvt

        self.interpreted = InterpretedFunction
        made = TensorHandle.__post_init__
        conversion = _implicit_cvt.__code__
        counter = self

        def post_init(handle: Any) -> None:
            # Two frames out: the dataclass's __init__, then what made the handle. The grid
            # runs between the arguments' conversions and the grid's dimensions; no frame of
            # ours wraps it, so torch calls its C glue makes still meet Triton's frame.
            if counter.depth == 0 or (
                counter.before_body and sys._getframe(2).f_code is not conversion
            ):
                counter.refuse(
                    "kernel-not-triton",
                    "a Triton operation outside a kernel body (a launch's grid, or a kernel "
                    "called as a Python function)",
                )
            made(handle)

        dims = InterpreterBuilder.set_grid_dim

        def set_grid_dim(builder: Any, *args: Any) -> Any:
            counter.before_body = False
            counter.check_body_names()
            return dims(builder, *args)

        TensorHandle.__post_init__ = post_init  # type: ignore[method-assign]
        InterpreterBuilder.set_grid_dim = set_grid_dim  # type: ignore[method-assign]
        self._fence_memory()

    def _fence_memory(self) -> None:
        """Under the interpreter a kernel's pointers are host addresses, and a load or store
        reached any of them: a kernel stored a tensor's values into a Python ``bytes`` object
        found by ``id()`` and loaded an answer Python made there, no torch call between. Every
        load, store and atomic of a launch is held to the memory of the tensors the launch was
        handed (their whole storages), its masked-off places aside: outside, the launch is
        refused (``memory-outside-arguments``) and the access is not made."""
        from triton.runtime.interpreter import InterpreterBuilder

        counter = self
        self.fenced = True  # the launch's extents are taken in ``_counting``'s run

        def fenced(original: Callable[..., Any], mask_at: int) -> Callable[..., Any]:
            def access(builder: Any, ptrs: Any, *args: Any) -> Any:
                if not counter.check_addresses(ptrs, args[mask_at]):
                    # Not made: every place masked off (a load gives its ``other``).
                    args = (*args[:mask_at], _no_places(ptrs), *args[mask_at + 1 :])
                return original(builder, ptrs, *args)

            return access

        builder = InterpreterBuilder
        builder.create_masked_load = fenced(builder.create_masked_load, 0)  # type: ignore[method-assign]
        builder.create_masked_store = fenced(builder.create_masked_store, 1)  # type: ignore[method-assign]
        rmw, cas = builder.create_atomic_rmw, builder.create_atomic_cas

        def atomic_rmw(b: Any, op: Any, ptr: Any, val: Any, mask: Any, *rest: Any) -> Any:
            if not counter.check_addresses(ptr, mask):
                mask = _no_places(ptr)
            return rmw(b, op, ptr, val, mask, *rest)

        def atomic_cas(b: Any, ptr: Any, *rest: Any) -> Any:
            if not counter.check_addresses(ptr, None):
                raise RuntimeError("an atomic compare-and-swap outside the launch's tensors")
            return cas(b, ptr, *rest)

        builder.create_atomic_rmw = atomic_rmw  # type: ignore[method-assign]
        builder.create_atomic_cas = atomic_cas  # type: ignore[method-assign]

    def storage_extents(self, values: Any) -> tuple[Any, Any]:
        """The (starts, ends) of the storages of every tensor among ``values`` (in tuples,
        lists, dicts, a ``TensorWrapper``'s or a descriptor's base), sorted, as numpy arrays.
        Read with torch's function modes off: the record's calls are the candidate's, and
        under the interpreter a CPU tensor's host copy is its own storage."""
        with torch._C.DisableTorchFunction():
            return self._extents(values)

    def _extents(self, values: Any) -> tuple[Any, Any]:
        spans: list[tuple[int, int]] = []
        stack = [values]
        while stack and len(spans) < 4096:
            item = stack.pop()
            kind = type(item)
            if kind in (list, tuple) or is_a(item, tuple):
                stack.extend(item)
            elif kind is dict:
                stack.extend(item.values())
            elif is_a(item, torch.Tensor):
                storage = item.untyped_storage()
                spans.append((int(storage.data_ptr()), int(storage.data_ptr() + storage.nbytes())))
            elif is_a(item, self._triton_wrappers):
                stack.append(item.__dict__.get("base"))
        spans.sort()
        starts = numpy.array([a for a, _ in spans], dtype=numpy.uint64)
        ends = numpy.array([b for _, b in spans], dtype=numpy.uint64)
        return starts, ends

    def check_addresses(self, ptrs: Any, mask: Any) -> bool:
        """Whether every place of ``ptrs`` not masked off lies in the launch's tensors; a
        place outside is refused."""
        starts, ends = self.argument_memory
        places = numpy.asarray(ptrs.data, dtype=numpy.uint64)
        if mask is not None:
            places = places[numpy.broadcast_to(numpy.asarray(mask.data, dtype=bool), places.shape)]
        places = places.reshape(-1)
        if places.size == 0:
            return True
        width = max(1, int(getattr(ptrs.get_element_ty(), "primitive_bitwidth", 8)) // 8)
        at = numpy.searchsorted(starts, places, side="right").astype(numpy.int64) - 1
        inside = at >= 0
        inside[inside] = places[inside] + numpy.uint64(width) <= ends[at[inside]]
        if bool(inside.all()):
            return True
        self.refuse(
            "memory-outside-arguments",
            "a kernel loads or stores outside the memory of the tensors its launch was "
            "handed (a host address under the interpreter reaches any object)",
        )
        return False

    def _counting(self, original: Callable[..., Any]) -> Callable[..., Any]:
        counter = self

        def run(fn_self: Any, *args: Any, **kwargs: Any) -> Any:
            counter.count += 1
            name = getattr(getattr(fn_self, "fn", None), "__name__", "?")
            counter.names[name] = counter.names.get(name, 0) + 1
            counter.note_origin(fn_self)
            foreign = counter.foreign_arguments(fn_self, args, kwargs)
            if foreign:
                counter.refuse("kernel-not-triton", f"{name}: {foreign}")
            interpreted = counter.interpreted is not None and is_a(fn_self, counter.interpreted)
            if interpreted:  # a compiled launch makes its lists tuples itself: no work per call
                args, kwargs = counter.as_compiled(args, kwargs)
            if interpreted:
                counter.run_from_source(fn_self, name)
                counter.launching = (fn_self, name)
                if counter.fenced:
                    counter.argument_memory = counter.storage_extents([args, kwargs])
            if counter.depth > 0:
                # Triton never launches from inside a launch; the candidate's grid callable,
                # hooks and heuristics run there, where torch's argument moves are taken for
                # Triton's own (an autotuner's restore copies made a whole transpose there).
                counter.refuse("nested-launch", f"{name} launched inside another launch")
            counter.depth += 1
            counter.before_body = interpreted
            # The record's numpy watch (torch_ops) rests through the launch: under the
            # interpreter every operation of a kernel is calls into numpy, each an event.
            watch = sys.getprofile()
            sys.setprofile(None)
            try:
                if counter.ablate is None or counter.ablate not in ("*", name):
                    result = original(fn_self, *args, **kwargs)
                elif counter.nudge:
                    from kgym.harness.ablation import launch_nudged

                    counter.ablated_launches += 1
                    up = counter.nudge > 0
                    result, moved = launch_nudged(original, fn_self, args, kwargs, up)
                    counter.nudged_elements += moved
                else:
                    from kgym.harness.ablation import (
                        Recomputation,
                        launch_with_noise,
                        owned_state,
                    )

                    counter.ablated_launches += 1
                    rewritten, untouched = owned_state(counter.owned)
                    worked: list[Any] = []
                    result, copied = launch_with_noise(
                        original,
                        fn_self,
                        args,
                        kwargs,
                        counter.copy_tolerance,
                        counter.arena,
                        counter.torch_made() + rewritten,
                        untouched,
                        [t for t, _, _ in counter.owned] if counter.staging else None,
                        worked,
                    )
                    counter.copying_launches += int(copied == "answer")
                    if copied == "" and worked:
                        counter.recomputations.append(Recomputation(worked, counter.copy_tolerance))
                    if copied.startswith("unchecked"):
                        counter.unchecked_launches.append(copied)
                counter.precision.note_launch(result)
                return result
            finally:
                counter.depth -= 1
                counter.before_body = False
                sys.setprofile(watch)

        return run


# torch's functions that make a tensor on memory another object owns (a bytearray, a numpy
# array, a file, a capsule), which torch's function record ignores, and the tensor's methods
# that hand its memory to another object (a numpy array, a capsule): Python then reads and
# writes the tensor's values through that object with no torch call at all.
ALIASING_FUNCTIONS = ("frombuffer", "from_numpy", "from_file", "from_dlpack")
ALIASING_METHODS = ("numpy", "__array__", "__dlpack__")
_OWN_DIRS = tuple(
    os.path.dirname(m.__file__) + os.sep
    for m in (torch, triton, sys.modules.get("numpy"))
    if m is not None and getattr(m, "__file__", None)
) + (os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,)


def _watch_memory_aliasing(calls: list[str], state: Any) -> None:
    """``ALIASING_FUNCTIONS`` of torch (and ``torch.utils.dlpack.from_dlpack``) wrapped so
    that a call made from code outside torch, Triton, numpy and kgym is noted in ``calls``
    (the guards' check refuses it as ``raw-storage``); and ``ALIASING_METHODS`` of tensors so
    that such a call is noted where no call of the model is under way (``state.calling``):
    inside one the torch-call record reads it (``torch-compute``), outside (in ``__init__``)
    nothing would, and the view it made outlives it."""
    import torch.utils.dlpack as dlpack

    def watch(owner: Any, name: str, always: bool) -> None:
        original = owner.__dict__.get(name) if type(owner) is type else getattr(owner, name)
        if original is None or getattr(original, "_kgym_watched", False):
            return

        def watched(*args: Any, **kw: Any) -> Any:
            caller = sys._getframe(1).f_code.co_filename
            if not caller.startswith(_OWN_DIRS) and (always or not state.calling):
                calls.append(f"{getattr(owner, '__name__', 'torch')}.{name}")
            return original(*args, **kw)

        watched._kgym_watched = True  # type: ignore[attr-defined]
        setattr(owner, name, watched)

    for owner in (torch, dlpack):
        for name in ALIASING_FUNCTIONS:
            if getattr(owner, name, None) is not None:
                watch(owner, name, always=True)
    for name in ALIASING_METHODS:
        if name in torch.Tensor.__dict__ or hasattr(torch.Tensor, name):
            if name not in torch.Tensor.__dict__:
                setattr(torch.Tensor, name, getattr(torch.Tensor, name))
            watch(torch.Tensor, name, always=False)


def _tuples(value: Any, depth: int = 0) -> Any:
    """``value`` with every list in it, within tuples and lists, made a tuple (by real type,
    read with the list's own iterator)."""
    if depth > 4:
        return value
    if type(value) is tuple:
        return tuple(_tuples(v, depth + 1) for v in tuple.__iter__(value))
    if is_a(value, list):
        return tuple(_tuples(v, depth + 1) for v in list.__iter__(value))
    return value


def _count_values(values: list[Any], depth: int = 0) -> int:
    """How many values ``values`` holds, counting inside tuples and lists (by real type)."""
    total = 0
    for value in values:
        if depth < 4 and is_a(value, (tuple, list)):
            items = tuple.__iter__(value) if is_a(value, tuple) else list.__iter__(value)
            total += _count_values(list(items), depth + 1)
        else:
            total += 1
        if total > MAX_ARGUMENT_ITEMS:
            break
    return total


# torch._dynamo, when something imports it (the CUDA profiler does), rebinds torch.manual_seed to
# a lazily-disabling wrapper made by torch._disable_dynamo. Every such wrapper shares one code
# object, and the function it calls is a closure cell, so the wrapper is recognised exactly:
# same code, and the cell holds the trusted reference. A candidate's own wrapper has other code,
# and a genuine wrapper around anything else fails the cell check.
_disable_dynamo = getattr(torch, "_disable_dynamo", None)
_DYNAMO_DISABLE_CODE = _disable_dynamo(lambda: None).__code__ if _disable_dynamo else None


def _is_dynamo_disable_wrapper(current: Any, reference: Any) -> bool:
    code = getattr(current, "__code__", None)
    if _DYNAMO_DISABLE_CODE is None or code is not _DYNAMO_DISABLE_CODE:
        return False
    cells = dict(zip(code.co_freevars, current.__closure__ or (), strict=False))
    cell = cells.get("fn")
    return cell is not None and cell.cell_contents is reference


def _part_setters_as_calls() -> None:
    """``t.real = v`` and ``t.imag = v`` copy ``v`` in C++, where no torch function mode sees a
    call: a transpose done by the setter's copy was torch's work that no record held, its
    destination no copy source. The setters become a ``copy_`` into the part's view, a torch
    call the record sees as any other (compute, and what it wrote)."""
    for part in ("real", "imag"):
        base = getattr(torch._C.TensorBase, part)

        def get(tensor: torch.Tensor, _base: Any = base) -> torch.Tensor:
            return _base.__get__(tensor, type(tensor))

        def put(tensor: torch.Tensor, value: Any, _get: Any = get) -> None:
            _get(tensor).copy_(value)

        setattr(torch.Tensor, part, property(get, put, doc=base.__doc__))


class Guards:
    """References taken before the candidate exists, and the checks against them."""

    def __init__(self) -> None:
        _part_setters_as_calls()
        self.launches = LaunchCounter()
        self.launches.install()
        self.aliased: list[str] = []  # memory shared between a tensor and a Python object
        self.calling = False  # a call of the model is under way (the runner's op_call)
        _watch_memory_aliasing(self.aliased, self)
        # Only what exists in this build is watched (a module imported later must not look like
        # a replacement of something that was not there).
        self.critical = {name: ref for name in CRITICAL if (ref := _resolve(name)) is not None}
        self.harness_modules = {
            name: (module, dict(vars(module)))
            for name, module in sys.modules.items()
            if name.startswith("kgym")
        }
        self.global_state = torch_global_state()
        self.threads = {t.ident for t in threading.enumerate()}
        self.trace = (
            sys.gettrace(),
            sys.getprofile(),
            threading.gettrace(),
            threading.getprofile(),
        )
        self.signals = {s: signal.getsignal(s) for s in WATCHED_SIGNALS}
        self.reported: set[str] = set()

    def _finding(self, rule: str, detail: str) -> Finding:
        return {"rule": rule, "severity": "reject", "line": None, "detail": detail}

    def check(self, when: str) -> list[Finding]:
        """Everything that must be unchanged after candidate code ran; restores torch state."""
        findings: list[Finding] = []
        if self.aliased and "aliased" not in self.reported:
            self.reported.add("aliased")
            findings.append(
                self._finding(
                    "raw-storage",
                    f"memory shared between a tensor and a Python object ({when}): "
                    + ", ".join(sorted(set(self.aliased))[:5]),
                )
            )
        for name, reference in self.critical.items():
            current = _resolve(name)
            if current is reference or _is_dynamo_disable_wrapper(current, reference):
                continue
            if name not in self.reported:
                self.reported.add(name)
                findings.append(self._finding("patched-function", f"{name} was replaced ({when})"))
        for name, (module, namespace) in self.harness_modules.items():
            if sys.modules.get(name) is not module:
                key = f"module:{name}"
                if key not in self.reported:
                    self.reported.add(key)
                    findings.append(
                        self._finding("patched-function", f"sys.modules['{name}'] was replaced")
                    )
                continue
            for attr, value in namespace.items():
                if vars(module).get(attr) is not value and f"{name}.{attr}" not in self.reported:
                    self.reported.add(f"{name}.{attr}")
                    findings.append(
                        self._finding("patched-function", f"{name}.{attr} was replaced ({when})")
                    )
        state = torch_global_state()
        changed = [k for k, v in self.global_state.items() if state.get(k) != v]
        if changed:
            restore_torch_global_state(self.global_state)
            findings.append(
                self._finding(
                    "global-state", f"global torch state changed ({when}): " + ", ".join(changed)
                )
            )
        new_threads = [
            t.name for t in threading.enumerate() if t.ident not in self.threads and t.is_alive()
        ]
        if new_threads and "threads" not in self.reported:
            self.reported.add("threads")
            findings.append(
                self._finding(
                    "thread-or-process",
                    f"threads left running ({when}): " + ", ".join(new_threads[:5]),
                )
            )
        children = live_child_processes()
        if children and "children" not in self.reported:
            self.reported.add("children")
            findings.append(
                self._finding(
                    "thread-or-process", f"child processes alive ({when}): {children[:5]}"
                )
            )
        trace = (sys.gettrace(), sys.getprofile(), threading.gettrace(), threading.getprofile())
        hooks_changed = any(a is not b for a, b in zip(trace, self.trace))
        signals_changed = [
            s.name for s in WATCHED_SIGNALS if signal.getsignal(s) is not self.signals[s]
        ]
        if (hooks_changed or signals_changed) and "hooks" not in self.reported:
            self.reported.add("hooks")
            findings.append(
                self._finding(
                    "tracing-hook",
                    f"trace/profile hooks or signal handlers changed "
                    f"({when}) {', '.join(signals_changed)}".strip(),
                )
            )
        return findings


def _no_places(ptrs: Any) -> Any:
    """A mask of ``ptrs``' shape with every place off, as the interpreter takes masks."""
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle

    return TensorHandle(numpy.zeros(numpy.shape(ptrs.data), dtype=bool), tl.int1)
