"""How fast a timed input set can be drawn: torch's normal generator against a Philox kernel in
Triton, and the GPU's write bandwidth (the poison fill) as the bound.

Inside a timing window the judge draws every call's inputs fresh: for `04_mean_dim` 20 of a
round's 36 ms on an H200, for `01_relu` about a third (bench/window_interference).
Each set is a `torch.randn` of 256 MiB for the tasks measured. This script times, on tensors of
that size, `torch.randn(..., out=)` with torch's generator (what the judge does now), a Triton
kernel that writes four normals per Philox draw (`tl.randn4x`), one that writes one per draw
(`tl.randn`), the first with fewer Philox rounds (6, 3; 10 by default), uniforms
(`tl.rand4x`: Philox without the normal transform), and `fill_` (a write of the same bytes, no
random numbers), and uniforms turned into normals by Box-Muller with the GPU's fast
intrinsics (`fast_logf`, `fast_sinf`, `fast_cosf`), and the judge's own draw of the timed inputs'
normals (`kgym.harness.kernels.fast_normals.draw`, the same transform; skipped where kgym is not
installed): the medians of
alternating runs, in GB/s of output, and the Triton draw's mean and standard deviation as a
sanity check of its distribution.

    python bench/judge_inputs/run.py normal_draw [--mib 256] [--repeats 20] [--json]

Replaces the ``normal_draw`` section of results-<machine>.md beside this file (or in --out-dir).
"""

# ruff: noqa: ANN001 - a Triton kernel's arguments take no Python annotations (Triton reads them)
from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from record import record_part, results_path, run_lines  # noqa: E402
from run import TITLE  # noqa: E402

# What a kernel of `_draw4x` writes: normals by Triton's `randn4x` (Box-Muller at full
# precision), uniforms (`rand4x`, no transform), or normals by Box-Muller with fast intrinsics.
RANDN4X, RAND4X, FAST_BOX_MULLER = 0, 1, 2


@triton.jit
def _box_muller_fast(u1, u2):
    """Box-Muller with the GPU's fast intrinsics: the angle kept in [-pi, pi), where they are
    accurate; the sign it flips does not change the distribution."""
    r = tl.sqrt(-2.0 * libdevice.fast_logf(tl.maximum(1.0e-7, u1)))
    th = 6.283185307179586 * u2 - 3.141592653589793
    return r * libdevice.fast_cosf(th), r * libdevice.fast_sinf(th)


@triton.jit
def _draw4x(out_ptr, n, seed, BLOCK: tl.constexpr, KIND: tl.constexpr, ROUNDS: tl.constexpr):
    """Four values per Philox draw, written as four blocks of BLOCK."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK * 4 + tl.arange(0, BLOCK)
    if KIND == 0:
        a, b, c, d = tl.randn4x(seed, offsets, ROUNDS)
    elif KIND == 1:
        a, b, c, d = tl.rand4x(seed, offsets, ROUNDS)
    else:
        u1, u2, u3, u4 = tl.rand4x(seed, offsets, ROUNDS)
        a, b = _box_muller_fast(u1, u2)
        c, d = _box_muller_fast(u3, u4)
    tl.store(out_ptr + offsets, a, mask=offsets < n)
    tl.store(out_ptr + offsets + BLOCK, b, mask=offsets + BLOCK < n)
    tl.store(out_ptr + offsets + 2 * BLOCK, c, mask=offsets + 2 * BLOCK < n)
    tl.store(out_ptr + offsets + 3 * BLOCK, d, mask=offsets + 3 * BLOCK < n)


@triton.jit
def _normal1x(out_ptr, n, seed, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.randn(seed, offsets), mask=offsets < n)


def draw4x(out: torch.Tensor, seed: int, kind: int = RANDN4X, rounds: int = 10) -> None:
    block = 1024
    grid = (triton.cdiv(out.numel(), 4 * block),)
    _draw4x[grid](out, out.numel(), seed, BLOCK=block, KIND=kind, ROUNDS=rounds)


def draw1x(out: torch.Tensor, seed: int) -> None:
    block = 1024
    _normal1x[(triton.cdiv(out.numel(), block),)](out, out.numel(), seed, BLOCK=block)


JUDGE = "the judge's draw (kgym fast_normals)"


def _judge_draw() -> Callable[[torch.Tensor, int], None] | None:
    """The judge's own draw of the timed inputs' normals, where kgym is installed."""
    try:
        from kgym.harness.kernels import fast_normals
    except ImportError:
        return None
    return lambda out, s: fast_normals.draw(out, fast_normals.call_seed(s, 0))


def moments(values: torch.Tensor) -> dict[str, float]:
    """A sample's mean, standard deviation, kurtosis (a normal's is 3) and largest magnitude."""
    v = values.double()
    return {
        "mean": round(float(v.mean()), 5),
        "std": round(float(v.std()), 5),
        "kurtosis": round(float(((v - v.mean()) ** 4).mean() / v.var() ** 2), 4),
        "max_abs": round(float(v.abs().max()), 3),
    }


def time_ms(fn: Callable[[], None]) -> float:
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return float(start.elapsed_time(end))


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mib", type=int, default=256, help="one input set's size")
    p.add_argument("--repeats", type=int, default=20, help="alternating runs of each method")
    p.add_argument("--out-dir", type=Path, default=HERE, help="where the results go")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    args = p.parse_args(argv)
    if not torch.cuda.is_available():
        print("normal_draw: no GPU here; nothing to measure", file=sys.stderr)
        return 2
    device = torch.device("cuda")
    out = torch.empty(args.mib << 18, dtype=torch.float32, device=device)  # MiB of float32
    generator = torch.Generator(device=device)
    methods: dict[str, Callable[[int], None]] = {
        "torch.randn": lambda s: torch.randn(
            out.shape, generator=generator.manual_seed(s), device=device, out=out
        ),
        "triton randn4x": lambda s: draw4x(out, s),
        "triton randn": lambda s: draw1x(out, s),
        "triton randn4x, 6 Philox rounds": lambda s: draw4x(out, s, RANDN4X, 6),
        "triton randn4x, 3 Philox rounds": lambda s: draw4x(out, s, RANDN4X, 3),
        "triton rand4x (uniform, no transform)": lambda s: draw4x(out, s, RAND4X),
        "triton rand4x, Box-Muller with fast intrinsics": lambda s: draw4x(out, s, FAST_BOX_MULLER),
        "fill_ (bound)": lambda s: out.fill_(float(s % 7)),
    }
    judge_draw = _judge_draw()
    if judge_draw is not None:
        methods[JUDGE] = lambda s: judge_draw(out, s)
    for fn in methods.values():  # compile and warm each
        fn(1)
        fn(2)
    torch.cuda.synchronize()
    times: dict[str, list[float]] = {name: [] for name in methods}
    for r in range(args.repeats):
        for name, fn in methods.items():
            times[name].append(time_ms(lambda fn=fn, r=r: fn(1000 + r)))
    nbytes = out.numel() * 4
    rows = {
        name: {
            "median_ms": round(statistics.median(t), 4),
            "gb_per_s": round(nbytes / (statistics.median(t) * 1e-3) / 1e9, 1),
        }
        for name, t in times.items()
    }
    draw4x(out, 12345)
    sample = out[: 1 << 24].double()
    same_seed = out.clone()
    draw4x(out, 12345)
    deterministic = bool(torch.equal(out, same_seed))
    draw4x(out, 54321, FAST_BOX_MULLER)
    fast_moments = moments(out[: 1 << 24])
    judge_moments = None
    if judge_draw is not None:
        judge_draw(out, 777)
        judge_moments = moments(out[: 1 << 24])
    gpu = torch.cuda.get_device_name(device)
    result: dict[str, Any] = {
        "gpu": gpu,
        "torch": torch.__version__,
        "triton": triton.__version__,
        "set_mib": args.mib,
        "repeats": args.repeats,
        "methods": rows,
        "triton_randn4x_vs_torch": round(
            rows["torch.randn"]["median_ms"] / rows["triton randn4x"]["median_ms"], 2
        ),
        "triton_randn4x_sample": {
            "mean": round(float(sample.mean()), 5),
            "std": round(float(sample.std()), 5),
            "same_bytes_for_the_same_seed": deterministic,
        },
        "fast_transform_sample": fast_moments,
        "fast_transform_vs_torch": round(
            rows["torch.randn"]["median_ms"]
            / rows["triton rand4x, Box-Muller with fast intrinsics"]["median_ms"],
            2,
        ),
        "judge_draw_sample": judge_moments,
        "judge_draw_vs_torch": (
            round(rows["torch.randn"]["median_ms"] / rows[JUDGE]["median_ms"], 2)
            if JUDGE in rows
            else None
        ),
        "command": "python bench/judge_inputs/run.py normal_draw " + " ".join(argv),
    }
    lines = [
        *run_lines(result["command"]),
        f"- torch {torch.__version__}, triton {triton.__version__}; one set of {args.mib} MiB of "
        f"float32, medians of {args.repeats} alternating runs",
        "",
        "| method | ms a set | GB/s written |",
        "| --- | --- | --- |",
        *(f"| {name} | {row['median_ms']} | {row['gb_per_s']} |" for name, row in rows.items()),
        "",
        f"Triton's `randn4x` draw against torch's: {result['triton_randn4x_vs_torch']}x; its "
        f"first 16 M values: mean {result['triton_randn4x_sample']['mean']}, standard deviation "
        f"{result['triton_randn4x_sample']['std']}; the same seed gave the same bytes: "
        f"{result['triton_randn4x_sample']['same_bytes_for_the_same_seed']}. The fast "
        f"transform against torch's draw: {result['fast_transform_vs_torch']}x; its first 16 M "
        f"values: {fast_moments} (a normal's kurtosis is 3).",
    ]
    if judge_moments is not None:
        lines.append(
            f"The judge's draw against torch's: {result['judge_draw_vs_torch']}x; its first "
            f"16 M values: {judge_moments}."
        )
    record_part(results_path(args.out_dir), TITLE, "normal_draw", lines, result, args.json)
    return 0
