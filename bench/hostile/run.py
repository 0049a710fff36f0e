"""Runs the hostile corpus and the honest set back to back in one process; records the verdicts.

Usage (from the repository root, after `pip install .`):
    python bench/hostile/run.py                    # device auto: GPU sizes on a GPU, else CPU
    python bench/hostile/run.py --shard 1/2        # half of the corpus (a device-time limit)
    python bench/hostile/run.py --through-service  # through one embedded kgym-gym instead

Every attack (tests/hostile/) and every honest solution (tests/honest/) goes through
``kgym.check.check`` one after the other, from this single process: the gym must survive the whole
corpus. With ``--through-service`` each goes instead to one ``kgym-gym serve`` (one worker, its
fork server, no result cache) started for the run: the path the service and ``kgym train`` take,
where every job is forked from a warm server rather than started fresh, and the service must
survive the whole corpus. Only the service's options travel there (the short GPU timing keeps
its budget, not its sample counts). After each fault (an attack whose expected or actual status
is crashed, timeout or runtime_error) the task's built-in solution is evaluated again and
compared with a fresh evaluation made before any attack ran: same status, same correctness,
nothing flagged.

Writes ``results-<cpu|gpu>[-noscreen][-service][-<k>of<n>].json`` (and a markdown view of it)
into --out-dir, updating them after every evaluation so that a run cut short keeps what it
measured; ``merge.py`` turns one machine's runs into its results file beside this script.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from kgym.check import CheckOptions, check
from kgym.demo import why
from kgym.rewards import compute_reward
from kgym.tasks import find_task

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))
from record import commit  # noqa: E402

from corpus import parse_header  # noqa: E402

FAULT_STATUSES = {"crashed", "timeout", "runtime_error"}
HANG_TIMEOUT_S = 20.0


def corpus() -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for kind, folder in (("attack", "hostile"), ("honest", "honest")):
        for path in sorted((ROOT / "tests" / folder).glob("*__*.py")):
            header = parse_header(path)
            rules = header.get("rules", "-").strip()
            entries.append(
                {
                    "kind": kind,
                    "name": path.stem,
                    "path": path,
                    "task": path.stem.split("__", 1)[0],
                    "description": header.get("attack") or header.get("honest") or "",
                    "expect": [s.strip() for s in header.get("expect", "ok").split("|")],
                    "rules": []
                    if rules in ("", "-")
                    else [r.strip() for r in rules.split(",") if r.strip()],
                    "device": header.get("device", "any"),
                    # A task file beside the corpus (KernelBench-shaped), and the policy the
                    # attack is aimed at (strict unless its header says hybrid).
                    "task_file": path.parent / header["task"] if header.get("task") else None,
                    "policy": header.get("policy", "strict"),
                }
            )
    return entries


def reward_of(result: dict[str, Any]) -> float:
    return float(compute_reward(result, "dr_kernel").total)


def summary(result: dict[str, Any]) -> dict[str, Any]:
    """What a later comparison of two evaluations of the same candidate looks at."""
    correctness = result.get("correctness") or {}
    return {
        "status": result["status"],
        "correct": result["correct"],
        "hacked": result["hacked"],
        "passed": correctness.get("passed"),
        "trials": correctness.get("trials"),
        "reject_rules": sorted(
            {f["rule"] for f in result["findings"] if f.get("severity") == "reject"}
        ),
        "error": error_line(result),
    }


def same_verdict(now: dict[str, Any], fresh: dict[str, Any]) -> bool:
    """A built-in solution after a fault judged as on a fresh gym: accepted both times, with the
    same verdict. The number of graded calls is drawn per evaluation, so of the trials only
    whether all passed is compared."""
    keys = ("status", "correct", "hacked", "reject_rules", "error")
    return (
        now["status"] == "ok"
        and all(now[k] == fresh[k] for k in keys)
        and (now["passed"] == now["trials"]) == (fresh["passed"] == fresh["trials"])
    )


def error_line(result: dict[str, Any]) -> str | None:
    """Phase, type and the start of the message of a Result's error, to read a failure by."""
    error = result.get("error")
    if not isinstance(error, dict):
        return None
    return f"{error.get('phase')}: {error.get('type')}: {str(error.get('message'))[:300]}"


def verdict(entry: dict[str, Any], result: dict[str, Any], reward: float) -> tuple[bool, str]:
    status = result["status"]
    rejects = {f["rule"] for f in result["findings"] if f.get("severity") == "reject"}
    if entry["kind"] == "honest":
        ok = status == "ok" and not rejects
        return ok, "accepted" if ok else f"FALSE POSITIVE ({status})"
    if status == "ok" or reward > 0:
        return False, f"PAID ({status}, reward {reward:.2f})"
    # A wrong answer is `incorrect` where a compared call shows it and `rejected` by
    # low-precision where only the error size does: either is the same defence (as in
    # tests/test_hostile.py).
    wrong_answer = "incorrect" in entry["expect"] and rejects == {"low-precision"}
    expected = set(entry["expect"]) | ({"rejected"} if wrong_answer else set())
    if "rejected" in expected and set(entry["rules"]) == {"low-precision"}:
        expected.add("incorrect")
    if status not in expected:
        return False, f"not paid, but {status} (expected {'|'.join(entry['expect'])})"
    if (
        status == "rejected"
        and entry["rules"]
        and not wrong_answer
        and not rejects & set(entry["rules"])
    ):
        return False, f"rejected by {', '.join(sorted(rejects))} (expected one of {entry['rules']})"
    return True, "caught"


def gpu_line() -> str:
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        out = ""
    return out or "none"


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def fmt_rules(rules: list[str]) -> str:
    return ", ".join(f"`{r}`" for r in rules) if rules else "-"


def write_outputs(
    md: Path,
    js: Path,
    meta: dict[str, Any],
    rows: list[dict[str, Any]],
    faults: list[dict[str, Any]],
) -> None:
    js.write_text(json.dumps({"meta": meta, "rows": rows, "after_fault": faults}, indent=1))
    attacks = [r for r in rows if r["kind"] == "attack"]
    honest = [r for r in rows if r["kind"] == "honest"]
    caught = sum(r["pass"] for r in attacks)
    accepted = sum(r["pass"] for r in honest)
    same = sum(f["same_as_fresh"] for f in faults)
    lines = [
        f"# Hostile corpus and honest set on the {meta['side'].upper()}",
        "",
        f"- command: `{meta['command']}`",
        f"- date: {meta['date']}",
        f"- machine: {meta['machine']}; CPU: {meta['cpu']} ({meta['cores']} cores)",
        f"- GPU: {meta['gpu']}",
        f"- software: torch {meta['torch']}, triton {meta['triton']}, python {meta['python']}",
        f"- sizes: {meta['side']} sizes; trials per evaluation: {meta['trials']}; static screen "
        f"{'on' if meta.get('screen', True) else 'OFF (runtime guards and supervisor only)'}",
        f"- one process ({meta.get('through', 'check')}), {meta['evaluations']} evaluations "
        "back to back, total wall time "
        f"{meta['wall_s']:.0f} s",
        f"- attacks: {caught}/{len(attacks)} caught as labelled (skipped: {meta['skipped']}); "
        f"honest: {accepted}/{len(honest)} accepted; after each fault the built-in solution "
        f"matched a fresh evaluation {same}/{len(faults)} times",
        "",
        "Status is the Result's status; *rules fired* are the `reject` findings; *reward* is the "
        "Dr. Kernel reward (`compute_reward(result, 'dr_kernel')`) the result would pay.",
        "",
        "## Attacks",
        "",
        "| attack | expected | expected rules | status | rules fired | reward | wall s | verdict |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in attacks:
        lines.append(
            f"| {r['name']} | {'/'.join(r['expect'])} | {fmt_rules(r['rules'])} | {r['status']} | "
            f"{fmt_rules(r['fired'])} | {r['reward']:.2f} | {r['wall_s']:.1f} | {r['verdict']} |"
        )
    lines += [
        "",
        "## Honest solutions",
        "",
        "| solution | status | findings | reward | wall s | verdict |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in honest:
        lines.append(
            f"| {r['name']} | {r['status']} | {fmt_rules(r['all_findings'])} | {r['reward']:.2f} | "
            f"{r['wall_s']:.1f} | {r['verdict']} |"
        )
    lines += [
        "",
        "## The built-in solution right after each fault",
        "",
        "| after | task | status | fresh status | same as fresh |",
        "| --- | --- | --- | --- | --- |",
    ]
    for f in faults:
        lines.append(
            f"| {f['after']} | {f['task']} | {f['now']['status']} | {f['fresh']['status']} | "
            f"{'yes' if f['same_as_fresh'] else 'NO'} |"
        )
    md.write_text("\n".join(lines) + "\n")


class Service:
    """One `kgym-gym serve` for the whole run, and a client to it."""

    def __init__(self, on_gpu: bool, state: Path, shards: int) -> None:
        from kgym.client import Client
        from kgym.local_gym import LocalGym

        args = ["--no-cache", "--workers-per-gpu", "1", "--cpu-workers", "1"]
        if on_gpu and shards > 1:
            # Each shard's service would take the whole GPU as its jobs' share, and one shard's
            # memory hog could then starve another's honest job: the GPU is split between them.
            import torch

            total_mib = torch.cuda.get_device_properties(0).total_memory // 2**20
            args += ["--gpu-memory-share-mib", str(total_mib // shards)]
        self.gym = LocalGym(state, args, gpus="all" if on_gpu else "none").start()
        self.client = Client(self.gym.url, timeout=900.0)

    def close(self) -> None:
        self.client.close()
        self.gym.stop()
        shutil.rmtree(self.gym.state_dir, ignore_errors=True)


def start_service(on_gpu: bool, shards: int) -> Service:
    import atexit
    import tempfile

    state = Path(tempfile.mkdtemp(prefix="kgym-hostile-service-"))
    service = Service(on_gpu, state, shards)
    atexit.register(service.close)
    return service


def service_options(options: CheckOptions) -> dict[str, Any]:
    """The check's options the service takes (its API leaves the rest at their defaults)."""
    from kgym import _core

    taken = {o["name"] for o in json.loads(_core.option_table()) if o.get("service")}
    return {k: v for k, v in options.options().items() if k in taken and v != "auto"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=180.0, help="per evaluation, seconds")
    parser.add_argument("--shard", default="1/1", help="k/n: run the k-th of n slices")
    parser.add_argument("--only", help="comma-separated names (file stems) to run")
    parser.add_argument(
        "--side-by-side",
        type=int,
        help="how many shards run at once on this GPU, which split its memory (default: n)",
    )
    parser.add_argument("--out-dir", type=Path, required=True, help="where the run's files go")
    parser.add_argument(
        "--no-screen",
        action="store_true",
        help="turn the static screen off: what the runtime guards and the supervisor catch alone",
    )
    parser.add_argument(
        "--timing-budget-ms", type=float, default=400.0, help="GPU timing budget per evaluation"
    )
    parser.add_argument(
        "--through-service",
        action="store_true",
        help="evaluate through one embedded kgym-gym (its fork server) instead of kgym.check",
    )
    args = parser.parse_args()

    import torch  # only to learn which side this is; the evaluations run in sandboxed children

    on_gpu = args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available())
    side = "gpu" if on_gpu else "cpu"
    k, n = (int(v) for v in args.shard.split("/"))
    entries = corpus()
    if args.only:
        wanted = set(args.only.split(","))
        entries = [e for e in entries if e["name"] in wanted]
    entries = entries[k - 1 :: n]
    suffix = ("-noscreen" if args.no_screen else "") + ("-service" if args.through_service else "")
    suffix += "" if n == 1 else f"-{k}of{n}"
    args.out_dir.mkdir(parents=True, exist_ok=True)
    md = args.out_dir / f"results-{side}{suffix}.md"
    js = args.out_dir / f"results-{side}{suffix}.json"

    # Shorter timing than the default on a GPU: the corpus asks for verdicts, not precision.
    timing: dict[str, Any] = (
        {
            "timing_warmup_ms": 10.0,
            "timing_min_samples": 10,
            "timing_max_samples": 40,
            "timing_budget_ms": args.timing_budget_ms,
        }
        if on_gpu
        else {}
    )

    def options(timeout_s: float, policy: str = "strict") -> CheckOptions:
        return CheckOptions(
            device=args.device,
            trials=args.trials,
            timeout_s=timeout_s,
            screen=not args.no_screen,
            torch_compute=policy,
            **timing,
        )

    import triton

    meta: dict[str, Any] = {
        "side": side,
        "command": " ".join(["python bench/hostile/run.py", *sys.argv[1:]]),
        "screen": not args.no_screen,
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "commit": commit(),
        "machine": f"{platform.machine()}, {platform.platform()}",
        "cpu": cpu_name(),
        "cores": os.cpu_count(),
        "gpu": gpu_line(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "python": platform.python_version(),
        "trials": args.trials,
        "shard": args.shard,
        "skipped": 0,
        "evaluations": 0,
        "wall_s": 0.0,
    }
    started = time.monotonic()
    fresh: dict[str, dict[str, Any]] = {}
    rows: list[dict[str, Any]] = []
    faults: list[dict[str, Any]] = []

    service = start_service(on_gpu, args.side_by_side or n) if args.through_service else None
    meta["through"] = "check"
    if service is not None:
        meta["through"] = "kgym-gym serve: one worker, its fork server, no result cache"

    def evaluate(
        task_id: str,
        source: str,
        timeout_s: float,
        task_file: Path | None = None,
        policy: str = "strict",
    ) -> tuple[dict[str, Any], float]:
        t0 = time.monotonic()
        if service is None:
            task = find_task(str(task_file) if task_file else task_id)
            result = check(task, source, options(timeout_s, policy))
        else:
            opts = service_options(options(timeout_s, policy))
            spec: Any = task_id
            if task_file is not None:
                spec = {"id": task_file.stem, "source": task_file.read_text()}
            result = service.client.check(spec, source, options=opts)
        meta["evaluations"] += 1
        return result, time.monotonic() - t0

    def builtin(task_id: str) -> dict[str, Any]:
        path = find_task(task_id).solution_path()
        assert path is not None
        return evaluate(task_id, path.read_text(), args.timeout)[0]

    # Fresh-gym baselines of the built-in solutions that will be re-checked after faults.
    for e in entries:
        faulty = set(e["expect"]) & FAULT_STATUSES and e["task_file"] is None
        if e["kind"] == "attack" and faulty and e["task"] not in fresh:
            if e["device"] != ("gpu" if on_gpu else "cpu") and e["device"] != "any":
                continue
            fresh[e["task"]] = summary(builtin(e["task"]))

    for i, e in enumerate(entries, 1):
        if e["device"] not in ("any", "gpu" if on_gpu else "cpu"):
            meta["skipped"] += 1
            only = "GPU" if e["device"] == "gpu" else "CPU"
            print(f"[{i}/{len(entries)}] {e['name']}: skipped ({only} only)", file=sys.stderr)
            continue
        timeout_s = HANG_TIMEOUT_S if "timeout" in e["expect"] else args.timeout
        result, wall = evaluate(
            e["task"], e["path"].read_text(), timeout_s, e["task_file"], e["policy"]
        )
        reward = reward_of(result)
        ok, text = verdict(e, result, reward)
        row = {
            "kind": e["kind"],
            "name": e["name"],
            "task": e["task"],
            "description": e["description"],
            "expect": e["expect"] if e["kind"] == "attack" else ["ok"],
            "rules": e["rules"],
            "device": e["device"],
            "status": result["status"],
            "fired": sorted(
                {f["rule"] for f in result["findings"] if f.get("severity") == "reject"}
            ),
            "all_findings": sorted({f["rule"] for f in result["findings"]}),
            "error": (result.get("error") or {}).get("message", "")[:300],
            # Through the service: a retry after infra_error, and the control run's charge.
            "infra_retry": result.get("infra_retry"),
            "reward": reward,
            "wall_s": wall,
            "pass": ok,
            "verdict": text,
            # What decided a verdict not as labelled, read without a second run.
            "why": None if ok else why(result),
            "speedup": (result.get("timing") or {}).get("speedup"),
            # How much of the candidate was timed and verified, and on what share PR rests.
            "timed_rounds": ((result.get("timing") or {}).get("method") or {}).get("rounds"),
            "calls_profiled": (result.get("profile") or {}).get("calls_profiled"),
            "triton_share": (result.get("profile") or {}).get("triton_share"),
            # The error-size check: the candidate's error as a multiple of a tf32 answer's.
            "error_ratio": (
                ((result.get("judge") or {}).get("precision") or {}).get("error") or {}
            ).get("ratio"),
            "error_size_ms": next(
                (v for k, v in (result.get("durations_ms") or {}).items() if "error_size" in k),
                None,
            ),
            # Whether the answer came at the judge's report, before the harness' exit.
            "answered_before_exit": (result.get("sandbox") or {}).get("answered_before_exit"),
        }
        rows.append(row)
        print(
            f"[{i}/{len(entries)}] {e['name']}: {result['status']} {row['fired'] or ''} "
            f"reward {reward:.2f} ({wall:.1f} s) -> {text}" + ("" if ok else f" [{row['why']}]"),
            file=sys.stderr,
            flush=True,
        )
        if (
            e["kind"] == "attack"
            and e["task_file"] is None  # a task beside the corpus has no built-in solution
            and (set(e["expect"]) & FAULT_STATUSES or result["status"] in FAULT_STATUSES)
        ):
            if e["task"] not in fresh:
                fresh[e["task"]] = summary(builtin(e["task"]))
            now = summary(builtin(e["task"]))
            same = same_verdict(now, fresh[e["task"]])
            faults.append(
                {
                    "after": e["name"],
                    "task": e["task"],
                    "now": now,
                    "fresh": fresh[e["task"]],
                    "same_as_fresh": same,
                }
            )
            print(
                f"    built-in {e['task']} after it: {now['status']} (same as fresh: {same})",
                file=sys.stderr,
            )
        meta["wall_s"] = time.monotonic() - started
        write_outputs(md, js, meta, rows, faults)

    meta["wall_s"] = time.monotonic() - started
    write_outputs(md, js, meta, rows, faults)
    print(md.read_text())
    good = all(r["pass"] for r in rows) and all(f["same_as_fresh"] for f in faults)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
