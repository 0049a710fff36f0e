"""A runner: the process that imports one model (the candidate's, or the task's reference) and
calls it on inputs the judge put in shared memory, writing the outputs back there.

The judge forks two runners before it touches CUDA: the reference's (trusted code, run exactly
as the candidate's is, so that both are timed by the same method) and the candidate's. A runner
answers the judge's messages (``kgym.harness.protocol``) and nothing it says is believed
unverified: its outputs are compared by the judge, its timing is the judge's clock, and a report
that it failed can only cost the candidate. Everything here runs in the same process as candidate
code and may be tampered with; that is why the judge does the judging.
"""

from __future__ import annotations

import contextlib
import gc
import inspect
import os
import secrets
import socket
import time
import traceback
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from kgym.harness import compare, loader, protocol
from kgym.harness.arena import Arena, ArenaExport
from kgym.harness.errors import JitRanges, error_record, is_triton_compile_error
from kgym.harness.layout import SlotLayout, SlotViews, dtype_from
from kgym.harness.loader import TASK_MODULE, candidate_module_name
from kgym.harness.real_type import is_a
from kgym.harness.reply_schema import UNCHECKED_REPORTED


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The model's parameters and persistent buffers themselves, named and ordered as
    ``state_dict`` names them, read from the modules' own dicts with ``dict``'s methods: no
    method of the model's (``named_modules``, ``state_dict``'s hooks) or of a dict subclass it
    put there runs, so nothing tells it that the judge wrote its weights."""
    own: dict[str, torch.Tensor] = {}
    stack: list[tuple[str, Any]] = [("", model)]
    while stack:
        prefix, module = stack.pop()
        fields = object.__getattribute__(module, "__dict__")
        skip = fields.get("_non_persistent_buffers_set", set())
        for name, value in dict.items(fields.get("_parameters", {})):
            if is_a(value, torch.Tensor):
                own[prefix + name] = value
        for name, value in dict.items(fields.get("_buffers", {})):
            if is_a(value, torch.Tensor) and not (is_a(skip, set) and set.__contains__(skip, name)):
                own[prefix + name] = value
        children = list(dict.items(fields.get("_modules", {})))
        stack.extend(
            (f"{prefix}{name}.", child)
            for name, child in reversed(children)
            if is_a(child, torch.nn.Module)
        )
    return own


def _pretenders(model: torch.nn.Module) -> list[str]:
    """The entries of the model's modules' own dicts (parameters, buffers, submodules) whose
    real type is not what those dicts hold: an object whose class answers ``nn.Parameter``
    from a ``__class__`` of its own passes torch's checks, and torch's ``load_state_dict``
    then runs its ``copy_`` (it stored the judge's weights in float16 bits)."""
    found: list[str] = []
    stack: list[tuple[str, Any]] = [("", model)]
    while stack and len(found) < 8:
        prefix, module = stack.pop()
        fields = object.__getattribute__(module, "__dict__")
        for kind, holds in (("_parameters", torch.Tensor), ("_buffers", torch.Tensor)):
            for name, value in dict.items(fields.get(kind, {})):
                if value is not None and not is_a(value, holds):
                    found.append(f"{prefix}{name}: a {type(value).__name__}, not a tensor")
        for name, child in dict.items(fields.get("_modules", {})):
            if is_a(child, torch.nn.Module):
                stack.append((f"{prefix}{name}.", child))
            elif child is not None:
                found.append(f"{prefix}{name}: a {type(child).__name__}, not a module")
    return found


def _matching_names(
    own: dict[str, torch.Tensor], state: dict[str, torch.Tensor]
) -> dict[str, str] | None:
    """For each of the judge's weights, the entry of the model's state that takes it: the one
    of the same name where every name and shape matches, else, in order, the next entry of the
    same shape and type (a ModelNew that holds its own ``weight`` where the task's Model holds
    an ``nn.Linear``, made in the same order: the usual way); None where some weight finds no
    entry. Entries of the model's own beyond the task's are left as they are."""
    if not state:
        return None
    if own.keys() == state.keys() and all(own[k].shape == state[k].shape for k in state):
        return {k: k for k in state}
    entries = list(own.items())
    names: dict[str, str] = {}
    at = 0
    for name, value in state.items():
        while at < len(entries) and (
            entries[at][1].shape != value.shape or entries[at][1].dtype != value.dtype
        ):
            at += 1
        if at == len(entries):
            return None
        names[name] = entries[at][0]
        at += 1
    return names


INPUTS_MODIFIED = "the candidate modified its inputs"
# The kernels whose origins a graded call's reply carries, at most (policy._observe_origins
# reads as many).
MAX_ORIGIN_NAMES = 64


def _offset_elements(value: torch.Tensor, kind: str, count: int) -> int:
    """How many elements into its storage an input starts in an ``offset`` manner: ``small``,
    ``count`` (off every alignment the allocator gives); ``aligned``, ``count`` times 16 (on
    64 bytes of a float32 storage, off the arena's 512); ``rows``, ``count`` of its leading
    rows (a micro-batch of a larger batch, ``x.chunk()``'s later pieces)."""
    if kind == "aligned":
        return 16 * count
    if kind == "rows" and value.dim() > 0 and value.shape[0] > 0:
        return count * (value.numel() // value.shape[0])
    return count


def _inference_alias(value: torch.Tensor) -> torch.Tensor:
    """``value`` as an inference tensor on its own memory (called under inference mode)."""
    alias = torch.empty(0, dtype=value.dtype, device=value.device)
    return alias.set_(value.untyped_storage(), value.storage_offset(), value.size(), value.stride())


def _called_with(
    inputs: list[Any], manner: dict[str, Any]
) -> tuple[list[Any], dict[int, torch.Tensor]]:
    """The arguments of a graded call made in ``manner`` (the judge's draw): ``offset``
    (``[kind, count]``: ``_offset_elements``), each tensor input a copy that starts that many
    elements into a storage of its own (a slice of a batch: no longer on the arena's 512-byte
    boundary), with the copies as the judge wrote them by the input's place, to check them
    against after (and, in a decoy call, to know them as the judge's inputs, not sources:
    each a view into a copy of its whole storage, which the decoy check reads as it is);
    ``grad_inputs``, float inputs that require grad; ``inference``, inputs that are inference
    tensors (as made under ``torch.inference_mode``); ``alias``, pairs (i, j) where input j is
    input i itself (``model(x, x, x)``); ``refilled``, how many times each tensor input's
    version counter moves on (a buffer refilled by ``copy_`` before each call)."""
    given = list(inputs)
    kept: dict[int, torch.Tensor] = {}
    kind, count = manner.get("offset") or ("small", 0)
    if count:
        for index, value in enumerate(given):
            if type(value) is torch.Tensor:
                if kind == "fresh":
                    moved = _fresh_copy(value, off_boundary=int(count) > 1)
                    kept[index] = moved.clone()
                else:
                    offset = _offset_elements(value, str(kind), int(count))
                    storage = torch.empty(
                        value.numel() + offset, dtype=value.dtype, device=value.device
                    )
                    # The elements before the view: the input's own leading values (a
                    # caller's earlier rows), which a kernel that writes there changes (zeros
                    # hid a ReLU applied in place to them), and set bytes (a bool storage's
                    # arbitrary bytes came out of clone() as 0 or 1, unlike the recorded ones,
                    # and refused every candidate of a task with a mask input).
                    _fill_before(storage[:offset], value)
                    moved = storage[offset:].view(value.shape).copy_(value)
                    # A view into a copy of the whole storage: a decoy call's record of the
                    # storage as the judge wrote it is this copy, not another.
                    kept[index] = storage.clone()[offset:].view(value.shape)
                given[index] = moved
    if manner.get("grad_inputs"):
        # Inputs that require grad, as a layer's inputs inside a model being trained do: a
        # tensor of its own on the same memory, a leaf (the arena's values, unchanged), or
        # with ``grad_fn`` a view of one, as a previous layer's output has a grad_fn; a copy
        # the manner moved (fresh, or into a storage of its own) is made the leaf itself, a
        # caller's own tensor as it is: a tensor of its own from its first element on lost
        # the offset, and the decoy check's record of it (its whole storage as written) no
        # longer matched it, so that a kernel that is the identity on its inputs was taken
        # as copying them.
        with torch.enable_grad():
            given = [
                _requiring_grad(value, bool(manner.get("grad_fn")), own=index in kept)
                if type(value) is torch.Tensor and value.is_floating_point()
                else value
                for index, value in enumerate(given)
            ]
    if manner.get("inference"):
        # A server's activations are made under inference mode: inference tensors, on the
        # same memory (what the model reads and writes is the arena's, or the manner's copy).
        with torch.inference_mode():
            given = [
                _inference_alias(value) if type(value) is torch.Tensor else value for value in given
            ]
    for first, second in manner.get("alias") or []:
        given[int(second)] = given[int(first)]
        if int(first) in kept:  # the copy of what the place now holds
            kept[int(second)] = kept[int(first)]
        else:
            kept.pop(int(second), None)
    # A caller's buffer refilled in place before each call has counted every refill in its
    # version: the inputs' versions moved on by the drawn count (no data touched).
    refills = int(manner.get("refilled") or 0)
    for value in given:
        if type(value) is torch.Tensor and not value.is_inference():  # no version counter
            for _ in range(refills):
                torch.autograd.graph.increment_version(value)
    return given, kept


def _forward_signature(model: Any) -> tuple[list[str], bool] | None:
    """The forward's own positional-or-keyword names and whether it takes any keyword, read
    once per built model (``_build``): reading it runs whatever the candidate made of its
    forward (a ``__signature__`` or ``__wrapped__`` of its own), and read per call it ran in
    keyword calls only, which told them apart. None where no keyword call can be made."""
    try:
        params = list(inspect.signature(model.forward).parameters.values())
    except Exception:  # noqa: BLE001 - whatever the candidate's forward raises
        return None
    if any(p.kind is inspect.Parameter.POSITIONAL_ONLY for p in params):
        return None
    own = [str(p.name) for p in params if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    return own, any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def _by_keyword(
    signature: tuple[list[str], bool] | None, inputs: list[Any], names: list[str] | None
) -> dict[str, Any]:
    """A keyword call's arguments (``model(x=h)``, as a larger model's code calls a layer),
    or {} where it cannot be made: each input by the name its forward gives that place, or,
    past those, by the task's own name (``names``) where the forward takes any keyword."""
    if not names or signature is None:
        return {}
    own, takes_any = signature
    called: dict[str, Any] = {}
    for index, value in enumerate(inputs):
        if index < len(own):
            called[own[index]] = value
        elif takes_any and index < len(names) and names[index] not in called:
            called[names[index]] = value
        else:
            return {}
    return called


def _requiring_grad(value: torch.Tensor, with_grad_fn: bool, own: bool = False) -> torch.Tensor:
    leaf = value.requires_grad_() if own else torch.from_dlpack(value.detach()).requires_grad_()
    return leaf.view_as(leaf) if with_grad_fn else leaf


def _fill_before(before: torch.Tensor, value: torch.Tensor) -> None:
    """``before`` (the places an offset copy of ``value`` leaves ahead of it) filled with
    ``value``'s leading elements, repeated where it has fewer."""
    head = value.reshape(-1)[: before.numel()]
    if head.numel() == 0:
        before.zero_()
        return
    repeats = -(-before.numel() // head.numel())
    before.copy_(head.repeat(repeats)[: before.numel()])


def _storage_unchanged(copy: torch.Tensor, given: torch.Tensor) -> bool:
    """Whether the whole storage of ``given`` (a graded call's input that the manner moved)
    holds the bytes of ``copy``'s (the manner's record of it, as the judge wrote it): a
    kernel that writes before or after the view it was handed (a slice of a caller's batch)
    changed the caller's other rows, which its own view does not show."""
    from kgym.harness.ablation import _whole_storage

    held, now = _whole_storage(copy), _whole_storage(given)
    return held.numel() == now.numel() and compare.bitwise_equal(held, now)


def _fresh_copy(value: torch.Tensor, off_boundary: bool) -> torch.Tensor:
    """A contiguous copy of ``value`` in a tensor of torch's allocator, as a caller's own
    (``torch.randn``'s, a previous layer's output): at the start of a storage that may be
    resized, at the allocator's alignment. The judge's arena gives none of that (its storages
    are not resizable, its slots on 512 bytes, its offset copies past their start), and a
    model exact on the judge's memory alone was wrong on every caller's. ``off_boundary``:
    where the CPU's allocator (64-byte aligned) happened to give 512 bytes, another allocation
    is taken, up to eight (a GPU's caching allocator is always on 512 bytes, as the arena)."""
    copy = torch.empty_like(value, memory_format=torch.contiguous_format)
    held = []  # kept until the copy is chosen, so that each try gets other memory
    while off_boundary and copy.device.type == "cpu" and copy.data_ptr() % 512 == 0:
        if len(held) == 8:
            break
        held.append(copy)
        copy = torch.empty_like(value, memory_format=torch.contiguous_format)
    return copy.copy_(value)


@contextlib.contextmanager
def _manner(model: Any, manner: dict[str, Any]) -> Iterator[None]:
    """A graded call in the judge's drawn ``manner``: with grad mode on (torch's default, a
    training step's call) or under inference mode (a server's), with every module in
    training mode (nn.Module's default), with
    every parameter frozen (as served), each set in the modules' own dicts, no method of the
    model's run, and set back after."""
    modules = _modules(model) if manner.get("train") or manner.get("frozen") else []
    frozen = []
    if manner.get("frozen"):  # as served, or a LoRA's base: no parameter requires grad
        for module in modules:
            fields = object.__getattribute__(module, "__dict__")
            for param in dict.values(fields.get("_parameters", {})):
                if is_a(param, torch.Tensor) and param.requires_grad:
                    param.requires_grad_(False)
                    frozen.append(param)
    if manner.get("train"):
        for module in modules:
            object.__getattribute__(module, "__dict__")["training"] = True
    mode: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
    if manner.get("grad"):
        mode = torch.enable_grad()
    elif manner.get("inference"):  # as a server calls it: torch.inference_mode
        mode = torch.inference_mode()
    try:
        with mode:
            yield
    finally:
        if manner.get("train"):
            for module in modules:
                object.__getattribute__(module, "__dict__")["training"] = False
        for param in frozen:
            param.requires_grad_(True)


def _owned_tensors(model: Any) -> list[tuple[torch.Tensor, int, int]]:
    """Each tensor the model's modules hold in their own dicts (parameters, buffers,
    persistent or not, tensor attributes, tensors in their lists, tuples and dicts), with a
    seed and its fingerprint under it (ablation._fingerprint): read from the modules' dicts,
    no method of the model's run."""
    from kgym.harness.ablation import _fingerprint, _readable, _whole_storage
    from kgym.harness.torch_ops import _tensors_in

    seed = int.from_bytes(os.urandom(8), "little") >> 1
    owned: list[tuple[torch.Tensor, int, int]] = []
    seen: set[int] = set()
    for module in _modules(model):
        fields = object.__getattribute__(module, "__dict__")
        values = [
            *dict.values(fields.get("_parameters", {})),
            *dict.values(fields.get("_buffers", {})),
            # Held directly or in a list, tuple or dict (a workspace kept as [tensor]).
            *(t for value in dict.values(fields) for t in _tensors_in(value)),
        ]
        for value in values:
            # One print of each storage: views of one flat buffer would each print it whole.
            if _readable(value) and value.untyped_storage().data_ptr() not in seen:
                seen.add(value.untyped_storage().data_ptr())
                owned.append((value, seed, _fingerprint(_whole_storage(value), seed)))
    return owned


def _used_as_deployed(model: torch.nn.Module) -> None:
    """The model driven once, at the end of every set-up, through the public methods a
    training or serving script calls on it: its parameters iterated (an optimiser built over
    them, a device read), training mode set and left by its own methods, its gradients
    cleared. A model that changes how it computes once one of these ran meets every graded
    call changed. (A second load is a weight move of the judge's, between graded calls.)"""
    for _ in model.parameters():
        pass
    for _ in model.named_parameters():
        pass
    model.train()
    model.eval()
    model.zero_grad(set_to_none=True)


# What a module's class may define of nn.Module's own: its construction, its forward, its text.
_MODULE_OWN = frozenset({"__init__", "forward", "extra_repr", "__repr__"})


def _module_overrides(model: Any) -> list[str]:
    """nn.Module's methods that a class of the candidate's among the model's modules defines
    again (``Class.requires_grad_``): a deployed model is driven through them (freezing,
    moving, saving, wrapping), and one the candidate redefined behaves as the candidate
    likes there, where the judge, which sets what they set directly, never calls it. Only
    its construction, its forward and its text are the candidate's to define."""
    base = vars(torch.nn.Module)
    found: list[str] = []
    for module in _modules(model):
        for cls in type(module).__mro__:
            if cls.__module__ in ("builtins",) or cls.__module__.startswith("torch."):
                continue
            for name, value in vars(cls).items():
                if name in base and name not in _MODULE_OWN and callable(base[name]):
                    if callable(value) or type(value) in (staticmethod, classmethod, property):
                        found.append(f"{cls.__name__}.{name}")
    return sorted(set(found))[:10]


def _state_prints(model: Any, lent: set[str]) -> tuple[int, list[tuple[str, torch.Tensor, int]]]:
    """Each parameter of the model, and each persistent buffer that holds one of the judge's
    weights (``lent``, by ``state_dict`` name: a batch norm's running statistics, state a
    caller saves beside the weights; a buffer of the candidate's own, a packed copy it
    refreshes, is its own business), read from the modules' own dicts (``_state``), with a
    fingerprint of its values under a seed of the OS's, for ``_state_written`` after a graded
    call. All of them: a check that stopped at a count would leave the state past it to a
    model that registers that many first."""
    from kgym.harness.ablation import _fingerprint, _readable

    seed = int.from_bytes(os.urandom(8), "little") >> 1
    prints = []
    for name, tensor in _state(model).items():
        if (is_a(tensor, torch.nn.Parameter) or name in lent) and _readable(tensor):
            prints.append((name, tensor, _fingerprint(_values_bytes(tensor), seed)))
    return seed, prints


def _state_written(prints: tuple[int, list[tuple[str, torch.Tensor, int]]]) -> list[str]:
    """The parameters and buffers whose values a graded call changed (``_state_prints``): a
    forward never writes its weights (an optimiser does), nor in eval mode its buffers, and
    one that moves them a little on every call (a kernel that stores them back scaled) stays
    within the tolerance of each answer while the state a caller trains or saves drifts."""
    from kgym.harness.ablation import _fingerprint

    seed, held = prints
    return [name for name, t, was in held if _fingerprint(_values_bytes(t), seed) != was]


def _values_bytes(t: torch.Tensor) -> torch.Tensor:
    """The bytes of ``t``'s own elements (a copy where they are not contiguous)."""
    flat = t.detach()
    return (flat if flat.is_contiguous() else flat.contiguous()).reshape(-1).view(torch.uint8)


def _modules(model: Any) -> list[torch.nn.Module]:
    """Every module of ``model``, read from the modules' own dicts (as ``_state``)."""
    if not is_a(model, torch.nn.Module):
        return []
    found: list[torch.nn.Module] = []
    stack = [model]
    while stack and len(found) < 100_000:
        module = stack.pop()
        found.append(module)
        fields = object.__getattribute__(module, "__dict__")
        stack.extend(
            child
            for child in dict.values(fields.get("_modules", {}))
            if is_a(child, torch.nn.Module)
        )
    return found


class Runner:
    def __init__(
        self,
        sock: socket.socket,
        role: str,
        own_pid_namespace: bool = False,
        audit_fd: int = -1,
    ) -> None:
        self.sock = sock
        self.role = role
        self.audit_fd = audit_fd  # where the audit hook reports what it stopped (spawn.py)
        # Whether this runner is in a PID namespace of its own (with its init as parent): only
        # then may it start the candidate's compilation ahead (precompile.py), whose end
        # kills every other process of the namespace.
        self.own_pid_namespace = own_pid_namespace and os.getppid() == 1
        self.precompile: Any = None  # precompile.Precompile while its child may run
        self.device = torch.device("cpu")
        self.model: Any = None
        self.views: SlotViews | None = None
        self.arena: Arena | None = None
        self.returned: list[torch.Tensor] = []  # the latest graded call's outputs (op_call)
        # Every graded call's outputs, weakly: (where they lie, their storage) (op_call).
        self.returned_before: list[tuple[tuple[int, int, str], Any]] = []
        self.guards: Any = None
        self.module: Any = None
        self.source_file = ""
        self.jit = JitRanges([])
        self.triton_names: set[str] = set()
        self.compiled: Any = None
        self.model_class: Any = None  # the class the set-up built its model from
        self.first_model: Any = None  # the set-up's model while another build is called
        self.spare_model: Any = None  # a second build at other sizes, while the first is called
        # Each built model's forward signature (_forward_signature), read once, by id.
        self.signatures: dict[int, tuple[list[str], bool] | None] = {}
        self.lent: dict[int, set[str]] = {}
        self.collector_paused = False
        # What torch made in a graded call that raised, weakly: copy sources of the next call
        # too, which the judge makes on the same inputs (op_call).
        self.made_in_raised: list[weakref.ref[torch.Tensor]] = []
        # Timed calls whose output was not contiguous: the copy into the arena laid it out for
        # the candidate, as in a graded call (STRIDED_OUTPUT_COPY); reported after the window.
        self.strided_timed_outputs = 0
        self.through_data = secrets.randbits(1) == 1  # the next in-place weight move's way

    def _collector(self, resting: bool) -> None:
        """Python's cyclic garbage collector rests through every timed call, and from one
        timed call to the next message that is not one: a collection lands in whichever sample
        allocates past its threshold (Triton's launcher makes objects on every call), and one
        turned back on at the end of a batch would run while its reply is built, inside the
        judge's clock. Through a graded call it rests or runs, drawn by the OS (``serve``): a
        state every graded call shared was one no ordinary caller's does (a kernel that kept
        precision only where the collector rests), and a candidate that behaves otherwise
        while it rests meets graded calls where it does. It runs again after a graded call's
        reply. Both runners alike; a candidate that collects on its own time slows its own
        samples."""
        if resting and not self.collector_paused and gc.isenabled():
            gc.disable()
            self.collector_paused = True
        elif not resting and self.collector_paused:
            gc.enable()
            self.collector_paused = False

    # -- messages ------------------------------------------------------------------------------
    def serve(self) -> None:
        while True:
            try:
                message, payload, fds = protocol.recv_trusted(self.sock)
            except (protocol.ProtocolError, OSError):
                return  # the judge has gone
            op = message.get("op")
            if op == "exit":
                protocol.send(self.sock, {"ok": True})
                return
            self._collector(
                resting=op == "call" and (bool(message.get("timed")) or secrets.randbits(1) == 1)
            )
            if self.guards is not None:
                self.guards.calling = op == "call"
            try:
                reply = getattr(self, f"op_{op}")(message, payload, fds)
            except _Failure as failure:
                reply = failure.reply
            except BaseException as exc:  # noqa: BLE001 - a model may raise anything
                reply = self._exception_reply(exc, str(op))
            if self.guards is not None:
                self.guards.calling = False
            # The guards' checks take time: not inside a timed call (the judge's clock is
            # running), but at the next message that is not one.
            if self.guards is not None and reply.get("ok") is not None and not message.get("timed"):
                reply.setdefault("findings", []).extend(self.guards.check(f"during {op}"))
            protocol.send(self.sock, reply)
            if not message.get("timed"):
                self._collector(resting=False)
            if message.get("trim"):
                self._trim()

    def op_trim(self, message: dict[str, Any], payload: Any, fds: list[int]) -> dict[str, Any]:
        """Gives the blocks torch's caching allocator holds unused back to the driver: at
        KernelBench's largest sizes (6 GiB a tensor) what the checks left cached in one runner
        is what the other runner's timed calls need."""
        self.returned = []
        self._trim()
        return {"ok": True}

    def _trim(self) -> None:
        """The caching allocator's unused blocks back to the driver, also after each graded
        call that asks (``serve``; the correctness phase's, not the timing phase's, whose
        next timed call would allocate them again): blocks of every size the checks called
        at (the task's, the other sizes', a manner's copies) stayed cached, and the driver
        counts them as the runner's (gpu_memory.py), which took an honest candidate past its
        allowance."""
        if self.device.type == "cuda":
            _sync(self.device)
            torch.cuda.empty_cache()

    def op_ping(self, message: dict[str, Any], payload: Any, fds: list[int]) -> dict[str, Any]:
        """Says the runner is serving, which it does only once confined."""
        return {"ok": True}

    def _exception_reply(self, exc: BaseException, phase: str) -> dict[str, Any]:
        keep = (self.source_file.rsplit("/", 1)[-1] or "candidate.py",)
        return {
            "ok": False,
            "kind": "exception",
            "compile_error": is_triton_compile_error(exc, self.jit, keep[0]),
            "error": error_record(phase, exc, keep),
        }

    # -- set-up --------------------------------------------------------------------------------
    def op_warm(self, message: dict[str, Any], payload: Any, fds: list[int]) -> dict[str, Any]:
        """The slow first step of a GPU runner, asked for as soon as the runner serves so that
        it runs while the judge loads the task and builds its reference: the CUDA context, whose
        driver loads the kernel trace (kernel_trace.py) where the judge gave one. Only trusted
        code runs here: the candidate is not loaded yet, and the guards take their snapshot
        after this."""
        device = torch.device(str(message.get("device", "cuda")))
        ahead = message.get("precompile")
        if self.role == "candidate" and is_a(ahead, dict) and self.own_pid_namespace:
            from kgym.harness.precompile import Precompile

            # Forked before this process's CUDA context, which the child must not inherit.
            self.precompile = Precompile.start(ahead, self.audit_fd)
        if device.type != "cuda":
            return {"ok": True}
        try:
            torch.empty(1, device=device)  # the CUDA context, now
        finally:
            # The driver has read them: no process this one starts inherits them.
            os.environ.pop("CUDA_INJECTION64_PATH", None)
            os.environ.pop("KGYM_KERNEL_TRACE_FDS", None)
            if self.precompile is not None:
                capability = None
                with contextlib.suppress(Exception):
                    capability = tuple(torch.cuda.get_device_capability(device))
                self.precompile.send_arch(capability)
        if self.role == "candidate":
            # Triton's driver helpers, outside the GPU lock: loaded from the copy of the fork
            # server's build in this runner's cache (triton_warm), else built here (gcc, 0.44 s
            # on an H200's host: bench/judge_compile).
            _warm_triton_driver()
        return {"ok": True}

    def op_precompiled(
        self, message: dict[str, Any], payload: Any, fds: list[int]
    ) -> dict[str, Any]:
        """The compilation ahead (started by the warm-up), ended: waited for up to ``wait_s``,
        and everything it started gone. Asked by the judge before the job's first hold."""
        return {"ok": True, "precompile": self._end_precompile(float(message.get("wait_s", 0)))}

    def _end_precompile(self, wait_s: float) -> dict[str, Any] | None:
        """Before any candidate code runs in this process. A child stopped by the audit hook
        ends the runner as the hook would have (its event is on the shared audit descriptor);
        processes that outlive the sweep end it too, as a failure of the candidate's."""
        handle, self.precompile = self.precompile, None
        if handle is None:
            return None
        # Triton's driver helpers from this runner's own cache (a no-op once the warm-up has
        # loaded them), never from the child's, which becomes this runner's cache next.
        _warm_triton_driver()
        outcome: dict[str, Any] = handle.finish(wait_s, sweep=self.own_pid_namespace)
        from kgym.harness.audit import AUDIT_EXIT_CODE

        if outcome["status"] == "audit":
            os._exit(AUDIT_EXIT_CODE)
        if not outcome["swept"]:
            gone = RuntimeError(
                "processes the candidate's code started before its job held the GPU could not "
                "be ended"
            )
            raise _Failure(self._exception_reply(gone, "load"))
        return outcome

    def op_setup(self, message: dict[str, Any], payload: Any, fds: list[int]) -> dict[str, Any]:
        spec = payload
        self._end_precompile(0.0)  # the judge did not ask for it (a serial layout, a failure)
        torch.set_grad_enabled(False)  # before the guards take their snapshot of torch's state
        self.device = torch.device(spec["device"])
        if self.device.type == "cuda":
            torch.cuda.set_device(self.device)
            # The context was made by op_warm, which the judge always asks for first: outside
            # the timing window, before the guards' snapshot.
            torch.empty(1, device=self.device)
        self.source_file = spec["source_file"]
        if self.role == "candidate":
            from kgym.harness.guards import Guards
            from kgym.harness.torch_ops import close_unrecorded_threads

            close_unrecorded_threads()
            self.guards = Guards()  # its references are taken before the candidate exists
            if spec.get("audit"):
                from kgym.harness import audit

                _warm_triton_driver()
                counter = self.guards.launches
                audit.install(
                    self.source_file,
                    self.audit_fd,
                    spec.get("protected", []),
                    in_launch=lambda: counter.depth > 0,
                )
        try:
            name = candidate_module_name() if self.role == "candidate" else TASK_MODULE
            self.module = loader.load_module(Path(self.source_file), name)
        except BaseException as exc:  # noqa: BLE001
            raise _Failure(self._exception_reply(exc, "load")) from exc
        if self.role == "reference":
            loader.apply_sizes(self.module, spec.get("sizes", "gpu"))
        class_name = "ModelNew" if self.role == "candidate" else "Model"
        cls = getattr(self.module, class_name, None)
        if not is_a(cls, type):
            return {"ok": False, "kind": "missing", "detail": f"no class {class_name}"}
        self.jit = loader.jit_line_ranges(self.module)
        self.triton_names = set(loader.jit_functions(self.module))
        self.model_class = cls
        self.model, narrowed = self._build(spec, fds)
        return {
            "ok": True,
            "weights_copied": narrowed is not None,
            "weights_narrowed": narrowed or [],
            "triton_functions": sorted(self.triton_names),
        }

    def op_model(self, message: dict[str, Any], payload: Any, fds: list[int]) -> dict[str, Any]:
        """The model built again from the class the set-up found, with other arguments and
        the judge's weights for them (the call at other sizes: a width, a scale), or with
        ``spare`` built beside the one called (a second instance of one shape); with
        ``swap``, the spare called instead of the other; with ``restore``, the set-up's model
        back."""
        if message.get("restore") or message.get("swap"):
            for fd in fds:
                os.close(fd)
            if message.get("swap"):
                if self.spare_model is None:
                    return {"ok": False, "kind": "refused", "detail": "no spare model was built"}
                self.model, self.spare_model = self.spare_model, self.model
            elif self.first_model is not None:
                self.model, self.first_model, self.spare_model = self.first_model, None, None
            return {"ok": True}
        if self.model_class is None:
            return {"ok": False, "kind": "refused", "detail": "no model was set up"}
        model, narrowed = self._build(payload, fds)
        if message.get("spare"):
            self.spare_model = model
        else:
            if self.first_model is None:
                self.first_model = self.model
            self.model = model
        return {
            "ok": True,
            "weights_copied": narrowed is not None,
            "weights_narrowed": narrowed or [],
        }

    def _build(self, spec: dict[str, Any], fds: list[int]) -> tuple[Any, list[str] | None]:
        """The model class built under the spec's seed with its ``init_inputs``, the judge's
        weights loaded where its state has the same keys and shapes, on the device; with the
        entries that hold them in less precision (``_narrowed``), None where it took none."""
        try:
            torch.manual_seed(int(spec["seed"]))
            # Built with grad mode on, as a script builds it (torch's default), unless the judge
            # asks for it off (the twin instance: as a server built under no_grad does): a
            # model that builds one way under either meets both.
            with torch.set_grad_enabled(bool(spec.get("grad", True))):
                model = self.model_class(*spec["init_inputs"], **(spec.get("init_keywords") or {}))
        except BaseException as exc:  # noqa: BLE001
            for fd in fds:
                os.close(fd)
            raise _Failure(self._exception_reply(exc, "init")) from exc
        pretenders = _pretenders(model) if is_a(model, torch.nn.Module) else []
        overrides = _module_overrides(model) if self.role == "candidate" else []
        if pretenders or overrides:
            for fd in fds:
                os.close(fd)
            rule = "not-a-tensor" if pretenders else "module-override"
            detail = (
                "the model holds what is not what it claims: " + "; ".join(pretenders)
                if pretenders
                else "the model's classes redefine nn.Module's own methods: " + ", ".join(overrides)
            )
            raise _Failure(
                {
                    "ok": False,
                    "kind": "refused",
                    "detail": detail[:500],
                    "findings": [
                        {
                            "rule": rule,
                            "severity": "reject",
                            "line": None,
                            "detail": detail[:400],
                        }
                    ],
                }
            )
        names = None
        if spec.get("weights") is not None and is_a(model, torch.nn.Module):
            names = self._load_weights(model, spec["weights"], fds)
        else:
            for fd in fds:
                os.close(fd)
        if is_a(model, torch.nn.Module):
            model = model.to(self.device).eval()
            try:
                _used_as_deployed(model)
            except BaseException as exc:  # noqa: BLE001
                raise _Failure(self._exception_reply(exc, "init")) from exc
        # By the model's id (its own __hash__ would be its code): every build writes its own.
        self.signatures[id(model)] = _forward_signature(model)
        # The entries of its state that took the judge's weights (``_state_prints``).
        self.lent[id(model)] = set(names.values()) if names else set()
        if names is None:
            return model, None
        return model, self._narrowed(model, spec["weights"], names)

    def _load_weights(
        self,
        model: torch.nn.Module,
        weights: dict[str, Any],
        fds: list[int],
        in_place: bool = False,
    ) -> dict[str, str] | None:
        """The judge's weights into ``model``; which of its entries took each (None: its
        state takes them neither by name nor in order by shape)."""
        export = ArenaExport(**{**weights["export"], "fd": fds[0] if fds else -1})
        arena = Arena.attach(export, self.device)
        try:
            # Views of the judge's arena, copied from before it closes (no clone: a copy of
            # every weight would count against the runner's GPU memory).
            state = {
                name: arena.view(offset, tuple(shape), dtype_from(dtype))
                for name, (offset, shape, dtype) in weights["tensors"].items()
            }
            own = _state(model) if in_place else model.state_dict()
            names = _matching_names(own, state)
            if names is None:
                return None
            if in_place:
                # Through ``.data`` and not, in turn from a drawn start (every evaluation makes
                # two moves or more): a write through ``.data`` (an EMA update, an optimiser's)
                # leaves the tensor's version counter as it was, so a kernel that keys what it
                # derived from a weight on (address, version) meets a move it cannot see as
                # well as one it can.
                self.through_data = not self.through_data
                through_data = self.through_data
                with torch.no_grad():
                    for k, v in state.items():
                        dest = own[names[k]]
                        (dest.data if through_data else dest).copy_(v.to(dest.device))
                return names
            model.load_state_dict(
                {names[k]: v.to(own[names[k]].device) for k, v in state.items()}, strict=False
            )
            return names
        finally:
            _sync(self.device)
            arena.close()

    @staticmethod
    def _narrowed(
        model: Any, weights: dict[str, Any] | None, names: dict[str, str] | None
    ) -> list[str]:
        """The model's entries that hold one of the judge's float weights in a float type of
        less precision (float32 loaded into float16: the load itself rounds them, and a
        kernel that widens the bits with integer operations names no reduced type), read
        from the modules' own dicts (``_state``) once the model is set up as it will be
        called."""
        if weights is None or names is None or not is_a(model, torch.nn.Module):
            return []
        own = _state(model)
        narrowed = []
        for name, (_, _, dtype) in weights["tensors"].items():
            given, held = dtype_from(dtype), own.get(names.get(name, ""))
            if held is None or not given.is_floating_point or not held.is_floating_point():
                continue
            if torch.finfo(held.dtype).eps > torch.finfo(given).eps:
                narrowed.append(f"{names[name]}: {dtype} held as {held.dtype}")
        return narrowed

    def op_weights(self, message: dict[str, Any], payload: Any, fds: list[int]) -> dict[str, Any]:
        """The judge's weights written into the model set up, in place, as an optimiser's step
        writes them (no ``load_state_dict``, whose hooks the model could watch), or, with
        ``checkpoint``, loaded by its ``load_state_dict`` (a checkpoint loaded again, a
        target network synced): what its forward derived from the old weights is stale from
        here."""
        if not is_a(self.model, torch.nn.Module):
            for fd in fds:
                os.close(fd)
            return {"ok": True, "weights_copied": False}
        try:
            in_place = not message.get("checkpoint")
            names = self._load_weights(self.model, payload, fds, in_place=in_place)
        except BaseException as exc:  # noqa: BLE001  (the candidate's load hooks ran)
            raise _Failure(self._exception_reply(exc, "call")) from exc
        return {
            "ok": True,
            "weights_copied": names is not None,
            "weights_narrowed": self._narrowed(self.model, payload, names),
        }

    def op_layout(self, message: dict[str, Any], payload: Any, fds: list[int]) -> dict[str, Any]:
        if self.arena is not None:
            self.views = None
            self.arena.close()
        raw = message["export"]
        export = ArenaExport(
            raw["kind"], int(raw["nbytes"]), bytes.fromhex(raw["handle"]), fds[0] if fds else -1
        )
        self.arena = Arena.attach(export, self.device)
        self.views = SlotViews(self.arena, SlotLayout.from_message(message["layout"]))
        return {"ok": True}

    # -- calls ---------------------------------------------------------------------------------
    def _store(self, got: list[Any], k: int, values: list[Any]) -> str | None:
        """The call's output values (``_plain_output``) into slot ``k`` of the arena."""
        assert self.views is not None
        specs = self.views.layout.outputs
        dests = self.views.outputs[k]
        if len(got) != len(specs):
            return f"expected {len(specs)} output(s), got {len(got)}"
        for index, (value, spec, dest) in enumerate(zip(got, specs, dests)):
            where = f"output {index}" if len(specs) > 1 else "output"
            if spec is None:
                if type(value) is torch.Tensor:
                    return f"{where}: expected a number, got a tensor"
                values.append(value)
                continue
            if type(value) is not torch.Tensor:
                return f"{where}: expected a tensor, got {type(value).__name__}"
            if tuple(value.shape) != spec.shape:
                return f"{where}: shape {tuple(value.shape)}, expected {spec.shape}"
            if value.dtype != dtype_from(spec.dtype):
                return f"{where}: dtype {value.dtype}, expected {dtype_from(spec.dtype)}"
            if value.device != self.device:
                return f"{where}: on {value.device}, expected {self.device}"
            assert dest is not None
            dest.copy_(value)
        return None

    def op_call(self, message: dict[str, Any], payload: Any, fds: list[int]) -> dict[str, Any]:
        """Calls the model once per slot in ``slots``, outputs into the slots, then synchronises.

        Every call that is not timed looks the same from inside this process, whatever the
        judge makes of it (a correctness trial, a repeat, a stress set, a decoy): the torch
        operators it calls are recorded, and memory it allocates starts filled (NaN for floats)
        rather than holding a previous call's bytes. ``ablate``: the Triton kernel whose
        written elements are replaced with noise, a change seen only in those elements.
        Timed calls are neither recorded nor filled (their cost would be the candidate's
        time): the judge verifies their outputs and, on a GPU, their kernels instead.
        """
        assert self.views is not None
        slots = [int(k) for k in message["slots"]]
        graded = bool(slots) and not message.get("timed") and self.role == "candidate"
        if message.get("timed"):
            # The graded calls are over: their last outputs are let go.
            self.returned, self.returned_before = [], []
        ablate = message.get("ablate")
        model = self.compiled if message.get("variant") == "compiled" else self.model
        counter = self.guards.launches if self.guards is not None else None
        launches = counter.count if counter is not None else 0
        refused = counter.refused if counter is not None else 0
        ablated = (
            (counter.ablated_launches, counter.copying_launches, len(counter.unchecked_launches))
            if counter
            else (0, 0, 0)
        )
        names_before = dict(counter.names) if counter is not None else {}
        values: dict[str, list[Any]] = {}
        reused: str | None = None
        held = 0.0
        recorder = None
        if graded:
            from kgym.harness.torch_ops import TorchOpRecorder

            recorder = TorchOpRecorder(lambda: counter is not None and counter.depth > 0)
        if counter is not None:
            counter.torch_made = list
            if recorder is not None:
                raised = [t for ref in self.made_in_raised if (t := ref()) is not None]
                counter.torch_made = lambda: recorder.made() + raised
                if ablate:
                    recorder.computed_hook = counter.meet_computed
            # The model's own tensors (parameters, buffers, tensor attributes) as the ablated
            # call starts: those its torch calls rewrite in place, however (a batch norm's
            # running statistics, written with no in-place name), are copy sources too.
            counter.owned = _owned_tensors(model) if ablate else []
            counter.ablate = ablate
            given = message.get("ablate_tolerance")
            counter.copy_tolerance = (float(given[0]), float(given[1])) if given else None
            counter.staging = bool(message.get("ablate_staging"))
            # One way for every launch of the call, drawn by the OS.
            counter.nudge = (os.urandom(1)[0] % 2 * 2 - 1) if message.get("ablate_nudge") else 0
            counter.nudged_elements = 0
            # The inputs as this process holds them and as the judge wrote them
            # (ablation.launch_with_noise's ``arena``).
            counter.arena = {
                int(v.untyped_storage().data_ptr()): (v, v.detach().clone())
                for k in (slots if ablate else [])
                for v in self.views.inputs[k]
                if type(v) is torch.Tensor
            }
        filled = contextlib.ExitStack()
        if graded and (ablate or message.get("fill", True)):
            from kgym.harness.ablation import uninitialised_memory_filled

            filled.enter_context(uninitialised_memory_filled())
        try:
            if not slots and self.device.type == "cuda":
                # A batch of no calls is the judge's measure of a sample's fixed cost: it must
                # hold what every sample holds, the GPU's switch to this process's context and
                # back, which a batch with no work on the GPU would leave out (~0.3 ms on an
                # H200), so one tiny kernel of ours runs; and this process stays busy for
                # ``hold_ms``, as it does while its calls run, so that the judge sleeps as long
                # waiting for the reply (its wake-up after a long sleep is slower).
                torch.ones(1, device=self.device).add_(1.0)
                held = _hold(float(message.get("hold_ms") or 0.0))
            # Graded calls only: a timed call is made as the task's plain call always.
            manner = (message.get("manner") or {}) if graded else {}
            # In training a batch norm's forward updates its running statistics, as the
            # reference's does: there the parameters alone are the model's to keep.
            lent = set() if manner.get("train") else self.lent.get(id(model), set())
            state = _state_prints(model, lent) if graded and is_a(model, torch.nn.Module) else None
            for k in slots:
                inputs, copies = _called_with(self.views.inputs[k], manner)
                if counter is not None and ablate:
                    for index, copy in copies.items():  # the judge's inputs, moved
                        moved = inputs[index]
                        where = int(moved.untyped_storage().data_ptr())
                        counter.arena[where] = (moved, copy)
                keywords = _by_keyword(
                    self.signatures.get(id(model)), inputs, manner.get("keyword")
                )
                args = [] if keywords else inputs
                try:
                    with _manner(model, manner):
                        if recorder is not None:
                            with recorder:
                                out = model(*args, **keywords)
                        else:
                            out = model(*args, **keywords)
                except BaseException as exc:  # noqa: BLE001 - a model may raise anything
                    if recorder is None:
                        raise
                    return self._raised_reply(exc, recorder)
                del args, keywords
                flat, problem = _plain_output(out)
                del out
                if problem is None and any(
                    not _storage_unchanged(copy, inputs[index]) for index, copy in copies.items()
                ):
                    problem = INPUTS_MODIFIED
                del inputs
                if problem is None and graded:
                    reused = reused or self._reused_memory(flat, self.views.inputs[k])
                for kind in _lazy_outputs(flat):
                    # The copy into the arena below would lay the values out (a transpose's
                    # whole work) or apply a pending negation or conjugation (``.mH.imag``
                    # carries one, made by calls that compute nothing themselves): torch's
                    # work, done for the candidate, in a timed call too.
                    if recorder is not None:
                        recorder.calls[kind] += 1
                    elif message.get("timed") and self.role == "candidate":
                        self.strided_timed_outputs += 1
                if problem is None:
                    problem = self._store(flat, k, values.setdefault(str(k), []))
                del flat
                if problem is not None:
                    reply = {"ok": False, "kind": "mismatch", "detail": problem}
                    if problem == INPUTS_MODIFIED:  # as the judge's own check of its arena
                        reply["findings"] = [
                            {"rule": "input-mutated", "detail": problem, "severity": "reject"}
                        ]
                    return reply
            if graded:
                self.made_in_raised = []
            _sync(self.device)
            written = _state_written(state) if state else []
            if written:
                detail = "a forward call wrote the model's state: " + ", ".join(written[:4])
                return {
                    "ok": False,
                    "kind": "mismatch",
                    "detail": detail,
                    "findings": [
                        {"rule": "weights-mutated", "detail": detail, "severity": "reject"}
                    ],
                }
        finally:
            filled.close()
            if counter is not None:
                counter.ablate = None
                counter.nudge = 0
        reply: dict[str, Any] = {"ok": True, "values": values}
        if held:
            reply["held_ms"] = held
        if counter is not None:
            reply["launches"] = counter.count - launches
            reply["launched"] = sorted(
                n for n, c in counter.names.items() if c > names_before.get(n, 0)
            )
            if graded:
                # Every kernel met so far, launched or not (given to a launch, named in a
                # body): one made by calling triton.jit(fn) may be reached either way.
                reply["kernel_origins"] = {
                    n: [list(o) for o in places]
                    for n, places in list(counter.origins.items())[:MAX_ORIGIN_NAMES]
                }
            if self.role == "candidate" and not message.get("timed"):
                # Every kernel this process compiled so far, the timed calls' too (the call
                # after the window asks): a kernel only timed calls launch is read as well.
                reply["dot_precision"] = counter.precision.summary()
            if ablate:
                if recorder is not None:
                    recorder.computed_hook = None
                # A launch whose work torch computed again later in the call did none.
                recomputed = sum(r.whole() for r in counter.recomputations)
                counter.recomputations = []
                reply["ablated_launches"] = counter.ablated_launches - ablated[0]
                reply["copying_launches"] = counter.copying_launches - ablated[1] + recomputed
                reply["nudged_elements"] = counter.nudged_elements
                unchecked = counter.unchecked_launches[ablated[2] :]
                if unchecked:
                    reply["unchecked_launches"] = unchecked[:UNCHECKED_REPORTED]
        if self.role == "candidate" and not message.get("timed"):
            reply["strided_timed_outputs"] = self.strided_timed_outputs
        if recorder is not None:
            reply["torch_ops"] = recorder.summary()
        findings = []
        if reused is not None:
            findings.append({"rule": "output-reused", "detail": reused})
        if counter is not None and counter.refused > refused:
            rule, detail = counter.last_refused
            if rule == "kernel-not-triton":
                # Whatever the launch handed over runs as Python under the interpreter.
                detail = "a launch hands its kernel what only Python runs: " + detail
            findings.append({"rule": rule, "detail": detail[:400]})
        if findings:
            reply["findings"] = [{**f, "severity": "reject", "line": None} for f in findings]
        return reply

    def _raised_reply(self, exc: BaseException, recorder: Any) -> dict[str, Any]:
        """A graded call that raised ran the candidate's code as any other: what torch
        computed there is reported (the judge holds it to the policies), and what it made
        stays a copy source of the next graded call, which the judge makes on the same inputs
        where the model refused a manner (a stash of torch's answer is no weight)."""
        self.made_in_raised = [weakref.ref(t) for t in recorder.made()]
        reply = self._exception_reply(exc, "call")
        reply["torch_ops"] = recorder.summary()
        return reply

    def _reused_memory(self, out: list[Any], inputs: list[Any]) -> str | None:
        """Whether an output of this call lies in memory an output of an earlier graded call
        still lies in: a model that hands out one buffer again, or a ring of them, overwrites
        a result its caller holds. The previous call's outputs are held here until this
        call's have been looked at, as a caller holds a result; earlier ones only weakly, so
        that memory nobody holds any more may be handed out again: where their storage is
        still alive, the candidate kept it. An output in its inputs' memory (the judge's
        arena) is the judge's ``output-aliases-input`` instead."""
        from torch.multiprocessing.reductions import StorageWeakRef

        arena = [_extent(v) for v in inputs if is_a(v, torch.Tensor)]
        self.returned_before = [(e, ref) for e, ref in self.returned_before if not ref.expired()]
        held = [extent for extent, _ in self.returned_before]
        now = [t for t in out if type(t) is torch.Tensor]
        found = None
        for extent in (_extent(t) for t in now):
            if not _overlaps(extent, arena) and _overlaps(extent, held):
                found = (
                    "an output of this call lies in the memory of an output an earlier call "
                    "returned, which its caller may still hold: that result is overwritten"
                )
        self.returned_before += [(_extent(t), StorageWeakRef(t.untyped_storage())) for t in now]
        self.returned = now
        return found

    def op_compile(self, message: dict[str, Any], payload: Any, fds: list[int]) -> dict[str, Any]:
        """The reference's runner only: torch.compile of the model, for the compile baseline."""
        if self.role != "reference" or self.views is None:
            return {"ok": False, "kind": "refused", "detail": "compile is for the reference"}
        try:
            compiled = torch.compile(self.model)
            values: list[Any] = []
            flat, problem = _plain_output(compiled(*self.views.inputs[0]))
            problem = problem or self._store(flat, 0, values)
            _sync(self.device)
        except Exception as exc:  # noqa: BLE001 - torch.compile failures are reported
            return {"ok": False, "kind": "compile", "detail": f"{type(exc).__name__}: {exc}"[:500]}
        if problem is not None:
            return {"ok": False, "kind": "compile", "detail": problem}
        self.compiled = compiled
        return {"ok": True}


def _warm_triton_driver() -> None:
    """Builds Triton's driver helpers now (gcc, on a GPU), before the audit hook exists: a
    candidate that touches ``triton.runtime.driver.active`` at import would otherwise have
    Triton compile them outside a kernel launch, which the hook refuses. On a GPU the warm
    request asks first; the set-up asks again where the hook is installed (at no cost then)."""
    try:
        import triton

        driver = triton.runtime.driver.active
        driver.get_current_device()
        getattr(driver, "utils", None)
    except Exception:  # noqa: BLE001 - the interpreter has no GPU driver: nothing to build
        pass


class _Failure(Exception):
    def __init__(self, reply: dict[str, Any]) -> None:
        super().__init__(reply.get("kind", "failure"))
        self.reply = reply


# What a graded call's torch record holds where an output is not contiguous: the runner's copy
# of it into the arena does the layout's work for the candidate (compute under ``strict``).
STRIDED_OUTPUT_COPY = "copy_ (a non-contiguous output, laid out by the runner)"
LAZY_OUTPUT_COPY = "copy_ (an output with a pending negation or conjugation, applied by the runner)"


def _lazy_outputs(flat: list[Any]) -> list[str]:
    """What the runner's copy of a call's outputs would compute for the candidate: laying out
    a non-contiguous one, applying a negative or conjugate bit."""
    kinds = []
    tensors = [v for v in flat if type(v) is torch.Tensor]
    if any(not v.is_contiguous() for v in tensors):
        kinds.append(STRIDED_OUTPUT_COPY)
    if any(v.is_neg() or v.is_conj() for v in tensors):
        kinds.append(LAZY_OUTPUT_COPY)
    return kinds


# At most this many values in one call's output (nested tuples and lists counted).
MAX_OUTPUT_VALUES = 10_000


def _plain_output(output: Any) -> tuple[list[Any], str | None]:
    """The output's values in order, and what is wrong with it (None: nothing). Looked at by
    exact type only, so that none of the candidate's code runs here, outside the torch-operator
    record: a container subclass's ``__iter__``, a tensor subclass's ``__torch_function__``, a
    ``__class__`` property. An output is a tensor, a number, or a tuple or list of them."""
    flat: list[Any] = []
    pending = [output]
    while pending:
        value = pending.pop()
        kind = type(value)
        if kind is tuple or kind is list:
            pending.extend(reversed(value))
        elif kind is torch.Tensor or kind is int or kind is float or kind is bool:
            flat.append(value)
        else:
            name = type.__dict__["__name__"].__get__(kind)
            return [], f"output: a {name} is not accepted (a tensor, a number, or a tuple or list)"
        if len(flat) + len(pending) > MAX_OUTPUT_VALUES:
            return [], f"more than {MAX_OUTPUT_VALUES} values in one output"
    return flat, None


def _hold(ms: float) -> float:
    """Busy for ``ms`` (at most a second), as a runner is while its calls run; how long, in ms."""
    began = time.perf_counter()
    end = began + min(max(ms, 0.0), 1000.0) / 1e3
    while time.perf_counter() < end:
        pass
    return (time.perf_counter() - began) * 1e3


def _extent(tensor: torch.Tensor) -> tuple[int, int, str]:
    """The bytes of memory a tensor's storage spans: (start, end) addresses and its device."""
    storage = tensor.untyped_storage()
    start = int(storage.data_ptr())
    return start, start + max(int(storage.nbytes()), 1), str(tensor.device)


def _overlaps(extent: tuple[int, int, str], others: list[tuple[int, int, str]]) -> bool:
    start, end, device = extent
    return any(d == device and s < end and start < e for s, e, d in others)


def runner_main(
    sock: socket.socket, role: str, audit_fd: int, own_pid_namespace: bool = False
) -> None:
    """The body of a runner process (after its confinement); never returns."""
    code = 0
    try:
        Runner(sock, role, own_pid_namespace, audit_fd).serve()
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        code = 1
    finally:
        try:
            sock.close()
        except OSError:
            pass
    os._exit(code)
