"""What the judge found: every finding names its rule and, with severity ``reject``, decides
the verdict (docs/integrity-rules.md)."""

from __future__ import annotations

from typing import Any

from kgym.harness.errors import EvaluationFailure
from kgym.harness.gpu_memory import MemoryWatch


def finding(rule: str, detail: str, severity: str = "reject") -> dict[str, Any]:
    return {"rule": rule, "severity": severity, "line": None, "detail": detail}


class Findings:
    """The evaluation's findings. A service's control run (its candidate is the task's own
    Model) records them but is stopped by none, so that the reference side goes through every
    phase; the supervisor still reads them."""

    def __init__(self, control: bool = False) -> None:
        self.items: list[dict[str, Any]] = []
        self.control = control
        self.reported: set[str] = set()  # the per-call rules already reported once
        # The candidate's GPU memory watch, once it runs: a breach rejects, control or not.
        self.memory_watch: MemoryWatch | None = None

    def add(self, rule: str, detail: str, severity: str = "reject") -> None:
        self.items.append(finding(rule, detail, severity))

    def add_once(self, rule: str, detail: str) -> None:
        """A rule that may fire on every graded call, reported on the first."""
        if rule not in self.reported:
            self.reported.add(rule)
            self.add(rule, detail)

    def extend(self, found: list[dict[str, Any]]) -> None:
        self.items.extend(found)

    def take_from_reply(self, reply: dict[str, Any]) -> None:
        """A runner's findings, bounded; only ``reject`` passes as a rejection."""
        for f in reply.get("findings") or []:
            if isinstance(f, dict) and isinstance(f.get("rule"), str):
                self.add(
                    str(f["rule"])[:60],
                    str(f.get("detail", ""))[:500],
                    "reject" if f.get("severity") == "reject" else "warn",
                )

    def memory_breach(self) -> bool:
        """Whether the watch found a breach; its finding is recorded once."""
        watch = self.memory_watch
        if watch is None or watch.breach is None:
            return False
        if not any(f["rule"] == "gpu-memory" for f in self.items):
            self.add("gpu-memory", watch.breach)
        return True

    def rejected(self) -> bool:
        if self.memory_breach():
            return True
        if self.control:
            return False
        return any(f.get("severity") == "reject" for f in self.items)

    def stop_if_rejected(self, phase: str) -> None:
        if self.rejected():
            raise EvaluationFailure("rejected", phase, message="an integrity check failed")
