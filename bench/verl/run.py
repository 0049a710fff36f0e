"""verl for real: kgym's reward (`kgym.integrations.verl.compute_score`) and estimator
(`kgym_trloo`) inside verl, installed from PyPI into its own environment (README.md says how).

Three parts, each recorded in ``--out/results.json`` and as its section of this folder's
``results-<machine>.md`` (bench/record.py: a part's run replaces its section, the others'
stay):

- ``main_ppo``: verl's own trainer, ``python -m verl.trainer.main_ppo``, with a tiny model on
  this machine (Hugging Face rollout, the CPU), kgym's reward function and ``kgym_trloo``. Its
  exit status and the last lines of its error are recorded: where verl's stack cannot run here,
  this is the exact blocker.
- ``ppo_steps``: what runs without verl's Ray workers: a few PPO steps made of verl's own parts
  on a Hugging Face rollout of a tiny model: the batch as verl's ``DataProto``, rewards by
  verl's ``NaiveRewardManager`` calling kgym's ``compute_score`` (the real gym, in process, on
  the CPU), advantages by verl's ``compute_advantage`` with ``kgym_trloo`` from verl's
  registry, the loss by verl's ``compute_policy_loss_vanilla`` (clip 0.2 / 0.28, as
  Dr. Kernel's script), and an AdamW step. A random tiny model writes no kernel, so by default
  each group's first response is the task's built-in solution (``--no-inject``: none): the
  gym then pays it, its group's advantages differ from 0, and the weights move.
- ``agent_loop``: multi-turn through verl's agent loop: kgym's ``KgymAgentLoop`` on verl's own
  ``AgentLoopBase`` (``tests/test_integrations_verl_agent_loop.py``, run with this environment's
  verl), a stand-in for verl's inference server and the real gym.

    VERL_PY=/path/to/verl-venv/bin/python
    $VERL_PY bench/verl/run.py --out /tmp/verl-bench
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from record import record_part, results_path, run_lines  # noqa: E402

TITLE = "kgym inside verl, installed from PyPI"


def log(message: str) -> None:
    print(f"[verl bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def versions() -> dict[str, str]:
    import ray
    import transformers
    import triton
    import verl

    return {
        "python": sys.version.split()[0],
        "verl": verl.__version__,
        "torch": torch.__version__,
        "triton": triton.__version__,
        "transformers": transformers.__version__,
        "ray": ray.__version__,
    }


def tiny_policy(out: Path, tasks: list[Any], prompts: Any) -> Path:
    """A tiny GPT-2 with a tokenizer trained on the tasks and prompts, and a plain chat template
    (verl's data pipeline applies one): no downloaded weights."""
    from kgym.train.policy import tiny_model, tiny_tokenizer

    folder = out / "model"
    corpus = [t.task.source for t in tasks] + [prompts.problem.template, prompts.feedback.template]
    tok = tiny_tokenizer(corpus, 400)
    tok.chat_template = (
        "{% for m in messages %}{{ m.role }}: {{ m.content }}\n\n{% endfor %}"
        "{% if add_generation_prompt %}assistant:{% endif %}"
    )
    torch.manual_seed(0)
    model = tiny_model(tok, {"n_embd": 32, "n_layer": 1, "n_head": 2, "n_positions": 2048})
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def main_ppo(out: Path, model: Path, data: Path, timeout: float) -> dict[str, Any]:
    import kgym.integrations.verl as kv

    overrides = [
        f"data.train_files={data}",
        f"data.val_files={data}",
        "data.train_batch_size=2",
        "data.max_prompt_length=1024",
        "data.max_response_length=32",
        f"actor_rollout_ref.model.path={model}",
        "actor_rollout_ref.rollout.name=hf",
        "actor_rollout_ref.rollout.n=2",
        "actor_rollout_ref.actor.ppo_mini_batch_size=2",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2",
        "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2",
        "algorithm.adv_estimator=kgym_trloo",
        f"reward.custom_reward_function.path={kv.__file__}",
        "reward.custom_reward_function.name=compute_score",
        "trainer.nnodes=1",
        "trainer.n_gpus_per_node=1",
        "trainer.device=cpu",
        "trainer.total_training_steps=2",
        "trainer.logger=[console]",
        "trainer.val_before_train=False",
        "ray_kwargs.ray_init.num_cpus=16",  # 2 cores: Ray's default starves verl's actors
    ]
    command = [sys.executable, "-m", "verl.trainer.main_ppo", *overrides]
    log("verl.trainer.main_ppo " + " ".join(overrides))
    started = time.perf_counter()
    try:
        # cwd: hydra writes its outputs/ folder where verl starts
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=out)
        code, text = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as exc:
        code = None
        text = (exc.stdout or b"").decode(errors="replace") + (exc.stderr or b"").decode(
            errors="replace"
        )
    (out / "main_ppo.log").write_text(text)
    errors = [line for line in text.splitlines() if "Error" in line and "Warning" not in line]
    return {
        "command": "python -m verl.trainer.main_ppo " + " ".join(overrides),
        "exit_status": code,
        "seconds": time.perf_counter() - started,
        "last_error_lines": errors[-3:],
    }


def ppo_steps(
    out: Path, model_dir: Path, tasks: list[Any], steps: int, n: int, inject: bool
) -> dict[str, Any]:
    import transformers
    from omegaconf import OmegaConf
    from verl import DataProto
    from verl.trainer.ppo import core_algos
    from verl.trainer.ppo.ray_trainer import compute_advantage
    from verl.workers.reward_manager.naive import NaiveRewardManager

    import kgym.integrations.verl as kv
    from kgym.evaluation.prompts import Prompts

    assert "kgym_trloo" in core_algos.ADV_ESTIMATOR_REGISTRY  # registered by the import above
    tok = transformers.AutoTokenizer.from_pretrained(model_dir)
    model = transformers.AutoModelForCausalLM.from_pretrained(model_dir)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
    rows = kv.dataset_rows(tasks, Prompts.load())
    solutions = {t.task.id: t.task.solution_path().read_text() for t in tasks}
    reward_fn = NaiveRewardManager(tok, num_examine=0, compute_score=kv.compute_score)
    actor = OmegaConf.create(
        {"clip_ratio": 0.2, "clip_ratio_low": 0.2, "clip_ratio_high": 0.28, "clip_ratio_c": 3.0,
         "global_batch_info": {}}
    )  # fmt: skip
    response_length = 24  # sampled tokens; an injected solution is as long as it is
    history = []
    for step in range(1, steps + 1):
        # verl's layout: left-padded prompts, right-padded responses, one uid per prompt
        texts = [tok.apply_chat_template(r["prompt"], tokenize=False, add_generation_prompt=True)
                 for r in rows for _ in range(n)]  # fmt: skip
        tok.padding_side = "left"
        enc = tok(texts, return_tensors="pt", padding=True)
        model.eval()
        with torch.no_grad():
            seq = model.generate(
                **enc, do_sample=True, temperature=1.0, top_k=0, max_new_tokens=response_length,
                pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
            )  # fmt: skip
        prompt_len = enc.input_ids.shape[1]
        sampled = []
        for i, row in enumerate(seq[:, prompt_len:].tolist()):
            if tok.eos_token_id in row:
                row = row[: row.index(tok.eos_token_id) + 1]
            if inject and i % n == 0:  # the group's first response: the task's own solution
                solution = solutions[rows[i // n]["extra_info"]["task"]]
                row = list(tok("```python\n" + solution + "```").input_ids) + [tok.eos_token_id]
            sampled.append(row)
        width = max(len(r) for r in sampled)
        responses = torch.tensor([r + [tok.pad_token_id] * (width - len(r)) for r in sampled])
        response_mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in sampled])
        attention = torch.cat([enc.attention_mask, response_mask], dim=1)
        input_ids = torch.cat([enc.input_ids, responses], dim=1)
        position_ids = (attention.cumsum(-1) - 1).clamp(min=0)
        data = DataProto.from_dict(
            tensors={
                "prompts": enc.input_ids, "responses": responses, "input_ids": input_ids,
                "attention_mask": attention, "position_ids": position_ids,
                "response_mask": response_mask,
            },
            non_tensors={
                "uid": np.array([r["extra_info"]["task"] for r in rows for _ in range(n)],
                                dtype=object),
                "data_source": np.array([r["data_source"] for r in rows for _ in range(n)],
                                        dtype=object),
                "reward_model": np.array([r["reward_model"] for r in rows for _ in range(n)],
                                         dtype=object),
                "extra_info": np.array([dict(r["extra_info"]) for r in rows for _ in range(n)],
                                       dtype=object),
            },
        )  # fmt: skip
        started = time.perf_counter()
        scored = reward_fn(data, return_dict=True)
        gym_s = time.perf_counter() - started
        data.batch["token_level_scores"] = scored["reward_tensor"]
        data.batch["token_level_rewards"] = scored["reward_tensor"]

        model.train()
        with torch.no_grad():
            data.batch["old_log_probs"] = token_logprobs(model, data, prompt_len)
        data = compute_advantage(data, adv_estimator="kgym_trloo", config=None)
        loss, metrics = core_algos.compute_policy_loss_vanilla(
            old_log_prob=data.batch["old_log_probs"], log_prob=token_logprobs(model, data, prompt_len),
            advantages=data.batch["advantages"], response_mask=response_mask,
            loss_agg_mode="seq-mean-token-sum", config=actor,
        )  # fmt: skip
        before = [p.detach().clone() for p in model.parameters()]
        opt.zero_grad()
        loss.backward()
        grad_norm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
        opt.step()
        moved = sum(float((p.detach() - b).abs().sum()) for p, b in zip(model.parameters(), before))
        extra = scored.get("reward_extra_info", {})
        row = {
            "step": step,
            "samples": len(data),
            "score_mean": float(scored["reward_tensor"].sum(-1).mean()),
            "kgym_correct": float(np.mean(extra.get("kgym_correct", [0.0]))),
            "kgym_infra_error": float(np.mean(extra.get("kgym_infra_error", [0.0]))),
            "advantage_abs_mean": float(data.batch["advantages"].abs().mean()),
            "loss": float(loss.detach()),
            "grad_norm": grad_norm,
            "weights_moved_l1": moved,
            "gym_s": gym_s,
            **{k: float(v) for k, v in metrics.items()},
        }
        history.append(row)
        log(f"ppo step {step}: {row}")
    return {"injected_solution_per_group": inject, "steps": history}


def token_logprobs(model: Any, data: Any, prompt_len: int) -> torch.Tensor:
    """The model's log-probability of each response token of verl's batch."""
    batch = data.batch
    logits = (
        model(
            input_ids=batch["input_ids"],
            attention_mask=batch["attention_mask"],
            position_ids=batch["position_ids"],
        )
        .logits[:, prompt_len - 1 : -1]
        .float()
    )
    taken = batch["responses"].unsqueeze(-1)
    return torch.log_softmax(logits, -1).gather(-1, taken).squeeze(-1)


def agent_loop(out: Path) -> dict[str, Any]:
    test = ROOT / "tests" / "test_integrations_verl_agent_loop.py"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    (out / "agent_loop.log").write_text(done.stdout + done.stderr)
    return {
        "command": " ".join(command[1:]),
        "exit_status": done.returncode,
        "summary": (done.stdout.strip().splitlines() or [""])[-1],
        "seconds": time.perf_counter() - started,
    }


def markdown(part: str, r: dict[str, Any], versions: dict[str, str]) -> list[str]:
    """A part's section of the results file (below its run lines)."""
    lines = ["- versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()), ""]
    if part == "main_ppo":
        status = f"exit status {r['exit_status']}, {r['seconds']:.0f} s"
        lines += [f"`{r['command']}`", ""]
        if not r.get("last_error_lines"):
            return lines + [status]
        error = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in r["last_error_lines"]]
        return lines + [f"{status}; the error's last lines:", "", "```", *error, "```"]
    if part == "ppo_steps":
        lines += [
            f"{len(r['steps'])} steps, {r['seconds']:.0f} s; each group's first response the "
            f"task's built-in solution: {r['injected_solution_per_group']}",
            "",
            "| step | samples | mean score | kgym_correct | infra errors | mean abs advantage "
            "| loss | grad norm | weights moved (L1) | gym s |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for m in r["steps"]:
            lines.append(
                f"| {m['step']} | {m['samples']} | {m['score_mean']:.2f} | "
                f"{m['kgym_correct']:.2f} | {m['kgym_infra_error']:.2f} | "
                f"{m['advantage_abs_mean']:.3f} | {m['loss']:.1f} | {m['grad_norm']:.1f} | "
                f"{m['weights_moved_l1']:.1f} | {m['gym_s']:.1f} |"
            )
        return lines
    if part == "agent_loop":
        return lines + [
            f"`python {r['command']}`: exit status {r['exit_status']}, {r['summary']}",
        ]
    raise ValueError(part)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--parts", default="main_ppo,ppo_steps,agent_loop")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--samples", type=int, default=2, help="samples per prompt (verl's rollout.n)")
    p.add_argument("--main-ppo-timeout", type=float, default=1500.0)
    p.add_argument(
        "--no-inject",
        dest="inject",
        action="store_false",
        help="keep every sampled response (a random tiny model writes no kernel: every reward "
        "is then 0); by default each group's first response is the task's built-in solution, "
        "so the gym's rewards differ within the group and the update is not zero",
    )
    p.add_argument("--json", action="store_true", help="print results.json's content")
    args = p.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    import datasets

    from kgym.evaluation.prompts import Prompts
    from kgym.evaluation.tasksets import load_task_set
    from kgym.integrations.verl import dataset_rows

    tasks = load_task_set("builtin").tasks[:2]
    model = tiny_policy(out, tasks, Prompts.load())
    data = out / "kgym.parquet"
    datasets.Dataset.from_list(dataset_rows(tasks, Prompts.load())).to_parquet(str(data))
    results_file = out / "results.json"
    results = json.loads(results_file.read_text()) if results_file.exists() else {}
    command = "python bench/verl/run.py " + " ".join(argv if argv is not None else sys.argv[1:])
    results["versions"] = versions()
    results["tasks"] = [t.task.id for t in tasks]
    os.environ.setdefault("KGYM_SERVER", "")  # the reward evaluates in its own process
    for part in args.parts.split(","):
        started = time.perf_counter()
        if part == "main_ppo":
            results[part] = main_ppo(out, model, data, args.main_ppo_timeout)
        elif part == "ppo_steps":
            results[part] = ppo_steps(out, model, tasks, args.steps, args.samples, args.inject)
        elif part == "agent_loop":
            results[part] = agent_loop(out)
        else:
            raise SystemExit(f"no part {part!r}")
        results[part]["seconds"] = time.perf_counter() - started
        results_file.write_text(json.dumps(results, indent=1) + "\n")
        log(f"{part} done in {results[part]['seconds']:.0f} s")
        lines = run_lines(command) + markdown(part, results[part], results["versions"])
        record_part(results_path(HERE), TITLE, part, lines, results[part], False)
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
