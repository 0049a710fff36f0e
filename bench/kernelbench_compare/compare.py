"""Sets kgym's verdicts and speedups (a `kgym eval` run folder) beside KernelBench's own
evaluation of the same candidates (kernelbench_eval.py's output), one row per candidate.

    python3 bench/kernelbench_compare/compare.py RUN_FOLDER... --kernelbench kernelbench.jsonl \
        --out results
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from kgym.evaluation.attempt import attempt_from_result


def _last_rows(path: Path) -> dict[tuple[str, int, int], dict[str, Any]]:
    rows: dict[tuple[str, int, int], dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            rows[(row["task"], int(row["sample"]), int(row["turn"]))] = row
    return rows


def _fmt(value: float | None, spec: str = ".2f") -> str:
    return "—" if value is None else format(value, spec)


def join(runs: list[Path], kernelbench: Path) -> list[dict[str, Any]]:
    kgym_rows: dict[tuple[str, int, int], dict[str, Any]] = {}
    for run in runs:
        kgym_rows.update(_last_rows(run / "results.jsonl"))
    kb_rows = _last_rows(kernelbench)
    joined = []
    for key in sorted(kgym_rows.keys() & kb_rows.keys()):
        result = kgym_rows[key]["result"]
        attempt = attempt_from_result(result, key[0], None, key[1], key[2])
        timing = result.get("timing") or {}
        kb = kb_rows[key]
        joined.append(
            {
                "task": key[0],
                "sample": key[1],
                "candidate": kb.get("candidate"),
                "kgym_status": result.get("status"),
                "kgym_hybrid": (result.get("policies") or {}).get("hybrid", {}).get("status"),
                "kgym_strict": (result.get("policies") or {}).get("strict", {}).get("status"),
                "kgym_rules": attempt.rules.get("strict", []),
                "kgym_speedup": attempt.speedup,
                "kgym_speedup_ci": timing.get("speedup_ci"),
                "kgym_ref_ms": (timing.get("reference") or {}).get("median_ms"),
                "kgym_cand_ms": (timing.get("candidate") or {}).get("median_ms"),
                "kgym_pr": attempt.pr,
                "kb_correct": kb.get("correctness"),
                "kb_speedup": kb.get("speedup"),
                "kb_ref_ms": kb.get("ref_runtime_ms"),
                "kb_cand_ms": kb.get("runtime_ms"),
                "kb_static_valid": kb.get("static_valid"),
                "kb_static_errors": kb.get("static_errors") or [],
                "kb_error": kb.get("error"),
            }
        )
    return joined


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    kgym_correct = [r for r in rows if r["kgym_hybrid"] == "ok"]
    both_timed = [r for r in rows if r["kgym_speedup"] and r["kb_speedup"]]
    log_ratios = [math.log(r["kb_speedup"] / r["kgym_speedup"]) for r in both_timed]
    return {
        "candidates": len(rows),
        "kgym_ok_hybrid": len(kgym_correct),
        "kgym_ok_strict": sum(r["kgym_strict"] == "ok" for r in rows),
        "kernelbench_correct": sum(bool(r["kb_correct"]) for r in rows),
        "kernelbench_static_valid": sum(bool(r["kb_static_valid"]) for r in rows),
        "correctness_agrees": sum(
            bool(r["kb_correct"]) == (r["kgym_status"] == "ok" or r["kgym_hybrid"] == "ok")
            for r in rows
        ),
        "both_timed": len(both_timed),
        "speedup_ratio_kernelbench_over_kgym_geomean": (
            math.exp(sum(log_ratios) / len(log_ratios)) if log_ratios else None
        ),
        "speedup_ratio_range": (
            [math.exp(min(log_ratios)), math.exp(max(log_ratios))] if log_ratios else None
        ),
    }


def markdown(rows: list[dict[str, Any]], summary: dict[str, Any]) -> str:
    lines = [
        "| task | candidate | kgym hybrid / strict | kgym speedup [95% CI] | kgym ref / cand ms "
        "(median) | KernelBench correct | KernelBench speedup | KernelBench ref / cand ms (mean) "
        "| KernelBench static check |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ci = r["kgym_speedup_ci"]
        ci_text = f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else ""
        static = "ok" if r["kb_static_valid"] else "; ".join(r["kb_static_errors"])[:80]
        rules = f" ({', '.join(r['kgym_rules'])})" if r["kgym_rules"] else ""
        lines.append(
            f"| {r['task']} | {r['candidate']} | {r['kgym_hybrid']} / {r['kgym_strict']}{rules} "
            f"| {_fmt(r['kgym_speedup'])}{ci_text} | {_fmt(r['kgym_ref_ms'], '.4f')} / "
            f"{_fmt(r['kgym_cand_ms'], '.4f')} | {r['kb_correct']}"
            f"{' (' + r['kb_error'][:60] + ')' if r['kb_error'] else ''} "
            f"| {_fmt(r['kb_speedup'])} | {_fmt(r['kb_ref_ms'], '.4f')} / "
            f"{_fmt(r['kb_cand_ms'], '.4f')} | {static} |"
        )
    lines += ["", "```json", json.dumps(summary, indent=2), "```", ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", type=Path, nargs="+", help="kgym eval run folders")
    parser.add_argument(
        "--kernelbench", type=Path, required=True, help="kernelbench_eval.py's output"
    )
    parser.add_argument("--out", type=Path, required=True, help="writes OUT.md and OUT.json")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args()
    rows = join(args.runs, args.kernelbench)
    summary = summarise(rows)
    args.out.with_suffix(".json").write_text(
        json.dumps({"summary": summary, "rows": rows}, indent=2)
    )
    args.out.with_suffix(".md").write_text(markdown(rows, summary))
    print(json.dumps(summary) if args.json else markdown(rows, summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
