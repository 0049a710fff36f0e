"""Prompts for training: written in the config, or from KernelBook (a `datasets` file of
PyTorch programs with their Triton translations), split into training and held-out rows. The
problem prompt is kgym eval's (kgym.evaluation.prompts), so a policy trains on what it is
evaluated with."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from kgym.evaluation.prompts import Prompts

# KernelBook's columns (GPUMODE/KernelBook): uuid, module_name, entry_point, python_code,
# triton_code, licenses, synthetic, repo_link.
PYTORCH_COLUMN = "python_code"
TRITON_COLUMN = "triton_code"


def _held_out(key: str, fraction: float) -> bool:
    """A stable split: the same row is held out in every run and on every machine."""
    digest = hashlib.sha256(key.encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def kernelbook_prompts(
    path: Path, split: str, holdout_fraction: float, limit: int, prompts: Prompts | None = None
) -> list[dict[str, str]]:
    """``{prompt, reference, id}`` rows: the problem prompt made from the PyTorch program, the
    Triton program as the reference (Kernel Coder's similarity target). ``split``: train or
    heldout. Rows without both programs are skipped."""
    import datasets

    kind = {".parquet": "parquet", ".json": "json", ".jsonl": "json"}.get(path.suffix)
    if kind is None:
        raise ValueError(f"{path}: a .parquet, .json or .jsonl file of KernelBook rows")
    rows = datasets.load_dataset(kind, data_files=str(path), split="train")
    missing = {PYTORCH_COLUMN, TRITON_COLUMN} - set(rows.column_names)
    if missing:
        raise ValueError(f"{path}: no column {', '.join(sorted(missing))} (not KernelBook rows)")
    template = (prompts or Prompts.load()).problem
    out: list[dict[str, str]] = []
    for index, row in enumerate(rows):
        pytorch, triton = row.get(PYTORCH_COLUMN), row.get(TRITON_COLUMN)
        if not pytorch or not triton:
            continue
        key = str(row.get("uuid", index))
        if _held_out(key, holdout_fraction) != (split == "heldout"):
            continue
        name = str(row.get("entry_point") or row.get("module_name") or key)
        text = template.substitute(task_id=name, reference=pytorch, description="")
        out.append({"prompt": text, "reference": triton, "id": key})
        if limit and len(out) >= limit:
            break
    if not out:
        raise ValueError(f"{path}: no {split} rows")
    return out


def resolve_prompts(data: Any) -> list[dict[str, str]]:
    """The config's prompts, then KernelBook's when a file is named."""
    found = list(data.prompts)
    if data.kernelbook:
        found += kernelbook_prompts(
            Path(data.kernelbook),
            data.kernelbook_split,
            data.holdout_fraction,
            data.kernelbook_limit,
        )
    return found


def draw(items: list[Any], per_step: int, seed: int, step: int) -> list[Any]:
    """The step's prompts (or tasks): all, or ``per_step`` drawn by the step's own seeded
    generator, so that a resumed run draws what an uninterrupted one would."""
    if not per_step or per_step >= len(items):
        return items
    rng = np.random.default_rng([seed, step])
    return [items[i] for i in sorted(rng.choice(len(items), size=per_step, replace=False))]
