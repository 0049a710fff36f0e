"""The policy: a Hugging Face causal LM (a model folder or hub id), or a small one made from a
config with a byte-level tokenizer trained on a few texts (tests, no downloaded weights)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from kgym.train.config import ModelConfig


@dataclass
class Policy:
    model: Any  # transformers.PreTrainedModel (a peft model with LoRA)
    tokenizer: Any  # transformers.PreTrainedTokenizerFast
    device: torch.device
    reference: Any = None  # a frozen copy of the initial model, for the KL penalty
    lora: bool = False

    @torch.no_grad()
    def reference_logprobs(self, score: Any, batch: Any) -> torch.Tensor:
        """The initial policy's log-probability of each completion token: the base model with
        the adapters switched off under LoRA, else the frozen copy."""
        if self.lora:
            with self.model.disable_adapter():
                return score(self.model, batch)[0]
        return score(self.reference, batch)[0]


def _device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def tiny_tokenizer(
    corpus: list[str], vocab: int, min_frequency: int = 1, whole: list[str] | None = None
) -> Any:
    """A byte-level BPE tokenizer trained on ``corpus``, with an end-of-text token that also
    pads, and the strings ``whole`` as one token each: no downloaded vocabulary."""
    import transformers
    from tokenizers import ByteLevelBPETokenizer

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        corpus, vocab_size=vocab, min_frequency=min_frequency, show_progress=False
    )
    # The underlying tokenizers.Tokenizer (the wrapper lacks truncation from the left).
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer)
    tok.add_special_tokens({"eos_token": "</s>", "pad_token": "</s>"})
    if whole:
        tok.add_tokens(list(whole))
    return tok


def tiny_model(tokenizer: Any, shape: dict[str, Any]) -> Any:
    """A GPT-2 of the given shape (n_embd, n_layer, n_head, n_positions) made from a config, for
    the tokenizer's vocabulary: no downloaded weights."""
    import transformers

    config = transformers.GPT2Config(
        vocab_size=len(tokenizer),
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        # No dropout: the sampler (eval mode) and the trainer must score tokens alike.
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        **shape,
    )
    return transformers.GPT2LMHeadModel(config)


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
        model = transformers.AutoModelForCausalLM.from_pretrained(cfg.path, dtype=dtype)
    else:
        tokenizer = tiny_tokenizer(
            cfg.tokenizer_corpus, cfg.tokenizer_vocab, whole=cfg.tokenizer_tokens
        )
        model = tiny_model(tokenizer, cfg.tiny).to(dtype)
    if cfg.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    if cfg.lora:
        try:
            from peft import LoraConfig, get_peft_model
        except ImportError as exc:
            raise RuntimeError("model.lora needs peft (pip install peft)") from exc
        options = {"r": 8, "alpha": 16, "dropout": 0.0, **cfg.lora}
        model = get_peft_model(
            model,
            LoraConfig(
                r=int(options["r"]),
                lora_alpha=int(options["alpha"]),
                lora_dropout=float(options["dropout"]),
                target_modules=options.get("target_modules"),
                task_type="CAUSAL_LM",
            ),
        )
    return Policy(model.to(device), tokenizer, device, lora=bool(cfg.lora))


def with_reference(policy: Policy, kl_coef: float) -> Policy:
    """A frozen copy of the initial model for the KL penalty (not needed under LoRA, whose
    base model is the reference)."""
    if kl_coef > 0 and not policy.lora:
        import copy

        policy.reference = copy.deepcopy(policy.model).eval().requires_grad_(False)
    return policy
