"""The two recipes' presets as their sources run them: each pays its own answer format and not
another; PRS and every mismatch correction change the update on every path that can honour
them, and a config that cannot is refused."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from openai_double import InferenceDouble, save_tiny_model  # noqa: E402

from kgym import cli  # noqa: E402
from kgym.check import CheckOptions, check  # noqa: E402
from kgym.rewards import compute_reward  # noqa: E402
from kgym.tasks import find_task  # noqa: E402
from kgym.train import reward  # noqa: E402
from kgym.train.config import load_config, preset_path  # noqa: E402
from kgym.train.data import KERNEL_CODER_PREFILL, kernelbook_prompts, row_text  # noqa: E402
from kgym.train.loop import train  # noqa: E402
from kgym.train.optimize import corrected_update  # noqa: E402
from kgym.train.policy import load_policy, tiny_tokenizer  # noqa: E402
from kgym.train.rollout import pack  # noqa: E402
from kgym.train.update import make_optimizer  # noqa: E402

TINY = "{tiny: {n_embd: 32, n_layer: 1, n_head: 2, n_positions: 512}, device: cpu}"


def builtin_kernelbook(tmp_path: Path) -> Path:
    out = tmp_path / "kernelbook.jsonl"
    assert cli.main(["data", "kernelbook", "--out", str(out), "--json"]) == 0
    return out


def coder_config(tmp_path: Path, extra: str = "") -> Any:
    config = tmp_path / "coder.yaml"
    config.write_text(
        f"preset: kernel_coder\nmodel: {{path: some/model}}\n"
        f"data: {{kernelbook: {builtin_kernelbook(tmp_path)}}}\n{extra}"
    )
    return load_config(config)


def test_kernel_coders_preset_pays_its_own_format_and_no_other(tmp_path: Path) -> None:
    cfg = coder_config(tmp_path)
    reference = find_task("01_relu").solution_path().read_text().strip()  # type: ignore[union-attr]
    own = (
        " The input is a ReLU: one elementwise kernel.\n</think>\n<answer>\n```python\n"
        + reference
        + "\n```\n</answer>"
    )
    plain = "```python\n" + reference + "\n```"  # kgym eval's format: one python block
    think_only = " It is a ReLU.\n</think>\nI could not write it."
    parts = reward.rewards([own, plain, think_only, ""], [reference] * 4, cfg)
    assert parts["format"].tolist() == [1.0, 0.0, 0.5, 0.0]
    assert parts["similarity"][0] == 1.0 and parts["similarity"][1] == 0.0
    assert parts["total"][0] == 2.0  # the most the recipe pays
    # The pre-fill is the prompt's: a completion that only repeats it earns nothing.
    assert reward.rewards([KERNEL_CODER_PREFILL], [reference], cfg)["total"][0] == 0.0


def test_kernel_coders_prompt_asks_for_tags_and_prefills_the_answer(tmp_path: Path) -> None:
    rows = kernelbook_prompts(builtin_kernelbook(tmp_path), "train", 0.0, 2, "kernel_coder")
    system, user = rows[0]["messages"]
    assert system["role"] == "system" and "Triton kernel developer" in system["content"]
    assert "<think> </think>" in user["content"] and "<answer> </answer>" in user["content"]
    assert "class Model" in user["content"]
    assert rows[0]["prefill"] == "Let me solve this step by step.\n<think>"
    # role-tagged text (no chat template), and a chat template continuing the assistant turn
    tok = tiny_tokenizer(["a b c"], 270)
    assert row_text(rows[0], tok).endswith("assistant: Let me solve this step by step.\n<think>")
    tok.chat_template = (
        "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% if not loop.last %}<|end|>"
        "{% endif %}{% endfor %}{% if add_generation_prompt %}<|end|><|assistant|>{% endif %}"
    )
    rendered = row_text(rows[0], tok)
    assert rendered.endswith("<|assistant|>Let me solve this step by step.\n<think>")
    # kgym's style: kgym eval's problem prompt, no pre-fill
    kgym_rows = kernelbook_prompts(builtin_kernelbook(tmp_path), "train", 0.0, 1, "kgym")
    assert kgym_rows[0]["prefill"] == "" and len(kgym_rows[0]["messages"]) == 1


def test_dr_kernels_preset_pays_one_python_block_and_not_prose(tmp_path: Path) -> None:
    """Dr. Kernel's answer is kgym eval's: ModelNew in a python block. On a CPU the most it
    earns is the correctness term (no timing, no profile); code outside a block earns 0."""
    cfg = load_config(preset_path("dr_kernel"), {"model": {"path": "x"}})
    source = find_task("01_relu").solution_path().read_text()  # type: ignore[union-attr]
    options = CheckOptions(device="cpu", trials=1, torch_compute="hybrid")
    own = "Here is the kernel.\n\n```python\n" + source + "\n```\n"
    prose = "Here is the kernel. " + source.replace("\n", " ")
    rewards = [
        compute_reward(check(find_task("01_relu"), text, options), cfg.gym_reward_spec()).total
        for text in (own, prose)
    ]
    assert rewards == [1.0, 0.0]


def test_prs_is_refused_where_there_is_no_profile_to_decide_on(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"\[prs\]"):
        coder_config(tmp_path, "prs: {enabled: true}\n")
    with pytest.raises(ValueError, match="kernel_coder spec"):
        coder_config(tmp_path, "reward: {kind: kernel_coder, spec: {kind: dr_kernel}}\n")
    with pytest.raises(ValueError, match="spec is read"):
        coder_config(tmp_path, "reward: {kind: similarity, spec: {partial_format: 0.2}}\n")


def _copies(seed: int = 0) -> tuple[Any, Any]:
    cfg = load_config(
        None,
        {
            "model": {"tiny": {"n_embd": 16, "n_layer": 1, "n_head": 2, "n_positions": 64}},
            "data": {"prompts": [{"prompt": "ab", "reference": "c"}]},
            "optim": {"lr": 0.05},
        },
    )
    cfg.model.device = "cpu"
    cfg.model.tokenizer_corpus = ["tl.load(x) tl.store(y) abc def"] * 4
    torch.manual_seed(seed)
    return cfg, load_policy(cfg.model)


def _params(policy: Any) -> torch.Tensor:
    return torch.cat([p.detach().flatten() for p in policy.model.parameters()])


def test_each_mismatch_correction_changes_the_update() -> None:
    """A batch whose sampler's log-probabilities differ from the trainer's (as an inference
    server's do): TIS, MIS and geometric rejection each move the weights otherwise than no
    correction does."""
    cfg, policy = _copies()
    tok = policy.tokenizer
    prompt = list(tok("tl.load(x)").input_ids)
    completions = [list(tok(t).input_ids) for t in ("abc", "def", "tl.store(y)", "abc def")]
    with torch.no_grad():
        probe = pack(
            [prompt] * 4,
            completions,
            [[0.0] * len(c) for c in completions],
            [""] * 4,
            [0] * 4,
            tok.pad_token_id,
            policy.device,
        )
        from kgym.train.loss import token_logprobs

        exact, _ = token_logprobs(policy.model, probe)
    rng = np.random.default_rng(0)
    # the sampler's values: the trainer's, shifted by up to +-1.2 nats per token
    shifted = [
        (exact[i, : len(c)] + torch.as_tensor(rng.uniform(-1.2, 1.2, len(c)))).tolist()
        for i, c in enumerate(completions)
    ]
    batch = pack(
        [prompt] * 4, completions, shifted, [""] * 4, [0] * 4, tok.pad_token_id, policy.device
    )
    adv = np.array([1.0, -1.0, 0.5, -0.5])
    after: dict[str, torch.Tensor] = {}
    logged: dict[str, dict[str, Any]] = {}
    for kind in ("none", "tis", "mis", "geometric"):
        run_cfg = copy.deepcopy(cfg)
        run_cfg.mismatch.kind = kind
        run_policy = copy.deepcopy(policy)
        opt, sched = make_optimizer(run_policy.model, run_cfg.optim, 10)
        logged[kind] = corrected_update(run_policy, run_cfg, opt, sched, batch, adv)
        after[kind] = _params(run_policy)
    before = _params(policy)
    assert not torch.equal(after["none"], before)
    for kind in ("tis", "mis"):
        assert not torch.allclose(after[kind], after["none"]), kind
    # every sequence leaves [0.999, 1.001]: geometric rejection drops them all, no step
    assert logged["geometric"]["mismatch/geometric_dropped"] == 4
    assert torch.equal(after["geometric"], before)
    assert logged["tis"]["mismatch/tis_capped_tokens"] > 0.0  # ratios above 2 were capped
    assert logged["mis"]["mismatch/mis_masked_tokens"] > 0.0
    assert logged["none"]["mismatch/mean_abs_logratio"] > 0.3


def _scripted_gym(lazy: bool) -> Any:
    """A GymContext whose evaluations are scripted: a completion with an even number of
    characters is a correct kernel with PR 0.1 (lazy), or 0.9; any other is incorrect."""
    import contextlib

    from kgym.evaluation.prompts import Prompts
    from kgym.evaluation.tasksets import load_task_set
    from kgym.train.gym_step import GymContext

    def evaluate(task: Any, completion: str) -> dict[str, Any]:
        correct = len(completion) % 2 == 0
        return {
            "status": "ok" if correct else "incorrect",
            "compiled": True,
            "correct": correct,
            "hacked": False,
            "findings": [],
            "timing": {"available": False},
            "profile": {"available": correct, "triton_share": 0.1 if lazy else 0.9},
        }

    tasks = load_task_set("builtin").tasks[:2]
    return GymContext(
        tasks, Prompts.load(), evaluate, lambda r: f"status: {r['status']}", contextlib.ExitStack()
    )


@pytest.mark.parametrize("lazy", [True, False])
def test_prs_changes_the_update_where_kernels_are_lazy(lazy: bool) -> None:
    """With correct but lazy kernels (PR 0.1 < tau 0.3) PRS drops them from the update, so
    only the incorrect samples, all rewarded alike, are left: no step. With PR 0.9 it keeps
    them and the update is the one without PRS."""
    from kgym.train.gym_step import gym_step

    cfg = load_config(
        None,
        {
            "model": {"tiny": {"n_embd": 16, "n_layer": 1, "n_head": 2, "n_positions": 1024}},
            "data": {"tasks": ["*"]},
            "reward": {"kind": "dr_kernel"},
            "rollout": {"samples_per_prompt": 4, "turns": 1, "max_new_tokens": 6},
            "advantage": {"estimator": "trloo"},
            "optim": {"lr": 0.05},
        },
    )
    cfg.model.device = "cpu"
    ctx = _scripted_gym(lazy)
    cfg.model.tokenizer_corpus = [t.task.source for t in ctx.tasks]
    torch.manual_seed(0)
    start = load_policy(cfg.model)
    after, logged = {}, {}
    for prs in (False, True):
        run_cfg = copy.deepcopy(cfg)
        run_cfg.prs.enabled = prs
        policy = copy.deepcopy(start)
        opt, sched = make_optimizer(policy.model, run_cfg.optim, 10)
        torch.manual_seed(1)  # the same samples in both runs
        logged[prs] = gym_step(policy, run_cfg, opt, sched, ctx, 1)
        after[prs] = _params(policy)
    assert logged[False]["prs_kept"] == 1.0
    correct = logged[True]["pass_rate_by_turn"][0]
    assert 0.0 < correct < 1.0  # both kinds of sample were drawn
    assert not torch.equal(after[False], _params(start))
    if lazy:
        assert logged[True]["prs_kept"] == pytest.approx(1.0 - correct)
        assert logged[True]["lazy_rate"] == pytest.approx(correct)
        assert torch.equal(after[True], _params(start))
    else:
        assert logged[True]["prs_kept"] == 1.0 and logged[True]["lazy_rate"] == 0.0
        assert torch.equal(after[True], after[False])


def test_single_turn_on_a_server_applies_the_mismatch_correction(tmp_path: Path) -> None:
    """Single-turn, sampled by an inference server that keeps its first weights (sync none):
    once the policy moves, geometric rejection drops the server's sequences (logged), and the
    trainer's own samples (engine hf) pass it."""
    prompts = [{"prompt": "write relu", "reference": "tl.maximum(x, 0.0)"}]
    model = save_tiny_model(tmp_path / "model", [p[k] for p in prompts for k in p] * 4)
    double = InferenceDouble(str(model))
    try:
        base = {
            "model": {"path": str(model), "device": "cpu"},
            "data": {"prompts": prompts},
            "rollout": {"samples_per_prompt": 4, "max_new_tokens": 8},
            "mismatch": {"kind": "geometric"},
            "optim": {"lr": 0.05},
            "run": {"steps": 3, "checkpoint_every": 0, "tensorboard": "off"},
        }
        served = copy.deepcopy(base)
        served["engine"] = {"kind": "openai", "url": double.url, "model": "tiny", "sync": "none"}
        history = train(load_config(None, served), tmp_path / "served", quiet=True)
        assert history[0]["mismatch/geometric_dropped"] == 0  # the same weights at step 1
        assert history[-1]["mismatch/geometric_dropped"] == 4
        assert history[-1]["mismatch/mean_abs_logratio"] > 1e-3
        local = train(load_config(None, base), tmp_path / "local", quiet=True)
        assert all(m["mismatch/geometric_dropped"] == 0 for m in local)
        assert all(m["mismatch/mean_abs_logratio"] < 1e-4 for m in local)
    finally:
        double.close()


def test_a_kernel_coder_run_logs_its_rewards(tmp_path: Path) -> None:
    kb = builtin_kernelbook(tmp_path)
    config = tmp_path / "kc.yaml"
    config.write_text(
        f"""
preset: kernel_coder
model:
  path: null
  tiny: {{n_embd: 32, n_layer: 1, n_head: 2, n_positions: 256}}
  tokenizer_vocab: 300
  tokenizer_tokens: ["<think>", "</think>", "```python", "```"]
  dtype: float32
  gradient_checkpointing: false
  device: cpu
data: {{kernelbook: {kb}, holdout_fraction: 0.2}}
rollout: {{samples_per_prompt: 2, prompts_per_step: 2, max_new_tokens: 8}}
optim: {{lr: 0.003}}
run: {{steps: 2, checkpoint_every: 0, tensorboard: "off"}}
"""
    )
    assert cli.main(["train", str(config), "--out", str(tmp_path / "run"), "--json"]) == 0
    history = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").open()]
    assert len(history) == 2
    for m in history:
        assert {"reward/format", "reward/similarity", "kl_ref"} <= m.keys()
        assert m["reward/total"] == pytest.approx(m["reward/format"] + m["reward/similarity"])
    assert json.loads((tmp_path / "run" / "config.json").read_text())["loss"]["kl_coef"] == 0.001
