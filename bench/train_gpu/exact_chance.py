"""What a training run did to the policy, free of sampling noise: per task, the chance that the
policy writes one of the task's known solutions exactly (built-in and honest solutions), from its
own token probabilities, for the starting policy and for each checkpoint given.

Usage: python bench/train_gpu/exact_chance.py --model DIR [--checkpoint RUN/checkpoint.pt ...]
       [--config bench/train_gpu/config.yaml] [--device cpu|cuda] [--json] [--out FILE]

DIR is the starting policy (warm_start.py's); a checkpoint is `kgym train`'s `checkpoint.pt`
(its model weights are loaded into DIR's model). The tasks are the config's. The training
run's pass rate is a sample of 32 evaluations a step; this is the quantity it estimates, without
the draw (the stand-in gym, `stand_in.py`, reports the same after each of its steps).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from stand_in import exact_chance_by_task, known_pairs  # noqa: E402


def measure(
    model: Path, checkpoints: list[Path], config: Path, device: str
) -> list[dict[str, Any]]:
    from kgym.train.config import load_config
    from kgym.train.gym_step import gym_tasks
    from kgym.train.policy import load_policy

    cfg = load_config(config, {"model": {"path": str(model), "device": device}})
    policy = load_policy(cfg.model)
    pairs = known_pairs(policy, gym_tasks(cfg))
    rows = []
    for source in [None, *checkpoints]:
        step = 0
        if source is not None:
            state = torch.load(source, map_location=policy.device, weights_only=False)
            policy.model.load_state_dict(state["model"])
            step = int(state["step"])
        per_task = exact_chance_by_task(policy, pairs)
        rows.append(
            {
                "policy": str(source or model),
                "step": step,
                "exact_chance": sum(per_task.values()) / len(per_task),
                "by_task": per_task,
            }
        )
        print(f"step {step}: {json.dumps(rows[-1])}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help="the starting policy")
    parser.add_argument("--checkpoint", type=Path, nargs="*", default=[], help="checkpoint.pt")
    parser.add_argument("--config", type=Path, default=HERE / "config.yaml")
    parser.add_argument("--device", default="cpu", help="where the policy runs (cpu, cuda)")
    parser.add_argument("--out", type=Path, help="write the rows here (JSON)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    rows = measure(args.model, args.checkpoint, args.config, args.device)
    for r in rows:
        tasks = ", ".join(f"{k} {v:.4f}" for k, v in r["by_task"].items())
        print(f"step {r['step']}: mean {r['exact_chance']:.4f} ({tasks})")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1) + "\n")
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
