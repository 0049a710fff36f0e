"""The judge's own confinement: the job's uid, taken once the runners are forked, a write fence
and the system call filter, all before any task code runs (task sources come from clients)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kgym import _core
from kgym.harness import loader
from kgym.harness.gpu_memory import Reader, nvml_reader

# Written by the supervisor into the job's file-system view only (sandbox/job_view.hpp).
VIEW_MARKER = "/etc/kgym-job-view"


def protected_paths() -> list[str]:
    """Files no task or candidate may open: the installed reference solutions."""
    return [str(Path(loader.__file__).resolve().parents[1] / "builtin_tasks")]


def sandbox_uid(base: int, workdir: Path, judge: dict[str, Any]) -> int:
    """The uid the judge and its runners take once forked (-1: keep this one). The job
    directory becomes theirs first: it is where they write."""
    if base <= 0 or os.geteuid() != 0:
        return -1
    # One uid per job: the base plus the job child's pid (its process group), which the
    # supervisor also uses to kill what the uid leaves running (sandbox/child_setup.hpp).
    uid = base + os.getpgrp()
    if not os.path.exists(VIEW_MARKER):
        # Outside the job's view the uid might not reach the interpreter's own files.
        judge["unprivileged_note"] = "no job view: runs as the service's user"
        return -1
    for root, dirs, files in os.walk(workdir):
        dirs[:] = [d for d in dirs if d != ".view"]
        for name in [root, *(os.path.join(root, f) for f in files)]:
            os.chown(name, uid, uid, follow_symlinks=False)
    return uid


def confine_judge(
    uid: int, use_cuda: bool, workdir: Path, judge: dict[str, Any]
) -> tuple[Reader | None, str]:
    """The judge leaves root, fences its writes and filters its system calls; its GPU memory
    reader is made first. Returns the reader (None on a CPU or where NVML is not there) and
    what to say of the memory watch until it runs."""
    applied, note = _core.confine_drop_capabilities(uid)
    judge["unprivileged"] = applied and os.geteuid() != 0
    judge["uid"] = os.geteuid()
    if note:
        judge["unprivileged_note"] = note
    elif os.geteuid() == 0:
        judge.setdefault("unprivileged_note", "runs as root (no sandbox uid was given)")
    reader, memory_note = None, "the job runs on the CPU"
    if use_cuda:
        reader, why = nvml_reader()
        memory_note = why or "the evaluation ended before the candidate's code ran"
    # The judge's own write fence, now that the runners exist (each stacks its own); its own
    # /proc/<pid> stays writable (the fence adds it: the CUDA driver writes there).
    applied, note = _core.confine_writes([str(workdir)], ["/dev"])
    judge["writes_confined"] = applied
    if note:
        judge["writes_note"] = note
    # The full system call filter, now that no runner needs mount any more; task code (loaded
    # next, unscreened) runs under it.
    filtered, filter_note = _core.confine_syscalls()
    judge["syscalls_filtered"] = filtered
    if filter_note:
        judge["syscalls_note"] = filter_note
    return reader, memory_note
