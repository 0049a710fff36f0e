"""The Result contract, extraction through the whole path, and options."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import DEVICE, ROOT, run, solution_source
from kgym import _core
from kgym.check import extract, feedback

TOP_LEVEL = {
    "judge",
    "policies",
    "schema",
    "task_id",
    "status",
    "compiled",
    "correct",
    "hacked",
    "findings",
    "correctness",
    "timing",
    "profile",
    "error",
    "device",
    "durations_ms",
    "sandbox",
    "extraction",
    "resource_limit",
}


def test_result_has_every_documented_field() -> None:
    result = run("06_softmax", solution_source("06_softmax"))
    assert set(result) == TOP_LEVEL
    assert result["schema"] == _core.RESULT_SCHEMA == "kgym.result/1"
    assert result["device"]["kind"] == "cpu" and result["device"]["interpreter"] is True
    assert result["durations_ms"]["total"] > 0
    assert result["durations_ms"]["correctness"] > 0
    assert result["profile"]["available"] is False
    assert result["resource_limit"] is None
    assert set(result["sandbox"]["resources"]) >= {"cgroup", "limited", "memory_limit_mib"}
    json.dumps(result, allow_nan=False)


def test_the_correctness_phase_says_where_its_time_went() -> None:
    """The output layout's probe, the candidate's arena and its runner's mapping of it, the
    other sizes' call and the weights' moves are stretches of their own, each named in the
    schema's doc, disjoint, and inside the phase."""
    result = run("12_linear_bias_relu", solution_source("12_linear_bias_relu"), trials=1)
    assert result["status"] == "ok", result.get("error")
    assert result["correctness"]["input_sets"]["other_shape"]["passed"] is True
    ms = result["durations_ms"]
    doc = (ROOT / "docs" / "result-schema.md").read_text()
    names = ("probe", "arena", "layout", "other_sizes", "weights", "error_size")
    stretches = [ms.get(f"harness_correctness_{name}", 0.0) for name in names]
    assert all(s >= 0 for s in stretches) and ms["harness_correctness_probe"] > 0
    assert ms["harness_correctness_other_sizes"] > 0 and ms["harness_correctness_weights"] > 0
    assert sum(stretches) <= ms["harness_correctness"]
    assert all(f"`_{name}`" in doc for name in names[1:])
    assert "`harness_correctness_probe`" in doc


@pytest.mark.skipif(DEVICE != "cuda", reason="the device's CUDA fields exist on a GPU only")
def test_jobs_make_their_contexts_with_one_hardware_queue(monkeypatch: pytest.MonkeyPatch) -> None:
    # The gym's default for the judge and runners (check/evaluate.cpp), said in the Result.
    monkeypatch.delenv("CUDA_DEVICE_MAX_CONNECTIONS", raising=False)  # an operator's would pass
    result = run("01_relu", solution_source("01_relu"))
    assert result["status"] == "ok", result.get("error")
    assert result["device"]["cuda_connections"] == 1


def test_schema_doc_lists_every_field() -> None:
    doc = (ROOT / "docs" / "result-schema.md").read_text()
    for field in TOP_LEVEL:
        assert re.search(rf"`{field}`", doc), field


def test_raw_completion_is_extracted() -> None:
    completion = (
        "<think>ReLU is elementwise.</think>\nHere is my kernel:\n```python\n"
        + solution_source("01_relu")
        + "```\nIt masks the tail."
    )
    result = run("01_relu", completion)
    assert result["status"] == "ok"
    assert result["extraction"]["rule"] == "fenced_block"


def test_completion_without_code_is_a_clear_error() -> None:
    result = run("01_relu", "I am sorry, I cannot write that kernel.")
    assert result["status"] == "compile_error"
    assert result["error"]["phase"] == "extract"
    assert "no code found" in result["error"]["message"]


def test_missing_model_new() -> None:
    source = "import torch\nclass Model(torch.nn.Module):\n    pass\n"
    # The static screen refuses it (no Triton kernel, and it names the reference class) ...
    screened = run("01_relu", source)
    assert screened["status"] == "rejected"
    # ... and without the screen, the harness says what is missing.
    result = run("01_relu", source, screen=False)
    assert result["status"] == "compile_error"
    assert "ModelNew" in result["error"]["message"]


def test_syntax_error_points_at_line() -> None:
    source = "import torch\n\nclass ModelNew(:\n    pass\n"
    result = run("01_relu", source)
    assert result["status"] == "compile_error"
    assert "line 3" in result["error"]["message"]
    assert not result["hacked"]
    # Python's own message, when the screen is off.
    result = run("01_relu", source, screen=False)
    assert result["status"] == "compile_error"
    assert result["error"]["type"] == "SyntaxError"
    assert "line 3" in result["error"]["traceback"]


def test_feedback_text() -> None:
    result = run("01_relu", solution_source("01_relu"))
    text = feedback(result)
    assert text.startswith("Status: ok")
    assert "Timing unavailable" in text


def test_tolerance_override_makes_incorrect() -> None:
    # GELU's float32 rounding differences are ~1e-7; a zero tolerance must refuse them.
    result = run("02_gelu", solution_source("02_gelu"), atol=0.0, rtol=0.0)
    assert result["status"] in ("incorrect", "ok")
    assert result["correctness"]["atol"] == 0.0


def test_bad_job_is_rejected_with_a_clear_message() -> None:
    with pytest.raises(ValueError, match="trials"):
        _core.evaluate(json.dumps({"task_source": "x", "candidate": "y", "trials": 0}))
    with pytest.raises(ValueError, match="not valid JSON"):
        _core.evaluate("{")


def test_extract_binding() -> None:
    assert extract("```python\nx=1\n```")["code"] == "x=1\n"
    assert not extract("nothing")["ok"]
    with pytest.raises(ValueError):
        extract("x", rule="regex")


def test_missing_interpreter_is_infra_error(tmp_path: Path) -> None:
    result = run("01_relu", solution_source("01_relu"), python=str(tmp_path / "nope"))
    assert result["status"] == "infra_error"
    assert "execve" in result["error"]["message"]


def test_broken_task_is_infra_error_not_candidate_fault(tmp_path: Path) -> None:
    from kgym.check import CheckOptions, check
    from kgym.tasks import describe

    task_file = tmp_path / "broken.py"
    task_file.write_text(
        "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
        "def get_inputs():\n    raise RuntimeError('task bug')\ndef get_init_inputs():\n    return []\n"
    )
    result = check(describe(task_file), solution_source("01_relu"), CheckOptions(device="cpu"))
    assert result["status"] in ("infra_error", "runtime_error")


COMPLEX_TASK = """import torch


class Model(torch.nn.Module):
    def __init__(self, complex_weight):
        super().__init__()
        dtype = torch.cfloat if complex_weight else torch.float32
        self.w = torch.nn.Parameter(torch.rand(8, dtype=dtype))

    def forward(self, x):
        return x * self.w


def get_inputs():
    return [torch.randn(4, 8, dtype=torch.cfloat)]


def get_init_inputs():
    return [COMPLEX_WEIGHT]
"""


ZEROS_CANDIDATE = """import torch
import triton
import triton.language as tl


@triton.jit
def zeros_kernel(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.zeros([BLOCK], tl.float32), mask=offs < n)


class ModelNew(torch.nn.Module):
    def __init__(self, complex_weight):
        super().__init__()

    def forward(self, x):
        y = torch.empty(x.shape, dtype=torch.float32, device=x.device)
        zeros_kernel[(1,)](y, y.numel(), BLOCK=64)
        return y
"""


@pytest.mark.parametrize("complex_weight", [True, False])
def test_a_task_of_complex_tensors_is_the_judges_error_with_its_reason(
    tmp_path: Path, complex_weight: bool
) -> None:
    """Complex weights (refused at the model's build) or complex inputs (at the probe): the
    judge's comparison and checks are made for real tensors."""
    from kgym.check import CheckOptions, check
    from kgym.tasks import describe

    task_file = tmp_path / "complex_mix.py"
    task_file.write_text(COMPLEX_TASK.replace("COMPLEX_WEIGHT", str(complex_weight)))
    result = check(describe(task_file), ZEROS_CANDIDATE, CheckOptions(device="cpu", trials=1))
    assert result["status"] == "infra_error"
    what = "weights" if complex_weight else "inputs or outputs"
    assert f"the task's {what} are complex tensors" in result["error"]["message"]


SCALAR_TASK = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """Mean squared error: a 0-dimensional output, as KernelBench's loss tasks give."""

    def forward(self, predictions, targets):
        return torch.mean((predictions - targets) ** 2)


N = 4096


def get_inputs():
    return [torch.randn(N), torch.randn(N)]


def get_init_inputs():
    return []
'''

SCALAR_CANDIDATE = """import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def mse_kernel(p_ptr, t_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        mask = start + offs < n
        d = tl.load(p_ptr + start + offs, mask=mask, other=0.0) - tl.load(
            t_ptr + start + offs, mask=mask, other=0.0
        )
        acc += d * d
    tl.store(out_ptr, tl.sum(acc, axis=0) / n)


class ModelNew(nn.Module):
    def forward(self, predictions, targets):
        out = torch.empty((), device=predictions.device, dtype=torch.float32)
        mse_kernel[(1,)](predictions, targets, out, predictions.numel(), BLOCK=1024)
        return out
"""


def test_a_task_with_a_scalar_output_is_judged(tmp_path: Path) -> None:
    """KernelBench's loss tasks (94_MSELoss, 96_HuberLoss...) answer a 0-dimensional tensor:
    its slot is poisoned and compared like any other."""
    task_file = tmp_path / "mse.py"
    task_file.write_text(SCALAR_TASK)
    result = run(task_file, SCALAR_CANDIDATE)
    assert result["status"] == "ok", (result["status"], result["error"])
    assert result["correct"] is True
