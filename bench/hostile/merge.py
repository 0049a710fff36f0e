"""Combines results-cpu.json and results-gpu.json (or their shards) into results.md.

Usage: python bench/hostile/merge.py [--dir bench/hostile]

One row per attack: what it does, the rule(s) that caught it (the reject findings on either
side), and the verdict on the CPU (interpreter, CPU sizes) and on the GPU (GPU sizes); then the
honest set. A side that has not been run (or skipped the entry) shows "-".
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def load_side(folder: Path, side: str) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """side: cpu, gpu, cpu-noscreen or gpu-noscreen (whole runs and their shards)."""
    rows: dict[str, dict[str, Any]] = {}
    metas: list[dict[str, Any]] = []
    paths = sorted(folder.glob(f"results-{side}.json")) + sorted(
        folder.glob(f"results-{side}-[0-9]*of*.json")
    )
    for path in paths:
        data = json.loads(path.read_text())
        metas.append(data["meta"])
        for row in data["rows"]:
            rows[row["name"]] = row
    return rows, metas


def cell(row: dict[str, Any] | None) -> str:
    if row is None:
        return "-"
    mark = "ok" if row["pass"] else "**FAIL**"
    rules = f" ({', '.join(row['fired'])})" if row.get("fired") else ""
    return f"{row['status']}{rules}, reward {row['reward']:.2f}: {mark}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=HERE)
    args = parser.parse_args()
    cpu, cpu_meta = load_side(args.dir, "cpu")
    gpu, gpu_meta = load_side(args.dir, "gpu")
    cpu_rt, cpu_rt_meta = load_side(args.dir, "cpu-noscreen")
    gpu_rt, gpu_rt_meta = load_side(args.dir, "gpu-noscreen")
    names = sorted(set(cpu) | set(gpu))
    lines = ["# Hostile corpus: CPU and GPU verdicts", ""]
    sides = (
        ("CPU", cpu_meta),
        ("GPU", gpu_meta),
        ("CPU, screen off", cpu_rt_meta),
        ("GPU, screen off", gpu_rt_meta),
    )
    for side, metas in sides:
        for m in metas:
            lines.append(
                f"- {side}: `{m['command']}` on {m['date']}; {m['cpu']}; GPU: {m['gpu']}; "
                f"torch {m['torch']}, triton {m['triton']}; {m['evaluations']} evaluations in one "
                f"process, {m['wall_s']:.0f} s"
            )
        if not metas:
            lines.append(f"- {side}: not run yet")
    lines += [
        "",
        "A verdict reads `status (reject rules fired), reward R: ok|FAIL`; *ok* means the entry "
        "behaved as labelled (attacks: not paid, expected status, one of the expected rules; "
        "honest: accepted). The *screen off* columns run the same files with the static screen "
        "disabled (`--no-screen`): what the runtime guards and the supervisor catch on their own.",
        "",
        "## Attacks",
        "",
        "| attack | expected | rule that caught it | verdict on CPU | verdict on GPU | "
        "CPU, screen off | GPU, screen off |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name in names:
        row = cpu.get(name) or gpu.get(name)
        assert row is not None
        if row["kind"] != "attack":
            continue
        fired = sorted(
            set((cpu.get(name) or {}).get("fired", []))
            | set((gpu.get(name) or {}).get("fired", []))
        )
        caught = ", ".join(f"`{r}`" for r in fired) if fired else "- (status)"
        lines.append(
            f"| {name} | {'/'.join(row['expect'])} | {caught} | {cell(cpu.get(name))} | "
            f"{cell(gpu.get(name))} | {cell(cpu_rt.get(name))} | {cell(gpu_rt.get(name))} |"
        )
    lines += [
        "",
        "## Honest solutions",
        "",
        "| solution | verdict on CPU | verdict on GPU |",
        "| --- | --- | --- |",
    ]
    for name in names:
        row = cpu.get(name) or gpu.get(name)
        assert row is not None
        if row["kind"] == "honest":
            lines.append(f"| {name} | {cell(cpu.get(name))} | {cell(gpu.get(name))} |")
    out = args.dir / "results.md"
    out.write_text("\n".join(lines) + "\n")
    print(out.read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
