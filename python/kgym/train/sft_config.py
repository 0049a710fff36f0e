"""The SFT stage's configuration (`kgym sft`): one YAML file, every knob with its default
(docs/train.md, "Supervised fine-tuning"). The model and optimiser sections are kgym train's;
unknown keys are errors."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kgym.train.config import ModelConfig, OptimConfig, merge_into, read_yaml


@dataclass
class SftDataConfig:
    # A .jsonl/.json/.parquet file: rows with `messages` (kgym data export, sft or
    # trajectories), or KernelBook rows (python_code, triton_code). Every assistant message is
    # a target; the rest is context.
    file: str = ""
    # KernelBook rows: the problem asked with kgym eval's prompt (kgym) and answered with the
    # Triton program in one python block.
    max_tokens: int = 2048  # a sample longer than this (or the model's context) loses the
    # beginning of its prompt first, then the end of its answer
    holdout_fraction: float = 0.0  # rows held out (a stable hash) for a held-out loss
    limit: int = 0  # rows at most; 0: all


@dataclass
class SftRunConfig:
    epochs: int = 1
    batch_size: int = 8  # samples (assistant turns) per optimiser step
    seed: int = 0
    checkpoint_every: int = 50  # steps; 0: only at the end
    eval_every: int = 10  # steps between held-out losses (with holdout_fraction > 0)
    log_every: int = 1
    tensorboard: str = "auto"  # auto | on | off, as kgym train


@dataclass
class SftConfig:
    model: ModelConfig = field(default_factory=ModelConfig)
    data: SftDataConfig = field(default_factory=SftDataConfig)
    # Dr. Kernel's cold start (KernelGYM, drkernel/kernel/scripts/sft/8b-coldstart.sh):
    # LEARNING_RATE=2e-5, TOTAL_EPOCHS=4, TRAIN_BATCH_SIZE=64, MAX_LENGTH=18432.
    optim: OptimConfig = field(default_factory=lambda: OptimConfig(lr=2e-5))
    run: SftRunConfig = field(default_factory=SftRunConfig)

    def to_dict(self) -> dict[str, Any]:
        return {"stage": "sft", **asdict(self)}

    def validate(self) -> None:
        if not self.data.file:
            raise ValueError("[data] file: the SFT rows (kgym data export, or KernelBook)")
        if self.run.epochs < 1 or self.run.batch_size < 1:
            raise ValueError("[run] epochs and batch_size must be at least 1")
        if self.data.max_tokens < 16:
            raise ValueError("[data] max_tokens must be at least 16")
        if not 0.0 <= self.data.holdout_fraction < 1.0:
            raise ValueError("[data] holdout_fraction must be in [0, 1)")
        if self.run.tensorboard not in ("auto", "on", "off"):
            raise ValueError("[run] tensorboard: one of auto, on, off")
        if self.optim.name not in ("adamw", "sgd") or self.optim.schedule not in (
            "constant",
            "cosine",
        ):
            raise ValueError("[optim] name: adamw or sgd; schedule: constant or cosine")
        if self.model.dtype not in ("float32", "bfloat16"):
            raise ValueError("[model] dtype: float32 or bfloat16")


def load_sft_config(path: Path | None = None, overrides: dict[str, Any] | None = None) -> SftConfig:
    config = SftConfig()
    data = read_yaml(path) if path is not None else {}
    merge_into(config, data, str(path) if path else "config")
    if overrides:
        merge_into(config, overrides, "overrides")
    config.validate()
    return config


def dotted_overrides(pairs: list[str]) -> dict[str, Any]:
    """``["model.path=runs/sft/policy", "optim.lr=1e-5"]`` as nested overrides; each value is
    read as YAML (numbers, booleans, lists)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"--set {pair!r}: KEY=VALUE, e.g. model.path=runs/sft/policy")
        node = out
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ValueError(f"--set {pair!r}: {part} is set twice")
        node[leaf] = yaml.safe_load(value) if value else ""
    return out
