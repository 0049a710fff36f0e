"""Every step's numeric metrics as TensorBoard scalars (OUT/tensorboard), where the tensorboard
package is installed: the same figures as metrics.jsonl, for people who watch runs there."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any


class ScalarLog:
    """Writes a step's metrics; a resumed run purges the events after its checkpoint's step,
    as metrics.jsonl drops its rows, so that curves do not fold back on themselves."""

    def __init__(self, out: Path, mode: str, resumed_at: int) -> None:
        self.writer: Any = None
        if mode == "off":
            return
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError as exc:
            if mode == "on":
                raise RuntimeError(
                    "[run] tensorboard = on, but the tensorboard package is not installed "
                    "(pip install tensorboard)"
                ) from exc
            return
        self.writer = SummaryWriter(
            log_dir=str(out / "tensorboard"), purge_step=resumed_at + 1 if resumed_at else None
        )
        if mode == "auto":
            print(f"kgym train: TensorBoard events in {out / 'tensorboard'}", file=sys.stderr)

    def write(self, metrics: dict[str, Any]) -> None:
        if self.writer is None:
            return
        step = int(metrics["step"])
        for key, value in metrics.items():
            if key == "step" or isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            if math.isfinite(value):
                self.writer.add_scalar(key, value, step)
        self.writer.flush()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
