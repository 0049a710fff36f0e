"""Which torch operators a candidate's forward calls: for the torch-compute policy and the Result.

A ``TorchFunctionMode`` sees every torch call made at Python level. Inside a Triton launch the
interpreter moves arguments with torch and the autotuner resets and restores them: those calls
are Triton's; every other call in a launch is the candidate's (under the interpreter a kernel's
body is plain Python, and the grid, hooks and heuristics Triton runs are the candidate's).
Operators that only describe, allocate or view memory are not compute, nor is a move of a
tensor from the host onto the device; everything else is (a copy too, however it is asked for:
for a transpose the copy is the task), and so is reading a tensor's values to the host
(``item``, ``tolist``, ``numpy``, ``float()``, ``cpu``, printing): host-side compute starts
there. A call that makes an fp16, bf16 or fp8 tensor is reported for the precision policy.
"""

from __future__ import annotations

import itertools
import os
import sys
import sysconfig
import types
import weakref
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy
import torch
import triton
from torch.overrides import TorchFunctionMode, _pop_mode, _push_mode
from torch.utils._python_dispatch import TorchDispatchMode

from kgym.harness.real_type import is_a

_TRITON_DIR = os.path.dirname(triton.__file__) + os.sep
_KGYM_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# numpy's own code: a call into it from the candidate's frames is host compute (TorchOpRecorder's
# numpy watch), however the candidate reached the module.
_NUMPY_DIR = os.path.dirname(numpy.__file__) + os.sep
_INSTALLED = tuple(
    sorted(
        {sysconfig.get_paths()[k] + os.sep for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    )
)

# Shape and metadata, allocation, views and device moves: no arithmetic on values.
NON_COMPUTE = frozenset(
    {
        "__get__",
        "__set__",
        "__len__",
        "__iter__",
        "__hash__",
        "__setitem__",
        "__getitem__",
        "size",
        "stride",
        "dim",
        "ndimension",
        "numel",
        "nelement",
        "element_size",
        "data_ptr",
        "storage_offset",
        "is_contiguous",
        "is_floating_point",
        "is_complex",
        "get_device",
        "type",
        "view",
        "view_as",
        "reshape",
        "reshape_as",
        "flatten",
        "unflatten",
        "squeeze",
        "unsqueeze",
        "permute",
        "transpose",
        "t",
        "expand",
        "expand_as",
        "narrow",
        "select",
        "split",
        "chunk",
        "unbind",
        "as_strided",
        "movedim",
        "empty",
        "empty_like",
        "empty_strided",
        "new_empty",
        "new_empty_strided",
        "zeros",
        "zeros_like",
        "new_zeros",
        "ones",
        "ones_like",
        "new_ones",
        "full",
        "full_like",
        "new_full",
        "arange",
        "tensor",
        "as_tensor",
        "to",
        "cuda",
        "cpu",
        "zero_",
        "fill_",
        "resize_",
        "resize_as_",
        "set_",
        "detach",
        "requires_grad_",
        "float",
        "half",
        "bfloat16",
        "double",
        "int",
        "long",
        "bool",
        "cdiv",
        "is_tensor",
    }
)


# What Triton itself does with torch inside a launch: the interpreter moves arguments to the
# host and back. Any other torch call made from a Triton frame comes from something the
# candidate handed Triton to run (a grid, a hook, a heuristic, a pruning function), whatever
# its kind (a builtin or a partial leaves no frame of the candidate's between Triton and
# torch), or from a Triton function the candidate called there (a ``TensorWrapper``'s
# ``copy_``, an autotuner's hooks called by hand): the candidate's.
TRITON_DATA_MOVES = frozenset(
    {
        "cpu",
        "copy_",
        "clone",
        "zero_",
        "to",
        "untyped_storage",
        "data_ptr",
        "detach",
        "cuda",
        "set_",
    }
)
# The frames of Triton's launch machinery that call what the candidate handed over: a grid, a
# heuristic, a pruning function, a config's hook (JITFunction.run, the interpreter's
# GridExecutor.__call__, Heuristics.run, the autotuner's run, prune_configs, _bench and its
# kernel_call). A callable made only of C glue (functools.partial over map and next) leaves
# no frame of its own, so a torch call it makes is met with one of these as its nearest
# Python caller: it is the candidate's, whatever its name. Triton's own moves of arguments
# are made in frames of other names (the interpreter's _to_cpu and _from_cpu, the
# autotuner's _pre_hook and _post_hook).
# The interpreter's own moves of a launch's arguments (GridExecutor: to the host and back),
# the only places inside a launch where a torch move is Triton's, and only where every frame
# from there out to the launch is Triton's: a grid callable that calls them itself (they
# are methods any code can reach) makes the move its own.
TRITON_MOVE_SITES = frozenset(
    {
        "_to_cpu",
        "_from_cpu",
        "_init_args_hst",
        "_restore_args_dev",
        "_unwrap_tensor",
        "_rewrap_tensor",
        "_tuple_create",  # a tuple argument's members, moved one by one (triton/_utils.py)
        "<listcomp>",
        "<dictcomp>",
    }
)
TRITON_CALLBACK_SITES = frozenset(
    {"run", "__call__", "prune_configs", "_bench", "kernel_call", "warmup", "_call_hook"}
)
# Operators that return a view (or their own input) where they can, and a copy where they
# cannot or are asked to (a gather by an index tensor, the reshape of a transpose, a move or
# conversion that makes a new tensor, ``to(copy=True)``): a copy is counted as compute, as
# ``contiguous`` and ``clone`` are (for a transpose the copy is the task).
VIEW_OR_COPY = frozenset(
    {
        "__getitem__",
        "reshape",
        "reshape_as",
        "flatten",
        "unflatten",
        "to",
        "cuda",
        "cpu",
        "type",
        "float",
        "half",
        "bfloat16",
        "double",
        "int",
        "long",
        "bool",
    }
)


# Values torch reads without calling anything of the candidate's: exact types only (a
# subclass of list or int, a class that names torch its module, a torch module whose
# attributes the candidate set, each brings methods of its own), tensors, torch's value
# types and numpy's arrays and scalars.
_PLAIN = frozenset(
    {
        int,
        float,
        bool,
        complex,
        str,
        bytes,
        type(None),
        slice,
        type(Ellipsis),
        range,
        torch.Tensor,
        torch.nn.Parameter,
        torch.dtype,
        torch.device,
        torch.Size,
        torch.memory_format,
        torch.layout,
        torch.Generator,
    }
)
_CONTAINERS = frozenset({list, tuple, dict})
# How many values a call's arguments are read for: an argument holding more (a list of a
# million numbers for torch.tensor) is not read to its end, and is itself foreign (what is
# not read may hold anything; a forward has no need of such a list).
_FOREIGN_SCAN = 1 << 16


def _numpy_types() -> frozenset[type]:
    """numpy's array and scalar types, where numpy is installed (torch reads them natively)."""
    try:
        import numpy
    except ImportError:
        return frozenset()
    return frozenset({numpy.ndarray, *(numpy.dtype(c).type for c in "?bhilqBHILQefdgFDG")})


_PLAIN = _PLAIN | _numpy_types()


def _foreign(value: Any) -> str | None:
    """The name of a type outside ``_PLAIN`` among a call's arguments (into lists, tuples and
    dicts), or None. torch calls such a value's methods while the call runs (a
    ``__getattr__`` asked for ``__cuda_array_interface__``, an ``__index__``, a subclass's
    ``__torch_function__``), and what C code does there (``functools.partial`` over ``map``)
    no frame shows: no torch call needs one. Plain Python functions are let through (their
    frames are the candidate's: ``_run`` records them)."""
    stack, seen = [value], 0
    while stack:
        item = stack.pop()
        seen += 1
        if seen > _FOREIGN_SCAN:
            return f"more than {_FOREIGN_SCAN} values"
        kind = type(item)
        if kind is slice:  # its bounds: an object with an __index__ there is called too
            stack.extend((item.start, item.stop, item.step))
            continue
        if kind in _PLAIN:
            continue
        if kind in _CONTAINERS:
            stack.extend(dict.values(item) if kind is dict else item)
            continue
        if kind is types.FunctionType:
            continue
        return kind.__name__[:40]
    return None


# Calls of NON_COMPUTE whose other tensor arguments are templates: their metadata or their
# memory to alias is what is taken (``x.view_as(y)``, ``x.to(y)``, ``x.set_(y)``, ``x.data = y``).
TEMPLATE_ARGUMENTS = frozenset(
    {"view_as", "reshape_as", "expand_as", "resize_as_", "to", "type", "set_", "__set__", "__get__"}
)
# Calls of NON_COMPUTE whose first argument is what they read (data to copy, a size, a bound),
# not a tensor they act on: torch's factories (``torch.empty(t)`` reads ``t``'s value as a size).
DATA_ARGUMENTS = frozenset(
    {"tensor", "as_tensor", "empty", "empty_strided", "zeros", "ones", "full", "arange"}
)


def _reads_values(name: str, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> bool:
    """Whether a call of NON_COMPUTE reads tensors' values, in C++, where no torch call is
    seen: a tensor among its sizes, bounds, fill value, index or data. ``torch.empty_strided``
    of sizes ``(0, *x_bytes)`` allocates nothing and hands every byte of ``x`` back as a
    size; ``torch.tensor`` of a list of one-element tensors copies their values;
    ``fill_(t)`` and ``full(size, t)`` read one. The tensor a call acts on is not read
    (``zeros_like(x)``, ``x.new_empty(n)``), nor a template's (``TEMPLATE_ARGUMENTS``)."""
    if name not in NON_COMPUTE or name in TEMPLATE_ARGUMENTS:
        return False
    if name in DATA_ARGUMENTS:
        if name == "as_tensor" and args and result is args[0]:
            return False  # the tensor itself handed back: nothing read
        rest: tuple[Any, ...] = args
    else:
        rest = args[1:] if args and is_a(args[0], torch.Tensor) else args
    stack = [*rest, *(v for k, v in kwargs.items() if k != "out")]
    seen = 0
    while stack and seen <= _FOREIGN_SCAN:  # beyond it the arguments are foreign anyway
        item = stack.pop()
        seen += 1
        kind = type(item)
        if is_a(item, torch.Tensor):
            return True
        if kind in _CONTAINERS:
            stack.extend(dict.values(item) if kind is dict else item)
        elif kind is slice:
            # ``x[t:]`` reads ``t``'s value as a bound (a byte handed back as an offset).
            stack.extend((item.start, item.stop, item.step))
    return False


def _of_numpy(builtin: Any) -> bool:
    """Whether a builtin called (a profile hook's ``c_call``) is numpy's: a function of its
    modules, or a method of one of its objects (an array's ``sum``, a ufunc's ``reduce``)."""
    module = getattr(builtin, "__module__", None)
    if type(module) is str and module.startswith("numpy"):
        return True
    owner = type(getattr(builtin, "__self__", None))
    return str(getattr(owner, "__module__", "")).startswith("numpy")


def _candidates(filename: str) -> bool:
    """Code of the candidate's (its file, or code it made at run time): not kgym's, Triton's,
    the installed libraries' or the interpreter's frozen modules."""
    return not filename.startswith((_KGYM_DIR, _TRITON_DIR, *_INSTALLED, "<frozen ", "<string>"))


def _storage(value: Any) -> int | None:
    try:
        return int(value.untyped_storage().data_ptr()) if is_a(value, torch.Tensor) else None
    except RuntimeError:  # a tensor without storage (meta, functional wrappers)
        return None


# The items of one result (a foreach call's list) read for tensors: far more than any
# model's call returns, so that no answer lies beyond them.
MAX_RESULT_ITEMS = 1 << 16


def _tensors_in(value: Any, depth: int = 0) -> list[torch.Tensor]:
    """The tensors ``value`` holds: itself, or inside tuples (named ones and
    ``torch.return_types`` too), lists and dicts, a few levels deep, any tensor type."""
    if is_a(value, torch.Tensor):
        return [value]
    if depth > 3:
        return []
    if is_a(value, dict):
        value = list(dict.values(value))
    if is_a(value, (tuple, list)):
        return [t for v in list(value)[:MAX_RESULT_ITEMS] for t in _tensors_in(v, depth + 1)]
    return []


# At most this many nodes of an autograd graph are walked for the leaves a backward wrote.
MAX_GRAPH_NODES = 4096


def _accumulated_grads(roots: list[torch.Tensor]) -> list[torch.Tensor]:
    """The ``.grad`` of every leaf the graphs of ``roots`` end in (after ``backward``)."""
    stack = [root.grad_fn for root in roots if root.grad_fn is not None]
    seen: set[int] = set()
    grads: list[torch.Tensor] = []
    while stack and len(seen) < MAX_GRAPH_NODES:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        leaf = getattr(node, "variable", None)
        if is_a(leaf, torch.Tensor) and is_a(leaf.grad, torch.Tensor):
            grads.append(leaf.grad)
        stack.extend(following for following, _ in getattr(node, "next_functions", ()))
    return grads


def _version(t: torch.Tensor) -> int | None:
    """``t``'s version counter, or None (an inference tensor keeps none)."""
    try:
        return int(t._version)
    except RuntimeError:
        return None


class _MemoryRef:
    """A computed tensor's memory, weakly, called as a weak reference is: a tensor on that
    memory laid out as the computed one was, while the memory lives, whatever holds it now
    (an ``nn.Parameter`` made on it, an autograd node's saved result) after every tensor the
    record saw on it is gone; None once it is freed."""

    def __init__(self, value: torch.Tensor) -> None:
        from torch.multiprocessing.reductions import StorageWeakRef

        self._memory = StorageWeakRef(value.untyped_storage())
        self._layout = (value.dtype, value.device, value.storage_offset())
        self._shape = (tuple(value.shape), tuple(value.stride()))

    def __call__(self) -> torch.Tensor | None:
        if self._memory.expired():
            return None
        memory = torch.UntypedStorage._new_with_weak_ptr(self._memory.cdata)
        dtype, device, offset = self._layout
        with torch._C.DisableTorchFunction():
            return torch.empty(0, dtype=dtype, device=device).set_(memory, offset, *self._shape)


def _alive(refs: list[weakref.ref[torch.Tensor]]) -> torch.Tensor | None:
    """The first of ``refs`` still alive, a tensor the record saw before a tensor rebuilt on
    the memory (``_MemoryRef``), which stands in only when none of those lives."""
    memory = None
    for ref in refs:
        if is_a(ref, _MemoryRef):
            memory = ref
            continue
        value = ref()
        if value is not None:
            return value
    return memory() if memory is not None else None


def _written(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[torch.Tensor]:
    """The tensors a computing call wrote into: its first argument for an in-place method
    (``exp_``, ``copy_``, ``__iadd__``) or an item store, and its ``out=``."""
    base = name.split(" ", 1)[0]
    inplace = (base.endswith("_") and not base.endswith("__")) or base in INPLACE_DUNDERS
    written = [args[0]] if inplace and args and is_a(args[0], torch.Tensor) else []
    return written + _tensors_in(kwargs.get("out"))


# Item stores and the augmented assignments: they write into their first argument.
INPLACE_DUNDERS = frozenset(
    {
        "__setitem__",
        "__iadd__",
        "__isub__",
        "__imul__",
        "__itruediv__",
        "__ifloordiv__",
        "__imod__",
        "__ipow__",
        "__iand__",
        "__ior__",
        "__ixor__",
        "__ilshift__",
        "__irshift__",
        "__imatmul__",
    }
)


def _below_float32(dtype: torch.dtype) -> bool:
    """A float or complex type whose values hold less precision than float32's (float16,
    bfloat16, every float8 and float4, complex32: two float16 halves), or a quantized one:
    every such type torch has, not a list that a new one would miss."""
    if str(dtype).removeprefix("torch.").startswith(("qint", "quint")):
        return True
    if not (dtype.is_floating_point or dtype.is_complex):
        return False
    try:
        return torch.finfo(dtype).eps > torch.finfo(torch.float32).eps
    except (TypeError, NotImplementedError):  # a packed type (float4 pairs): below it
        return True


LOW_PRECISION_DTYPES = frozenset(
    value
    for value in (getattr(torch, name, None) for name in dir(torch))
    if is_a(value, torch.dtype) and _below_float32(value)
)
LOW_PRECISION_METHODS = frozenset({"half", "bfloat16", "chalf"})


def _onto_device(source: Any, result: Any) -> bool:
    """A move from the host onto a device (a constant made with torch on the host): a transfer,
    not compute. The other way is a read of the values to the host, where host compute starts."""
    return (
        type(source) is torch.Tensor
        and type(result) is torch.Tensor
        and source.device.type == "cpu"
        and result.device.type != "cpu"
    )


def _low_precision(result: Any) -> bool:
    """Whether a call made an fp16, bf16 or fp8 tensor, however its type was named (a dtype, a
    method, a type string such as ``'torch.BFloat16Tensor'``, another tensor's type)."""
    return any(v.dtype in LOW_PRECISION_DTYPES for v in _tensors_in(result))


# The torch-made tensors a call's copy test looks at: every computed one still alive (no
# number of fillers pushes an answer out: holding them alive is the candidate's own cost), and
# of those only allocated, the latest this many alive.
MAX_MADE = 64


# The calls that run the autograd engine: what it computes reaches the candidate's code with
# no call of its own (a hook's gradient, a custom Function's ``grad_output``, a leaf's ``.grad``).
ENGINE_CALLS = frozenset({"backward", "grad"})


class _RecordMode(TorchDispatchMode):
    """A dispatch mode of the record's. torch wraps a mode's ``__torch_dispatch__`` to keep
    Dynamo out of it, which imports Dynamo at the first operator (0.75 s of a runner's first
    graded call on a CPU, where the fork server does not import it); no Dynamo runs in the
    candidate's process (torch.compile is refused), so the wrap is left out."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False


class _EngineResults(_RecordMode):
    """Every tensor an operator computes while the autograd engine runs a backward the
    candidate asked for, handed to ``keep``. The engine runs a GPU's backward on a thread of
    its own, where the profile hook that takes a callback's arguments (``_run``) is not set;
    this mode is there, as the engine carries the caller's thread-local state to that thread."""

    def __init__(self, keep: Callable[[torch.Tensor, int], None]) -> None:
        super().__init__()
        self._keep = keep

    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        result = func(*args, **(kwargs or {}))
        _keep_results(result, self._keep)
        return result


def _keep_results(result: Any, keep: Callable[[torch.Tensor, int], None]) -> None:
    """Each non-empty tensor of an operator's ``result`` handed to ``keep`` by its base, with
    the bytes the operator wrote."""
    for value in _tensors_in(result):
        if value.numel() > 0:
            base = value if value._base is None else value._base
            keep(base, value.numel() * value.element_size())


# Operators that make no values of their own: an allocation, a view, a change of metadata.
_NO_VALUES = frozenset(
    {"empty", "empty_strided", "empty_like", "new_empty", "new_empty_strided", "resize_"}
)


class _OffRecord(_RecordMode):
    """Every operator that runs while the record's call (``TorchOpRecorder``) is on and no torch
    call of Python's is in progress: torch's work started from C++ with no torch function of
    its own (a TorchScript function, a C++ engine), which no torch function mode sees. It is
    compute like any call's (``strict``), and what it made is a copy source (``hybrid``)."""

    def __init__(self, record: TorchOpRecorder) -> None:
        super().__init__()
        self._record = record

    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        # Neither the operator nor this bookkeeping is a torch call of the candidate's: the
        # record's function mode, still on the stack, must not count them.
        with torch._C.DisableTorchFunction():
            result = func(*args, **(kwargs or {}))
            record = self._record
            if record.depth:  # inside a recorded torch call (most operators): that call's
                return result
            packet = str(getattr(getattr(func, "overloadpacket", None), "__name__", func))
            if getattr(func, "is_view", False) or packet in _NO_VALUES:
                return result
            if record._in_launch() and not record._candidate_made_it(packet):
                return result  # Triton's own moves of a launch's arguments (the interpreter's)
            record.calls[f"{packet[:40]} (off the torch call record)"] += 1
            if _low_precision(result):
                record.low_precision[packet[:80]] += 1
            _keep_results(result, record._keep_computed)
        return result


def close_unrecorded_threads() -> None:
    """Takes torch's ``ThroughputBenchmark`` from the candidate's process before its code loads:
    it runs a Python module on C++ threads of its own and joins them before it returns, and
    this record, a mode on the calling thread's stack, never sees what torch computes there (a
    softmax, a GEMM: paid under ``strict``). The autograd engine's threads, torch's other
    runner of Python off the calling thread, are followed (``_EngineResults``)."""
    import torch.utils
    import torch.utils.throughput_benchmark as throughput

    for owner in (torch._C, torch.utils, throughput):
        if hasattr(owner, "ThroughputBenchmark"):
            delattr(owner, "ThroughputBenchmark")


# What Triton's autotuner does between its trials, outside any launch, to the launch's own
# arguments named by ``reset_to_zero`` and ``restore_value``: zero one, keep a copy of one
# and put it back.
AUTOTUNER_MOVES = frozenset({"zero_", "clone", "copy_"})
_AUTOTUNER_FILE = os.path.join(_TRITON_DIR, "runtime", "autotuner.py")


def _autotuner_restores(args: tuple[Any, ...]) -> bool:
    """Whether a torch move is the autotuner's own reset or restore of a launch's argument:
    made in its default hooks (``_pre_hook``, ``_post_hook``) as its trial calls them
    (``kernel_call``, ``benchmark``), on the very tensor the launch was given under the name
    the hook moves. A hook called by hand, or a name whose tensor the candidate swapped
    between the hooks (a transposed view cloned, copied into the output), is the
    candidate's torch work."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    while frame is not None and not frame.f_code.co_filename.startswith(_TRITON_DIR):
        if not frame.f_code.co_filename.startswith((*_INSTALLED, "<frozen ")):
            return False  # the candidate's own frame first
        frame = frame.f_back
    if frame is None or frame.f_code.co_filename != _AUTOTUNER_FILE:
        return False
    hook = frame if frame.f_code.co_name != "<dictcomp>" else frame.f_back
    if hook is None or hook.f_code.co_name not in ("_pre_hook", "_post_hook"):
        return False
    caller = hook.f_back
    if caller is None or caller.f_code.co_filename != _AUTOTUNER_FILE:
        return False
    if caller.f_code.co_name not in ("kernel_call", "benchmark"):
        return False
    tuner, name = hook.f_locals.get("self"), frame.f_locals.get("name")
    given = getattr(tuner, "nargs", None)
    return (
        type(given) is dict
        and type(name) is str
        and bool(args)
        and args[0] is dict.get(given, name)
        and args[0] is not None
    )


def _triton_moved_it(frame: Any) -> bool:
    """Whether the Triton frame a torch move was made from is the interpreter's own move of
    the launch's arguments: a move site (``TRITON_MOVE_SITES``), and every frame out from it
    to the launch's own (a callback site: ``GridExecutor.__call__``) Triton's."""
    while frame is not None:
        code = frame.f_code
        if not code.co_filename.startswith(_TRITON_DIR):
            return False
        if code.co_name in TRITON_CALLBACK_SITES:
            return True
        if code.co_name not in TRITON_MOVE_SITES:
            return False
        frame = frame.f_back
    return False


class TorchOpRecorder(TorchFunctionMode):
    """Counts the torch functions the candidate calls while active: every call outside a
    Triton launch, and inside one those made from the candidate's own frames."""

    def __init__(self, in_launch: Callable[[], bool]) -> None:
        super().__init__()
        self.calls: Counter[str] = Counter()
        self.low_precision: Counter[str] = Counter()  # calls that make fp16/bf16/fp8 values
        # The tensors the candidate's torch calls made (weakly, the latest MAX_MADE): a kernel
        # that stores one of them copies torch's answer, however it reached it (an argument, or
        # an address passed as a number), which the decoy check's copy test must know.
        self._made: list[weakref.ref[torch.Tensor]] = []
        # The computed tensors by memory: (bytes, n, every tensor seen on that memory, weakly:
        # the result, and its aliases a later call handed back, ``.detach()`` or a tensor
        # ``.data =`` rebound onto it), alive while any of them is.
        self._computed: list[tuple[int, int, list[weakref.ref[torch.Tensor]]]] = []
        self._by_storage: dict[int | None, list[weakref.ref[torch.Tensor]]] = {}
        self._order = itertools.count()  # n: which was made later, among tensors of one size
        self._prune_at = 2 * MAX_MADE  # entries at which the dead computed ones are dropped
        self._in_launch = in_launch
        # Shown every tensor a computing call makes, as it is made (a decoy call's check of
        # what torch computes after an ablated launch: ablation.Recomputation).
        self.computed_hook: Callable[[torch.Tensor], None] | None = None
        # Compute the candidate's own code made while a launch ran (a grid, a heuristic, a hook,
        # a kernel body under the interpreter): no kernel's work, under either policy.
        self.in_launch: Counter[str] = Counter()
        self._callback: Any = None  # the candidate's frame torch called back into (_run)
        # Torch calls of Python's in progress, the candidate's or a library's; 0 in the
        # candidate's own code, a callback's too (_OffRecord: what runs at 0 is off the record).
        self.depth = 0
        self._depths: list[int] = []  # the depth each callback in progress interrupted
        self._off_record = _OffRecord(self)
        # Calls handed an object of a type of the candidate's own (_foreign).
        self.callbacks: Counter[str] = Counter()

    def __enter__(self) -> TorchOpRecorder:
        super().__enter__()
        self._off_record.__enter__()
        # numpy called from the candidate's frames (outside a launch, whose guard turns this
        # off): host compute on a tensor's memory reached by its address (``as_strided``
        # views placed by ``data_ptr()``), which no torch call shows, however the module was
        # reached (an alias in another module, a container, a name built at run time).
        self._profile_before = sys.getprofile()
        sys.setprofile(self._watch_numpy)
        return self

    def __exit__(self, *exc: Any) -> None:
        sys.setprofile(self._profile_before)
        self._off_record.__exit__(*exc)
        super().__exit__(*exc)

    def _watch_numpy(self, frame: Any, event: str, arg: Any) -> None:
        """The profile hook of the record's call: numpy's functions (``call``: its Python
        code) and builtins (``c_call``: a function of its modules, a method of its arrays or
        ufuncs) called from the candidate's own frames count as compute."""
        if event == "c_call":
            if _of_numpy(arg) and _candidates(frame.f_code.co_filename):
                self.calls[f"numpy.{str(getattr(arg, '__name__', '?'))[:40]}"] += 1
        elif event == "call" and frame.f_code.co_filename.startswith(_NUMPY_DIR):
            caller = frame.f_back
            if caller is not None and _candidates(caller.f_code.co_filename):
                self.calls[f"numpy.{frame.f_code.co_name[:40]}"] += 1

    def __torch_function__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        self.depth += 1
        try:
            return self._handle(func, args, kwargs)
        finally:
            self.depth -= 1

    def _handle(self, func: Any, args: tuple[Any, ...], kwargs: Any) -> Any:
        name = str(getattr(func, "__name__", None) or func)
        launching = self._in_launch()
        if launching and not self._candidate_made_it(name):
            return func(*args, **(kwargs or {}))
        if name in AUTOTUNER_MOVES and _autotuner_restores(args):
            return func(*args, **(kwargs or {}))
        foreign = _foreign((args, kwargs))
        if foreign is not None:
            self.callbacks[f"{name[:60]} ({foreign})"] += 1
        # What a call writes into, however it is named (a batch norm's running statistics,
        # ``relu(x, inplace=True)``): the tensors whose version counter it moved.
        given = _tensors_in([list(args), kwargs or {}])
        versions = [_version(t) for t in given]
        if name in ENGINE_CALLS:
            with _EngineResults(self._keep_computed):
                result = self._run(func, args, kwargs or {})
        else:
            result = self._run(func, args, kwargs or {})
        moved = [t for t, v in zip(given, versions) if v is not None and _version(t) != v]
        name = self._name(name, args, kwargs or {}, result)
        if self._counts(name, args, result):
            self.calls[name[:80]] += 1
            self._keep(result, args, kwargs or {}, name, moved)
            if launching and name not in NON_COMPUTE:
                self.in_launch[name[:80]] += 1
        if (
            name in LOW_PRECISION_METHODS
            or _low_precision(result)
            or any(
                is_a(v, torch.dtype) and v in LOW_PRECISION_DTYPES
                for v in (*args, *(kwargs or {}).values())
            )
        ):
            self.low_precision[name[:80]] += 1
        return result

    def _run(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``func`` with this record taken up again in whatever of the candidate's code torch
        calls back into while it runs: torch takes this mode off its stack for the length of
        the call, and reads its arguments through their own methods (a ``__getattr__`` asked
        for ``__cuda_array_interface__``, an ``__index__``, a subclass's ``__torch_function__``),
        whose torch calls are the candidate's as much as its forward's."""
        previous, outer = sys.getprofile(), self._callback
        self._callback = None  # this call's own: a call inside a callback has its own
        sys.setprofile(self._watch)
        try:
            return func(*args, **kwargs)
        finally:
            sys.setprofile(previous)
            if self._callback is not None:  # a frame that never saw its return event
                _pop_mode()
                self.depth = self._depths.pop()
            self._callback = outer

    def _watch(self, frame: Any, event: str, _arg: Any) -> None:
        """The profile hook while a torch call runs: the candidate's frame entered from it
        puts this record back on the stack until that frame returns."""
        if event == "call" and self._callback is None:
            if _candidates(frame.f_code.co_filename):
                self._callback = frame
                self._take_arguments(frame)
                _push_mode(self)
                self._depths.append(self.depth)  # the candidate's code: off any torch call
                self.depth = 0
        elif event == "return" and frame is self._callback:
            self._callback = None
            _pop_mode()
            self.depth = self._depths.pop()

    def _keep(
        self,
        result: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        name: str,
        moved: list[torch.Tensor] | None = None,
    ) -> None:
        """The tensors a call handed the candidate in memory of their own (computed, or
        allocated: torch may fill a buffer where no call is seen, such as the ``.real``
        setter's copy): whatever its result holds, at any depth and of any tensor type (an
        ``nn.Parameter``, a ``torch.return_types`` result), and what a computing call wrote
        into (``_written``: ``copy_``, ``exp_``, an item store, ``out=``), kept by its base
        (a view's base outlives the view). Views of a tensor it took are not new memory.
        Computed ones are kept by size, the largest ``MAX_MADE`` (tiny tensors made afterwards
        do not push an answer out); allocated ones by recency."""
        computed = name not in NON_COMPUTE
        written = _written(name, args, kwargs) if computed else []
        if computed:
            written += [t for t in moved or [] if not any(t is w for w in written)]
        taken = {_storage(a) for a in args if is_a(a, torch.Tensor)}
        taken -= {_storage(w) for w in written}
        results = _tensors_in(result)
        if computed and name == "backward":
            # The autograd engine accumulates into each leaf's ``.grad`` in C++, with no
            # call: a gradient set beforehand to a view of the candidate's own buffer.
            written += _accumulated_grads([*_tensors_in(list(args)), *_tensors_in(kwargs)])
        for value in results + written:
            if value.numel() == 0 or _storage(value) in taken:
                continue
            if computed:
                base = value if value._base is None else value._base
                self._keep_computed(base, value.numel() * value.element_size())
                if self.computed_hook is not None:
                    self.computed_hook(value)
            else:
                self._made.append(weakref.ref(value))
        if len(self._made) > MAX_MADE:  # the dead go first: only live ones push others out
            self._made = [r for r in self._made if r() is not None][-MAX_MADE:]
        # Any tensor a call takes or gives that lies on computed memory is that memory's too.
        self._keep_aliases([*_tensors_in(list(args)), *results])

    def _keep_computed(self, value: torch.Tensor, size: int | None = None) -> None:
        """``value`` (the base of what a call computed) kept, ranked by ``size``: the bytes
        the call wrote (its result's or the view it wrote into), not its storage's (a
        buffer of any size with one element computed ranks as one element)."""
        if size is None:
            size = int(value.untyped_storage().nbytes())
        refs = self._entry(value)
        if refs is not None:  # computed into again: kept once, ranked by its largest write
            for at, entry in enumerate(self._computed):
                if entry[2] is refs and entry[0] < size:
                    self._computed[at] = (size, entry[1], refs)
            return
        refs = [weakref.ref(value)]
        if _storage(value) is not None:
            refs.append(_MemoryRef(value))  # type: ignore[arg-type]
        self._computed.append((size, next(self._order), refs))
        self._by_storage[_storage(value)] = refs
        if len(self._computed) > self._prune_at:  # the dead go; every live one stays
            self._computed = [e for e in self._computed if _alive(e[2]) is not None]
            kept = {id(e[2]) for e in self._computed}
            self._by_storage = {k: v for k, v in self._by_storage.items() if id(v) in kept}
            self._prune_at = max(2 * MAX_MADE, 2 * len(self._computed))

    def _entry(self, value: torch.Tensor) -> list[weakref.ref[torch.Tensor]] | None:
        """The aliases of the computed memory ``value`` lies on, or None (memory freed and
        given out again is another's)."""
        where = _storage(value)
        refs = self._by_storage.get(where)
        held = _alive(refs) if refs is not None else None
        if held is not None and (held is value or _storage(held) == where):
            return refs
        return None

    def _keep_aliases(self, tensors: list[torch.Tensor]) -> None:
        if not self._computed:
            return
        for value in tensors:
            refs = self._entry(value)
            if refs is not None and not any(r() is value for r in refs):
                refs[:] = [r for r in refs if r() is not None][-63:]  # the dead go (not memory)
                refs.append(weakref.ref(value))

    def _take_arguments(self, frame: Any) -> None:
        """The tensors torch hands the candidate's code it calls back into (a hook's gradient,
        a ``__torch_function__``'s arguments): torch's work as much as a call's result."""
        code = frame.f_code
        count = code.co_argcount + code.co_kwonlyargcount
        count += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)  # *args, **kwargs
        values = frame.f_locals
        for name in code.co_varnames[:count]:
            for value in _tensors_in(values.get(name)):
                if value.numel() > 0:
                    self._keep_computed(value if value._base is None else value._base)

    def made(self) -> list[torch.Tensor]:
        """The tensors the candidate's torch calls made that are still alive: every computed
        one, the largest first, then the latest allocated ones."""
        live = [(e[0], e[1], t) for e in self._computed if (t := _alive(e[2])) is not None]
        live.sort(key=lambda e: (e[0], e[1]), reverse=True)
        alive: list[torch.Tensor | None] = [e[2] for e in live]
        alive += [ref() for ref in reversed(self._made)]
        return [t for t in alive if t is not None]

    def _candidate_made_it(self, name: str) -> bool:
        """Walking out from the call: torch's own wrappers, the installed libraries and the
        interpreter's frozen modules are looked through; kgym's frame met first makes the call
        kgym's (the decoy check's copies), Triton's makes it Triton's only for Triton's own moves
        of arguments (``TRITON_DATA_MOVES``) made outside the frames that call the candidate's
        callables (``TRITON_CALLBACK_SITES``), any other frame the candidate's (its file, or
        code it made at run time)."""
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename == __file__:
            frame = frame.f_back  # this record's own frames (a torch call's, an operator's)
        while frame is not None:
            filename = frame.f_code.co_filename
            if filename.startswith(_KGYM_DIR):
                return False
            if filename.startswith(_TRITON_DIR):
                if frame.f_code.co_name in TRITON_CALLBACK_SITES:
                    return True
                return name not in TRITON_DATA_MOVES or not _triton_moved_it(frame)
            if not filename.startswith((*_INSTALLED, "<frozen ")):
                return True
            frame = frame.f_back
        return False

    def compute_ops(self) -> list[str]:
        return sorted(name for name in self.calls if name not in NON_COMPUTE)

    def _counts(self, name: str, args: tuple[Any, ...], result: Any) -> bool:
        """``contiguous`` that hands back its own tensor copies nothing: not counted. One
        that made a tensor (another memory format asked, ``channels_last``: a transpose's
        whole work) is counted, whatever the tensor's layout was."""
        if name == "contiguous" and args and is_a(args[0], torch.Tensor):
            return result is not args[0]
        return True

    def _name(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> str:
        """The name a call is counted under: a view operator that copied, or an item store of
        a tensor (a copy of its values, ``copy_`` by another name: ``y[1:] = x.t()`` is a
        transpose), says so and counts as compute; a store of a number is a fill. So does a
        call of NON_COMPUTE that reads a tensor's values (``_reads_values``)."""
        made = _storage(result)
        if (
            name in VIEW_OR_COPY
            and args
            and made is not None
            and made != _storage(args[0])
            and not _onto_device(args[0], result)
        ):
            return f"{name} (a copy)"
        # Any tensor, subclasses too (an nn.Parameter of a transposed view is the same copy).
        if name == "__setitem__" and len(args) > 2 and is_a(args[2], torch.Tensor):
            if args[2].numel() > 1:
                return "__setitem__ (a copy of a tensor)"
        if _reads_values(name, args, kwargs, result):
            return f"{name} (of a tensor's values)"
        return name

    def summary(self) -> dict[str, Any]:
        return {
            "calls": dict(self.calls.most_common(40)),
            "compute": self.compute_ops(),
            "low_precision": sorted(self.low_precision)[:20],
            "in_launch": sorted(self.in_launch)[:20],
            "callbacks": sorted(self.callbacks)[:20],
        }
