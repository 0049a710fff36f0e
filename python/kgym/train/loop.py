"""The training loop: rollout -> reward -> advantage -> loss -> update, one step at a time,
with metrics to JSONL, checkpoints and exact resume (model, optimiser, schedule, RNG, step)."""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from kgym.train import advantage, checkpoint, reward, rollout, update
from kgym.train.config import TrainConfig
from kgym.train.data import draw, row_text
from kgym.train.engine import open_engine
from kgym.train.optimize import corrected_update
from kgym.train.policy import Policy, load_policy, with_reference
from kgym.train.tensorboard_log import ScalarLog

POLICY = "policy"  # the trained policy, a Hugging Face folder, written after the last step


def train_step(
    policy: Policy,
    cfg: TrainConfig,
    opt: Any,
    sched: Any,
    rows: list[dict[str, Any]],
    step: int,
    engine: Any = None,
) -> dict[str, Any]:
    started = time.perf_counter()
    chosen = draw(rows, cfg.rollout.prompts_per_step, cfg.run.seed, step)
    prompts = [row_text(p, policy.tokenizer) for p in chosen]
    references = [p["reference"] for p in chosen]
    batch = rollout.sample(policy, prompts, cfg.rollout, engine)
    rollout_s = time.perf_counter() - started

    group = batch.group.cpu().numpy()
    parts = reward.rewards(batch.texts, [references[g] for g in group], cfg)
    adv = advantage.advantages(parts["total"], group, cfg.advantage)
    metrics: dict[str, Any] = {
        f"reward/{name}": float(values.mean()) for name, values in parts.items()
    }
    metrics["reward/std"] = float(parts["total"].std())
    metrics.update(corrected_update(policy, cfg, opt, sched, batch, adv))
    metrics["tokens_per_s"] = metrics["tokens"] / max(rollout_s, 1e-9)
    metrics["time/rollout_s"] = rollout_s
    return metrics


def train(cfg: TrainConfig, out: Path, quiet: bool = False) -> list[dict[str, Any]]:
    """Trains for cfg.run.steps steps into ``out``; resumes from its checkpoint when there is
    one (same config). Returns every step's metrics (also in out/metrics.jsonl)."""
    checkpoint.claim_run_folder(out, cfg.to_dict(), "steps")
    checkpoint.seed_everything(cfg.run.seed)
    ctx = None
    rows: list[dict[str, Any]] = []
    if not cfg.uses_gym:
        from kgym.train.data import resolve_prompts

        rows = resolve_prompts(cfg.data)
        if cfg.model.path is None and not cfg.model.tokenizer_corpus:
            # The tiny tokenizer learns the texts it will read (role-tagged: no chat template).
            cfg.model.tokenizer_corpus = [
                t for p in rows for t in (row_text(p, None), p["reference"])
            ]
    if cfg.uses_gym:
        from kgym.train.gym_step import open_gym

        ctx = open_gym(cfg, out)
        if cfg.model.path is None and not cfg.model.tokenizer_corpus:
            # The tiny tokenizer learns the texts it will read: the tasks and the templates.
            cfg.model.tokenizer_corpus = [t.task.source for t in ctx.tasks] + [
                ctx.prompts.problem.template,
                ctx.prompts.feedback.template,
            ]
    try:
        return _train(cfg, out, quiet, ctx, rows)
    finally:
        if ctx is not None:
            ctx.stack.close()


def _train(
    cfg: TrainConfig, out: Path, quiet: bool, ctx: Any, rows: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    policy = with_reference(load_policy(cfg.model), cfg.loss.kl_coef)
    opt, sched = update.make_optimizer(policy.model, cfg.optim, cfg.run.steps)
    start, history = checkpoint.resume(out, policy, opt, sched)
    scalars = ScalarLog(out, cfg.run.tensorboard, start)
    try:
        history = _steps(cfg, out, quiet, ctx, rows, policy, opt, sched, start, history, scalars)
    finally:
        scalars.close()
    plot_curves(history, out / "curves.png")
    return history


def _steps(
    cfg: TrainConfig,
    out: Path,
    quiet: bool,
    ctx: Any,
    rows: list[dict[str, Any]],
    policy: Policy,
    opt: Any,
    sched: Any,
    start: int,
    history: list[dict[str, Any]],
    scalars: ScalarLog,
) -> list[dict[str, Any]]:
    metrics_path = out / checkpoint.METRICS
    engine = open_engine(cfg.engine, out)
    for step in range(start + 1, cfg.run.steps + 1):
        # The server samples this step's rollouts from the policy as it is now.
        sync_s = engine.sync(policy, step) if engine is not None else 0.0
        if ctx is not None:
            from kgym.train.gym_step import gym_step

            m = {"step": step, **gym_step(policy, cfg, opt, sched, ctx, step, engine)}
        else:
            m = {"step": step, **train_step(policy, cfg, opt, sched, rows, step, engine)}
        if engine is not None:
            m["time/sync_s"] = sync_s
        history.append(m)
        with metrics_path.open("a") as f:
            f.write(json.dumps(m) + "\n")
        scalars.write(m)
        if not quiet and (step % cfg.run.log_every == 0 or step == cfg.run.steps):
            print(
                f"[step {step}/{cfg.run.steps}] reward {m['reward/total']:.3f} "
                f"loss {m['loss']:.4f} clip {m['clip_fraction']:.3f} "
                f"entropy {m['entropy']:.3f} ({m['tokens_per_s']:.0f} tokens/s)",
                file=sys.stderr,
                flush=True,
            )
        every = cfg.run.checkpoint_every
        if (every and step % every == 0) or step == cfg.run.steps:
            checkpoint.save(out, policy, opt, sched, step, cfg.to_dict())
        if step == cfg.run.steps:
            export_policy(policy, out / POLICY)
    return history


def export_policy(policy: Policy, target: Path) -> None:
    """The trained policy as a Hugging Face folder (weights, config, tokenizer), for `kgym eval
    --hf`, vLLM or transformers; with LoRA, the adapter (peft's format) beside the base model's
    name. Written to a temporary folder and renamed, so a folder that exists is whole."""
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    policy.model.save_pretrained(tmp)
    policy.tokenizer.save_pretrained(tmp)
    shutil.rmtree(target, ignore_errors=True)
    tmp.replace(target)


def plot_curves(history: list[dict[str, Any]], target: Path) -> Path | None:
    """Reward, loss, entropy and clip fraction against the step (PNG); with the gym, also the
    pass and Fast@1.2 rates per turn and where each step's time went."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    steps = [m["step"] for m in history]
    gym = bool(history) and "pass_rate_by_turn" in history[0]
    keys = ["reward/total", "loss", "entropy", "clip_fraction"]
    if gym:
        keys = ["reward/total", "pass_rate_by_turn", "fast_1.2_by_turn", "entropy", "time", "loss"]
    fig, axes = plt.subplots(2, len(keys) // 2, figsize=(4.5 * len(keys) // 2, 6))
    for ax, key in zip(axes.flat, keys):
        if key.endswith("_by_turn"):
            for turn in range(len(history[0][key])):
                ax.plot(steps, [m[key][turn] for m in history], label=f"turn {turn + 1}")
            ax.set_ylim(-0.05, 1.05)
            ax.legend(fontsize=8)
        elif key == "time":
            for part in ("rollout", "gym", "update"):
                ax.plot(steps, [m.get(f"time/{part}_s", 0.0) for m in history], label=part)
            ax.set_ylabel("seconds")
            ax.legend(fontsize=8)
        else:
            ax.plot(steps, [m[key] for m in history])
        ax.set_title(key)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    plt.close(fig)
    return target
