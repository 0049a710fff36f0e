"""What a job's CUDA contexts cost on this GPU. Two parts:

``start``: a process's first CUDA call and its context, one process or three at once (a job's
judge and its two runners), with and without another process holding the GPU.

Holders: `none`; `files` (the device files held open, which some set-ups use to keep the driver
loaded); `keeper` (`kgym-gym gpu-keeper`, the service's own, cpp/kgym/service/gpu_keeper.hpp);
`torch` (a torch process with its context). Each trial starts N processes that import torch,
waits until all are ready, lets them go at once, and reads from each the time of
`torch.cuda.init()` (cuInit and the device's set-up) and of its first allocation (the context).
It then kills them one by one and times each end (kill to reaped: the driver's teardown).

    python bench/cuda_contexts/run.py start [--trials 3] [--json]

``beside``: three processes making their contexts beside one kind of other jobs' work at a time
(``beside.py`` says how):

    python bench/cuda_contexts/run.py beside [--trials 5] [--conditions ...] [--json]

Each part replaces its section of results-<machine>.md beside this file.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from common import TITLE, gpu_line, holder, median, trial  # noqa: E402
from record import record_part, results_path, run_lines  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["beside"]:
        import beside  # noqa: PLC0415 - beside this file; it imports this module

        return beside.main(argv[1:])
    return start(argv[1:] if argv[:1] == ["start"] else argv)


def start(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], prog="run.py start")
    p.add_argument("--trials", type=int, default=3, help="trials per holder and process count")
    p.add_argument(
        "--holders", default="none,files,keeper,torch", help="which holders, in this order"
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    args = p.parse_args(argv)
    gpu = gpu_line()
    out: dict[str, Any] = {"gpu": gpu, "holders": {}}
    with tempfile.TemporaryDirectory(prefix="kgym-ctx-") as tmp:
        for kind in args.holders.split(","):
            held = holder(kind)
            time.sleep(0.5)
            try:
                for n in (1, 3):
                    rows = []
                    for k in range(args.trials):
                        rows.append(trial(n, Path(tmp)))
                        print(f"{kind} x{n} #{k}: {rows[-1]}", file=sys.stderr, flush=True)
                        time.sleep(1.0)
                    out["holders"].setdefault(kind, {})[str(n)] = {
                        "trials": rows,
                        "init_median_ms": median([v for r in rows for v in r["init_ms"]]),
                        "context_median_ms": median([v for r in rows for v in r["context_ms"]]),
                        "all_started_median_ms": median([r["all_started_ms"] for r in rows]),
                        "end_median_ms": median([v for r in rows for v in r["end_ms"]]),
                    }
            finally:
                if held is not None:
                    held.kill()
                    held.wait()
                    time.sleep(1.5)
    out["command"] = "python bench/cuda_contexts/run.py start " + " ".join(argv)
    lines = [
        *run_lines(out["command"]),
        f"- {gpu}; medians over {args.trials} trials; ms",
        "",
        "| holder | processes | torch.cuda.init() | first allocation (context) | all started | end (kill to reaped) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for kind, by_n in out["holders"].items():
        for n, row in by_n.items():
            lines.append(
                f"| {kind} | {n} | {row['init_median_ms']} | {row['context_median_ms']} | "
                f"{row['all_started_median_ms']} | {row['end_median_ms']} |"
            )
    part = "start: with and without a process holding the GPU"
    record_part(results_path(HERE), TITLE, part, lines, out, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
