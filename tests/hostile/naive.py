"""A naive harness, the yardstick for the corpus: would a plain check pay this candidate?

It only imports the task and the candidate, builds both models under one seed, runs each on the
task's own ``get_inputs()`` and compares with ``torch.allclose`` (atol = rtol = 1e-2), as a
KernelBench-style harness does. An attack it refuses proves nothing (any harness refuses it);
an attack it pays and kgym refuses is a hole kgym closes.

    python tests/hostile/naive.py tests/hostile/06_softmax__no_max_subtraction.py [--json]

On a CPU the kernels run under Triton's interpreter at the task's CPU sizes.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _allclose(got: Any, expected: Any) -> bool:
    """``torch.allclose`` (atol = rtol = 1e-2), output by output where a model returns several."""
    import torch

    if isinstance(expected, (tuple, list)):
        return (
            isinstance(got, (tuple, list))
            and len(got) == len(expected)
            and all(_allclose(g, e) for g, e in zip(got, expected))
        )
    return torch.allclose(got.float(), expected.float(), atol=1e-2, rtol=1e-2)


def naive_verdict(task_file: Path, candidate_file: Path, trials: int = 3) -> dict[str, Any]:
    import torch

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    task = _load(task_file, "naive_task")
    if device.type == "cpu":
        for key, value in (getattr(task, "KGYM_CPU_SIZES", None) or {}).items():
            setattr(task, key, value)
    try:
        candidate = _load(candidate_file, "naive_candidate")
        torch.manual_seed(0)
        # Evaluated as kgym evaluates them (eval mode: a batch norm uses its running statistics).
        reference = task.Model(*task.get_init_inputs()).to(device).eval()
        torch.manual_seed(0)
        model = candidate.ModelNew(*task.get_init_inputs()).to(device).eval()
        for trial in range(trials):
            torch.manual_seed(1000 + trial)
            inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in task.get_inputs()]
            with torch.no_grad():
                expected = reference(
                    *[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
                )
                got = model(*inputs)
            if not _allclose(got, expected):
                return {"paid": False, "why": f"trial {trial}: not allclose"}
    except Exception as exc:  # noqa: BLE001 - a candidate may raise anything
        return {"paid": False, "why": f"{type(exc).__name__}: {exc}"[:300]}
    return {"paid": True, "why": "allclose on every trial"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("candidate", type=Path)
    parser.add_argument("--task", type=Path, help="default: tasks/<prefix>.py")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not os.environ.get("TRITON_INTERPRET"):
        import torch

        if not torch.cuda.is_available():
            os.environ["TRITON_INTERPRET"] = "1"
    task = args.task or ROOT / "tasks" / f"{args.candidate.name.split('__', 1)[0]}.py"
    verdict = naive_verdict(task, args.candidate)
    print(
        json.dumps(verdict)
        if args.json
        else f"{'paid' if verdict['paid'] else 'unpaid'}: {verdict['why']}"
    )


if __name__ == "__main__":
    main()
