"""kgym eval on a KernelBench-layout checkout (level folders, KernelBench's own file format and
its generation folder), scaled down for a CPU run."""

from __future__ import annotations

import json
from pathlib import Path

from kgym import cli
from kgym.evaluation.tasksets import load_task_set, scaled_cpu_sizes
from kgym.tasks import find_task

RELU_TASK = '''import torch
import torch.nn as nn

class Model(nn.Module):
    """Simple model that performs a ReLU activation."""
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)

batch_size = 4096
dim = 393216

def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]

def get_init_inputs():
    return []
'''
RELU_SCALE_TASK = RELU_TASK.replace("return torch.relu(x)", "return torch.relu(x) * 2.0")


def make_checkout(root: Path) -> Path:
    (root / "KernelBench" / "level1").mkdir(parents=True)
    (root / "KernelBench" / "level2").mkdir(parents=True)
    (root / "KernelBench" / "level1" / "19_ReLU.py").write_text(RELU_TASK)
    (root / "KernelBench" / "level2" / "1_ReLU_Scale.py").write_text(RELU_SCALE_TASK)
    (root / "KernelBench" / "level2" / "notes.py").write_text("# not a task\n")
    return root


def test_size_constants_are_scaled_and_small_ones_kept() -> None:
    source = "N = 4096\nK = 3\nH, W = 224, 224\nshape = (128, 4096)\nKGYM_X = 4096\n"
    assert scaled_cpu_sizes(source, 64) == {"N": 64, "H": 16, "W": 16, "shape": (16, 64)}
    # values computed from size constants are computed again from the scaled ones
    derived = "out_features = 8192\nbias_shape = (out_features,)\nM = 2 * out_features\n"
    assert scaled_cpu_sizes(derived, 64) == {
        "out_features": 128,
        "bias_shape": (128,),
        "M": 256,
    }
    assert scaled_cpu_sizes("dim = 393216\nbatch_size = 4096\n", 64) == {
        "dim": 6144,
        "batch_size": 64,
    }
    # sizes written as products of numbers (KernelBench's "M = 16384 * 4") are sizes too
    assert scaled_cpu_sizes("M = 16384 * 4\nK = 32 * 2\nshape = (256 * 8, 3)\n", 64) == {
        "M": 1024,
        "K": 16,
        "shape": (32, 3),
    }


def test_a_kernelbench_checkout_is_loaded_by_level(tmp_path: Path) -> None:
    root = make_checkout(tmp_path)
    both = load_task_set(str(root))
    assert [t.key for t in both.tasks] == ["level1/19_ReLU", "level2/1_ReLU_Scale"]
    assert [t.level for t in both.tasks] == [1, 2]
    assert len(both.skipped) == 1 and "notes.py" in both.skipped[0]
    assert [t.key for t in load_task_set(str(root / "KernelBench"), [2]).tasks] == [
        "level2/1_ReLU_Scale"
    ]


def test_kernelbench_generations_scaled_for_a_cpu(tmp_path: Path) -> None:
    root = make_checkout(tmp_path / "kb")
    solution = find_task("01_relu").solution_path()
    assert solution is not None
    generations = tmp_path / "runs" / "my_run"
    generations.mkdir(parents=True)
    # KernelBench's own layout: level_L_problem_P_sample_S_kernel.py (code, no fences)
    (generations / "level_1_problem_19_sample_0_kernel.py").write_text(solution.read_text())
    (generations / "level_2_problem_1_sample_0_kernel.py").write_text(solution.read_text())
    out = tmp_path / "run"
    argv = ["eval", str(root), "--generations", str(generations), "--turns", "1"]
    argv += ["--out", str(out), "--device", "cpu", "--cpu-scale", "64", "--trials", "1"]
    assert cli.main([*argv, "--bootstrap", "0", "--json", "--jobs", "2"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    groups = summary["policies"]["hybrid"]["groups"]
    assert groups["level 1"]["per_turn"][0]["correct_rate"]["value"] == 1.0
    assert groups["level 2"]["per_turn"][0]["correct_rate"]["value"] == 0.0  # relu, not relu*2
    assert groups["overall"]["per_turn"][0]["correct_rate"]["value"] == 0.5
    results = {
        row["task"]: row["result"] for row in map(json.loads, (out / "results.jsonl").open())
    }
    relu = results["level1/19_ReLU"]
    assert relu["status"] == "ok"
    assert relu["correctness"]["sizes"] == "cpu"
    assert relu["correctness"]["size_overrides"] == {"batch_size": 64, "dim": 6144}
    run = json.loads((out / "run.json").read_text())
    assert run["task_sizes"]["level1/19_ReLU"] == {"batch_size": 64, "dim": 6144}
