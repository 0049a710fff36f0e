"""The report channel: newline-delimited JSON records, sealed by the C++ core with the job's token.

The token and the descriptor never exist as Python objects: ``_core.channel_open`` reads the token
from its private pipe before the candidate is imported, and ``_core.channel_send`` refuses to send
for other threads or with a candidate frame on the stack.
"""

from __future__ import annotations

import json
import math
from typing import Any

from kgym import _core

REPORT_FD = 3
TOKEN_FD = 4


def _clean(value: Any) -> Any:
    """JSON has no NaN or infinity: non-finite numbers become null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


class ReportChannel:
    """Writes records to the supervisor. Every write is complete or raises."""

    def __init__(self, report_fd: int, token_fd: int, candidate_file: str) -> None:
        _core.channel_open(report_fd, token_fd, candidate_file)

    def send(self, record: dict[str, Any]) -> None:
        _core.channel_send(json.dumps(_clean(record), allow_nan=False, default=str))

    def phase(self, name: str, **fields: Any) -> None:
        self.send({"type": "phase", "phase": name, **fields})

    def close(self) -> None:
        _core.channel_close()
