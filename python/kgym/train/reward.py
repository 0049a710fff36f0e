"""Rewards without the gym, through kgym.rewards (the C++ core): the difflib ratio of the whole
completion against the prompt's reference (``similarity``), Kernel Coder's format reward
(``format``), and Kernel Coder's reward as its script computes it (``kernel_coder``: the format
reward plus the difflib ratio of the code the format check extracts; 0 without code)."""

from __future__ import annotations

import numpy as np

from kgym.rewards import compute_rewards, kernel_coder_format, similarity_pairs
from kgym.train.config import TrainConfig


def rewards(texts: list[str], references: list[str], cfg: TrainConfig) -> dict[str, np.ndarray]:
    """Per sample: each component and their total."""
    kind = cfg.reward.kind
    parts: dict[str, np.ndarray] = {}
    if kind == "kernel_coder":
        batch = compute_rewards(None, cfg.reward_spec, completions=texts, references=references)
        parts = {name: np.asarray(values) for name, values in batch.terms.items()}
        parts["total"] = np.asarray(batch.totals)
        return parts
    if kind == "similarity":
        parts["similarity"] = np.asarray(similarity_pairs(texts, references), dtype=np.float64)
    if kind == "format":
        parts["format"] = np.array([kernel_coder_format(t).score for t in texts])
    parts["total"] = np.sum(list(parts.values()), axis=0)
    return parts
