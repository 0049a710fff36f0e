"""Where completions come from: an OpenAI-compatible chat endpoint (vLLM, SGLang, hosted APIs),
a local Hugging Face model, or a generations file written elsewhere."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import httpx

from kgym.evaluation.prompts import context_tokens, prompt_budget, render


class ModelError(RuntimeError):
    """The model side failed (the endpoint, the file, the local model)."""


@dataclass(frozen=True)
class CompletionRequest:
    task: str  # the task's key in the run
    sample: int
    turn: int
    messages: list[dict[str, str]]


class Model(Protocol):
    name: str

    def complete(self, request: CompletionRequest) -> str: ...


# -- an OpenAI-compatible endpoint -------------------------------------------------------------
@dataclass
class OpenAIChat:
    """POST {base_url}/chat/completions. Retries rate limits and server errors (with backoff);
    a sample's seed is sent so that servers that honour it give reproducible samples."""

    base_url: str
    model: str
    api_key: str | None = None
    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 8192
    timeout_s: float = 600.0
    max_retries: int = 5
    seed: int = 0

    @property
    def name(self) -> str:
        return f"openai:{self.model}@{self.base_url}"

    def __post_init__(self) -> None:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        self._http = httpx.Client(
            base_url=self.base_url.rstrip("/"), headers=headers, timeout=self.timeout_s
        )

    def complete(self, request: CompletionRequest) -> str:
        body = {
            "model": self.model,
            "messages": request.messages,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "seed": self.seed * 1_000_003 + request.sample * 1009 + request.turn,
        }
        delay = 1.0
        for attempt in range(self.max_retries + 1):
            try:
                response = self._http.post("/chat/completions", json=body)
            except httpx.TransportError as exc:
                if attempt == self.max_retries:
                    raise ModelError(f"{self.base_url}: {exc}") from exc
            else:
                if response.status_code == 200:
                    return _message_text(response)
                if response.status_code not in (408, 409, 429) and response.status_code < 500:
                    raise ModelError(
                        f"{self.base_url}: HTTP {response.status_code}: {response.text[:300]}"
                    )
                if attempt == self.max_retries:
                    raise ModelError(f"{self.base_url}: HTTP {response.status_code} (gave up)")
            time.sleep(delay)
            delay = min(delay * 2, 30.0)
        raise ModelError("unreachable")


def _message_text(response: httpx.Response) -> str:
    try:
        body = response.json()
        content = body["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise ModelError(f"not a chat completion: {response.text[:300]}") from exc
    if not isinstance(content, str):
        raise ModelError("the chat completion has no text content")
    return content


# -- a generations file ------------------------------------------------------------------------
class GenerationsFile:
    """Completions generated elsewhere: JSONL rows ``{"task", "sample", "turn", "completion"}``
    (sample and turn default to 0 and 1), or a KernelBench generation folder
    (``level_{L}_problem_{P}_sample_{S}_kernel.py``, one turn). A missing row is an error
    for that attempt, not for the run."""

    KERNELBENCH_FILE = re.compile(r"^level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py$")

    def __init__(self, path: Path, problem_ids: dict[tuple[int, int], str] | None = None) -> None:
        self.name = f"file:{path.resolve()}"
        self.rows: dict[tuple[str, int, int], str] = {}
        if path.is_dir():
            self._read_kernelbench_folder(path, problem_ids or {})
        else:
            self._read_jsonl(path)

    def _read_jsonl(self, path: Path) -> None:
        try:
            lines = path.read_text().splitlines()
        except OSError as exc:
            raise ModelError(f"{path}: {exc.strerror}") from exc
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                key = (str(row["task"]), int(row.get("sample", 0)), int(row.get("turn", 1)))
                completion = row["completion"]
            except (ValueError, KeyError, TypeError) as exc:
                raise ModelError(f"{path}:{number}: not a generation row ({exc})") from exc
            if not isinstance(completion, str):
                raise ModelError(f"{path}:{number}: completion is not text")
            if key in self.rows:
                raise ModelError(f"{path}:{number}: a second row for {key}")
            self.rows[key] = completion

    def _read_kernelbench_folder(self, path: Path, problem_ids: dict[tuple[int, int], str]) -> None:
        for file in sorted(path.iterdir()):
            m = self.KERNELBENCH_FILE.match(file.name)
            if not m:
                continue
            level, problem, sample = (int(g) for g in m.groups())
            task = problem_ids.get((level, problem))
            if task is not None:
                self.rows[(task, sample, 1)] = file.read_text()

    def tasks(self) -> set[str]:
        return {task for task, _, _ in self.rows}

    def complete(self, request: CompletionRequest) -> str:
        key = (request.task, request.sample, request.turn)
        if key not in self.rows:
            raise ModelError(f"the generations file has no row for {key}")
        return self.rows[key]


# -- a local Hugging Face model ----------------------------------------------------------------
class HFModel:
    """transformers' generate on a local model (small models; one generation at a time)."""

    def __init__(
        self,
        path: str,
        temperature: float = 1.0,
        max_new_tokens: int = 2048,
        top_p: float = 1.0,
        device: str | None = None,
        seed: int = 0,
    ) -> None:
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:
            raise ModelError(
                "a local Hugging Face model needs transformers (pip install transformers)"
            ) from exc
        self.name = f"hf:{path}"
        self._torch = torch
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        # As in training: a prompt longer than the context left beside the answer loses its
        # beginning (the end holds the latest feedback).
        self.tokenizer.truncation_side = "left"
        self.model = AutoModelForCausalLM.from_pretrained(path).to(self.device).eval()
        self.temperature = temperature
        self.top_p = top_p
        self.max_new_tokens = max_new_tokens
        self.seed = seed
        self._lock = threading.Lock()  # one generate at a time on one model

    def complete(self, request: CompletionRequest) -> str:
        tok = self.tokenizer
        text = render(request.messages, tok)
        budget = prompt_budget(self.model.config, self.max_new_tokens)
        with self._lock:
            self._torch.manual_seed(self.seed * 1_000_003 + request.sample * 1009 + request.turn)
            inputs = tok(
                text, return_tensors="pt", truncation=budget is not None, max_length=budget
            ).to(self.device)
            prompt_tokens = int(inputs["input_ids"].shape[1])
            context = context_tokens(self.model.config)
            room = self.max_new_tokens if context is None else context - prompt_tokens
            if room < 1:
                raise ModelError(
                    f"the model's context of {context} tokens leaves no room for an answer"
                )
            kwargs: dict[str, Any] = {"max_new_tokens": min(self.max_new_tokens, room)}
            if self.temperature > 0:
                kwargs.update(do_sample=True, temperature=self.temperature, top_p=self.top_p)
            else:
                kwargs.update(do_sample=False)
            with self._torch.no_grad():
                out = self.model.generate(**inputs, **kwargs)
        return tok.decode(out[0][inputs["input_ids"].shape[1] :], skip_special_tokens=True)


def api_key_from_env(name: str | None) -> str | None:
    return os.environ.get(name) if name else None
