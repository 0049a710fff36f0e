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


def test_a_poll_for_a_message_sees_it_without_taking_it_and_gives_up_on_time() -> None:
    """KGYM_TIMING_SPIN's wait (protocol.wait_readable): a message already there, or the
    peer's end, is seen at once and left for the read; nothing there ends the wait after its
    CPU-time budget."""
    import socket
    import time

    from kgym.harness import protocol

    a, b = socket.socketpair()
    try:
        began = time.thread_time()
        assert not protocol.wait_readable(a, 0.02)
        assert time.thread_time() - began >= 0.02
        protocol.send(b, {"op": "ping"})
        assert protocol.wait_readable(a, 5.0)
        assert protocol.recv_trusted(a)[0] == {"op": "ping"}
        b.close()
        assert protocol.wait_readable(a, 5.0)  # the peer's end: the read then says so
        with pytest.raises(protocol.PeerClosed):
            protocol.recv_trusted(a)
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"op": "call", "timed": True, "spin_ms": 60}, 0.06),
        ({"op": "call", "timed": True, "spin_ms": 1e9}, 0.2),  # bounded by MAX_SPIN_S
        ({"op": "call", "timed": True, "spin_ms": -5}, 0.0),
        ({"op": "call", "timed": True, "spin_ms": "soon"}, 0.0),
        ({"op": "call", "timed": True, "spin_ms": float("nan")}, 0.0),
        ({"op": "call", "timed": True}, 0.0),
        ({"op": "call", "spin_ms": 60}, 0.0),  # not timed: the runner sleeps between messages
    ],
)
def test_a_runner_polls_only_after_a_timed_call_that_asks(message: dict, expected: float) -> None:
    from kgym.harness.runner import spin_seconds

    assert spin_seconds(message) == pytest.approx(expected)


def test_a_runner_that_polls_after_a_timed_call_still_serves_and_exits() -> None:
    """The serve loop with a poll between messages: the next request is answered, and the
    judge's exit ends it."""
    import socket
    import threading

    from kgym.harness import protocol
    from kgym.harness.runner import Runner

    a, b = socket.socketpair()
    runner = Runner(a, "reference")
    served = threading.Thread(target=runner.serve)
    served.start()
    try:
        protocol.send(b, {"op": "ping", "timed": True, "spin_ms": 50})
        assert protocol.recv_untrusted(b).get("ok") is True
        protocol.send(b, {"op": "ping"})  # arrives while the runner polls
        assert protocol.recv_untrusted(b).get("ok") is True
        protocol.send(b, {"op": "exit"})
        assert protocol.recv_untrusted(b) == {"ok": True}
        served.join(timeout=10)
        assert not served.is_alive()
    finally:
        import gc

        gc.enable()  # the timed ping paused the collector, as a timed call does
        a.close()
        b.close()
