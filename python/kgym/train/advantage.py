"""Advantages, through kgym.rl (the C++ core; formulas and sources in docs/rl-maths.md)."""

from __future__ import annotations

import numpy as np

from kgym import rl
from kgym.train.config import AdvantageConfig


def advantages(rewards: np.ndarray, group: np.ndarray, cfg: AdvantageConfig) -> np.ndarray:
    """One advantage per sample: single-turn, so each sample is its own trajectory and TRLOO
    reduces to RLOO within the prompt's group."""
    return np.asarray(
        rl.advantages(rewards, group, estimator=cfg.estimator, eps=cfg.eps).advantages  # type: ignore[arg-type]
    )
