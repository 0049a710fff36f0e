"""The policy: a Hugging Face causal LM (a model folder or hub id), or a small one made from a
config with a byte-level tokenizer trained on a few texts (tests, no downloaded weights)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from kgym.train.config import ModelConfig


@dataclass
class Policy:
    model: Any  # transformers.PreTrainedModel
    tokenizer: Any  # transformers.PreTrainedTokenizerFast
    device: torch.device


def _device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def _tiny_tokenizer(corpus: list[str], vocab: int) -> Any:
    import transformers
    from tokenizers import ByteLevelBPETokenizer

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(corpus, vocab_size=vocab, min_frequency=1, show_progress=False)
    # The underlying tokenizers.Tokenizer (the wrapper lacks truncation from the left).
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer)
    tok.add_special_tokens({"eos_token": "</s>", "pad_token": "</s>"})
    return tok


def load_policy(cfg: ModelConfig) -> Policy:
    try:
        import transformers
    except ImportError as exc:
        raise RuntimeError("kgym train needs transformers (pip install transformers)") from exc
    device = _device(cfg.device)
    dtype = torch.bfloat16 if cfg.dtype == "bfloat16" else torch.float32
    if cfg.path:
        tokenizer = transformers.AutoTokenizer.from_pretrained(cfg.path)
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        model = transformers.AutoModelForCausalLM.from_pretrained(cfg.path, torch_dtype=dtype)
    else:
        tokenizer = _tiny_tokenizer(cfg.tokenizer_corpus, cfg.tokenizer_vocab)
        config = transformers.GPT2Config(
            vocab_size=len(tokenizer),
            bos_token_id=tokenizer.eos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            # No dropout: the sampler (eval mode) and the trainer must score tokens alike.
            resid_pdrop=0.0,
            embd_pdrop=0.0,
            attn_pdrop=0.0,
            **cfg.tiny,
        )
        model = transformers.GPT2LMHeadModel(config).to(dtype)
    if cfg.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    return Policy(model.to(device), tokenizer, device)
