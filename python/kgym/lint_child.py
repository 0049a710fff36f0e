"""Runs in a child process: lints one task by running only its reference ``Model``.

``python -I -m kgym.lint_child TASK.py SIZES DEVICE`` prints one JSON object on stdout.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import torch

from kgym.harness import compare, loader

SEEDS = (11, 12)


def _flat_tensors(out: Any) -> list[torch.Tensor]:
    return compare.tensors_of(compare.flatten(out))


def _passes(candidate: Any, reference: Any, atol: float, rtol: float) -> bool:
    return compare.compare_outputs(candidate, reference, atol, rtol, relative_l2=False).ok


def _perturbed(t: torch.Tensor, seed: int) -> torch.Tensor:
    gen = torch.Generator(device="cpu").manual_seed(seed)
    if t.is_floating_point():
        scale = float(t.detach().abs().mean()) or 1.0
        noise = torch.randn(t.shape, generator=gen, dtype=torch.float32).to(t.device, t.dtype)
        return t + noise * scale
    if t.dtype == torch.bool:
        return ~t
    flat = t.flatten()
    return flat[torch.randperm(flat.numel(), generator=gen).to(t.device)].view_as(t)


def lint(path: Path, sizes: str, device: torch.device) -> dict[str, Any]:
    task = loader.load_module(path, "kgym_lint_task")
    loader.apply_sizes(task, sizes)
    tol = loader.tolerance_for(task, None, None)

    def inputs(seed: int) -> list[Any]:
        torch.manual_seed(seed)
        with torch.device(device):
            return [v.to(device) if isinstance(v, torch.Tensor) else v for v in task.get_inputs()]

    torch.manual_seed(0)
    model = task.Model(*task.get_init_inputs()).to(device).eval()
    findings: list[dict[str, str]] = []

    def note(rule: str, detail: str) -> None:
        findings.append({"rule": rule, "detail": detail})

    with torch.no_grad():
        xs = inputs(SEEDS[0])
        out = model(*xs)
        outs = _flat_tensors(out)
        if not outs:
            note("no-tensor-output", "the reference returns no tensor")
            return {"findings": findings}
        zeros = [torch.zeros_like(o) for o in outs]
        if _passes(zeros, outs, tol.atol, tol.rtol):
            note("zero-output-passes", "an all-zero output passes the tolerance")
        # A constant a candidate could hard-code: the mean output for other inputs.
        other = model(*inputs(SEEDS[1]))
        consts = [
            torch.full_like(o, float(p.double().mean())) for o, p in zip(outs, _flat_tensors(other))
        ]
        if _passes(consts, outs, tol.atol, tol.rtol):
            note("constant-output-passes", "a constant output (learnt from other inputs) passes")
        if _passes(other, out, tol.atol, tol.rtol):
            note("seed-independent", "outputs for two input seeds agree within the tolerance")
        if all(float(o.double().abs().max()) < tol.atol for o in outs if o.numel()):
            note("output-below-tolerance", f"every output value is below atol {tol.atol:g}")
        for index, x in enumerate(xs):
            if not isinstance(x, torch.Tensor) or x.numel() == 0:
                continue
            if x.is_floating_point() and x.numel() > 1:
                finite = x[torch.isfinite(x)].double()
                if finite.numel() > 1 and float(finite.max() - finite.min()) == 0.0:
                    note("constant-input", f"input {index} {tuple(x.shape)} is one value")
                elif finite.numel() > 1 and (float(finite.min()) >= 0 or float(finite.max()) <= 0):
                    note(
                        "one-signed-input",
                        f"input {index} {tuple(x.shape)} is never "
                        f"{'negative' if float(finite.min()) >= 0 else 'positive'}: a kernel "
                        "wrong for the other sign passes the task's own inputs (the judge's "
                        "sign-flipped and shifted stress sets test it)",
                    )
            changed = list(xs)
            changed[index] = _perturbed(x, 100 + index)
            if _passes(model(*changed), out, tol.atol, tol.rtol):
                note("input-no-effect", f"input {index} {tuple(x.shape)} has no effect")
        state = {k: v.clone() for k, v in model.state_dict().items()}
        for name, param in model.named_parameters():
            param.copy_(_perturbed(param, 7))
            if _passes(model(*xs), out, tol.atol, tol.rtol):
                note("weight-no-effect", f"parameter {name} {tuple(param.shape)} has no effect")
            model.load_state_dict(state)
    return {"findings": findings, "atol": tol.atol, "rtol": tol.rtol}


def _gpu_turn(lock_path: str | None) -> int:
    """Waits for this GPU's lint lock: KernelBench's native sizes take gigabytes per tensor, so
    children linting side by side take turns on the GPU (their start-up still overlaps)."""
    if not lock_path:
        return -1
    import fcntl
    import os

    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def main(argv: list[str]) -> int:
    path, sizes, device_name = Path(argv[1]), argv[2], argv[3]
    device = torch.device(device_name)
    if device.type == "cuda":
        _gpu_turn(argv[4] if len(argv) > 4 else None)  # held until this process exits
    try:
        report = lint(path, sizes, device)
    except Exception as exc:  # noqa: BLE001 - a broken task is a lint result, not a crash
        report = {"findings": [], "error": f"{type(exc).__name__}: {exc}"[:500]}
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
