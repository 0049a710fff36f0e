"""The gym as verl's multi-turn agent loop, against verl's own AgentLoopBase and continuous-token
merging, with a stand-in for verl's inference server (it answers a wrong kernel, then the
right one) and the real gym on the CPU. Skipped where verl is not installed: CI does not install
it (verl 0.9.1 pins transformers<5.11 and brings ray; docs/train.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verl.experimental.agent_loop.agent_loop")
pytest.importorskip("tokenizers")

from omegaconf import OmegaConf  # noqa: E402
from verl.experimental.agent_loop.agent_loop import DictConfigWrap  # noqa: E402
from verl.utils.dataset.rl_dataset import RLHFDataset  # noqa: E402
from verl.workers.rollout.replica import TokenOutput  # noqa: E402

from kgym.evaluation.prompts import Prompts  # noqa: E402
from kgym.evaluation.tasksets import load_task_set, select  # noqa: E402
from kgym.integrations import verl as kv  # noqa: E402
from kgym.integrations.trl import local_evaluator  # noqa: E402
from kgym.integrations.verl_agent_loop import KgymAgentLoop  # noqa: E402
from kgym.train.policy import tiny_tokenizer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
WRONG = (ROOT / "tasks" / "wrong" / "01_relu__numel_from_last_dim.py").read_text()
RIGHT = (ROOT / "tasks" / "solutions" / "01_relu.py").read_text()
TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}</s>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


class StandInServer:
    """verl's server manager: answers each request with the next kernel, as token ids with a
    log-probability each, and keeps what it was asked."""

    def __init__(self, tokenizer: Any, answers: list[str]) -> None:
        self.tokenizer = tokenizer
        self.answers = list(answers)
        self.prompts: list[list[int]] = []

    async def generate(
        self, request_id: str, prompt_ids: list[int], sampling_params: dict[str, Any], **kw: Any
    ) -> TokenOutput:
        self.prompts.append(list(prompt_ids))
        ids = self.tokenizer(self.answers.pop(0)).input_ids + [self.tokenizer.eos_token_id]
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="completed")


def test_a_trajectory_takes_the_gyms_feedback_into_its_next_turn() -> None:
    task = select(load_task_set("builtin").tasks, ["01_relu"], None)[0]
    row = kv.dataset_rows([task], Prompts.load(), agent_name="kgym_gym")[0]
    assert row["agent_name"] == "kgym_gym" and row["extra_info"]["task"] == "01_relu"
    tokenizer = tiny_tokenizer([task.task.source, WRONG, RIGHT], 400)
    tokenizer.chat_template = TEMPLATE
    server = StandInServer(tokenizer, [WRONG, RIGHT])
    config = OmegaConf.create(
        {"actor_rollout_ref": {"rollout": {"prompt_length": 8192, "response_length": 8192}}}
    )

    async def roll() -> Any:
        loop = KgymAgentLoop(
            trainer_config=DictConfigWrap(config),
            server_manager=server,
            tokenizer=tokenizer,
            processor=None,
            dataset_cls=RLHFDataset,
            data_config=DictConfigWrap(OmegaConf.create({})),
            evaluate=local_evaluator(device="cpu", trials=2),
            turns=2,
        )
        return await loop.run({"temperature": 1.0}, raw_prompt=row["prompt"], **row)

    out = asyncio.run(roll())
    verdicts = out.extra_fields["kgym_verdicts"]
    assert verdicts[0] != "ok" and verdicts[1] == "ok", verdicts
    scores = out.extra_fields["turn_scores"]
    assert scores[0] == 0.0 and scores[1] > 0 and out.reward_score == scores[1]
    assert out.num_turns == 4
    # The model's tokens (mask 1, the server's log-probabilities) and the gym's feedback
    # between them (mask 0, log-probability 0).
    mask, logprobs = out.response_mask, out.response_logprobs
    assert len(out.response_ids) == len(mask) == len(logprobs)
    runs = [mask[0]]
    for a, b in zip(mask, mask[1:]):
        if a != b:
            runs.append(b)
    assert runs == [1, 0, 1], runs
    assert all(lp == -0.5 for lp, m in zip(logprobs, mask) if m == 1)
    assert all(lp == 0.0 for lp, m in zip(logprobs, mask) if m == 0)
    # The second request was the whole conversation so far: the prompt, the first answer and
    # the feedback, which names what went wrong.
    assert server.prompts[1][: len(out.prompt_ids)] == out.prompt_ids
    assert len(server.prompts[1]) == len(out.prompt_ids) + mask.index(1, mask.index(0))
    feedback = tokenizer.decode(
        [t for t, m in zip(out.response_ids, mask) if m == 0], skip_special_tokens=True
    )
    assert "incorrect" in feedback.lower() or "differ" in feedback.lower(), feedback[:300]


def test_the_loops_options_are_checked_when_verl_builds_it() -> None:
    config = OmegaConf.create({"actor_rollout_ref": {"rollout": {"response_length": 64}}})
    common: dict[str, Any] = {
        "trainer_config": DictConfigWrap(config),
        "server_manager": None,
        "tokenizer": None,
        "processor": None,
        "dataset_cls": RLHFDataset,
        "data_config": DictConfigWrap(OmegaConf.create({})),
        "evaluate": local_evaluator(device="cpu", trials=2),
    }
    with pytest.raises(ValueError, match="turns"):
        KgymAgentLoop(**common, turns=0)
    with pytest.raises(ValueError):
        KgymAgentLoop(**common, reward="no_such_reward")
    loop = KgymAgentLoop(**common, turns=5, reward="staged", name="kgym_gym")
    assert loop.turns == 5
