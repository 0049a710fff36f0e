"""Entry point of the harness child: ``python -I -m kgym.harness job.json``."""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path

# The exit code of a harness whose teardown failed after its complete report (the runners, the
# arenas, the GPU hold): cpp/kgym/check/evaluate.hpp's kTeardownFailedExit.
TEARDOWN_FAILED_EXIT = 70


def gpu_visible() -> bool:
    """An NVIDIA device node exists and CUDA_VISIBLE_DEVICES does not hide every GPU (asked
    without initialising CUDA; a GPU that then fails to start is an infra error)."""
    hidden = os.environ.get("CUDA_VISIBLE_DEVICES")
    if hidden is not None and hidden.strip() in ("", "-1"):
        return False
    return os.path.exists("/dev/nvidiactl") and any(
        name.startswith("nvidia") and name[6:].isdigit() for name in os.listdir("/dev")
    )


def take_thread_share() -> None:
    """The job's share of the cores (``OMP_NUM_THREADS``, which a service gives each slot) as
    torch's thread count. A child forked from a fork server has the job's environment, but its
    OpenMP read the thread count when the server loaded torch, before any job: without this,
    every slot's judge and runners (forked from the judge) used every core."""
    share = os.environ.get("OMP_NUM_THREADS", "")
    if share.isdigit() and int(share) > 0:
        import torch

        torch.set_num_threads(int(share))


def main(argv: list[str]) -> int:
    job_path = Path(argv[1] if len(argv) > 1 else "job.json").resolve()
    job = json.loads(job_path.read_text())
    # Triton reads TRITON_INTERPRET when it is imported, so the device is decided before that.

    # Before any candidate code can exist: take the channel and its token.
    from kgym.harness.channel import REPORT_FD, TOKEN_FD, ReportChannel

    # Read, and gone before any runner exists: the candidate's process can read the job
    # directory, and the job's plan (trials, timing, seed) is not the candidate's to know.
    job_path.unlink()
    channel = ReportChannel(
        int(job.get("report_fd", REPORT_FD)),
        TOKEN_FD,
        str(job.get("candidate_file", "candidate.py")),
    )

    # The judge forks its runners before it touches CUDA (a process forked after CUDA is
    # initialised cannot use it), so whether a GPU is there is read off the device nodes.
    requested = job.get("device", "auto")
    visible = gpu_visible()
    if requested == "cuda" and not visible:
        channel.send(
            {
                "type": "report",
                "status": "infra_error",
                "error": {
                    "phase": "load",
                    "type": "EvaluationError",
                    "message": "device cuda requested but no GPU is visible",
                    "traceback": "",
                },
            }
        )
        channel.close()
        os._exit(0)
    job["_use_cuda"] = requested == "cuda" or (requested == "auto" and visible)
    if not job["_use_cuda"]:
        os.environ["TRITON_INTERPRET"] = "1"
    take_thread_share()  # before the runners are forked: they keep it
    import triton  # noqa: F401  (imported before any model, with the right mode)

    from kgym.harness.judge.evaluation import Evaluation

    evaluation: Evaluation | None = None
    try:
        evaluation = Evaluation(job, job_path.parent, channel)
        report = evaluation.run(report_first=True)
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
    exit_code = 0
    try:
        channel.send(report)
        channel.phase("done")
        channel.close()  # the supervisor answers at the channel's end (check/evaluate.hpp)
    finally:
        if evaluation is not None:
            # Then the runners' teardown, inside the hold in which the job ended. Nothing of
            # it changes the report any more; a failure here is the gym's to log.
            try:
                evaluation.close()
            except BaseException:  # noqa: BLE001 - the process exits next, ending the rest
                traceback.print_exc()
                # The verdict stands (the supervisor reads this code so), and its log says the
                # teardown failed (check::kTeardownFailedExit).
                exit_code = TEARDOWN_FAILED_EXIT
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter shutdown: no atexit handler or finaliser of the candidate runs after this.
    os._exit(exit_code)


if __name__ == "__main__":
    main(sys.argv)
