"""Rewards, through kgym.rewards (the C++ core): Kernel Coder's similarity to the prompt's
reference (difflib's ratio) and its format reward."""

from __future__ import annotations

import numpy as np

from kgym.rewards import kernel_coder_format, similarity_pairs


def rewards(texts: list[str], references: list[str], kind: str) -> dict[str, np.ndarray]:
    """Per sample: each component and their total."""
    parts: dict[str, np.ndarray] = {}
    if kind in ("similarity", "both"):
        parts["similarity"] = np.asarray(similarity_pairs(texts, references), dtype=np.float64)
    if kind in ("format", "both"):
        parts["format"] = np.array([kernel_coder_format(t).score for t in texts])
    parts["total"] = np.sum(list(parts.values()), axis=0)
    return parts
