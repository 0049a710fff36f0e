"""Plots per-call time against calls per sample from the rows of `run.py` (one PNG).

Usage: python bench/sample_cost/plot.py ROWS.json [...] --out sample_cost-h100.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def rows_of(path: Path) -> list[dict]:
    data = json.loads(path.read_text())
    return data["rows"] if isinstance(data, dict) else data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    fig, axes = plt.subplots(1, len(args.results), figsize=(6 * len(args.results), 4.2))
    axes = axes if len(args.results) > 1 else [axes]
    for ax, path in zip(axes, args.results):
        rows = [r for r in rows_of(path) if r.get("calls") and r.get("cand")]
        for task in sorted({r["task"] for r in rows}):
            mine = [r for r in rows if r["task"] == task]
            line = ax.plot(
                [r["calls"]["candidate"] for r in mine],
                [r["cand"] for r in mine],
                "o-",
                label=f"{task} candidate",
            )[0]
            ax.plot(
                [r["calls"]["reference"] for r in mine],
                [r["ref"] for r in mine],
                "s--",
                color=line.get_color(),
                alpha=0.6,
                label=f"{task} reference",
            )
            kernel = [r["profile_per_call"] for r in mine if r.get("profile_per_call")]
            if kernel:
                ax.axhline(kernel[0], color=line.get_color(), lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("calls per sample")
        ax.set_ylabel("median per call (ms)")
        ax.set_title(path.stem, fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle("Per-call time against calls per sample (dotted: profiled kernel time)")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
