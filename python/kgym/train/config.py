"""The trainer's configuration: one YAML file, every knob with its default (docs/train.md).

Sections mirror the stages. Unknown keys are errors (a typo must not silently train with a
default). Presets live in ``presets/`` and are named with ``preset: NAME`` at the top of a
config, whose own keys then override the preset's.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, is_dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml


@dataclass
class ModelConfig:
    path: str | None = None  # a Hugging Face model (local folder or hub id); or `tiny`
    # A model made from a config (no downloaded weights), when path is None:
    tiny: dict[str, Any] = field(
        default_factory=lambda: {"n_embd": 64, "n_layer": 2, "n_head": 2, "n_positions": 256}
    )
    # A byte-level BPE tokenizer trained on these texts, when path is None.
    tokenizer_corpus: list[str] = field(default_factory=list)
    tokenizer_vocab: int = 300
    dtype: str = "float32"  # float32 | bfloat16
    # LoRA adapters through peft instead of full fine-tuning: {r, alpha, dropout,
    # target_modules}; None trains every weight.
    lora: dict[str, Any] | None = None
    gradient_checkpointing: bool = False
    device: str = "auto"  # auto | cpu | cuda


@dataclass
class DataConfig:
    # Each prompt with its reference answer (the similarity and format rewards).
    prompts: list[dict[str, str]] = field(default_factory=list)
    # KernelBook rows (a .parquet/.json/.jsonl file): PyTorch program -> prompt, Triton
    # program -> reference; a stable hash of each row's uuid holds out holdout_fraction.
    kernelbook: str | None = None
    kernelbook_split: str = "train"  # train | heldout
    kernelbook_limit: int = 0  # rows at most; 0: all
    holdout_fraction: float = 0.1
    # Gym tasks (the dr_kernel reward): a task set as kgym eval takes it, and task globs.
    task_set: str = "builtin"
    tasks: list[str] = field(default_factory=list)


@dataclass
class RolloutConfig:
    samples_per_prompt: int = 8  # the group size (Dr. Kernel: 16)
    max_new_tokens: int = 64
    temperature: float = 1.0
    top_p: float = 1.0
    turns: int = 1  # turns per trajectory with the gym's feedback (Dr. Kernel: 3)
    # Prompts (or tasks) drawn per step, by a seeded draw of the step (exact on resume); 0: all.
    prompts_per_step: int = 0


@dataclass
class EngineConfig:
    # Where rollouts are sampled: hf (Hugging Face generate in the trainer's process) or openai
    # (an OpenAI-compatible server: vLLM, SGLang; kgym/train/engine.py).
    kind: str = "hf"
    url: str = ""  # the server's base URL, e.g. http://127.0.0.1:8000
    model: str = ""  # the served model's name in requests
    # Weights to the server before every step: disk (the full model, SGLang's
    # /update_weights_from_disk), lora (the adapter, vLLM's /v1/load_lora_adapter), none.
    sync: str = "disk"
    sync_dir: str = ""  # where the weights are written for the server ("": OUT/engine_weights)
    timeout_s: float = 600.0
    concurrency: int = 16  # requests in flight
    api_key_env: str = "OPENAI_API_KEY"  # the bearer token's environment variable, if set


@dataclass
class RewardConfig:
    # similarity: Kernel Coder's difflib ratio against the prompt's reference;
    # format: Kernel Coder's format reward; both: their sum;
    # dr_kernel: Dr. Kernel's reward from the gym's Result (kgym.rewards, released weights);
    # staged: the staged reward from the Result; spec: the kgym.rewards spec in `spec`.
    kind: str = "similarity"
    spec: dict[str, Any] | None = None  # a kgym.rewards spec (docs/rl-maths.md), kind = spec


@dataclass
class GymConfig:
    device: str = "auto"  # where candidates run: auto | cpu | cuda
    trials: int = 2  # correctness trials per evaluation
    timeout_s: float = 300.0
    jobs: int = 4  # evaluations at a time
    # Concurrent jobs per GPU of the local gym service (its --workers-per-gpu); 0: its default.
    workers_per_gpu: int = 0
    # More service options for every evaluation (docs/options.md), e.g. {timing_budget_ms:
    # 1000} to trade timing precision for gym throughput while training.
    options: dict[str, Any] = field(default_factory=dict)
    # Evaluate in this process (no service); else a local gym service is started.
    in_process: bool = False
    # A running gym service to evaluate on instead (a host's, or a worker pool's front door:
    # docs/scale.md), e.g. http://gym:8177; its bearer token from the variable token_env.
    server: str = ""
    token_env: str = "KGYM_TOKEN"


@dataclass
class PrsConfig:
    """Profiling-based rejection sampling (Dr. Kernel): a correct sample is kept with
    probability clip((PR - tau) / s, 0, 1)."""

    enabled: bool = False
    tau: float = 0.3
    s: float = 0.1


@dataclass
class MismatchConfig:
    """Correction for the sampler's and the trainer's log-probabilities differing
    (docs/rl-maths.md): none, tis (token weights min(rho, cap)), mis (tokens with rho outside
    [lo, hi] masked), geometric (sequences whose geometric-mean ratio leaves [geo_lo, geo_hi]
    dropped)."""

    kind: str = "none"
    tis_cap: float = 2.0
    mis_lo: float = 0.5
    mis_hi: float = 2.0
    geo_lo: float = 0.999
    geo_hi: float = 1.001


@dataclass
class AdvantageConfig:
    estimator: str = "grpo"  # grpo | dr_grpo | rloo | trloo (kgym.rl; docs/rl-maths.md)


@dataclass
class LossConfig:
    clip_low: float = 0.2  # PPO's epsilon (Schulman et al. 2017)
    clip_high: float = 0.2  # DAPO's clip-higher raises this (Yu et al. 2025)
    # dr_grpo: sum over tokens / (samples x max_new_tokens) (Liu et al. 2025, Dr. GRPO);
    # token_mean: mean over every valid token of the batch; seq_mean: mean of per-sequence means.
    aggregation: str = "dr_grpo"
    epochs: int = 1  # passes over each batch (1: ratio is 1 at the start, on-policy)
    # A KL penalty to the initial policy (k3 estimator per token); 0: no reference model.
    kl_coef: float = 0.0


@dataclass
class OptimConfig:
    # adamw, or sgd: plain gradient steps (with `momentum`). Adam moves every weight by about
    # the learning rate whatever its gradient's size, noise included; SGD moves each weight in
    # proportion to its gradient (bench/train_gpu/device.sh tries either: OPTIMIZER=sgd).
    name: str = "adamw"
    lr: float = 1e-5
    momentum: float = 0.0  # sgd only
    weight_decay: float = 0.0
    warmup_steps: int = 0
    schedule: str = "constant"  # constant | cosine
    max_grad_norm: float = 1.0


@dataclass
class RunConfig:
    steps: int = 100
    seed: int = 0
    checkpoint_every: int = 50  # steps; 0: only at the end
    log_every: int = 1
    # TensorBoard event files in OUT/tensorboard: auto (where the tensorboard package is
    # installed), on (an error without it), off.
    tensorboard: str = "auto"


@dataclass
class TrainConfig:
    model: ModelConfig = field(default_factory=ModelConfig)
    data: DataConfig = field(default_factory=DataConfig)
    rollout: RolloutConfig = field(default_factory=RolloutConfig)
    engine: EngineConfig = field(default_factory=EngineConfig)
    reward: RewardConfig = field(default_factory=RewardConfig)
    gym: GymConfig = field(default_factory=GymConfig)
    prs: PrsConfig = field(default_factory=PrsConfig)
    mismatch: MismatchConfig = field(default_factory=MismatchConfig)
    advantage: AdvantageConfig = field(default_factory=AdvantageConfig)
    loss: LossConfig = field(default_factory=LossConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    run: RunConfig = field(default_factory=RunConfig)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def uses_gym(self) -> bool:
        return self.reward.kind in ("dr_kernel", "staged", "spec")

    def gym_reward_spec(self) -> Any:
        return self.reward.spec if self.reward.kind == "spec" else {"kind": self.reward.kind}

    def validate(self) -> None:
        choices = {
            ("reward", "kind"): ("similarity", "format", "both", "dr_kernel", "staged", "spec"),
            ("gym", "device"): ("auto", "cpu", "cuda"),
            ("engine", "kind"): ("hf", "openai"),
            ("engine", "sync"): ("disk", "lora", "none"),
            ("mismatch", "kind"): ("none", "tis", "mis", "geometric"),
            ("advantage", "estimator"): ("grpo", "dr_grpo", "rloo", "trloo"),
            ("loss", "aggregation"): ("dr_grpo", "token_mean", "seq_mean"),
            ("optim", "schedule"): ("constant", "cosine"),
            ("optim", "name"): ("adamw", "sgd"),
            ("model", "dtype"): ("float32", "bfloat16"),
            ("model", "device"): ("auto", "cpu", "cuda"),
            ("data", "kernelbook_split"): ("train", "heldout"),
            ("run", "tensorboard"): ("auto", "on", "off"),
        }
        for (section, key), allowed in choices.items():
            value = getattr(getattr(self, section), key)
            if value not in allowed:
                raise ValueError(f"[{section}] {key} = {value!r}: one of {', '.join(allowed)}")
        if self.rollout.samples_per_prompt < 2:
            raise ValueError("[rollout] samples_per_prompt must be at least 2 (group baselines)")
        if self.reward.kind == "spec":
            from kgym.rewards import load_reward_spec

            if not self.reward.spec:
                raise ValueError("[reward] spec: a kgym.rewards spec, with kind = spec")
            load_reward_spec(self.reward.spec)  # refused here, with its reason, when invalid
        if self.uses_gym:
            if not self.data.tasks:
                raise ValueError("[data] tasks: the gym's tasks (ids or globs) for dr_kernel")
            if self.rollout.turns < 1:
                raise ValueError("[rollout] turns must be at least 1")
        elif not self.data.prompts and not self.data.kernelbook:
            raise ValueError("[data] prompts: at least one {prompt, reference}, or kernelbook")
        elif self.rollout.turns != 1:
            raise ValueError("[rollout] turns > 1 needs the gym (reward.kind = dr_kernel)")
        for p in self.data.prompts:
            if not isinstance(p, dict) or not {"prompt", "reference"} <= p.keys():
                raise ValueError("[data] prompts: each is {prompt = ..., reference = ...}")
        if not 0.0 <= self.data.holdout_fraction < 1.0:
            raise ValueError("[data] holdout_fraction must be in [0, 1)")
        if self.run.steps < 1 or self.loss.epochs < 1:
            raise ValueError("[run] steps and [loss] epochs must be at least 1")
        if self.gym.server and self.gym.in_process:
            raise ValueError("[gym] server and in_process exclude each other")
        if self.engine.kind == "openai":
            if not self.engine.url:
                raise ValueError("[engine] url: the server's base URL, with kind = openai")
            if self.engine.sync == "lora" and not self.model.lora:
                raise ValueError("[engine] sync = lora needs [model] lora (adapters to send)")
            if self.engine.sync == "disk" and self.model.lora:
                raise ValueError("[engine] sync = disk sends a full model: use lora with LoRA")


def _merge(target: Any, values: dict[str, Any], where: str) -> None:
    known = {f.name: f for f in fields(target)}
    for key, value in values.items():
        if key not in known:
            raise ValueError(f"{where}: unknown key {key!r} (known: {', '.join(known)})")
        current = getattr(target, key)
        if is_dataclass(current):
            if not isinstance(value, dict):
                raise ValueError(f"{where}.{key}: a table is expected")
            _merge(current, value, f"{where}.{key}")
        else:
            setattr(target, key, value)


def preset_path(name: str) -> Path:
    path = Path(str(resources.files("kgym.train") / "presets" / f"{name}.yaml"))
    if not path.exists():
        raise ValueError(f"no preset {name!r}")
    return path


def _read(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a mapping of sections is expected")
    return data


def load_config(path: Path | None = None, overrides: dict[str, Any] | None = None) -> TrainConfig:
    """A config file (YAML), on top of its preset if it names one, on top of the defaults."""
    config = TrainConfig()
    data = _read(path) if path is not None else {}
    preset = data.pop("preset", None)
    if preset:
        _merge(config, _read(preset_path(str(preset))), f"preset {preset}")
    _merge(config, data, str(path) if path else "config")
    if overrides:
        _merge(config, overrides, "overrides")
    config.validate()
    return config
