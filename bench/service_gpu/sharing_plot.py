"""Plots a throughput run made with ``--compare-sharing`` (run.py): the wall time of the service
with jobs holding the GPU lock `batched` (the default) and `serial` (and, in runs of 0c203a3 to
0fc7cc7, `yielding`), against
the process-per-evaluation baseline of the same run, and where the jobs' seconds went (timing
windows, waits for the lock).

    python bench/service_gpu/sharing_plot.py bench/service_gpu/throughput-batched-sharing.json \
        --out bench/service_gpu/sharing.png [--names OLD=NEW,...] [--json]

``--names`` relabels the modes of a run made before they were renamed (at d1d4305 the default,
with yields, was `batched`, and without them `whole-holds`; yields were removed after).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def start_of(row: dict[str, Any]) -> float | None:
    """When a service job started: its end (`finished_at`) less its `total`."""
    durations = (row.get("result") or {}).get("durations_ms") or {}
    finished = row.get("finished_at")
    if finished is None or not durations:
        return None
    return float(finished) - durations.get("total", 0.0) / 1e3


def window_of(row: dict[str, Any]) -> tuple[float, float] | None:
    """A service job's timing window: it ends where the job's profile phase began (its end
    less the service's `profile` figure) and lasted the judge's `harness_timing`."""
    durations = (row.get("result") or {}).get("durations_ms") or {}
    finished = row.get("finished_at")
    if finished is None or not durations.get("harness_timing"):
        return None
    end = float(finished) - durations.get("profile", 0.0) / 1e3
    return end - durations["harness_timing"] / 1e3, end


def timeline(rows: list[dict[str, Any]]) -> dict[str, float] | None:
    """When the GPU was in a timing window, from each job's end and phases (``window_of``).
    The batch starts at the earliest job's start (``start_of``). Returns the seconds before
    the first window, in windows, and between windows (the GPU not timing while jobs were
    left), and the overlap of the reconstructed windows, which the lock makes impossible: its
    size is the reconstruction's error."""
    starts = [s for s in map(start_of, rows) if s is not None]
    windows = [w for w in map(window_of, rows) if w is not None]
    if not windows:
        return None
    windows.sort()
    pairs = list(zip(windows, windows[1:]))
    return {
        "before_first_window_s": windows[0][0] - min(starts),
        "in_windows_s": sum(end - start for start, end in windows),
        "between_windows_s": sum(max(0.0, b[0] - a[1]) for a, b in pairs),
        "overlap_s": sum(max(0.0, a[1] - b[0]) for a, b in pairs),
    }


def summary(run: dict[str, Any], names: dict[str, str] | None = None) -> dict[str, Any]:
    """The figures the plot shows, from one throughput.json; ``names`` relabels its modes."""
    # Runs of 2bf70dd's run.py named their one other mode `serial_sharing`.
    other = run.get("other_sharing") or (
        {"serial": run["serial_sharing"]} if run.get("serial_sharing") else {}
    )
    if not other:
        raise SystemExit("this run compares no GPU sharing: made without --compare-sharing")
    names = names or {}
    services = {names.get("batched", "batched"): run}
    services |= {names.get(mode, mode): s for mode, s in other.items()}
    for workers, more in (run.get("other_workers_per_gpu") or {}).items():
        services[f"{names.get('batched', 'batched')}, {workers} workers"] = more
    figures = {
        "baseline_wall_s": run["baseline"]["wall_s"],
        "services": {
            name: {
                "wall_s": s["service"]["wall_s"] if s is run else s["wall_s"],
                "ratio": s["ratio"],
                "verdicts_agree": s["verdicts_agree"],
                "locks": s.get("locks"),
                "speedups": s.get("speedups"),
                "timeline": timeline(
                    [{**row, **row["service"]} for row in s["rows"]] if s is run else s["rows"]
                ),
            }
            for name, s in services.items()
        },
        "candidates": run["candidates"],
        "workers_per_gpu": run["workers_per_gpu"],
        "meta": run["meta"],
    }
    # With --repeat, the medians of every layout's runs (the first run's locks are kept).
    for mode, repeated in (run.get("repeats") or {}).items():
        name = names.get(mode, mode)
        if name in figures["services"] and len(repeated["wall_s"]) > 1:
            figures["services"][name]["wall_s"] = repeated["median_wall_s"]
            figures["services"][name]["ratio"] = repeated["ratio_of_median"]
            figures["services"][name]["runs"] = repeated["wall_s"]
    return figures


def plot(figures: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    services = figures["services"]
    fig, (walls, seconds) = plt.subplots(1, 2, figsize=(12, 4.5))
    names = ["process per evaluation", *services]
    values = [figures["baseline_wall_s"], *(s["wall_s"] for s in services.values())]
    bars = walls.barh(names, values, color=["grey"] + ["tab:blue"] * len(services))
    for bar, value, name in zip(bars, values, names, strict=True):
        ratio = "" if name not in services else f"  ({services[name]['ratio']:.2f}x)"
        runs = services.get(name, {}).get("runs")
        ratio += f", median of {len(runs)}" if runs else ""
        walls.text(value, bar.get_y() + bar.get_height() / 2, f" {value:.0f} s{ratio}", va="center")
    walls.invert_yaxis()
    walls.set_xlabel("wall seconds for the batch")
    walls.set_xlim(0, max(values) * 1.35)
    walls.set_title(f"{figures['candidates']} candidates, {figures['workers_per_gpu']} workers")
    # The GPU's time from the batch's start to its last window: before the first window, in
    # windows, and between windows (what the lock's layout can shorten).
    kinds = [
        ("before_first_window_s", "before the first window"),
        ("in_windows_s", "in timing windows"),
        ("between_windows_s", "between windows"),
    ]
    compared = [n for n in services if services[n]["timeline"]]
    bottoms = [0.0] * len(compared)
    for key, label in kinds:
        heights = [services[n]["timeline"][key] for n in compared]
        seconds.bar(compared, heights, 0.6, bottom=bottoms, label=label)
        bottoms = [b + h for b, h in zip(bottoms, heights, strict=True)]
    seconds.set_ylabel("seconds of the batch (reconstructed from each job's end)")
    seconds.set_title("the GPU's time, up to the last window")
    seconds.set_ylim(0, max(bottoms, default=1.0) * 1.3)
    seconds.legend(loc="upper center", ncols=3, fontsize=8)
    fig.suptitle(f"GPU lock sharing, {figures['meta']['gpu']}, {figures['meta']['date'][:10]}")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("throughput_json", type=Path, help="a throughput.json of run.py")
    p.add_argument("--out", type=Path, required=True, help="the PNG to write")
    p.add_argument(
        "--names",
        type=lambda text: dict(pair.split("=", 1) for pair in text.split(",") if pair),
        default={},
        help="OLD=NEW,...: the modes' labels in the plot",
    )
    p.add_argument("--json", action="store_true", help="print the plotted figures as JSON")
    args = p.parse_args(argv)
    figures = summary(json.loads(args.throughput_json.read_text()), args.names)
    plot(figures, args.out)
    if args.json:
        print(json.dumps(figures))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
