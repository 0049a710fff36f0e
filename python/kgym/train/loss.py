"""The policy loss: PPO's clipped surrogate on token log-probabilities, aggregated over tokens
as Dr. GRPO (a constant normaliser), per-token mean, mean of per-sequence means, or mean of
per-sequence sums."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kgym.train.config import LossConfig
from kgym.train.rollout import Batch


def token_logprobs(model: torch.nn.Module, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
    """The model's log-probability of each completion token, and the entropy of each position."""
    # Positions as generate gives them: counted from each sequence's first real token (left
    # padding), or the trainer would score tokens at other positions than the sampler did.
    positions = (batch.attention.cumsum(-1) - 1).clamp(min=0)
    logits = model(
        input_ids=batch.sequences, attention_mask=batch.attention, position_ids=positions
    ).logits
    logits = logits[:, batch.prompt_len - 1 : -1].float()
    completion = batch.sequences[:, batch.prompt_len :]
    logp = torch.log_softmax(logits, dim=-1)
    taken = logp.gather(-1, completion.unsqueeze(-1)).squeeze(-1)
    entropy = -(logp.exp() * logp).sum(-1)
    return taken, entropy


@dataclass
class LossParts:
    loss: torch.Tensor
    clip_fraction: float
    entropy: float
    approx_kl: float  # k3 estimator of KL(sampler || policy) over valid tokens
    kl_ref: float = 0.0  # k3 estimate of KL(policy || reference), when there is a penalty


def policy_loss(
    logprobs: torch.Tensor,
    entropy: torch.Tensor,
    batch: Batch,
    adv: torch.Tensor,
    cfg: LossConfig,
    token_weights: torch.Tensor | None = None,
    ref_logprobs: torch.Tensor | None = None,
) -> LossParts:
    """``token_weights``: per-token weights of the mismatch correction (TIS weights or an MIS
    mask), not differentiated through."""
    mask = batch.completion_mask
    ratio = torch.exp(logprobs - batch.old_logprobs)
    a = adv.unsqueeze(1)
    surrogate = torch.minimum(
        ratio * a, torch.clamp(ratio, 1 - cfg.clip_low, 1 + cfg.clip_high) * a
    )
    per_token = -surrogate * mask
    if token_weights is not None:
        per_token = per_token * token_weights.detach()
    kl_ref = 0.0
    if ref_logprobs is not None and cfg.kl_coef > 0:
        # k3 estimator of KL(policy || reference) per token (Schulman 2020), differentiable
        log_r = ref_logprobs.detach() - logprobs
        k3 = (torch.exp(log_r) - 1 - log_r) * mask
        per_token = per_token + cfg.kl_coef * k3
        kl_ref = float(k3.detach().sum() / mask.sum().clamp(min=1))
    if cfg.aggregation == "dr_grpo":
        loss = per_token.sum() / (mask.shape[0] * mask.shape[1])
    elif cfg.aggregation == "token_mean":
        loss = per_token.sum() / mask.sum().clamp(min=1)
    elif cfg.aggregation == "seq_sum":  # verl's seq-mean-token-sum
        loss = per_token.sum(1).mean()
    else:  # seq_mean
        loss = (per_token.sum(1) / mask.sum(1).clamp(min=1)).mean()
    valid = mask.sum().clamp(min=1)
    with torch.no_grad():
        clipped = ((ratio - 1).abs() > cfg.clip_low).float() * mask
        log_ratio = batch.old_logprobs - logprobs
        k3_sampler = (torch.exp(log_ratio) - 1 - log_ratio) * mask
    return LossParts(
        loss,
        float(clipped.sum() / valid),
        float((entropy.detach() * mask).sum() / valid),
        float(k3_sampler.sum() / valid),
        kl_ref,
    )
