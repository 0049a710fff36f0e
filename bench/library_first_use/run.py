"""The first cuDNN convolution and cuBLAS matmul of a fresh process, with and without a warm-up.

What they cost, and how much of it a warm-up that launches nothing takes out.

In a batch of 30 candidates on an H200 the gaps between timing windows ended when the slowest
of a group of sharers left its shared hold, and the slowest were candidates whose first call
ran torch's convolution or matmul (`compile`, the candidate's first call, 1.0-1.6 s, against
27 ms for a Triton-only candidate of the same task: `bench/service_gpu/gap_members.py`). Each
measurement here is a new process: it makes its CUDA context, then (``warmed``) creates the
cuBLAS handle and loads cuDNN's libraries (no kernel launched: counted in ``probe``, under the
profiler), then times a first and a second `conv2d` at `14_conv2d_relu_maxpool`'s sizes and a
first and a second 4096 x 4096 matmul. ``cold``: the same without the warm-up.

    python bench/library_first_use/run.py [--repeats 3] [--json]

Needs a GPU. Writes ``results.json`` and ``results.md`` beside this file (the machine, the date,
the command).
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MODES = ("cold", "warmed")


def _loaded_cudnn_dir() -> Path | None:
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
        for line in maps:
            path = line.split()[-1] if "libcudnn" in line else ""
            if path.startswith("/"):
                return Path(path).parent
    return None


def warm_libraries() -> dict[str, Any]:
    """The cuBLAS handle and cuDNN's libraries, loaded without a launch (seconds each)."""
    import torch

    figures: dict[str, Any] = {}
    began = time.perf_counter()
    torch.cuda.current_blas_handle()
    figures["blas_handle_s"] = time.perf_counter() - began
    began = time.perf_counter()
    torch.backends.cudnn.version()  # loads the dispatcher library
    folder = _loaded_cudnn_dir()
    loaded = []
    for lib in sorted(folder.glob("libcudnn_*.so*")) if folder is not None else []:
        ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)
        loaded.append(lib.name)
    figures["cudnn_libraries_s"] = time.perf_counter() - began
    figures["cudnn_libraries"] = loaded
    return figures


def child(mode: str) -> dict[str, Any]:
    import torch
    import torch.nn.functional as F

    figures: dict[str, Any] = {"mode": mode}
    began = time.perf_counter()
    torch.empty(1, device="cuda")
    figures["context_s"] = time.perf_counter() - began
    if mode == "probe":
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            warm_libraries()
            torch.cuda.synchronize()
        # Every GPU activity the profiler saw (kernels, copies, memsets): none is the point.
        on_gpu = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        figures["kernels_in_warm_up"] = len(on_gpu)
        figures["gpu_activities"] = sorted(set(on_gpu))[:20]
        return figures
    if mode == "warmed":
        figures.update(warm_libraries())
    x = torch.randn(64, 32, 128, 128, device="cuda")
    w = torch.randn(64, 32, 3, 3, device="cuda")
    a = torch.randn(4096, 4096, device="cuda")
    torch.cuda.synchronize()
    for name, call in (
        ("conv2d", lambda: F.conv2d(x, w, padding=1)),
        ("matmul", lambda: a @ a),
    ):
        for which in ("first", "second"):
            began = time.perf_counter()
            call()
            torch.cuda.synchronize()
            figures[f"{name}_{which}_s"] = time.perf_counter() - began
    return figures


def run_child(mode: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{mode}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3, help="fresh processes per mode")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--child", choices=(*MODES, "probe"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child)))
        return 0
    import torch

    if not torch.cuda.is_available():
        print("needs a GPU: this measures CUDA libraries' first use", file=sys.stderr)
        return 2
    runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    for repeat in range(args.repeats):
        for mode in MODES:  # alternated: a slow stretch of the machine falls on both
            print(f"{mode} {repeat + 1}/{args.repeats}", file=sys.stderr, flush=True)
            runs[mode].append(run_child(mode))
    probe = run_child("probe")
    keys = [k for k in runs["warmed"][0] if k.endswith("_s")]
    medians = {
        mode: {k: round(statistics.median(r[k] for r in rs), 4) for k in keys if k in rs[0]}
        for mode, rs in runs.items()
    }
    out = {
        "medians": medians,
        "kernels_in_warm_up": probe["kernels_in_warm_up"],
        "gpu_activities_in_warm_up": probe["gpu_activities"],
        "cudnn_libraries": runs["warmed"][0].get("cudnn_libraries"),
        "runs": runs,
        "meta": {
            "command": "python bench/library_first_use/run.py " + " ".join(sys.argv[1:]),
            "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "gpu": torch.cuda.get_device_name(0),
            "host": platform.node(),
            "torch": torch.__version__,
            "cudnn": torch.backends.cudnn.version(),
        },
    }
    (HERE / "results.json").write_text(json.dumps(out, indent=1) + "\n")
    lines = [
        "# First cuDNN convolution and cuBLAS matmul in a fresh process",
        "",
        f"`{out['meta']['command']}`, {out['meta']['gpu']}, torch {out['meta']['torch']}, "
        f"cuDNN {out['meta']['cudnn']}, {out['meta']['date']}. Medians of {args.repeats} "
        f"fresh processes a mode; the warm-up launched {out['kernels_in_warm_up']} kernels.",
        "",
        "| figure (s) | " + " | ".join(MODES) + " |",
        "| --- | " + " | ".join("---" for _ in MODES) + " |",
    ]
    for k in keys:
        lines.append(f"| {k} | " + " | ".join(str(medians[m].get(k, "-")) for m in MODES) + " |")
    (HERE / "results.md").write_text("\n".join(lines) + "\n")
    print(json.dumps(out, indent=1) if args.json else "\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
