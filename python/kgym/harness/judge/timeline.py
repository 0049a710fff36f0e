"""Where an evaluation's time goes: its phases, announced to the supervisor as they start (the
report channel's ``phase`` records), and the stretches of each phase (the Result's
``durations_ms``)."""

from __future__ import annotations

import time
from typing import Any

from kgym.harness.channel import ReportChannel


class Timeline:
    def __init__(self, channel: ReportChannel) -> None:
        self.channel = channel
        self.durations: dict[str, float] = {}
        self.current = "startup"  # the phase last announced (a failure names it)

    def phase(self, name: str, **fields: Any) -> float:
        """Announces phase ``name``; returns its start."""
        self.channel.phase(name, **fields)
        self.current = name
        return time.perf_counter()

    def done(self, name: str, started: float) -> None:
        self.durations[name] = (time.perf_counter() - started) * 1e3

    def stretch(self, name: str, started: float) -> float:
        """Adds a stretch of a phase; returns its end, the next stretch's start."""
        now = time.perf_counter()
        self.durations[name] = self.durations.get(name, 0.0) + (now - started) * 1e3
        return now
