"""Draws each job of a throughput run (run.py) on the batch's clock, one panel per service run
(the default and each ``--also-workers``): its wait for the start gate, its CUDA contexts, its
phases up to the timing window, its wait for the window, and the window. Read from each job's
end (``finished_at``) and the phase durations and stretches of its Result, as run.py's
``window_timeline`` reads them.

    python bench/service_gpu/timeline_plot.py OUT/throughput.json \
        --out bench/service_gpu/timeline-h200.png [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import PHASES_BEFORE_TIMING  # noqa: E402 - the supervisor's phases before the window

# A job's stretches from its start, in the harness' order inside `load` (Evaluation.start_runners).
BEFORE_CONTEXT = ("prepare", "runners", "start_gate", "confine")
COLOURS = {
    "start gate wait": "lightgrey",
    "contexts": "tab:orange",
    "load to decoy (its lock waits too)": "tab:blue",
    "wait for the window": "wheat",
    "timing window": "tab:red",
}


def job_start(row: dict[str, Any]) -> float | None:
    """When a job began on the clock of `finished_at`: its end less its `total`."""
    durations = (row.get("result") or {}).get("durations_ms") or {}
    if "total" not in durations or row.get("finished_at") is None:
        return None
    return float(row["finished_at"]) - float(durations["total"]) / 1e3


def job_spans(row: dict[str, Any], origin: float) -> list[tuple[str, float, float]]:
    """(kind, start, length) in seconds from ``origin`` for one job's row."""
    start = job_start(row)
    if start is None:
        return []
    durations = row["result"]["durations_ms"]
    ms = {key: float(value) for key, value in durations.items() if isinstance(value, int | float)}
    began = start - origin
    gate_at = began + sum(ms.get(k, 0.0) for k in ("startup", "harness_load_prepare")) / 1e3
    gate_at += ms.get("harness_load_runners", 0.0) / 1e3
    context_at = began + sum(ms.get("harness_load_" + k, 0.0) for k in BEFORE_CONTEXT) / 1e3
    context_at += ms.get("startup", 0.0) / 1e3
    contexts_done = context_at + ms.get("harness_load_context", 0.0) / 1e3
    spans = [
        ("start gate wait", gate_at, ms.get("harness_load_start_gate", 0.0) / 1e3),
        ("contexts", context_at, contexts_done - context_at),
    ]
    shared_until = began + ms["total"] / 1e3  # a job that is not timed: to its end
    if "timing" in ms:
        opened = began + sum(ms.get(p, 0.0) for p in PHASES_BEFORE_TIMING) / 1e3
        waited = ms.get("harness_timing_lock_wait", 0.0) / 1e3
        shared_until = opened - waited
        spans.append(("wait for the window", shared_until, waited))
        spans.append(("timing window", opened, (ms["timing"] + ms.get("profile", 0.0)) / 1e3))
    spans.append(
        ("load to decoy (its lock waits too)", contexts_done, shared_until - contexts_done)
    )
    return [s for s in spans if s[2] > 0]


def runs_of(throughput: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    workers = throughput.get("workers_per_gpu")
    runs = {f"{workers} workers per GPU": [r["service"] for r in throughput["rows"]]}
    for count, other in (throughput.get("other_workers_per_gpu") or {}).items():
        runs[f"{count} workers per GPU"] = other["rows"]
    return runs


def figures(throughput: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"baseline_wall_s": throughput["baseline"]["wall_s"], "runs": {}}
    for name, rows in runs_of(throughput).items():
        started = sorted((s, i) for i, r in enumerate(rows) if (s := job_start(r)) is not None)
        origin = started[0][0]
        out["runs"][name] = [job_spans(rows[i], origin) for _, i in started]
    return out


def plot(data: dict[str, Any], meta: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = data["runs"]
    fig, axes = plt.subplots(len(runs), 1, figsize=(12, 3.2 * len(runs)), sharex=True)
    axes = axes if len(runs) > 1 else [axes]
    for ax, (name, jobs) in zip(axes, runs.items(), strict=True):
        for y, spans in enumerate(jobs):
            for kind, start, length in spans:
                ax.broken_barh([(start, length)], (y - 0.4, 0.8), color=COLOURS[kind])
        ax.set_ylabel("job (by start)")
        ax.set_title(f"{name}: {len(jobs)} jobs", fontsize=10)
        ax.invert_yaxis()
    axes[-1].set_xlabel("seconds from the batch's first job")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in COLOURS.values()]
    fig.legend(handles, list(COLOURS), loc="lower center", ncols=len(COLOURS), fontsize=8)
    fig.suptitle(f"{meta.get('gpu', '')}, {str(meta.get('date', ''))[:10]}", fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(out, dpi=100)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("throughput_json", type=Path, help="a throughput.json of run.py")
    p.add_argument("--out", type=Path, required=True, help="the PNG to write")
    p.add_argument("--json", action="store_true", help="print the plotted spans as JSON")
    args = p.parse_args(argv)
    throughput = json.loads(args.throughput_json.read_text())
    data = figures(throughput)
    plot(data, throughput.get("meta") or {}, args.out)
    print(f"wrote {args.out}", file=sys.stderr)
    if args.json:
        print(json.dumps(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
