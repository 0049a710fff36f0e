"""kgym train with rollouts on an OpenAI-compatible server (engine.py), over real HTTP against a
stand-in server (tests/openai_double.py): token ids and log-probabilities read, weights sent
before every step (full model or LoRA adapter), the sampler's log-probabilities matching the
trainer's once synchronised, and bad answers refused."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

import torch  # noqa: E402
from openai_double import InferenceDouble, save_tiny_model  # noqa: E402

from kgym.train import loss, rollout  # noqa: E402
from kgym.train.config import EngineConfig, RolloutConfig, load_config  # noqa: E402
from kgym.train.engine import EngineError, OpenAIEngine, parse_choice  # noqa: E402
from kgym.train.loop import train  # noqa: E402

PROMPTS = [
    {"prompt": "write relu", "reference": "tl.maximum(x, 0.0)"},
    {"prompt": "write gelu", "reference": "0.5 * x * (1 + tl.erf(x))"},
]


def _config(tmp_path: Path, model: Path, url: str, sync: str, extra: str = "") -> Path:
    config = tmp_path / "engine.yaml"
    config.write_text(
        f"""
model: {{path: {model}, device: cpu{extra}}}
data:
  prompts:
    - {{prompt: "write relu", reference: "tl.maximum(x, 0.0)"}}
    - {{prompt: "write gelu", reference: "0.5 * x * (1 + tl.erf(x))"}}
rollout: {{samples_per_prompt: 2, max_new_tokens: 8}}
engine: {{kind: openai, url: "{url}", model: tiny, sync: {sync}, concurrency: 4}}
optim: {{lr: 0.01}}
run: {{steps: 3, checkpoint_every: 0, seed: 3}}
"""
    )
    return config


def test_a_choice_must_carry_token_ids_and_log_probabilities() -> None:
    ok = {"logprobs": {"tokens": ["token_id:5", "token_id:0"], "token_logprobs": [-0.5, -1.0]}}
    assert parse_choice(ok) == ([5, 0], [-0.5, -1.0])
    with pytest.raises(EngineError, match="return_tokens_as_token_ids"):
        parse_choice({"logprobs": {"tokens": ["hello"], "token_logprobs": [-0.1]}})
    with pytest.raises(EngineError, match="equal length"):
        parse_choice({"logprobs": {"tokens": ["token_id:1"], "token_logprobs": []}})
    with pytest.raises(EngineError, match="log-probability"):
        parse_choice({"logprobs": {"tokens": ["token_id:1"], "token_logprobs": [0.3]}})
    with pytest.raises(EngineError, match="log-probability"):
        parse_choice({"logprobs": {"tokens": ["token_id:1"], "token_logprobs": [float("nan")]}})
    with pytest.raises(EngineError, match="no logprobs"):
        parse_choice({"text": "x"})


def test_a_server_that_does_not_answer_is_a_clear_error(tmp_path: Path) -> None:
    engine = OpenAIEngine(
        EngineConfig(kind="openai", url="http://127.0.0.1:9", timeout_s=2), tmp_path
    )
    with pytest.raises(EngineError, match="did not answer"):
        engine.complete([[1, 2]], RolloutConfig(max_new_tokens=4))


def test_bad_engine_configs_are_refused(tmp_path: Path) -> None:
    for body, message in (
        ("engine: {kind: openai}", "url"),
        ("engine: {kind: vllm, url: x}", "kind"),
        ("engine: {kind: openai, url: x, sync: lora}", "lora"),
        ("engine: {kind: openai, url: x, sync: disk}\nmodel: {lora: {r: 4}}", "lora"),
    ):
        config = tmp_path / "bad.yaml"
        config.write_text(
            body
            + "\ndata: {prompts: [{prompt: a, reference: b}]}\nrollout: {samples_per_prompt: 2}\n"
        )
        with pytest.raises(ValueError, match=message):
            load_config(config)


def test_the_server_samples_from_the_weights_it_is_sent_every_step(tmp_path: Path) -> None:
    model = save_tiny_model(tmp_path / "model", [p[k] for p in PROMPTS for k in p] * 4)
    double = InferenceDouble()  # no weights until the trainer sends them
    try:
        cfg = load_config(_config(tmp_path, model, double.url, "disk"))
        history = train(cfg, tmp_path / "run", quiet=True)
        assert [m["step"] for m in history] == [1, 2, 3]
        # One full model per step, written for the server and loaded by it, in order.
        assert [Path(p).name for p in double.weight_loads] == ["step-1", "step-2", "step-3"]
        assert double.requests == 3 * 2 * 2  # steps x prompts x samples
        assert all(m["time/sync_s"] > 0 and math.isfinite(m["loss"]) for m in history)
        # Only the weights the server holds now are kept on disk.
        assert [p.name for p in (tmp_path / "run" / "engine_weights").iterdir()] == ["step-3"]

        # Synchronised, the sampler's log-probabilities are the trainer's; once the policy
        # moves without a new synchronisation, they are not.
        from kgym.train.policy import load_policy

        policy = load_policy(cfg.model)
        engine = OpenAIEngine(cfg.engine, tmp_path / "probe")
        engine.sync(policy, 1)
        batch = rollout.sample(policy, [p["prompt"] for p in PROMPTS], cfg.rollout, engine)
        mask = batch.completion_mask
        assert batch.sequences.shape[0] == 4 and float(mask.sum()) > 0
        with torch.no_grad():
            trained, _ = loss.token_logprobs(policy.model, batch)
            gap = float(((trained - batch.old_logprobs).abs() * mask).sum() / mask.sum())
            assert gap < 1e-4
            for p in policy.model.parameters():
                p.add_(0.05 * torch.randn_like(p))
            moved, _ = loss.token_logprobs(policy.model, batch)
        assert float(((moved - batch.old_logprobs).abs() * mask).sum() / mask.sum()) > 1e-2
    finally:
        double.close()


def test_lora_adapters_are_sent_and_requests_name_the_newest(tmp_path: Path) -> None:
    pytest.importorskip("peft")
    model = save_tiny_model(tmp_path / "model", [p[k] for p in PROMPTS for k in p] * 4)
    double = InferenceDouble(base_model=str(model))
    try:
        extra = ", lora: {r: 4, alpha: 8, target_modules: [c_attn]}"
        cfg = load_config(_config(tmp_path, model, double.url, "lora", extra))
        cfg.run.steps = 2
        train(cfg, tmp_path / "run", quiet=True)
        assert [Path(p).name for p in double.weight_loads] == ["step-1", "step-2"]
        assert list(double.adapters) == ["kgym-step-2"]  # the previous one was unloaded
        assert set(double.models_requested) == {"kgym-step-1", "kgym-step-2"}
    finally:
        double.close()


def test_the_gym_loop_samples_on_the_server_and_corrects_against_it(tmp_path: Path) -> None:
    from kgym.evaluation.prompts import Prompts
    from kgym.evaluation.tasksets import load_task_set

    tasks = load_task_set("builtin").tasks[:2]
    prompts = Prompts.load()
    corpus = [t.task.source for t in tasks] + [prompts.problem.template, prompts.feedback.template]
    model = save_tiny_model(tmp_path / "model", corpus)
    double = InferenceDouble()
    try:
        config = tmp_path / "gym.yaml"
        config.write_text(
            f"""
model: {{path: {model}, device: cpu}}
data: {{task_set: builtin, tasks: [{tasks[0].task.id}, {tasks[1].task.id}]}}
rollout: {{samples_per_prompt: 2, turns: 2, max_new_tokens: 8}}
engine: {{kind: openai, url: "{double.url}", model: tiny, sync: disk}}
reward: {{kind: dr_kernel}}
advantage: {{estimator: trloo}}
mismatch: {{kind: tis}}
gym: {{device: cpu, trials: 1, jobs: 4, in_process: true}}
run: {{steps: 1}}
"""
        )
        (m,) = train(load_config(config), tmp_path / "run", quiet=True)
        assert m["gym_evaluations"] == 2 * 2 * 2
        assert double.requests == 2 * 2 * 2  # every turn's completion came from the server
        # The server held the trainer's weights: its log-probabilities are the trainer's.
        assert m["mismatch/mean_abs_logratio"] < 1e-3
    finally:
        double.close()
