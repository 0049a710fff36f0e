"""Would the timing stop rule stop sooner on each round's ratio? A study of raw samples.

The judge's stop rule (``timing.py``) waits until each series' own median has a 95% interval
of at most 1% (checked every 5 rounds from 20). A round times the reference's batch and the
candidate's back to back, so a ratio per round would cancel any drift the two share; it would
not help where the noise is each batch's own. This reads raw per-round samples (one JSON list
of evaluations, each with ``task`` and ``raw`` = ``{"reference": [...], "candidate": [...]}``
in ms per call, at least 20 rounds) and replays both rules on their prefixes.

With ``--every-round`` it replays instead today's rule checked at every round from 20 (it
stops at the first round whose intervals are within 1%, not at the next multiple of 5) and
compares the speedup each stop would report with the one all the samples give.

Usage:
    python bench/judge_precision/stop_rule.py bench/judge_precision/raw-samples-60-rounds.json \
        --out bench/judge_precision/results-stop-rule.md --json bench/judge_precision/results-stop-rule.json
    python bench/judge_precision/stop_rule.py bench/judge_precision/raw-samples-60-rounds.json \
        --every-round --out bench/judge_precision/results-stop-every-round.md \
        --json bench/judge_precision/results-stop-every-round.json
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kgym.harness.timing import median_ci_halfwidth

MIN_ROUNDS = 20
EVERY = 5
TARGET = 0.01
SPIKE = 1.15  # a sample this far over its series' median is listed by its round

Rule = Callable[[list[float], list[float]], float]


def per_series(reference: list[float], candidate: list[float]) -> float:
    """Today's rule: the wider of the two series' own median intervals."""
    return max(median_ci_halfwidth(reference), median_ci_halfwidth(candidate))


def per_round_ratio(reference: list[float], candidate: list[float]) -> float:
    """The paired rule: the median interval of each round's ratio."""
    return median_ci_halfwidth([r / c for r, c in zip(reference, candidate)])


def stop_round(
    rule: Rule, reference: list[float], candidate: list[float], every: int = EVERY
) -> int | None:
    """The round at which ``rule`` would have stopped, checked every ``every`` rounds from
    MIN_ROUNDS; None if not within the samples."""
    for k in range(MIN_ROUNDS, len(reference) + 1, every):
        if rule(reference[:k], candidate[:k]) <= TARGET:
            return k
    return None


def speedup(reference: list[float], candidate: list[float]) -> float:
    return statistics.median(reference) / statistics.median(candidate)


def every_round_study(evaluations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Today's rule checked every EVERY rounds against every round: where each stops, and how
    far the speedup it would report is from the one of all the samples (an evaluation that
    does not stop within them reports that one)."""
    rows = []
    for e in evaluations:
        ref, cand = e["raw"]["reference"], e["raw"]["candidate"]
        whole = speedup(ref, cand)
        row: dict[str, Any] = {"task": e["task"], "rounds": len(ref), "speedup_all_rounds": whole}
        for name, every in (("every_5", EVERY), ("every_round", 1)):
            stop = stop_round(per_series, ref, cand, every)
            rounds = stop or len(ref)
            at_stop = speedup(ref[:rounds], cand[:rounds])
            row[name] = {
                "stop": stop,
                "speedup": round(at_stop, 4),
                "off_all_rounds_pct": round(100 * abs(at_stop / whole - 1), 3),
            }
        row["speedup_all_rounds"] = round(whole, 4)
        rows.append(row)
    return rows


def every_round_markdown(rows: list[dict[str, Any]], source: str) -> str:
    lines = [
        f"Source: `{source}`. Today's stop rule (each series' median within {100 * TARGET:.0f}%, "
        f"from {MIN_ROUNDS} rounds) checked every {EVERY} rounds and at every round; an "
        "evaluation that does not stop within the samples ('-') reports all of them.",
        "",
        f"| task | stop: every {EVERY} | stop: every round | speedup, all rounds | speedup at "
        f"the stop: every {EVERY} / every round | off all rounds' speedup: every {EVERY} / "
        "every round |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        a, b = r["every_5"], r["every_round"]
        lines.append(
            f"| {r['task']} | {a['stop'] or '-'} | {b['stop'] or '-'} | "
            f"{r['speedup_all_rounds']:.4f} | {a['speedup']:.4f} / {b['speedup']:.4f} | "
            f"{a['off_all_rounds_pct']:.2f}% / {b['off_all_rounds_pct']:.2f}% |"
        )

    def rounds(name: str) -> int:
        return sum(r[name]["stop"] or r["rounds"] for r in rows)

    def off(name: str) -> list[float]:
        return [r[name]["off_all_rounds_pct"] for r in rows]

    lines += [
        "",
        f"Rounds to stop, summed ('-' counted as the samples' rounds): every {EVERY} "
        f"{rounds('every_5')}, every round {rounds('every_round')}. Off all rounds' speedup: "
        f"every {EVERY} median {statistics.median(off('every_5')):.2f}%, mean "
        f"{statistics.mean(off('every_5')):.2f}%, largest {max(off('every_5')):.2f}%; every "
        f"round median {statistics.median(off('every_round')):.2f}%, mean "
        f"{statistics.mean(off('every_round')):.2f}%, largest {max(off('every_round')):.2f}%.",
    ]
    return "\n".join(lines) + "\n"


def study(evaluations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for e in evaluations:
        ref, cand = e["raw"]["reference"], e["raw"]["candidate"]
        rows.append(
            {
                "task": e["task"],
                "rounds": len(ref),
                "correlation": round(statistics.correlation(ref, cand), 3),
                "stop_per_series": stop_round(per_series, ref, cand),
                "stop_per_round_ratio": stop_round(per_round_ratio, ref, cand),
                "halfwidth_pct_at_20": {
                    "reference": round(100 * median_ci_halfwidth(ref[:20]), 2),
                    "candidate": round(100 * median_ci_halfwidth(cand[:20]), 2),
                    "ratio": round(
                        100 * median_ci_halfwidth([r / c for r, c in zip(ref[:20], cand[:20])]), 2
                    ),
                },
                "speedup_all_rounds": round(statistics.median(ref) / statistics.median(cand), 4),
                "candidate_spikes": [
                    i for i, v in enumerate(cand) if v > SPIKE * statistics.median(cand)
                ],
            }
        )
    return rows


def markdown(rows: list[dict[str, Any]], source: str) -> str:
    lines = [
        f"Source: `{source}`. Stop rounds replayed every {EVERY} rounds from {MIN_ROUNDS}, "
        f"target {100 * TARGET:.0f}%; '-' is not within the samples.",
        "",
        "| task | correlation of the two series, by round | stop: per series | stop: per-round "
        "ratio | half-width at 20 rounds: reference / candidate / ratio | speedup, all rounds "
        f"| rounds where the candidate's sample is over {SPIKE}x its median |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        w = r["halfwidth_pct_at_20"]
        lines.append(
            f"| {r['task']} | {r['correlation']:+.2f} | {r['stop_per_series'] or '-'} | "
            f"{r['stop_per_round_ratio'] or '-'} | {w['reference']:.2f}% / {w['candidate']:.2f}% "
            f"/ {w['ratio']:.2f}% | {r['speedup_all_rounds']:.4f} | "
            f"{', '.join(map(str, r['candidate_spikes'])) or '-'} |"
        )
    earlier = sum(
        1 for r in rows if (r["stop_per_round_ratio"] or 10**9) < (r["stop_per_series"] or 10**9)
    )
    later = sum(
        1 for r in rows if (r["stop_per_round_ratio"] or 10**9) > (r["stop_per_series"] or 10**9)
    )
    lines += [
        "",
        f"The per-round ratio would stop earlier in {earlier} of {len(rows)} evaluations and "
        f"later in {later}; median correlation of the two series "
        f"{statistics.median(r['correlation'] for r in rows):+.2f}. Rounds to stop by today's "
        f"rule, summed ('-' counted as the samples' rounds + {EVERY}): "
        f"{sum(r['stop_per_series'] or r['rounds'] + EVERY for r in rows)}.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("raw", type=Path, help="raw samples (JSON list of evaluations)")
    parser.add_argument("--out", type=Path, help="markdown table to write")
    parser.add_argument("--json", type=Path, help="machine-readable rows to write")
    parser.add_argument(
        "--every-round",
        action="store_true",
        help=f"today's rule checked at every round against every {EVERY} rounds",
    )
    args = parser.parse_args()
    evaluations = json.loads(args.raw.read_text())
    if args.every_round:
        rows = every_round_study(evaluations)
        table = every_round_markdown(rows, str(args.raw))
    else:
        rows = study(evaluations)
        table = markdown(rows, str(args.raw))
    print(table, end="")
    if args.out:
        args.out.write_text(table)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
