"""What a timed sample costs beyond its calls when the calls run in another process.

Usage (on a GPU): python bench/judge_precision/fixed_cost.py

Two processes stand in for the judge and a runner, as in kgym's timing window: the "judge"
flushes the L2, reads its clock, asks the "runner" over a pipe for a batch and waits for its
reply, runs a canary kernel of its own and synchronises, and reads its clock again. The
batches: none (no GPU work in the runner: what kgym took as a sample's fixed cost before the
runner's empty batch launched a kernel), one tiny kernel (kgym's fixed cost now), and softmax
calls on 06_softmax's shape: 32 on one input; 32 on inputs of their own; 32 on inputs of their
own, each output copied into a slot of its own as kgym's runner does; 4 of those. Each batch's
GPU time is also taken by CUDA events in the judge's own process beside it. The tiny kernel's
excess over the empty batch is the GPU's switch into the runner's context and back, which every
real sample holds; what a batch holds beyond the tiny one and its own GPU time is what kgym
would leave in a sample, and whether it grows with the calls tells a per-call cost from a
per-sample one. Writes its section of results-<machine>.md beside this file.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from record import record_part, results_path, run_lines  # noqa: E402

ROWS, DIM, CALLS, FEW, REPEATS = 4096, 16384, 32, 4, 60


def _batch(command: bytes, inputs: list[torch.Tensor], slots: list[torch.Tensor]) -> None:
    """The GPU work of a batch (the same in the runner and, for its events, in the judge)."""
    if command == b"b":
        for _ in range(CALLS):
            out = torch.softmax(inputs[0], -1)
            del out
    elif command == b"d":
        for k in range(CALLS):
            out = torch.softmax(inputs[k], -1)
            del out
    elif command in (b"c", b"f"):
        for k in range(CALLS if command == b"c" else FEW):
            out = torch.softmax(inputs[k], -1)
            slots[k].copy_(out)
            del out


def _buffers() -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    inputs = [torch.randn(ROWS, DIM, device="cuda") for _ in range(CALLS)]
    return inputs, [torch.empty(ROWS, DIM, device="cuda") for _ in range(CALLS)]


def runner() -> None:
    inputs, slots = _buffers()
    tick = torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    read, write = sys.stdin.buffer, sys.stdout.buffer
    while (command := read.read(1)) not in (b"", b"q"):
        if command == b"k":
            tick.add_(1.0)
        else:
            _batch(command, inputs, slots)
        torch.cuda.synchronize()
        write.write(b".")
        write.flush()


def main() -> None:
    child = subprocess.Popen(
        [sys.executable, __file__, "runner"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert child.stdin is not None and child.stdout is not None
    flush = torch.empty(2 * 60 * 2**20 // 4, device="cuda")
    canary = torch.zeros(1024, device="cuda")
    inputs, slots = _buffers()

    def sample(command: bytes) -> float:
        flush.zero_()
        torch.cuda.synchronize()
        began = time.perf_counter_ns()
        child.stdin.write(command)
        child.stdin.flush()
        child.stdout.read(1)
        canary.add_(1.0)
        torch.cuda.synchronize()
        return (time.perf_counter_ns() - began) / 1e6

    def events(command: bytes) -> float:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        gpu = []
        for _ in range(20):
            flush.zero_()
            torch.cuda.synchronize()
            start.record()
            _batch(command, inputs, slots)
            end.record()
            end.synchronize()
            gpu.append(start.elapsed_time(end))
        return statistics.median(gpu)

    names = {
        b"e": "no GPU work",
        b"k": "one tiny kernel",
        b"b": f"{CALLS} softmax calls, one input",
        b"d": f"{CALLS} softmax calls, an input each",
        b"c": f"{CALLS} softmax calls, an input each, outputs copied to slots",
        b"f": f"{FEW} softmax calls, an input each, outputs copied to slots",
    }
    for command in names:
        for _ in range(5):
            sample(command)
    median = {c: statistics.median(sample(c) for _ in range(REPEATS)) for c in names}
    gpu = {c: events(c) for c in names if c not in (b"e", b"k")}
    child.stdin.write(b"q")
    child.stdin.flush()
    child.wait()

    def row(c: bytes, name: str) -> str:
        beyond = median[c] - median[b"k"]
        if c not in gpu:
            return f"| {name} | {median[c]:.3f} ms | {median[c] - median[b'e']:.3f} ms | | |"
        return (
            f"| {name} | {median[c]:.3f} ms | {median[c] - median[b'e']:.3f} ms | "
            f"{gpu[c]:.3f} ms | {beyond - gpu[c]:.3f} ms |"
        )

    lines = [
        *run_lines("python bench/judge_precision/fixed_cost.py"),
        f"- torch {torch.__version__}; medians of {REPEATS} samples each, of 20 for events",
        "",
        "| the runner's batch | sample, judge's clock | beyond the empty batch | its GPU time "
        "by events in one process | left beyond the tiny kernel's batch and its GPU time |",
        "| --- | --- | --- | --- | --- |",
        *(row(c, name) for c, name in names.items()),
        "",
        f"The tiny kernel's excess over the empty batch: {median[b'k'] - median[b'e']:.3f} ms.",
    ]
    record_part(
        results_path(HERE), "Judge timing precision", "A sample's fixed cost", lines, {}, False
    )
    print("\n".join(lines))


if __name__ == "__main__":
    if sys.argv[1:] == ["runner"]:
        runner()
    else:
        main()
