"""The small policy of the GPU training run, built here: a GPT-2 made from a config (no
downloaded weights), a byte-level BPE tokenizer trained on the tasks, the prompts and the
solutions, warm-started by supervised fine-tuning on the built-in and honest solutions of the
run's tasks (kgym eval's first-turn prompt -> a solution). With ``--hostile-per-task N`` the
first N of each task's reward hacks from the hostile corpus (``tests/hostile``) join them as
examples: the policy then starts out writing honest kernels and hacks for the same prompt, as a
model trained on unfiltered code might, and reinforcement learning against the gym (which
catches the hacks and pays them nothing) has a lesson to learn that a single memorised answer
does not give.

Fine-tuning stops early, at a calibrated point rather than at a fixed loss: every
``--check-every`` steps it samples one completion per solution at the run's temperature and
counts those that reproduce one of its examples exactly; it stops once that share reaches
``--stop-at``. So reinforcement learning starts from a policy that writes a working kernel
part of the time, and has room to improve.

With ``--lazy-per-task N`` the first N of each task's correct but lazy kernels
(``bench/train_gpu/lazy``: PyTorch does most of the work, a small Triton kernel the rest, PR
low) join the honest examples: what profiling-based rejection sampling is there to drop.

Usage: python bench/train_gpu/warm_start.py --out DIR [--tasks a,b,c] [--hostile-per-task N]
       [--lazy-per-task N] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[2]


def solutions_of(task_id: str) -> list[str]:
    """The built-in solution and the honest set's solutions of a task."""
    found = [ROOT / "tasks" / "solutions" / f"{task_id}.py"]
    found += sorted((ROOT / "tests" / "honest").glob(f"{task_id}__*.py"))
    return [p.read_text() for p in found if p.exists()]


def hacks_of(task_id: str, count: int) -> list[str]:
    """The first `count` reward hacks of a task in the hostile corpus (sorted by name)."""
    return [p.read_text() for p in sorted((ROOT / "tests" / "hostile").glob(f"{task_id}__*.py"))][
        :count
    ]


def lazy_of(task_id: str, count: int) -> list[str]:
    """The first `count` correct but lazy kernels of a task (bench/train_gpu/lazy/): PyTorch
    does most of the work and a small Triton kernel the rest, so the hybrid policy accepts them
    with a low PR (what Dr. Kernel's PRS drops)."""
    here = Path(__file__).resolve().parent / "lazy"
    return [p.read_text() for p in sorted(here.glob(f"{task_id}__*.py"))][:count]


def build(args: argparse.Namespace) -> dict[str, Any]:
    from kgym.evaluation.prompts import Prompts, render
    from kgym.evaluation.tasksets import load_task_set, select
    from kgym.train.policy import tiny_model, tiny_tokenizer

    torch.manual_seed(args.seed)
    random.seed(args.seed)
    device = torch.device(
        args.device if args.device != "auto" else "cuda" if torch.cuda.is_available() else "cpu"
    )
    tasks = select(load_task_set("builtin").tasks, args.tasks.split(","), None)
    if not tasks:
        raise SystemExit(f"no built-in task matches {args.tasks}")
    prompts = Prompts.load()
    pairs = [(task, text) for task in tasks for text in solutions_of(task.task.id)]
    pairs += [(task, text) for task in tasks for text in lazy_of(task.task.id, args.lazy_per_task)]
    honest = len(pairs)
    pairs += [
        (task, text) for task in tasks for text in hacks_of(task.task.id, args.hostile_per_task)
    ]
    corpus = [t.task.source for t in tasks] + [prompts.problem.template, prompts.feedback.template]
    corpus += [text for _, text in pairs]
    tok = tiny_tokenizer(corpus, args.vocab, min_frequency=2)
    examples = []
    for task, text in pairs:
        prompt = tok(render(prompts.first(task), tok)).input_ids
        answer = tok(text).input_ids + [tok.eos_token_id]
        examples.append((prompt, answer, text))
    longest = max(len(p) + len(a) for p, a, _ in examples)
    if longest > args.n_positions:
        raise SystemExit(f"a prompt and its solution take {longest} tokens > {args.n_positions}")
    shape = {"n_positions": args.n_positions, "n_embd": args.n_embd, "n_layer": args.n_layer}
    model = tiny_model(tok, {**shape, "n_head": args.n_head}).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    pad = tok.pad_token_id
    width = longest
    ids = torch.full((len(examples), width), pad, dtype=torch.long)
    labels = torch.full((len(examples), width), -100, dtype=torch.long)
    mask = torch.zeros((len(examples), width), dtype=torch.long)
    for i, (prompt, answer, _) in enumerate(examples):
        row = prompt + answer
        ids[i, : len(row)] = torch.tensor(row)
        labels[i, len(prompt) : len(row)] = torch.tensor(answer)  # the solution's tokens only
        mask[i, : len(row)] = 1
    ids, labels, mask = ids.to(device), labels.to(device), mask.to(device)
    log: list[dict[str, Any]] = []
    started = time.perf_counter()
    stop_reason = "steps"
    for step in range(1, args.steps + 1):
        model.train()
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % args.check_every == 0 or step == args.steps:
            exact = sampled_exact_share(model, tok, examples, args, device)
            row = {"step": step, "loss": loss.item(), "exact_share": exact}
            row["seconds"] = time.perf_counter() - started
            log.append(row)
            print(
                f"[sft {step}] loss {row['loss']:.4f} exact {exact:.2f} ({row['seconds']:.0f} s)",
                file=sys.stderr,
                flush=True,
            )
            if exact >= args.stop_at:
                stop_reason = f"exact share {exact:.2f} >= {args.stop_at}"
                break
    args.out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(args.out)
    tok.save_pretrained(args.out)
    summary = {
        "tasks": [t.task.id for t in tasks],
        "examples": len(examples),
        "examples_honest": honest,
        "examples_hostile": len(examples) - honest,
        "longest_answer_tokens": max(len(a) for _, a, _ in examples),
        "parameters": sum(p.numel() for p in model.parameters()),
        "vocab": len(tok),
        "longest_tokens": longest,
        "stop_reason": stop_reason,
        "log": log,
        "seconds": time.perf_counter() - started,
        "device": str(device),
        "arguments": {k: str(v) for k, v in vars(args).items()},
    }
    (args.out / "warm_start.json").write_text(json.dumps(summary, indent=1))
    return summary


@torch.no_grad()
def sampled_exact_share(
    model: Any, tok: Any, examples: list[tuple[list[int], list[int], str]], args: Any, device: Any
) -> float:
    """The share of samples (one per example, at the run's temperature, all in one batch) that
    reproduce one of their task's known solutions exactly."""
    model.eval()
    width = max(len(p) for p, _, _ in examples)
    ids = torch.full((len(examples), width), tok.pad_token_id, dtype=torch.long)
    mask = torch.zeros((len(examples), width), dtype=torch.long)
    for i, (prompt, _, _) in enumerate(examples):  # left-padded, as the trainer samples
        ids[i, width - len(prompt) :] = torch.tensor(prompt)
        mask[i, width - len(prompt) :] = 1
    out = model.generate(
        ids.to(device),
        attention_mask=mask.to(device),
        do_sample=True,
        temperature=args.temperature,
        top_k=0,
        max_new_tokens=max(len(a) for _, a, _ in examples) + 8,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
    )
    hits = 0
    for i, (prompt, _, _) in enumerate(examples):
        known = {tuple(a) for p, a, _ in examples if p == prompt}
        row = out[i, width:].tolist()
        if tok.eos_token_id in row:
            row = row[: row.index(tok.eos_token_id) + 1]
        hits += tuple(row) in known
    return hits / len(examples)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True, help="the model folder to write")
    p.add_argument("--tasks", default="03_scale_add_mul,08_layer_norm,09_rms_norm,16_cross_entropy")
    p.add_argument(
        "--hostile-per-task",
        type=int,
        default=0,
        help="add this many of each task's hostile-corpus hacks as examples",
    )
    p.add_argument(
        "--lazy-per-task",
        type=int,
        default=0,
        help="add this many of each task's correct but lazy kernels (lazy/) as examples",
    )
    p.add_argument("--steps", type=int, default=600, help="fine-tuning steps at most")
    p.add_argument("--check-every", type=int, default=20)
    p.add_argument("--stop-at", type=float, default=0.35, help="exact share that ends it")
    p.add_argument("--temperature", type=float, default=1.0, help="the run's sampling temperature")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--vocab", type=int, default=1024)
    p.add_argument("--n-embd", type=int, default=256)
    p.add_argument("--n-layer", type=int, default=4)
    p.add_argument("--n-head", type=int, default=4)
    p.add_argument("--n-positions", type=int, default=2048)
    p.add_argument("--device", default="auto")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = p.parse_args(argv)
    summary = build(args)
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"wrote {args.out}: {summary['stop_reason']}, {summary['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
