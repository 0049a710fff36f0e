"""Sampling: a group of completions per prompt with Hugging Face ``generate`` (or an
OpenAI-compatible server, engine.py), and the sampler's own log-probability of every sampled
token (the PPO ratio's denominator)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from kgym.evaluation.prompts import prompt_budget
from kgym.train.config import RolloutConfig
from kgym.train.policy import Policy


@dataclass
class Batch:
    sequences: torch.Tensor  # [B, P + T] prompt (left-padded) then completion
    attention: torch.Tensor  # [B, P + T] 1 where a real token is
    prompt_len: int  # P
    completion_mask: torch.Tensor  # [B, T] 1 for completion tokens up to and with EOS
    old_logprobs: torch.Tensor  # [B, T] the sampler's log-probability of each token
    texts: list[str]  # decoded completions
    group: torch.Tensor  # [B] the prompt index of each sample


@torch.no_grad()
def generate_scored(
    policy: Policy, ids: torch.Tensor, attn: torch.Tensor, cfg: RolloutConfig
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Samples completions of left-padded prompts: (sequences, completion tokens, the
    sampler's log-probability of each, the mask of tokens up to and with the first EOS)."""
    tok, model = policy.tokenizer, policy.model
    model.eval()
    out = model.generate(
        input_ids=ids,
        attention_mask=attn,
        do_sample=True,
        temperature=cfg.temperature,
        top_p=cfg.top_p,
        top_k=0,
        max_new_tokens=cfg.max_new_tokens,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        output_scores=True,
        return_dict_in_generate=True,
    )
    completion = out.sequences[:, ids.shape[1] :]
    # The scores are the processed logits the sampler drew from (temperature, top-p).
    scores = torch.stack(out.scores, dim=1).float()  # [B, T, V]
    old = torch.log_softmax(scores, dim=-1).gather(-1, completion.unsqueeze(-1)).squeeze(-1)
    # Tokens after the first EOS are padding.
    is_eos = completion == tok.eos_token_id
    after_eos = (is_eos.cumsum(dim=1) - is_eos.long()) > 0
    mask = (~after_eos).float()
    old = torch.where(mask > 0, old, torch.zeros_like(old))
    return out.sequences, completion, old, mask


def pack(
    prompt_ids: list[list[int]],
    completion_ids: list[list[int]],
    old_logprobs: list[list[float]],
    texts: list[str],
    group: list[int],
    pad_id: int,
    device: torch.device,
) -> Batch:
    """One padded batch: prompts left-padded to a common length, completions right-padded."""
    width = max(len(p) for p in prompt_ids)
    length = max(1, max(len(c) for c in completion_ids))
    seqs, attn, mask, old = [], [], [], []
    for prompt, ids, logp in zip(prompt_ids, completion_ids, old_logprobs):
        left, right = width - len(prompt), length - len(ids)
        seqs.append([pad_id] * left + prompt + ids + [pad_id] * right)
        attn.append([0] * left + [1] * (len(prompt) + len(ids)) + [0] * right)
        mask.append([1.0] * len(ids) + [0.0] * right)
        old.append(list(logp) + [0.0] * right)
    return Batch(
        sequences=torch.tensor(seqs, device=device),
        attention=torch.tensor(attn, device=device),
        prompt_len=width,
        completion_mask=torch.tensor(mask, device=device),
        old_logprobs=torch.tensor(old, device=device),
        texts=texts,
        group=torch.tensor(group, device=device),
    )


def sample_on_server(policy: Policy, prompts: list[str], cfg: RolloutConfig, engine: Any) -> Batch:
    """The group of completions per prompt sampled by an inference server (engine.py)."""
    tok = policy.tokenizer
    tok.truncation_side = "left"
    n = cfg.samples_per_prompt
    budget = prompt_budget(policy.model.config, cfg.max_new_tokens)
    ids = [
        list(tok(p, truncation=budget is not None, max_length=budget).input_ids) for p in prompts
    ]
    rows = [ids[i] for i in range(len(prompts)) for _ in range(n)]
    done = engine.complete(rows, cfg)
    completions = [c for c, _ in done]
    texts = [tok.decode(c, skip_special_tokens=True) for c in completions]
    group = [i for i in range(len(prompts)) for _ in range(n)]
    return pack(
        rows, completions, [lp for _, lp in done], texts, group, tok.pad_token_id, policy.device
    )


@torch.no_grad()
def sample(policy: Policy, prompts: list[str], cfg: RolloutConfig, engine: Any = None) -> Batch:
    if engine is not None:
        return sample_on_server(policy, prompts, cfg, engine)
    tok = policy.tokenizer
    tok.padding_side = "left"
    tok.truncation_side = "left"  # a prompt longer than the context keeps its end, as with the gym
    budget = prompt_budget(policy.model.config, cfg.max_new_tokens)
    enc = tok(
        prompts, return_tensors="pt", padding=True, truncation=budget is not None, max_length=budget
    ).to(policy.device)
    n = cfg.samples_per_prompt
    ids = enc.input_ids.repeat_interleave(n, dim=0)
    attn = enc.attention_mask.repeat_interleave(n, dim=0)
    sequences, completion, old, mask = generate_scored(policy, ids, attn, cfg)
    prompt_len = ids.shape[1]
    texts = tok.batch_decode(completion, skip_special_tokens=True)
    attention = torch.cat([attn, mask.long()], dim=1)
    group = torch.arange(len(prompts), device=ids.device).repeat_interleave(n)
    return Batch(sequences, attention, prompt_len, mask, old, texts, group)
