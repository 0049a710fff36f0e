"""Plots a throughput run made with ``--compare-sharing`` (run.py): the wall time of the service
with jobs holding the GPU lock `batched` (the default), `yielding` and `serial`, against
the process-per-evaluation baseline of the same run, and where the jobs' seconds went (timing
windows, waits for the lock).

    python bench/service_gpu/sharing_plot.py bench/service_gpu/throughput-batched-sharing.json \
        --out bench/service_gpu/sharing.png [--names OLD=NEW,...] [--json]

``--names`` relabels the modes of a run made before they were renamed (at d1d4305 the default,
with yields, was `batched`, and without them `whole-holds`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


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
    kinds = [("timing_windows_s", "timing windows"), ("shared_wait_s", "waits, shared")]
    kinds.append(("timing_wait_s", "waits, to time"))
    compared = [n for n in services if services[n]["locks"]]
    width = 0.8 / len(kinds)
    for i, (key, label) in enumerate(kinds):
        xs = [j + i * width for j in range(len(compared))]
        seconds.bar(xs, [services[n]["locks"][key] for n in compared], width, label=label)
    seconds.set_xticks([j + width for j in range(len(compared))], compared)
    seconds.set_ylabel("seconds, summed over jobs")
    seconds.set_title("where the jobs' seconds went")
    seconds.legend()
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
