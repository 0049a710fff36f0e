"""Dr. Kernel's ablations in miniature, in one command: multi-turn (3 turns) TRLOO against GRPO,
and profiling-based rejection sampling (PRS, tau 0.3, s 0.1 as the dr_kernel preset) on
against off, several seeds per arm, the same steps and budget per arm.

Arms (every other value is the dr_kernel preset's, sized down: config.yaml's tasks and the
small warm-started policy of warm_start.py):

- ``trloo_prs``: TRLOO with PRS (the preset);
- ``grpo_prs``: GRPO with PRS (the estimator alone differs);
- ``trloo_noprs``: TRLOO without PRS (PRS alone differs).

How it runs: one gym service that every run evaluates on (its result cache answers a candidate
another run already sent: the warm-started policy writes its examples again and again, and a
Result does not depend on which run asked), started first so that its workers warm up while
warm_start.py builds the policy (with hacks and correct-but-lazy kernels among its examples, so
that the gym's integrity rules and PRS have something to act on); then every (arm, seed) run at
once, each a `kgym train` process. At the deadline (``--minutes`` from the start, less
``--reserve-s`` for the report) the runs still going are stopped; every figure is over the
steps all runs completed, so each arm has the same steps.

Written, and rewritten every ``--report-every`` seconds while the runs go (a run killed from
outside leaves the last report; SIGTERM stops the runs and writes the final one):

- into ``--out``: ``ablation.json`` (per arm and step, the mean and standard error over seeds
  of each curve, and the summary) and ``runs.tar.gz`` (each run's metrics.jsonl, config.json,
  log; the policies, checkpoints and the gym's state stay in ``--work``);
- into ``--record`` (bench/train_gpu/ by default): the ``## ablation`` section of
  ``results-<machine>.md`` (bench/record.py: the other sections kept; a folder without that
  file starts from bench/train_gpu's copy) and ``ablation-<machine>.png`` (reward, Fast@1.2 and
  the share of correct-but-lazy kernels, PR < tau, against the step; bands are one standard
  error over seeds).

    bash bench/train_gpu/ablation.sh OUT                        # an H200: under 7 minutes
    python bench/train_gpu/run.py --out /tmp/abl --smoke        # the pipeline on a CPU
    python bench/train_gpu/run.py --out /tmp/abl --cpu-check    # the same, 2 steps, 2 tasks
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import record  # noqa: E402  (bench/record.py)

TITLE = "Training with the real gym on one GPU"
PART = "ablation"
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
# The H200 run's size (ablation.sh: under 7 minutes in all): the two tasks of config.yaml with
# the shortest examples (the longest, a solution of 16_cross_entropy, is 729 tokens).
TASKS = "03_scale_add_mul,16_cross_entropy"


class Stopped(Exception):
    """SIGTERM or SIGINT: stop the runs and write the report of what they did."""


def _stop(signum: int, _frame: Any) -> None:
    raise Stopped(signal.Signals(signum).name)


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
    """The policy: ``--model``, or the one an earlier call left in ``--work``, or a new one."""
    if args.model:
        return Path(args.model)
    model = work / "model"
    if (model / "warm_start.json").exists():
        log(f"warm start: reusing {model}")
        return model
    command = [sys.executable, str(HERE / "warm_start.py"), "--out", str(model)]
    command += ["--hostile-per-task", "3", "--lazy-per-task", "1", "--device", args.device]
    command += ["--tasks", args.tasks]
    if args.device == "cpu":  # a small model, stopped after a few steps: the plumbing, not learning
        command += ["--n-embd", "32", "--n-layer", "1", "--n-head", "2"]
        command += ["--steps", "2", "--check-every", "2"]
    else:  # at most about a minute on an H200 (run 6: 300 steps in 59 s)
        command += ["--steps", "300"]
    log(f"warm start: {' '.join(command[1:])}")
    with open(work / "warm_start.log", "ab") as out:
        subprocess.run(command, check=True, stdout=out, stderr=out)
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


def analyse(work: Path, arms: list[str], seeds: list[int]) -> dict[str, Any] | None:
    """The figures over the steps every run with a step completed; None until every arm has a
    run with a step (a run that failed before its first step, its log says why, leaves its arm
    a seed short)."""
    every = {
        (arm, seed): metrics_of(work / "runs" / f"{arm}-s{seed}") for arm in arms for seed in seeds
    }
    runs = {key: m for key, m in every.items() if m}
    if any(not any(a == arm for a, _ in runs) for arm in arms):
        return None
    steps = min(len(m) for m in runs.values())
    per_arm: dict[str, Any] = {}
    late = max(1, steps // 2)  # the summary: the mean over the second half of the steps
    for arm in arms:
        arm_seeds = [s for a, s in runs if a == arm]
        series = {
            key: [[curves_of(runs[arm, s][i])[key] for s in arm_seeds] for i in range(steps)]
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
                                for k in range(len(arm_seeds))
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
                        for s in arm_seeds
                    ]
                )
            ),
            "seconds_per_step": float(
                np.mean(
                    [
                        m["time/rollout_s"] + m["time/gym_s"] + m["time/update_s"]
                        for s in arm_seeds
                        for m in runs[arm, s][:steps]
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
            ax.plot(steps, mean, marker="o", markersize=3, label=arm)
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
    tmp = target.with_name(target.name + ".tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    tmp.replace(target)


def markdown(result: dict[str, Any], context: dict[str, Any]) -> list[str]:
    """The results file's ablation section (its run lines first)."""
    late = result["late_steps"]
    lines = [
        *context["run_lines"],
        f"- size: {context['size']}",
        f"- {len(result['seeds'])} seeds per arm; {result['steps_compared']} steps compared "
        f"(the steps every run completed; done per run: {result['steps_done']})",
        f"- wall: {context['seconds']:.0f} s in all ({context['state']}); runs stopped "
        f"{context['why_stopped']}: {context['stopped']}; failed: {context['failed']}",
        "",
        f"![ablation]({context['png']})",
        "",
        f"Mean over the last {late} steps, then mean and standard error over seeds:",
        "",
        "| arm | " + " | ".join(CURVES.values()) + " | samples/s | s/step |",
        "| --- | " + " | ".join("---" for _ in CURVES) + " | --- | --- |",
    ]
    for arm in result["arms"]:
        row = result["per_arm"][arm]
        cells = [f"{row['late'][k]['mean']:.3f} ± {row['late'][k]['se']:.3f}" for k in CURVES]
        lines.append(
            f"| `{arm}` | "
            + " | ".join(cells)
            + f" | {row['samples_per_s']:.2f} | {row['seconds_per_step']:.0f} |"
        )
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
        "size.",
    ]
    return lines


def start_runs(args: argparse.Namespace, work: Path, model: Path, gym_url: str) -> dict:
    procs = {}
    if (work / "runs").exists():  # an earlier call's runs: this call's start anew
        shutil.rmtree(work / "runs")
    # One CPU thread per trainer: nine of them and the gym's workers share the machine's cores.
    env = dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1")
    env["TOKENIZERS_PARALLELISM"] = "false"
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


def stop_runs(procs: dict, stopped: list[str]) -> None:
    for (arm, seed), proc in procs.items():
        if proc.poll() is None:
            with_group(proc, signal.SIGTERM)
            stopped.append(f"{arm}-s{seed}")
    for proc in procs.values():
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with_group(proc, signal.SIGKILL)
            proc.wait()


def with_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def pack_runs(work: Path, target: Path) -> None:
    """Each run's light files (metrics, config, log, the warm start's summary) as one archive:
    a device machine hands back a few files only."""
    tmp = target.with_name(target.name + ".tmp")
    with tarfile.open(tmp, "w:gz") as tar:
        for path in sorted(work.rglob("*")):
            rel = path.relative_to(work)
            if not path.is_file() or rel.parts[0] not in ("runs", "model", "warm_start.log"):
                continue
            if path.suffix not in (".jsonl", ".json", ".yaml", ".log", ".txt"):
                continue
            if rel.parts[0] == "model" and path.name != "warm_start.json":
                continue  # the tokenizer's files
            if "engine_weights" in rel.parts or path.parent.name in ("policy", "tokenizer"):
                continue
            tar.add(path, arcname=str(rel))
        serve_log = work / "gym" / "serve.log"
        if serve_log.exists():  # its end: why evaluations failed, if they did
            tail = serve_log.read_bytes()[-200_000:]
            info = tarfile.TarInfo("gym/serve.log.tail")
            info.size = len(tail)
            tar.addfile(info, io.BytesIO(tail))
    tmp.replace(target)


def report(
    args: argparse.Namespace, work: Path, out: Path, context: dict[str, Any], final: bool
) -> dict[str, Any] | None:
    """ablation.json, runs.tar.gz, the results file's section and the plot, from what the runs
    have written so far."""
    pack_runs(work, out / "runs.tar.gz")
    result = analyse(work, args.arms.split(","), list(range(args.seeds)))
    if result is None:
        if final:
            log("no report: an arm has no run with a step (runs/NAME.log in runs.tar.gz)")
        return None
    context = dict(context, seconds=time.monotonic() - context["started"])
    context["state"] = "final" if final else "in progress: the runs were still going"
    result["context"] = {k: v for k, v in context.items() if k != "started"}
    tmp = out / "ablation.json.tmp"
    tmp.write_text(json.dumps(result, indent=1) + "\n")
    tmp.replace(out / "ablation.json")
    target = record.results_path(args.record, context["machine_name"])
    if not target.exists() and (HERE / target.name).exists() and args.record != HERE:
        shutil.copy2(HERE / target.name, target)  # the file's other sections kept
    record.record_part(target, TITLE, PART, markdown(result, context), result, False)
    try:
        plot(result, args.record / context["png"])
    except ImportError as exc:  # the figures are in the results file whatever happens here
        log(f"no plot: {exc}")
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True, help="ablation.json and runs.tar.gz")
    p.add_argument(
        "--work",
        type=Path,
        help="the policy, the gym's state and the run folders (default: OUT/work); a second "
        "call with the same --work reuses its warm start and starts the runs anew",
    )
    p.add_argument(
        "--record",
        type=Path,
        help="where results-<machine>.md's ablation section and the plot go (default: "
        "bench/train_gpu; with --smoke, OUT)",
    )
    p.add_argument("--commit", help="the commit measured, for the results file (default: git's)")
    p.add_argument("--minutes", type=float, default=6.0, help="the whole run's wall-clock budget")
    p.add_argument("--reserve-s", type=float, default=20.0, help="kept for stopping and the report")
    p.add_argument("--report-every", type=float, default=45.0, help="seconds between reports")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--arms", default=",".join(ARMS))
    p.add_argument("--steps", type=int, default=60, help="planned; the deadline usually ends it")
    p.add_argument("--turns", type=int, default=3)
    p.add_argument("--samples", type=int, default=4, help="samples per task (the group)")
    p.add_argument("--tasks", default=TASKS, help="comma-separated task ids")
    p.add_argument("--max-new-tokens", type=int, default=768)
    p.add_argument("--timing-budget-ms", type=float, default=100.0)
    p.add_argument("--lr", type=float, default=1e-5, help="AdamW (runs 5 and 6: 5e-6, 44 steps)")
    p.add_argument("--model", help="a warm-started policy folder (default: warm-start one)")
    p.add_argument("--device", default="cuda")
    p.add_argument("--gym-workers", type=int, default=14, help="the gym's concurrent jobs")
    p.add_argument(
        "--cpu-check",
        action="store_true",
        help="this CPU machine's end-to-end check: a tiny model, 2 tasks, short answers",
    )
    p.add_argument(
        "--smoke",
        action="store_true",
        help="the pipeline on a CPU in a few minutes: one task, 2 seeds, one step",
    )
    p.add_argument("--json", action="store_true", help="print ablation.json's content")
    args = p.parse_args(argv)
    if args.cpu_check or args.smoke:
        args.device = "cpu"
        args.samples, args.max_new_tokens, args.gym_workers = 2, 16, 2
        if args.tasks == TASKS:
            args.tasks = "03_scale_add_mul" if args.smoke else "03_scale_add_mul,09_rms_norm"
    if args.smoke:
        args.seeds, args.steps = min(args.seeds, 2), 1
    started = time.monotonic()
    deadline = started + args.minutes * 60 - args.reserve_s
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    work = (args.work or out / "work").resolve()
    work.mkdir(parents=True, exist_ok=True)
    args.record = (args.record or (out if args.smoke else HERE)).resolve()
    args.record.mkdir(parents=True, exist_ok=True)
    machine_name = record.machine() if args.device == "cuda" else "cpu"
    run_lines = record.run_lines(
        "python bench/train_gpu/run.py " + " ".join(argv if argv is not None else sys.argv[1:])
    )
    if args.commit:
        run_lines[-1] = run_lines[-1].split("; commit:")[0] + f"; commit: {args.commit}"
    context: dict[str, Any] = {
        "started": started,
        "run_lines": run_lines,
        "machine_name": machine_name,
        "png": f"ablation-{machine_name}.png",
        "size": f"tasks {args.tasks}, {args.samples} samples per task, {args.turns} turns, "
        f"answers up to {args.max_new_tokens} tokens, AdamW at {args.lr:g}, "
        f"{args.timing_budget_ms:g} ms timing budget, {args.gym_workers} gym workers",
        "stopped": "none",
        "why_stopped": "at the deadline",
        "failed": "none",
    }
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    from kgym.local_gym import LocalGym

    gym_args = ["--cpu-workers", str(args.gym_workers)]
    if args.device == "cuda":
        gym_args += ["--workers-per-gpu", str(args.gym_workers)]
    arms = args.arms.split(",")
    seeds = list(range(args.seeds))
    stopped: list[str] = []
    procs: dict = {}
    try:
        # The gym first: its workers warm up while the policy is warm-started.
        with LocalGym(work / "gym", gym_args, "none" if args.device == "cpu" else "auto") as gym:
            log(f"gym at {gym.url}")
            model = warm_start(args, work)
            elapsed = time.monotonic() - started
            log(f"{len(arms)} arms x {len(seeds)} seeds, all at once ({elapsed:.0f} s in)")
            procs = start_runs(args, work, model, gym.url)
            last_report = time.monotonic()
            reported: set[tuple[str, int]] = set()
            while any(proc.poll() is None for proc in procs.values()):
                if time.monotonic() > deadline:
                    log("deadline: stopping the runs still going")
                    stop_runs(procs, stopped)
                    break
                for key, proc in procs.items():
                    if proc.poll() not in (None, 0) and key not in reported:
                        reported.add(key)  # say so at once: the budget is short
                        tail = (work / "runs" / f"{key[0]}-s{key[1]}.log").read_text()[-1500:]
                        log(f"run {key[0]}-s{key[1]} failed ({proc.returncode}):\n{tail}")
                if time.monotonic() - last_report > args.report_every:
                    done = {
                        f"{a}-s{s}": len(metrics_of(work / "runs" / f"{a}-s{s}")) for a, s in procs
                    }
                    log(f"steps done: {done}")
                    context["stopped"] = "not yet"
                    report(args, work, out, context, final=False)
                    last_report = time.monotonic()
                time.sleep(2)
    except Stopped as why:
        log(f"{why}: stopping the runs and writing the report")
        context["why_stopped"] = f"by {why}"
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        stop_runs(procs, stopped)
    failed = [
        f"{a}-s{s}"
        for (a, s), proc in procs.items()
        if proc.returncode not in (0, -signal.SIGTERM, -signal.SIGKILL)
        and f"{a}-s{s}" not in stopped
    ]
    if failed:
        log(f"runs that failed (their logs: runs/NAME.log in runs.tar.gz): {failed}")
    context["stopped"] = ", ".join(stopped) or "none"
    context["failed"] = ", ".join(failed) or "none"
    result = report(args, work, out, context, final=True)
    if result is None:
        return 1
    log(
        f"{result['steps_compared']} steps compared in {time.monotonic() - started:.0f} s; "
        f"{record.results_path(args.record, machine_name)}, {args.record / context['png']}"
    )
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
