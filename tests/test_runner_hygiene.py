"""What the candidate's runner does around the judge's measurements: the decoy check's noise
(harness/ablation.py) replaces every element a launch wrote and nothing else, chunk by chunk, in
every element size (16-byte elements failed before the chunks); the collector rests in timed calls."""

from __future__ import annotations

import pytest
import torch

from kgym.harness import ablation


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
    # Noise hits the written value by chance only where it has few values to draw from.
    assert still_one <= (0.7 * 267 if dtype == torch.bool else 5)


def test_the_collector_rests_from_a_timed_call_to_the_next_message_that_is_not() -> None:
    import gc
    import socket

    from kgym.harness.runner import Runner

    a, b = socket.socketpair()
    runner = Runner(a, "candidate")
    assert gc.isenabled()
    try:
        runner._collector(timed=True)
        assert not gc.isenabled()
        runner._collector(timed=True)  # the next batch of the same window
        assert not gc.isenabled()
        runner._collector(timed=False)
        assert gc.isenabled()
        gc.disable()  # a collector already off (the candidate's doing) is left off
        runner._collector(timed=True)
        runner._collector(timed=False)
        assert not gc.isenabled()
    finally:
        gc.enable()
        a.close()
        b.close()


def test_a_copy_into_other_places_of_a_buffer_is_still_a_copy() -> None:
    """The decoy check's copy test: a store of another argument's values one place on
    (``y[i + 1] = x[i]``) only copies; a row's maximum (values taken from the input, at
    places no one shift explains) does not."""
    x = torch.randn(64)

    def shifted(fn_self: object, src: torch.Tensor, out: torch.Tensor) -> None:
        out[1:65] = src

    y = torch.full((66,), float("nan"))
    _, copied = ablation.launch_with_noise(shifted, None, (x, y), {})
    assert copied

    rows = x.view(8, 8)

    def row_max(fn_self: object, src: torch.Tensor, out: torch.Tensor) -> None:
        out.copy_(src.amax(dim=1))

    m = torch.full((8,), float("nan"))
    _, copied = ablation.launch_with_noise(row_max, None, (rows, m), {})
    assert not copied
