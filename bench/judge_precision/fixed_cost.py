"""What a timed sample costs beyond its calls when the calls run in another process.

Usage (on a GPU): python bench/judge_precision/fixed_cost.py

Two processes stand in for the judge and a runner, as in kgym's timing window: the "judge"
flushes the L2, reads its clock, asks the "runner" over a pipe for a batch and waits for its
reply, runs a canary kernel of its own and synchronises, and reads its clock again. Three
batches: none (no GPU work in the runner: what kgym took as a sample's fixed cost before the
runner's empty batch launched a kernel), one tiny kernel, and 32 softmax calls on 06_softmax's
shape (their GPU time by CUDA events in the judge's own process beside it). The tiny kernel's
excess over the empty batch is the GPU's switch into the runner's context and back, which every
real sample holds. Writes its section of results-<machine>.md beside this file.
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

ROWS, DIM, CALLS, REPEATS = 4096, 16384, 32, 60


def runner() -> None:
    x = torch.randn(ROWS, DIM, device="cuda")
    tick = torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    read, write = sys.stdin.buffer, sys.stdout.buffer
    while (command := read.read(1)) not in (b"", b"q"):
        if command == b"k":
            tick.add_(1.0)
        elif command == b"b":
            for _ in range(CALLS):
                out = torch.softmax(x, -1)
                del out
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
    x = torch.randn(ROWS, DIM, device="cuda")

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

    names = {b"e": "no GPU work", b"k": "one tiny kernel", b"b": f"{CALLS} softmax calls"}
    for command in names:
        for _ in range(5):
            sample(command)
    median = {c: statistics.median(sample(c) for _ in range(REPEATS)) for c in names}
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    gpu = []
    for _ in range(20):
        flush.zero_()
        torch.cuda.synchronize()
        start.record()
        for _ in range(CALLS):
            out = torch.softmax(x, -1)
            del out
        end.record()
        end.synchronize()
        gpu.append(start.elapsed_time(end))
    calls_gpu = statistics.median(gpu)
    child.stdin.write(b"q")
    child.stdin.flush()
    child.wait()
    lines = [
        *run_lines("python bench/judge_precision/fixed_cost.py"),
        f"- torch {torch.__version__}; medians of {REPEATS} samples each",
        "",
        "| the runner's batch | sample, judge's clock | beyond the empty batch |",
        "| --- | --- | --- |",
        *(
            f"| {name} | {median[c]:.3f} ms | {median[c] - median[b'e']:.3f} ms |"
            for c, name in names.items()
        ),
        f"| ({CALLS} softmax calls by CUDA events in one process) | {calls_gpu:.3f} ms | |",
        "",
        f"The {CALLS} calls' sample less the empty batch and their own GPU time: "
        f"{median[b'b'] - median[b'e'] - calls_gpu:.3f} ms; the tiny kernel's excess: "
        f"{median[b'k'] - median[b'e']:.3f} ms.",
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
