"""kgym train on a CPU: a tiny model made from a config learns Kernel Coder's similarity reward,
and a run resumed from its checkpoint continues exactly as one that never stopped."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from conftest import DEVICE  # noqa: E402
from kgym import cli  # noqa: E402
from kgym.train.config import load_config, preset_path  # noqa: E402
from kgym.train.loop import train  # noqa: E402


def test_a_tiny_model_learns_the_similarity_reward(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert cli.main(["train", "--preset", "similarity_demo", "--out", str(out), "--json"]) == 0
    history = [json.loads(line) for line in (out / "metrics.jsonl").open()]
    assert [m["step"] for m in history] == list(range(1, 41))
    rewards = np.array([m["reward/total"] for m in history])
    first, last = rewards[:10].mean(), rewards[-10:].mean()
    assert last > first + 0.08, (first, last)  # about 0.13 -> 0.34 with this seed
    for m in history:
        for key in ("loss", "entropy", "clip_fraction", "approx_kl", "grad_norm", "tokens_per_s"):
            assert math.isfinite(m[key]), key
        assert 0.0 <= m["reward/similarity"] <= 1.0
    assert (out / "curves.png").stat().st_size > 0
    # The trained policy as a Hugging Face folder: the last checkpoint's weights, and a tokenizer.
    from transformers import AutoModelForCausalLM, AutoTokenizer

    exported = AutoModelForCausalLM.from_pretrained(out / "policy").state_dict()
    trained = torch.load(out / "checkpoint.pt", weights_only=False)["model"]
    assert set(exported) <= set(trained)
    assert all(torch.equal(exported[k], trained[k]) for k in exported)
    tokenizer = AutoTokenizer.from_pretrained(out / "policy")
    assert tokenizer.decode(tokenizer("def f(x):").input_ids) == "def f(x):"


def test_a_resumed_run_matches_one_that_never_stopped(tmp_path: Path) -> None:
    # On the test device: with KGYM_TEST_DEVICE=cuda the checkpoint is read back beside a GPU
    # policy (a resume that mapped it to the GPU once broke on its CPU random-number states).
    def config(steps: int, tensorboard: str = "off"):  # type: ignore[no-untyped-def]
        return load_config(
            preset_path("similarity_demo"),
            {
                "run": {"steps": steps, "checkpoint_every": 3, "tensorboard": tensorboard},
                "model": {"device": DEVICE},
            },
        )

    straight = train(config(6), tmp_path / "straight", quiet=True)
    train(config(3, "on"), tmp_path / "resumed", quiet=True)
    resumed = train(config(6, "on"), tmp_path / "resumed", quiet=True)
    keys = ("reward/total", "loss", "entropy", "grad_norm")
    assert [[m[k] for k in keys] for m in resumed] == [[m[k] for k in keys] for m in straight]
    assert not (tmp_path / "straight" / "tensorboard").exists()

    # The TensorBoard scalars are metrics.jsonl's, one per step across the restart.
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(tmp_path / "resumed" / "tensorboard"))
    events.Reload()
    for key in keys:
        series = events.Scalars(key)
        assert [e.step for e in series] == list(range(1, 7)), key
        assert [e.value for e in series] == pytest.approx([m[key] for m in resumed], rel=1e-6)


def test_bad_configs_are_refused_with_the_key(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("preset: similarity_demo\nloss: {clip_lwo: 0.1}\n")
    with pytest.raises(ValueError, match="clip_lwo"):
        load_config(bad)
    bad.write_text("preset: similarity_demo\nadvantage: {estimator: ppo}\n")
    with pytest.raises(ValueError, match="estimator"):
        load_config(bad)
    bad.write_text("data: {prompts: []}\n")
    with pytest.raises(ValueError, match="prompts"):
        load_config(bad)
    bad.write_text("preset: similarity_demo\noptim: {name: lion}\n")
    with pytest.raises(ValueError, match="name"):
        load_config(bad)


def test_sgd_steps_each_weight_by_its_gradient() -> None:
    from kgym.train import update
    from kgym.train.config import OptimConfig

    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    before = [p.detach().clone() for p in model.parameters()]
    opt, sched = update.make_optimizer(model, OptimConfig(name="sgd", lr=0.1), steps=10)
    assert isinstance(opt, torch.optim.SGD)
    loss = model(torch.randn(5, 4)).pow(2).mean()
    grads = torch.autograd.grad(loss, list(model.parameters()), retain_graph=True)
    update.step(model, opt, sched, loss, max_norm=1e9)
    for p, b, g in zip(model.parameters(), before, grads, strict=True):
        torch.testing.assert_close(p.detach(), b - 0.1 * g)


def test_the_full_loop_with_the_gym_produces_every_metric(tmp_path: Path) -> None:
    config = tmp_path / "gym.yaml"
    config.write_text(
        """
model: {tiny: {n_embd: 32, n_layer: 1, n_head: 2, n_positions: 2048}, tokenizer_vocab: 400, device: cpu}
data: {task_set: builtin, tasks: [01_relu, 02_gelu]}
rollout: {samples_per_prompt: 2, turns: 2, max_new_tokens: 12}
reward: {kind: dr_kernel}
advantage: {estimator: trloo}
prs: {enabled: true}
mismatch: {kind: tis}
gym: {device: cpu, trials: 1, jobs: 4, in_process: true}
optim: {lr: 0.001}
run: {steps: 2, checkpoint_every: 1}
"""
    )
    history = train(load_config(config), tmp_path / "run", quiet=True)
    assert [m["step"] for m in history] == [1, 2]
    for m in history:
        assert m["gym_evaluations"] == 2 * 2 * 2  # tasks x samples x turns
        assert len(m["pass_rate_by_turn"]) == len(m["fast_1.2_by_turn"]) == 2
        assert all(0.0 <= v <= 1.0 for v in m["pass_rate_by_turn"])
        assert 0.0 <= m["hack_rate"] <= 1.0 and 0.0 <= m["prs_kept"] <= 1.0
        assert len(m["pass_rate_by_task"]) == 2
        assert all(0.0 <= v <= 1.0 for v in m["pass_rate_by_task"].values())
        assert sum(m["statuses"].values()) == m["gym_evaluations"]
        # the sampler and the trainer are the same model: their log-probabilities agree
        assert m["mismatch/mean_abs_logratio"] < 1e-3
        for key in ("reward/total", "loss", "entropy", "grad_norm", "gym_evaluations_per_s"):
            assert math.isfinite(m[key]), key
        assert m["time/gym_s"] > 0 and m["time/rollout_s"] > 0
    assert (tmp_path / "run" / "checkpoint.pt").exists()


def kernelbook_file(path: Path, n: int = 12) -> Path:
    rows = [
        {
            "uuid": i,
            "module_name": f"Mod{i}",
            "entry_point": f"Mod{i}",
            "python_code": f"import torch\nclass Mod{i}(torch.nn.Module):\n    def forward(self, x):\n        return x * {i}\n",
            "triton_code": f"@triton.jit\ndef mul_{i}(x_ptr, y_ptr):\n    tl.store(y_ptr, tl.load(x_ptr) * {i})\n",
            "licenses": ["MIT"],
            "synthetic": False,
            "repo_link": "",
        }
        for i in range(n)
    ] + [
        {
            "uuid": 99,
            "module_name": "Empty",
            "entry_point": "Empty",
            "python_code": "",
            "triton_code": "",
            "licenses": [],
            "synthetic": True,
            "repo_link": "",
        }
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_kernelbook_rows_become_prompts_split_stably(tmp_path: Path) -> None:
    from kgym.train.data import kernelbook_prompts

    file = kernelbook_file(tmp_path / "kernelbook.jsonl")
    train_rows = kernelbook_prompts(file, "train", 0.25, 0)
    held = kernelbook_prompts(file, "heldout", 0.25, 0)
    prompt = {r["id"]: r["messages"][-1]["content"] for r in train_rows}
    assert {r["id"] for r in train_rows}.isdisjoint({r["id"] for r in held})
    assert len(train_rows) + len(held) == 12  # the row without programs is skipped
    assert kernelbook_prompts(file, "train", 0.25, 0) == train_rows  # the same split every time
    first = train_rows[0]
    assert "ModelNew" in prompt[first["id"]] and f"class Mod{first['id']}" in prompt[first["id"]]
    assert first["reference"].startswith("@triton.jit")
    assert len(kernelbook_prompts(file, "train", 0.25, 3)) == 3


def test_training_on_kernelbook_draws_prompts_per_step(tmp_path: Path) -> None:
    file = kernelbook_file(tmp_path / "kernelbook.jsonl")
    config = tmp_path / "kb.yaml"
    config.write_text(
        f"""
model: {{tiny: {{n_embd: 32, n_layer: 1, n_head: 2, n_positions: 1024}}, device: cpu}}
data: {{kernelbook: {file}, holdout_fraction: 0.2}}
rollout: {{samples_per_prompt: 2, max_new_tokens: 8, prompts_per_step: 3}}
optim: {{lr: 0.001}}
run: {{steps: 3}}
"""
    )
    history = train(load_config(config), tmp_path / "run", quiet=True)
    assert [m["step"] for m in history] == [1, 2, 3]
    assert all(m["tokens"] > 0 and 0.0 <= m["reward/similarity"] <= 1.0 for m in history)


@pytest.mark.parametrize("lora", [False, True])
def test_a_kl_penalty_to_the_initial_policy_full_or_lora(tmp_path: Path, lora: bool) -> None:
    if lora:
        pytest.importorskip("peft")
    overrides: dict = {"run": {"steps": 4}, "loss": {"kl_coef": 0.1}, "optim": {"lr": 0.01}}
    if lora:
        overrides["model"] = {"lora": {"r": 4, "alpha": 8, "target_modules": ["c_attn"]}}
    history = train(
        load_config(preset_path("similarity_demo"), overrides), tmp_path / "r", quiet=True
    )
    kl = [m["kl_ref"] for m in history]
    assert kl[0] == pytest.approx(0.0, abs=1e-6)  # the first step: the policy is the reference
    assert kl[-1] > 0.0 and all(math.isfinite(v) for v in kl)  # it moved away, and paid for it
    # With LoRA the exported policy is the adapter; without, the whole model.
    exported = {p.name for p in (tmp_path / "r" / "policy").iterdir()}
    assert ("adapter_config.json" in exported) == lora
    assert "tokenizer.json" in exported


def test_the_paper_presets_load_with_a_model_and_data(tmp_path: Path) -> None:
    kb = kernelbook_file(tmp_path / "kb.jsonl")
    config = tmp_path / "c.yaml"
    config.write_text(
        f"preset: kernel_coder\nmodel: {{path: some/model}}\ndata: {{kernelbook: {kb}}}\n"
    )
    coder = load_config(config)
    assert (coder.reward.kind, coder.advantage.estimator, coder.rollout.turns) == (
        "kernel_coder",
        "grpo",
        1,
    )
    config.write_text("preset: dr_kernel\nmodel: {path: some/model}\n")
    drk = load_config(config)
    assert (drk.advantage.estimator, drk.rollout.turns, drk.rollout.samples_per_prompt) == (
        "trloo",
        3,
        16,
    )
    assert drk.prs.enabled and drk.mismatch.kind == "geometric" and drk.uses_gym


def test_the_gym_loop_evaluates_on_a_named_gym_service(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """gym.server: the evaluations go to a running service (a host's, or a pool's front door),
    with its bearer token from gym.token_env; a wrong token is a clear error."""
    from kgym.client import GymError
    from kgym.local_gym import LocalGym

    token_file = tmp_path / "token"
    token_file.write_text("s3cret-token\n")
    with LocalGym(
        tmp_path / "gym", ["--no-cache", "--cpu-workers", "2", "--token-file", str(token_file)]
    ) as gym:
        config = tmp_path / "served.yaml"
        config.write_text(
            f"""
model: {{tiny: {{n_embd: 32, n_layer: 1, n_head: 2, n_positions: 2048}}, tokenizer_vocab: 400, device: cpu}}
data: {{task_set: builtin, tasks: [01_relu, 02_gelu]}}
rollout: {{samples_per_prompt: 2, turns: 1, max_new_tokens: 8}}
reward: {{kind: dr_kernel}}
gym: {{device: cpu, trials: 1, jobs: 2, server: "{gym.url}", token_env: TRAIN_GYM_TOKEN}}
run: {{steps: 1}}
"""
        )
        monkeypatch.setenv("TRAIN_GYM_TOKEN", "s3cret-token")
        (m,) = train(load_config(config), tmp_path / "run", quiet=True)
        assert m["gym_evaluations"] == 2 * 2
        assert not (tmp_path / "run" / "gym").exists()  # no gym of its own was started
        monkeypatch.setenv("TRAIN_GYM_TOKEN", "wrong")
        with pytest.raises(GymError, match="401|token|auth"):
            train(load_config(config), tmp_path / "run2", quiet=True)
