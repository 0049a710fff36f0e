"""kgym inside TRL (installed from PyPI): reward functions called as GRPOTrainer calls them, the
multi-turn environment, and one real GRPOTrainer step with kgym's similarity reward."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

trl = pytest.importorskip("trl")
pytest.importorskip("transformers")
datasets = pytest.importorskip("datasets")

from kgym.integrations.trl import (  # noqa: E402
    KgymEnvironment,
    format_reward,
    gym_reward,
    local_evaluator,
    similarity_reward,
)
from kgym.tasks import find_task  # noqa: E402


def solution(task: str) -> str:
    path = find_task(task).solution_path()
    assert path is not None
    return "```python\n" + path.read_text() + "\n```"


def trl_columns(n: int, **columns: list) -> dict:
    """What GRPOTrainer adds beside the dataset's columns."""
    return {
        "trainer_state": None,
        "log_extra": lambda *a: None,
        "log_metric": lambda *a: None,
        **columns,
    }


def test_the_gym_reward_with_trl_calling_convention() -> None:
    reward = gym_reward("dr_kernel", evaluate=local_evaluator(device="cpu", trials=1))
    completions = [
        solution("01_relu"),
        [{"role": "assistant", "content": "no kernel here"}],  # conversational
    ]
    got = reward(
        prompts=["p", "p"],
        completions=completions,
        completion_ids=[[1], [2]],
        **trl_columns(2, task=["01_relu", "01_relu"]),
    )
    assert len(got) == 2 and got[0] is not None and got[1] is not None
    assert got[0] > got[1]
    with pytest.raises(ValueError, match="task"):
        reward(prompts=["p"], completions=["x"], completion_ids=[[1]], **trl_columns(1))


def test_similarity_and_format_rewards() -> None:
    sim = similarity_reward()(
        prompts=["p"], completions=["tl.load(x)"], **trl_columns(1, reference=["tl.load(x)"])
    )
    assert sim == [1.0]
    fmt = format_reward()(prompts=["p"], completions=["think</think>\n```python\nx=1\n```"])
    assert fmt == [1.0]


def test_the_multi_turn_environment_runs_the_gym_as_a_tool() -> None:
    KgymEnvironment.evaluate = staticmethod(local_evaluator(device="cpu", trials=1))
    try:
        env = KgymEnvironment()
        assert env.reset(task="01_relu", prompt="...") is None
        first = env.check_kernel("not a kernel")
        assert "compile_error" in first.lower() or "error" in first.lower()
        second = env.check_kernel(solution("01_relu"))
        assert "ok" in second.lower()
        assert env.get_reward() > 0 and math.isfinite(env.get_reward())
    finally:
        KgymEnvironment.evaluate = None


def test_one_grpo_trainer_step_with_the_similarity_reward(tmp_path: Path) -> None:
    from kgym.train.config import ModelConfig
    from kgym.train.policy import load_policy

    policy = load_policy(
        ModelConfig(
            tiny={"n_embd": 32, "n_layer": 1, "n_head": 2, "n_positions": 128},
            tokenizer_corpus=["Write tl.load", "tl.load(x_ptr + offs)"],
            tokenizer_vocab=280,
            device="cpu",
        )
    )
    data = datasets.Dataset.from_dict(
        {"prompt": ["Write tl.load: "] * 4, "reference": ["tl.load(x_ptr + offs)"] * 4}
    )
    config = trl.GRPOConfig(
        output_dir=str(tmp_path / "out"),
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=8,
        max_steps=1,
        report_to=[],
        use_cpu=True,
        logging_steps=1,
        save_strategy="no",
    )
    trainer = trl.GRPOTrainer(
        model=policy.model,
        reward_funcs=[similarity_reward()],
        args=config,
        train_dataset=data,
        processing_class=policy.tokenizer,
    )
    trainer.train()
    logged = [entry for entry in trainer.state.log_history if "reward" in entry]
    assert logged and 0.0 <= logged[0]["reward"] <= 1.0
