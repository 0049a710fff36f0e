"""``kgym eval``: the command line of an evaluation (arguments, wiring, output)."""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import sys
from pathlib import Path
from typing import Any

EPILOG = """\
model (one of): --openai-url URL --model NAME (an OpenAI-compatible chat endpoint: vLLM, SGLang,
hosted APIs; the key from the variable named by --api-key-env), --hf PATH (a local Hugging Face
model, through transformers), --generations FILE|DIR (completions made elsewhere: JSONL rows
{task, sample, turn, completion}, or KernelBench's level_L_problem_P_sample_S_kernel.py files).

The run folder (--out) holds run.json, results.jsonl (every Result), trajectories.jsonl (prompt,
completion and feedback of every turn), summary.json, report.md and plots/. The same command
again resumes: attempts already done are skipped. Metrics: docs/eval.md. Evaluation runs under
the hybrid torch-compute policy unless --torch-compute says otherwise; both policies' figures
are reported from that one run, each also under KernelBench's convention for inputs (correct on
the task's own get_inputs(), whatever the stress sets gave: "hybrid (task inputs)")."""


def configure(p: argparse.ArgumentParser, add_check_options: Any) -> None:
    p.add_argument(
        "tasks_from",
        metavar="TASKS",
        help="'builtin', a KernelBench checkout (level1/ ... level3/), or a folder of tasks",
    )
    p.add_argument("--levels", help="comma-separated KernelBench levels (default: all found)")
    p.add_argument("--tasks", nargs="+", metavar="PATTERN", help="only tasks matching these globs")
    p.add_argument("--limit", type=int, help="only the first N tasks")
    p.add_argument(
        "--cpu-scale",
        type=float,
        metavar="F",
        help="on a CPU, run tasks that declare no CPU sizes with their size constants divided "
        "by F (KernelBench's sizes are far too large for Triton's interpreter); the Result "
        "says which sizes ran (correctness.size_overrides)",
    )
    p.add_argument("--out", type=Path, required=True, help="the run folder (resumed if it exists)")
    model = p.add_argument_group("model")
    model.add_argument("--openai-url", metavar="URL", help="base URL, e.g. http://host:8000/v1")
    model.add_argument("--model", help="the model name the endpoint serves")
    model.add_argument("--api-key-env", default="OPENAI_API_KEY", help="variable with the key")
    model.add_argument("--hf", metavar="PATH", help="a local Hugging Face model")
    model.add_argument("--generations", type=Path, metavar="FILE|DIR")
    model.add_argument("--temperature", type=float, default=1.0)
    model.add_argument("--top-p", type=float, default=1.0)
    model.add_argument("--max-tokens", type=int, default=8192)
    model.add_argument(
        "--sample-seed", type=int, default=0, help="sampling seed (where the model honours one)"
    )
    roll = p.add_argument_group("turns")
    roll.add_argument("--turns", type=int, default=3, help="refinement turns (default 3)")
    roll.add_argument("--samples", type=int, default=1, help="trajectories per task (default 1)")
    roll.add_argument(
        "--history",
        type=int,
        help="earlier attempts the conversation keeps (default: all); with many turns, "
        "sequential test-time scaling keeps the last few",
    )
    roll.add_argument(
        "--history-select",
        choices=["last", "best"],
        default="last",
        help="with --history K: the last K attempts, or the K consecutive ones with the highest "
        "summed Dr. Kernel reward (KernelGYM's context management) (default last)",
    )
    roll.add_argument("--jobs", type=int, default=4, help="trajectories at a time (default 4)")
    roll.add_argument("--problem-template", type=Path, help="replaces templates/problem.md")
    roll.add_argument("--feedback-template", type=Path, help="replaces templates/feedback.md")
    roll.add_argument("--system-prompt", type=Path, help="a system message, from a file")
    met = p.add_argument_group("metrics")
    met.add_argument(
        "--fast-p",
        default="0,1.0,1.2,1.5,2.0",
        help="comma-separated speedup thresholds (default %(default)s)",
    )
    met.add_argument("--k", default="1", help="comma-separated k for pass@k (<= --samples)")
    met.add_argument("--bootstrap", type=int, default=1000, help="resamples for the CIs")
    gym = p.add_argument_group("gym")
    gym.add_argument(
        "--server",
        metavar="URL",
        help="a running gym service (default: a local one is started for this run, its state "
        "in OUT/gym)",
    )
    gym.add_argument(
        "--in-process",
        action="store_true",
        help="evaluate in this process instead of through a service (no fork servers; allows "
        "the local-only options such as --atol)",
    )
    gym.add_argument("--token", help="bearer token for --server (default: env KGYM_TOKEN)")
    add_check_options(gym, extract=True)


def _ints(text: str | None) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()] if text else []


def _model(args: argparse.Namespace, tasks: list[Any]) -> Any:
    from kgym.evaluation import models

    chosen = [x for x in (args.openai_url, args.hf, args.generations) if x]
    if len(chosen) != 1:
        raise SystemExit("kgym eval: give one of --openai-url, --hf, --generations")
    if args.openai_url:
        if not args.model:
            raise SystemExit("kgym eval: --openai-url needs --model")
        return models.OpenAIChat(
            args.openai_url,
            args.model,
            api_key=models.api_key_from_env(args.api_key_env),
            temperature=args.temperature,
            top_p=args.top_p,
            max_tokens=args.max_tokens,
            seed=args.sample_seed,
        )
    if args.hf:
        return models.HFModel(
            args.hf, args.temperature, args.max_tokens, args.top_p, seed=args.sample_seed
        )
    problem_ids = {}
    for t in tasks:
        number = t.task.id.split("_", 1)[0]
        if t.level is not None and number.isdigit():
            problem_ids[(t.level, int(number))] = t.key
    return models.GenerationsFile(args.generations, problem_ids)


def _refused_candidate(task: Any, completion: str, why: str) -> dict[str, Any]:
    """The Result of a completion the service refuses to queue (empty, or larger than it
    accepts): the candidate's failure, as the core reports a completion with no code in it
    (compile_error at extraction; nothing runs), with the service's reason."""
    from kgym.check import CheckOptions, check

    result = check(task.task, "", CheckOptions(device="cpu"))
    result["error"] = {
        "phase": "extract",
        "type": "RefusedCandidate",
        "message": f"{why} ({len(completion.encode())} bytes)",
    }
    return result


def _evaluator(args: argparse.Namespace, given: dict[str, Any], server: str | None) -> Any:
    if server:
        from kgym.client import Client, GymError

        client = Client(server, token=args.token or os.environ.get("KGYM_TOKEN"))

        def remote(task: Any, completion: str) -> dict[str, Any]:
            target = {"source": task.task.source, "id": task.task.id}
            try:
                return client.check(target, completion, options=given, completion=True)
            except GymError as exc:
                if exc.status in (400, 413) and (
                    not completion.strip() or len(completion.encode()) > 1 << 20
                ):
                    return _refused_candidate(task, completion, str(exc))
                raise

        return remote
    from kgym.check import CheckOptions, check

    options = CheckOptions(**given)

    def local(task: Any, completion: str) -> dict[str, Any]:
        return check(task.task, completion, options)

    return local


def run(args: argparse.Namespace, given: dict[str, Any]) -> int:
    from kgym import build
    from kgym.check import feedback
    from kgym.evaluation import metrics as m
    from kgym.evaluation.attempt import TASK_INPUTS, VERDICTS, attempt_from_result
    from kgym.evaluation.prompts import Prompts
    from kgym.evaluation.report import markdown, plots
    from kgym.evaluation.rollout import RolloutConfig, run_all
    from kgym.evaluation.rundir import RunDir, RunDirError
    from kgym.evaluation.tasksets import load_task_set, select, with_cpu_sizes

    if args.turns < 1 or args.samples < 1 or args.jobs < 1:
        raise SystemExit("kgym eval: --turns, --samples and --jobs must be at least 1")
    if (args.limit is not None and args.limit < 1) or (
        args.history is not None and args.history < 0
    ):
        raise SystemExit("kgym eval: --limit must be at least 1 and --history at least 0")
    ks = _ints(args.k)
    if not ks or any(k < 1 or k > args.samples for k in ks):
        raise SystemExit("kgym eval: --k: one or more k, each between 1 and --samples")
    fast_ps = tuple(float(x) for x in args.fast_p.split(",") if x.strip())
    given.setdefault("torch_compute", "hybrid")
    given.pop("extract", None)  # completions are always extracted with the auto rule
    task_set = load_task_set(args.tasks_from, _ints(args.levels) or None)
    tasks = select(task_set.tasks, args.tasks, args.limit)
    if not tasks:
        raise SystemExit("kgym eval: no task matches")
    task_sizes: dict[str, Any] = {}
    if args.cpu_scale is not None:
        if args.cpu_scale < 1:
            raise SystemExit("kgym eval: --cpu-scale must be at least 1")
        if given.get("device") != "cpu":
            raise SystemExit("kgym eval: --cpu-scale is for --device cpu")
        scaled = [with_cpu_sizes(t, args.cpu_scale) for t in tasks]
        tasks = [t for t, _ in scaled]
        task_sizes = {t.key: sizes for t, sizes in scaled}
        given["sizes"] = "cpu"
    model = _model(args, tasks)
    if hasattr(model, "tasks"):
        unmatched = sorted(model.tasks() - {t.key for t in tasks})
        matched = len(model.tasks()) - len(unmatched)
        if matched == 0:
            raise SystemExit(
                f"kgym eval: no row of {args.generations} names a task of this run (its tasks: "
                f"{', '.join(unmatched[:5])}...; this run's: {', '.join(t.key for t in tasks[:5])}...)"
            )
        if unmatched and not args.json:
            print(
                f"kgym eval: {len(unmatched)} task(s) of the generations are not in this run "
                f"(e.g. {unmatched[0]})",
                file=sys.stderr,
            )
    prompts = Prompts.load(args.problem_template, args.feedback_template, args.system_prompt)
    config = {
        "task_set": task_set.name,
        "sampling": {
            "temperature": args.temperature,
            "top_p": args.top_p,
            "max_tokens": args.max_tokens,
            "seed": args.sample_seed,
        },
        "tasks": [t.key for t in tasks],
        "model": model.name,
        "turns": args.turns,
        "samples": args.samples,
        "history": args.history,
        "history_select": args.history_select,
        "cpu_scale": args.cpu_scale,
        "task_sizes": task_sizes,
        "options": given,
        "prompts": [prompts.problem.template, prompts.feedback.template, prompts.system],
        "server": args.server or ("in-process" if args.in_process else "local service"),
        # The judge that made the verdicts, where it is this installation's: a run resumed
        # after a fix would mix an older judge's verdicts with the new one's.
        "judge": None if args.server else build.judge_build(),
        "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(["kgym", *sys.argv[1:]]),
    }
    run_dir = RunDir(args.out)
    try:
        already = run_dir.open(config)
    except RunDirError as exc:
        print(f"kgym eval: {exc}", file=sys.stderr)
        return 2
    if not args.json:
        total = len(tasks) * args.samples * args.turns
        print(
            f"kgym eval: {len(tasks)} tasks x {args.samples} sample(s) x {args.turns} turn(s) = "
            f"{total} attempts with {model.name}; {already} already done in {args.out}",
            file=sys.stderr,
        )
    rollout = RolloutConfig(args.turns, args.samples, args.history, args.jobs, args.history_select)
    with contextlib.ExitStack() as stack:
        server = args.server
        if not server and not args.in_process:
            from kgym.local_gym import LocalGym

            # Fresh measurements on every run (no result cache), as many CPU workers as
            # trajectories run at a time; on a GPU the service's own workers per GPU.
            gym = LocalGym(
                args.out / "gym",
                ["--no-cache", "--cpu-workers", str(args.jobs)],
                gpus="none" if given.get("device") == "cpu" else "auto",
            )
            server = stack.enter_context(gym).url
        evaluate = _evaluator(args, given, server)
        run_all(tasks, model, evaluate, feedback, prompts, run_dir, rollout, args.json)

    attempts = [
        attempt_from_result(
            row["result"], row["task"], row.get("level"), row["sample"], row["turn"]
        )
        for row in run_dir.results.values()
    ]
    summary: dict[str, Any] = {"run": str(args.out), "policies": {}}
    # Whether kernels were timed: known from the options, except with device auto (then from
    # the Results: a run where no candidate reached timing on a GPU still says "no timing").
    timed: bool | None = None
    if given.get("device") == "cpu" or given.get("baseline") == "none":
        timed = False
    elif given.get("device") == "cuda":
        timed = True
    for policy in VERDICTS:
        opts = m.MetricOptions(
            timing=timed, policy=policy, fast_ps=fast_ps, ks=tuple(ks), bootstrap=args.bootstrap
        )
        summary["policies"][policy] = m.compute(attempts, args.turns, opts)
    run_dir.write_json("summary.json", summary)
    (args.out / "report.md").write_text(markdown(summary, config))
    try:
        written = plots(summary, attempts, args.out / "plots", given["torch_compute"])
    except ImportError as exc:  # matplotlib is a dependency; a broken install loses plots only
        print(f"kgym eval: no plots ({exc})", file=sys.stderr)
        written = []
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        overall = summary["policies"][given["torch_compute"]]["groups"]["overall"]
        task_inputs = summary["policies"][given["torch_compute"] + TASK_INPUTS]["groups"]

        def share(entry: dict[str, Any]) -> str:
            return "–" if entry.get("value") is None else f"{entry['value']:.1%}"

        print(
            f"kgym eval: turn {args.turns}: correct "
            f"{share(overall['per_turn'][-1]['correct_rate'])}; best of turns: correct "
            f"{share(overall['best_of_turns'][-1]['correct_rate'])} ({given['torch_compute']}; "
            f"on the task's own inputs {share(task_inputs['overall']['per_turn'][-1]['correct_rate'])}"
            "); "
            f"report {args.out / 'report.md'}, plots {', '.join(p.name for p in written)}",
            file=sys.stderr,
        )
    return 0
