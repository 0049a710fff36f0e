"""Multi-turn rollouts: each (task, sample) is a conversation; after each attempt the model
reads the gym's feedback and writes the next one. Trajectories run concurrently, the turns of
one trajectory in order."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from kgym.evaluation.models import CompletionRequest, Model, ModelError
from kgym.evaluation.prompts import Prompts
from kgym.evaluation.rundir import RunDir
from kgym.evaluation.tasksets import EvalTask

Evaluator = Callable[[EvalTask, str], dict[str, Any]]
Feedback = Callable[[dict[str, Any]], str]


@dataclass(frozen=True)
class RolloutConfig:
    turns: int = 3
    samples: int = 1
    # How many earlier attempts (each with its feedback) the conversation keeps; None: all.
    history: int | None = None
    jobs: int = 4
    # Which ones, when history is set: "last" (the most recent), or "best" (the consecutive
    # window with the highest summed Dr. Kernel reward, as KernelGYM's test-time scaling keeps).
    history_select: str = "last"


def failed_attempt_result(status: str, message: str) -> dict[str, Any]:
    """The Result of an attempt that was not made: the model could not produce it
    (``model_error``) or the gym could not evaluate it (``gym_error``). Failed, never a hack,
    tried again when the run is resumed."""
    verdict = {"status": status, "correct": False, "hacked": False, "reasons": []}
    phase, kind = ("model", "ModelError") if status == "model_error" else ("gym", "GymError")
    return {
        "status": status,
        "compiled": False,
        "correct": False,
        "hacked": False,
        "findings": [],
        "error": {"phase": phase, "type": kind, "message": message[:2000]},
        "policies": {"strict": verdict, "hybrid": dict(verdict)},
        "timing": {"available": False, "reason": "no attempt"},
        "profile": {"available": False, "reason": "no attempt"},
    }


class Progress:
    """One line on stderr per finished attempt: count, rate, ETA."""

    def __init__(self, total: int, already: int, quiet: bool) -> None:
        self.total, self.done, self.quiet = total, already, quiet
        self.fresh = 0
        self.started = time.monotonic()
        self._lock = threading.Lock()

    def step(self, label: str) -> None:
        with self._lock:
            self.done += 1
            self.fresh += 1
            if self.quiet:
                return
            elapsed = time.monotonic() - self.started
            left = self.total - self.done
            eta = elapsed / self.fresh * left
            print(
                f"[{self.done}/{self.total}] {label} ({elapsed:.0f} s, ETA {eta:.0f} s)",
                file=sys.stderr,
                flush=True,
            )


def _window(rewards: list[float], size: int, select: str) -> tuple[int, int]:
    """The [start, end) of the earlier attempts the conversation keeps."""
    n = len(rewards)
    if size >= n:
        return 0, n
    if size <= 0:
        return n, n
    if select == "best":
        sums = [sum(rewards[i : i + size]) for i in range(n - size + 1)]
        start = max(range(len(sums)), key=lambda i: (sums[i], i))  # ties: the later window
        return start, start + size
    return n - size, n


def _conversation(
    first: list[dict[str, str]],
    exchanges: list[list[dict[str, str]]],
    rewards: list[float],
    config: RolloutConfig,
) -> list[dict[str, str]]:
    if config.history is None:
        kept = exchanges
    else:
        start, end = _window(rewards, config.history, config.history_select)
        kept = exchanges[start:end]
    return [*first, *(m for exchange in kept for m in exchange)]


def _reward(result: dict[str, Any]) -> float:
    from kgym.rewards import compute_reward

    try:
        return float(compute_reward(result, {"kind": "dr_kernel"}).total)
    except Exception:  # noqa: BLE001 - a Result a reward cannot read counts as nothing
        return 0.0


class Stopped(Exception):
    """The run is stopping (an error elsewhere, or an interrupt): no new attempt starts."""


def run_trajectory(
    task: EvalTask,
    sample: int,
    model: Model,
    evaluate: Evaluator,
    feedback: Feedback,
    prompts: Prompts,
    run: RunDir,
    config: RolloutConfig,
    progress: Progress,
    stop: threading.Event | None = None,
) -> None:
    first = prompts.first(task)
    exchanges: list[list[dict[str, str]]] = []  # per earlier turn: [assistant, user feedback]
    rewards: list[float] = []  # per earlier turn: its Dr. Kernel reward (history_select best)
    for turn in range(1, config.turns + 1):
        messages = _conversation(first, exchanges, rewards, config)
        done = run.done.get((task.key, sample, turn))
        if done is not None:
            completion, fb = done["completion"], done["feedback"]
            result = run.results[(task.key, sample, turn)]["result"]
        else:
            if stop is not None and stop.is_set():
                raise Stopped
            completion = ""
            try:
                completion = model.complete(CompletionRequest(task.key, sample, turn, messages))
            except ModelError as exc:
                result = failed_attempt_result("model_error", str(exc))
            else:
                try:
                    result = evaluate(task, completion)
                except Exception as exc:  # noqa: BLE001 - the gym failed, not the candidate
                    result = failed_attempt_result("gym_error", f"{type(exc).__name__}: {exc}")
            fb = feedback(result)
            next_message = prompts.next_turn(fb, turn + 1, config.turns)
            base = {"task": task.key, "level": task.level, "sample": sample, "turn": turn}
            run.record(
                {**base, "result": result},
                {
                    **base,
                    "messages": messages,
                    "completion": completion,
                    "feedback": fb,
                    "next_message": next_message,
                },
            )
            progress.step(f"{task.key} sample {sample} turn {turn}: {result.get('status')}")
            if result.get("status") in ("model_error", "gym_error"):
                return  # no attempt to give feedback on: the trajectory ends here
        rewards.append(_reward(result) if config.history_select == "best" else 0.0)
        exchanges.append(
            [
                {"role": "assistant", "content": completion},
                prompts.next_turn(fb, turn + 1, config.turns),
            ]
        )


def run_all(
    tasks: list[EvalTask],
    model: Model,
    evaluate: Evaluator,
    feedback: Feedback,
    prompts: Prompts,
    run: RunDir,
    config: RolloutConfig,
    quiet: bool = False,
) -> None:
    total = len(tasks) * config.samples * config.turns
    progress = Progress(total, len(run.done), quiet)
    stop = threading.Event()
    pool = ThreadPoolExecutor(max_workers=max(1, config.jobs))
    futures = [
        pool.submit(
            run_trajectory, task, s, model, evaluate, feedback, prompts, run, config, progress, stop
        )
        for task in tasks
        for s in range(config.samples)
    ]
    try:
        for future in as_completed(futures):
            future.result()
    except BaseException:
        # An unexpected error or an interrupt stops the run at once: no new attempt starts,
        # those under way finish and are recorded, what is done stays done.
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
