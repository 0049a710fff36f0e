"""The two recipes end to end on a CPU, with tiny models made from a config (no downloaded
weights) and a KernelBook-format file made from the built-in suite (`kgym data kernelbook`:
KernelBook itself is on a model hub these machines cannot reach):

- ``kernel_coder``: the kernel_coder preset (Kernel Coder's prompt, pre-fill, rewards, GRPO)
  on the built-in KernelBook file; a tiny model from scratch, with the learning rate raised
  for the CPU (the preset's 1e-6 moves a random tiny model nowhere in 40 steps). Measured:
  ``reward/format`` per step, from about 0 to what it reaches.
- ``dr_kernel``: the dr_kernel preset multi-turn (3 turns) with the real gym on the CPU:
  TRLOO, PRS and geometric mismatch rejection applied and logged every step.
- ``cold_start``: Dr. Kernel's cold start as kgym's command sequence: `kgym eval` collects
  with the gym from a teacher (here: each of 14 tasks' built-in solution and its honest
  variants from `tests/honest`, `--generations`),
  `kgym data export` keeps the accepted attempts, `kgym sft` fine-tunes a tiny model on them,
  then `kgym eval --hf` evaluates the starting policy and the fine-tuned one on the 4 other
  (held-out) tasks: compile rate, and the share of answers with a python block.

Each part writes its run folders under ``--out``, its figures to ``--out/results.json`` and
its section of this folder's ``results-<machine>.md`` (bench/record.py: a part's run replaces
its section, the others' stay); ``--parts`` picks some. Progress goes to stderr.

    python bench/train_recipes_cpu/run.py --out /tmp/recipes
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from record import record_part, results_path, run_lines  # noqa: E402

TITLE = "The two recipes and the cold start on a CPU"
HELD_OUT = ["02_gelu", "05_row_max", "07_log_softmax", "17_transpose"]
TAGS = ["<think>", "</think>", "<answer>", "</answer>", "```python", "```"]


def log(message: str) -> None:
    print(f"[recipes {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def kgym(*argv: str) -> None:
    command = [sys.executable, "-m", "kgym.cli", *argv]
    log(" ".join(["kgym", *argv]))
    subprocess.run(command, check=True)


def metrics(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def kernel_coder(out: Path, kernelbook: Path, steps: int) -> dict[str, Any]:
    config = {
        "preset": "kernel_coder",
        "model": {
            "path": None,
            "tiny": {"n_embd": 64, "n_layer": 2, "n_head": 2, "n_positions": 512},
            "tokenizer_vocab": 400,
            "tokenizer_tokens": TAGS,
            "dtype": "float32",
            "gradient_checkpointing": False,
            "device": "cpu",
        },
        "data": {"kernelbook": str(kernelbook), "holdout_fraction": 0.2},
        "rollout": {"samples_per_prompt": 8, "prompts_per_step": 4, "max_new_tokens": 48},
        "optim": {"lr": 0.003},  # the CPU override: the preset's 1e-6 is for a real model
        "run": {"steps": steps, "checkpoint_every": 0, "tensorboard": "off"},
    }
    path = out / "kernel_coder.yaml"
    path.write_text(yaml.safe_dump(config))
    kgym("train", str(path), "--out", str(out / "kernel_coder"))
    history = metrics(out / "kernel_coder")
    fmt = [m["reward/format"] for m in history]
    tenth = max(1, len(fmt) // 4)
    return {
        "config": config,
        "reward/format": fmt,
        "first_quarter_mean": sum(fmt[:tenth]) / tenth,
        "last_quarter_mean": sum(fmt[-tenth:]) / tenth,
        "reward/similarity_last_quarter_mean": sum(m["reward/similarity"] for m in history[-tenth:])
        / tenth,
    }


def dr_kernel(out: Path, steps: int) -> dict[str, Any]:
    config = {
        "preset": "dr_kernel",
        "model": {
            "path": None,
            "tiny": {"n_embd": 32, "n_layer": 1, "n_head": 2, "n_positions": 2048},
            "tokenizer_vocab": 400,
            "dtype": "float32",
            "gradient_checkpointing": False,
            "device": "cpu",
        },
        "data": {"tasks": ["01_relu", "02_gelu"]},
        "rollout": {"samples_per_prompt": 2, "prompts_per_step": 0, "max_new_tokens": 16},
        "gym": {"device": "cpu", "trials": 1, "jobs": 4, "in_process": True},
        "optim": {"lr": 0.001},
        "run": {"steps": steps, "checkpoint_every": 0, "tensorboard": "off"},
    }
    path = out / "dr_kernel.yaml"
    path.write_text(yaml.safe_dump(config))
    kgym("train", str(path), "--out", str(out / "dr_kernel"))
    keys = (
        "gym_evaluations",
        "prs_kept",
        "prs_decided",
        "lazy_rate",
        "valid_samples",
        "mismatch/mean_abs_logratio",
        "mismatch/geometric_dropped",
        "statuses",
    )
    return {
        "config": config,
        "steps": [{k: m[k] for k in keys} for m in metrics(out / "dr_kernel")],
    }


def _eval(out: Path, policy: Path, samples: int) -> dict[str, Any]:
    if out.exists():
        shutil.rmtree(out)
    kgym(
        "eval", "builtin", "--tasks", *HELD_OUT, "--hf", str(policy), "--turns", "1",
        "--samples", str(samples), "--max-tokens", "900", "--temperature", "1.0",
        "--device", "cpu", "--trials", "1", "--in-process", "--jobs", "2",
        "--bootstrap", "200", "--out", str(out), "--json",
    )  # fmt: skip
    summary = json.loads((out / "summary.json").read_text())
    turn = summary["policies"]["hybrid"]["groups"]["overall"]["per_turn"][0]
    from kgym.check import extract

    rows = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    found = sum(bool(extract(r["completion"], "last_python_block")["ok"]) for r in rows)
    return {
        "compile_rate": turn["compile_rate"]["value"],
        "compile_rate_ci": turn["compile_rate"]["ci"],
        "kernelbench_compile_rate": turn["kernelbench"]["compile_rate"]["value"],
        "correct_rate": turn["correct_rate"]["value"],
        "python_block_share": found / len(rows),
        "answers": len(rows),
    }


def cold_start(out: Path, samples: int, epochs: int) -> dict[str, Any]:
    """Dr. Kernel's cold start in kgym's commands: collect with the gym (a teacher that writes
    each training task's built-in solution, as `kgym eval --generations`), export the accepted
    attempts, fine-tune, then evaluate the start and the result on held-out tasks."""
    from kgym.tasks import list_tasks
    from kgym.train.loop import export_policy
    from kgym.train.sft import examples, initial_policy, read_rows
    from kgym.train.sft_config import load_sft_config

    train_tasks = [t for t in list_tasks() if t.id not in HELD_OUT]
    # The teacher's answers: each training task's built-in solution and its honest variants
    # (tests/honest), one sample each.
    answers = {
        t.id: [t.solution_path().read_text()]
        + [p.read_text() for p in sorted((ROOT / "tests" / "honest").glob(f"{t.id}__*.py"))]
        for t in train_tasks
    }
    samples_per_task = max(len(a) for a in answers.values())
    teacher = out / "teacher.jsonl"
    teacher.write_text(  # every (task, sample) answered: a task with fewer variants repeats
        "".join(
            json.dumps(
                {"task": task, "sample": i, "completion": f"```python\n{texts[i % len(texts)]}```"}
            )
            + "\n"
            for task, texts in answers.items()
            for i in range(samples_per_task)
        )
    )
    collect = out / "collect"
    if collect.exists():
        shutil.rmtree(collect)
    kgym(
        "eval", "builtin", "--tasks", *[t.id for t in train_tasks], "--generations",
        str(teacher), "--turns", "1", "--samples", str(samples_per_task),
        "--device", "cpu", "--trials", "1", "--in-process",
        "--jobs", "2", "--bootstrap", "0", "--out", str(collect),
    )  # fmt: skip
    data = out / "cold.jsonl"
    kgym("data", "export", str(collect), "--format", "sft", "--out", str(data))
    config = {
        "model": {
            "tiny": {"n_embd": 64, "n_layer": 2, "n_head": 2, "n_positions": 2048},
            "tokenizer_vocab": 1024,
            "device": "cpu",
        },
        "data": {"file": str(data), "max_tokens": 2048},
        "optim": {"lr": 0.003},
        "run": {"epochs": epochs, "batch_size": 4, "checkpoint_every": 20, "tensorboard": "off"},
    }
    path = out / "sft.yaml"
    path.write_text(yaml.safe_dump(config))
    # The starting policy as a Hugging Face folder: the same seeded initialisation kgym sft uses.
    cfg = load_sft_config(path)
    start = initial_policy(cfg, examples(read_rows(data)))
    export_policy(start, out / "start-policy")
    if (out / "sft").exists():
        shutil.rmtree(out / "sft")
    kgym("sft", str(path), "--out", str(out / "sft"))
    history = metrics(out / "sft")
    return {
        "config": config,
        "train_tasks": [t.id for t in train_tasks],
        "collected_rows": len(read_rows(data)),
        "held_out_tasks": HELD_OUT,
        "sft_loss_first_last": [history[0]["loss"], history[-1]["loss"]],
        "sft_steps": len(history),
        "start": _eval(out / "eval-start", out / "start-policy", samples),
        "sft": _eval(out / "eval-sft", out / "sft" / "policy", samples),
    }


def markdown(part: str, r: dict[str, Any]) -> list[str]:
    """A part's section of the results file (below its run lines)."""
    if part == "kernel_coder":
        fmt = r["reward/format"]
        rows = [" ".join(f"{v:.3f}" for v in fmt[i : i + 10]) for i in range(0, len(fmt), 10)]
        return [
            f"`reward/format` per step (mean over the step's samples), {len(fmt)} steps, "
            f"{r['seconds']:.0f} s:",
            "",
            "```",
            *rows,
            "```",
            "",
            f"- first quarter {r['first_quarter_mean']:.3f}, last quarter "
            f"{r['last_quarter_mean']:.3f}",
            f"- `reward/similarity`, last quarter: {r['reward/similarity_last_quarter_mean']:.3f}",
        ]
    if part == "dr_kernel":
        keys = [
            "prs_kept",
            "prs_decided",
            "lazy_rate",
            "valid_samples",
            "mismatch/mean_abs_logratio",
            "mismatch/geometric_dropped",
        ]
        lines = [
            f"{len(r['steps'])} steps, {r['seconds']:.0f} s; each step's PRS and mismatch "
            "figures as `kgym train` logged them:",
            "",
            "| step | gym evaluations | statuses | " + " | ".join(keys) + " |",
            "| --- | --- | --- | " + " | ".join("---" for _ in keys) + " |",
        ]
        for i, m in enumerate(r["steps"], 1):
            statuses = ", ".join(f"{k} {v}" for k, v in sorted(m["statuses"].items()))
            cells = [f"{m[k]:.2g}" if isinstance(m[k], float) else str(m[k]) for k in keys]
            lines.append(
                f"| {i} | {m['gym_evaluations']} | {statuses} | " + " | ".join(cells) + " |"
            )
        return lines
    if part == "cold_start":
        lines = [
            f"Collected with the gym on {len(r['train_tasks'])} tasks: {r['collected_rows']} "
            f"accepted rows; `kgym sft` {r['sft_steps']} steps, loss "
            f"{r['sft_loss_first_last'][0]:.2f} -> {r['sft_loss_first_last'][1]:.2f}; "
            f"{r['seconds']:.0f} s in all. On the held-out tasks ({', '.join(r['held_out_tasks'])}), "
            "`kgym eval --hf`:",
            "",
            "| policy | answers | with a python block | compile rate (kgym) | compile rate "
            "(KernelBench) | correct |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for name in ("start", "sft"):
            e = r[name]
            lines.append(
                f"| {name} | {e['answers']} | {e['python_block_share']:.3f} | "
                f"{e['compile_rate']:.3f} | {e['kernelbench_compile_rate']:.3f} | "
                f"{e['correct_rate']:.3f} |"
            )
        return lines
    raise ValueError(part)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--parts", default="kernel_coder,dr_kernel,cold_start")
    p.add_argument("--coder-steps", type=int, default=40)
    p.add_argument("--drk-steps", type=int, default=2)
    p.add_argument("--sft-epochs", type=int, default=20)
    p.add_argument("--eval-samples", type=int, default=4)
    p.add_argument("--json", action="store_true", help="print results.json's content")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    kernelbook = args.out / "kernelbook.jsonl"
    kgym("data", "kernelbook", "--out", str(kernelbook))
    results_file = args.out / "results.json"
    results = json.loads(results_file.read_text()) if results_file.exists() else {}
    command = "python bench/train_recipes_cpu/run.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    for part in args.parts.split(","):
        started = time.perf_counter()
        if part == "kernel_coder":
            results[part] = kernel_coder(args.out, kernelbook, args.coder_steps)
        elif part == "dr_kernel":
            results[part] = dr_kernel(args.out, args.drk_steps)
        elif part == "cold_start":
            results[part] = cold_start(args.out, args.eval_samples, args.sft_epochs)
        else:
            raise SystemExit(f"no part {part!r}")
        results[part]["seconds"] = time.perf_counter() - started
        results_file.write_text(json.dumps(results, indent=1) + "\n")
        log(f"{part} done in {results[part]['seconds']:.0f} s")
        lines = run_lines(command) + [""] + markdown(part, results[part])
        record_part(results_path(HERE), TITLE, part, lines, results[part], False)
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
