"""One attempt (task, sample, turn) as the metrics see it, read from its Result."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from kgym.result import ResultView

POLICIES = ("hybrid", "strict")
# The same policies with KernelBench's convention for inputs: correct on the task's own
# get_inputs(), whatever the judge's stress sets gave (docs/eval.md).
TASK_INPUTS = " (task inputs)"
VERDICTS = (*POLICIES, *(p + TASK_INPUTS for p in POLICIES))


@dataclass(frozen=True, eq=True)
class Attempt:
    task: str
    level: int | None
    sample: int
    turn: int  # 1-based
    compiled: bool
    # Under each verdict (VERDICTS): ok (correct and nothing rejected).
    accepted: dict[str, bool | None]
    # Under each policy: rejected by an integrity rule (a hack), and by which rules (the reject
    # findings, plus the strict-only rules the policy's verdict names).
    hacked: dict[str, bool | None]
    rules: dict[str, list[str]] = field(default_factory=dict)
    speedup: float | None = None  # None: no timing (a CPU, or not correct)
    speedup_low: float | None = None  # the 95% interval's lower end
    pr: float | None = None  # the Triton share of profiled kernel time
    status: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Attempt:
        return cls(**data)


def attempt_from_result(
    result: dict[str, Any], task: str, level: int | None, sample: int, turn: int
) -> Attempt:
    """The metrics' view of a Result (docs/result-schema.md). A policy whose verdict the run
    could not determine (``policies[p]`` null) has None for it."""
    view = ResultView.of(result)
    policies = result.get("policies") or {}
    accepted: dict[str, bool | None] = {}
    hacked: dict[str, bool | None] = {}
    # Wrong only on a stress set: correct under the task's convention. Such a run stopped at
    # correctness, so its later phases (timing, profile) say nothing: no speedup.
    only_sets_failed = view.status == "incorrect" and view.correct_on_task_inputs is True
    for name in POLICIES:
        verdict = policies.get(name)
        accepted[name] = None if verdict is None else verdict.get("status") == "ok"
        hacked[name] = None if verdict is None else bool(verdict.get("hacked"))
        accepted[name + TASK_INPUTS] = (
            None if verdict is None else accepted[name] or (only_sets_failed and not hacked[name])
        )
        hacked[name + TASK_INPUTS] = hacked[name]
    rejects = set(view.reject_rules)
    rules = {
        name: sorted(rejects | {str(r) for r in (policies.get(name) or {}).get("reasons") or []})
        for name in POLICIES
    }
    rules |= {name + TASK_INPUTS: rules[name] for name in POLICIES}
    return Attempt(
        task=task,
        level=level,
        sample=sample,
        turn=turn,
        compiled=view.compiled,
        accepted=accepted,
        hacked=hacked,
        rules=rules,
        speedup=view.speedup,
        speedup_low=view.speedup_ci[0] if view.speedup_ci else None,
        pr=view.triton_share,
        status=view.status,
    )
