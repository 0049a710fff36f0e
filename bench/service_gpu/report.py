"""Turns the parts written by run.py (PART.json in its --out-dir) into the benchmark's results
file for the machine they ran on, results-<machine>.md, and its plots, beside this file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def load(out_dir: Path) -> dict[str, Any]:
    parts = {}
    for name in ("throughput", "latency", "precision", "faults"):
        path = out_dir / f"{name}.json"
        if path.exists():
            parts[name] = json.loads(path.read_text())
    return parts


def meta_line(m: dict[str, Any]) -> str:
    return (
        f"`{m['command']}` on {m['gpu']} ({m['cpus']} CPUs), {m['date']}, commit "
        f"{m.get('commit', 'unknown')}, Python {m['python']}, "
        f"torch {m['torch']}, triton {m['triton']}; {m['seconds']:.0f} s"
    )


def throughput_md(t: dict[str, Any]) -> list[str]:
    lines = [
        "## Throughput: service against process-per-evaluation",
        "",
        f"- run: {meta_line(t['meta'])}",
        f"- {t['candidates']} candidates in a seeded random order: {t['mix']}; "
        f"options: {t['options']}",
        f"- service: `kgym-gym serve --gpus all --workers-per-gpu {t['workers_per_gpu']}` "
        "(warm fork servers, compilation overlapped, timing windows exclusive on the GPU), "
        "one batch",
        "- baseline: `kgym-gym check TASK CANDIDATE --json --no-profile` per candidate, one at "
        "a time: a fresh Python that imports torch and triton for every evaluation",
        "",
        "| | wall s | evaluations/min |",
        "| --- | --- | --- |",
        f"| service | {t['service']['wall_s']:.1f} | {t['service']['per_min']:.1f} |",
        f"| process per evaluation | {t['baseline']['wall_s']:.1f} | "
        f"{t['baseline']['per_min']:.1f} |",
        "",
        f"**{t['ratio']:.2f}x** the evaluations per minute, measured side by side in one run. "
        f"Verdicts agree on {t['verdicts_agree']} of {t['candidates']} candidates.",
        "",
        *timeline_md(t),
        "| # | kind | task | service | baseline |",
        "| --- | --- | --- | --- | --- |",
    ]
    for i, r in enumerate(t["rows"]):
        s, b = r["service"]["status"], r["baseline"]["status"]
        mark = "" if s == b else " (differs)"
        lines.append(f"| {i} | {r['kind']} | {r['task']} | {s} | {b}{mark} |")
    return lines


def timeline_md(t: dict[str, Any]) -> list[str]:
    """The service's runs against the one baseline: wall, ratio, where the GPU's time went."""
    runs = {f"{t['workers_per_gpu']} workers per GPU": {**t, **t["service"]}}
    runs |= {f"{w} workers per GPU": o for w, o in t.get("other_workers_per_gpu", {}).items()}
    lines = [
        "| service | wall s | ratio | summed timing windows s (bound) | first window opened s | "
        "idle between windows s (longest gaps) | speedups' gap to the baseline's (median, max) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, run in runs.items():
        tl, sp = run.get("timeline") or {}, run.get("speedups") or {}
        windows = tl.get("windows_s")
        bound = f" ({t['baseline']['wall_s'] / windows:.2f}x)" if windows else ""
        gaps = ", ".join(f"{g:.2f}" for g in sorted(tl.get("gaps_s", []), reverse=True)[:2])
        gap = f"{sp['median_gap_pct']:.2f}%, {sp['max_gap_pct']:.1f}%" if sp.get("pairs") else "-"
        lines.append(
            f"| {name} | {run['wall_s']:.1f} | {t['baseline']['wall_s'] / run['wall_s']:.2f}x | "
            f"{windows}{bound} | {tl.get('first_window_opened_s')} | "
            f"{tl.get('idle_between_windows_s')} ({gaps}) | {gap} |"
        )
    repeats = t.get("repeats") or {}
    if len(repeats.get("wall_s", [])) > 1:
        lines += [
            "",
            f"The service again, {len(repeats['wall_s'])} runs: wall "
            f"{', '.join(f'{w:.1f}' for w in repeats['wall_s'])} s, median ratio "
            f"{repeats['ratio_of_median']:.2f}x.",
        ]
    return [*lines, ""]


def latency_md(lat: dict[str, Any]) -> list[str]:
    lines = [
        "## Latency of one evaluation on a warm gym, by phase",
        "",
        f"- run: {meta_line(lat['meta'])}",
        f"- candidate: {lat['candidate']}; median of 5 evaluations after a first one "
        "(fresh seeds, so no result-cache hits)",
        f"- client round trip: {lat['round_trip_median_s'] * 1e3:.0f} ms; queue wait "
        f"{lat['queue_wait_median_s'] * 1e3:.0f} ms"
        + (
            f"; after the last phase (the judge's exit, the job's end) "
            f"{lat['after_last_phase_median_ms']:.0f} ms"
            if "after_last_phase_median_ms" in lat
            else ""
        ),
        "",
        "| phase | median ms |",
        "| --- | --- |",
    ]
    for phase, ms in lat["median_ms"].items():
        lines.append(f"| {phase} | {ms:.1f} |")
    for task, other in (lat.get("other_tasks") or {}).items():
        lines += [
            "",
            f"`{task}`'s solution the same way: client round trip "
            f"{other['round_trip_median_s'] * 1e3:.0f} ms, after the last phase "
            f"{other['after_last_phase_median_ms']:.0f} ms; medians by phase: "
            + ", ".join(f"{p} {ms:.0f}" for p, ms in other["median_ms"].items())
            + " ms.",
        ]
    checks = [r["reference_check"] for r in lat["runs"] if r.get("reference_check")]
    if checks:
        ratios = ", ".join(f"{c['ratio']:.3f}" for c in checks)
        lines += ["", f"Reference drift checks (measured / stored reference median): {ratios}."]
    lines.append("")
    return lines


def precision_md(p: dict[str, Any]) -> list[str]:
    lines = [
        "## Timing precision",
        "",
        f"- run: {meta_line(p['meta'])}",
        "- kgym: the task's solution evaluated 10 times in one gym (one batch, `--no-cache`, so "
        "up to WORKERS evaluations at once, timing windows exclusive), and the gym started 3 "
        "times; speedup = median(reference) / median(candidate), interleaved, L2 flushed, "
        "device synchronised",
        "- naive: 100 calls each, mean of per-call CUDA events, no L2 flush, reference and "
        "candidate timed one after the other; 10 times in a process, 3 processes",
        "",
        "| candidate | method | mean speedup | CV within runs (max) | CV across restarts |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, d in p.items():
        if name == "meta":
            continue
        for method in ("kgym", "naive"):
            x = d[method]
            flat = [s for r in x["speedups"] for s in r]
            label = name if method == "kgym" else d.get("task", name)
            lines.append(
                f"| {label} | {method} | {sum(flat) / len(flat):.3f} | "
                f"{max(x['cv_within_run']) * 100:.2f}% | {x['cv_across_restarts'] * 100:.2f}% |"
            )
    lines += ["", f"![precision](precision-{MACHINE}.png)", ""]
    return lines


def faults_md(f: dict[str, Any]) -> list[str]:
    lines = [
        "## Faults during a batch",
        "",
        f"- run: {meta_line(f['meta'])}",
        f"- events, in order: {'; '.join(f['events'])}; then the service was started again",
        f"- jobs lost: {f['lost']} of {len(f['jobs'])}; restarts: {f['restarts_metric']}",
        "",
        "| job | status | attempts | result | error |",
        "| --- | --- | --- | --- | --- |",
    ]
    for j in f["jobs"]:
        err = (j["error"] or "").replace("|", "/").replace("\n", " ")[:120]
        lines.append(
            f"| {j['id']} | {j['job_status']} | {j['attempts']} | {j['result_status']} | {err} |"
        )
    lines.append("")
    return lines


def plot(parts: dict[str, Any], out_dir: Path) -> None:
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    if "throughput" in parts:
        t = parts["throughput"]
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.bar(
            ["service", "process per\nevaluation"],
            [t["service"]["per_min"], t["baseline"]["per_min"]],
        )
        ax.set_ylabel("evaluations / min")
        ax.set_title(f"{t['candidates']} mixed candidates, {t['meta']['gpu'].split(',')[0]}")
        fig.tight_layout()
        fig.savefig(out_dir / f"throughput-{MACHINE}.png", dpi=110)
        plt.close(fig)
    if "precision" in parts:
        p = {k: v for k, v in parts["precision"].items() if k != "meta"}
        fig, axes = plt.subplots(1, len(p), figsize=(6 * len(p), 3.5), squeeze=False)
        for ax, (task, d) in zip(axes[0], p.items(), strict=True):
            for method, marker in (("kgym", "o"), ("naive", "x")):
                for r, run in enumerate(d[method]["speedups"]):
                    xs = [r + 0.3 * (method == "naive") + 0.02 * i for i in range(len(run))]
                    ax.scatter(xs, run, marker=marker, label=method if r == 0 else None)
            ax.set_xlabel("gym start (kgym) / process (naive)")
            ax.set_ylabel("speedup")
            ax.set_title(task)
            ax.legend()
        fig.tight_layout()
        fig.savefig(out_dir / f"precision-{MACHINE}.png", dpi=110)
        plt.close(fig)


MACHINE = "gpu"  # set by write_report from the parts' own record of their GPU


def machine_of(parts: dict[str, Any]) -> str:
    """ "h200" for "NVIDIA H200, 580.159.04": the GPU the parts ran on, as their meta says."""
    for part in parts.values():
        gpu = str((part.get("meta") or {}).get("gpu", ""))
        words = gpu.replace("NVIDIA", "").replace(",", " ").split()
        if words and not gpu.startswith("no GPU"):
            return words[0].lower()
    return "cpu"


def write_report(out_dir: Path, bench_dir: Path) -> None:
    """Writes results-<machine>.md and its plots into ``bench_dir`` from ``out_dir``'s parts."""
    global MACHINE
    parts = load(out_dir)
    MACHINE = machine_of(parts)
    lines = ["# The gym service on a GPU", ""]
    if "throughput" in parts:
        lines += throughput_md(parts["throughput"])
        lines += ["", f"![throughput](throughput-{MACHINE}.png)", ""]
    if "latency" in parts:
        lines += latency_md(parts["latency"])
    if "precision" in parts:
        lines += precision_md(parts["precision"])
    if "faults" in parts:
        lines += faults_md(parts["faults"])
    (bench_dir / f"results-{MACHINE}.md").write_text("\n".join(lines))
    plot(parts, bench_dir)
