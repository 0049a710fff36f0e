"""kgym for verl, as a plugin (no fork of verl): a reward function for verl's
``custom_reward_function`` and Dr. Kernel's TRLOO registered as an advantage estimator.

    # verl's config (docs/train.md has the whole recipe)
    custom_reward_function.path=$(python -c "import kgym.integrations.verl as m; print(m.__file__)")
    custom_reward_function.name=compute_score
    +custom_reward_function.reward_kwargs.spec=dr_kernel
    algorithm.adv_estimator=kgym_trloo

Loading this file as the reward function registers ``kgym_trloo`` in verl's estimator registry
(verl imports the reward file in its driver before the first advantage is computed); importing
``kgym.integrations.verl`` anywhere in the driver does the same.

TRLOO on verl's batch layout: a trajectory's turns are the runs of model tokens
(``response_mask`` 1) in its response, a turn's reward is the sum of ``token_level_rewards``
over its tokens (verl's reward managers put a score on the last token: with one final score,
every turn's return is that score), returns and leave-one-out baselines are kgym.rl's over
(prompt, turn) groups, with the prompt given by verl's ``uid``. Each model token of a turn gets
its turn's advantage; observation and padding tokens get 0.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch

from kgym.integrations.trl import Evaluator, local_evaluator, service_evaluator
from kgym.result import ResultView
from kgym.rewards import compute_reward
from kgym.rl import advantages_dense

ESTIMATOR_NAME = "kgym_trloo"


def turn_segments(response_mask: torch.Tensor) -> tuple[torch.Tensor, int]:
    """For a [B, L] mask, each token's turn (0, 1, ... per row; -1 off the model's tokens) and
    the largest number of turns in a row."""
    mask = response_mask.to(torch.int64)
    starts = mask.clone()
    starts[:, 1:] = mask[:, 1:] * (1 - mask[:, :-1])
    turn = torch.cumsum(starts, dim=1) - 1
    turn = torch.where(mask.bool(), turn, torch.full_like(turn, -1))
    n_turns = int(starts.sum(dim=1).max().item()) if mask.numel() else 0
    return turn, n_turns


def compute_trloo_advantage(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    index: np.ndarray,
    gamma: float = 1.0,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """verl's estimator signature: advantages and returns, both [B, L]."""
    turn, n_turns = turn_segments(response_mask)
    batch = token_level_rewards.shape[0]
    if n_turns == 0:
        zeros = torch.zeros_like(token_level_rewards)
        return zeros, zeros
    _, group_ids = np.unique(np.asarray(index).astype(str), return_inverse=True)
    rewards = np.zeros((batch, n_turns))
    present = np.zeros((batch, n_turns), dtype=bool)
    per_token = token_level_rewards.detach().to(torch.float64).cpu().numpy()
    turn_np = turn.cpu().numpy()
    on = turn_np >= 0
    cells = (np.nonzero(on)[0], turn_np[on])  # (trajectory, turn) of every model token
    np.add.at(rewards, cells, per_token[on])
    present[cells] = True
    adv, ret = advantages_dense(
        rewards, group_ids.astype(np.int64), present=present, estimator="trloo", gamma=gamma
    )
    safe = turn.clamp(min=0).cpu().numpy()
    rows = np.arange(batch)[:, None]
    dtype, device = token_level_rewards.dtype, token_level_rewards.device
    advantages = torch.tensor(np.where(on, adv[rows, safe], 0.0), dtype=dtype, device=device)
    returns = torch.tensor(np.where(on, ret[rows, safe], 0.0), dtype=dtype, device=device)
    return advantages, returns


def register_with_verl() -> bool:
    """Registers ``kgym_trloo`` in verl's estimator registry; False when verl is not installed.
    Loading this file again (verl imports reward files by path) keeps the first registration."""
    try:
        from verl.trainer.ppo import core_algos
    except ImportError:
        return False
    if ESTIMATOR_NAME not in core_algos.ADV_ESTIMATOR_REGISTRY:
        core_algos.register_adv_est(ESTIMATOR_NAME)(compute_trloo_advantage)
    return True


_evaluators: dict[tuple[str | None, str | None], Evaluator] = {}


def _evaluator(server: str | None, token: str | None) -> Evaluator:
    """One per process and server: a gym service when given (``server`` or $KGYM_SERVER),
    else the C++ core in this process (the same sandbox as the service)."""
    server = server or os.environ.get("KGYM_SERVER") or None
    key = (server, token)
    if key not in _evaluators:
        _evaluators[key] = service_evaluator(server, token) if server else local_evaluator()
    return _evaluators[key]


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: str,
    extra_info: dict[str, Any] | None = None,
    spec: Any = "dr_kernel",
    server: str | None = None,
    token: str | None = None,
    evaluate: Evaluator | None = None,
    **kwargs: Any,
) -> dict[str, float]:
    """verl's reward-function signature. The task is ``extra_info["task"]`` or else
    ``ground_truth`` (a built-in task id, or a task file the reward workers can read). Returns
    ``score`` (the kgym.rewards reward under ``spec``) and numeric fields verl logs beside it
    (verdict, speedup, PR, and the reward's terms).
    A completion the gym could not evaluate (``infra_error``) scores 0 with ``kgym_infra_error``
    = 1, so that it can be filtered; it is never a verdict on the completion."""
    task = str((extra_info or {}).get("task") or ground_truth)
    run = evaluate or _evaluator(server, token)
    result = run(task, solution_str)
    reward = compute_reward(result, spec)
    view = ResultView.of(result)
    fields = {
        "score": float(reward.total) if reward.valid else 0.0,
        "kgym_infra_error": float(not reward.valid),
        "kgym_correct": float(view.correct),
        "kgym_hacked": float(view.hacked),
        "kgym_speedup": view.speedup or 0.0,
        "kgym_pr": view.triton_share or 0.0,
    }
    # The reward's weighted terms under the spec (the same keys for every sample of a run).
    fields.update({f"kgym_term_{name}": float(v) for name, v in reward.terms.items()})
    return fields


def dataset_rows(
    tasks: list[Any], prompts: Any, data_source: str = "kgym", agent_name: str | None = None
) -> list[dict[str, Any]]:
    """verl's RL dataset rows (its parquet format) for ``kgym eval``'s tasks (EvalTask, from
    kgym.evaluation.tasksets) with its prompts (kgym.evaluation.prompts.Prompts): ``prompt``
    (chat messages), ``reward_model.ground_truth`` and ``extra_info.task`` (a built-in task's
    id, else its file, which the reward workers must be able to read). Write them with
    ``datasets.Dataset.from_list(rows).to_parquet(path)``. ``agent_name="kgym_gym"``: the rows
    are rolled out by the gym's multi-turn agent loop (kgym.integrations.verl_agent_loop)."""
    rows = []
    for index, item in enumerate(tasks):
        task = item.task.id if item.task.origin == "builtin" else str(item.task.path)
        rows.append(
            {
                "data_source": data_source,
                "prompt": prompts.first(item),
                "ability": "triton-kernel",
                "reward_model": {"style": "rule", "ground_truth": task},
                "extra_info": {"task": task, "index": index, "key": item.key},
            }
        )
        if agent_name:
            rows[-1]["agent_name"] = agent_name
    return rows


register_with_verl()
