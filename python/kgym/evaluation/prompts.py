"""What the model reads: a problem prompt per task and a feedback message per turn, both from
template files a user can replace (``--problem-template``, ``--feedback-template``).

Templates use ``$name`` placeholders (string.Template), so the braces of the code inside them
need no escaping. Problem: ``$task_id``, ``$reference`` (the task's PyTorch source),
``$description``. Feedback: ``$feedback`` (the gym's feedback text for the last attempt),
``$turn`` (the turn that comes next), ``$turns`` (how many there are).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from kgym.evaluation.tasksets import EvalTask


def default_template(name: str) -> Path:
    return Path(str(resources.files("kgym.evaluation") / "templates" / name))


@dataclass(frozen=True)
class Prompts:
    problem: Template
    feedback: Template
    system: str | None = None

    @classmethod
    def load(
        cls,
        problem: Path | None = None,
        feedback: Path | None = None,
        system: Path | None = None,
    ) -> Prompts:
        problem_text = (problem or default_template("problem.md")).read_text()
        feedback_text = (feedback or default_template("feedback.md")).read_text()
        checks = (
            (problem_text, "problem", {"task_id": "", "reference": "", "description": ""}),
            (feedback_text, "feedback", {"feedback": "", "turn": 1, "turns": 1}),
        )
        for text, what, names in checks:
            try:
                Template(text).substitute(names)
            except (KeyError, ValueError) as exc:
                raise ValueError(
                    f"the {what} template has a placeholder it cannot fill: {exc} (it may use "
                    + ", ".join("$" + n for n in names)
                    + ")"
                ) from exc
        return cls(
            Template(problem_text),
            Template(feedback_text),
            system.read_text() if system else None,
        )

    def first(self, task: EvalTask) -> list[dict[str, str]]:
        """The conversation of turn 1."""
        messages = [{"role": "system", "content": self.system}] if self.system else []
        text = self.problem.substitute(
            task_id=task.key, reference=task.task.source, description=task.task.description
        )
        return [*messages, {"role": "user", "content": text}]

    def next_turn(self, feedback: str, turn: int, turns: int) -> dict[str, str]:
        """The user message that follows an attempt's feedback."""
        return {
            "role": "user",
            "content": self.feedback.substitute(feedback=feedback, turn=turn, turns=turns),
        }


def render(messages: list[dict[str, str]], tokenizer: Any, prefill: str = "") -> str:
    """The conversation as a local model reads it, in training (`kgym train`) and in evaluation
    (`kgym eval --hf`) alike: its chat template, or plain role-tagged text. ``prefill`` opens the
    assistant's turn (Kernel Coder's "Let me solve this step by step.\\n<think>"): the model
    continues it, and it is part of the prompt, not of the completion."""
    if getattr(tokenizer, "chat_template", None):
        if prefill:
            return str(
                tokenizer.apply_chat_template(
                    [*messages, {"role": "assistant", "content": prefill}],
                    tokenize=False,
                    continue_final_message=True,
                )
            )
        return str(
            tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        )
    text = "\n\n".join(f"{m['role']}: {m['content']}" for m in messages) + "\n\nassistant:"
    return text + (" " + prefill if prefill else "")


def context_tokens(model_config: Any) -> int | None:
    """The model's context length from its config (GPT-2's n_positions, or
    max_position_embeddings), or None when it names none."""
    context = getattr(model_config, "n_positions", 0) or getattr(
        model_config, "max_position_embeddings", 0
    )
    return int(context) if context else None


def prompt_budget(model_config: Any, max_new_tokens: int) -> int | None:
    """How many prompt tokens fit beside max_new_tokens in the model's context, or None when the
    config names no context length. A longer prompt loses its beginning (the end holds the
    latest feedback); at least 8 tokens are kept."""
    context = context_tokens(model_config)
    return max(8, context - max_new_tokens) if context else None
