"""kgym sft on a CPU: the loss reads assistant tokens only, a resumed run matches one that never
stopped, LoRA exports a whole model, and the cold start -> RL chain runs as documented."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from kgym import cli  # noqa: E402
from kgym.train.policy import tiny_tokenizer  # noqa: E402
from kgym.train.sft import collate, encode, examples  # noqa: E402
from kgym.train.sft_config import load_sft_config  # noqa: E402

TRAJECTORY = {
    "run": "runs/x",
    "task": "01_relu",
    "sample": 0,
    "messages": [
        {"role": "user", "content": "write relu"},
        {"role": "assistant", "content": "```python\nwrong\n```"},
        {"role": "user", "content": "status: incorrect"},
        {"role": "assistant", "content": "```python\nright\n```"},
    ],
}


def test_every_assistant_turn_is_a_target_and_nothing_else_is() -> None:
    found = examples([TRAJECTORY])
    assert [e.target for e in found] == ["```python\nwrong\n```", "```python\nright\n```"]
    assert [len(e.messages) for e in found] == [1, 3]  # the conversation before each turn
    tok = tiny_tokenizer(["write relu status incorrect python wrong right ```"], 300)
    encoded = [encode(e, tok, 512) for e in found]
    ids, _, labels = collate(encoded, tok.pad_token_id, torch.device("cpu"))
    for row, (seq, start) in enumerate(encoded):
        kept = labels[row][labels[row] != -100].tolist()
        assert kept == seq[start:]  # the target and its end-of-text token, nothing before
        assert tok.decode(kept[:-1]) == found[row].target and kept[-1] == tok.eos_token_id
        assert tok.decode(seq[:start]).endswith("assistant:")  # the prompt as kgym renders it
    # too long: the prompt loses its beginning first
    ids, start = encode(found[1], tok, 24)
    assert len(ids) <= 24 and tok.decode(ids[start:-1]) == found[1].target


def config(tmp_path: Path, data: Path, lora: str = "", epochs: int = 2) -> Path:
    path = tmp_path / "sft.yaml"
    path.write_text(
        f"""
model: {{tiny: {{n_embd: 32, n_layer: 1, n_head: 2, n_positions: 1024}}, tokenizer_vocab: 400,
  device: cpu{lora}}}
data: {{file: {data}, max_tokens: 1024, holdout_fraction: 0.2}}
optim: {{lr: 0.003}}
run: {{epochs: {epochs}, batch_size: 4, checkpoint_every: 2, eval_every: 2, tensorboard: "off"}}
"""
    )
    return path


def kernelbook(tmp_path: Path) -> Path:
    out = tmp_path / "kb.jsonl"
    assert cli.main(["data", "kernelbook", "--out", str(out), "--tasks", "0*", "1[0-2]*"]) == 0
    return out


def test_sft_learns_and_a_resumed_run_matches_one_that_never_stopped(tmp_path: Path) -> None:
    data = kernelbook(tmp_path)
    path = config(tmp_path, data)
    straight = tmp_path / "straight"
    assert cli.main(["sft", str(path), "--out", str(straight), "--json"]) == 0
    history = [json.loads(line) for line in (straight / "metrics.jsonl").open()]
    per_epoch = sum(m["epoch"] == 1 for m in history)
    assert per_epoch >= 2 and [m["epoch"] for m in history] == [1] * per_epoch + [2] * per_epoch
    assert history[-1]["loss"] < history[0]["loss"]
    assert "heldout_loss" in history[-1] and history[-1]["heldout_loss"] > 0
    for name in ("curves.png", "checkpoint.pt", "config.json", "policy"):
        assert (straight / name).exists(), name
    assert json.loads((straight / "config.json").read_text())["stage"] == "sft"

    resumed = tmp_path / "resumed"
    assert cli.main(["sft", str(path), "--out", str(resumed), "--epochs", "1", "--json"]) == 0
    assert cli.main(["sft", str(path), "--out", str(resumed), "--json"]) == 0
    again = [json.loads(line) for line in (resumed / "metrics.jsonl").open()]
    keys = ("loss", "grad_norm", "tokens")
    assert [[m[k] for k in keys] for m in again] == [[m[k] for k in keys] for m in history]
    # another config is not resumed in the same folder; a malformed override is refused
    assert cli.main(["sft", str(path), "--out", str(resumed), "--set", "optim.lr=0.01"]) == 2
    assert cli.main(["sft", str(path), "--out", str(tmp_path / "x"), "--set", "optim.lr"]) == 2


def test_lora_sft_exports_a_whole_model_and_the_chain_runs_rl_on_it(tmp_path: Path) -> None:
    """The documented cold start -> RL chain: kgym sft (LoRA), then kgym train on its policy."""
    pytest.importorskip("peft")
    from transformers import AutoModelForCausalLM

    data = kernelbook(tmp_path)
    path = config(tmp_path, data, ", lora: {r: 4, alpha: 8, target_modules: [c_attn]}", 1)
    cold = tmp_path / "cold"
    assert cli.main(["sft", str(path), "--out", str(cold), "--json"]) == 0
    assert (cold / "policy-adapter" / "adapter_config.json").exists()
    assert not (cold / "policy" / "adapter_config.json").exists()
    AutoModelForCausalLM.from_pretrained(cold / "policy")  # loads alone, as model.path does

    rl = tmp_path / "rl.yaml"
    rl.write_text(
        """
model: {device: cpu}
data: {task_set: builtin, tasks: [01_relu]}
rollout: {samples_per_prompt: 2, turns: 1, max_new_tokens: 8}
reward: {kind: dr_kernel}
advantage: {estimator: trloo}
gym: {device: cpu, trials: 1, jobs: 2, in_process: true}
run: {steps: 1, tensorboard: "off"}
"""
    )
    argv = ["train", str(rl), "--out", str(tmp_path / "rl"), "--json"]
    assert cli.main([*argv, "--set", f"model.path={cold / 'policy'}"]) == 0
    (m,) = [json.loads(line) for line in (tmp_path / "rl" / "metrics.jsonl").open()]
    assert m["gym_evaluations"] == 2
    used = json.loads((tmp_path / "rl" / "config.json").read_text())["model"]["path"]
    assert used == str(cold / "policy")


def test_bad_sft_configs_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="file"):
        load_sft_config(None, {})
    with pytest.raises(ValueError, match="epoch"):
        load_sft_config(None, {"data": {"file": "x.jsonl"}, "run": {"epoch": 2}})
    assert cli.main(["sft", "--data", str(tmp_path / "none.jsonl"), "--out", str(tmp_path)]) == 2
