"""What the judge's exact check of an output costs alone, and beside a thread of the judge that
keeps the interpreter busy: the check is many small torch operations, and each gives up the
interpreter's lock and waits to take it back. The judge had such a thread in its correctness
phase: the compilation of its fused check (``fused_check.warm``), which the fork server now
does once (``kgym.harness.triton_warm``).

    python bench/judge_checks/contention.py [--repeats 5] [--json]

Side by side in one process: the check alone; beside a thread running Python without pause
(at the default switch interval, and at 0.5 ms); on a GPU, beside a thread compiling the fused
check into an empty Triton cache, as the judge did. Outputs of ``06_softmax``'s size on a GPU
(4096 x 16384), 256 x 1024 otherwise. Writes ``results-<host>.json`` and ``results.md``
beside this file (the machine, the date, the command).
"""

from __future__ import annotations

import argparse
import datetime
import json
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
        from kgym.harness import fused_check

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
    result = {
        "command": "python bench/judge_checks/contention.py " + " ".join(sys.argv[1:]),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": platform.node(),
        "cpus": os.cpu_count(),
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "torch": torch.__version__,
        "python": platform.python_version(),
        "shape": list(shape),
        "switch_interval_s": default_interval,
        "median_ms": figures,
    }
    host = "gpu" if device.type == "cuda" else "cpu"
    (HERE / f"results-{host}.json").write_text(json.dumps(result, indent=1) + "\n")
    _write_markdown()
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        for name, ms in figures.items():
            print(f"{name}: {ms:.1f} ms")
    return 0


def _write_markdown() -> None:
    lines = [
        "# The judge's exact check, alone and beside a busy thread",
        "",
        "`contention.py`: median milliseconds of one `compare.compare_outputs` (errors on, the",
        "correctness phase's), in one process, one measurement after the other. Written by the",
        "script.",
        "",
        "| side | device | torch | python | output | alone | beside a busy thread | "
        "the same, 0.5 ms switch interval | beside the fused check's compilation | "
        "alone again | date | command |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for path in sorted(HERE.glob("results-*.json")):
        r = json.loads(path.read_text())
        m = r["median_ms"]
        compiling = m.get("compiling_fused_check")
        lines.append(
            f"| {path.stem.removeprefix('results-')} | {r['device']} ({r['cpus']} CPUs) | "
            f"{r['torch']} | {r['python']} | {' x '.join(map(str, r['shape']))} | "
            f"{m['alone']:.1f} ms | {m['busy_thread']:.1f} ms | "
            f"{m['busy_thread_switch_0.5ms']:.1f} ms | "
            f"{'-' if compiling is None else f'{compiling:.1f} ms'} | {m['alone_again']:.1f} ms | "
            f"{r['date']} | `{r['command']}` |"
        )
    (HERE / "results.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
