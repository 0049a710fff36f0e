"""What the judge's exact check of an output costs alone, and beside a thread of the judge that
keeps the interpreter busy: the check is many small torch operations, and each gives up the
interpreter's lock and waits to take it back. A judge thread that compiles (the fused check's
compilation, which the fork server does once: ``kgym.harness.triton_warm``) is the case that
matters.

    python bench/judge_checks/run.py [--repeats 5] [--json]

Side by side in one process: the check alone; beside a thread running Python without pause
(at the default switch interval, and at 0.5 ms); on a GPU, beside a thread compiling the fused
check into an empty Triton cache, as the judge did. Outputs of ``06_softmax``'s size on a GPU
(4096 x 16384), 256 x 1024 otherwise. Writes results-<machine>.md beside this file.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from kgym.harness import compare

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from record import header, record, results_path  # noqa: E402


def _ms(fn: Callable[[], Any], device: torch.device, repeats: int) -> float:
    fn()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        times.append((time.perf_counter() - began) * 1e3)
    return statistics.median(times)


def _beside(work: Callable[[threading.Event], None], check: Callable[[], float]) -> float:
    stop = threading.Event()
    thread = threading.Thread(target=work, args=(stop,), daemon=True)
    thread.start()
    try:
        return check()
    finally:
        stop.set()
        thread.join()


def _busy(stop: threading.Event) -> None:
    while not stop.is_set():
        sum(range(10_000))


def _compiling(device: torch.device) -> Callable[[threading.Event], None]:
    def work(stop: threading.Event) -> None:
        from kgym.harness.kernels import fused_check

        while not stop.is_set():  # a fresh cache each time: a real compilation
            with tempfile.TemporaryDirectory(prefix="kgym-bench-fused-") as cache:
                os.environ["TRITON_CACHE_DIR"] = cache
                fused_check.warm(device)

    return work


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=5, help="checks per measurement (median)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    args = p.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    shape = (4096, 16384) if device.type == "cuda" else (256, 1024)
    gen = torch.Generator(device=device).manual_seed(0)
    expected = torch.softmax(torch.randn(shape, device=device, generator=gen), -1)
    actual = expected + 1e-9 * torch.randn(shape, device=device, generator=gen)

    def check() -> float:
        return _ms(
            lambda: compare.compare_outputs([actual], [expected], 1e-2, 1e-2), device, args.repeats
        )

    figures: dict[str, float] = {}
    default_interval = sys.getswitchinterval()
    print("alone ...", file=sys.stderr, flush=True)
    figures["alone"] = check()
    print("beside a busy thread ...", file=sys.stderr, flush=True)
    figures["busy_thread"] = _beside(_busy, check)
    sys.setswitchinterval(0.0005)
    figures["busy_thread_switch_0.5ms"] = _beside(_busy, check)
    sys.setswitchinterval(default_interval)
    if device.type == "cuda":
        print("beside the fused check's compilation ...", file=sys.stderr, flush=True)
        previous = os.environ.get("TRITON_CACHE_DIR")
        figures["compiling_fused_check"] = _beside(_compiling(device), check)
        if previous is None:
            os.environ.pop("TRITON_CACHE_DIR", None)
        else:
            os.environ["TRITON_CACHE_DIR"] = previous
    figures["alone_again"] = check()
    command = "python bench/judge_checks/run.py " + " ".join(sys.argv[1:])
    result = {
        "command": command,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "shape": list(shape),
        "switch_interval_s": default_interval,
        "median_ms": figures,
    }
    compiling = figures.get("compiling_fused_check")
    lines = [
        *header("The judge's exact check, alone and beside a busy thread", command),
        f"- torch {result['torch']}, Python {result['python']}; output "
        f"{' x '.join(map(str, shape))}; median ms of one `compare.compare_outputs` (errors on, "
        "the correctness phase's), one measurement after the other in one process",
        "",
        "| alone | beside a busy thread | the same, 0.5 ms switch interval | beside the fused "
        "check's compilation | alone again |",
        "| --- | --- | --- | --- | --- |",
        f"| {figures['alone']:.1f} | {figures['busy_thread']:.1f} | "
        f"{figures['busy_thread_switch_0.5ms']:.1f} | "
        f"{'-' if compiling is None else f'{compiling:.1f}'} | {figures['alone_again']:.1f} |",
    ]
    record(results_path(HERE), lines, result, args.json)
    if not args.json:
        for name, ms in figures.items():
            print(f"{name}: {ms:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
