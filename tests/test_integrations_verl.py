"""kgym's verl plugin: TRLOO on verl's token layout (turns are runs of model tokens), the reward
function's signature and fields, and verl's own compute_advantage with ``kgym_trloo`` where verl
is importable (CI does not install verl: it brings ray; see docs/train.md)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kgym.evaluation.prompts import Prompts
from kgym.evaluation.tasksets import load_task_set
from kgym.integrations import verl as kv
from kgym.rewards import compute_reward
from kgym.rl import advantages_dense

# Two prompts (uids a, b), two trajectories each. Model tokens are 1 in the mask; 0 are the
# gym's feedback tokens between turns, and padding at the end.
MASK = torch.tensor(
    [
        [1, 1, 0, 0, 1, 1, 1, 0],  # a: 2 turns
        [1, 1, 1, 0, 1, 0, 0, 0],  # a: 2 turns
        [1, 1, 1, 1, 0, 0, 0, 0],  # b: 1 turn
        [1, 0, 0, 1, 0, 1, 1, 0],  # b: 3 turns
    ]
)
UID = np.array(["a", "a", "b", "b"], dtype=object)


def _rewards() -> torch.Tensor:
    r = torch.zeros(MASK.shape)
    # A reward on the last token of each turn (what a multi-turn reward puts there).
    r[0, 1], r[0, 6] = 0.2, 1.0
    r[1, 2], r[1, 4] = 0.1, 0.3
    r[2, 3] = 0.5
    r[3, 0], r[3, 3], r[3, 6] = 0.0, 0.4, 1.2
    return r


def test_turns_are_runs_of_model_tokens() -> None:
    turn, n = kv.turn_segments(MASK)
    assert n == 3
    assert turn[0].tolist() == [0, 0, -1, -1, 1, 1, 1, -1]
    assert turn[3].tolist() == [0, -1, -1, 1, -1, 2, 2, -1]


def test_trloo_on_verl_tokens_equals_kgym_rl_per_turn() -> None:
    adv, ret = kv.compute_trloo_advantage(_rewards(), MASK, UID)
    per_turn = np.array(
        [[0.2, 1.0, 0.0], [0.1, 0.3, 0.0], [0.5, 0.0, 0.0], [0.0, 0.4, 1.2]], dtype=np.float64
    )
    present = np.array([[1, 1, 0], [1, 1, 0], [1, 0, 0], [1, 1, 1]], dtype=bool)
    want_adv, want_ret = advantages_dense(
        per_turn, np.array([0, 0, 1, 1]), present=present, estimator="trloo"
    )
    turn, _ = kv.turn_segments(MASK)
    for b in range(4):
        for i in range(MASK.shape[1]):
            t = int(turn[b, i])
            expect_a = 0.0 if t < 0 else want_adv[b, t]
            expect_r = 0.0 if t < 0 else want_ret[b, t]
            assert adv[b, i].item() == pytest.approx(expect_a, abs=1e-6)
            assert ret[b, i].item() == pytest.approx(expect_r, abs=1e-6)
    # Returns sum the later turns' rewards: trajectory 0's first turn returns 1.2.
    assert ret[0, 0].item() == pytest.approx(1.2)
    # Leave-one-out at turn 1 of prompt a: 1.2 - 0.4 and 0.4 - 1.2.
    assert adv[0, 0].item() == pytest.approx(0.8)
    assert adv[1, 0].item() == pytest.approx(-0.8)
    # A turn alone in its (prompt, turn) group keeps its return as its advantage.
    assert adv[3, 5].item() == pytest.approx(1.2)


def test_the_reward_function_has_verls_signature_and_fields() -> None:
    result = {
        "status": "ok",
        "compiled": True,
        "correct": True,
        "hacked": False,
        "findings": [],
        "timing": {"available": True, "speedup": 1.5},
        "profile": {"available": True, "triton_share": 0.9},
    }
    seen = []

    def evaluate(task: str, completion: str) -> dict:
        seen.append((task, completion))
        return result

    score = kv.compute_score(
        "kgym", "```python\n...\n```", "01_relu", {"task": "02_gelu"}, evaluate=evaluate
    )
    assert seen == [("02_gelu", "```python\n...\n```")]  # extra_info's task wins
    assert score["score"] == pytest.approx(compute_reward(result, "dr_kernel").total)
    assert score["kgym_correct"] == 1.0 and score["kgym_speedup"] == 1.5
    assert score["kgym_pr"] == 0.9 and score["kgym_infra_error"] == 0.0
    failed = {
        **result,
        "status": "infra_error",
        "compiled": False,
        "correct": False,
        "timing": {"available": False},
        "profile": {"available": False},
    }
    infra = kv.compute_score("kgym", "x", "01_relu", None, evaluate=lambda t, c: failed)
    assert infra["score"] == 0.0 and infra["kgym_infra_error"] == 1.0


def test_the_reward_function_runs_the_real_gym() -> None:
    from pathlib import Path

    solution = Path(__file__).resolve().parents[1] / "tasks" / "solutions" / "01_relu.py"
    score = kv.compute_score(
        "kgym", "```python\n" + solution.read_text() + "\n```", "01_relu", spec="staged"
    )
    assert score["kgym_correct"] == 1.0 and score["kgym_hacked"] == 0.0
    assert score["score"] > 0


def test_dataset_rows_for_verl() -> None:
    tasks = load_task_set("builtin").tasks[:2]
    rows = kv.dataset_rows(tasks, Prompts.load())
    assert [r["reward_model"]["ground_truth"] for r in rows] == [t.task.id for t in tasks]
    assert rows[0]["prompt"][-1]["role"] == "user"
    assert tasks[0].task.id in rows[0]["prompt"][-1]["content"]


def test_verls_own_compute_advantage_uses_kgym_trloo() -> None:
    pytest.importorskip("verl.trainer.ppo.core_algos")
    from verl import DataProto
    from verl.trainer.ppo import core_algos

    assert kv.register_with_verl()
    estimator = core_algos.get_adv_estimator_fn("kgym_trloo")
    assert estimator is kv.compute_trloo_advantage
    # The call verl's compute_advantage makes for a registered estimator (verl 0.9.1,
    # trainer/ppo/ray_trainer.py), on a DataProto of verl's.
    data = DataProto.from_dict(
        tensors={"token_level_rewards": _rewards(), "response_mask": MASK},
        non_tensors={"uid": UID},
    )
    advantages, returns = estimator(
        token_level_rewards=data.batch["token_level_rewards"],
        response_mask=data.batch["response_mask"],
        config=None,
        index=data.non_tensor_batch["uid"],
    )
    want, _ = kv.compute_trloo_advantage(_rewards(), MASK, UID)
    assert torch.allclose(advantages, want)
    assert advantages.shape == returns.shape == MASK.shape
