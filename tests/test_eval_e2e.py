"""kgym eval end to end on a CPU: a scripted OpenAI-compatible model over 3 turns, then the same
completions from a generations file, give the metrics the table of completions implies."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from kgym import cli
from kgym.tasks import find_task


def solution(task: str) -> str:
    path = find_task(task).solution_path()
    assert path is not None
    return "Here is my kernel.\n\n```python\n" + path.read_text() + "\n```\n"


WRONG_RELU = solution("01_relu").replace("tl.where(x > 0.0, x, 0.0)", "tl.where(x > 0.0, x, 1.0)")
TORCH_ONLY_GELU = """```python
import torch

class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.gelu(x, approximate="tanh")
```"""
NO_CODE = "I would write a Triton kernel here, but I ran out of time."

# (task, turn) -> (completion, accepted, hacked)
TABLE: dict[tuple[str, int], tuple[str, bool, bool]] = {
    ("01_relu", 1): (WRONG_RELU, False, False),
    ("01_relu", 2): (solution("01_relu"), True, False),
    ("01_relu", 3): (solution("01_relu"), True, False),
    ("02_gelu", 1): (TORCH_ONLY_GELU, False, True),
    ("02_gelu", 2): (solution("02_gelu"), True, False),
    ("02_gelu", 3): ("", False, False),  # empty: the service refuses it, a compile_error
    ("03_scale_add_mul", 1): (NO_CODE, False, False),
    ("03_scale_add_mul", 2): (solution("03_scale_add_mul"), True, False),
    ("03_scale_add_mul", 3): (solution("03_scale_add_mul"), True, False),
}
TASKS = sorted({task for task, _ in TABLE})


class FakeModel(BaseHTTPRequestHandler):
    seen: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        messages = body["messages"]
        task = next(t for t in TASKS if f"({t})" in messages[0]["content"])
        # The feedback template names the turn that comes next ("turn 2 of 3").
        said = re.search(r"turn (\d+) of \d+", messages[-1]["content"])
        turn = int(said.group(1)) if said and len(messages) > 1 else 1
        FakeModel.seen.append({"task": task, "turn": turn, "messages": messages})
        reply = {"choices": [{"message": {"role": "assistant", "content": TABLE[task, turn][0]}}]}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def model_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeModel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    FakeModel.seen = []
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def expected_rates() -> dict[str, list[float]]:
    correct = [sum(TABLE[t, turn][1] for t in TASKS) / len(TASKS) for turn in (1, 2, 3)]
    best = [
        sum(any(TABLE[t, u][1] for u in range(1, turn + 1)) for t in TASKS) / len(TASKS)
        for turn in (1, 2, 3)
    ]
    return {"correct": correct, "best": best}


def check_summary(summary: dict[str, Any]) -> None:
    want = expected_rates()
    for policy in ("hybrid", "strict"):
        g = summary["policies"][policy]["groups"]["overall"]
        assert [r["correct_rate"]["value"] for r in g["per_turn"]] == pytest.approx(want["correct"])
        assert [r["correct_rate"]["value"] for r in g["best_of_turns"]] == pytest.approx(
            want["best"]
        )
        assert g["at_k"]["1"]["pass"]["value"] == pytest.approx(want["best"][-1])
        hacks = sum(hacked for _, _, hacked in TABLE.values())
        assert g["hacks"]["count"] == hacks and g["hacks"]["by_rule"]
        # turn 1: the wrong kernel compiled, the completion without code did not, and the
        # pure-PyTorch answer was refused before loading: compiled for KernelBench only
        assert g["per_turn"][0]["compile_rate"]["value"] == pytest.approx(1 / 3)
        kernelbench = g["per_turn"][0]["kernelbench"]
        assert kernelbench["compile_rate"]["value"] == pytest.approx(2 / 3)
        assert g["per_turn"][1]["compile_rate"]["value"] == 1.0
        assert list(kernelbench["fast"]) == ["0"]  # no timing: KernelBench's fast_p neither
        for row, correct in zip(g["per_turn"], want["correct"], strict=True):
            assert row["kernelbench"]["fast"]["0"]["value"] == pytest.approx(correct)
        assert summary["policies"][policy]["timing_available"] is False


def run_eval(out: Path, *model_args: str) -> dict[str, Any]:
    argv = ["eval", "builtin", "--tasks", *TASKS, "--out", str(out), "--turns", "3"]
    argv += ["--device", "cpu", "--trials", "1", "--jobs", "3", "--bootstrap", "100", "--json"]
    assert cli.main([*argv, *model_args]) == 0
    return json.loads((out / "summary.json").read_text())


def test_a_scripted_model_over_three_turns_then_the_same_from_a_file(
    tmp_path: Path, model_url: str
) -> None:
    summary = run_eval(tmp_path / "run", "--openai-url", model_url, "--model", "table")
    check_summary(summary)
    # The model saw the gym's feedback: turn 2 of relu follows a mismatch.
    relu2 = next(s for s in FakeModel.seen if s["task"] == "01_relu" and s["turn"] == 2)
    assert relu2["messages"][-1]["role"] == "user"
    assert "status: incorrect" in relu2["messages"][-1]["content"].lower()
    assert len(FakeModel.seen) == len(TABLE)

    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").open()]
    trajectories = [json.loads(line) for line in (tmp_path / "run" / "trajectories.jsonl").open()]
    assert len(rows) == len(trajectories) == len(TABLE)
    statuses = {(row["task"], row["turn"]): row["result"]["status"] for row in rows}
    assert statuses["02_gelu", 3] == "compile_error"  # not a gym error retried forever
    for row in rows:
        accepted = row["result"]["policies"]["hybrid"]["status"] == "ok"
        assert accepted == TABLE[row["task"], row["turn"]][1], (row["task"], row["turn"])
    assert (tmp_path / "run" / "report.md").read_text().startswith("# kgym eval report")
    assert {p.name for p in (tmp_path / "run" / "plots").iterdir()} == {
        "fast_p.png",
        "speedups.png",
        "turns.png",
    }

    # Training data from the run folder, in a form `datasets` reads.
    sft = tmp_path / "sft.jsonl"
    assert cli.main(["data", "export", str(tmp_path / "run"), "--out", str(sft), "--json"]) == 0
    accepted = sorted(
        (t, turn) for (t, turn), (_, ok, hacked) in TABLE.items() if ok and not hacked
    )
    rows = [json.loads(line) for line in sft.open()]
    assert sorted((r["task"], r["turn"]) for r in rows) == accepted
    assert all(
        r["messages"][-1] == {"role": "assistant", "content": TABLE[r["task"], r["turn"]][0]}
        for r in rows
    )
    trajectories_file = tmp_path / "trajectories.jsonl"
    argv = ["data", "export", str(tmp_path / "run"), "--out", str(trajectories_file)]
    assert cli.main([*argv, "--format", "trajectories"]) == 0
    kept = [json.loads(line) for line in trajectories_file.open()]
    assert sorted(r["task"] for r in kept) == ["01_relu", "03_scale_add_mul"]  # gelu: a hack
    assert all(len(r["turns"]) == 3 and len(r["messages"]) >= 6 for r in kept)
    datasets = pytest.importorskip("datasets")
    loaded = datasets.load_dataset("json", data_files=str(sft), split="train")
    assert loaded.num_rows == len(accepted) and "messages" in loaded.column_names

    # Run again: everything is done, the model is not asked anything.
    FakeModel.seen = []
    assert run_eval(tmp_path / "run", "--openai-url", model_url, "--model", "table") == summary
    assert FakeModel.seen == []

    # The same completions from a generations file give the same figures.
    generations = tmp_path / "generations.jsonl"
    generations.write_text(
        "\n".join(
            json.dumps(
                {"task": t["task"], "sample": 0, "turn": t["turn"], "completion": t["completion"]}
            )
            for t in trajectories
        )
    )
    # (in this process: the service path was covered above, and a second start costs seconds)
    from_file = run_eval(tmp_path / "from-file", "--generations", str(generations), "--in-process")
    check_summary(from_file)
    assert from_file["policies"] == summary["policies"]


def test_a_run_folder_of_another_run_is_not_resumed(tmp_path: Path, model_url: str) -> None:
    generations = tmp_path / "g.jsonl"
    generations.write_text(json.dumps({"task": "01_relu", "completion": NO_CODE}))
    argv = ["eval", "builtin", "--tasks", "01_relu", "--out", str(tmp_path / "r"), "--turns", "1"]
    argv += ["--device", "cpu", "--json", "--bootstrap", "10"]
    assert cli.main([*argv, "--generations", str(generations), "--in-process"]) == 0
    assert cli.main([*argv, "--openai-url", model_url, "--model", "other"]) == 2


def test_history_keeps_the_last_attempts_only(tmp_path: Path, model_url: str) -> None:
    argv = ["eval", "builtin", "--tasks", "01_relu", "--out", str(tmp_path / "h"), "--turns", "3"]
    argv += ["--history", "1", "--device", "cpu", "--trials", "1", "--json", "--bootstrap", "0"]
    assert cli.main([*argv, "--openai-url", model_url, "--model", "table", "--in-process"]) == 0
    third = next(s for s in FakeModel.seen if s["turn"] == 3)
    # the problem, then only turn 2's attempt and its feedback
    assert [m["role"] for m in third["messages"]] == ["user", "assistant", "user"]
    assert third["messages"][1]["content"] == TABLE["01_relu", 2][0]
