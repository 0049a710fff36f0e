"""kgym.rl rejection sampling (PRS) and mismatch correction against Python references."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgym import rl

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
M64 = (1 << 64) - 1


def ref_mix64(x):
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & M64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & M64
    x ^= x >> 31
    return x


def ref_uniform01(seed, key):
    return (ref_mix64(seed ^ ref_mix64((key + 0x9E3779B97F4A7C15) & M64)) >> 11) * 2.0**-53


def ref_prs(correct, pr, tau, s, seed, keys, missing="keep"):
    keep, prob = [], []
    for i, (c, p) in enumerate(zip(correct, pr, strict=True)):
        if not c:
            q = 1.0
        elif p is None or math.isnan(p):
            q = {"keep": 1.0, "drop": 0.0}[missing]
        else:
            q = min(max((p - tau) / s, 0.0), 1.0)
        key = i if keys is None else keys[i]
        keep.append(ref_uniform01(seed, key) < q)
        prob.append(q)
    return keep, prob


@SETTINGS
@given(
    st.lists(
        st.tuples(st.booleans(), st.one_of(st.none(), st.floats(0.0, 1.0))), min_size=1, max_size=40
    ),
    st.floats(-0.5, 1.0),
    st.floats(0.01, 2.0),
    st.integers(0, M64),
    st.booleans(),
    st.sampled_from(["keep", "drop"]),
)
def test_prs_matches_reference(samples, tau, s, seed, keyed, missing):
    correct = [c for c, _ in samples]
    pr = [p for _, p in samples]
    keys = [(i * 7919 + 13) & M64 for i in range(len(samples))] if keyed else None
    got = rl.prs(correct, pr, tau=tau, s=s, seed=seed, keys=keys, missing=missing)
    want_keep, want_prob = ref_prs(correct, pr, tau, s, seed, keys, missing)
    assert list(got.keep) == want_keep
    assert list(got.prob) == want_prob
    for k in (keys or range(len(samples)))[:5]:
        assert rl.uniform01(seed, k) == ref_uniform01(seed, k)


def test_prs_defaults_and_rates():
    assert rl.prs_keep_probability(True, 0.3) == 0.0
    assert rl.prs_keep_probability(True, 0.35) == pytest.approx(0.5)
    assert rl.prs_keep_probability(True, 0.4) == 1.0
    assert rl.prs_keep_probability(False, 0.0) == 1.0
    assert rl.prs_keep_probability(True, None) == 1.0
    n = 20000
    got = rl.prs(np.ones(n, dtype=bool), np.full(n, 0.35), seed=11)
    assert abs(got.keep.mean() - 0.5) < 0.02
    again = rl.prs(np.ones(n, dtype=bool), np.full(n, 0.35), seed=11)
    assert np.array_equal(got.keep, again.keep)
    other = rl.prs(np.ones(n, dtype=bool), np.full(n, 0.35), seed=12)
    assert not np.array_equal(got.keep, other.keep)


def test_prs_inputs_from_results():
    results = [
        {
            "status": "ok",
            "correct": True,
            "hacked": False,
            "profile": {"available": True, "triton_share": 0.9},
        },
        {
            "status": "ok",
            "correct": True,
            "hacked": True,
            "profile": {"available": True, "triton_share": 0.9},
        },
        {"status": "incorrect", "correct": False, "hacked": False, "profile": {"available": False}},
    ]
    correct, pr = rl.prs_inputs_from_results(results)
    assert list(correct) == [True, False, False]
    assert pr[0] == 0.9 and pr[1] == 0.9 and math.isnan(pr[2])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"correct": [True], "pr": [1.5]}, "PR must lie in"),
        ({"correct": [True], "pr": [np.inf]}, "PR must lie in"),
        ({"correct": [True], "pr": [None], "missing": "error"}, "no PR"),
        ({"correct": [True, False], "pr": [0.5]}, "pr has 1"),
        ({"correct": [], "pr": []}, "empty batch"),
        ({"correct": [True], "pr": [0.5], "s": 0.0}, "s must be"),
        ({"correct": [True], "pr": [0.5], "missing": "maybe"}, "missing-PR policy"),
        ({"correct": [True], "pr": [0.5], "keys": [1, 2]}, "keys has 2"),
    ],
)
def test_prs_rejects_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        rl.prs(**kwargs)


# ------------------------------------------------------------------------------------------------
# Mismatch correction


@st.composite
def token_batches(draw):
    b = draw(st.integers(1, 5))
    length = draw(st.integers(1, 12))
    lp = st.floats(-8.0, 0.0, allow_nan=False)
    train = np.array(draw(st.lists(lp, min_size=b * length, max_size=b * length))).reshape(
        b, length
    )
    noise = st.one_of(st.just(0.0), st.floats(-0.003, 0.003), st.floats(-12.0, 3.0))
    delta = np.array(draw(st.lists(noise, min_size=b * length, max_size=b * length)))
    rollout = train - delta.reshape(b, length)
    mask = np.array(draw(st.lists(st.booleans(), min_size=b * length, max_size=b * length)))
    return train, rollout, mask.reshape(b, length)


def ref_rho(train, rollout):
    return np.exp(train - rollout)


@SETTINGS
@given(token_batches())
def test_mismatch_matches_reference(batch):
    train, rollout, mask = batch
    d = train - rollout
    geo = rl.geometric_rejection(train, rollout, mask)
    tis = rl.token_tis_weights(train, rollout, mask, cap=2.0)
    tmis = rl.token_mis_mask(train, rollout, mask, lo=0.5, hi=2.0)
    smis = rl.sequence_mis_mask(train, rollout, mask, lo=0.5, hi=2.0)
    for b in range(train.shape[0]):
        sel = d[b][mask[b]]
        ratio = math.exp(sum(sel) / len(sel)) if len(sel) else 1.0
        vetoed = any(math.exp(x) < 1e-4 for x in sel)
        assert geo.ratio[b] == pytest.approx(ratio, rel=1e-12)
        assert geo.vetoed[b] == vetoed
        assert geo.keep[b] == (not vetoed and 0.999 <= geo.ratio[b] <= 1.001)
        assert smis.log_ratio[b] == pytest.approx(float(sum(sel)), abs=1e-9)
        assert smis.keep[b] == (0.5 <= math.exp(smis.log_ratio[b]) <= 2.0)
        for t in range(train.shape[1]):
            if not mask[b, t]:
                assert tis[b, t] == 0.0 and not tmis[b, t]
                continue
            rho = math.exp(d[b, t])
            assert tis[b, t] == pytest.approx(min(rho, 2.0), rel=1e-12)
            assert tmis[b, t] == (0.5 <= math.exp(d[b, t]) <= 2.0)


def test_flat_layout_with_offsets_equals_padded():
    rng = np.random.default_rng(3)
    lens = [3, 0, 5, 2]
    total = sum(lens)
    train = -rng.random(total)
    rollout = train + rng.normal(0, 0.001, total)
    offsets = np.concatenate([[0], np.cumsum(lens)])
    flat = rl.geometric_rejection(train, rollout, offsets=offsets)
    padded_t = np.zeros((4, 5))
    padded_r = np.zeros((4, 5))
    mask = np.zeros((4, 5), dtype=bool)
    for b, (lo, n) in enumerate(zip(offsets[:-1], lens, strict=True)):
        padded_t[b, :n] = train[lo : lo + n]
        padded_r[b, :n] = rollout[lo : lo + n]
        mask[b, :n] = True
    padded = rl.geometric_rejection(padded_t, padded_r, mask)
    assert np.array_equal(flat.keep, padded.keep)
    np.testing.assert_allclose(flat.ratio, padded.ratio, rtol=1e-15)
    assert flat.ratio[1] == 1.0 and flat.keep[1]  # empty sequence


def test_float32_stays_float32_path_and_masked_garbage_is_ignored():
    train = np.array([[-1.0, np.nan]], dtype=np.float32)
    rollout = np.array([[-1.0, 0.0]], dtype=np.float32)
    w = rl.token_tis_weights(train, rollout, np.array([[1, 0]]))
    assert w.shape == (1, 2) and w[0, 0] == 1.0 and w[0, 1] == 0.0
    with pytest.raises(ValueError, match="not finite"):
        rl.token_tis_weights(train, rollout)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: rl.token_tis_weights(np.zeros((2, 3)), np.zeros((2, 2))), "shape"),
        (lambda: rl.token_tis_weights(np.zeros(3), np.zeros(3)), "need offsets"),
        (lambda: rl.token_tis_weights(np.zeros(3), np.zeros(3), offsets=[0, 2]), "offsets"),
        (lambda: rl.token_tis_weights(np.zeros(3), np.zeros(3), offsets=[1, 3]), "offsets"),
        (lambda: rl.token_tis_weights(np.zeros((1, 3)), np.zeros((1, 3)), cap=0.0), "cap"),
        (lambda: rl.token_mis_mask(np.zeros((1, 3)), np.zeros((1, 3)), lo=2.0, hi=1.0), "lo"),
        (lambda: rl.geometric_rejection(np.zeros((1, 3)), np.zeros((1, 3)), veto=-1), "veto"),
        (lambda: rl.sequence_mis_mask(np.zeros((1, 2)), np.zeros((1, 2)), np.ones((1, 3))), "mask"),
        (
            lambda: rl.token_mis_mask(np.zeros((1, 2)), np.zeros((1, 2)), np.full((1, 2), 0.5)),
            "mask",
        ),
    ],
)
def test_mismatch_rejects_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()
