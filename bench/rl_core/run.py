"""Benchmark of kgym's RL core: similarity versus difflib, and advantages on a training batch.

Usage (from the repository root, with kgym installed):

    python bench/rl_core/run.py            # writes bench/rl_core/results-cpu.md

Similarity: KernelBook-sized pairs (2-8 KB of Triton/PyTorch code built from the task suite),
candidate versus reference, timed side by side in one run: difflib.SequenceMatcher(None, a, b,
autojunk=...).ratio() against kgym.rewards.similarity (the same float; checked on every pair).

Advantages: a batch of 16 prompts x 16 samples x 3 turns (768 samples), flat arrays, for each
estimator, through the Python API (kgym.rl.advantages) and the raw binding (kgym._core.rl).
"""

from __future__ import annotations

import argparse
import datetime as dt
import difflib
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from kgym import _core, rewards, rl

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    uname = subprocess.run(["uname", "-a"], capture_output=True, text=True, check=False).stdout
    return {
        "uname": uname.strip(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "platform": platform.platform(),
    }


def timeit(fn: Callable[[], object], min_time: float = 0.2, repeats: int = 5) -> float:
    """Median seconds per call over `repeats` rounds of at least `min_time` each."""
    fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - t0 >= min_time / 4:
            break
        n *= 2
    rounds = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        rounds.append((time.perf_counter() - t0) / n)
    return statistics.median(rounds)


# ------------------------------------------------------------------------------------------------
# Similarity


def sources() -> list[str]:
    files = sorted((ROOT / "tasks").rglob("*.py"))
    texts = [p.read_text(encoding="utf-8") for p in files]
    if not texts:
        texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "python").rglob("*.py"))]
    return [t for t in texts if len(t) > 300]


def code_of_size(rng: random.Random, texts: list[str], size: int) -> str:
    out = ""
    while len(out) < size:
        out += rng.choice(texts)
    return out[:size]


def mutate(text: str, rng: random.Random, edits: int) -> str:
    lines = text.splitlines(keepends=True)
    for _ in range(edits):
        k = rng.randrange(len(lines))
        op = rng.randrange(3)
        if op == 0:
            del lines[k]
        elif op == 1:
            lines.insert(k, rng.choice(lines))
        else:
            lines[k] = lines[k].replace("x", "y").replace("BLOCK", "TILE")
    return "".join(lines)


def bench_similarity(rng: random.Random) -> list[dict[str, Any]]:
    texts = sources()
    rows = []
    for size in (2048, 4096, 8192):
        for kind in ("related", "unrelated"):
            pairs = []
            for _ in range(6):
                ref = code_of_size(rng, texts, size)
                cand = (
                    mutate(ref, rng, max(1, size // 400))
                    if kind == "related"
                    else code_of_size(rng, texts, size)
                )
                pairs.append((cand, ref))
            for autojunk in (False, True):
                for a, b in pairs:  # same float on every pair
                    want = difflib.SequenceMatcher(None, a, b, autojunk=autojunk).ratio()
                    assert rewards.similarity(a, b, autojunk=autojunk) == want

                def py(pairs: list[tuple[str, str]] = pairs, aj: bool = autojunk) -> None:
                    for a, b in pairs:
                        difflib.SequenceMatcher(None, a, b, autojunk=aj).ratio()

                def cc(pairs: list[tuple[str, str]] = pairs, aj: bool = autojunk) -> None:
                    for a, b in pairs:
                        rewards.similarity(a, b, autojunk=aj)

                t_py = timeit(py, min_time=0.5, repeats=3) / len(pairs)
                t_cc = timeit(cc, min_time=0.3, repeats=5) / len(pairs)
                rows.append(
                    {
                        "size_bytes": size,
                        "pairs": kind,
                        "autojunk": autojunk,
                        "difflib_ms": t_py * 1e3,
                        "kgym_ms": t_cc * 1e3,
                        "speedup": t_py / t_cc,
                    }
                )
                print(rows[-1], flush=True)
    # The GRPO case: 16 candidates against one reference (indexed once).
    ref = code_of_size(rng, texts, 4096)
    cands = [mutate(ref, rng, 10) for _ in range(16)]
    want = [difflib.SequenceMatcher(None, c, ref, autojunk=False).ratio() for c in cands]
    assert list(rewards.similarity_many(cands, ref)) == want
    t_py = timeit(
        lambda: [difflib.SequenceMatcher(None, c, ref, autojunk=False).ratio() for c in cands],
        min_time=0.5,
        repeats=3,
    )
    t_cc = timeit(lambda: rewards.similarity_many(cands, ref), min_time=0.3)
    rows.append(
        {
            "size_bytes": 4096,
            "pairs": "16 candidates vs 1 reference (similarity_many)",
            "autojunk": False,
            "difflib_ms": t_py * 1e3,
            "kgym_ms": t_cc * 1e3,
            "speedup": t_py / t_cc,
        }
    )
    print(rows[-1], flush=True)
    return rows


# ------------------------------------------------------------------------------------------------
# Advantages


def bench_advantages(rng: np.random.Generator) -> list[dict[str, Any]]:
    prompts, samples, turns = 16, 16, 3
    n = prompts * samples * turns
    rewards_ = rng.random(n) * 4.0
    groups = np.repeat(np.arange(prompts, dtype=np.int64), samples * turns)
    trajs = np.repeat(np.arange(prompts * samples, dtype=np.int64), turns)
    turn = np.tile(np.arange(turns, dtype=np.int64), prompts * samples)
    valid = rng.random(n) > 0.1
    core: Any = _core.rl  # type: ignore[attr-defined]
    rows = []
    for est in ("grpo", "dr_grpo", "rloo", "trloo"):
        t_api = timeit(
            lambda est=est: rl.advantages(
                rewards_, groups, traj_ids=trajs, turn_ids=turn, valid=valid, estimator=est
            )
        )
        t_raw = timeit(
            lambda est=est: core.advantages(
                rewards_, groups, trajs, turn, valid, est, 1.0, 1e-6, False, True
            )
        )
        rows.append(
            {
                "what": f"{est}: 16 prompts x 16 samples x 3 turns (768), returns + valid mask",
                "python_api_us": t_api * 1e6,
                "binding_us": t_raw * 1e6,
            }
        )
        print(rows[-1], flush=True)
    # Shuffled input (the sort path) and PRS on the same batch.
    perm = rng.permutation(n)
    t_shuf = timeit(
        lambda: core.advantages(
            rewards_[perm],
            groups[perm],
            trajs[perm],
            turn[perm],
            valid[perm],
            "trloo",
            1.0,
            1e-6,
            False,
            True,
        )
    )
    rows.append(
        {"what": "trloo, shuffled rows (768)", "python_api_us": None, "binding_us": t_shuf * 1e6}
    )
    correct = rng.random(n) > 0.5
    pr = rng.random(n)
    t_prs = timeit(lambda: rl.prs(correct, pr, seed=1))
    rows.append(
        {"what": "PRS keep decisions (768)", "python_api_us": t_prs * 1e6, "binding_us": None}
    )
    # Mismatch correction on 256 sequences x 2048 tokens (float32).
    lt = -rng.random((256, 2048)).astype(np.float32)
    lr = lt + rng.normal(0, 1e-3, lt.shape).astype(np.float32)
    mask = np.ones_like(lt, dtype=bool)
    t_tis = timeit(lambda: rl.token_tis_weights(lt, lr, mask))
    t_geo = timeit(lambda: rl.geometric_rejection(lt, lr, mask))
    rows.append(
        {
            "what": "token TIS, 256 x 2048 tokens (float32)",
            "python_api_us": t_tis * 1e6,
            "binding_us": None,
        }
    )
    rows.append(
        {
            "what": "geometric rejection, 256 x 2048 tokens",
            "python_api_us": t_geo * 1e6,
            "binding_us": None,
        }
    )
    for r in rows[-4:]:
        print(r, flush=True)
    return rows


def fmt(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the run as JSON too")
    args = parser.parse_args()
    started = dt.datetime.now(dt.timezone.utc)
    sim = bench_similarity(random.Random(0))
    adv = bench_advantages(np.random.default_rng(0))
    info = machine()
    command = "python bench/rl_core/run.py"
    data = {
        "command": command,
        "date": started.isoformat(),
        "machine": info,
        "similarity": sim,
        "advantages": adv,
    }
    lines = [
        "# RL core benchmark",
        "",
        f"- Command: `{command}` (from the repository root, kgym installed in Release mode)",
        f"- Date: {started:%Y-%m-%d %H:%M} UTC",
        f"- Machine: {info['cpu']}, {info['cores']} cores; `{info['uname']}`",
        f"- Python {info['python']}, NumPy {info['numpy']}",
        "",
        "## Similarity: kgym.rewards.similarity vs difflib.SequenceMatcher(...).ratio()",
        "",
        "Same run, same pairs, same float on every pair (asserted). Candidate vs reference code",
        "built from the task suite's Triton/PyTorch sources; related = the reference with line",
        "edits, unrelated = other code of the same size. Times are per pair.",
        "",
        "| size | pairs | autojunk | difflib (ms) | kgym (ms) | speed-up |",
        "|---:|---|---|---:|---:|---:|",
    ]
    for r in sim:
        lines.append(
            f"| {r['size_bytes']} B | {r['pairs']} | {r['autojunk']} | {fmt(r['difflib_ms'], 2)} "
            f"| {fmt(r['kgym_ms'], 3)} | {r['speedup']:.0f}x |"
        )
    lines += [
        "",
        "## Advantages and friends",
        "",
        "| what | Python API (µs) | raw binding (µs) |",
        "|---|---:|---:|",
    ]
    for r in adv:
        lines.append(f"| {r['what']} | {fmt(r['python_api_us'])} | {fmt(r['binding_us'])} |")
    lines.append("")
    (HERE / "results-cpu.md").write_text("\n".join(lines))
    print("\n".join(lines))
    if args.json:
        print(json.dumps(data))


if __name__ == "__main__":
    main()
