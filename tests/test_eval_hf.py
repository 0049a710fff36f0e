"""kgym eval with a local Hugging Face model: a tiny GPT-2 made from a config and a byte-level
tokenizer trained in the test (no downloaded weights), through the whole pipeline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgym import cli

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")


def tiny_model(path: Path, context: int = 4096) -> Path:
    from tokenizers import ByteLevelBPETokenizer

    corpus = ["import torch\nimport triton\nclass ModelNew(torch.nn.Module):\n    pass\n"] * 20
    trainer = ByteLevelBPETokenizer()
    trainer.train_from_iterator(corpus, vocab_size=300, min_frequency=1, show_progress=False)
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=trainer, eos_token="</s>")
    tok.add_special_tokens({"eos_token": "</s>", "pad_token": "</s>"})
    config = transformers.GPT2Config(
        vocab_size=len(tok), n_positions=context, n_embd=32, n_layer=1, n_head=2
    )
    model = transformers.GPT2LMHeadModel(config)
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


def test_a_local_hugging_face_model_is_evaluated(tmp_path: Path) -> None:
    model = tiny_model(tmp_path / "tiny")
    out = tmp_path / "run"
    argv = ["eval", "builtin", "--tasks", "01_relu", "--hf", str(model), "--turns", "2"]
    argv += ["--max-tokens", "16", "--out", str(out), "--device", "cpu", "--in-process"]
    assert cli.main([*argv, "--json", "--bootstrap", "0"]) == 0
    rows = [json.loads(line) for line in (out / "trajectories.jsonl").open()]
    assert [r["turn"] for r in rows] == [1, 2]
    assert all(isinstance(r["completion"], str) for r in rows)
    # turn 2 saw turn 1's completion and the gym's feedback on it
    assert rows[1]["messages"][-2] == {"role": "assistant", "content": rows[0]["completion"]}
    results = [json.loads(line)["result"] for line in (out / "results.jsonl").open()]
    assert all(r["status"] != "ok" for r in results)  # 16 random tokens are not a kernel
    summary = json.loads((out / "summary.json").read_text())
    assert summary["policies"]["hybrid"]["groups"]["overall"]["per_turn"][1]["attempts"] == 1


def test_a_model_with_a_short_context_reads_the_end_of_a_long_prompt(tmp_path: Path) -> None:
    # As in training: the prompt loses its beginning and the answer is capped to what fits.
    from kgym.evaluation.models import CompletionRequest, HFModel, ModelError

    long = CompletionRequest(
        task="01_relu", sample=0, turn=1, messages=[{"role": "user", "content": "import x\n" * 400}]
    )
    model = HFModel(str(tiny_model(tmp_path / "short", context=64)), max_new_tokens=100)
    assert isinstance(model.complete(long), str)
    # A context no longer than the 8 prompt tokens always kept leaves no room: a clear error.
    model = HFModel(str(tiny_model(tmp_path / "tiny", context=8)), max_new_tokens=100)
    with pytest.raises(ModelError, match="context of 8 tokens"):
        model.complete(long)
