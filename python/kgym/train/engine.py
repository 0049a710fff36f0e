"""Rollouts on an OpenAI-compatible inference server (vLLM, SGLang) instead of Hugging Face
``generate``, with the policy's weights sent to the server before every step.

The server samples; the trainer needs, for every sampled token, its id and the sampler's
log-probability (the PPO ratio's denominator and the mismatch corrections' reference). The
completions endpoint gives both with ``logprobs`` and ``return_tokens_as_token_ids`` (vLLM's
OpenAI server; a server that answers with token text instead of ids is refused, since
re-tokenising text need not give the tokens that were sampled). Prompts are sent as token ids,
so the server reads exactly what the trainer scores.

Weight synchronisation (``sync``), before each step's rollout:

- ``disk``: the full model is written to ``sync_dir/step-N`` and the server is asked to load
  it (``POST /update_weights_from_disk {"model_path"}``, SGLang's endpoint);
- ``lora``: the LoRA adapter is written there and loaded as a new adapter
  (``POST /v1/load_lora_adapter``, vLLM with runtime LoRA updating on); requests then name it,
  and the previous step's adapter is unloaded;
- ``none``: the server keeps its weights (then the sampler drifts from the trained policy, and
  the mismatch corrections are what stands between the two).
"""

from __future__ import annotations

import json
import os
import shutil
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from kgym.train.config import EngineConfig, RolloutConfig

TOKEN_ID_PREFIX = "token_id:"


class EngineError(RuntimeError):
    """The inference server refused, failed or answered something the trainer cannot use."""


def parse_choice(choice: Any) -> tuple[list[int], list[float]]:
    """The sampled token ids and their log-probabilities from one completion choice."""
    logprobs = choice.get("logprobs") if isinstance(choice, dict) else None
    if not isinstance(logprobs, dict):
        raise EngineError("the server returned no logprobs (the request asks for them)")
    tokens, values = logprobs.get("tokens"), logprobs.get("token_logprobs")
    if not isinstance(tokens, list) or not isinstance(values, list) or len(tokens) != len(values):
        raise EngineError("the server's logprobs lack tokens or token_logprobs of equal length")
    ids = []
    for token in tokens:
        if not (isinstance(token, str) and token.startswith(TOKEN_ID_PREFIX)):
            raise EngineError(
                f"the server returned the token {token!r} as text, not as an id: it needs "
                "`return_tokens_as_token_ids` (vLLM's OpenAI server)"
            )
        ids.append(int(token[len(TOKEN_ID_PREFIX) :]))
    floats = []
    for value in values:
        if not isinstance(value, (int, float)) or value != value or value > 0:
            raise EngineError(f"the server returned the log-probability {value!r}")
        floats.append(float(value))
    return ids, floats


class OpenAIEngine:
    def __init__(self, cfg: EngineConfig, out: Path) -> None:
        if not cfg.url:
            raise ValueError("[engine] url is needed with kind = openai")
        self.cfg = cfg
        self.base = cfg.url.rstrip("/")
        self.model = cfg.model
        self.sync_dir = Path(cfg.sync_dir) if cfg.sync_dir else out / "engine_weights"
        self.adapter: str | None = None
        self.synced_step = 0
        key = os.environ.get(cfg.api_key_env, "") if cfg.api_key_env else ""
        self.headers = {"Content-Type": "application/json"}
        if key:
            self.headers["Authorization"] = f"Bearer {key}"

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        request = urllib.request.Request(
            self.base + path, json.dumps(body).encode(), self.headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=self.cfg.timeout_s) as reply:
                return json.loads(reply.read() or b"null")
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:500].decode(errors="replace")
            raise EngineError(f"{path}: HTTP {exc.code}: {detail}") from exc
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise EngineError(f"{path}: the server at {self.base} did not answer: {exc}") from exc
        except json.JSONDecodeError as exc:
            raise EngineError(f"{path}: the server's answer is not JSON") from exc

    def _complete_one(self, prompt: list[int], cfg: RolloutConfig) -> tuple[list[int], list[float]]:
        body = {
            "model": self.adapter or self.model,
            "prompt": prompt,
            "max_tokens": cfg.max_new_tokens,
            "temperature": cfg.temperature,
            "top_p": cfg.top_p,
            "n": 1,
            "logprobs": 1,
            "return_tokens_as_token_ids": True,
        }
        reply = self._post("/v1/completions", body)
        choices = reply.get("choices") if isinstance(reply, dict) else None
        if not isinstance(choices, list) or len(choices) != 1:
            raise EngineError("/v1/completions: expected one choice")
        ids, logprobs = parse_choice(choices[0])
        if len(ids) > cfg.max_new_tokens:
            raise EngineError(
                f"the server returned {len(ids)} tokens, max_tokens was {cfg.max_new_tokens}"
            )
        return ids, logprobs

    def complete(
        self, prompts: list[list[int]], cfg: RolloutConfig
    ) -> list[tuple[list[int], list[float]]]:
        """One completion per prompt (token ids in, token ids and log-probabilities out),
        ``concurrency`` requests at a time; the server batches them."""
        with ThreadPoolExecutor(max_workers=max(1, self.cfg.concurrency)) as pool:
            return list(pool.map(lambda p: self._complete_one(p, cfg), prompts))

    def sync(self, policy: Any, step: int) -> float:
        """Sends the policy's current weights to the server; the seconds it took."""
        if self.cfg.sync == "none":
            return 0.0
        started = time.perf_counter()
        target = self.sync_dir / f"step-{step}"
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        policy.model.save_pretrained(target)  # a peft model writes its adapter
        if self.cfg.sync == "disk":
            reply = self._post("/update_weights_from_disk", {"model_path": str(target)})
            if isinstance(reply, dict) and reply.get("success") is False:
                raise EngineError(f"/update_weights_from_disk: {reply.get('message', reply)}")
        else:
            name = f"kgym-step-{step}"
            self._post("/v1/load_lora_adapter", {"lora_name": name, "lora_path": str(target)})
            previous, self.adapter = self.adapter, name
            if previous is not None:
                self._post("/v1/unload_lora_adapter", {"lora_name": previous})
        # The previous step's weights are the server's no more.
        old = self.sync_dir / f"step-{self.synced_step}"
        if self.synced_step and self.synced_step != step and old.exists():
            shutil.rmtree(old)
        self.synced_step = step
        return time.perf_counter() - started


def open_engine(cfg: EngineConfig, out: Path) -> OpenAIEngine | None:
    return OpenAIEngine(cfg, out) if cfg.kind == "openai" else None
