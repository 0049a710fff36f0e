"""What the candidate's runner does around the judge's measurements: the decoy check's noise
(harness/ablation.py) replaces every element a launch wrote and nothing else, chunk by chunk, in
every element size (16-byte elements failed before the chunks); the collector rests in every timed
call and in graded ones at the OS's draw."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from kgym.harness import ablation, reply_schema


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float16, torch.int64, torch.bool, torch.complex128]
)
@pytest.mark.parametrize("chunk", [64, 1 << 20])
def test_what_a_launch_wrote_is_noise_and_nothing_else_changes(
    dtype: torch.dtype, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ablation, "NOISE_CHUNK_BYTES", chunk)
    storage = torch.zeros(1000, dtype=dtype)
    one = torch.ones((), dtype=dtype)

    def launch(fn_self: object, out: torch.Tensor) -> None:
        out[::3] = one

    ablation.launch_with_noise(launch, None, (storage[100:900],), {})
    written = torch.zeros(1000, dtype=torch.bool)
    written[100:900:3] = True
    assert bool((storage[~written] == 0).all())
    still_one = int((storage[written] == one).sum())
    # Noise hits the written value by chance only where it has few values to draw from (an
    # integer's noise is one of 200 values: about 1.3 of 267 by chance, 13 or more almost never).
    assert still_one <= (0.7 * 267 if dtype == torch.bool else 12)


def test_the_collector_rests_in_timed_calls_and_at_a_draw_in_graded_ones() -> None:
    """Inside a call the collector's state tells no timed call apart: it rests in every timed
    call and in graded ones at the OS's draw, so that a candidate that behaves otherwise
    where it rests (torch only there), or where it runs (ordinary use), meets graded calls of
    either kind; it runs again after a graded call's reply and after a window, and a
    collector the candidate turned off stays off."""
    import gc
    import socket
    import threading
    import time

    from kgym.harness import protocol
    from kgym.harness.runner import Runner

    judge, own = socket.socketpair()
    runner = Runner(own, "candidate")
    during: list[bool] = []

    def op_call(message: dict[str, Any], payload: Any, fds: list[int]) -> dict[str, Any]:
        during.append(gc.isenabled())
        return {"ok": True, "values": {}}

    runner.op_call = op_call  # type: ignore[method-assign]
    runner.op_ping = lambda message, payload, fds: {"ok": True, "enabled": gc.isenabled()}  # type: ignore[method-assign]
    serving = threading.Thread(target=runner.serve)
    serving.start()

    def ask(message: dict[str, Any]) -> dict[str, Any]:
        protocol.send(judge, message)
        reply = protocol.recv_untrusted(judge)
        assert isinstance(reply, dict)
        return reply

    def enabled_within(seconds: float) -> bool:  # the runner's thread turns it on after
        deadline = time.monotonic() + seconds  # its reply: wait for it
        while not gc.isenabled() and time.monotonic() < deadline:
            time.sleep(0.005)
        return gc.isenabled()

    try:
        for _ in range(40):
            ask({"op": "call", "slots": [0]})
            assert enabled_within(5.0)  # after a graded call's reply
        assert set(during) == {False, True}  # 40 graded calls: both, but once in 2^39
        del during[:]
        ask({"op": "call", "slots": [0], "timed": True})
        ask({"op": "call", "slots": [1], "timed": True})
        assert not enabled_within(0.2)  # between the window's batches
        assert ask({"op": "ping"})["enabled"] is True
        assert during == [False, False]
        ask({"op": "exit"})
    finally:
        serving.join(5)
        gc.enable()
        judge.close()
        own.close()


def test_a_copy_into_other_places_of_a_buffer_is_still_a_copy() -> None:
    """The decoy check's copy test: a store of another argument's values one place on
    (``y[i + 1] = x[i]``) only copies; a row's maximum (values taken from the input, at
    places no one shift explains) does not."""
    x = torch.randn(64)

    def shifted(fn_self: object, src: torch.Tensor, out: torch.Tensor) -> None:
        out[1:65] = src

    y = torch.full((66,), float("nan"))
    _, copied = ablation.launch_with_noise(shifted, None, (x, y), {})
    assert copied == "answer"

    rows = x.view(8, 8)

    def row_max(fn_self: object, src: torch.Tensor, out: torch.Tensor) -> None:
        out.copy_(src.amax(dim=1))

    m = torch.full((8,), float("nan"))
    _, copied = ablation.launch_with_noise(row_max, None, (rows, m), {})
    assert copied == ""


def test_a_copy_of_a_tensor_torch_made_is_a_copy_however_it_was_reached() -> None:
    """A kernel that stores what the candidate's torch calls made in this call copies it,
    whether it took it as an argument or read it at an address passed as a number; the same
    store with the record of torch's tensors left out is not seen as one."""
    answer = torch.softmax(torch.randn(8, 32), dim=-1)

    def copy_from_address(fn_self: object, address: int, out: torch.Tensor) -> None:
        assert address == answer.data_ptr()
        out.copy_(answer)  # what a load from the address gives

    y = torch.full((8, 32), float("nan"))
    _, copied = ablation.launch_with_noise(copy_from_address, None, (answer.data_ptr(), y), {})
    assert copied == ""
    y = torch.full((8, 32), float("nan"))
    _, copied = ablation.launch_with_noise(
        copy_from_address, None, (answer.data_ptr(), y), {}, torch_made=[answer]
    )
    assert copied == "answer"
    # Work on torch's answer is not a copy of it.

    def scaled_exp(fn_self: object, address: int, out: torch.Tensor) -> None:
        out.copy_(answer.exp())

    y = torch.full((8, 32), float("nan"))
    _, copied = ablation.launch_with_noise(
        scaled_exp, None, (answer.data_ptr(), y), {}, torch_made=[answer]
    )
    assert copied == ""


def test_the_torch_op_record_keeps_what_compute_made_weakly() -> None:
    from kgym.harness.torch_ops import MAX_MADE, TorchOpRecorder

    recorder = TorchOpRecorder(lambda: False)
    x = torch.randn(4, 4)
    with recorder:
        kept = torch.relu(x)
        view = kept.view(16)  # a view: memory of another tensor, not kept
        dropped = x * 2
        scratch = torch.empty(4, 4)  # allocated: torch may fill it unseen (t.real = ...)
    del dropped
    made = recorder.made()
    assert made == [kept, scratch] and view is not None
    with recorder:
        many = [x + i for i in range(4 * MAX_MADE)]
    computed = [t for t in recorder.made() if t is not scratch]
    # Every live one, however many: fillers kept alive push no answer out.
    assert len(computed) == 4 * MAX_MADE + 1 and computed[0] is many[-1]
    del many
    with recorder:
        for _ in range(4 * MAX_MADE):
            torch.empty(1).resize_(4)  # an allocation, not compute; dead at once
        recent = torch.relu(x)
    assert any(t is recent for t in recorder.made())
    assert all(t.numel() != 4 for t in recorder.made())


def test_tiny_tensors_made_afterwards_do_not_push_an_answer_out_of_the_record() -> None:
    """The copy test's sources: the largest computed tensors, then the latest allocations; a
    softmax followed by a hundred one-element tensors is still among them."""
    from kgym.harness.torch_ops import TorchOpRecorder

    recorder = TorchOpRecorder(lambda: False)
    x = torch.randn(64, 64)
    with recorder:
        answer = torch.softmax(x, dim=-1)
        tiny = [x.new_zeros(1) for _ in range(100)] + [x[:1, :1] * 2 for _ in range(100)]
    assert any(t is answer for t in recorder.made()) and len(tiny) == 200


def test_a_shifted_copy_with_trivial_arithmetic_is_a_copy_at_the_tasks_tolerance() -> None:
    x = torch.randn(64)

    def shifted_scaled(fn_self: object, src: torch.Tensor, out: torch.Tensor) -> None:
        out[1:65] = src * (1 + 2.0**-21)

    y = torch.full((66,), float("nan"))
    _, copied = ablation.launch_with_noise(shifted_scaled, None, (x, y), {})
    assert copied == ""  # bit for bit, no place holds it
    y = torch.full((66,), float("nan"))
    _, copied = ablation.launch_with_noise(shifted_scaled, None, (x, y), {}, (1e-2, 1e-2))
    assert copied == "answer"

    def doubled(fn_self: object, src: torch.Tensor, out: torch.Tensor) -> None:
        out[1:65] = src * 2  # work, not a copy, at any shift

    y = torch.full((66,), float("nan"))
    _, copied = ablation.launch_with_noise(doubled, None, (x, y), {}, (1e-2, 1e-2))
    assert copied == ""


def test_an_input_rewritten_before_the_launch_is_a_copy_source_again() -> None:
    """The judge's arena is no copy source while it holds what the judge wrote (a kernel that
    is the identity on its inputs does work, and gets noise); once the candidate's torch calls
    rewrite an input with the answer, a kernel that stores it copies it."""
    x = torch.randn(8, 16)
    pristine = {x.untyped_storage().data_ptr(): (x, x.clone())}

    def identity(fn_self: object, src: torch.Tensor, out: torch.Tensor) -> None:
        out.copy_(src)

    y = torch.full((8, 16), float("nan"))
    _, copied = ablation.launch_with_noise(identity, None, (x, y), {}, None, pristine, [])
    assert copied == "" and not torch.equal(y, x)
    x.copy_(torch.softmax(x, dim=-1))  # the answer, computed in place in the input
    y = torch.full((8, 16), float("nan"))
    _, copied = ablation.launch_with_noise(identity, None, (x, y), {}, None, pristine, [])
    assert copied == "answer"
    # Read at its address, the launch not taking it: a source all the same (the record
    # keeps the input torch computed into).

    def by_address(fn_self: object, address: int, out: torch.Tensor) -> None:
        assert address == x.data_ptr()
        out.copy_(x)

    y = torch.full((8, 16), float("nan"))
    _, copied = ablation.launch_with_noise(
        by_address, None, (x.data_ptr(), y), {}, None, pristine, [x]
    )
    assert copied == "answer"


def test_where_torch_computes_a_launch_writes_what_it_would_on_moved_inputs() -> None:
    """Under ``hybrid`` the decoy call puts into what a launch wrote (not copies) what it
    writes on moved inputs, element by element, instead of noise: dust a kernel derives from
    the inputs, added to torch's answer, moves no further than dust; a fill's elements stay."""
    # Rows of 256: the moved inputs flip a third of the signs, so that some of the dust
    # moves (at 16 none moved about one run in 800: a fresh clone's test run met it).
    x = torch.randn(8, 256)

    def dust_and_fill(fn_self: object, src: torch.Tensor, out: torch.Tensor) -> None:
        out[0].copy_(torch.where(src[0] > 0, 2.0**-120, 0.0))
        out[1:].fill_(1.0)

    y = torch.zeros(8, 256)
    _, copied = ablation.launch_with_noise(dust_and_fill, None, (x, y), {}, None, {}, [], set(), [])
    assert copied == ""
    assert bool((y[0].abs() <= 2.0**-120).all()) and bool((y[1:] == 1.0).all())


def test_an_affine_map_of_a_staged_input_is_no_work_where_torch_computes() -> None:
    """``-x`` or ``2x + 1`` staged for torch to undo is a copy with trivial arithmetic: left as
    it is in the decoy call. A nonlinear map of the same input (a GELU) is work."""
    z = torch.randn(8, 16)
    pristine = {z.untyped_storage().data_ptr(): (z, z.clone())}
    for f, work in ((lambda v: -v, False), (lambda v: 2 * v + 1, False), (torch.tanh, True)):

        def stage(fn_self: object, src: torch.Tensor, out: torch.Tensor, f: Any = f) -> None:
            out.copy_(f(src))

        y = torch.zeros(8, 16)
        ablation.launch_with_noise(stage, None, (z, y), {}, (1e-2, 1e-2), pristine, [], set(), [])
        assert torch.equal(y, f(z)) is not work, f


def test_a_staged_input_in_another_order_is_no_work_where_torch_computes() -> None:
    z = torch.randn(8, 16)
    pristine = {z.untyped_storage().data_ptr(): (z, z.clone())}

    def transposed(fn_self: object, src: torch.Tensor, out: torch.Tensor) -> None:
        out.copy_(src.t())

    y = torch.zeros(16, 8)
    ablation.launch_with_noise(transposed, None, (z, y), {}, (1e-2, 1e-2), pristine, [], set(), [])
    assert torch.equal(y, z.t())  # left as it is: a copy for torch to undo
    y = torch.zeros(16, 8)
    ablation.launch_with_noise(transposed, None, (z, y), {}, (1e-2, 1e-2), pristine, [])
    assert not torch.equal(y, z.t())  # where torch computes nothing else: the task's work


def test_encoded_staging_copies_are_no_work_where_torch_computes() -> None:
    """A staged input split by sign (one sign's values alone), its bits widened into int64,
    or with a pad another tensor holds added: each left as it is, for torch to undo."""
    z = torch.randn(8, 16)
    pad = torch.randn(8, 16) * 3
    pristine = {z.untyped_storage().data_ptr(): (z, z.clone())}

    def positives(fn_self: object, src: torch.Tensor, out: torch.Tensor) -> None:
        out[src > 0] = src[src > 0]

    def widened(fn_self: object, src: torch.Tensor, out: torch.Tensor) -> None:
        out.copy_(src.view(torch.int32).to(torch.int64))

    def padded(fn_self: object, src: torch.Tensor, d: torch.Tensor, out: torch.Tensor) -> None:
        out.copy_(src + d)

    y = torch.zeros(8, 16)
    ablation.launch_with_noise(positives, None, (z, y), {}, (1e-2, 1e-2), pristine, [], set(), [])
    assert torch.equal(y, z.clamp(min=0))
    bits = torch.zeros(8, 16, dtype=torch.int64)
    ablation.launch_with_noise(widened, None, (z, bits), {}, None, pristine, [], set(), [])
    assert torch.equal(bits.to(torch.int32).view(torch.float32), z)
    y = torch.zeros(8, 16)
    ablation.launch_with_noise(padded, None, (z, pad, y), {}, (1e-2, 1e-2), pristine, [], set(), [])
    assert torch.equal(y, z + pad)


def test_a_sign_split_staging_copy_is_found_beside_a_value_near_a_number_it_took() -> None:
    """One staged value near a number the launch took (1.0, its ``pos`` flag) is credited as
    that number's copy; the split-by-sign test still sees all of one sign's values (it paid
    the staging attack about one evaluation in seven)."""
    z = torch.randn(8, 16)
    z[0, 0] = 1.001  # the first element written: a place the shift search starts from
    pristine = {z.untyped_storage().data_ptr(): (z, z.clone())}

    def half(fn_self: object, src: torch.Tensor, out: torch.Tensor, pos: int) -> None:
        take = (src > 0) == (pos != 0)
        out[take] = src[take]

    y = torch.full((8, 16), float("nan"))
    for pos in (1, 0):
        ablation.launch_with_noise(
            half, None, (z, y, pos), {}, (1e-2, 1e-2), pristine, [], set(), []
        )
    assert torch.equal(y, z)


def test_a_launch_whose_writes_ignore_its_inputs_is_no_work_where_torch_computes() -> None:
    """Under ``hybrid`` a fill (ones, or any pattern of places alone) that torch multiplies
    into its answer does no work on the inputs: run again on its tensors with their values
    moved, it writes the same, and counts as a copy (no noise). A kernel that reads its input
    in place (``y *= 2``) writes otherwise when run again, and is work. Every tensor is left
    as the first launch left it."""
    x = torch.randn(8, 16)

    def fill(fn_self: object, src: torch.Tensor, out: torch.Tensor) -> None:
        out.copy_(torch.arange(out.numel(), dtype=out.dtype).view(out.shape) % 3 + 1)

    y = torch.zeros(8, 16)
    _, copied = ablation.launch_with_noise(fill, None, (x, y), {}, None, {}, [], set(), [])
    assert copied == "answer" and torch.equal(y, torch.arange(128.0).view(8, 16) % 3 + 1)
    y = torch.zeros(8, 16)
    _, copied = ablation.launch_with_noise(fill, None, (x, y), {}, None, {}, [])
    assert copied == "" and not torch.equal(y, torch.arange(128.0).view(8, 16) % 3 + 1)

    def double(fn_self: object, out: torch.Tensor) -> None:
        out.mul_(2)

    y = x.clone()
    version = y._version
    _, copied = ablation.launch_with_noise(double, None, (y,), {}, None, {}, [], set(), [])
    assert copied == "" and not torch.equal(y, x * 2)  # work: noised
    assert y._version == version + 1  # the launch's own write, no more


def test_a_staging_copy_gets_no_noise_where_torch_computes() -> None:
    """Where torch computed in the evaluation (``staging``), a launch's writes that hold the
    judge's inputs or the model's weights as loaded, at the same place or one shift, bit for
    bit or within the tolerance (a padded buffer, ``x * (1 + 2^-22)``), get no noise: a Triton
    copy for torch to compute on does no work. Float values of one sign are work (a ReLU of
    positive inputs); integer copies are not (a cross entropy's targets)."""
    z = torch.randn(8, 16)
    pristine = {z.untyped_storage().data_ptr(): (z, z.clone())}

    def padded(fn_self: object, src: torch.Tensor, out: torch.Tensor) -> None:
        out.view(-1)[3 : 3 + src.numel()] = src.reshape(-1) * (1 + 2.0**-22)
        out.view(-1)[-1] = 7.0  # one element of its own

    y = torch.zeros(8 * 16 + 8)
    ablation.launch_with_noise(padded, None, (z, y), {}, (1e-2, 1e-2), pristine, [], set(), [])
    # The element of its own is what the launch writes on moved inputs too: left as it is.
    assert torch.allclose(y[3 : 3 + z.numel()], z.reshape(-1)) and y[-1] == 7.0
    y = torch.zeros(8 * 16 + 8)
    ablation.launch_with_noise(padded, None, (z, y), {}, (1e-2, 1e-2), pristine, [])
    assert not torch.allclose(y[3 : 3 + z.numel()], z.reshape(-1))  # not judged: noise
    weight = torch.randn(4, 16)

    def copy_weight(fn_self: object, out: torch.Tensor) -> None:
        out.copy_(weight)

    staged = torch.zeros(4, 16)
    ablation.launch_with_noise(copy_weight, None, (staged,), {}, None, {}, [], set(), [weight])
    assert torch.equal(staged, weight)
    x = torch.rand(8, 16) + 0.5
    pristine = {x.untyped_storage().data_ptr(): (x, x.clone())}

    def relu(fn_self: object, src: torch.Tensor, out: torch.Tensor) -> None:
        out.copy_(src.clamp(min=0))

    y = torch.zeros(8, 16)
    ablation.launch_with_noise(relu, None, (x, y), {}, None, pristine, [], set(), [])
    assert not torch.equal(y, x)  # one sign: work, noised
    targets = torch.randint(0, 10, (64,))
    pristine = {targets.untyped_storage().data_ptr(): (targets, targets.clone())}

    def copy_targets(fn_self: object, src: torch.Tensor, out: torch.Tensor) -> None:
        out.copy_(src)

    staged_targets = torch.zeros(64, dtype=torch.int64)
    ablation.launch_with_noise(
        copy_targets, None, (targets, staged_targets), {}, None, pristine, [], set(), []
    )
    assert torch.equal(staged_targets, targets)


def test_a_move_within_the_destination_and_a_small_scaled_store_are_copies() -> None:
    """torch's answer in one half of the destination's own storage, moved to the other half,
    is a copy (the storage's bytes before the launch are a source); so is a store of
    torch's answer times 1 + 2^-9 whose every value lies below atol (within rtol at any
    size); a row's maximum into a buffer of -inf is not (no value is near an infinity)."""
    answer = torch.softmax(torch.randn(8, 512), dim=-1)  # every value far below 1e-2
    buffer = torch.full((2, 8, 512), float("nan"))
    buffer[1] = answer

    def move(fn_self: object, out: torch.Tensor) -> None:
        out[0] = out[1]

    _, copied = ablation.launch_with_noise(move, None, (buffer,), {}, (1e-2, 1e-2))
    assert copied == "answer"

    def scaled(fn_self: object, address: int, out: torch.Tensor) -> None:
        out.copy_(answer * (1 + 0.97 * 2.0**-9))

    y = torch.full((8, 512), float("nan"))
    _, copied = ablation.launch_with_noise(
        scaled, None, (answer.data_ptr(), y), {}, (1e-2, 1e-2), torch_made=[answer]
    )
    assert copied == "answer"
    rows = torch.randn(13, 100)

    def row_max(fn_self: object, src: torch.Tensor, out: torch.Tensor) -> None:
        out.copy_(src.amax(dim=1))

    m = torch.full((13,), -float("inf"))
    arena = {rows.untyped_storage().data_ptr(): (rows, rows.clone())}
    _, copied = ablation.launch_with_noise(row_max, None, (rows, m), {}, (1e-2, 1e-2), arena)
    assert copied == ""


def test_the_record_follows_computed_memory_through_its_aliases_and_grads() -> None:
    """Computed memory stays a copy source while any tensor on it lives: a ``.detach()`` of
    a result, a tensor ``.data =`` rebound onto it; so does a ``.grad`` the autograd engine
    accumulated into, which no call returns; and a torch-made source is read where it lies,
    however large, with no budget a filler could use up."""
    from kgym.harness.torch_ops import TorchOpRecorder

    recorder = TorchOpRecorder(lambda: False)
    x = torch.randn(8, 32)
    box = torch.zeros(8, 32)
    leaf = torch.zeros(8, 32, requires_grad=True)
    preset = torch.zeros(8, 32)
    leaf.grad = preset
    with recorder:
        detached = torch.softmax(x, dim=-1).detach()
        box.data = torch.softmax(x * 2, dim=-1)
        with torch.enable_grad():
            torch.logsumexp(x + leaf, dim=-1).sum().backward()
    made = recorder.made()
    assert any(t is detached for t in made)
    assert any(t.data_ptr() == box.data_ptr() for t in made)
    assert any(t.data_ptr() == preset.data_ptr() for t in made)


def test_a_gradient_the_engine_hands_a_hook_is_kept_on_any_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A GPU's backward runs on the autograd engine's own thread, where the profile hook that
    takes a callback's arguments is not set: what the engine computes is kept all the same.
    With that hook's taking switched off, as it is on the engine's thread, a tensor hook's
    gradient (a softmax, from logsumexp's backward) is among the copy test's sources."""
    from kgym.harness.torch_ops import TorchOpRecorder

    monkeypatch.setattr(TorchOpRecorder, "_take_arguments", lambda self, frame: None)
    recorder = TorchOpRecorder(lambda: False)
    x = torch.randn(8, 32)
    box: list[torch.Tensor] = []
    with recorder:
        with torch.enable_grad():
            leaf = x.detach().requires_grad_(True)
            leaf.register_hook(box.append)
            torch.logsumexp(leaf, dim=-1).sum().backward()
    assert torch.allclose(box[0], torch.softmax(x, dim=-1))
    assert any(t.data_ptr() == box[0].data_ptr() for t in recorder.made())


def test_a_shifted_copy_beside_a_junk_element_keeps_its_copy_and_the_junk_is_noised() -> None:
    """One element the copy does not hold (first or last) hides no shift: the shifted copy is
    credited element by element, and only the junk element gets the noise (outside the
    answer it changes nothing, and the kernel does not matter)."""
    x = torch.randn(64)

    def shifted_with_junk(fn_self: object, src: torch.Tensor, out: torch.Tensor) -> None:
        out[1:65] = src
        out[0] = 123.0

    y = torch.full((66,), float("nan"))
    _, copied = ablation.launch_with_noise(shifted_with_junk, None, (x, y), {})
    assert copied == ""  # one element was no copy
    assert torch.equal(y[1:65], x) and float(y[0]) != 123.0


def test_the_part_setters_are_torch_calls_the_record_sees() -> None:
    """``t.real = v`` copies in C++ where no torch function mode looks: made a ``copy_`` into
    the part's view, it is compute (a transpose here) and its destination a copy source."""
    from kgym.harness.guards import _part_setters_as_calls
    from kgym.harness.torch_ops import TorchOpRecorder

    _part_setters_as_calls()
    recorder = TorchOpRecorder(lambda: False)
    x = torch.randn(3, 4)
    workspace = [torch.empty(4, 3)]
    with recorder:
        workspace[0].real = x.t()
    assert torch.equal(workspace[0], x.t()) and "copy_" in recorder.compute_ops()
    assert any(t.data_ptr() == workspace[0].data_ptr() for t in recorder.made())
    values = torch.zeros(2, dtype=torch.complex64)
    values.imag = torch.ones(2)
    assert torch.equal(values.imag, torch.ones(2)) and torch.equal(values.real, torch.zeros(2))


def test_a_sparse_tensors_values_are_copy_sources() -> None:
    answer = torch.softmax(torch.randn(4, 5), dim=-1).reshape(-1)
    held = torch.sparse_coo_tensor(torch.arange(20)[None], answer, (20,))
    parts = ablation._dense_parts(held)
    assert any(p.data_ptr() == answer.data_ptr() for p in parts)
    assert all(ablation._readable(p) for p in parts)


def test_a_fingerprint_changes_with_any_byte() -> None:
    raw = torch.randint(0, 255, (4099,), dtype=torch.uint8)
    seed = 12345
    before = ablation._fingerprint(raw, seed)
    assert ablation._fingerprint(raw, seed) == before
    for place in (0, 2048, 4098):  # a word's byte, and the tail past the last whole word
        changed = raw.clone()
        changed[place] ^= 1
        assert ablation._fingerprint(changed, seed) != before


def test_a_copy_through_an_int_view_and_a_launch_the_check_cannot_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """torch's answer times 1 + 2^-20 stored through an int32 view of a float32 output is
    read as floats, and is a copy; a tensor whose storage the check cannot read (sparse) is
    no source and breaks nothing; and a launch whose check fails runs without noise: its
    answer stays right, so the kernel is not taken as mattering by a check that failed; the
    launch says so, with the error."""
    answer = torch.softmax(torch.randn(8, 64), dim=-1)

    def through_int_view(fn_self: object, address: int, out: torch.Tensor) -> None:
        out.copy_((answer * (1 + 2.0**-20)).view(torch.int32))

    y = torch.full((8, 64), float("nan")).view(torch.int32)
    _, copied = ablation.launch_with_noise(
        through_int_view, None, (answer.data_ptr(), y), {}, (1e-2, 1e-2), torch_made=[answer]
    )
    assert copied == "answer"
    sparse = torch.zeros(1, 1).to_sparse()

    def work(fn_self: object, src: torch.Tensor, out: torch.Tensor) -> None:
        out.copy_(src.exp())

    x, z = torch.randn(4, 4), torch.full((4, 4), float("nan"))
    _, copied = ablation.launch_with_noise(work, None, (x, z), {}, None, {}, [sparse])
    assert copied == "" and not torch.equal(z, x.exp())  # checked: its work got noise

    def failing(*_: object) -> bool:
        raise RuntimeError("a tensor the check cannot compare")

    monkeypatch.setattr(ablation, "_noise_what_it_did", failing)
    z = torch.full((4, 4), float("nan"))
    _, copied = ablation.launch_with_noise(work, None, (x, z), {}, None, {}, [])
    assert torch.equal(z, x.exp())  # no noise: a failed check changes nothing
    # and it says why, within what a reply may carry (the decoy finding names the cause)
    assert copied == "unchecked: after the launch, RuntimeError: a tensor the check cannot compare"
    assert reply_schema.CHECKS["unchecked_launches"]([copied])
    assert not reply_schema.CHECKS["unchecked_launches"](["x" * 201])
    assert not reply_schema.CHECKS["unchecked_launches"]([copied] * 5)


def test_torch_runs_no_python_on_threads_of_its_own_in_the_candidates_process() -> None:
    """ThroughputBenchmark runs a module on C++ threads the torch record never sees; the
    candidate's runner takes it away before the candidate's code loads (in a process of its
    own here: torch stays whole in this one)."""
    import subprocess
    import sys

    probe = (
        "import torch, torch.utils.throughput_benchmark as t\n"
        "from kgym.harness.torch_ops import close_unrecorded_threads\n"
        "close_unrecorded_threads()\n"
        "print([hasattr(o, 'ThroughputBenchmark') for o in (torch._C, torch.utils, t)])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == "[False, False, False]"


def test_an_output_with_a_pending_negation_is_computed_by_the_runners_copy() -> None:
    from kgym.harness import runner

    buf = torch.randn(8)
    lazy = buf.view(torch.complex64).view(4, 1).mH.imag.as_strided((4,), (1,), 0)
    assert lazy.is_contiguous() and lazy.is_neg()
    assert runner._lazy_outputs([lazy]) == [runner.LAZY_OUTPUT_COPY]
    assert runner._lazy_outputs([buf.view(2, 4).t()]) == [runner.STRIDED_OUTPUT_COPY]
    assert runner._lazy_outputs([buf, 3]) == []


def test_work_torch_computes_again_after_the_launch_is_recomputed() -> None:
    """A launch's work that torch computes again later in the call (a value the model compares
    with the kernel's) is recomputed; work torch never computes is not, nor a launch that
    worked out only zeros, which any zero-filled tensor holds."""
    x = torch.randn(64)

    def scaled(fn_self: object, src: torch.Tensor, out: torch.Tensor) -> None:
        out.copy_(src * 2.0 + 1.0)

    kept: list[Any] = []
    y = torch.full((64,), float("nan"))
    _, copied = ablation.launch_with_noise(scaled, None, (x, y), {}, (1e-2, 1e-2), kept=kept)
    assert copied == "" and kept
    again = ablation.Recomputation(kept, (1e-2, 1e-2))
    assert not again.whole()  # nothing met yet
    again.meet(x.exp())
    assert not again.whole()
    again.meet(x[:40] * 2.0 + 1.0)  # part of it here, the rest in a later tensor
    assert not again.whole()
    again.meet(x[40:] * 2.0 + 1.0 + 1e-6)  # the rest at one shift, within the tolerance
    assert again.whole()
    zeros: list[Any] = []

    def zero(fn_self: object, out: torch.Tensor) -> None:
        out.zero_()

    z = torch.full((8,), float("nan"))
    ablation.launch_with_noise(zero, None, (z,), {}, (1e-2, 1e-2), kept=zeros)
    nothing = ablation.Recomputation(zeros, (1e-2, 1e-2))
    nothing.meet(torch.zeros(8))
    assert not nothing.whole()


@pytest.mark.parametrize("kind", ["small", "aligned", "rows", "fresh"])
@pytest.mark.parametrize("grad_fn", [False, True])
def test_a_moved_input_that_requires_grad_is_still_the_judges_input(
    kind: str, grad_fn: bool
) -> None:
    """An input moved into a storage of its own (an offset manner, a fresh copy) and made to
    require grad is the tensor the decoy check records as the judge's: the same storage, whole,
    so that it is no copy source (a kernel that is the identity on its inputs, a ReLU of
    positive ones or a batch norm at its initial statistics, was taken as copying its input
    and refused as a decoy, one decoy call in about twenty)."""
    from kgym.harness.runner import _called_with

    x = torch.rand(6, 16)
    manner = {"offset": [kind, 2], "grad": True, "grad_inputs": True, "grad_fn": grad_fn}
    given, kept = _called_with([x], manner)
    (moved,) = given
    assert moved.requires_grad and torch.equal(moved.detach(), x)
    record = ablation._whole_storage(kept[0])
    assert torch.equal(ablation._whole_storage(moved), record)
    # So a kernel that is the identity on it does work: it gets noise, it copies nothing.
    arena = {int(moved.untyped_storage().data_ptr()): (moved, kept[0])}

    def identity(fn_self: object, src: torch.Tensor, out: torch.Tensor) -> None:
        out.copy_(src)

    y = torch.full((6, 16), float("nan"))
    _, copied = ablation.launch_with_noise(
        identity, None, (moved.detach(), y), {}, (1e-2, 1e-2), arena, []
    )
    assert copied == "" and not torch.equal(y, x)
