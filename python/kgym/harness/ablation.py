"""The decoy check: does each Triton kernel's output matter to the answer?

While a kernel is ablated, every launch of it runs as usual and then every element it wrote
(any tensor argument whose bytes changed) is overwritten with noise. The judge compares the
answer of an ablated call with the reference: if it is still right, the kernel's work was thrown
away or recomputed by torch, and the kernel is a decoy. Honest kernels' outputs feed the answer,
so noise in them makes it wrong.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import torch

from kgym.harness.real_type import is_a
from kgym.harness.reply_schema import UNCHECKED_CHARS

_INT_VIEW = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
NOISE_CHUNK_BYTES = 64 << 20
_set_deterministic = torch._C._set_deterministic_algorithms


@contextlib.contextmanager
def uninitialised_memory_filled() -> Iterator[None]:
    """Through every decoy call, the first trial and a later one, and about half of the other
    graded calls on the task's inputs (the judge's draws),
    memory a forward call allocates starts filled (NaN for floats, the largest value for
    integers) instead of holding what the caching allocator's block held before. Otherwise a
    kernel that writes into a fresh buffer the same values as the previous call
    (weight-derived intermediates, zeros) changes no byte there, its work cannot be seen when
    it is ablated, and an honest kernel is taken for a decoy. A filled call is not an ablated
    one (most are not), and an unfilled call is not a timed one or ordinary use (the stress
    sets are never filled): the fill tells a candidate nothing it could behave well by. A
    state the candidate set itself meanwhile is left for the guards to find
    (``global-state``)."""
    was_on = torch.are_deterministic_algorithms_enabled()
    was_warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    was_filling = torch.utils.deterministic.fill_uninitialized_memory
    with warnings.catch_warnings():
        # Ops without a deterministic kernel only warn (warn_only): nothing else changes.
        warnings.simplefilter("ignore")
        # torch.use_deterministic_algorithms also sets Inductor's flag, and importing Inductor's
        # config imports Dynamo: 2.1 s of every evaluation on a 2-core CPU, for a
        # compiler the ablated calls never use. The flag the fill depends on is this one.
        _set_deterministic(True, warn_only=True)
        torch.utils.deterministic.fill_uninitialized_memory = True
        try:
            yield
        finally:
            torch.utils.deterministic.fill_uninitialized_memory = was_filling
            ours = torch.are_deterministic_algorithms_enabled() and (
                torch.is_deterministic_algorithms_warn_only_enabled()
            )
            if ours:
                _set_deterministic(was_on, warn_only=was_warn_only)


MAX_NESTED_TENSORS = 256  # a bound on what a launch's nested tuples may make the check copy
# The bytes of a storage one step of its fingerprint reads (its temporaries are four times as
# many: the runner's GPU memory is charged for them, gpu_memory.py).
FINGERPRINT_CHUNK_BYTES = 8 << 20


def _fingerprint(raw: torch.Tensor, seed: int) -> int:
    """A sum of ``raw``'s bytes (a storage's, as uint8) in 32-bit words, each weighted by a
    number drawn from ``seed``: bytes changed anywhere change it, except by a chance no
    writer can aim at without the seed."""
    generator = torch.Generator(device=raw.device)
    generator.manual_seed(seed)
    total = 0
    usable = raw.numel() // 4 * 4
    for begin in range(0, usable, FINGERPRINT_CHUNK_BYTES):
        words = raw[begin : min(begin + FINGERPRINT_CHUNK_BYTES, usable)].view(torch.int32)
        weights = torch.randint(
            1, 1 << 31, words.shape, generator=generator, device=raw.device, dtype=torch.int64
        )
        total += int((words.to(torch.int64) * weights).sum())
    tail = raw[usable:].to(torch.int64)
    return total + int((tail * (torch.arange(tail.numel(), device=raw.device) + 7)).sum())


def _tensor_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[torch.Tensor]:
    """The tensors a launch takes, also inside tuples and lists (Triton accepts tuples of
    pointers): a kernel writing through one is still the kernel writing."""
    found: list[torch.Tensor] = []
    seen: set[int] = set()
    pending = [*args, *kwargs.values()]
    while pending:
        value = pending.pop(0)
        if is_a(value, (tuple, list)) and len(found) < MAX_NESTED_TENSORS:
            pending[:0] = list(value)
        elif _readable(value):
            key = value.untyped_storage().data_ptr()
            if key not in seen:
                seen.add(key)
                found.append(value)
    return found


def _numbers(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[float]:
    """The plain numbers a launch takes, also inside tuples and lists, in order: an answer
    read to the host (``tolist()``) and handed back as numbers is a copy like a tensor's."""
    found: list[float] = []
    pending = [*args, *kwargs.values()]
    while pending and len(found) < MAX_NUMBERS:
        value = pending.pop(0)
        if is_a(value, (tuple, list)):
            pending[:0] = list(value)
        elif type(value) in (int, float):
            found.append(float(value))
    return found


# The most numbers ``_numbers`` reads: a launch's arguments hold fewer (guards.MAX_ARGUMENT_ITEMS).
MAX_NUMBERS = 4096


def _numbers_as(numbers: list[float], dtype: torch.dtype, device: torch.device) -> Any:
    """``numbers`` as a source in a destination's type (its storage's bytes), or None where
    they do not fit it (a bool, a complex type, an integer type they overflow)."""
    if not numbers or dtype == torch.bool or dtype.is_complex:
        return None
    try:
        held = torch.tensor(numbers, dtype=torch.float64)
        if not dtype.is_floating_point:
            info = torch.iinfo(dtype)
            held = held[(held == held.round()) & (held >= info.min) & (held <= info.max)]
        return _whole_storage(held.to(dtype=dtype, device=device).contiguous())
    except (RuntimeError, TypeError, ValueError):
        return None


def _whole_storage(t: torch.Tensor) -> torch.Tensor:
    """The tensor's whole storage as bytes: a kernel may write past the view it was given."""
    storage = t.untyped_storage()
    return torch.empty(0, dtype=torch.uint8, device=t.device).set_(storage, 0, (storage.nbytes(),))


# The noise's own generators, one per device, seeded from the OS: drawn from torch's global
# ones, the noise moved their state, which a candidate reads (``torch.get_rng_state``) to
# tell a decoy call from the others.
_GENERATORS: dict[str, torch.Generator] = {}


def _generator(device: torch.device) -> torch.Generator:
    key = str(device)
    if key not in _GENERATORS:
        generator = torch.Generator(device=device)
        generator.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
        _GENERATORS[key] = generator
    return _GENERATORS[key]


def _noise_like(t: torch.Tensor) -> torch.Tensor:
    g = _generator(t.device)
    if t.dtype.is_floating_point or t.dtype.is_complex:
        noise = torch.randn(t.shape, device=t.device, dtype=torch.float32, generator=g)
        return (noise * 1e3 + 7.0).to(t.dtype)
    if t.dtype == torch.bool:
        return torch.randint(0, 2, t.shape, device=t.device, generator=g).to(torch.bool)
    return torch.randint(-100, 100, t.shape, device=t.device, generator=g).to(t.dtype)


def launch_with_noise(
    launch: Callable[..., Any],
    fn_self: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    tolerance: tuple[float, float] | None = None,
    arena: dict[int, tuple[torch.Tensor, torch.Tensor]] | None = None,
    torch_made: list[torch.Tensor] | None = None,
    untouched: set[int] | None = None,
    staging: list[torch.Tensor] | None = None,
    kept: list[tuple[torch.dtype, int, torch.Tensor, torch.Tensor]] | None = None,
) -> tuple[Any, str]:
    """The launch, then noise into every element it wrote that is not a copy. Also says
    whether the launch only copied (``"answer"``, else ``""``): every element it wrote holds
    the element at the same
    place of another tensor it took, or of a tensor the candidate's torch calls made in this
    call (``torch_made``: a kernel can reach one by an address passed as a number), a Triton
    "store" of an answer torch computed, bit for bit or, for floats (read in a float type of
    the element's width, whatever the destination's type), within the task's ``tolerance``
    (atol, rtol): at the tolerance the answer is graded at, a store with trivial arithmetic
    (``v * 1.004``) is the same copy. A launch that only copied gets no noise: storing
    torch's answer is no work of the kernel's, and the answer stays right by it. ``arena``:
    the call's inputs by storage address (each as the runner holds it, and as the judge wrote
    it); an input that still holds what the judge wrote is not an answer's source (a kernel
    that is the identity on its inputs does work), one the candidate's torch calls rewrote
    (an answer computed in place) is a source like any other, taken by the launch or not.
    ``untouched``: the storages of the model's own tensors as loaded (a bias broadcast into
    an output moves data, it copies no answer). ``staging`` (where torch computed in the
    evaluation's calls: ``hybrid``): the model's tensors as loaded, which with the judge's
    unchanged inputs are what a staging copy would hold; an element a launch wrote that holds
    one of them at the same place or one shift (bit for bit, cast, or within the tolerance),
    of an integer type or among values of both signs, gets no noise either: a Triton copy of
    the inputs or the weights for torch to compute on is no work of the kernel's (no
    elementwise operation but the identity gives values of both signs back so: a ReLU of
    positive inputs is work).
    Where the check cannot read what it needs (a tensor of a layout or device it cannot
    compare), the launch runs unchecked and without noise: its answer then stays right, and
    the kernel is not taken as mattering by a check that failed. Such a launch says so
    (``"unchecked: "`` and the error), which the decoy finding carries, so that a refusal
    it causes names its cause. ``kept``: where given, the elements the launch worked out
    (those that got noise) are added to it as it wrote them (``Recomputation``)."""
    try:
        prepared = _prepare(
            args, kwargs, arena or {}, torch_made or [], untouched or set(), staging
        )
    except Exception as error:  # noqa: BLE001 - whatever the candidate made, no fail open
        return launch(fn_self, *args, **kwargs), _unchecked("before", error)
    result = launch(fn_self, *args, **kwargs)
    try:
        counterfactual = None
        if staging is not None:
            counterfactual = _on_moved_inputs(launch, fn_self, args, kwargs, prepared)
            if counterfactual is None:
                return result, "answer"  # it wrote the same: no work on its inputs
        return result, _noise_what_it_did(prepared, tolerance, counterfactual, kept)
    except Exception as error:  # noqa: BLE001
        return result, _unchecked("after", error)


# How far ``launch_nudged`` moves each element a launch wrote: this many units of its type's
# precision (float32: 2^-21 of it), far below any tolerance, above a rounding's reach.
NUDGE_EPSILONS = 4.0
FLOAT32_EPS = torch.finfo(torch.float32).eps


def launch_nudged(
    launch: Callable[..., Any],
    fn_self: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    up: bool,
) -> tuple[Any, int]:
    """The launch, then each nonzero finite float element it wrote moved by
    ``NUDGE_EPSILONS`` of its type's precision (of float32's, where its type is wider), all
    ``up`` or all down (one way for the whole call: moved each its own way, a sum or mean
    torch takes of them cancels the moves, and two launches of one kernel would differ);
    with how many it moved.
    A kernel whose values the answer is computed from moves the answer by about as much; one
    used only as a gate (rows where it disagrees with torch's own answer made garbage, within
    a margin) leaves the answer bit for bit as it was: its work is only checked, not used."""
    tensors = [
        t
        for t in _tensor_args(args, kwargs)
        if t.is_floating_point() and not t.is_complex() and t.untyped_storage().nbytes()
    ]
    before = [_whole_storage(t).clone() for t in tensors]
    result = launch(fn_self, *args, **kwargs)
    moved = 0
    with torch.no_grad():
        for t, was in zip(tensors, before):
            raw = _whole_storage(t)
            size = t.element_size()
            if raw.numel() % size:
                continue
            if t.is_cuda:
                torch.cuda.synchronize(t.device)
            values = raw.view(t.dtype)  # an alias of its own: the tensor's version stays
            wrote = (raw.view(-1, size) != was.view(-1, size)).any(dim=1)
            wrote &= (values != 0) & torch.isfinite(values)
            count = int(wrote.sum())
            if not count:
                continue
            # At least float32's: a float64 intermediate's last bits do not survive an
            # honest float32 answer computed from it.
            step = NUDGE_EPSILONS * max(torch.finfo(t.dtype).eps, FLOAT32_EPS)
            nudged = (values.double() * (1.0 + step if up else 1.0 - step)).to(t.dtype)
            values.copy_(torch.where(wrote, nudged, values))
            moved += count
    return result, moved


def _unchecked(when: str, error: Exception) -> str:
    """What a launch the check could not read says of it (``launch_with_noise``)."""
    return f"unchecked: {when} the launch, {type(error).__name__}: {error}"[:UNCHECKED_CHARS]


def _on_moved_inputs(
    launch: Callable[..., Any],
    fn_self: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    prepared: dict[str, Any],
) -> list[torch.Tensor] | None:
    """What the launch writes when it runs again on its tensors as they were before it, their
    float values moved (noise in every element), as each tensor's storage's bytes; None where
    it writes the same wherever it wrote (a fill of ones, of any pattern of places alone,
    which torch multiplies into its answer: no work on the inputs, though noise in it breaks
    the answer). Where torch computes (``hybrid``) this, not noise, replaces what the launch
    wrote in the decoy call: an answer that is still right did not need the kernel's work
    on the inputs (dust added to torch's answer, a store nothing reads beside a fill).
    Leaves every tensor as the first launch left it. Integer tensors keep their values (an
    index moved would read out of bounds)."""
    tensors, before = prepared["tensors"], prepared["before"]
    after = [_whole_storage(t).clone() for t in tensors]
    versions = [t._version for t in tensors]
    wrote = [a != b for a, b in zip(after, before)]
    if not any(bool(w.any()) for w in wrote):
        return None
    try:
        for t, was in zip(tensors, before):
            _whole_storage(t).copy_(was)
        with torch.no_grad():
            for t in tensors:
                if t.is_floating_point() and not t.is_complex() and t.numel():
                    noise = torch.randn(
                        t.shape,
                        dtype=torch.float32,
                        device=t.device,
                        generator=_generator(t.device),
                    )
                    spread = float(t.detach().float().abs().mean()) + 1.0
                    # Through an alias of its own: the tensor's version counter stays.
                    alias = torch.empty(0, dtype=t.dtype, device=t.device)
                    alias.set_(t.untyped_storage(), t.storage_offset(), t.size(), t.stride())
                    alias.add_((noise * spread).to(t.dtype))
        launch(fn_self, *args, **kwargs)
        again = [_whole_storage(t).clone() for t in tensors]
        if tensors and tensors[0].is_cuda:
            torch.cuda.synchronize(tensors[0].device)
        if all(bool((a[w] == b[w]).all()) for a, b, w in zip(again, after, wrote)):
            return None
        return again
    finally:
        for t, was in zip(tensors, after):
            _whole_storage(t).copy_(was)
        # The interpreter's launch copies its results back with torch (a version each): the
        # second launch's must not show (a count a candidate compares tells the decoy call).
        _set_versions(tensors, versions)


def _set_versions(tensors: list[torch.Tensor], versions: list[int]) -> None:
    setter = torch._C._autograd._unsafe_set_version_counter
    try:
        setter(tuple(tensors), tuple(versions))
    except TypeError:  # torch before 2.5: one tensor a call
        for t, version in zip(tensors, versions):
            setter(t, version)


def owned_state(
    owned: list[tuple[torch.Tensor, int, int]],
) -> tuple[list[torch.Tensor], set[int]]:
    """Of the model's own tensors fingerprinted as the call began (``owned``: tensor, seed,
    fingerprint), those whose bytes changed since (what the candidate's torch calls wrote
    into its buffers, whichever call it was: copy sources), and the storages of the others
    (its weights as the judge loaded them: data a kernel may move, a bias broadcast into an
    output, not an answer torch computed)."""
    changed, untouched = [], set()
    for value, seed, was in owned:
        try:
            if _fingerprint(_whole_storage(value), seed) != was:
                changed.append(value)
            else:
                untouched.add(int(value.untyped_storage().data_ptr()))
        except Exception:  # noqa: BLE001 - a tensor the check cannot read is no source
            continue
    return changed, untouched


def _readable(value: Any) -> bool:
    """A tensor whose storage's bytes the check can read (strided, not meta, a storage of
    some bytes: a tensor resized to no elements still holds its storage whole)."""
    return (
        is_a(value, torch.Tensor)
        and value.layout == torch.strided
        and value.device.type != "meta"
        and value.untyped_storage().nbytes() > 0
    )


def _dense_parts(value: torch.Tensor) -> list[torch.Tensor]:
    """A torch-made tensor as the strided tensors that hold its values: itself, or a sparse
    tensor's values and indices (an answer held as a sparse tensor's values, by an alias of
    its own, is torch's answer all the same)."""
    try:
        if value.layout == torch.sparse_coo:
            return [value._values(), value._indices()]
        if value.layout in (torch.sparse_csr, torch.sparse_bsr):
            return [value.values(), value.crow_indices(), value.col_indices()]
        if value.layout in (torch.sparse_csc, torch.sparse_bsc):
            return [value.values(), value.ccol_indices(), value.row_indices()]
    except RuntimeError:
        return []
    return [value]


def _prepare(
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    arena: dict[int, tuple[torch.Tensor, torch.Tensor]],
    torch_made: list[torch.Tensor],
    untouched: set[int],
    staging: list[torch.Tensor] | None,
) -> dict[str, Any]:
    """What the check needs from before the launch: each tensor it takes, with its storage's
    bytes; the sources it may copy from; a fingerprint of those it does not take."""
    tensors = _tensor_args(args, kwargs)
    before = [_whole_storage(t).clone() for t in tensors]
    # The judge's inputs that still hold what it wrote, and the model's weights as loaded:
    # no sources, taken or not.
    not_sources = untouched | {
        key
        for key, (now, was) in arena.items()
        if _readable(now) and torch.equal(_whole_storage(now), _whole_storage(was))
    }
    # The judge's unchanged inputs as it wrote them, and the model's tensors as loaded: what
    # a staging copy would hold.
    staged_from = None
    staged_values: list[torch.Tensor] = []
    if staging is not None:
        staged_values = [
            was.detach().reshape(-1)
            for key, (now, was) in arena.items()
            if key in not_sources and key not in untouched and was.is_floating_point()
        ] + [w.detach().reshape(-1) for w in staging if _readable(w) and w.is_floating_point()]
        staged_from = [
            (now.dtype, _whole_storage(was))
            for key, (now, was) in arena.items()
            if key in not_sources and key not in untouched
        ] + [(w.dtype, _whole_storage(w)) for w in staging if _readable(w)]
    taken = {t.untyped_storage().data_ptr() for t in tensors} | not_sources
    # The torch-made tensors the launch does not take are read where they lie, not copied
    # (no budget of bytes a computed filler could use up); a launch that wrote into one of
    # them anyway (by an address) changed its fingerprint, and is taken as copying.
    made: list[tuple[torch.dtype, torch.Tensor]] = []  # (its dtype, the storage's bytes)
    for u in (part for value in torch_made for part in _dense_parts(value)):
        if not _readable(u):
            continue
        key = u.untyped_storage().data_ptr()
        if key not in taken:
            taken.add(key)
            made.append((u.dtype, _whole_storage(u)))
    seed = int.from_bytes(os.urandom(8), "little") >> 1
    return {
        "tensors": tensors,
        "before": before,
        "not_sources": not_sources,
        "staging": staged_from,
        "staged_values": staged_values,
        "made": made,
        "numbers": _numbers(args, kwargs),
        "seed": seed,
        "prints": [_fingerprint(raw, seed) for _, raw in made],
    }


def _noise_what_it_did(
    prepared: dict[str, Any],
    tolerance: tuple[float, float] | None,
    counterfactual: list[torch.Tensor] | None = None,
    kept: list[tuple[torch.dtype, int, torch.Tensor, torch.Tensor]] | None = None,
) -> str:
    """After the launch: noise into each element it wrote that is not a copy (or, given
    ``counterfactual``, what the launch wrote there on moved inputs: ``_on_moved_inputs``);
    what every element it wrote was a copy of, if anything (``launch_with_noise``)."""
    tensors, before, made = prepared["tensors"], prepared["before"], prepared["made"]
    seed = prepared["seed"]
    if any(_fingerprint(raw, seed) != was for (_, raw), was in zip(made, prepared["prints"])):
        return "answer"
    wrote = written = copies = 0
    for index, (t, old) in enumerate(zip(tensors, before)):
        raw = _whole_storage(t)
        if t.is_cuda:
            torch.cuda.synchronize(t.device)
        # Sources a copy could have come from: the launch's other tensors (an answer torch
        # computed, in a buffer of any length and of any float width: a float64 answer cast
        # is the same copy), but the judge's arena: the call's inputs live there, and a
        # kernel that is the identity on these inputs (a ReLU of positive ones) is not a copy
        # of an answer. Only those on the destination's device can be compared with it.
        sources = [
            (u.dtype, before[j])
            for j, u in enumerate(tensors)
            if j != index and u.untyped_storage().data_ptr() not in prepared["not_sources"]
        ] + made
        # And the numbers the launch took, in this tensor's type: an answer handed over as
        # numbers (``tolist()`` under hybrid) and stored is a copy too.
        numbers = _numbers_as(prepared["numbers"], t.dtype, raw.device)
        if numbers is not None:
            sources.append((t.dtype, numbers))
        sources = [(d, src) for d, src in sources if src.device == raw.device]
        # Element granularity, in the tensor's own dtype, over the elements of its storage; in
        # chunks, so that what the check makes (the comparison, the noise) stays a few chunks
        # beside the storage's copy: the candidate's runner is charged for its GPU memory
        # (gpu_memory.py), and whole-storage temporaries took 9 times a storage.
        size = t.element_size()
        for begin, end in _chunks(raw, size):
            chunk, was = raw[begin:end], old[begin:end]
            changed = (chunk != was).view(-1, size).any(dim=1)
            if not bool(changed.any()):
                continue
            wrote = 1
            # Or one shift of the destination's own storage before the launch: torch's answer
            # in one half of it, moved to the other.
            copied = _held(chunk, begin, t.dtype, sources, changed, tolerance, (t.dtype, old))
            staged = torch.zeros_like(changed)
            if prepared["staging"] is not None:
                # Over every element the launch wrote, those credited as copies too: one
                # staged value that happens to lie near a number the launch took (1.0) is
                # credited as that number's copy, and a staging test over the rest would no
                # longer see all of one sign's values.
                staged = _staged(chunk, begin, t, changed, prepared["staging"], tolerance)
                staged |= _permuted(chunk, t.dtype, prepared["staged_values"], changed)
                if begin == 0 and bool((changed & ~copied & ~staged).any()):
                    others = [
                        u.detach().reshape(-1)
                        for j, u in enumerate(tensors)
                        if j != index and u.is_floating_point()
                    ]
                    staged |= _padded(
                        chunk, t, prepared["staged_values"], others, changed, tolerance
                    )
            written += int(changed.sum())
            copies += int(copied.sum())
            # The noise goes where the launch did work: an element that copies an answer
            # torch made keeps it, so that a store of torch's answer beside a flag nothing
            # reads does not "matter" by the answer it copied.
            where = changed & ~copied & ~staged
            if kept is not None and bool(where.any()):
                kept.append((t.dtype, begin, chunk.clone(), where.clone()))
            if counterfactual is None:
                _noise_where_changed(chunk, was, t, size, where=where)
            else:
                rows = chunk.view(-1, size)
                rows[where] = counterfactual[index][begin:end].view(-1, size)[where]
    return "answer" if wrote and copies == written else ""


def _held(
    chunk: torch.Tensor,
    begin: int,
    dtype: torch.dtype,
    sources: list[tuple[torch.dtype, torch.Tensor]],
    wanted: torch.Tensor,
    tolerance: tuple[float, float] | None,
    also_shifted: tuple[torch.dtype, torch.Tensor] | None = None,
) -> torch.Tensor:
    """Which ``wanted`` elements of ``chunk`` (bytes ``begin``... of a storage of ``dtype``)
    some source holds (``sources``: each a storage's bytes with its type): at the same place,
    else at one fixed shift (a copy into other places of a buffer; two halves torch made
    apart, gathered), bit for bit or within the tolerance; ``also_shifted`` is a source taken
    at a shift only. Each source's bytes are read in the destination's width, whatever its
    own: its type does not decide which test runs (an int64 view of a float32 answer)."""
    size = torch.empty((), dtype=dtype).element_size()
    held = torch.zeros_like(wanted)
    for src_dtype, src in sources:
        held |= _same_place(chunk, begin // size, dtype, src, src_dtype, tolerance)
    held &= wanted
    for src_dtype, src in [*sources, *([also_shifted] if also_shifted else [])]:
        rest = wanted & ~held
        if not bool(rest.any()):
            break
        held |= _shifted(chunk, begin, src, rest, size)
        rest = wanted & ~held
        if bool(rest.any()):
            as_float = _float_reading(dtype, src_dtype)
            held |= _shifted_close(chunk, begin, src, rest, as_float, tolerance)
    return held


class Recomputation:
    """Whether the candidate's torch calls also compute, later in the same call, every element
    an ablated launch worked out (``kept``, from ``launch_with_noise``: each chunk's bytes as
    the launch wrote them, and which of its elements got noise): each held at the same place
    or one shift by a tensor torch computed after it (``meet``, as each is made: a value
    compared and dropped is gone by the call's end), bit for bit, cast or within the
    tolerance. Such a value is one the model compares with the kernel's, on which a decoy
    call's answer turns (garbage returned where they differ made the kernel "matter"): the
    work is torch's, and the kernel's is done twice. Zeros are left out (any zero-filled
    tensor holds them): a launch that worked out nothing but zeros is never recomputed."""

    def __init__(
        self,
        kept: list[tuple[torch.dtype, int, torch.Tensor, torch.Tensor]],
        tolerance: tuple[float, float] | None,
    ) -> None:
        self.tolerance = tolerance
        self.parts = []
        for dtype, begin, chunk, worked in kept:
            size = torch.empty((), dtype=dtype).element_size()
            wanted = worked & (chunk.view(-1, size) != 0).any(dim=1)
            if bool(wanted.any()):
                self.parts.append((dtype, begin, chunk, wanted, torch.zeros_like(wanted)))

    def meet(self, made: torch.Tensor) -> None:
        """A tensor torch computed in the call: the elements it holds are credited."""
        parts = [(u.dtype, _whole_storage(u)) for u in _dense_parts(made) if _readable(u)]
        for dtype, begin, chunk, wanted, found in self.parts:
            for source in parts:
                if source[1].device == chunk.device:
                    found |= _held(chunk, begin, dtype, [source], wanted & ~found, self.tolerance)

    def whole(self) -> bool:
        """Every element it worked out (and one at least) met in a tensor torch computed."""
        return bool(self.parts) and all(
            not bool((wanted & ~found).any()) for _, _, _, wanted, found in self.parts
        )


def _staged(
    chunk: torch.Tensor,
    begin: int,
    t: torch.Tensor,
    changed: torch.Tensor,
    sources: list[tuple[torch.dtype, torch.Tensor]],
    tolerance: tuple[float, float] | None,
) -> torch.Tensor:
    """Which changed elements of ``chunk`` hold an element of ``sources`` (the inputs and
    weights as loaded) at the same place or at one shift, bit for bit, cast or within the
    tolerance, or all of them one affine map of the elements at the same place
    (``_affine_of``: ``-x``, ``2x + 1`` for torch to undo); float ones only where those
    elements hold values of both signs."""
    size = t.element_size()
    found = torch.zeros_like(changed)
    for src_dtype, src in sources:
        if src.device != chunk.device:
            continue
        found |= _same_place(chunk, begin // size, t.dtype, src, src_dtype, tolerance)
        if src_dtype == t.dtype and t.dtype.is_floating_point and not t.dtype.is_complex:
            found |= _affine_of(chunk, begin // size, t.dtype, src, changed, tolerance)
        rest = changed & ~found
        if bool(rest.any()):
            found |= _shifted(chunk, begin, src, rest, size)
        rest = changed & ~found
        if bool(rest.any()):
            as_float = _float_reading(t.dtype, src_dtype)
            found |= _shifted_close(chunk, begin, src, rest, as_float, tolerance)
    found &= changed
    if t.dtype.is_floating_point and bool(found.any()):
        values = chunk.view(t.dtype)[found]
        if t.dtype.is_complex or not (bool((values > 0).any()) and bool((values < 0).any())):
            return torch.zeros_like(found)
    return found


def _affine_of(
    chunk: torch.Tensor,
    first: int,
    dtype: torch.dtype,
    src: torch.Tensor,
    changed: torch.Tensor,
    tolerance: tuple[float, float] | None,
) -> torch.Tensor:
    """The ``changed`` elements of ``chunk`` (``dtype``, its element ``first`` on) where all of
    them are ``a * s + b`` of the element ``s`` at the same place of ``src`` (same type), for
    one ``a`` other than zero and one ``b`` (least squares), within the task's rtol of each
    (2^-20 without one); none elsewhere. Trivial arithmetic on a staged input,
    which torch undoes, is no work, as a copy within the tolerance is none."""
    none = torch.zeros_like(changed)
    count = chunk.numel() // torch.empty((), dtype=dtype).element_size()
    have = min(count, max(0, src.numel() // torch.empty((), dtype=dtype).element_size() - first))
    where = changed[:have]
    if have < 2 or int(where.sum()) < 2:
        return none
    size = torch.empty((), dtype=dtype).element_size()
    w = chunk[: have * size].view(dtype)[where].double()
    x = src[first * size : (first + have) * size].view(dtype)[where].double()
    if not (bool(torch.isfinite(w).all()) and bool(torch.isfinite(x).all())):
        return none
    xc, wc = x - x.mean(), w - w.mean()
    spread = float((xc * xc).sum())
    if spread == 0.0:
        return none
    a = float((xc * wc).sum()) / spread
    b = float(w.mean()) - a * float(x.mean())
    if a == 0.0:
        return none
    # Relative only: within atol every small output is near some line.
    rtol = tolerance[1] if tolerance is not None else 2.0**-20
    if not _all_within(w, a * x + b, rtol):
        return none
    none[:have] = where
    return none


def _permuted(
    chunk: torch.Tensor, dtype: torch.dtype, sources: list[torch.Tensor], rest: torch.Tensor
) -> torch.Tensor:
    """The ``rest`` elements of ``chunk`` where, bit for bit, they are the values of one of
    ``sources`` (the staged inputs' and weights' own values) in another order (a transposed
    copy, a gather by a permutation, for torch to undo): all of them, of both signs, or all
    of one sign's (a copy split by sign over two launches); read in the source's type, an
    integer destination narrowed to its width first (a float's bits widened into int64);
    none elsewhere."""
    none = torch.zeros_like(rest)
    count = int(rest.sum())
    if count < 2 or dtype.is_complex:
        return none
    held = chunk.view(dtype)[rest]
    for theirs in sources:
        if theirs.device != chunk.device or theirs.dtype.is_complex:
            continue
        if not theirs.dtype.is_floating_point or theirs.numel() < count:
            continue
        mine = _read_as(held, theirs.dtype)
        if mine is None:
            continue
        both = bool((mine > 0).any()) and bool((mine < 0).any())
        ordered = mine.sort().values
        if theirs.numel() == count and both and torch.equal(ordered, theirs.sort().values):
            return rest.clone()
        for part in (
            theirs[theirs > 0],
            theirs[theirs <= 0],
            theirs[theirs >= 0],
            theirs[theirs < 0],
        ):
            if part.numel() == count and part.numel() < theirs.numel():
                if torch.equal(ordered, part.sort().values):
                    return rest.clone()
    return none


def _padded(
    chunk: torch.Tensor,
    t: torch.Tensor,
    sources: list[torch.Tensor],
    others: list[torch.Tensor],
    rest: torch.Tensor,
    tolerance: tuple[float, float] | None,
) -> torch.Tensor:
    """The ``rest`` elements of ``chunk`` (``t``'s storage from its start) where all of them
    are a staged source's value at the same place combined with another tensor the launch
    took, at the same place, by one of ``+ - * /`` (a pad torch made and takes off again),
    within the task's rtol; none elsewhere. ``others`` are read as the launch left them,
    which for tensors it only read is as they were."""
    none = torch.zeros_like(rest)
    if not t.dtype.is_floating_point or t.dtype.is_complex or t.storage_offset() != 0:
        return none
    n = t.numel()
    mask = rest[:n]
    if int(mask.sum()) < 2 or int(rest.sum()) != int(mask.sum()):
        return none
    w = chunk.view(t.dtype)[:n][mask].double()
    rtol = tolerance[1] if tolerance is not None else 2.0**-20
    for x in sources:
        if x.numel() != n or not x.dtype.is_floating_point or x.device != chunk.device:
            continue
        xs = x[mask].double()
        for u in others:
            if u.numel() != n or u.device != chunk.device:
                continue
            us = u[mask].double()
            for made in (xs + us, xs - us, us - xs, xs * us, xs / us):
                if _all_within(w, made, rtol):
                    out = none.clone()
                    out[:n] = mask
                    return out
    return none


def _all_within(w: torch.Tensor, made: torch.Tensor, rtol: float) -> bool:
    """Whether every element of ``w`` is ``made``'s within rtol of itself (and 2^-20 of the
    largest: zeros)."""
    return bool(((w - made).abs() <= rtol * w.abs() + 2.0**-20 * float(w.abs().max())).all())


def _read_as(values: torch.Tensor, dtype: torch.dtype) -> torch.Tensor | None:
    """``values`` as ``dtype``'s: the same where the types are, an integer type's narrowed to
    ``dtype``'s width and its bits read as ``dtype``; None otherwise."""
    if values.dtype == dtype:
        return values
    if values.dtype.is_floating_point or values.dtype == torch.bool:
        return None
    narrow = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
    width = torch.empty((), dtype=dtype).element_size()
    if width not in narrow:
        return None
    return values.to(narrow[width]).view(dtype)


def _float_reading(dtype: torch.dtype, src_dtype: torch.dtype) -> torch.dtype:
    """The float type a destination's elements are read in for the tolerance tests: its own
    where it is a float, else a float source's of the same width (torch's answer stored
    through an int32 view of a float32 output)."""
    if dtype.is_floating_point or not src_dtype.is_floating_point:
        return dtype
    if (
        torch.empty((), dtype=dtype).element_size()
        == torch.empty((), dtype=src_dtype).element_size()
    ):
        return src_dtype
    return dtype


def _chunks(raw: torch.Tensor, size: int) -> Iterator[tuple[int, int]]:
    """(begin, end) byte ranges of ``raw``'s whole elements of ``size`` bytes, a
    ``NOISE_CHUNK_BYTES`` chunk at a time."""
    step = max(1, NOISE_CHUNK_BYTES // size) * size
    usable = raw.numel() // size * size
    for begin in range(0, usable, step):
        yield begin, min(begin + step, usable)


def _same_place(
    chunk: torch.Tensor,
    first: int,
    dtype: torch.dtype,
    src: torch.Tensor,
    src_dtype: torch.dtype,
    tolerance: tuple[float, float] | None,
) -> torch.Tensor:
    """Which elements of ``chunk`` (bytes of a storage of ``dtype``, its element ``first``
    on) hold the element at the same place of ``src`` (another storage's bytes, of
    ``src_dtype``, which may end sooner): the same bytes at the same byte offset, whatever
    the widths; the same value, cast to ``dtype`` from another float width or not (a zero
    stored as -0.0); or, for floats, within the task's ``tolerance``, where the source's
    value is not itself within atol of zero (small values are no evidence of a copy)."""
    size = torch.empty((), dtype=dtype).element_size()
    src_size = torch.empty((), dtype=src_dtype).element_size()
    count = chunk.numel() // size
    mask = torch.zeros(count, dtype=torch.bool, device=chunk.device)
    # The same bytes at the same byte offset, whatever either side's type: an answer read
    # through a view of another width (int64 over float32) and stored is still its bytes.
    bytes_have = min(count, max(0, src.numel() // size - first))
    if bytes_have:
        mine_bytes = chunk[: bytes_have * size].view(-1, size)
        theirs_bytes = src[first * size : (first + bytes_have) * size].view(-1, size)
        mask[:bytes_have] |= (mine_bytes == theirs_bytes).all(dim=1)
    have = min(count, max(0, src.numel() // src_size - first))
    if have == 0:
        return mask
    mine = chunk[: have * size]
    theirs = src[first * src_size : (first + have) * src_size]
    dtype = _float_reading(dtype, src_dtype)  # an int view of floats is read as the floats
    floats = dtype.is_floating_point and src_dtype.is_floating_point
    if not floats or dtype.is_complex or src_dtype.is_complex:
        return mask
    # In the destination's type, a chunk's worth of temporaries at a time: the candidate's
    # runner is charged for the GPU memory the check makes (an honest linear layer's decoy
    # call came within 3% of its bound on an H200 with float64 copies of each source).
    a = mine.view(dtype)
    b = theirs.view(src_dtype)
    if src_dtype != dtype:
        b = b.to(dtype)
    # Equal values in other bits too: a zero stored as -0.0 is the same copy.
    mask[:have] |= a == b
    if tolerance is not None:
        mask[:have] |= _near(a, b, tolerance)
    return mask


def _near(a: torch.Tensor, b: torch.Tensor, tolerance: tuple[float, float]) -> torch.Tensor:
    """Where ``a`` holds ``b`` at the task's tolerance: within rtol of it (a store times
    1 + 2^-9, whatever the size: a softmax's values all lie below atol), or within atol + rtol
    where ``b`` is not itself within atol of zero (below, atol makes any two values near,
    which is no evidence of a copy). Infinite or NaN on either side is not near (every value
    is within rtol of an infinity)."""
    atol, rtol = tolerance
    size_of_b = b.abs()
    apart = (a - b).abs_()
    finite = torch.isfinite(apart) & torch.isfinite(size_of_b)
    relative = (apart <= size_of_b * rtol) & (size_of_b > 0)
    absolute = (apart <= size_of_b * rtol + atol) & (size_of_b > atol)
    return finite & (relative | absolute)


# Places of a source a shifted copy's first element may come from that are tried.
SHIFT_CANDIDATES = 4
EQUAL_SCAN_BYTES = 4 << 20


def _anchors(count: int) -> list[int]:
    """Which of ``count`` changed elements a shift is looked for from: the first, the last
    and two drawn by the OS (one element a copy does not hold, put first or last, hides no
    shift)."""
    drawn = [int.from_bytes(os.urandom(4), "little") % count for _ in range(2)]
    return list(dict.fromkeys([0, count - 1, *drawn]))


def _shifted(
    chunk: torch.Tensor, begin: int, src: torch.Tensor, changed: torch.Tensor, size: int
) -> torch.Tensor:
    """Which changed elements of ``chunk`` (bytes ``begin``... of a storage) are, bit for bit,
    those of ``src`` (another storage's bytes) at one fixed shift, the shift that holds the
    most of them: a copy into other places of a buffer (``y[i + 1] = x[i]``), whatever else
    the launch wrote beside it. A selection or a permutation (a row's maximum, a transpose)
    is not one shift: little of it is credited."""
    credited = torch.zeros_like(changed)
    kind = _INT_VIEW.get(size)
    if kind is None or src.numel() < size:
        return credited
    mine = chunk.view(kind)
    theirs = src[: src.numel() // size * size].view(kind)
    places = changed.nonzero().flatten()
    wanted = mine[places]
    at = begin // size + places  # the changed elements' places in the whole storage
    best, most = None, 0
    for anchor in _anchors(places.numel()):
        for start in _first_equal(theirs, wanted[anchor], SHIFT_CANDIDATES):
            match = _at_shift(theirs, at - (int(at[anchor]) - start), wanted, None)
            held = int(match.sum())
            if held > most:
                best, most = match, held
            if held == places.numel():
                break
    if best is not None:
        credited[places[best]] = True
    return credited


def _source_chunks(
    theirs: torch.Tensor, nbytes: int | None = None
) -> Iterator[tuple[int, torch.Tensor]]:
    """``theirs`` (a source's elements) ``nbytes`` (``NOISE_CHUNK_BYTES``) at a time, with
    each chunk's first place: a scan of a whole source made a temporary of its size or more
    (the places of a value it holds everywhere, 8 bytes each), charged to the candidate's
    runner."""
    step = max(1, (nbytes or NOISE_CHUNK_BYTES) // max(1, theirs.element_size()))
    for first in range(0, theirs.numel(), step):
        yield first, theirs[first : first + step]


def _first_equal(theirs: torch.Tensor, value: torch.Tensor, count: int) -> list[int]:
    """The first ``count`` places of ``theirs`` that hold ``value`` bit for bit (in chunks
    of ``EQUAL_SCAN_BYTES``: a chunk's places of a value it holds everywhere are 8 bytes an
    element)."""
    found: list[int] = []
    for first, part in _source_chunks(theirs, EQUAL_SCAN_BYTES):
        found += [
            first + i for i in (part == value).nonzero().flatten()[: count - len(found)].tolist()
        ]
        if len(found) >= count:
            break
    return found


def _nearest(theirs: torch.Tensor, value: torch.Tensor, count: int) -> list[int]:
    """The ``count`` places of ``theirs`` nearest in value to ``value`` (finite distances
    first), the nearest first."""
    best_d: list[torch.Tensor] = []
    best_i: list[torch.Tensor] = []
    for first, part in _source_chunks(theirs):
        distance = (part - value).abs()
        distance = torch.where(torch.isfinite(distance), distance, float("inf"))
        near = torch.topk(distance, min(count, distance.numel()), largest=False)
        best_d.append(near.values)
        best_i.append(near.indices + first)
    if not best_d:
        return []
    distances, indices = torch.cat(best_d), torch.cat(best_i)
    order = torch.topk(distances, min(count, distances.numel()), largest=False).indices
    return indices[order].tolist()


def _at_shift(
    theirs: torch.Tensor,
    taken: torch.Tensor,
    wanted: torch.Tensor,
    tolerance: tuple[float, float] | None,
) -> torch.Tensor:
    """Which of ``wanted`` the source holds at the places ``taken`` (bit for bit, or within
    ``tolerance``); places outside it hold none."""
    inside = (taken >= 0) & (taken < theirs.numel())
    there = theirs[taken.clamp(0, theirs.numel() - 1)]
    same = there == wanted if tolerance is None else _near(wanted, there, tolerance)
    return inside & same


# The places nearest in value to a copy's first element that are tried as its source, where a
# copy is held to the task's tolerance (a store with trivial arithmetic moves every value a
# little, so no place holds it bit for bit).
CLOSE_SHIFT_CANDIDATES = 16


def _shifted_close(
    chunk: torch.Tensor,
    begin: int,
    src: torch.Tensor,
    changed: torch.Tensor,
    dtype: torch.dtype,
    tolerance: tuple[float, float] | None,
) -> torch.Tensor:
    """``_shifted`` at the task's tolerance: which changed elements of ``chunk`` are those of
    ``src`` at one fixed shift, each within (atol, rtol) of its source (``y[i + 1] = x[i] *
    (1 + 2^-21)`` is the copy a bitwise test misses)."""
    credited = torch.zeros_like(changed)
    size = torch.empty((), dtype=dtype).element_size()
    if tolerance is None or not dtype.is_floating_point or dtype.is_complex:
        return credited
    if src.numel() < size or chunk.numel() % size:
        return credited
    # In the destination's type: a float64 copy of the whole source was twice its size in
    # the candidate's runner, whose GPU memory is bounded.
    mine = chunk.view(dtype)
    theirs = src[: src.numel() // size * size].view(dtype)
    places = changed.nonzero().flatten()
    wanted = mine[places]
    at = begin // size + places
    best, most = None, 0
    for anchor in _anchors(places.numel()):
        # The same place first (a copy moved a little everywhere), then the places nearest
        # in value.
        nearest = _nearest(theirs, wanted[anchor], CLOSE_SHIFT_CANDIDATES)
        for start in [int(at[anchor]), *nearest]:
            match = _at_shift(theirs, at - (int(at[anchor]) - start), wanted, tolerance)
            held = int(match.sum())
            if held > most:
                best, most = match, held
            if held == places.numel():
                break
    if best is not None:
        credited[places[best]] = True
    return credited


def _noise_where_changed(
    raw: torch.Tensor,
    old: torch.Tensor,
    t: torch.Tensor,
    size: int,
    where: torch.Tensor | None = None,
) -> None:
    """Noise into the elements of ``raw`` (a chunk of ``t``'s storage, whole elements) whose
    bytes differ from ``old`` (or, given, into the elements ``where`` says)."""
    if where is None:
        changed_bytes = raw != old
        if not bool(changed_bytes.any()):
            return
        changed = changed_bytes.view(-1, size).any(dim=1)
    else:
        if not bool(where.any()):
            return
        changed = where
    if size not in _INT_VIEW:
        rows = raw.view(-1, size)[changed]
        rows.copy_(
            torch.randint(
                0,
                255,
                rows.shape,
                device=rows.device,
                dtype=rows.dtype,
                generator=_generator(rows.device),
            )
        )
        raw.view(-1, size)[changed] = rows
        return
    as_dtype = raw.view(t.dtype)
    # Elementwise in place: a boolean index (``as_dtype[changed] = ...``) counted the changed
    # elements first, a synchronisation and two more kernels per chunk.
    torch.where(changed, _noise_like(as_dtype), as_dtype, out=as_dtype)
