"""Entry point of the harness child: ``python -I -m kgym.harness job.json``."""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path


def main(argv: list[str]) -> int:
    job_path = Path(argv[1] if len(argv) > 1 else "job.json").resolve()
    job = json.loads(job_path.read_text())
    # Triton reads TRITON_INTERPRET when it is imported, so the device is decided before that.
    import torch

    # Before any candidate code can exist: take the channel and its token.
    from kgym.harness.channel import REPORT_FD, TOKEN_FD, ReportChannel

    channel = ReportChannel(
        int(job.get("report_fd", REPORT_FD)),
        TOKEN_FD,
        str(job.get("candidate_file", "candidate.py")),
    )

    if job.get("device") == "cpu" or (
        job.get("device") == "auto" and not torch.cuda.is_available()
    ):
        os.environ["TRITON_INTERPRET"] = "1"
    import triton  # noqa: F401  (imported before the candidate, with the right mode)

    from kgym.harness.run import Evaluation

    try:
        report = Evaluation(job, job_path.parent, channel).run()
    except BaseException as exc:  # noqa: BLE001 - a harness bug is an infra error, not a crash
        report = {
            "type": "report",
            "status": "infra_error",
            "error": {
                "phase": "harness",
                "type": type(exc).__name__,
                "message": str(exc)[:2000],
                "traceback": traceback.format_exc()[-4000:],
            },
        }
    channel.send(report)
    channel.phase("done")
    channel.close()
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter shutdown: no atexit handler or finaliser of the candidate runs after this.
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
