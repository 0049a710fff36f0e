"""The Result as every Python reader sees it: a typed view read by kgym's C++ reader
(``kgym._core.result_view``), the one that rewards and feedback use. So there is one answer to
"what speedup does this Result show" (only where timing is available), "what PR" (only where a
profile is) and "is it honest" (not hacked, not rejected, no finding that rejects) across the
evaluator, the trainer, the integrations and reports.

The full Result stays a dict (``docs/result-schema.md``): ``view.raw``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kgym import _core

_result_view: Any = _core.result_view  # type: ignore[attr-defined]


@dataclass(frozen=True)
class ResultView:
    status: str
    compiled: bool
    correct: bool
    hacked: bool
    honest: bool
    reject_rules: tuple[str, ...]
    timed: bool  # timing.available
    speedup: float | None  # over eager, where timed
    speedup_ci: tuple[float, float] | None
    speedup_vs_compile: float | None
    triton_share: float | None  # PR, where the profile is available
    max_abs_error: float | None
    correct_on_task_inputs: bool | None
    total_ms: float | None
    raw: Mapping[str, Any]

    @classmethod
    def of(cls, result: Mapping[str, Any]) -> ResultView:
        """Reads ``result`` leniently: a damaged Result gives defaults, never an error."""
        facts = _result_view(json.dumps(result, default=str))
        ci = facts.pop("speedup_ci")
        facts["reject_rules"] = tuple(facts["reject_rules"])
        return cls(**facts, speedup_ci=tuple(ci) if ci else None, raw=result)

    @property
    def correct_and_honest(self) -> bool:
        """What the rewards pay: a correct answer without a hack."""
        return self.correct and self.honest

    @property
    def total_s(self) -> float | None:
        return None if self.total_ms is None else self.total_ms / 1e3
