"""Multi-turn rollouts with the gym: each (task, sample) is a conversation in which the policy
writes a kernel, the gym evaluates it, and the gym's feedback opens the next turn (the prompts
and feedback messages are kgym eval's: kgym.evaluation.prompts). Every (trajectory, turn) is a
training sample with its prompt tokens, completion tokens, the sampler's log-probabilities and
the gym's Result."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import torch

from kgym.evaluation.prompts import Prompts, prompt_budget, render
from kgym.evaluation.tasksets import EvalTask
from kgym.train.config import RolloutConfig
from kgym.train.policy import Policy
from kgym.train.rollout import Batch, generate_scored, pack

Evaluator = Callable[[EvalTask, str], dict[str, Any]]


@dataclass
class Sample:
    traj: int
    turn: int  # 0-based
    group: int  # the task's index: samples of one task (and turn) are compared
    prompt_ids: list[int]
    completion_ids: list[int]
    old_logprobs: list[float]
    text: str
    result: dict[str, Any] = field(default_factory=dict)


@torch.no_grad()
def _generate(
    policy: Policy, texts: list[str], cfg: RolloutConfig, max_prompt_tokens: int, engine: Any
) -> list[tuple[list[int], list[int], list[float], str]]:
    tok = policy.tokenizer
    tok.padding_side = "left"
    tok.truncation_side = "left"  # keep the end of a long conversation: the latest feedback
    if engine is not None:  # an inference server samples (engine.py)
        prompts = [
            list(tok(t, truncation=True, max_length=max_prompt_tokens).input_ids) for t in texts
        ]
        done = engine.complete(prompts, cfg)
        return [
            (prompt, ids, logp, tok.decode(ids, skip_special_tokens=True))
            for prompt, (ids, logp) in zip(prompts, done)
        ]
    enc = tok(
        texts, return_tensors="pt", padding=True, truncation=True, max_length=max_prompt_tokens
    )
    enc = enc.to(policy.device)
    _, completion, logp, mask = generate_scored(policy, enc.input_ids, enc.attention_mask, cfg)
    rows = []
    for i in range(len(texts)):
        prompt = enc.input_ids[i][enc.attention_mask[i] > 0].tolist()
        ids = completion[i][mask[i] > 0].tolist()  # up to and with the first EOS
        rows.append(
            (prompt, ids, logp[i, : len(ids)].tolist(), tok.decode(ids, skip_special_tokens=True))
        )
    return rows


@dataclass
class RolloutStats:
    rollout_s: float = 0.0
    gym_s: float = 0.0
    evaluations: int = 0


def rollout(
    policy: Policy,
    tasks: list[EvalTask],
    prompts: Prompts,
    cfg: RolloutConfig,
    evaluate: Evaluator,
    feedback: Callable[[dict[str, Any]], str],
    jobs: int,
    engine: Any = None,
) -> tuple[list[Sample], RolloutStats]:
    n = cfg.samples_per_prompt
    trajectories = [(g, task) for g, task in enumerate(tasks) for _ in range(n)]
    conversations = [prompts.first(task) for _, task in trajectories]
    samples: list[Sample] = []
    stats = RolloutStats()
    max_prompt = prompt_budget(policy.model.config, cfg.max_new_tokens) or 1 << 30
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for turn in range(cfg.turns):
            started = time.perf_counter()
            texts = [render(c, policy.tokenizer) for c in conversations]
            generated = _generate(policy, texts, cfg, max_prompt, engine)
            stats.rollout_s += time.perf_counter() - started
            started = time.perf_counter()
            results = list(
                pool.map(
                    lambda i, done=generated: evaluate(trajectories[i][1], done[i][3]),
                    range(len(trajectories)),
                )
            )
            stats.gym_s += time.perf_counter() - started
            stats.evaluations += len(results)
            for i, ((group, _), (prompt, ids, logp, text), result) in enumerate(
                zip(trajectories, generated, results)
            ):
                samples.append(Sample(i, turn, group, prompt, ids, logp, text, result))
                conversations[i] = [
                    *conversations[i],
                    {"role": "assistant", "content": text},
                    prompts.next_turn(feedback(result), turn + 2, cfg.turns),
                ]
    return samples, stats


def collate(samples: list[Sample], pad_id: int, device: torch.device) -> Batch:
    """One padded batch of the samples (rollout.pack)."""
    return pack(
        [s.prompt_ids for s in samples],
        [s.completion_ids for s in samples],
        [s.old_logprobs for s in samples],
        [s.text for s in samples],
        [s.group for s in samples],
        pad_id,
        device,
    )
