"""RL maths of kgym: turn returns, group-relative advantages, rejection sampling, mismatch correction.

Every function here runs in kgym's C++ core (``kgym._core.rl``), so that kgym's trainer, its
evaluator and any outside trainer compute the same numbers. The formulas, their defaults and the
papers they come from are in ``docs/rl-maths.md``.

Batches are *flat*: one entry per (trajectory, turn) sample, with the prompt (group) it answers
and, for multi-turn training, the trajectory it belongs to and its turn index::

    import numpy as np
    from kgym import rl

    # 2 prompts x 2 samples x 2 turns
    rewards = np.array([1.0, 0.0, 2.0, 0.5, 1.0, 3.0, 0.0, 0.0])
    group = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    traj = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    turn = np.array([0, 1, 0, 1, 0, 1, 0, 1])
    out = rl.advantages(rewards, group, traj_ids=traj, turn_ids=turn, estimator="trloo")
    out.advantages, out.returns, out.n_valid

Inputs may be NumPy arrays, sequences or torch tensors (CPU or GPU; converted to NumPy, which
is free for contiguous CPU tensors). Outputs are NumPy arrays, or torch tensors when the main input
was a tensor (on its device). Bad input raises ``ValueError`` naming the problem: empty batch,
mismatched lengths, NaN or infinite rewards, empty groups, duplicate (trajectory, turn) pairs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from kgym import _core
from kgym.result import ResultView

__all__ = [
    "Advantages",
    "Estimator",
    "GeometricRejection",
    "PrsDecision",
    "SequenceMis",
    "advantages",
    "advantages_dense",
    "dr_grpo_advantages",
    "geometric_rejection",
    "grpo_advantages",
    "prs",
    "prs_inputs_from_results",
    "prs_keep_probability",
    "rloo_advantages",
    "sequence_mis_mask",
    "token_mis_mask",
    "token_tis_weights",
    "trloo_advantages",
    "turn_returns",
    "uniform01",
]

Estimator = Literal["grpo", "dr_grpo", "rloo", "trloo"]
MissingPr = Literal["keep", "drop", "error"]

_core_rl: Any = _core.rl  # type: ignore[attr-defined]

# Defaults (docs/rl-maths.md says where each comes from).
GRPO_EPS = 1e-6
PRS_TAU = 0.3
PRS_S = 0.1
GEO_LO = 0.999
GEO_HI = 1.001
GEO_VETO = 1e-4
TIS_CAP = 2.0
MIS_LO = 0.5
MIS_HI = 2.0


# ------------------------------------------------------------------------------------------------
# Array plumbing


def _is_torch(x: object) -> bool:
    return type(x).__module__.split(".", 1)[0] == "torch"


def _torch_to_numpy(x: Any) -> np.ndarray:
    t = x.detach()
    if t.dtype.is_floating_point and t.element_size() < 4:  # float16 / bfloat16
        t = t.float()
    return t.cpu().numpy()


class _Returner:
    """Converts outputs back to torch tensors on the input's device when the input was one."""

    def __init__(self, like: object) -> None:
        self.device = like.device if _is_torch(like) else None  # type: ignore[attr-defined]

    def __call__(self, a: np.ndarray) -> Any:
        if self.device is None:
            return a
        import torch  # only reached when the caller already uses torch

        return torch.from_numpy(a).to(self.device)


def _array(x: object, dtype: npt.DTypeLike, name: str, ndim: int | None = 1) -> np.ndarray:
    if _is_torch(x):
        x = _torch_to_numpy(x)
    arr = np.asarray(x)
    if arr.dtype == object:
        raise ValueError(f"{name} must hold numbers, not Python objects (got {arr!r:.80})")
    want = np.dtype(dtype)
    if want.kind in "iu" and arr.size and arr.dtype.kind not in "iub":
        integral = arr.dtype.kind == "f" and bool(np.all(np.isfinite(arr) & (arr == np.round(arr))))
        if not integral:  # integral floats (1.0, 2.0) are accepted as ids
            raise ValueError(f"{name} must hold integers, got dtype {arr.dtype}")
    if want.kind == "u" and arr.size and arr.dtype.kind in "if" and np.any(arr < 0):
        raise ValueError(f"{name} must hold non-negative integers")
    if want.kind == "b" and arr.size and arr.dtype.kind != "b":
        if arr.dtype.kind not in "uif" or not np.all((arr == 0) | (arr == 1)):
            raise ValueError(f"{name} must be a boolean (or 0/1) mask, got dtype {arr.dtype}")
    if ndim is not None and arr.ndim != ndim:
        if arr.ndim == 0 and ndim == 1:
            raise ValueError(f"{name} must be a 1-D array, got a scalar")
        raise ValueError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    return np.ascontiguousarray(arr, dtype=want)


def _optional(x: object | None, dtype: npt.DTypeLike, name: str) -> np.ndarray | None:
    return None if x is None else _array(x, dtype, name)


def _group_ids(
    n: int,
    group_ids: object | None,
    group_size: int | None,
    group_sizes: Sequence[int] | None,
) -> np.ndarray:
    given = sum(x is not None for x in (group_ids, group_size, group_sizes))
    if given != 1:
        raise ValueError("give exactly one of group_ids, group_size, group_sizes")
    if group_ids is not None:
        return _array(group_ids, np.int64, "group_ids")
    if group_size is not None:
        if int(group_size) <= 0:
            raise ValueError(f"group_size must be >= 1, got {group_size}")
        if n % int(group_size):
            raise ValueError(f"{n} samples do not split into groups of {group_size}")
        return np.repeat(np.arange(n // int(group_size), dtype=np.int64), int(group_size))
    sizes = [int(s) for s in group_sizes or ()]
    for g, s in enumerate(sizes):
        if s <= 0:
            raise ValueError(f"group {g} is empty (group_sizes[{g}] = {s})")
    if sum(sizes) != n:
        raise ValueError(f"group_sizes add up to {sum(sizes)} but there are {n} samples")
    return np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)


# ------------------------------------------------------------------------------------------------
# Returns and advantages


@dataclass(frozen=True)
class Advantages:
    """Advantages of a flat batch, with the values they were computed from."""

    advantages: Any  # float64 [n]; 0 for invalid samples
    returns: Any  # float64 [n]; turn returns G (the rewards themselves without trajectories)
    n_valid: Any  # int64 [n]; valid samples in the sample's group (N, or N_t per turn)


def turn_returns(rewards: object, traj_ids: object, turn_ids: object, gamma: float = 1.0) -> Any:
    """``G[i,t] = sum_{t' >= t} gamma^(t'-t) R[i,t']`` along each trajectory's turns.

    Turns may be given in any order and may skip indices (an absent turn contributes nothing; the
    discount uses the turn difference).
    """
    back = _Returner(rewards)
    r = _array(rewards, np.float64, "rewards")
    out = _core_rl.turn_returns(
        r, _array(traj_ids, np.int64, "traj_ids"), _array(turn_ids, np.int64, "turn_ids"), gamma
    )
    return back(out)


def advantages(
    rewards: object,
    group_ids: object | None = None,
    *,
    group_size: int | None = None,
    group_sizes: Sequence[int] | None = None,
    traj_ids: object | None = None,
    turn_ids: object | None = None,
    valid: object | None = None,
    estimator: Estimator = "trloo",
    gamma: float = 1.0,
    eps: float = GRPO_EPS,
    unbiased_std: bool = False,
    group_by_turn: bool = True,
) -> Advantages:
    """Group-relative advantages of a flat batch.

    Args:
        rewards: R per sample (finite).
        group_ids: the prompt of each sample. Alternatively ``group_size`` (consecutive groups of
            that size) or ``group_sizes`` (consecutive groups of these sizes; none may be 0).
        traj_ids, turn_ids: multi-turn layout. With both, values are turn returns G (with
            ``gamma``) and groups are (prompt, turn) when ``group_by_turn``. With ``turn_ids``
            only, each sample is its own trajectory but grouping is still by turn.
        valid: mask; invalid samples get advantage 0 and leave every baseline, but their rewards
            still count in the returns of earlier turns.
        estimator: ``grpo`` ((G - mean) / (std + eps)), ``dr_grpo`` (G - mean), ``rloo``
            (G - mean of the others; G itself in a group of one), ``trloo`` (RLOO on turn returns
            grouped by (prompt, turn), Dr. Kernel).
        eps, unbiased_std: GRPO's denominator guard and whether std divides by N - 1.
    """
    back = _Returner(rewards)
    r = _array(rewards, np.float64, "rewards")
    if r.size == 0:
        raise ValueError("empty batch: at least one sample is needed")
    g = _group_ids(r.size, group_ids, group_size, group_sizes)
    adv, ret, n_valid = _core_rl.advantages(
        r,
        g,
        _optional(traj_ids, np.int64, "traj_ids"),
        _optional(turn_ids, np.int64, "turn_ids"),
        _optional(valid, np.bool_, "valid"),
        estimator,
        float(gamma),
        float(eps),
        bool(unbiased_std),
        bool(group_by_turn),
    )
    return Advantages(back(adv), back(ret), back(n_valid))


def grpo_advantages(
    rewards: object,
    group_ids: object | None = None,
    *,
    group_size: int | None = None,
    group_sizes: Sequence[int] | None = None,
    valid: object | None = None,
    eps: float = GRPO_EPS,
    normalize_std: bool = True,
    unbiased_std: bool = False,
) -> Any:
    """GRPO: ``(r - mean(r)) / (std(r) + eps)`` per group; ``normalize_std=False`` is Dr. GRPO."""
    return advantages(
        rewards,
        group_ids,
        group_size=group_size,
        group_sizes=group_sizes,
        valid=valid,
        estimator="grpo" if normalize_std else "dr_grpo",
        eps=eps,
        unbiased_std=unbiased_std,
    ).advantages


def dr_grpo_advantages(
    rewards: object,
    group_ids: object | None = None,
    *,
    group_size: int | None = None,
    group_sizes: Sequence[int] | None = None,
    valid: object | None = None,
) -> Any:
    """Dr. GRPO: ``r - mean(r)`` per group (no std normalisation)."""
    return advantages(
        rewards,
        group_ids,
        group_size=group_size,
        group_sizes=group_sizes,
        valid=valid,
        estimator="dr_grpo",
    ).advantages


def rloo_advantages(
    rewards: object,
    group_ids: object | None = None,
    *,
    group_size: int | None = None,
    group_sizes: Sequence[int] | None = None,
    valid: object | None = None,
) -> Any:
    """RLOO: ``r_i - mean_{j != i} r_j`` per group (``r_i`` itself in a group of one)."""
    return advantages(
        rewards,
        group_ids,
        group_size=group_size,
        group_sizes=group_sizes,
        valid=valid,
        estimator="rloo",
    ).advantages


def trloo_advantages(
    rewards: object,
    group_ids: object,
    traj_ids: object,
    turn_ids: object,
    *,
    valid: object | None = None,
    gamma: float = 1.0,
) -> Advantages:
    """TRLOO (Dr. Kernel): RLOO on turn returns, grouped by (prompt, turn) over valid samples."""
    return advantages(
        rewards,
        group_ids,
        traj_ids=traj_ids,
        turn_ids=turn_ids,
        valid=valid,
        estimator="trloo",
        gamma=gamma,
    )


def advantages_dense(
    rewards: object,
    group_ids: object,
    *,
    present: object | None = None,
    valid: object | None = None,
    estimator: Estimator = "trloo",
    gamma: float = 1.0,
    eps: float = GRPO_EPS,
    unbiased_std: bool = False,
) -> tuple[Any, Any]:
    """Advantages of a dense [trajectories, turns] layout.

    ``rewards[b, t]`` is trajectory b's reward at turn t; ``group_ids[b]`` its prompt;
    ``present[b, t]`` says whether the turn exists (default: all; absent cells may hold NaN);
    ``valid[b, t]`` as in :func:`advantages`. Returns (advantages, returns), both [B, T], with 0 in
    absent cells.
    """
    back = _Returner(rewards)
    r = _array(rewards, np.float64, "rewards", ndim=2)
    nb, nt = r.shape
    g = _array(group_ids, np.int64, "group_ids")
    if g.shape != (nb,):
        raise ValueError(f"group_ids must have shape ({nb},), got {g.shape}")
    p = np.ones_like(r, dtype=bool) if present is None else _array(present, bool, "present", 2)
    if p.shape != r.shape:
        raise ValueError(f"present must have shape {r.shape}, got {p.shape}")
    v = None if valid is None else _array(valid, bool, "valid", 2)
    if v is not None and v.shape != r.shape:
        raise ValueError(f"valid must have shape {r.shape}, got {v.shape}")
    bi, ti = np.nonzero(p)
    out = advantages(
        r[bi, ti],
        g[bi],
        traj_ids=bi.astype(np.int64),
        turn_ids=ti.astype(np.int64),
        valid=None if v is None else v[bi, ti],
        estimator=estimator,
        gamma=gamma,
        eps=eps,
        unbiased_std=unbiased_std,
    )
    adv = np.zeros((nb, nt))
    ret = np.zeros((nb, nt))
    adv[bi, ti] = out.advantages
    ret[bi, ti] = out.returns
    return back(adv), back(ret)


# ------------------------------------------------------------------------------------------------
# Profiling-based rejection sampling


@dataclass(frozen=True)
class PrsDecision:
    keep: Any  # bool [n]
    prob: Any  # float64 [n]: the keep probability each decision used


def uniform01(seed: int, key: int) -> float:
    """The counter-based uniform draw in [0, 1) behind PRS: sample ``key`` is kept iff
    ``uniform01(seed, key) < p``."""
    return float(_core_rl.uniform01(int(seed), int(key)))


def _pr_array(pr: object) -> np.ndarray:
    if not _is_torch(pr) and isinstance(pr, Sequence) and not isinstance(pr, str | bytes):
        pr = [np.nan if v is None else v for v in pr]
    return _array(pr, np.float64, "pr")


def prs(
    correct: object,
    pr: object,
    *,
    tau: float = PRS_TAU,
    s: float = PRS_S,
    seed: int = 0,
    keys: object | None = None,
    missing: MissingPr = "keep",
) -> PrsDecision:
    """Profiling-based rejection sampling (Dr. Kernel), one decision per (trajectory, turn) sample.

    A correct sample is kept with probability ``clip((PR - tau) / s, 0, 1)``; an incorrect one is
    always kept. ``pr`` may hold NaN or None where no profile exists; ``missing`` says what to do
    with such a *correct* sample: keep it (default), drop it, or raise. Draws are seeded and keyed
    (``keys``, default the index), so the same (seed, key) always gives the same decision.
    """
    back = _Returner(correct)
    c = _array(correct, np.bool_, "correct")
    keep, prob = _core_rl.prs(
        c,
        _pr_array(pr),
        _optional(keys, np.uint64, "keys"),
        float(tau),
        float(s),
        int(seed),
        missing,
    )
    return PrsDecision(back(keep), back(prob))


def prs_keep_probability(
    correct: bool, pr: float | None, *, tau: float = PRS_TAU, s: float = PRS_S
) -> float:
    """The keep probability of one sample (1 for incorrect samples and unknown PR)."""
    _, prob = _core_rl.prs(
        np.array([bool(correct)]),
        np.array([np.nan if pr is None else float(pr)]),
        None,
        float(tau),
        float(s),
        0,
        "keep",
    )
    return float(prob[0])


def prs_inputs_from_results(results: Sequence[Mapping[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """(correct, pr) for :func:`prs` from Result dicts: correct means correct and honest
    (``ResultView.honest``: not hacked, not rejected, no finding that rejects); pr is
    ``profile.triton_share`` or NaN when unavailable."""
    correct = np.zeros(len(results), dtype=bool)
    pr = np.full(len(results), np.nan)
    for i, r in enumerate(results):
        view = ResultView.of(r)
        correct[i] = view.correct_and_honest
        if view.triton_share is not None:
            pr[i] = view.triton_share
    return correct, pr


# ------------------------------------------------------------------------------------------------
# Mismatch correction between the rollout engine and the trainer


@dataclass(frozen=True)
class GeometricRejection:
    keep: Any  # bool [B]
    ratio: Any  # float64 [B]: exp(mean_t log rho_t)
    vetoed: Any  # bool [B]: a token had rho_t < veto


@dataclass(frozen=True)
class SequenceMis:
    keep: Any  # bool [B]
    log_ratio: Any  # float64 [B]: sum_t log rho_t


def _tokens(
    logp_train: object, logp_rollout: object, mask: object | None, offsets: object | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, tuple[int, ...]]:
    """Flattens [B, L] (padded, with mask) or flat + offsets input; returns the original shape."""
    lt = _torch_to_numpy(logp_train) if _is_torch(logp_train) else np.asarray(logp_train)
    lr = _torch_to_numpy(logp_rollout) if _is_torch(logp_rollout) else np.asarray(logp_rollout)
    if lt.shape != lr.shape:
        raise ValueError(f"logp_train has shape {lt.shape} but logp_rollout has {lr.shape}")
    if lt.ndim not in (1, 2):
        raise ValueError(f"log-probs must be [B, L] or flat [N] with offsets, got shape {lt.shape}")
    dtype = np.float32 if lt.dtype == np.float32 and lr.dtype == np.float32 else np.float64
    shape = lt.shape
    m = None
    if mask is not None:
        mm = _torch_to_numpy(mask) if _is_torch(mask) else np.asarray(mask)
        if mm.shape != shape:
            raise ValueError(f"mask has shape {mm.shape} but the log-probs have {shape}")
        m = _array(mm.reshape(-1), np.bool_, "mask")
    if lt.ndim == 2:
        if offsets is not None:
            raise ValueError("offsets are only for flat [N] log-probs; [B, L] input uses a mask")
        nb, nl = shape
        off = np.arange(nb + 1, dtype=np.int64) * nl
    else:
        if offsets is None:
            raise ValueError("flat [N] log-probs need offsets (B + 1 sequence boundaries)")
        off = _array(offsets, np.int64, "offsets")
    flat_t = np.ascontiguousarray(lt.reshape(-1), dtype=dtype)
    flat_r = np.ascontiguousarray(lr.reshape(-1), dtype=dtype)
    return flat_t, flat_r, off, m, shape


def geometric_rejection(
    logp_train: object,
    logp_rollout: object,
    mask: object | None = None,
    *,
    offsets: object | None = None,
    lo: float = GEO_LO,
    hi: float = GEO_HI,
    veto: float = GEO_VETO,
) -> GeometricRejection:
    """Keep a sequence iff ``lo <= exp(mean_t log rho_t) <= hi`` and no ``rho_t < veto``.

    ``rho_t = pi_train / pi_rollout`` from per-token log-probs, over the tokens the mask selects
    (tokens outside it are ignored and may hold anything). Log-probs are [B, L] with a [B, L] mask,
    or flat [N] with ``offsets`` [B + 1].
    """
    back = _Returner(logp_train)
    t, r, off, m, _ = _tokens(logp_train, logp_rollout, mask, offsets)
    keep, ratio, vetoed = _core_rl.geometric_rejection(t, r, off, m, float(lo), float(hi), veto)
    return GeometricRejection(back(keep), back(ratio), back(vetoed))


def token_tis_weights(
    logp_train: object,
    logp_rollout: object,
    mask: object | None = None,
    *,
    offsets: object | None = None,
    cap: float = TIS_CAP,
) -> Any:
    """Token-level truncated importance sampling weights ``min(rho_t, cap)`` (0 outside the mask).

    Same shape as the log-probs. They are weights: the trainer multiplies its per-token loss by
    them without differentiating through them.
    """
    back = _Returner(logp_train)
    t, r, off, m, shape = _tokens(logp_train, logp_rollout, mask, offsets)
    return back(_core_rl.token_tis(t, r, off, m, float(cap)).reshape(shape))


def token_mis_mask(
    logp_train: object,
    logp_rollout: object,
    mask: object | None = None,
    *,
    offsets: object | None = None,
    lo: float = MIS_LO,
    hi: float = MIS_HI,
) -> Any:
    """Token-level masked importance sampling: 1 where ``lo <= rho_t <= hi`` (and masked in)."""
    back = _Returner(logp_train)
    t, r, off, m, shape = _tokens(logp_train, logp_rollout, mask, offsets)
    return back(_core_rl.token_mis(t, r, off, m, float(lo), float(hi)).reshape(shape))


def sequence_mis_mask(
    logp_train: object,
    logp_rollout: object,
    mask: object | None = None,
    *,
    offsets: object | None = None,
    lo: float = MIS_LO,
    hi: float = MIS_HI,
) -> SequenceMis:
    """Sequence-level masked importance sampling: keep iff ``lo <= exp(sum_t log rho_t) <= hi``."""
    back = _Returner(logp_train)
    t, r, off, m, _ = _tokens(logp_train, logp_rollout, mask, offsets)
    keep, log_ratio = _core_rl.sequence_mis(t, r, off, m, float(lo), float(hi))
    return SequenceMis(back(keep), back(log_ratio))
