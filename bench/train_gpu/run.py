"""Dr. Kernel's ablations in miniature, in one command: multi-turn (3 turns) TRLOO against GRPO,
and profiling-based rejection sampling (PRS, tau 0.3, s 0.1 as the dr_kernel preset) on
against off, several seeds per arm, the same steps and budget per arm.

Arms (every other value is the dr_kernel preset's, sized down: config.yaml's tasks and the
small warm-started policy of warm_start.py):

- ``trloo_prs``: TRLOO with PRS (the preset);
- ``grpo_prs``: GRPO with PRS (the estimator alone differs);
- ``trloo_noprs``: TRLOO without PRS (PRS alone differs).

How it runs: one warm start (warm_start.py, with hacks and correct-but-lazy kernels among its
examples, so that the gym's integrity rules and PRS have something to act on), one gym service
that every run evaluates on (its result cache answers a candidate another run already sent:
the warm-started policy writes its examples again and again, and a Result does not depend on
which run asked), then every (arm, seed) run at once, each a `kgym train` process. At the
deadline (``--minutes`` from the start, less a reserve for the report) the runs still going are
stopped; every figure is over the steps all runs completed, so each arm has the same steps.

Writes into ``--out``: ``runs/ARM-sSEED/`` (each run's metrics.jsonl, config.json, ...; the
policies, checkpoints and the gym's state stay in ``--work``),
``ablation.json`` (per arm and step, the mean and standard error over seeds of each curve, and
the summary), ``ablation.md`` (the table) and ``ablation.png`` (reward, Fast@1.2 and the share
of correct-but-lazy kernels, PR < tau, against the step; bands are one standard error over
seeds). Progress goes to stderr.

    python bench/train_gpu/run.py --out OUT                 # an H200: about 8 minutes
    python bench/train_gpu/run.py --out OUT --cpu-check     # this machine's end-to-end check
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
ARMS: dict[str, dict[str, Any]] = {
    "trloo_prs": {"advantage": {"estimator": "trloo"}, "prs": {"enabled": True}},
    "grpo_prs": {"advantage": {"estimator": "grpo"}, "prs": {"enabled": True}},
    "trloo_noprs": {"advantage": {"estimator": "trloo"}, "prs": {"enabled": False}},
}
# Which arm each other is compared with, and what differs between them.
COMPARISONS = [
    ("grpo_prs", "trloo_prs", "GRPO vs TRLOO"),
    ("trloo_noprs", "trloo_prs", "no PRS vs PRS"),
]
CURVES = {
    "reward": "training reward",
    "fast_1.2": "Fast@1.2 (share of samples)",
    "lazy": "correct but lazy (PR < tau)",
    "pass": "pass rate",
    "hack": "hack rate",
    "prs_kept": "kept by PRS",
}


def log(message: str) -> None:
    print(f"[ablation {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run_config(args: argparse.Namespace, model: Path, gym_url: str, arm: str, seed: int) -> dict:
    """config.yaml with 3 turns, the arm's estimator and PRS, the shared gym, and the seed."""
    config = yaml.safe_load((HERE / "config.yaml").read_text())
    config["model"]["path"] = str(model)
    config["model"]["device"] = args.device
    config["rollout"].update(
        samples_per_prompt=args.samples, turns=args.turns, max_new_tokens=args.max_new_tokens
    )
    if args.tasks:
        config["data"]["tasks"] = args.tasks.split(",")
    config["gym"] = {
        "device": args.device,
        "trials": 1,
        "jobs": args.samples * len(config["data"]["tasks"]),
        "server": gym_url,
        "token_env": "",
        "options": {"timing_budget_ms": args.timing_budget_ms},
    }
    config["optim"]["lr"] = args.lr
    config["run"] = {
        "steps": args.steps,
        "seed": seed,
        "checkpoint_every": 0,
        "tensorboard": "off",
    }
    for section, values in ARMS[arm].items():
        config.setdefault(section, {}).update(values)
    return config


def warm_start(args: argparse.Namespace, work: Path) -> Path:
    if args.model:
        return Path(args.model)
    model = work / "model"
    if (model / "warm_start.json").exists():
        return model
    command = [sys.executable, str(HERE / "warm_start.py"), "--out", str(model)]
    command += ["--hostile-per-task", "3", "--lazy-per-task", "1", "--device", args.device]
    if args.tasks:
        command += ["--tasks", args.tasks]
    if args.cpu_check:  # a small model, stopped after a few steps: the plumbing, not learning
        command += ["--n-embd", "32", "--n-layer", "1", "--n-head", "2"]
        command += ["--steps", "2", "--check-every", "2"]
    log(f"warm start: {' '.join(command[1:])}")
    subprocess.run(command, check=True)
    return model


def metrics_of(run: Path) -> list[dict[str, Any]]:
    path = run / "metrics.jsonl"
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            break  # a line cut by the stop
    return rows


def curves_of(step: dict[str, Any]) -> dict[str, float]:
    """One step's figures: every trajectory runs every turn, so the mean over turns is the
    share of samples."""
    return {
        "reward": step["reward/total"],
        "fast_1.2": float(np.mean(step["fast_1.2_by_turn"])),
        "lazy": step["lazy_rate"],
        "pass": float(np.mean(step["pass_rate_by_turn"])),
        "hack": step["hack_rate"],
        "prs_kept": step["prs_kept"],
    }


def mean_se(values: list[float]) -> tuple[float, float]:
    a = np.asarray(values, dtype=float)
    se = float(a.std(ddof=1) / math.sqrt(a.size)) if a.size > 1 else float("nan")
    return float(a.mean()), se


def analyse(work: Path, arms: list[str], seeds: list[int]) -> dict[str, Any]:
    every = {
        (arm, seed): metrics_of(work / "runs" / f"{arm}-s{seed}") for arm in arms for seed in seeds
    }
    # A run that failed before its first step (its log says why) leaves its arm a seed short.
    runs = {key: m for key, m in every.items() if m}
    if any(sum(1 for a, _ in runs if a == arm) < 2 for arm in arms):
        raise SystemExit(f"an arm has fewer than 2 runs with a step: {sorted(every)}")
    steps = min(len(m) for m in runs.values())
    per_arm: dict[str, Any] = {}
    late = max(1, steps // 2)  # the summary: the mean over the second half of the steps
    for arm in arms:
        seeds = [s for a, s in runs if a == arm]
        series = {
            key: [[curves_of(runs[arm, s][i])[key] for s in seeds] for i in range(steps)]
            for key in CURVES
        }
        per_arm[arm] = {
            "curves": {
                key: [dict(zip(("mean", "se"), mean_se(v))) for v in values]
                for key, values in series.items()
            },
            "late": {
                key: dict(
                    zip(
                        ("mean", "se"),
                        mean_se(
                            [
                                float(np.mean([values[i][k] for i in range(steps - late, steps)]))
                                for k in range(len(seeds))
                            ]
                        ),
                    )
                )
                for key, values in series.items()
            },
            "samples_per_s": float(
                np.mean(
                    [
                        sum(m["gym_evaluations"] for m in runs[arm, s][:steps])
                        / sum(
                            m["time/rollout_s"] + m["time/gym_s"] + m["time/update_s"]
                            for m in runs[arm, s][:steps]
                        )
                        for s in seeds
                    ]
                )
            ),
        }
    comparisons = []
    for arm, base, what in COMPARISONS:
        if arm not in per_arm or base not in per_arm:
            continue
        row = {"arms": [arm, base], "what": what}
        for key in CURVES:
            a, b = per_arm[arm]["late"][key], per_arm[base]["late"][key]
            diff = a["mean"] - b["mean"]
            se = math.sqrt(a["se"] ** 2 + b["se"] ** 2)
            row[key] = {"difference": diff, "se": se, "z": diff / se if se > 0 else float("nan")}
        comparisons.append(row)
    return {
        "arms": arms,
        "seeds": seeds,
        "seeds_with_steps": {arm: [s for a, s in runs if a == arm] for arm in arms},
        "steps_compared": steps,
        "steps_done": {f"{a}-s{s}": len(m) for (a, s), m in every.items()},
        "late_steps": late,
        "per_arm": per_arm,
        "comparisons": comparisons,
    }


def plot(result: dict[str, Any], target: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = ["reward", "fast_1.2", "lazy"]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    steps = np.arange(1, result["steps_compared"] + 1)
    for ax, key in zip(axes, keys):
        for arm in result["arms"]:
            points = result["per_arm"][arm]["curves"][key]
            mean = np.array([p["mean"] for p in points])
            se = np.nan_to_num(np.array([p["se"] for p in points]))
            ax.plot(steps, mean, label=arm)
            ax.fill_between(steps, mean - se, mean + se, alpha=0.2)
        ax.set_title(CURVES[key])
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
        if key != "reward":
            ax.set_ylim(-0.02, 1.02)
    axes[0].legend(fontsize=8)
    fig.suptitle(
        f"{len(result['seeds'])} seeds per arm: mean, band = one standard error over seeds",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    plt.close(fig)


def markdown(result: dict[str, Any], context: dict[str, Any]) -> str:
    late = result["late_steps"]
    lines = [
        "# Ablation: TRLOO vs GRPO, PRS on vs off (bench/train_gpu/run.py)",
        "",
        f"- command: `{context['command']}`",
        f"- machine: {context['machine']}; date: {context['date']}",
        f"- {len(result['seeds'])} seeds per arm; {result['steps_compared']} steps compared "
        f"(the steps every run completed; done per run: {result['steps_done']})",
        f"- wall: {context['seconds']:.0f} s in all, runs stopped at the deadline: "
        f"{context['stopped']}",
        "",
        f"Mean over the last {late} steps, then mean and standard error over seeds:",
        "",
        "| arm | " + " | ".join(CURVES.values()) + " | samples/s |",
        "| --- | " + " | ".join("---" for _ in CURVES) + " | --- |",
    ]
    for arm in result["arms"]:
        row = result["per_arm"][arm]
        cells = [f"{row['late'][k]['mean']:.3f} ± {row['late'][k]['se']:.3f}" for k in CURVES]
        lines.append(f"| `{arm}` | " + " | ".join(cells) + f" | {row['samples_per_s']:.2f} |")
    lines += ["", "Differences (arm minus baseline, standard error, z):", ""]
    lines += ["| comparison | " + " | ".join(CURVES.values()) + " |"]
    lines += ["| --- | " + " | ".join("---" for _ in CURVES) + " |"]
    for c in result["comparisons"]:
        cells = [
            f"{c[k]['difference']:+.3f} ({c[k]['se']:.3f}, z {c[k]['z']:+.1f})" for k in CURVES
        ]
        lines.append(
            f"| {c['what']} (`{c['arms'][0]}` - `{c['arms'][1]}`) | " + " | ".join(cells) + " |"
        )
    lines += [
        "",
        "A difference is counted as one when |z| >= 2; otherwise the arms do not differ at this "
        "size. Curves: `ablation.png`.",
    ]
    return "\n".join(lines) + "\n"


def start_runs(args: argparse.Namespace, work: Path, model: Path, gym_url: str) -> dict:
    procs = {}
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    for seed in range(args.seeds):
        for arm in args.arms.split(","):
            folder = work / "runs" / f"{arm}-s{seed}"
            folder.mkdir(parents=True, exist_ok=True)
            config = folder.parent / f"{arm}-s{seed}.yaml"
            config.write_text(yaml.safe_dump(run_config(args, model, gym_url, arm, seed)))
            with open(folder.parent / f"{arm}-s{seed}.log", "ab") as log_file:
                procs[arm, seed] = subprocess.Popen(
                    [sys.executable, "-m", "kgym.cli", "train", str(config), "--out", str(folder)],
                    stdout=log_file,
                    stderr=log_file,
                    env=env,
                    start_new_session=True,  # stopped as a group at the deadline
                )
    return procs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True, help="the report and each run's metrics")
    p.add_argument(
        "--work",
        type=Path,
        help="the policy, the gym's state and the run folders (default: OUT/work); only light "
        "files (metrics, configs, logs, curves) are copied to OUT/runs",
    )
    p.add_argument("--minutes", type=float, default=8.0, help="the whole run's wall-clock budget")
    p.add_argument("--reserve-s", type=float, default=40.0, help="kept for stopping and the report")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--arms", default=",".join(ARMS))
    p.add_argument("--steps", type=int, default=60, help="planned; the deadline usually ends it")
    p.add_argument("--turns", type=int, default=3)
    p.add_argument("--samples", type=int, default=4, help="samples per task (the group)")
    p.add_argument("--tasks", default="", help="comma-separated task ids (config.yaml's)")
    p.add_argument("--max-new-tokens", type=int, default=900)
    p.add_argument("--timing-budget-ms", type=float, default=100.0)
    p.add_argument("--lr", type=float, default=5e-6, help="AdamW, as runs 5 and 6")
    p.add_argument("--model", help="a warm-started policy folder (default: warm-start one)")
    p.add_argument("--device", default="cuda")
    p.add_argument("--gym-workers", type=int, default=12, help="the gym's concurrent jobs")
    p.add_argument(
        "--cpu-check",
        action="store_true",
        help="this CPU machine's end-to-end check: a tiny model, 2 tasks, short answers",
    )
    p.add_argument("--json", action="store_true", help="print ablation.json's content")
    args = p.parse_args(argv)
    if args.cpu_check:
        args.device = "cpu"
        args.tasks = args.tasks or "03_scale_add_mul,09_rms_norm"
        args.samples, args.max_new_tokens = 2, 16
    started = time.monotonic()
    deadline = started + args.minutes * 60 - args.reserve_s
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    work = (args.work or out / "work").resolve()
    work.mkdir(parents=True, exist_ok=True)
    from kgym.local_gym import LocalGym

    model = warm_start(args, work)
    gym_args = ["--cpu-workers", str(args.gym_workers)]
    if args.device == "cuda":
        gym_args += ["--workers-per-gpu", str(args.gym_workers)]
    arms = args.arms.split(",")
    seeds = list(range(args.seeds))
    stopped: list[str] = []
    with LocalGym(work / "gym", gym_args, "none" if args.device == "cpu" else "auto") as gym:
        log(f"gym at {gym.url}; {len(arms)} arms x {len(seeds)} seeds, all at once")
        procs = start_runs(args, work, model, gym.url)
        last = 0.0
        reported: set[tuple[str, int]] = set()
        while any(proc.poll() is None for proc in procs.values()):
            if time.monotonic() > deadline:
                for (arm, seed), proc in procs.items():
                    if proc.poll() is None:
                        os.killpg(proc.pid, signal.SIGTERM)
                        stopped.append(f"{arm}-s{seed}")
                for proc in procs.values():
                    try:
                        proc.wait(timeout=20)
                    except subprocess.TimeoutExpired:
                        os.killpg(proc.pid, signal.SIGKILL)
                        proc.wait()
                break
            for key, proc in procs.items():
                if proc.poll() not in (None, 0) and key not in reported:
                    reported.add(key)  # say so at once: the budget is short
                    tail = (work / "runs" / f"{key[0]}-s{key[1]}.log").read_text()[-1500:]
                    log(f"run {key[0]}-s{key[1]} failed ({proc.returncode}):\n{tail}")
            if time.monotonic() - last > 30:
                done = {f"{a}-s{s}": len(metrics_of(work / "runs" / f"{a}-s{s}")) for a, s in procs}
                log(f"steps done: {done}")
                last = time.monotonic()
            time.sleep(2)
        failed = [
            f"{a}-s{s}"
            for (a, s), proc in procs.items()
            if proc.returncode not in (0, -signal.SIGTERM, -signal.SIGKILL)
            and f"{a}-s{s}" not in stopped
        ]
        if failed:
            log(f"runs that failed (their logs: runs/NAME.log): {failed}")
    copy_light(work / "runs", out / "runs")
    result = analyse(work, arms, seeds)
    context = {
        "command": "python bench/train_gpu/run.py "
        + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": gpu_name()
        if args.device == "cuda"
        else f"CPU ({platform.processor() or 'x86_64'}, {os.cpu_count()} cores)",
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "seconds": time.monotonic() - started,
        "stopped": stopped or "none",
    }
    result["context"] = context
    (out / "ablation.json").write_text(json.dumps(result, indent=1) + "\n")
    (out / "ablation.md").write_text(markdown(result, context))
    try:
        plot(result, out / "ablation.png")
    except ImportError as exc:  # the figures are in ablation.md and .json whatever happens here
        log(f"no plot: {exc}")
    log(f"{result['steps_compared']} steps compared; {out / 'ablation.md'}, {out / 'ablation.png'}")
    if args.json:
        print(json.dumps(result))
    return 0


def copy_light(runs: Path, target: Path) -> None:
    """Each run's metrics, config, curves and log (not its policy or checkpoint)."""
    for path in runs.rglob("*"):
        if path.is_file() and path.suffix in (".jsonl", ".json", ".yaml", ".log", ".png"):
            if "engine_weights" in path.parts or path.parent.name in ("policy", "tokenizer"):
                continue
            dest = target / path.relative_to(runs)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest)


def gpu_name() -> str:
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip().splitlines()[0]
    except (OSError, subprocess.CalledProcessError):
        return "a GPU (nvidia-smi did not answer)"


if __name__ == "__main__":
    sys.exit(main())
