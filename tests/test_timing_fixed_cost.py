"""The fixed cost of a timed sample, taken as the samples are (timing/sampling.py): the
reference's runner stays busy for as long as a batch and says how long, the judge takes that
off, and every sample's time per call uses the median of the fixed costs measured so far."""

from __future__ import annotations

from kgym.harness import reply_schema
from kgym.harness.judge.timing.plan import per_call_ms
from kgym.harness.judge.timing.sampling import Sampler
from kgym.harness.runner import _hold


def test_the_runner_stays_busy_as_long_as_asked_and_says_so() -> None:
    held = _hold(5.0)
    assert 5.0 <= held < 50.0
    assert _hold(-1.0) < 1.0
    assert reply_schema.problems({"ok": True, "held_ms": held}) == []
    assert reply_schema.problems({"ok": True, "held_ms": -1.0}) == ["held_ms"]
    assert reply_schema.problems({"ok": True, "held_ms": "5"}) == ["held_ms"]


def test_every_sample_uses_the_fixed_cost_measured_so_far() -> None:
    sampler = Sampler.__new__(Sampler)
    sampler.copy_ms = 0.1
    sampler.fixed_samples = [0.5, 0.9, 0.6]
    totals = {"reference": [(10.5, 10), (11.0, 10)], "candidate": [(5.5, 4)]}
    first = sampler.per_call(totals)
    assert first["reference"][0] == per_call_ms(10.5, 10, 0.6, 0.1)
    sampler.fixed_samples += [0.4, 0.45]  # later rounds measure it lower: earlier samples too
    again = sampler.per_call(totals)
    assert again["reference"][0] == per_call_ms(10.5, 10, 0.5, 0.1)
    assert again["candidate"][0] > first["candidate"][0]
