"""One training step with the gym: multi-turn rollouts, Dr. Kernel's reward from each Result,
TRLOO (or another estimator) over turn returns, profiling-based rejection sampling, mismatch
correction between the sampler's and the trainer's log-probabilities, then the update."""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from kgym import rl
from kgym.evaluation.prompts import Prompts
from kgym.evaluation.tasksets import EvalTask, load_task_set, select
from kgym.result import ResultView
from kgym.rewards import compute_rewards
from kgym.train import gym_rollout, loss, update
from kgym.train.config import TrainConfig
from kgym.train.data import draw
from kgym.train.policy import Policy


@dataclass
class GymContext:
    tasks: list[EvalTask]
    prompts: Prompts
    evaluate: Any
    feedback: Any
    stack: contextlib.ExitStack


def gym_tasks(cfg: TrainConfig) -> list[EvalTask]:
    tasks = select(load_task_set(cfg.data.task_set).tasks, cfg.data.tasks, None)
    if not tasks:
        raise ValueError(f"[data] tasks {cfg.data.tasks} match no task of {cfg.data.task_set}")
    return tasks


def open_gym(cfg: TrainConfig, run_dir: Any) -> GymContext:
    """The tasks, kgym eval's prompts, and an evaluator: in this process, on the gym service
    named by ``gym.server`` (a pool's front door, say), or through a local gym service started
    for the run (its state in RUN/gym)."""
    from kgym.check import CheckOptions, check, feedback

    tasks = gym_tasks(cfg)
    options = {"device": cfg.gym.device, "trials": cfg.gym.trials, "timeout_s": cfg.gym.timeout_s}
    options["torch_compute"] = "hybrid"
    options.update(cfg.gym.options)
    stack = contextlib.ExitStack()
    if cfg.gym.in_process:
        check_options = CheckOptions(**options)

        def evaluate(task: EvalTask, completion: str) -> dict[str, Any]:
            return check(task.task, completion, check_options)

    else:
        import os

        from kgym.client import Client
        from kgym.local_gym import LocalGym

        if cfg.gym.server:
            token = os.environ.get(cfg.gym.token_env) if cfg.gym.token_env else None
            client = stack.enter_context(Client(cfg.gym.server, token=token))
        else:
            gpus = "none" if cfg.gym.device == "cpu" else "auto"
            args = ["--no-cache", "--cpu-workers", str(cfg.gym.jobs)]
            if cfg.gym.workers_per_gpu:
                args += ["--workers-per-gpu", str(cfg.gym.workers_per_gpu)]
            gym = stack.enter_context(LocalGym(run_dir / "gym", args, gpus))
            client = stack.enter_context(Client(gym.url))

        def evaluate(task: EvalTask, completion: str) -> dict[str, Any]:
            if not completion.strip():  # the service refuses empty candidates: none to run
                return check(task.task, "", CheckOptions(device="cpu"))
            target = {"source": task.task.source, "id": task.task.id}
            return client.check(target, completion, options=options, completion=True)

    return GymContext(tasks, Prompts.load(), evaluate, feedback, stack)


def _per_turn(values: np.ndarray, turns: np.ndarray, n_turns: int) -> list[float]:
    return [float(values[turns == t].mean()) if (turns == t).any() else 0.0 for t in range(n_turns)]


def _first_turn_by_task(
    values: np.ndarray, turns: np.ndarray, groups: np.ndarray, tasks: list[EvalTask]
) -> dict[str, float]:
    """A first-turn rate per task: which tasks a run improves and which it loses."""
    return {
        task.task.id: float(values[(groups == g) & (turns == 0)].mean())
        for g, task in enumerate(tasks)
        if ((groups == g) & (turns == 0)).any()
    }


def _status_counts(results: list[dict[str, Any]]) -> dict[str, int]:
    """How many results of the step ended in each status (ok, incorrect, hacked, ...)."""
    return dict(sorted(Counter(str(r.get("status") or "missing") for r in results).items()))


def gym_step(
    policy: Policy,
    cfg: TrainConfig,
    opt: Any,
    sched: Any,
    ctx: GymContext,
    step: int,
    engine: Any = None,
) -> dict[str, Any]:
    tasks = draw(ctx.tasks, cfg.rollout.prompts_per_step, cfg.run.seed, step)
    samples, stats = gym_rollout.rollout(
        policy, tasks, ctx.prompts, cfg.rollout, ctx.evaluate, ctx.feedback, cfg.gym.jobs, engine
    )
    results = [s.result for s in samples]
    rewards = compute_rewards(results, cfg.gym_reward_spec())
    traj = np.array([s.traj for s in samples])
    turn = np.array([s.turn for s in samples])
    group = np.array([s.group for s in samples])
    valid = np.asarray(rewards.valid, dtype=bool).copy()  # an infra error gives no reward

    kept = np.ones(len(samples), dtype=bool)
    correct, pr = rl.prs_inputs_from_results(results)
    if cfg.prs.enabled:
        keys = (traj * 1009 + turn).astype(np.uint64)
        kept = np.asarray(
            rl.prs(
                correct,
                pr,
                tau=cfg.prs.tau,
                s=cfg.prs.s,
                seed=cfg.run.seed * 100_003 + step,
                keys=keys,
            ).keep,
            dtype=bool,
        )
        valid &= kept
    adv = rl.advantages(
        rewards.totals,
        group,
        traj_ids=traj,
        turn_ids=turn,
        valid=valid,
        estimator=cfg.advantage.estimator,
    ).advantages

    batch = gym_rollout.collate(samples, policy.tokenizer.pad_token_id, policy.device)
    started = time.perf_counter()
    policy.model.train()
    with torch.no_grad():
        logp_train, _ = loss.token_logprobs(policy.model, batch)
    mask = batch.completion_mask
    weights = None
    geo_dropped = 0
    adv_t = torch.as_tensor(np.asarray(adv), dtype=torch.float32, device=policy.device)
    if cfg.mismatch.kind == "tis":
        weights = rl.token_tis_weights(
            logp_train, batch.old_logprobs, mask, cap=cfg.mismatch.tis_cap
        )
    elif cfg.mismatch.kind == "mis":
        weights = rl.token_mis_mask(
            logp_train, batch.old_logprobs, mask, lo=cfg.mismatch.mis_lo, hi=cfg.mismatch.mis_hi
        ).float()
    elif cfg.mismatch.kind == "geometric":
        # kgym.rl answers in the inputs' kind: a tensor on the policy's device here.
        keep = torch.as_tensor(
            rl.geometric_rejection(
                logp_train,
                batch.old_logprobs,
                mask,
                lo=cfg.mismatch.geo_lo,
                hi=cfg.mismatch.geo_hi,
            ).keep,
            device=policy.device,
        )
        geo_dropped = int((~keep).sum())
        adv_t = torch.where(keep, adv_t, torch.zeros_like(adv_t))
    diff = ((logp_train - batch.old_logprobs).abs() * mask).sum() / mask.sum().clamp(min=1)

    ref = policy.reference_logprobs(loss.token_logprobs, batch) if cfg.loss.kl_coef > 0 else None
    for _ in range(cfg.loss.epochs):
        logprobs, entropy = loss.token_logprobs(policy.model, batch)
        parts = loss.policy_loss(logprobs, entropy, batch, adv_t, cfg.loss, weights, ref)
        grad_norm = update.step(policy.model, opt, sched, parts.loss, cfg.optim.max_grad_norm)
    update_s = time.perf_counter() - started

    views = [ResultView.of(r) for r in results]
    speedup = np.array([(v.speedup or 0.0) if v.correct else 0.0 for v in views])
    hacked = np.array([v.hacked for v in views])
    n_turns = cfg.rollout.turns
    metrics: dict[str, Any] = {"reward/total": float(np.mean(rewards.totals))}
    for name, values in rewards.terms.items():
        metrics[f"reward/{name}"] = float(np.nanmean(values)) if np.isfinite(values).any() else 0.0
    metrics.update(
        {
            "reward/std": float(np.std(rewards.totals)),
            "pass_rate_by_turn": _per_turn(correct.astype(float), turn, n_turns),
            "fast_1.2_by_turn": _per_turn(
                ((speedup >= 1.2) & correct).astype(float), turn, n_turns
            ),
            "pr_mean_correct": float(np.nanmean(pr[correct]))
            if (correct & np.isfinite(pr)).any()
            else None,
            "pass_rate_by_task": _first_turn_by_task(correct.astype(float), turn, group, tasks),
            "statuses": _status_counts(results),
            "hack_rate": float(hacked.mean()),
            "prs_kept": float(kept.mean()),
            "valid_samples": int(valid.sum()),
            "mismatch/mean_abs_logratio": float(diff),
            "mismatch/geometric_dropped": geo_dropped,
            "loss": float(parts.loss.detach()),
            "clip_fraction": parts.clip_fraction,
            "entropy": parts.entropy,
            "approx_kl": parts.approx_kl,
            "kl_ref": parts.kl_ref,
            "grad_norm": grad_norm,
            "lr": float(sched.get_last_lr()[0]),
            "tokens": float(mask.sum()),
            "tokens_per_s": float(mask.sum()) / max(stats.rollout_s, 1e-9),
            "gym_evaluations": stats.evaluations,
            "gym_evaluations_per_s": stats.evaluations / max(stats.gym_s, 1e-9),
            "time/rollout_s": stats.rollout_s,
            "time/gym_s": stats.gym_s,
            "time/update_s": update_s,
        }
    )
    return metrics
