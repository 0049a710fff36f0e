"""What a runner forked from the fork server pays on its first profiler start: with the server's
import of torch's compiler stack (Dynamo, Inductor's config;
``kgym.harness.forkserver.import_compiler_stack``) and without it.

Usage: python bench/profiler_start/forked.py [--children 6] [--device auto|cpu|cuda] [--json]
[--out-dir DIR]

Both variants run side by side, interleaved: a parent for each runs the fork server's own
``warm_up`` (one with ``KGYM_FORKSERVER_COMPILER_IMPORTS=off``, so it skips the compiler stack,
as the server did before; the other with ``on``), then forks ``--children`` children one after
the other. Each child does what a runner does first when the profile is on: it starts and stops
the profiler around one small kernel (CUDA activity before the first CUDA call on a GPU, as
``KernelRecorder.warm``; CPU activity on a CPU, where the start's import is the same and CUPTI
plays no part). Wall and CPU seconds are reported; the parents' warm-up time too, since that is
where the import's cost moves (once per server instead of once per runner). kgym-gym's CPU
servers skip the import (CPU jobs never profile); on a CPU this bench measures the import's
share of the start all the same.

Writes ``results-forked-{cpu,gpu}.json`` and ``.md`` beside this file, or in ``--out-dir``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SWITCH = "KGYM_FORKSERVER_COMPILER_IMPORTS"
VARIANTS = {"server imports the compiler stack": "on", "each runner imports it": "off"}


def _timed(fn: Any) -> dict[str, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return {"s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}


def runner_first_session(device: str) -> dict[str, Any]:
    """In a forked child: the profiler's first session, timed."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    inherited = "torch._inductor" in sys.modules
    prof = profile(activities=[ProfilerActivity.CUDA if device == "cuda" else ProfilerActivity.CPU])

    def session() -> None:
        prof.start()
        torch.ones(1000, device=device).add_(1)
        if device == "cuda":
            torch.cuda.synchronize()
        prof.stop()

    return {**_timed(session), "inductor_inherited": inherited}


def parent(device: str, children: int) -> dict[str, Any]:
    """A fresh process: the fork server's warm-up, then `children` forked runners in turn."""
    began = time.perf_counter()
    from kgym.harness import forkserver

    forkserver.warm_up()
    out: dict[str, Any] = {"warm_up_s": time.perf_counter() - began, "children": []}
    for _ in range(children):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            try:
                data = json.dumps(runner_first_session(device)).encode()
            except BaseException as exc:  # noqa: BLE001 - reported to the parent
                data = json.dumps({"error": repr(exc)}).encode()
            os.write(write, data)
            os._exit(0)
        os.close(write)
        with os.fdopen(read, "rb") as pipe:
            reply = pipe.read()
        os.waitpid(pid, 0)
        out["children"].append(json.loads(reply))
    return out


def run_parent(variant: str, device: str, children: int) -> dict[str, Any]:
    # The switch on or off (on: a CPU server imports the stack too).
    env = {**os.environ, SWITCH: VARIANTS[variant]}
    cmd = [sys.executable, __file__, "--parent", device, "--children", str(children)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def median_of(rows: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def machine(device: str) -> str:
    if device == "cuda":
        import torch

        return f"{torch.cuda.get_device_name(0)} ({os.cpu_count()} CPUs)"
    return f"{platform.processor() or platform.machine()} CPU ({os.cpu_count()} cores)"


def render(results: dict[str, Any]) -> str:
    lines = [
        "# A runner's first profiler start, with and without the fork server's compiler imports",
        "",
        f"`{results['command']}` on {results['machine']}, {results['date']} (torch "
        f"{results['torch']}). Both variants side by side, {results['rounds']} rounds "
        f"interleaved, {results['children']} runners forked per round; medians over all "
        "runners (seconds; CPU seconds in brackets).",
        "",
        "| fork server | its warm-up | a runner's first profiler session | runners that inherited "
        "Inductor |",
        "| --- | --- | --- | --- |",
    ]
    for name, v in results["variants"].items():
        lines.append(
            f"| {name} | {v['warm_up_s']:.2f} | {v['first_session_s']:.3f} "
            f"({v['first_session_cpu_s']:.3f}) | {v['inherited']} of {v['runners']} |"
        )
    lines += [
        "",
        f"Saved per runner: {results['saved_per_runner_s']:.2f} s (medians). An evaluation forks "
        "two runners, which start the profiler at the same time.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--children", type=int, default=6, help="runners forked per parent")
    parser.add_argument("--rounds", type=int, default=2, help="parents per variant, interleaved")
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--out-dir", type=Path, default=HERE, help="where the results go")
    parser.add_argument("--parent", choices=["cpu", "cuda"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.parent:
        print(json.dumps(parent(args.parent, args.children)))
        return
    device = args.device
    if device == "auto":
        probe = [sys.executable, "-c", "import torch; print(torch.cuda.is_available())"]
        device = "cuda" if subprocess.check_output(probe, text=True).strip() == "True" else "cpu"
    began = time.perf_counter()
    parents: dict[str, list[dict[str, Any]]] = {name: [] for name in VARIANTS}
    for round_no in range(args.rounds):
        for name in VARIANTS:
            print(f"round {round_no + 1}/{args.rounds}: {name}", file=sys.stderr, flush=True)
            parents[name].append(run_parent(name, device, args.children))
    variants: dict[str, Any] = {}
    for name, runs in parents.items():
        rows = [c for p in runs for c in p["children"]]
        errors = [r["error"] for r in rows if "error" in r]
        if errors:
            raise SystemExit(f"{name}: a runner failed: {errors[0]}")
        variants[name] = {
            "warm_up_s": statistics.median(p["warm_up_s"] for p in runs),
            "first_session_s": median_of(rows, "s"),
            "first_session_cpu_s": median_of(rows, "cpu_s"),
            "inherited": sum(r["inductor_inherited"] for r in rows),
            "runners": len(rows),
            "parents": runs,
        }
    with_imports, without = (variants[name] for name in VARIANTS)

    import torch

    results = {
        "command": "python bench/profiler_start/forked.py " + " ".join(sys.argv[1:]),
        "machine": machine(device),
        "device": device,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "torch": torch.__version__,
        "rounds": args.rounds,
        "children": args.children,
        "wall_s": time.perf_counter() - began,
        "variants": variants,
        "saved_per_runner_s": without["first_session_s"] - with_imports["first_session_s"],
    }
    stem = "results-forked-" + ("gpu" if device == "cuda" else "cpu")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / f"{stem}.json").write_text(json.dumps(results, indent=1) + "\n")
    (args.out_dir / f"{stem}.md").write_text(render(results))
    print(render(results), file=sys.stderr)
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
