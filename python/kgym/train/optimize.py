"""The policy update every path shares (single-turn or with the gym, samples from Hugging Face
``generate`` or an inference server): the trainer re-scores the sampled tokens, the mismatch
correction between the sampler's and the trainer's log-probabilities is applied (TIS weights,
an MIS mask, or geometric rejection of whole sequences: docs/rl-maths.md), then PPO's clipped
loss (with the KL penalty when asked) and the optimiser step."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from kgym import rl
from kgym.train import loss, update
from kgym.train.config import MismatchConfig, TrainConfig
from kgym.train.policy import Policy
from kgym.train.rollout import Batch


@dataclass
class Correction:
    """What the mismatch correction does to a batch: per-token weights (TIS weights or an MIS
    mask; None: all 1) and the sequences it keeps (geometric rejection; None: all)."""

    weights: torch.Tensor | None = None
    keep: torch.Tensor | None = None
    metrics: dict[str, float] = field(default_factory=dict)


def correction(cfg: MismatchConfig, logp_train: torch.Tensor, batch: Batch) -> Correction:
    """The correction ``cfg.kind`` asks for, from the trainer's and the sampler's
    log-probabilities of the sampled tokens; its metrics say how much of the batch it touched
    (``mismatch/mean_abs_logratio`` whatever the kind)."""
    mask = batch.completion_mask
    old = batch.old_logprobs
    tokens = mask.sum().clamp(min=1)
    diff = ((logp_train - old).abs() * mask).sum() / tokens
    out = Correction(metrics={"mismatch/mean_abs_logratio": float(diff)})
    if cfg.kind == "tis":
        out.weights = rl.token_tis_weights(logp_train, old, mask, cap=cfg.tis_cap)
        capped = ((logp_train - old) > np.log(cfg.tis_cap)).float() * mask
        out.metrics["mismatch/tis_capped_tokens"] = float(capped.sum() / tokens)
    elif cfg.kind == "mis":
        out.weights = rl.token_mis_mask(logp_train, old, mask, lo=cfg.mis_lo, hi=cfg.mis_hi).float()
        out.metrics["mismatch/mis_masked_tokens"] = float(((1 - out.weights) * mask).sum() / tokens)
    elif cfg.kind == "geometric":
        # kgym.rl answers in the inputs' kind: a tensor on the policy's device here.
        out.keep = torch.as_tensor(
            rl.geometric_rejection(logp_train, old, mask, lo=cfg.geo_lo, hi=cfg.geo_hi).keep,
            device=mask.device,
        )
        out.metrics["mismatch/geometric_dropped"] = int((~out.keep).sum())
    return out


def corrected_update(
    policy: Policy, cfg: TrainConfig, opt: Any, sched: Any, batch: Batch, adv: np.ndarray
) -> dict[str, Any]:
    """Re-scores the batch, corrects for the sampler, and takes the optimiser step(s); returns
    the update's metrics."""
    started = time.perf_counter()
    policy.model.train()
    with torch.no_grad():
        logp_train, _ = loss.token_logprobs(policy.model, batch)
    fix = correction(cfg.mismatch, logp_train, batch)
    adv_t = torch.as_tensor(np.asarray(adv), dtype=torch.float32, device=policy.device)
    if fix.keep is not None:
        adv_t = torch.where(fix.keep, adv_t, torch.zeros_like(adv_t))
    ref = policy.reference_logprobs(loss.token_logprobs, batch) if cfg.loss.kl_coef > 0 else None
    for _ in range(cfg.loss.epochs):
        logprobs, entropy = loss.token_logprobs(policy.model, batch)
        parts = loss.policy_loss(logprobs, entropy, batch, adv_t, cfg.loss, fix.weights, ref)
        grad_norm = update.step(policy.model, opt, sched, parts.loss, cfg.optim.max_grad_norm)
    return {
        **fix.metrics,
        "loss": float(parts.loss.detach()),
        "clip_fraction": parts.clip_fraction,
        "entropy": parts.entropy,
        "approx_kl": parts.approx_kl,
        "kl_ref": parts.kl_ref,
        "grad_norm": grad_norm,
        "lr": float(sched.get_last_lr()[0]),
        "tokens": float(batch.completion_mask.sum()),
        "time/update_s": time.perf_counter() - started,
    }
