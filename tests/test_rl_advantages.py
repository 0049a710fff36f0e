"""kgym.rl returns and advantages against straightforward Python references (hypothesis)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgym import rl

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ESTIMATORS = ["grpo", "dr_grpo", "rloo", "trloo"]

# ------------------------------------------------------------------------------------------------
# References: the formulas of docs/rl-maths.md, written as plainly as possible.


def ref_returns(rewards, traj, turn, gamma):
    out = []
    for i in range(len(rewards)):
        g = 0.0
        for j in range(len(rewards)):
            if traj[j] == traj[i] and turn[j] >= turn[i]:
                g += gamma ** (turn[j] - turn[i]) * rewards[j]
        out.append(g)
    return out


def ref_advantages(values, keys, valid, estimator, eps=1e-6, unbiased=False):
    out = []
    for i in range(len(values)):
        if not valid[i]:
            out.append(0.0)
            continue
        xs = [values[j] for j in range(len(values)) if keys[j] == keys[i] and valid[j]]
        n = len(xs)
        mean = sum(xs) / n
        v = values[i]
        if estimator in ("rloo", "trloo"):
            if n == 1:
                out.append(v)
            elif min(xs) == max(xs):
                out.append(0.0)
            else:
                out.append(v - (sum(xs) - v) / (n - 1))
        elif min(xs) == max(xs):
            out.append(0.0)
        elif estimator == "dr_grpo":
            out.append(v - mean)
        else:
            dof = n - 1 if unbiased else n
            std = math.sqrt(sum((x - mean) ** 2 for x in xs) / dof) if dof > 0 else 0.0
            out.append((v - mean) / (std + eps))
    return out


def close(a, b):
    np.testing.assert_allclose(
        np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-9, atol=1e-9
    )


# ------------------------------------------------------------------------------------------------
# Strategies

reward_values = st.one_of(
    st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]),  # repeated values: all-equal groups happen
    st.floats(min_value=-10, max_value=10, allow_nan=False, allow_infinity=False),
)


@st.composite
def single_turn_batches(draw):
    sizes = draw(st.lists(st.integers(1, 6), min_size=1, max_size=5))
    groups = [g for g, s in enumerate(sizes) for _ in range(s)]
    order = draw(st.permutations(range(len(groups))))
    groups = [groups[k] * 7 - 3 for k in order]  # arbitrary, negative, unsorted ids
    rewards = draw(st.lists(reward_values, min_size=len(groups), max_size=len(groups)))
    valid = draw(st.lists(st.booleans(), min_size=len(groups), max_size=len(groups)))
    return rewards, groups, valid


@st.composite
def multi_turn_batches(draw):
    prompts = draw(st.integers(1, 4))
    rows = []
    traj = 0
    for p in range(prompts):
        for _ in range(draw(st.integers(1, 5))):
            length = draw(st.integers(1, 3))
            turns = sorted(draw(st.sets(st.integers(0, 4), min_size=length, max_size=length)))
            for t in turns:
                rows.append((p, traj, t))
            traj += 1
    rows = draw(st.permutations(rows))
    if draw(st.booleans()):  # prompt-major layout with shuffled turns (the counting-sort path)
        rows = sorted(rows, key=lambda r: r[0])
    n = len(rows)
    rewards = draw(st.lists(reward_values, min_size=n, max_size=n))
    valid = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    groups = [r[0] for r in rows]
    trajs = [r[1] for r in rows]
    turns = [r[2] for r in rows]
    return rewards, groups, trajs, turns, valid


# ------------------------------------------------------------------------------------------------
# Properties


@SETTINGS
@given(single_turn_batches(), st.sampled_from(ESTIMATORS), st.booleans())
def test_single_turn_matches_reference(batch, estimator, unbiased):
    rewards, groups, valid = batch
    out = rl.advantages(rewards, groups, valid=valid, estimator=estimator, unbiased_std=unbiased)
    want = ref_advantages(rewards, groups, valid, estimator, unbiased=unbiased)
    close(out.advantages, want)
    close(out.returns, rewards)
    for i in range(len(rewards)):
        n = sum(1 for j in range(len(rewards)) if groups[j] == groups[i] and valid[j])
        assert out.n_valid[i] == n


@SETTINGS
@given(multi_turn_batches(), st.sampled_from(ESTIMATORS), st.sampled_from([1.0, 0.9, 0.5, 0.0]))
def test_multi_turn_matches_reference(batch, estimator, gamma):
    rewards, groups, trajs, turns, valid = batch
    out = rl.advantages(
        rewards,
        groups,
        traj_ids=trajs,
        turn_ids=turns,
        valid=valid,
        estimator=estimator,
        gamma=gamma,
    )
    g = ref_returns(rewards, trajs, turns, gamma)
    close(out.returns, g)
    keys = list(zip(groups, turns, strict=True))
    close(out.advantages, ref_advantages(g, keys, valid, estimator))
    close(rl.turn_returns(rewards, trajs, turns, gamma), g)


@SETTINGS
@given(multi_turn_batches())
def test_trloo_is_unbiased_leave_one_out(batch):
    """TRLOO's baseline never includes the sample itself: A = N_t/(N_t-1) * (G - mean_t)."""
    rewards, groups, trajs, turns, _ = batch
    out = rl.trloo_advantages(rewards, groups, trajs, turns)
    g = np.asarray(out.returns)
    for i in range(len(rewards)):
        members = [
            j for j in range(len(rewards)) if groups[j] == groups[i] and turns[j] == turns[i]
        ]
        n = len(members)
        if n == 1:
            assert out.advantages[i] == g[i]
        else:
            mean = sum(g[j] for j in members) / n
            assert out.advantages[i] == pytest.approx(n / (n - 1) * (g[i] - mean), abs=1e-9)


@SETTINGS
@given(single_turn_batches())
def test_grouping_by_size_equals_by_ids(batch):
    rewards, _, _ = batch
    n = len(rewards)
    by_size = rl.grpo_advantages(rewards, group_size=1)
    assert np.all(by_size == 0.0)
    sizes = [n]
    close(rl.rloo_advantages(rewards, group_sizes=sizes), rl.rloo_advantages(rewards, [0] * n))


def test_edge_cases():
    # group of one
    assert rl.grpo_advantages([3.0], [0])[0] == 0.0
    assert rl.dr_grpo_advantages([3.0], [0])[0] == 0.0
    assert rl.rloo_advantages([3.0], [0])[0] == 3.0
    # all-equal rewards: exactly zero, even for values that do not average exactly
    for est in ESTIMATORS:
        a = rl.advantages([0.1] * 7, [5] * 7, estimator=est).advantages
        assert np.all(a == 0.0), est
    # GRPO with eps = 0 on an all-equal group does not divide by zero
    assert np.all(rl.advantages([1.0, 1.0], [0, 0], estimator="grpo", eps=0.0).advantages == 0)
    # masked turns: the absent/invalid sample gets 0 and does not count
    out = rl.advantages([1.0, 5.0, 3.0], [0, 0, 0], valid=[True, False, True], estimator="rloo")
    assert list(out.advantages) == [-2.0, 0.0, 2.0]
    assert list(out.n_valid) == [2, 2, 2]
    # a whole group invalid
    out = rl.advantages([1.0, 2.0], [0, 0], valid=[False, False], estimator="grpo")
    assert list(out.advantages) == [0.0, 0.0]


def test_dense_layout_matches_flat():
    rewards = np.array([[1.0, 2.0, 0.5], [0.0, np.nan, np.nan], [2.0, 1.0, np.nan]])
    present = ~np.isnan(rewards)
    adv, ret = rl.advantages_dense(rewards, [0, 0, 0], present=present, gamma=0.5)
    assert ret[0, 0] == pytest.approx(1.0 + 0.5 * 2.0 + 0.25 * 0.5)
    assert ret[1, 1] == 0.0 and adv[1, 1] == 0.0
    # turn 0 group: returns 2.125, 0.0, 2.5
    assert adv[0, 0] == pytest.approx(2.125 - (0.0 + 2.5) / 2)
    # turn 2: trajectory 0 alone -> A = G
    assert adv[0, 2] == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rewards": [], "group_ids": []}, "empty batch"),
        ({"rewards": [1.0, np.nan], "group_ids": [0, 0]}, "index 1 is not finite"),
        ({"rewards": [1.0, np.inf], "group_ids": [0, 0]}, "not finite"),
        ({"rewards": [1.0, 2.0], "group_ids": [0]}, "group_ids has 1 entries"),
        ({"rewards": [1.0, 2.0], "group_ids": [0, 0], "valid": [True]}, "valid has 1"),
        ({"rewards": [1.0, 2.0], "group_size": 3}, "do not split"),
        ({"rewards": [1.0, 2.0], "group_sizes": [2, 0]}, "group 1 is empty"),
        ({"rewards": [1.0, 2.0], "group_sizes": [1]}, "add up to 1"),
        ({"rewards": [1.0, 2.0]}, "exactly one of"),
        ({"rewards": [1.0], "group_ids": [0], "estimator": "ppo"}, "unknown estimator"),
        ({"rewards": [1.0], "group_ids": [0], "gamma": 1.5}, "gamma"),
        ({"rewards": [1.0], "group_ids": [0], "eps": -1.0}, "eps"),
        ({"rewards": [1.0], "group_ids": [0.5]}, "integers"),
        (
            {"rewards": [1.0, 2.0], "group_ids": [0, 0], "traj_ids": [1, 1], "turn_ids": [0, 0]},
            "turn 0 twice",
        ),
        (
            {"rewards": [1.0, 2.0], "group_ids": [0, 1], "traj_ids": [1, 1], "turn_ids": [0, 1]},
            "spans two groups",
        ),
        ({"rewards": [1.0], "group_ids": [0], "turn_ids": [-1]}, "negative"),
        ({"rewards": [1.0], "group_ids": [0], "traj_ids": [0]}, "need turn_ids"),
        ({"rewards": [[1.0]], "group_ids": [0]}, "1-D"),
    ],
)
def test_rejects_bad_input(kwargs, message):
    rewards = kwargs.pop("rewards")
    group_ids = kwargs.pop("group_ids", None)
    with pytest.raises(ValueError, match=message):
        rl.advantages(rewards, group_ids, **kwargs)


def test_no_copies_for_exact_dtypes_and_torch_roundtrip():
    r = np.arange(6, dtype=np.float64)
    out = rl.advantages(r, group_size=3, estimator="dr_grpo")
    assert isinstance(out.advantages, np.ndarray) and out.advantages.dtype == np.float64
    torch = pytest.importorskip("torch")
    t = torch.arange(6, dtype=torch.float32)
    out_t = rl.advantages(t, group_size=3, estimator="dr_grpo")
    assert isinstance(out_t.advantages, torch.Tensor)
    close(out_t.advantages.numpy(), out.advantages)


def test_batch_16x16x3_shape():
    rng = np.random.default_rng(0)
    prompts, samples, turns = 16, 16, 3
    n = prompts * samples * turns
    groups = np.repeat(np.arange(prompts), samples * turns)
    trajs = np.repeat(np.arange(prompts * samples), turns)
    turn = np.tile(np.arange(turns), prompts * samples)
    out = rl.trloo_advantages(rng.random(n), groups, trajs, turn)
    assert out.advantages.shape == (n,)
    assert np.all(out.n_valid == samples)


def test_torch_like_inputs_with_a_stand_in(monkeypatch):
    """The tensor plumbing (detach -> cpu -> numpy in, from_numpy -> device out), exercised with a
    minimal stand-in so that it is tested where torch is not installed."""
    import sys
    import types

    fake = types.ModuleType("torch")

    class Dtype:
        def __init__(self, floating: bool, size: int) -> None:
            self.is_floating_point = floating
            self.size = size

    class Tensor:
        def __init__(self, a, device="cuda:0", dtype=None) -> None:
            self.a = np.asarray(a)
            self.device = device
            self.dtype = dtype or Dtype(self.a.dtype.kind == "f", self.a.dtype.itemsize)

        def detach(self):
            return self

        def element_size(self):
            return self.dtype.size

        def float(self):
            return Tensor(self.a.astype(np.float32), self.device)

        def cpu(self):
            return Tensor(self.a, "cpu", self.dtype)

        def numpy(self):
            return self.a

        def to(self, device):
            return Tensor(self.a, device)

    Tensor.__module__ = "torch"
    fake.from_numpy = lambda a: Tensor(a, "cpu")  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "torch", fake)

    half = Tensor(np.array([1.0, 2.0, 3.0, 5.0], dtype=np.float16), dtype=Dtype(True, 2))
    out = rl.advantages(half, group_size=2, estimator="dr_grpo")
    assert isinstance(out.advantages, Tensor) and out.advantages.device == "cuda:0"
    assert list(out.advantages.a) == [-0.5, 0.5, -1.0, 1.0]
    lp = Tensor(np.zeros((2, 3), dtype=np.float32))
    w = rl.token_tis_weights(lp, Tensor(np.full((2, 3), -1.0, dtype=np.float32)))
    assert isinstance(w, Tensor) and w.a.shape == (2, 3) and np.all(w.a == 2.0)
    keep = rl.prs(Tensor(np.array([True, False])), [0.9, None]).keep
    assert isinstance(keep, Tensor) and list(keep.a) == [True, True]
