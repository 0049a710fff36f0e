"""The job's GPU memory as the judge watches it (``harness/gpu_memory.py``): the watch made once
both runners hold a CUDA context, before the candidate's code runs, and what a job over its
share of the GPU's memory ends as (``runtime_error`` with a ``resource_limit`` of kind
``gpu_memory``, charged to the job; a candidate over its own limit is rejected instead)."""

from __future__ import annotations

import os
from typing import Any

import torch

from kgym.harness.gpu_memory import MIB, MemoryWatch, Reader, killer, share_bytes
from kgym.harness.judge.runners import Runners
from kgym.harness.judge.slots import Lender
from kgym.harness.judge.timeline import Timeline


def watch_job(
    job: dict[str, Any],
    device: torch.device,
    read: Reader,
    own_uid: bool,
    runners: Runners,
    lender: Lender,
    timeline: Timeline,
) -> MemoryWatch:
    """The watch over the judge's, the reference's and the candidate's runners' GPU memory
    (not started). The job's share: ``gpu_memory_share_mib``, else the GPU's memory divided by
    the jobs on it (``gpu_jobs``, the service's slots on that GPU)."""
    candidate = runners["candidate"]
    return MemoryWatch(
        read=read,
        judge_pid=os.getpid(),
        reference_pid=runners["reference"].pid,
        candidate_root=candidate.reaper,
        candidate_pid=candidate.pid,
        by_uid=own_uid,
        slack_bytes=int(job["gpu_memory_slack_mib"]) * MIB,
        share_bytes=share_bytes(
            int(job.get("gpu_memory_share_mib") or 0),
            int(job.get("gpu_jobs") or 1),
            torch.cuda.get_device_properties(device).total_memory,
        ),
        on_breach=killer(candidate.pid),
        candidate_gone=lambda: candidate.status is not None,
        reference_setup_bytes=lender.lent.get("weights", 0),  # what the set-up loads
        lent=lender.lent_bytes,
        phase=lambda: timeline.current,
    )


def over_share(
    watch: MemoryWatch | None, phase: str
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(the Result's ``resource_limit``, the error) where the job went over its share of the
    GPU's memory, else (None, None)."""
    limit = watch.resource_limit(phase) if watch is not None else None
    if limit is None:
        return None, None
    error = {
        "phase": limit["phase"],
        "type": "ResourceLimit",
        "message": limit["message"],
        "traceback": "",
    }
    return limit, error
