"""kgym tasks lint: degenerate tasks are flagged, the built-in suite is clean."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

TASK_HEADER = "import torch\nimport torch.nn as nn\n\n"


def lint(directory: Path | None = None, *extra: str) -> dict:
    args = [
        sys.executable,
        "-m",
        "kgym.cli",
        "tasks",
        "lint",
        "--json",
        "--device",
        "cpu",
        "--jobs",
        "2",
        *extra,
    ]
    if directory is not None:
        args.insert(5, str(directory))
    out = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return {r["task"]: r for r in json.loads(out.stdout)["tasks"]}


def write_task(directory: Path, name: str, forward: str, init: str = "", inputs: str = "") -> None:
    (directory / f"{name}.py").write_text(
        TASK_HEADER
        + "class Model(nn.Module):\n"
        + "    def __init__(self):\n        super().__init__()\n"
        + (f"        {init}\n" if init else "")
        + f"    def forward(self, x, y):\n        return {forward}\n\n"
        + "def get_inputs():\n"
        + (
            f"    return {inputs}\n"
            if inputs
            else "    return [torch.randn(8, 16), torch.randn(8, 16)]\n"
        )
        + "\ndef get_init_inputs():\n    return []\n"
    )


def rules(report: dict) -> set[str]:
    return {f["rule"] for f in report["findings"]}


def test_degenerate_tasks_are_flagged(tmp_path: Path) -> None:
    write_task(tmp_path, "good", "x * y + x")
    write_task(tmp_path, "tiny_output", "(x + y) * 1e-6")
    write_task(tmp_path, "ignores_y", "torch.relu(x)")
    write_task(tmp_path, "constant", "torch.ones_like(x) * 3")
    write_task(
        tmp_path,
        "dead_weight",
        "self.a(x) + 0 * self.b(y)",
        init="self.a = nn.Linear(16, 16)\n        self.b = nn.Linear(16, 16)",
    )
    write_task(tmp_path, "broken", "x.nope()")
    # KernelBench's level1/20_LeakyReLU draws torch.rand: a plain ReLU passes its inputs.
    write_task(
        tmp_path,
        "leaky_relu_rand",
        "torch.nn.functional.leaky_relu(x, 0.01) + y",
        inputs="[torch.rand(8, 16), torch.randn(8, 16)]",
    )
    write_task(
        tmp_path, "constant_input", "x * y", inputs="[torch.full((8, 16), 2.0), torch.randn(8, 16)]"
    )
    reports = lint(tmp_path)
    assert rules(reports["good"]) == set()
    assert {"zero-output-passes", "output-below-tolerance"} <= rules(reports["tiny_output"])
    one_signed = [
        f for f in reports["leaky_relu_rand"]["findings"] if f["rule"] == "one-signed-input"
    ]
    assert [f["detail"].split(" (")[0] for f in one_signed] == ["input 0"]
    assert "never negative" in one_signed[0]["detail"]
    assert "constant-input" in rules(reports["constant_input"])
    assert "input-no-effect" in rules(reports["ignores_y"])
    assert {"constant-output-passes", "seed-independent"} <= rules(reports["constant"])
    flagged = {f["detail"] for f in reports["dead_weight"]["findings"]}
    assert any("b.weight" in d for d in flagged) and not any("a.weight" in d for d in flagged)
    assert "AttributeError" in reports["broken"]["error"]


def test_builtin_suite_is_clean() -> None:
    reports = lint()
    assert len(reports) >= 16
    for task_id, report in reports.items():
        assert not report.get("error"), (task_id, report["error"])
        assert report["findings"] == [], (task_id, report["findings"])


def test_kernelbench_sizes_are_scaled_for_a_cpu(tmp_path: Path) -> None:
    # KernelBench's way of writing sizes: module constants that get_inputs reads.
    (tmp_path / "big_relu.py").write_text(
        TASK_HEADER
        + "class Model(nn.Module):\n"
        + "    def forward(self, x, y):\n        return torch.relu(x) * y\n\n"
        + "batch_size = 4096\ndim = 65536\n\n"
        + "def get_inputs():\n"
        + "    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]\n"
        + "\ndef get_init_inputs():\n    return []\n"
    )
    report = lint(tmp_path, "--cpu-scale", "64")["big_relu"]
    assert not report.get("error"), report["error"]
    assert report["findings"] == []
    assert report["sizes"] == "cpu"
    assert report["size_overrides"] == {"batch_size": 64, "dim": 1024}


def test_reports_stream_to_a_file_and_an_interrupted_run_resumes(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    write_task(tasks, "good", "x * y + x")
    write_task(tasks, "ignores_y", "torch.relu(x)")
    reports = tmp_path / "reports.jsonl"
    first = lint(tasks, "--reports", str(reports))
    lines = [json.loads(line) for line in reports.read_text().splitlines()]
    assert sorted(r["task"] for r in lines) == ["good", "ignores_y"]
    assert all(r["device"] == "cpu" for r in lines)
    # An interrupted run: one report kept, the other cut mid-line.
    good = next(line for line in reports.read_text().splitlines() if '"good"' in line)
    reports.write_text(good + "\n" + '{"device": "cpu", "task": "ignores_y", "find')
    second = lint(tasks, "--reports", str(reports))
    assert second == first
    assert "input-no-effect" in rules(second["ignores_y"]) and not rules(second["good"])
    # The cut line is gone; the kept report stays first, the one linted again follows.
    lines = [json.loads(line) for line in reports.read_text().splitlines()]
    assert [r["task"] for r in lines] == ["good", "ignores_y"]
