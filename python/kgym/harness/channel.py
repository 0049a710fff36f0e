"""The report channel: newline-delimited JSON records written to a file descriptor."""

from __future__ import annotations

import json
import math
import os
from typing import Any


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

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def send(self, record: dict[str, Any]) -> None:
        data = (json.dumps(_clean(record), allow_nan=False, default=str) + "\n").encode()
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def phase(self, name: str) -> None:
        self.send({"type": "phase", "phase": name})

    def close(self) -> None:
        try:
            os.close(self._fd)
        except OSError:
            pass
