"""Turns the parts written by run.py (PART.json) into results.md, results.json and plots."""

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
        f"`{m['command']}` on {m['gpu']} ({m['cpus']} CPUs), {m['date']}, Python {m['python']}, "
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
        f"**{t['ratio']:.1f}x** the evaluations per minute, measured side by side in one run. "
        f"Verdicts agree on {t['verdicts_agree']} of {t['candidates']} candidates.",
        "",
        "| # | kind | task | service | baseline |",
        "| --- | --- | --- | --- | --- |",
    ]
    for i, r in enumerate(t["rows"]):
        s, b = r["service"]["status"], r["baseline"]["status"]
        mark = "" if s == b else " (differs)"
        lines.append(f"| {i} | {r['kind']} | {r['task']} | {s} | {b}{mark} |")
    lines += ["", "![throughput](throughput.png)", ""]
    return lines


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
    other = lat.get("without_compiler_imports")
    if other:
        lines += [
            "",
            "The same run, fork servers that leave torch's compiler stack to each runner "
            "(`KGYM_FORKSERVER_COMPILER_IMPORTS=off`, the layout before): client round trip "
            f"{other['round_trip_median_s'] * 1e3:.0f} ms; medians by phase: "
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
    lines += ["", "![precision](precision.png)", ""]
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
        fig.savefig(out_dir / "throughput.png", dpi=110)
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
        fig.savefig(out_dir / "precision.png", dpi=110)
        plt.close(fig)


def write_report(out_dir: Path) -> None:
    parts = load(out_dir)
    lines = ["# The gym service on a GPU", ""]
    if "throughput" in parts:
        lines += throughput_md(parts["throughput"])
    if "latency" in parts:
        lines += latency_md(parts["latency"])
    if "precision" in parts:
        lines += precision_md(parts["precision"])
    if "faults" in parts:
        lines += faults_md(parts["faults"])
    (out_dir / "results.md").write_text("\n".join(lines))
    (out_dir / "results.json").write_text(json.dumps(parts, indent=1))
    plot(parts, out_dir)
