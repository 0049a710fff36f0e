"""A training run's checkpoint, shared by `kgym train` and `kgym sft`: the model, optimiser,
scheduler and every RNG at a step, written so that a kill mid-save leaves the previous one
whole, and the resume that puts a run back where its checkpoint was."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import torch

from kgym.train.policy import Policy

CHECKPOINT = "checkpoint.pt"
METRICS = "metrics.jsonl"


def claim_run_folder(out: Path, config: dict[str, Any], extendable: str) -> None:
    """Makes ``out`` the run folder of ``config`` (its config.json), or refuses a folder that
    holds a run with another config. Only ``run.<extendable>`` may differ: a run can be
    extended (more steps, more epochs) and resumed."""
    out.mkdir(parents=True, exist_ok=True)
    config_file = out / "config.json"
    if config_file.exists():
        before, now = json.loads(config_file.read_text()), json.loads(json.dumps(config))
        before["run"].pop(extendable), now["run"].pop(extendable)
        if before != now:
            raise ValueError(f"{out} holds a run with another config: use another folder")
    config_file.write_text(json.dumps(config, indent=2) + "\n")


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def rng_state() -> dict[str, Any]:
    state = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save(
    out: Path, policy: Policy, opt: Any, sched: Any, step: int, config: dict[str, Any]
) -> None:
    tmp = out / (CHECKPOINT + ".tmp")
    torch.save(
        {
            "step": step,
            "model": policy.model.state_dict(),
            "optimizer": opt.state_dict(),
            "scheduler": sched.state_dict(),
            "rng": rng_state(),
            "config": config,
        },
        tmp,
    )
    tmp.replace(out / CHECKPOINT)  # a kill mid-save leaves the previous checkpoint whole
    policy.tokenizer.save_pretrained(out / "tokenizer")


def resume(out: Path, policy: Policy, opt: Any, sched: Any) -> tuple[int, list[dict[str, Any]]]:
    """(the step to go on from, the metrics logged up to it): 0 and the log as it is where
    there is no checkpoint."""
    metrics_path = out / METRICS
    start = 0
    if (out / CHECKPOINT).exists():
        # Read onto the CPU: the RNG states must stay CPU byte tensors (mapped to a GPU,
        # torch.set_rng_state refuses them), and load_state_dict puts the model's and the
        # optimiser's tensors where their parameters live.
        state = torch.load(out / CHECKPOINT, map_location="cpu", weights_only=False)
        policy.model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        set_rng_state(state["rng"])
        start = int(state["step"])
        # Steps logged after the checkpoint are done again: keep the log in step with it.
        if metrics_path.exists():
            kept = [
                line
                for line in metrics_path.read_text().splitlines()
                if json.loads(line)["step"] <= start
            ]
            metrics_path.write_text("".join(line + "\n" for line in kept))
    history = (
        [json.loads(line) for line in metrics_path.read_text().splitlines()]
        if metrics_path.exists()
        else []
    )
    return start, history
