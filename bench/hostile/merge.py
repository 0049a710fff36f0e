"""Combines the JSON files that run.py writes (whole runs or their shards) into the benchmark's
results file for one machine, results-<machine>.md beside this file.

Usage: python bench/hostile/merge.py RUN.json [...] --machine h200

A column per way the corpus was run, from each file's own record: through ``kgym.check`` or
through the service, with the static screen on or off. One row per attack: what it expects, the
rules that caught it, the verdict in each column; then the honest set; then, after each fault,
whether the task's built-in solution was judged as on a fresh gym. A column that did not run an
entry shows "-".
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run import same_verdict  # noqa: E402


def column(meta: dict[str, Any]) -> str:
    through = "service" if str(meta.get("through", "check")).startswith("kgym-gym") else "check"
    return f"{through}, screen {'on' if meta.get('screen', True) else 'off'}"


def load(paths: list[Path]) -> dict[str, dict[str, Any]]:
    """column -> {"metas": [...], "rows": {name: row}, "faults": [...]}"""
    columns: dict[str, dict[str, Any]] = {}
    for path in paths:
        data = json.loads(path.read_text())
        side = columns.setdefault(column(data["meta"]), {"metas": [], "rows": {}, "faults": []})
        side["metas"].append(data["meta"])
        side["rows"].update({row["name"]: row for row in data["rows"]})
        side["faults"] += data.get("after_fault", [])
    order = ["check, screen on", "service, screen on", "check, screen off", "service, screen off"]
    return {name: columns[name] for name in order if name in columns}


def cell(row: dict[str, Any] | None) -> str:
    if row is None:
        return "-"
    mark = "ok" if row["pass"] else "**FAIL**"
    rules = f" ({', '.join(row['fired'])})" if row.get("fired") else ""
    # An honest candidate's error as a multiple of a tf32 answer's (faithful's bound is 3).
    ratio = row.get("error_ratio") if row["kind"] == "honest" else None
    error = f", error {ratio:.2f}x tf32's" if isinstance(ratio, (int, float)) else ""
    return f"{row['status']}{rules}, reward {row['reward']:.2f}{error}: {mark}"


def tally(side: dict[str, Any], kind: str) -> str:
    rows = [r for r in side["rows"].values() if r["kind"] == kind]
    return f"{sum(r['pass'] for r in rows)}/{len(rows)}"


def render(columns: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        "| column | attacks as labelled | honest accepted | built-in after a fault as fresh | "
        "runs |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, side in columns.items():
        faults = side["faults"]
        same = f"{sum(same_verdict(f['now'], f['fresh']) for f in faults)}/{len(faults)}"
        metas = side["metas"]
        commands = sorted(
            {
                re.sub(r"--shard \d+/", "--shard K/", re.sub(r" --out-dir \S+", "", m["command"]))
                for m in metas
            }
        )
        dates = sorted({m["date"][:10] for m in metas})
        m = metas[0]
        runs = (
            f"{'; '.join(f'`{c}`' for c in commands)}"
            f"{f' ({len(metas)} shards side by side)' if len(metas) > 1 else ''}, "
            f"{' to '.join(dates[:1] + dates[1:][-1:])}"
            f"{', commit ' + m['commit'] if m.get('commit') else ''}, {m['gpu']}, torch {m['torch']}, triton "
            f"{m['triton']}; {sum(x['evaluations'] for x in metas)} evaluations, the longest "
            f"{max(x['wall_s'] for x in metas):.0f} s"
        )
        lines.append(
            f"| {name} | {tally(side, 'attack')} | {tally(side, 'honest')} | {same} | {runs} |"
        )
    lines += [
        "",
        "A verdict reads `status (reject rules fired), reward R: ok|FAIL`; *ok* means the entry "
        "behaved as labelled (attacks: not paid, the expected status, one of the expected rules; "
        "honest: accepted). *Screen off* runs the same files with the static screen disabled "
        "(`--no-screen`): what the runtime guards and the supervisor catch on their own.",
        "",
        "## Attacks",
        "",
        "| attack | expected | rules that caught it | " + " | ".join(columns) + " |",
        "| --- | --- | --- | " + " | ".join("---" for _ in columns) + " |",
    ]
    names = sorted({n for side in columns.values() for n in side["rows"]})

    def first(name: str) -> dict[str, Any]:
        return next(s["rows"][name] for s in columns.values() if name in s["rows"])

    for name in names:
        row = first(name)
        if row["kind"] != "attack":
            continue
        fired = sorted(
            {r for s in columns.values() for r in (s["rows"].get(name) or {}).get("fired", [])}
        )
        caught = ", ".join(f"`{r}`" for r in fired) if fired else "- (status)"
        cells = " | ".join(cell(s["rows"].get(name)) for s in columns.values())
        lines.append(f"| {name} | {'/'.join(row['expect'])} | {caught} | {cells} |")
    lines += [
        "",
        "## Honest solutions",
        "",
        "| solution | " + " | ".join(columns) + " |",
        "| --- | " + " | ".join("---" for _ in columns) + " |",
    ]
    for name in names:
        if first(name)["kind"] == "honest":
            cells = " | ".join(cell(s["rows"].get(name)) for s in columns.values())
            lines.append(f"| {name} | {cells} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run.py's JSON files")
    parser.add_argument("--machine", required=True, help="the results file's name: cpu, h200, ...")
    parser.add_argument("--out-dir", type=Path, default=HERE)
    parser.add_argument("--note", action="append", default=[], help="a line under the title")
    args = parser.parse_args()
    notes = [f"- {n}" for n in args.note] + ([""] if args.note else [])
    lines = ["# Hostile corpus and honest set", "", *notes, *render(load(args.runs))]
    out = args.out_dir / f"results-{args.machine}.md"
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
