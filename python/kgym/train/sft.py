"""Supervised fine-tuning (`kgym sft`): the cold start before RL (Dr. Kernel fine-tunes on
multi-turn data collected with the environment before RL), on `kgym data export` rows or
KernelBook rows.

Every assistant message of a conversation is one sample: its prompt is the conversation before
it, rendered as kgym train and kgym eval render it (kgym.evaluation.prompts.render: the chat
template, or role-tagged text), its target the message and an end-of-text token. The loss is the
mean cross-entropy over target tokens only. Run folder, checkpoints and exact resume are kgym
train's (config.json, metrics.jsonl, checkpoint.pt, curves.png, tokenizer/, and policy/ after
the last step); under LoRA, policy/ holds the merged model (what `kgym train` and
`kgym eval --hf` load) and policy-adapter/ the adapter.
"""

from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from kgym.evaluation.prompts import Prompts, context_tokens, render
from kgym.train import checkpoint, update
from kgym.train.data import PYTORCH_COLUMN, TRITON_COLUMN, _held_out
from kgym.train.loop import POLICY, export_policy
from kgym.train.policy import Policy, load_policy
from kgym.train.sft_config import SftConfig
from kgym.train.tensorboard_log import ScalarLog


@dataclass(frozen=True)
class Example:
    """One assistant turn: the conversation before it (messages) and the turn's text."""

    messages: list[dict[str, str]]
    target: str
    row: str  # the row it came from (the held-out split is by row)


def read_rows(path: Path, limit: int = 0) -> list[dict[str, Any]]:
    import datasets

    kind = {".parquet": "parquet", ".json": "json", ".jsonl": "json"}.get(path.suffix)
    if kind is None:
        raise ValueError(f"{path}: a .jsonl, .json or .parquet file")
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    rows = datasets.load_dataset(kind, data_files=str(path), split="train")
    out = [dict(r) for r in rows]
    return out[:limit] if limit else out


def examples(rows: list[dict[str, Any]], prompts: Prompts | None = None) -> list[Example]:
    """Samples from `kgym data export` rows (``messages``; every assistant message a target)
    or from KernelBook rows (kgym eval's problem prompt; the Triton program in one python
    block the target)."""
    prompts = prompts or Prompts.load()
    out: list[Example] = []
    for index, row in enumerate(rows):
        key = str(row.get("uuid", row.get("task", index)))
        if row.get("messages"):
            key = f"{row.get('run', '')}:{row.get('task', '')}:{row.get('sample', index)}"
            messages = [{"role": m["role"], "content": m["content"]} for m in row["messages"]]
        elif row.get(PYTORCH_COLUMN) and row.get(TRITON_COLUMN):
            name = str(row.get("entry_point") or row.get("module_name") or key)
            problem = prompts.problem.substitute(
                task_id=name, reference=row[PYTORCH_COLUMN], description=""
            )
            answer = "```python\n" + str(row[TRITON_COLUMN]).strip() + "\n```"
            messages = [
                {"role": "user", "content": problem},
                {"role": "assistant", "content": answer},
            ]
        else:
            continue
        for i, m in enumerate(messages):
            if m["role"] == "assistant" and m["content"].strip():
                out.append(Example(messages[:i], m["content"], key))
    if not out:
        raise ValueError(
            "no SFT samples: rows need `messages` with an assistant message, or "
            "KernelBook's python_code and triton_code"
        )
    return out


def encode(example: Example, tokenizer: Any, budget: int) -> tuple[list[int], int]:
    """Token ids (prompt then target and end-of-text) and where the target starts. The prompt
    is tokenised on its own, as the sampler sees it; too long, it loses its beginning (as in
    kgym train and kgym eval), and the target its end."""
    prompt = list(tokenizer(render(example.messages, tokenizer)).input_ids)
    target = list(tokenizer(example.target).input_ids) + [tokenizer.eos_token_id]
    target = target[: max(1, budget - 8)]
    prompt = prompt[max(0, len(prompt) - (budget - len(target))) :]
    return prompt + target, len(prompt)


def collate(
    encoded: list[tuple[list[int], int]], pad_id: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Right-padded ids, attention mask, and labels (-100 but on target tokens)."""
    width = max(len(ids) for ids, _ in encoded)
    ids_t, attn_t, labels_t = [], [], []
    for ids, start in encoded:
        pad = width - len(ids)
        ids_t.append(ids + [pad_id] * pad)
        attn_t.append([1] * len(ids) + [0] * pad)
        labels_t.append([-100] * start + ids[start:] + [-100] * pad)
    return (
        torch.tensor(ids_t, device=device),
        torch.tensor(attn_t, device=device),
        torch.tensor(labels_t, device=device),
    )


def target_loss(model: Any, batch: tuple[torch.Tensor, torch.Tensor, torch.Tensor]) -> Any:
    """The mean cross-entropy of the target tokens (the labels not -100), and their count."""
    ids, attn, labels = batch
    logits = model(input_ids=ids, attention_mask=attn).logits[:, :-1].float()
    shifted = labels[:, 1:]
    loss = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), shifted.reshape(-1), ignore_index=-100
    )
    return loss, int((shifted != -100).sum())


def initial_policy(cfg: SftConfig, train_examples: list[Example]) -> Policy:
    """The policy SFT starts from (seeded: the same every time): the model at model.path, or a
    tiny one with a tokenizer trained on the texts it will read."""
    checkpoint.seed_everything(cfg.run.seed)
    if cfg.model.path is None and not cfg.model.tokenizer_corpus:
        cfg.model.tokenizer_corpus = [
            t for e in train_examples for t in (render(e.messages, None), e.target)
        ]
    return load_policy(cfg.model)


def _order(n: int, seed: int, epoch: int) -> np.ndarray:
    """The epoch's sample order, from the run's seed and the epoch alone (exact on resume)."""
    return np.random.default_rng([seed, epoch]).permutation(n)


def _budget(cfg: SftConfig, policy: Policy) -> int:
    context = context_tokens(policy.model.config)
    return min(cfg.data.max_tokens, context) if context else cfg.data.max_tokens


def sft(cfg: SftConfig, out: Path, quiet: bool = False) -> list[dict[str, Any]]:
    """Fine-tunes into ``out`` (resuming from its checkpoint, same config); returns every
    step's metrics (also in out/metrics.jsonl)."""
    out.mkdir(parents=True, exist_ok=True)
    all_examples = examples(read_rows(Path(cfg.data.file), cfg.data.limit))
    held = [e for e in all_examples if _held_out(e.row, cfg.data.holdout_fraction)]
    train_examples = [e for e in all_examples if not _held_out(e.row, cfg.data.holdout_fraction)]
    if not train_examples:
        raise ValueError(f"{cfg.data.file}: every row is held out")
    policy = initial_policy(cfg, train_examples)
    checkpoint.claim_run_folder(out, cfg.to_dict(), "epochs")

    per_epoch = math.ceil(len(train_examples) / cfg.run.batch_size)
    total = per_epoch * cfg.run.epochs
    opt, sched = update.make_optimizer(policy.model, cfg.optim, total)
    metrics_path = out / checkpoint.METRICS
    start, history = checkpoint.resume(out, policy, opt, sched)
    budget = _budget(cfg, policy)
    tok = policy.tokenizer
    encoded = [encode(e, tok, budget) for e in train_examples]
    held_encoded = [encode(e, tok, budget) for e in held]
    if not quiet:
        print(
            f"kgym sft: {len(train_examples)} samples ({len(held)} held out), "
            f"{cfg.run.epochs} epoch(s), {total} steps",
            file=sys.stderr,
            flush=True,
        )
    scalars = ScalarLog(out, cfg.run.tensorboard, start)
    try:
        for step in range(start + 1, total + 1):
            started = time.perf_counter()
            epoch, index = divmod(step - 1, per_epoch)
            order = _order(len(encoded), cfg.run.seed, epoch)
            chosen = order[index * cfg.run.batch_size : (index + 1) * cfg.run.batch_size]
            batch = collate([encoded[i] for i in chosen], tok.pad_token_id, policy.device)
            policy.model.train()
            loss, tokens = target_loss(policy.model, batch)
            grad_norm = update.step(policy.model, opt, sched, loss, cfg.optim.max_grad_norm)
            m: dict[str, Any] = {
                "step": step,
                "epoch": epoch + 1,
                "loss": float(loss.detach()),
                "tokens": tokens,
                "grad_norm": grad_norm,
                "lr": float(sched.get_last_lr()[0]),
                "time/step_s": time.perf_counter() - started,
            }
            if held_encoded and (step % cfg.run.eval_every == 0 or step == total):
                m["heldout_loss"] = heldout_loss(policy, held_encoded, cfg.run.batch_size)
            history.append(m)
            with metrics_path.open("a") as f:
                f.write(json.dumps(m) + "\n")
            scalars.write(m)
            if not quiet and (step % cfg.run.log_every == 0 or step == total):
                extra = f" held-out {m['heldout_loss']:.4f}" if "heldout_loss" in m else ""
                print(
                    f"[sft step {step}/{total}] epoch {epoch + 1} loss {m['loss']:.4f}{extra} "
                    f"({tokens} target tokens, {m['time/step_s']:.2f} s)",
                    file=sys.stderr,
                    flush=True,
                )
            every = cfg.run.checkpoint_every
            if (every and step % every == 0) or step == total:
                checkpoint.save(out, policy, opt, sched, step, cfg.to_dict())
        if start < total or not (out / POLICY).exists():
            export_sft_policy(policy, out)
    finally:
        scalars.close()
    plot_sft(history, out / "curves.png")
    return history


@torch.no_grad()
def heldout_loss(policy: Policy, encoded: list[tuple[list[int], int]], batch_size: int) -> float:
    """The mean target cross-entropy over the held-out samples (token-weighted)."""
    policy.model.eval()
    total, count = 0.0, 0
    for i in range(0, len(encoded), batch_size):
        batch = collate(encoded[i : i + batch_size], policy.tokenizer.pad_token_id, policy.device)
        loss, tokens = target_loss(policy.model, batch)
        total += float(loss) * tokens
        count += tokens
    return total / max(count, 1)


def export_sft_policy(policy: Policy, out: Path) -> None:
    """policy/: a whole Hugging Face model (under LoRA the adapter merged into a copy of the
    base), which the RL stage's model.path and kgym eval --hf load; policy-adapter/: the
    adapter alone, under LoRA."""
    if not policy.lora:
        export_policy(policy, out / POLICY)
        return
    import copy

    export_policy(policy, out / "policy-adapter")
    merged = copy.deepcopy(policy.model).merge_and_unload()
    export_policy(Policy(merged, policy.tokenizer, policy.device), out / POLICY)


def plot_sft(history: list[dict[str, Any]], target: Path) -> Path | None:
    """Training and held-out loss, learning rate and gradient norm against the step (PNG)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    steps = [m["step"] for m in history]
    fig, axes = plt.subplots(1, 3, figsize=(13.5, 3.6))
    axes[0].plot(steps, [m["loss"] for m in history], label="training batch")
    held = [(m["step"], m["heldout_loss"]) for m in history if "heldout_loss" in m]
    if held:
        axes[0].plot(*zip(*held), marker="o", label="held out")
    axes[0].set_ylabel("cross-entropy per target token")
    axes[0].legend(fontsize=8)
    axes[1].plot(steps, [m["lr"] for m in history])
    axes[1].set_ylabel("learning rate")
    axes[2].plot(steps, [m["grad_norm"] for m in history])
    axes[2].set_ylabel("gradient norm (before clipping)")
    for ax, title in zip(axes, ("loss", "learning rate", "gradient norm")):
        ax.set_title(title)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    plt.close(fig)
    return target
