"""Prompts for training: written in the config, or from KernelBook (a `datasets` file of
PyTorch programs with their Triton translations), split into training and held-out rows.

A KernelBook row is asked as a conversation, in one of two styles (``data.prompt_style``):

- ``kgym``: kgym eval's problem prompt (kgym.evaluation.prompts), so a policy trains on what
  it is evaluated with;
- ``kernel_coder``: Kernel Coder's (insop/kernel-coder, ``kernel-coder/nano_r1_script.py``:
  ``SYSTEM_MESSAGE_KERNELBOOK``, ``PROMPT_TEMPLATE_KERNELBOOK`` with
  ``PROBLEM_INSTRUCTION_KERNELBOOK``, reproduced in ``kgym/evaluation/templates/kernel_coder_*``)
  with its assistant turn pre-filled with ``KERNEL_CODER_PREFILL``: the model continues the
  pre-fill, whose ``<think>`` Kernel Coder's format reward prepends to the completion.

A config's own ``{prompt, reference}`` rows are sent as written (no conversation)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from kgym.evaluation.prompts import Prompts, default_template, render

# KernelBook's columns (GPUMODE/KernelBook): uuid, module_name, entry_point, python_code,
# triton_code, licenses, synthetic, repo_link.
PYTORCH_COLUMN = "python_code"
TRITON_COLUMN = "triton_code"
# nano_r1_script.py's preprocess_example_kernelbook: the assistant message it continues.
KERNEL_CODER_PREFILL = "Let me solve this step by step.\n<think>"


def style_prompts(style: str) -> tuple[Prompts, str]:
    """The prompts of a ``data.prompt_style`` and the assistant pre-fill that goes with them."""
    if style == "kernel_coder":
        prompts = Prompts.load(
            problem=default_template("kernel_coder_problem.md"),
            system=default_template("kernel_coder_system.md"),
        )
        return prompts, KERNEL_CODER_PREFILL
    if style != "kgym":
        raise ValueError(f"[data] prompt_style {style!r}: one of kgym, kernel_coder")
    return Prompts.load(), ""


def row_text(row: dict[str, Any], tokenizer: Any) -> str:
    """What the policy reads for a row: a config's prompt as written, or a KernelBook row's
    conversation rendered (the chat template, or role-tagged text) with its pre-fill."""
    if "messages" not in row:
        return str(row["prompt"])
    return render(row["messages"], tokenizer, row.get("prefill", ""))


def _held_out(key: str, fraction: float) -> bool:
    """A stable split: the same row is held out in every run and on every machine."""
    digest = hashlib.sha256(key.encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def kernelbook_prompts(
    path: Path, split: str, holdout_fraction: float, limit: int, style: str = "kgym"
) -> list[dict[str, Any]]:
    """``{messages, prefill, reference, id}`` rows: the problem asked about the PyTorch
    program in the style's prompt, the Triton program as the reference (Kernel Coder's
    similarity target). ``split``: train or heldout. Rows without both programs are skipped."""
    import datasets

    kind = {".parquet": "parquet", ".json": "json", ".jsonl": "json"}.get(path.suffix)
    if kind is None:
        raise ValueError(f"{path}: a .parquet, .json or .jsonl file of KernelBook rows")
    rows = datasets.load_dataset(kind, data_files=str(path), split="train")
    missing = {PYTORCH_COLUMN, TRITON_COLUMN} - set(rows.column_names)
    if missing:
        raise ValueError(f"{path}: no column {', '.join(sorted(missing))} (not KernelBook rows)")
    prompts, prefill = style_prompts(style)
    system = [{"role": "system", "content": prompts.system}] if prompts.system else []
    out: list[dict[str, Any]] = []
    for index, row in enumerate(rows):
        pytorch, triton = row.get(PYTORCH_COLUMN), row.get(TRITON_COLUMN)
        if not pytorch or not triton:
            continue
        key = str(row.get("uuid", index))
        if _held_out(key, holdout_fraction) != (split == "heldout"):
            continue
        name = str(row.get("entry_point") or row.get("module_name") or key)
        text = prompts.problem.substitute(task_id=name, reference=pytorch, description="")
        messages = [*system, {"role": "user", "content": text}]
        out.append({"messages": messages, "prefill": prefill, "reference": triton, "id": key})
        if limit and len(out) >= limit:
            break
    if not out:
        raise ValueError(f"{path}: no {split} rows")
    return out


def resolve_prompts(data: Any) -> list[dict[str, Any]]:
    """The config's prompts, then KernelBook's when a file is named."""
    found = list(data.prompts)
    if data.kernelbook:
        found += kernelbook_prompts(
            Path(data.kernelbook),
            data.kernelbook_split,
            data.holdout_fraction,
            data.kernelbook_limit,
            data.prompt_style,
        )
    return found


def kernelbook_from_tasks(tasks: list[Any]) -> list[dict[str, Any]]:
    """KernelBook-format rows (GPUMODE/KernelBook's columns) from tasks that ship a reference
    solution: the task's PyTorch program as ``python_code``, its Triton solution as
    ``triton_code``. KernelBook itself is on a model hub; these rows are kgym's built-in suite
    in its format, for tests and demonstrations offline."""
    rows = []
    for task in tasks:
        solution = task.solution_path()
        if solution is None:
            continue
        rows.append(
            {
                "uuid": task.id,
                "module_name": "Model",
                "entry_point": "Model",
                "python_code": task.source,
                "triton_code": solution.read_text(),
                "licenses": [],
                "synthetic": False,
                "repo_link": "",
            }
        )
    return rows


def draw(items: list[Any], per_step: int, seed: int, step: int) -> list[Any]:
    """The step's prompts (or tasks): all, or ``per_step`` drawn by the step's own seeded
    generator, so that a resumed run draws what an uninterrupted one would."""
    if not per_step or per_step >= len(items):
        return items
    rng = np.random.default_rng([seed, step])
    return [items[i] for i in sorted(rng.choice(len(items), size=per_step, replace=False))]
