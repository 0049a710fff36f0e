"""Training steps of the GPU run's recipe with a stand-in gym (on a CPU or the GPU): a sample is
correct when it reproduces one of its task's known solutions exactly (built-in and honest
solutions; 2x faster than eager, PR 1). After every step it reports the chance of sampling a
known solution exactly (summed over a task's solutions, averaged over tasks), computed from the
model's own probabilities: a measure of what the update did that is free of sampling noise.

Usage: python bench/train_gpu/stand_in.py --model DIR [--lr 5e-6 2e-5] [--steps 4]
       [--samples 4] [--device cpu] [--schedule constant|cosine] [--optimizer adamw|sgd]
       [--momentum M] [--out FILE] [--json]
DIR is a policy warm_start.py wrote (the GPU run's, for instance).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from warm_start import solutions_of  # noqa: E402


def stand_in_result(correct: bool) -> dict[str, Any]:
    """A Result with what Dr. Kernel's reward and PRS read."""
    return {
        "status": "ok" if correct else "incorrect",
        "compiled": True,
        "correct": correct,
        "hacked": False,
        "timing": {"available": True, "speedup": 2.0} if correct else {"available": False},
        "profile": {"available": True, "triton_share": 1.0} if correct else {"available": False},
    }


def known_pairs(policy: Any, tasks: list[Any]) -> list[tuple[str, list[int], list[int]]]:
    """(task id, its first prompt's tokens, a known solution's tokens) for every known solution."""
    from kgym.evaluation.prompts import Prompts, render

    prompts = Prompts.load()
    tok = policy.tokenizer
    return [
        (t.task.id, tok(render(prompts.first(t), tok)).input_ids, tok(s).input_ids)
        for t in tasks
        for s in solutions_of(t.task.id)
    ]


@torch.no_grad()
def exact_chance_by_task(policy: Any, pairs: list[tuple[str, list[int], list[int]]]) -> dict:
    """Per task, the policy's probability of writing one of its known solutions exactly (and
    stopping there), from its own token probabilities."""
    policy.model.eval()
    per_task: dict[str, float] = {}
    for task_id, prompt, answer in pairs:
        answer = answer + [policy.tokenizer.eos_token_id]
        ids = torch.tensor([prompt + answer], device=policy.model.device)
        labels = ids.clone()
        labels[0, : len(prompt)] = -100
        nll = float(policy.model(input_ids=ids, labels=labels).loss) * len(answer)
        per_task[task_id] = per_task.get(task_id, 0.0) + math.exp(-nll)
    return per_task


def run(
    model: Path, optim: dict[str, Any], steps: int, seed: int, samples: int, device: str
) -> list[dict[str, Any]]:
    """`steps` stand-in training steps; `optim` is the config's optim section (lr, name, ...)."""
    from kgym.check import feedback
    from kgym.evaluation.prompts import Prompts
    from kgym.train import update
    from kgym.train.config import load_config
    from kgym.train.gym_step import GymContext, gym_step, gym_tasks
    from kgym.train.policy import load_policy

    overrides = {
        "model": {"path": str(model), "device": device},
        "gym": {"device": "cpu"},
        "optim": {"warmup_steps": 0, **optim},
        "run": {"seed": seed},
        "rollout": {"samples_per_prompt": samples},
    }
    cfg = load_config(HERE / "config.yaml", overrides)
    torch.manual_seed(seed)
    policy = load_policy(cfg.model)
    opt, sched = update.make_optimizer(policy.model, cfg.optim, cfg.run.steps)
    tasks = gym_tasks(cfg)
    prompts = Prompts.load()
    known = {t.task.id: {s.strip() for s in solutions_of(t.task.id)} for t in tasks}
    pairs = known_pairs(policy, tasks)

    def exact_chance() -> float:
        per_task = exact_chance_by_task(policy, pairs)
        return sum(per_task.values()) / len(per_task)

    def evaluate(task: Any, text: str) -> dict[str, Any]:
        return stand_in_result(text.strip() in known[task.task.id])

    ctx = GymContext(tasks, prompts, evaluate, feedback, contextlib.ExitStack())
    rows = [{"step": 0, "exact_chance": exact_chance()}]
    for step in range(1, steps + 1):
        started = time.perf_counter()
        m = gym_step(policy, cfg, opt, sched, ctx, step)
        rows.append(
            {
                "step": step,
                "exact_chance": exact_chance(),
                "pass_rate": m["pass_rate_by_turn"][0],
                "entropy": m["entropy"],
                "grad_norm": m["grad_norm"],
                "seconds": time.perf_counter() - started,
            }
        )
        print(f"{optim} step {step}: {json.dumps(rows[-1])}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help="a warm_start.py policy")
    parser.add_argument("--lr", type=float, nargs="+", default=[5e-6, 2e-5])
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--samples", type=int, default=4, help="samples per task and step")
    parser.add_argument("--device", default="cpu", help="where the policy runs (cpu, cuda)")
    parser.add_argument(
        "--schedule",
        default="constant",
        choices=["constant", "cosine"],
        help="the learning rate's schedule, over the config's run.steps (30)",
    )
    parser.add_argument("--optimizer", default="adamw", choices=["adamw", "sgd"])
    parser.add_argument("--momentum", type=float, default=0.0, help="with --optimizer sgd")
    parser.add_argument("--out", type=Path, help="write the rows here (JSON)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    runs = {
        f"{lr:g}": run(
            args.model,
            {
                "lr": lr,
                "schedule": args.schedule,
                "name": args.optimizer,
                "momentum": args.momentum,
            },
            args.steps,
            args.seed,
            args.samples,
            args.device,
        )
        for lr in args.lr
    }
    if args.out:
        args.out.write_text(json.dumps(runs, indent=1))
    if args.json:
        print(json.dumps(runs))
    for lr, rows in runs.items():
        chances = " -> ".join(f"{r['exact_chance']:.4f}" for r in rows)
        print(f"lr {lr}: chance of a known solution {chances}")


if __name__ == "__main__":
    main()
