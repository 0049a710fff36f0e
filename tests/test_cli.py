"""The command lines a user runs: kgym and kgym-gym."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import solution_source
from kgym.tasks import find_task

KGYM = [sys.executable, "-m", "kgym.cli"]
GYM = shutil.which("kgym-gym", path=str(Path(sys.executable).parent))


def sh(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, input=stdin, timeout=300)


def test_help_everywhere() -> None:
    for sub in (
        [],
        ["check"],
        ["tasks", "list"],
        ["demo"],
        ["extract"],
        ["train"],
        ["sft"],
        ["data", "export"],
        ["data", "kernelbook"],
    ):
        out = sh(*KGYM, *sub, "--help")
        assert out.returncode == 0 and "usage" in out.stdout
    assert GYM is not None
    for sub in ([], ["check"], ["extract"], ["feedback"]):
        out = sh(GYM, *sub, "--help")
        assert out.returncode == 0, out.stderr


def test_check_json_by_task_id(tmp_path: Path) -> None:
    cand = tmp_path / "cand.py"
    cand.write_text(solution_source("05_row_max"))
    out = sh(*KGYM, "check", "05_row_max", str(cand), "--device", "cpu", "--trials", "2", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["status"] == "ok" and result["correctness"]["trials_requested"] == 2


def test_check_human_output_with_completion(tmp_path: Path) -> None:
    completion = tmp_path / "completion.md"
    completion.write_text("```python\n" + solution_source("01_relu") + "```\n")
    task = find_task("01_relu").path
    out = sh(*KGYM, "check", str(task), str(completion), "--device", "cpu")
    assert out.returncode == 0, out.stderr
    assert "Status: ok" in out.stdout and "verdict" in out.stdout


def test_check_exit_codes_on_bad_usage(tmp_path: Path) -> None:
    out = sh(*KGYM, "check", "01_relu", str(tmp_path / "missing.py"))
    assert out.returncode == 2 and "cannot be read" in out.stderr
    out = sh(*KGYM, "check", "no_such_task", str(tmp_path / "missing.py"))
    assert out.returncode == 2 and "no such file or built-in task" in out.stderr
    out = sh(*KGYM, "check", "01_relu")
    assert out.returncode == 2
    binary = tmp_path / "bin.py"
    binary.write_bytes(b"\xff\xfe\x00")
    out = sh(*KGYM, "check", "01_relu", str(binary))
    assert out.returncode == 2 and "UTF-8" in out.stderr
    not_task = tmp_path / "not_task.py"
    not_task.write_text("x = 1\n")
    out = sh(*KGYM, "check", str(not_task), str(binary))
    assert out.returncode == 2 and "not a KernelBench task" in out.stderr


def test_a_wrong_verdict_still_exits_zero(tmp_path: Path) -> None:
    cand = tmp_path / "cand.py"
    wrong = solution_source("01_relu").replace(
        "tl.where(x > 0.0, x, 0.0)", "tl.where(x > 0.0, x, 1.0)"
    )
    assert wrong != solution_source("01_relu")
    cand.write_text(wrong)
    out = sh(*KGYM, "check", "01_relu", str(cand), "--device", "cpu", "--json")
    assert out.returncode == 0
    assert json.loads(out.stdout)["status"] == "incorrect"


def test_gym_binary_check_and_feedback(tmp_path: Path) -> None:
    assert GYM is not None
    task = find_task("06_softmax").path
    cand = task.parent / "solutions" / task.name
    out = sh(
        GYM,
        "check",
        str(task),
        str(cand),
        "--device",
        "cpu",
        "--trials",
        "2",
        "--json",
        "--python",
        sys.executable,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["status"] == "ok"
    saved = tmp_path / "result.json"
    saved.write_text(out.stdout)
    fb = sh(GYM, "feedback", str(saved))
    assert fb.returncode == 0 and fb.stdout.startswith("Status: ok")
    bad = sh(GYM, "check", str(tmp_path / "nope.py"), str(cand))
    assert bad.returncode == 2 and "no such file" in bad.stderr
    bad = sh(GYM, "check", str(task), str(cand), "--device", "tpu")
    assert bad.returncode != 0


def test_extract_commands() -> None:
    completion = "text\n```python\nclass ModelNew: pass\n```\n"
    out = sh(*KGYM, "extract", "-", stdin=completion)
    assert out.returncode == 0 and out.stdout == "class ModelNew: pass\n"
    out = sh(*KGYM, "extract", "-", "--json", stdin="no code")
    assert json.loads(out.stdout)["ok"] is False
    assert GYM is not None
    out = sh(GYM, "extract", "-", stdin=completion)
    assert out.stdout == "class ModelNew: pass\n"
    out = sh(GYM, "extract", "-", stdin="prose only")
    assert out.returncode == 1 and "no code found" in out.stderr


def test_tasks_list_builtin_and_kernelbench_dir(tmp_path: Path) -> None:
    out = sh(*KGYM, "tasks", "list", "--json")
    tasks = json.loads(out.stdout)
    assert len(tasks) >= 16 and all(t["solution"] for t in tasks)
    level = tmp_path / "level1"
    level.mkdir()
    (level / "1_Square_matmul.py").write_text(
        "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
        "    def forward(self, a, b):\n        return a @ b\n\nN = 64\n\n"
        "def get_inputs():\n    return [torch.randn(N, N), torch.randn(N, N)]\n\n"
        "def get_init_inputs():\n    return []\n"
    )
    (level / "helper.py").write_text("x = 1\n")
    (level / "broken.py").write_text("def (:\n")
    out = sh(*KGYM, "tasks", "list", str(level), "--json")
    listed = json.loads(out.stdout)
    assert [t["id"] for t in listed] == ["1_Square_matmul"]
    assert listed[0]["origin"] == "kernelbench"
    out = sh(*KGYM, "tasks", "list", str(tmp_path / "nope"))
    assert out.returncode == 2 and "not a directory" in out.stderr


def test_an_unexpected_demo_verdict_says_why() -> None:
    """The demo's progress line names what decided a verdict it did not expect: the reject
    findings with their details, else the error, else the mismatch."""
    from kgym.demo import why

    rejected = {
        "findings": [
            {"rule": "low-precision", "severity": "reject", "detail": "errs 9 times tf32"},
            {"rule": "speedup-unverified", "severity": "info", "detail": "-"},
        ]
    }
    assert why(rejected) == "low-precision: errs 9 times tf32"
    assert why({"findings": [], "error": {"message": "boom"}}) == "boom"
    wrong = {"findings": [], "error": None, "correctness": {"mismatch": "input set x: off"}}
    assert why(wrong) == "input set x: off"
