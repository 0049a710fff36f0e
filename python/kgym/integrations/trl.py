"""kgym for TRL's GRPOTrainer: reward functions with TRL's signature, and an environment for
its multi-turn ``environment_factory`` whose tool runs the gym.

    from trl import GRPOTrainer
    from kgym.integrations.trl import gym_reward, similarity_reward, KgymEnvironment

    trainer = GRPOTrainer(model=..., reward_funcs=[gym_reward()], train_dataset=ds)  # ds: prompt, task
    trainer = GRPOTrainer(model=..., environment_factory=KgymEnvironment, train_dataset=ds)

TRL calls a reward function as ``f(prompts=..., completions=..., completion_ids=..., **columns)``
where ``columns`` are the dataset's other columns (one value per completion) and a few of
TRL's own (trainer_state, log_extra, log_metric); a completion is text, or a list of messages
for conversational datasets. Rewards are computed by kgym's C++ core (kgym.rewards).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kgym.rewards import compute_reward, kernel_coder_format, similarity_pairs

Evaluator = Callable[[str, str], dict[str, Any]]


def _text(completion: Any) -> str:
    """A completion as text: conversational completions are lists of messages."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence):
        for message in reversed(list(completion)):
            if isinstance(message, dict) and message.get("role") == "assistant":
                return str(message.get("content") or "")
    return str(completion)


def local_evaluator(**options: Any) -> Evaluator:
    """Evaluates in this process through the C++ core (the same sandbox as the service).
    ``task`` is a built-in task id or a task file. Options: kgym.check.CheckOptions'."""
    from kgym.check import CheckOptions, check
    from kgym.tasks import find_task

    check_options = CheckOptions(**{"torch_compute": "hybrid", **options})

    def evaluate(task: str, completion: str) -> dict[str, Any]:
        return check(find_task(task), completion, check_options)

    return evaluate


def service_evaluator(url: str, token: str | None = None, **options: Any) -> Evaluator:
    """Evaluates on a gym service (kgym-gym serve); ``task`` is an id it knows or a task file."""
    from kgym.client import Client

    client = Client(url, token=token)

    def evaluate(task: str, completion: str) -> dict[str, Any]:
        path = Path(task)
        target: Any = {"source": path.read_text(), "id": path.stem} if path.is_file() else task
        return client.check(target, completion, options=options, completion=True)

    return evaluate


def gym_reward(
    spec: Any = "dr_kernel", task_column: str = "task", evaluate: Evaluator | None = None
) -> Callable[..., list[float | None]]:
    """A TRL reward function: each completion evaluated by the gym against its row's task
    (``task_column``), rewarded under a kgym.rewards ``spec``. None (TRL: no reward from this
    function) where the gym could not evaluate it (infra_error)."""
    run = evaluate or local_evaluator()

    def kgym_gym_reward(completions: list[Any], **columns: Any) -> list[float | None]:
        tasks = columns.get(task_column)
        if tasks is None:
            raise ValueError(f"the dataset has no {task_column!r} column for the gym's task")
        rewards: list[float | None] = []
        for completion, task in zip(completions, tasks):
            r = compute_reward(run(str(task), _text(completion)), spec)
            rewards.append(r.total if r.valid else None)
        return rewards

    return kgym_gym_reward


def similarity_reward(reference_column: str = "reference") -> Callable[..., list[float]]:
    """Kernel Coder's similarity: difflib's ratio of each completion to its row's reference."""

    def kgym_similarity(completions: list[Any], **columns: Any) -> list[float]:
        references = columns.get(reference_column)
        if references is None:
            raise ValueError(f"the dataset has no {reference_column!r} column")
        texts = [_text(c) for c in completions]
        return [float(v) for v in similarity_pairs(texts, [str(r) for r in references])]

    return kgym_similarity


def format_reward(**options: Any) -> Callable[..., list[float]]:
    """Kernel Coder's format reward (options: kgym.rewards.kernel_coder_format's)."""

    def kgym_format(completions: list[Any], **columns: Any) -> list[float]:
        return [kernel_coder_format(_text(c), **options).score for c in completions]

    return kgym_format


class KgymEnvironment:
    """A multi-turn environment for TRL's ``environment_factory``: the model calls the
    ``check_kernel`` tool with its code, reads the gym's feedback, and may try again; the
    rollout's reward (``get_reward``) is that of its best attempt, under Dr. Kernel's reward
    unless the class attribute ``spec`` says otherwise. The task comes from the dataset row's
    ``task`` column (a built-in task id or a task file)."""

    spec: Any = "dr_kernel"
    evaluate: Evaluator | None = None  # default: in this process

    def __init__(self) -> None:
        self.task: str | None = None
        self.rewards: list[float] = []

    def reset(self, task: str | None = None, **columns: Any) -> None:
        self.task = task
        self.rewards = []

    def check_kernel(self, code: str) -> str:
        """Evaluate a Triton implementation against the task and return the gym's feedback.

        Args:
            code: the complete Python source of `ModelNew`, with its Triton kernels.

        Returns:
            The gym's feedback: status, errors or mismatches, speedup and profile.
        """
        from kgym.check import feedback

        if self.task is None:
            return "no task: the dataset row has no 'task' column"
        evaluate = type(self).evaluate or local_evaluator()
        result = evaluate(self.task, code)
        reward = compute_reward(result, self.spec)
        self.rewards.append(reward.total if reward.valid else 0.0)
        return feedback(result)

    def get_reward(self) -> float:
        return max(self.rewards, default=0.0)
