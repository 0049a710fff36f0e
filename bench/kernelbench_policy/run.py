"""KernelBench level-2 under both torch-compute policies (strict and hybrid), plus two level-1
tasks at KernelBench's native sizes.

Every (task, candidate) pair of the manifest below is checked under each policy through
kgym.check.check; the report puts the policies' correctness, Fast@p and PR (Triton share of CUDA
kernel time) side by side.

On a GPU (the tasks at KernelBench's own sizes):
    python3 bench/kernelbench_policy/run.py --kernelbench .kernelbench/KernelBench

On a CPU (Triton's interpreter; verdicts only, no timing or profile), with scaled task copies:
    python bench/kernelbench_policy/run.py --kernelbench .kernelbench/KernelBench \\
        --device cpu --scale-dir /tmp/scaled

The report goes to results-<machine>.md beside this file and the PR plot to pr-<machine>.png
(or --out and --plot); --json keeps every evaluation, for --resume.

--scale-dir writes a copy of every task file there with the manifest's CPU sizes appended as
module-level assignments (get_inputs and get_init_inputs read them when called), and evaluates
those copies instead of the originals.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import hashlib
import json
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from kgym.check import CheckOptions, check, read_source

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from record import results_path  # noqa: E402

REPO = HERE.parents[1]
CANDIDATES = HERE / "candidates"

# The KernelBench snapshot the candidates were written against (level1/ and level2/ of
# github.com/ScalingIntelligence/KernelBench at this commit; see README.md).
KERNELBENCH_COMMIT = "423217d9fda91e0c2d67e4a43bf62f96f6d104f1"

# Level 2: a GEMM/matmul or a convolution followed by an elementwise or reduction epilogue, the
# shape where "cuBLAS/cuDNN + a fused Triton epilogue" (hybrid) and "all in Triton" (strict) are
# both natural answers. "scaled": sizes for the CPU interpreter (not multiples of the blocks).
LEVEL2: dict[str, dict[str, Any]] = {
    "76_Gemm_Add_ReLU": {
        "what": "Linear (no bias) + bias + ReLU",
        "scaled": {"batch_size": 10, "in_features": 72, "out_features": 40, "bias_shape": (40,)},
    },
    "12_Gemm_Multiply_LeakyReLU": {
        "what": "Linear + scalar multiply + LeakyReLU",
        "scaled": {"batch_size": 10, "in_features": 72, "out_features": 40},
    },
    "63_Gemm_ReLU_Divide": {
        "what": "Linear + ReLU + divide",
        "scaled": {"batch_size": 10, "in_features": 72, "out_features": 40},
    },
    "29_Matmul_Mish_Mish": {
        "what": "Linear + Mish + Mish",
        "scaled": {"batch_size": 10, "in_features": 72, "out_features": 40},
    },
    "40_Matmul_Scaling_ResidualAdd": {
        "what": "Linear + scaling + residual add (M = 16384)",
        "scaled": {"batch_size": 10, "in_features": 72, "out_features": 40},
    },
    "86_Matmul_Divide_GELU": {
        "what": "Linear + divide + GELU (erf)",
        "scaled": {"batch_size": 10, "input_size": 72, "output_size": 40},
    },
    "14_Gemm_Divide_Sum_Scaling": {
        "what": "matmul with W^T + divide + row sum + scaling (a reduction epilogue)",
        "scaled": {"batch_size": 10, "input_size": 72, "hidden_size": 40},
    },
    "1_Conv2D_ReLU_BiasAdd": {
        "what": "Conv2d 3x3 + ReLU + per-channel bias",
        "scaled": {
            "batch_size": 2,
            "in_channels": 3,
            "out_channels": 8,
            "height": 10,
            "width": 12,
            "bias_shape": (8, 1, 1),
        },
    },
}

# Not in the default subset (run it with --tasks): its answer is all zeros at KernelBench's sizes
# (Linear outputs have |y| < 2 with overwhelming probability, so relu((y - 2) * 1.5) == 0) and at
# the scaled ones, so whether an honest kernel passes the decoy check depends on what the output
# buffer held before the kernel wrote its zeros (README.md, "Task 9").
EXTRA_LEVEL2: dict[str, dict[str, Any]] = {
    "9_Matmul_Subtract_Multiply_ReLU": {
        "what": "Linear + subtract + multiply + ReLU (degenerate: the answer is all zeros)",
        "scaled": {"batch_size": 10, "in_features": 72, "out_features": 40},
    },
}
KNOWN_LEVEL2 = {**LEVEL2, **EXTRA_LEVEL2}

# Level 1 at native sizes (4096 x 393216 float32: 6.4 GB per tensor), pure Triton.
LEVEL1: dict[str, dict[str, Any]] = {
    "19_ReLU": {"what": "ReLU", "scaled": {"batch_size": 4, "dim": 3000}},
    "23_Softmax": {"what": "softmax over dim 1", "scaled": {"batch_size": 4, "dim": 3000}},
}

KINDS = ("strict", "hybrid", "torch_only")  # candidate files per level-2 task
HONEST = ("strict", "hybrid")  # the candidates Fast@p may count
POLICIES = ("strict", "hybrid")
# What each candidate should get under each policy ("ok" or "rejected").
EXPECTED = {
    ("strict", "strict"): "ok",
    ("strict", "hybrid"): "ok",
    ("hybrid", "strict"): "rejected",
    ("hybrid", "hybrid"): "ok",
    ("torch_only", "strict"): "rejected",
    ("torch_only", "hybrid"): "rejected",
}
FAST_P = (1.0, 1.2)
# Rough wall time of one evaluation on an H100, for the first ETA before any is measured.
GUESS_S = {"screen": 1.0, "full": 15.0, "level1": 40.0}


# -- tasks and candidates --------------------------------------------------------------------------
def task_file(kernelbench: Path, level: int, stem: str) -> Path:
    path = kernelbench / f"level{level}" / f"{stem}.py"
    if not path.is_file():
        raise SystemExit(f"{path}: no such task file (is --kernelbench the KernelBench/ folder?)")
    return path


def write_scaled(source: Path, sizes: dict[str, Any], out_dir: Path) -> Path:
    """A copy of the task with the scaled sizes appended as module-level assignments."""
    text = source.read_text()
    lines = [
        "",
        "",
        "# --- scaled for the CPU interpreter by bench/kernelbench_policy/run.py ---",
    ]
    for name, value in sizes.items():
        if not re.search(rf"^(?:\w+\s*=\s*)*{name}\s*=", text, re.M):
            raise SystemExit(f"{source}: has no size constant {name!r} to scale")
        lines.append(f"{name} = {value!r}")
    out_dir.mkdir(parents=True, exist_ok=True)
    dest = out_dir / source.name
    dest.write_text(text.rstrip("\n") + "\n" + "\n".join(lines) + "\n")
    return dest


def candidate_file(level: int, stem: str, kind: str) -> Path:
    return CANDIDATES / f"level{level}" / stem / f"{kind}.py"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- one evaluation --------------------------------------------------------------------------------
def make_options(
    policy: str, args: argparse.Namespace, cpu: bool, timeout: float | None
) -> CheckOptions:
    """Only what this benchmark decides; every other field stays at the gym's default."""
    names = {f.name for f in dataclasses.fields(CheckOptions)}
    kwargs: dict[str, Any] = {"torch_compute": policy, "device": args.device}
    baseline = "none" if cpu else "eager"
    if "baseline" in names:
        kwargs["baseline"] = baseline
    elif "timing" in names:
        kwargs["timing"] = {"baseline": baseline}
    if cpu and "profile" in names:
        kwargs["profile"] = False  # the interpreter has no CUDA profile
    if timeout is not None:
        kwargs["timeout_s"] = timeout
    return CheckOptions(**kwargs)


def find_keys(obj: Any, words: tuple[str, ...], prefix: str = "") -> dict[str, Any]:
    """Every scalar field of obj whose path names one of words (e.g. peak memory)."""
    found: dict[str, Any] = {}
    if isinstance(obj, dict):
        for key, value in obj.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, (dict, list)):
                found.update(find_keys(value, words, path))
            elif any(w in str(key).lower() for w in words):
                found[path] = value
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            found.update(find_keys(value, words, f"{prefix}[{i}]"))
    return found


def summarise(result: dict[str, Any]) -> dict[str, Any]:
    """The fields this benchmark reports, from one Result (the whole Result is kept too)."""
    timing = result.get("timing") or {}
    profile = result.get("profile") or {}
    judge = result.get("judge") or {}
    correctness = result.get("correctness") or {}
    findings = result.get("findings") or []
    error = result.get("error") or {}
    has_timing = bool(timing.get("available"))
    return {
        "status": result.get("status"),
        "correct": result.get("correct"),
        "hacked": result.get("hacked"),
        "reject_rules": sorted({f["rule"] for f in findings if f.get("severity") == "reject"}),
        "warn_rules": sorted({f["rule"] for f in findings if f.get("severity") == "warn"}),
        "speedup": timing.get("speedup") if has_timing else None,
        "speedup_ci": timing.get("speedup_ci") if has_timing else None,
        "reference_ms": (timing.get("reference") or {}).get("median_ms") if has_timing else None,
        "candidate_ms": (timing.get("candidate") or {}).get("median_ms") if has_timing else None,
        "timing_method": timing.get("method") if has_timing else None,
        "timing_reason": None if has_timing else timing.get("reason"),
        "pr": profile.get("triton_share") if profile.get("available") else None,
        "profile_reason": None if profile.get("available") else profile.get("reason"),
        "torch_ops": judge.get("torch_ops"),
        "triton_launches": judge.get("triton_launches_first_call"),
        "kernels_contribute": judge.get("kernels_contribute"),
        "policies": result.get("policies"),
        "weights_copied": correctness.get("weights_copied"),
        "max_abs_error": correctness.get("max_abs_error"),
        "sizes": correctness.get("sizes"),
        "memory_fields": find_keys(
            {k: v for k, v in result.items() if k != "device"}, ("peak", "memory", "mem_")
        ),
        "error": (f"{error.get('phase')}: {error.get('type')}: {error.get('message')}")[:400]
        if error
        else None,
        "device": result.get("device"),
    }


def evaluate(
    level: int,
    stem: str,
    kind: str,
    policy: str,
    task: Path,
    args: argparse.Namespace,
    cpu: bool,
    timeout: float | None,
) -> dict[str, Any]:
    candidate = candidate_file(level, stem, kind)
    started = time.perf_counter()
    result = check(task, read_source(candidate), make_options(policy, args, cpu, timeout))
    wall = time.perf_counter() - started
    return {
        "level": level,
        "task": stem,
        "candidate": kind,
        "policy": policy,
        **summarise(result),
        "wall_s": round(wall, 2),
        "candidate_sha256": sha256(candidate),
        "result": result,
    }


# -- metrics ---------------------------------------------------------------------------------------
def key(rec: dict[str, Any]) -> tuple[int, str, str, str]:
    return (rec["level"], rec["task"], rec["candidate"], rec["policy"])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo, hi = int(pos), min(int(pos) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def pr_stats(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "min": min(values),
        "p25": percentile(values, 0.25),
        "median": statistics.median(values),
        "p75": percentile(values, 0.75),
        "max": max(values),
    }


def verdict_under(
    by_key: dict[tuple[int, str, str, str], dict[str, Any]], stem: str, kind: str, policy: str
) -> dict[str, Any] | None:
    """The evaluation of (stem, kind) under policy: the direct run when there is one, else the
    verdict for policy that a run under another policy carries in its Result's `policies`, with
    that run's measurements (the same code measured the same way; only the verdict differs)."""
    direct = by_key.get((2, stem, kind, policy))
    if direct is not None:
        return {**direct, "source": "direct"}
    for other in POLICIES:
        rec = by_key.get((2, stem, kind, other))
        verdict = (rec or {}).get("policies") or {}
        if rec is not None and verdict.get(policy) is not None:
            v = verdict[policy]
            return {
                **rec,
                "policy": policy,
                "status": v.get("status"),
                "correct": v.get("correct"),
                "hacked": v.get("hacked"),
                "source": f"derived from the {other} run",
            }
    return None


def policy_summary(records: list[dict[str, Any]], tasks: list[str], policy: str) -> dict[str, Any]:
    """Correct rate, Fast@p and PR over the level-2 subset under one policy (README: definitions)."""
    by_key = {key(r): r for r in records}
    per_task: dict[str, Any] = {}
    timed = True
    derived = 0
    for stem in tasks:
        found = [verdict_under(by_key, stem, kind, policy) for kind in HONEST]
        derived += sum(1 for r in found if r is not None and r["source"] != "direct")
        accepted = [r for r in found if r is not None and r["correct"]]
        with_speed = [r for r in accepted if r["speedup"] is not None]
        if accepted and not with_speed:
            timed = False
        best = max(with_speed, key=lambda r: r["speedup"]) if with_speed else None
        if best is None and accepted:
            best = accepted[0]
        per_task[stem] = {
            "correct": bool(accepted),
            "best": best["candidate"] if best else None,
            "speedup": best["speedup"] if best else None,
            "speedup_ci": best["speedup_ci"] if best else None,
            "pr": best["pr"] if best else None,
            "source": best["source"] if best else None,
        }
    n = len(tasks)
    summary: dict[str, Any] = {
        "tasks": n,
        "correct": sum(1 for t in per_task.values() if t["correct"]),
        "timed": timed,
        "derived_verdicts": derived,
        "per_task": per_task,
    }
    for p in FAST_P:
        fast = sum(1 for t in per_task.values() if t["speedup"] is not None and t["speedup"] >= p)
        fast_ci = sum(
            1 for t in per_task.values() if t["speedup_ci"] is not None and t["speedup_ci"][0] >= p
        )
        summary[f"fast_{p}"] = fast if timed else None
        summary[f"fast_{p}_ci_low"] = fast_ci if timed else None
    summary["accepted_by_kind"] = {
        kind: [
            sum(
                1
                for stem in tasks
                if (verdict_under(by_key, stem, kind, policy) or {}).get("correct")
            ),
            len(tasks),
        ]
        for kind in KINDS
    }
    found = {
        (stem, kind): verdict_under(by_key, stem, kind, policy) for stem in tasks for kind in KINDS
    }
    summary["pr_accepted"] = pr_stats(
        [r["pr"] for r in found.values() if r and r["correct"] and r["pr"] is not None]
    )
    summary["pr_best"] = pr_stats([t["pr"] for t in per_task.values() if t["pr"] is not None])
    summary["pr_by_kind"] = {
        kind: pr_stats(
            [r["pr"] for (_, k), r in found.items() if k == kind and r and r["pr"] is not None]
        )
        for kind in HONEST
    }
    return summary


def cross_checks(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Every Result carries both policies' verdicts: do they agree with the direct runs?"""
    by_key = {key(r): r for r in records}
    agree, disagree, unknown = 0, [], 0
    for rec in records:
        if rec["level"] != 2:
            continue
        for other in POLICIES:
            if other == rec["policy"]:
                continue
            direct = by_key.get((2, rec["task"], rec["candidate"], other))
            verdict = (rec.get("policies") or {}).get(other)
            if direct is None:
                continue
            if verdict is None:
                unknown += 1
            elif verdict.get("status") == direct["status"]:
                agree += 1
            else:
                disagree.append(
                    f"{rec['task']}/{rec['candidate']}: run under {rec['policy']} says {other} "
                    f"-> {verdict.get('status')}, the {other} run -> {direct['status']}"
                )
    return {"agree": agree, "disagree": disagree, "unknown": unknown}


# -- report ----------------------------------------------------------------------------------------
def fmt(value: Any, spec: str = ".2f") -> str:
    return format(value, spec) if isinstance(value, (int, float)) else "–"


def fmt_speedup(rec: dict[str, Any]) -> str:
    if rec.get("speedup") is None:
        return "–"
    ci = rec.get("speedup_ci") or [None, None]
    return f"{rec['speedup']:.2f} [{fmt(ci[0])}, {fmt(ci[1])}]"


def fraction(count: int | None, total: int) -> str:
    if count is None:
        return "n/a (no timing)"
    return f"{count}/{total} ({count / total:.0%})" if total else "– (no tasks)"


def git_commit(path: Path) -> str:
    try:
        head = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(path), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        return head + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"


def kernelbench_commit(kernelbench: Path) -> str:
    for path in (kernelbench / "COMMIT", kernelbench.parent / "COMMIT"):
        if path.is_file():
            return path.read_text().strip()
    return f"{KERNELBENCH_COMMIT} (the manifest's; no COMMIT file next to the tasks)"


def gpu_name(records: list[dict[str, Any]]) -> str:
    """torch.cuda.get_device_name() as the harness reported it in Result.device.name."""
    for rec in records:
        device = rec.get("device") or {}
        if device.get("kind") == "cuda":
            return f"{device.get('name')} (capability {device.get('capability')})"
    for rec in records:
        device = rec.get("device") or {}
        if device:
            return f"none: {device.get('kind')} ({device.get('name')}), Triton interpreter"
    return "unknown"


def versions(records: list[dict[str, Any]]) -> str:
    for rec in records:
        device = rec.get("device") or {}
        if device.get("torch"):
            extra = f", CUDA {device['cuda']}" if device.get("cuda") else ""
            return (
                f"torch {device.get('torch')}, triton {device.get('triton')}, "
                f"python {device.get('python')}{extra}"
            )
    return "unknown"


def write_plot(
    records: list[dict[str, Any]], tasks: list[str], policies: list[str], path: Path
) -> str:
    """PR per task under each policy, one panel per policy; returns a line for the report."""
    prs = [r for r in records if r["level"] == 2 and r["pr"] is not None]
    if not prs:
        return "no plot: no evaluation has a PR (the profile is unavailable, e.g. on a CPU)."
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "no plot: matplotlib is not importable here."
    by_key = {key(r): r for r in records}
    fig, axes = plt.subplots(1, len(policies), figsize=(6 * len(policies), 4.5), sharey=True)
    if len(policies) == 1:
        axes = [axes]
    markers = {"strict": ("o", "tab:blue"), "hybrid": ("s", "tab:orange")}
    for ax, policy in zip(axes, policies):
        for kind, (marker, colour) in markers.items():
            for accepted in (True, False):
                xs, ys = [], []
                for i, stem in enumerate(tasks):
                    r = verdict_under(by_key, stem, kind, policy)
                    if r is not None and r["pr"] is not None and bool(r["correct"]) == accepted:
                        xs.append(i + (-0.12 if kind == "strict" else 0.12))
                        ys.append(r["pr"])
                ax.scatter(
                    xs,
                    ys,
                    marker=marker,
                    s=60,
                    facecolors=colour if accepted else "none",
                    edgecolors=colour,
                    label=f"{kind}.py ({'accepted' if accepted else 'not accepted'})",
                )
        ax.axhline(0.2, color="red", lw=0.8, ls="--")
        ax.axhline(0.5, color="grey", lw=0.8, ls=":")
        ax.set_title(f"policy: {policy}")
        ax.set_xticks(range(len(tasks)))
        ax.set_xticklabels([t.split("_")[0] for t in tasks])
        ax.set_xlabel("KernelBench level-2 task (number)")
        ax.set_ylim(-0.03, 1.05)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("PR = Triton share of CUDA kernel time")
    axes[-1].legend(fontsize=7, loc="center right")
    fig.suptitle("PR per task and candidate (dashed: strict's 0.2 reject line; dotted: 0.5 warn)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return f"![PR per task and policy]({path.name}) (written to `{path}`)"


def report(
    records: list[dict[str, Any]],
    args: argparse.Namespace,
    tasks: list[str],
    level1: list[str],
    policies: list[str],
    task_paths: dict[tuple[int, str], Path],
    plot_line: str,
    cpu: bool,
    elapsed_s: float,
    complete: bool,
    skipped: list[tuple[int, str, str, str]],
) -> tuple[str, dict[str, Any]]:
    summaries = {p: policy_summary(records, tasks, p) for p in policies}
    cross = cross_checks(records)
    meta = {
        "command": " ".join(shlex.quote(a) for a in [sys.executable, *sys.argv]),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "gpu": gpu_name(records),
        "versions": versions(records),
        "kgym_commit": git_commit(REPO),
        "kernelbench_commit": kernelbench_commit(args.kernelbench),
        "scaled": bool(args.scale_dir),
        "interpreter": cpu,
        "elapsed_s": round(elapsed_s, 1),
        "complete": complete,
        "skipped": [list(k) for k in skipped],
        "task_sha256": {f"level{lv}/{stem}": sha256(p) for (lv, stem), p in task_paths.items()},
    }
    lines: list[str] = [
        "# KernelBench level 2 under the strict and hybrid torch-compute policies",
        "",
    ]
    if cpu:
        lines += [
            "> **Interpreter mode (CPU): Triton's interpreter, task sizes scaled down "
            "(`--scale-dir`), no timing and no profile.** Only the verdicts (status, correct, "
            "hacked, rules, torch ops) mean anything here; Fast@p and PR need a GPU run.",
            "",
        ]
    elif args.scale_dir:
        lines += ["> **Scaled task sizes (`--scale-dir`)**: not KernelBench's sizes.", ""]
    if not complete and skipped:
        lines += [
            "> **Stopped at the deadline** (`--deadline-s`); not run: "
            + ", ".join(f"L{k[0]} {k[1]} `{k[2]}.py` under {k[3]}" for k in skipped)
            + ". The summary reads their verdicts from the runs under the other policy.",
            "",
        ]
    elif not complete:
        lines += ["> **In progress**: written after every evaluation; not all are done yet.", ""]
    lines += [
        f"- command: `{meta['command']}`",
        f"- date (UTC): {meta['date']}; wall time {meta['elapsed_s']} s",
        f"- GPU: {meta['gpu']}",
        f"- software: {meta['versions']}",
        f"- kgym commit: {meta['kgym_commit']}",
        f"- KernelBench commit: {meta['kernelbench_commit']} (task files: `{args.kernelbench}`"
        + (f", scaled copies in `{args.scale_dir}`" if args.scale_dir else "")
        + ")",
        "- options: every CheckOptions field at the gym's default except `torch_compute` (the "
        f"policy), `device` ({args.device}) and the timing baseline "
        f"({'none' if cpu else 'eager'})" + (", `profile` off" if cpu else "") + ".",
        "",
        "## Definitions",
        "",
        "- Candidates per task: `strict.py` (everything in Triton kernels), `hybrid.py` (the "
        "GEMM/conv through torch, the whole epilogue in one Triton kernel whose output is the "
        "answer) and `torch_only.py` (a negative control: plain PyTorch).",
        "- An evaluation is **accepted** under a policy when the Result of the check run under "
        'that policy has `status == "ok"` (hence `correct` and not `hacked`).',
        "- **Correct rate** (per policy): the fraction of the subset's tasks that have at "
        "least one accepted honest candidate (`strict.py` or `hybrid.py`) under that policy.",
        "- **Best honest candidate** of a task under a policy: among its accepted `strict.py` and "
        "`hybrid.py` evaluations under that policy, the one with the largest `timing.speedup` "
        "(median eager-reference time / median candidate time, measured by the gym). "
        "`torch_only.py` is never counted.",
        "- **Fast@p** (per policy): the fraction of the subset's tasks whose best honest candidate "
        "under that policy has speedup >= p; a task with no accepted candidate counts as not "
        "fast. **Fast@p (CI low)**: the same with the lower end of the speedup's 95% bootstrap "
        "interval (`timing.speedup_ci[0]`) instead of the median ratio.",
        "- **PR**: `profile.triton_share` = Triton kernel time / all CUDA kernel time of the "
        "candidate's forward, as profiled by the gym. Strict rejects PR < 0.2 "
        "(`low-triton-share`); hybrid only warns below 0.5.",
        "",
        "## Summary, side by side",
        "",
        "| metric | " + " | ".join(policies) + " |",
        "| --- | " + " | ".join("---" for _ in policies) + " |",
    ]

    def srow(label: str, cell: Any) -> None:
        lines.append(f"| {label} | " + " | ".join(cell(summaries[p]) for p in policies) + " |")

    n = len(tasks)
    srow("correct rate (tasks)", lambda s: fraction(s["correct"], n))
    srow("honest verdicts derived, not run directly", lambda s: str(s["derived_verdicts"]))
    for p in FAST_P:
        srow(f"Fast@{p}", lambda s, p=p: fraction(s[f"fast_{p}"], n))
        srow(f"Fast@{p} (CI low)", lambda s, p=p: fraction(s[f"fast_{p}_ci_low"], n))
    for kind in KINDS:
        srow(
            f"`{kind}.py` accepted",
            lambda s, kind=kind: "{}/{}".format(*s["accepted_by_kind"][kind]),
        )

    def pr_cell(stats: dict[str, Any]) -> str:
        if not stats.get("n"):
            return "–"
        return (
            f"n={stats['n']}: min {stats['min']:.3f}, p25 {stats['p25']:.3f}, median "
            f"{stats['median']:.3f}, p75 {stats['p75']:.3f}, max {stats['max']:.3f}"
        )

    srow("PR, accepted evaluations", lambda s: pr_cell(s["pr_accepted"]))
    srow("PR, best candidate per task", lambda s: pr_cell(s["pr_best"]))
    for kind in HONEST:
        srow(
            f"PR, `{kind}.py` (accepted or not)",
            lambda s, kind=kind: pr_cell(s["pr_by_kind"][kind]),
        )
    lines += ["", "### Best honest candidate per task", ""]
    lines.append(
        "| task | what | " + " | ".join(f"{p}: best (speedup, PR)" for p in policies) + " |"
    )
    lines.append("| --- | --- | " + " | ".join("---" for _ in policies) + " |")
    for stem in tasks:
        cells = []
        for p in policies:
            t = summaries[p]["per_task"][stem]
            if not t["correct"]:
                cells.append("none accepted")
            else:
                mark = "" if t["source"] == "direct" else f"; {t['source']}"
                cells.append(
                    f"`{t['best']}.py` ({fmt(t['speedup'])}, PR {fmt(t['pr'], '.3f')}{mark})"
                )
        lines.append(f"| {stem} | {KNOWN_LEVEL2[stem]['what']} | " + " | ".join(cells) + " |")

    # expectations and the one-run verdicts
    level2 = [r for r in records if r["level"] == 2]
    expected_ok = [r for r in level2 if EXPECTED.get((r["candidate"], r["policy"])) == r["status"]]
    surprises = [r for r in level2 if EXPECTED.get((r["candidate"], r["policy"])) != r["status"]]
    lines += [
        "",
        "### Verdicts against expectation",
        "",
        "Expected: `strict.py` accepted under both policies; `hybrid.py` rejected under strict "
        "(`torch-compute`) and accepted under hybrid; `torch_only.py` rejected under both.",
        "",
        f"- as expected: {len(expected_ok)}/{len(level2)}",
    ]
    for r in surprises:
        lines.append(
            f"- **not as expected**: {r['task']} `{r['candidate']}.py` under {r['policy']}: "
            f"{r['status']} (expected {EXPECTED.get((r['candidate'], r['policy']))}; rules "
            f"{', '.join(r['reject_rules']) or '–'}; {r['error'] or 'no error'})"
        )
    lines.append(
        f"- each Result's `policies` field (both verdicts from one run) against the run under "
        f"the other policy: {cross['agree']} agree, {len(cross['disagree'])} disagree, "
        f"{cross['unknown']} undetermined (null) by the one run"
    )
    for line in cross["disagree"]:
        lines.append(f"  - {line}")

    lines += [
        "",
        "## Per evaluation",
        "",
        "| task | candidate | policy | status | correct | hacked | reject rules | warn rules | "
        "speedup [95% CI] | PR | torch ops (judge) | other policy from this run | wall s |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in level2:
        others = []
        for other, verdict in sorted((r.get("policies") or {}).items()):
            if other != r["policy"]:
                others.append(f"{other}: {verdict['status'] if verdict else 'null'}")
        ops = r["torch_ops"]
        lines.append(
            f"| {r['task']} | {r['candidate']} | {r['policy']} | {r['status']} | "
            f"{r['correct']} | {r['hacked']} | {', '.join(r['reject_rules']) or '–'} | "
            f"{', '.join(r['warn_rules']) or '–'} | {fmt_speedup(r)} | {fmt(r['pr'], '.3f')} | "
            f"{', '.join(ops) if ops else ('–' if ops is None else 'none')} | "
            f"{'; '.join(others) or '–'} | {r['wall_s']:.1f} |"
        )
    errors = [r for r in level2 if r["error"]]
    if errors:
        lines += ["", "Errors:", ""]
        for r in errors:
            lines.append(f"- {r['task']} `{r['candidate']}.py` under {r['policy']}: {r['error']}")

    lines += ["", "## PR distribution", "", plot_line, ""]

    lines += [
        "## Level 1 at KernelBench's native sizes",
        "",
        "Pure-Triton candidates (`candidates/level1/<task>/triton.py`) for two tasks whose "
        "4096 x 393216 float32 tensors (6.4 GB each) previously ran out of GPU memory"
        + (" (here: scaled copies, interpreter)." if args.scale_dir else "."),
        "",
        "| task | policy | status | speedup [95% CI] | reference ms | candidate ms | PR | "
        "memory fields in the Result | timing.method | wall s | error |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in [r for r in records if r["level"] == 1]:
        memory = r["memory_fields"]
        method = r["timing_method"]
        lines.append(
            f"| {r['task']} | {r['policy']} | {r['status']} | {fmt_speedup(r)} | "
            f"{fmt(r['reference_ms'], '.3f')} | {fmt(r['candidate_ms'], '.3f')} | "
            f"{fmt(r['pr'], '.3f')} | "
            f"{', '.join(f'{k}={v}' for k, v in memory.items()) or 'none (no peak-memory field)'}"
            f" | {json.dumps(method) if method else (r['timing_reason'] or '–')} | "
            f"{r['wall_s']:.1f} | {r['error'] or '–'} |"
        )
    lines += [
        "",
        "## Task files",
        "",
        "The files evaluated" + (" (the scaled copies)" if args.scale_dir else "") + ":",
        "",
        "| task file | sha256 |",
        "| --- | --- |",
    ]
    for name, digest in meta["task_sha256"].items():
        lines.append(f"| {name} | `{digest[:16]}` |")
    lines.append("")
    data = {
        "meta": meta,
        "definitions": {
            "accepted": 'status == "ok" under the policy the check ran with',
            "correct_rate": "tasks with >= 1 accepted honest candidate / tasks",
            "fast_p": "tasks whose best accepted honest candidate has timing.speedup >= p / tasks",
            "fast_p_ci_low": "same with timing.speedup_ci[0]",
            "pr": "profile.triton_share",
        },
        "summary": summaries,
        "cross_checks": cross,
        "evaluations": records,
    }
    return "\n".join(lines), data


# -- driver ----------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0].replace("\n", " "),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Definitions of the metrics: README.md next to this script and the report itself.",
    )
    parser.add_argument(
        "--kernelbench", type=Path, required=True, help="the KernelBench/ folder (level1/, level2/)"
    )
    parser.add_argument(
        "--tasks",
        default=",".join(LEVEL2),
        help="comma-separated level-2 task stems (default: the manifest's %(default)s; also "
        f"known: {', '.join(EXTRA_LEVEL2)})",
    )
    parser.add_argument(
        "--level1",
        default=",".join(LEVEL1),
        help="comma-separated level-1 task stems at native sizes, or 'none' (default %(default)s)",
    )
    parser.add_argument(
        "--level1-policy",
        choices=POLICIES,
        default="strict",
        help="policy of the level-1 checks (pure Triton: both agree) (default %(default)s)",
    )
    parser.add_argument(
        "--candidates",
        default=",".join(KINDS),
        help="comma-separated candidate kinds (default %(default)s)",
    )
    parser.add_argument(
        "--policies", default="strict,hybrid", help="comma-separated (default %(default)s)"
    )
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    parser.add_argument(
        "--scale-dir",
        type=Path,
        help="write scaled copies of the task files here (the manifest's CPU sizes) and use them",
    )
    parser.add_argument("--timeout", type=float, help="timeout_s per evaluation (default: gym's)")
    parser.add_argument(
        "--deadline-s",
        type=float,
        help="start no evaluation that would end past this many seconds (each one's timeout is "
        "cut to what is left); what is left undone is listed in the report",
    )
    parser.add_argument("--out", type=Path, help="markdown report (default: results-<machine>.md)")
    parser.add_argument("--json", type=Path, help="JSON results (needed by --resume)")
    parser.add_argument("--plot", type=Path, help="PR plot (PNG; default: pr-<machine>.png)")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep the evaluations already in --json and run only the missing ones",
    )
    return parser.parse_args(argv)


def split(text: str, allowed: Any, what: str) -> list[str]:
    items = [] if text.strip() in ("", "none") else [t.strip() for t in text.split(",")]
    unknown = [t for t in items if t not in allowed]
    if unknown:
        raise SystemExit(f"unknown {what}: {', '.join(unknown)} (known: {', '.join(allowed)})")
    return items


def will_screen_reject(kind: str, policy: str) -> bool:
    return kind == "torch_only" or (kind == "hybrid" and policy == "strict")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    tasks = split(args.tasks, KNOWN_LEVEL2, "level-2 tasks")
    level1 = split(args.level1, LEVEL1, "level-1 tasks")
    kinds = split(args.candidates, KINDS, "candidate kinds")
    policies = split(args.policies, POLICIES, "policies")
    cpu = args.device == "cpu"
    if args.device == "auto":
        import torch

        cpu = not torch.cuda.is_available()
    if args.out is None:
        args.out = results_path(HERE, "cpu" if cpu else None)
    if args.plot is None:
        args.plot = args.out.with_name(args.out.stem.replace("results", "pr", 1) + ".png")
    if args.resume and args.json is None:
        raise SystemExit("--resume needs --json, the file of the run to resume")

    task_paths: dict[tuple[int, str], Path] = {}
    for level, names, manifest in ((2, tasks, KNOWN_LEVEL2), (1, level1, LEVEL1)):
        for stem in names:
            path = task_file(args.kernelbench, level, stem)
            if args.scale_dir:
                path = write_scaled(
                    path, manifest[stem]["scaled"], args.scale_dir / f"level{level}"
                )
            task_paths[(level, stem)] = path
    # The order: every level-2 run that only a run under its own policy can decide, then level 1,
    # then the strict-policy runs of the candidates that pass strict's screen, whose verdict every
    # hybrid run already carries (Result.policies): if --deadline-s stops the run early, those are
    # the ones left, and the summary reads their verdicts from the hybrid runs (marked derived).
    canonical: list[tuple[int, str, str, str]] = [
        (2, stem, kind, policy) for stem in tasks for kind in kinds for policy in policies
    ] + [(1, stem, "triton", args.level1_policy) for stem in level1]

    def confirming(item: tuple[int, str, str, str]) -> bool:
        return (
            item[0] == 2
            and item[3] == "strict"
            and "hybrid" in policies
            and not will_screen_reject(item[2], "strict")
        )

    plan = [k for k in canonical if not confirming(k)] + [k for k in canonical if confirming(k)]

    records: list[dict[str, Any]] = []
    if args.resume and args.json is not None and args.json.is_file():
        done = {key(r): r for r in json.loads(args.json.read_text()).get("evaluations", [])}
        records = [done[k] for k in plan if k in done]
        print(f"resuming: {len(records)} of {len(plan)} evaluations kept", file=sys.stderr)
    have = {key(r) for r in records}
    todo = [k for k in plan if k not in have]

    def cls(item: tuple[int, str, str, str]) -> str:
        if item[0] == 1:
            return "level1"
        return "screen" if will_screen_reject(item[2], item[3]) else "full"

    spent: dict[str, list[float]] = {"screen": [], "full": [], "level1": []}
    started = time.perf_counter()
    plot_line = "no plot yet."

    def flush(complete: bool, skipped: list[tuple[int, str, str, str]] | None = None) -> None:
        nonlocal plot_line
        if (complete or skipped) and args.plot:
            plot_line = write_plot(records, tasks, policies, args.plot)
        text, data = report(
            records,
            args,
            tasks,
            level1,
            policies,
            task_paths,
            plot_line,
            cpu,
            time.perf_counter() - started,
            complete,
            skipped or [],
        )
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        if args.json is not None:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(data, indent=1, default=str) + "\n")

    print(
        f"{len(todo)} evaluations to run ({'CPU interpreter' if cpu else 'GPU'}), "
        f"results to {args.out}",
        file=sys.stderr,
        flush=True,
    )

    def estimate(item: tuple[int, str, str, str]) -> float:
        return statistics.mean(spent[cls(item)]) if spent[cls(item)] else GUESS_S[cls(item)]

    for i, item in enumerate(todo, 1):
        level, stem, kind, policy = item
        timeout = args.timeout
        if args.deadline_s is not None:
            left = args.deadline_s - (time.perf_counter() - started)
            if left < estimate(item):
                print(
                    f"deadline: {left:.0f} s left, {estimate(item):.0f} s expected for "
                    f"L{level} {stem} {kind}.py under {policy}: skipped",
                    file=sys.stderr,
                )
                continue
            timeout = min(timeout or 300.0, max(left, 10.0))
        rec = evaluate(level, stem, kind, policy, task_paths[(level, stem)], args, cpu, timeout)
        records.append(rec)
        spent[cls(item)].append(rec["wall_s"])
        remaining = sum(estimate(k) for k in todo[i:])
        extra = ""
        if rec["speedup"] is not None:
            extra += f" speedup {rec['speedup']:.2f}"
        if rec["pr"] is not None:
            extra += f" PR {rec['pr']:.3f}"
        if rec["reject_rules"]:
            extra += f" rules {','.join(rec['reject_rules'])}"
        if rec["error"]:
            extra += f" error {rec['error'][:160]}"
        print(
            f"[{i}/{len(todo)}] L{level} {stem} {kind}.py under {policy}: {rec['status']}{extra} "
            f"({rec['wall_s']:.1f} s; elapsed {time.perf_counter() - started:.0f} s, "
            f"ETA {remaining:.0f} s)",
            file=sys.stderr,
            flush=True,
        )
        records.sort(key=lambda r: canonical.index(key(r)))
        flush(complete=False)
    skipped = [k for k in plan if k not in {key(r) for r in records}]
    for k in skipped:
        print(f"skipped (deadline): L{k[0]} {k[1]} {k[2]}.py under {k[3]}", file=sys.stderr)
    flush(complete=not skipped, skipped=skipped)
    print(f"done in {time.perf_counter() - started:.0f} s: {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
