"""A stand-in for an OpenAI-compatible inference server (vLLM, SGLang cannot run on this CPU
machine): the endpoints and answer shapes kgym/train/engine.py uses, served by a Hugging Face
model in a thread, so that the trainer's client and its weight synchronisation are tested over
real HTTP. It samples with ``generate`` and reports each sampled token's log-probability from
the processed logits it drew from, as vLLM does."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import torch


class InferenceDouble:
    def __init__(self, base_model: str | None = None) -> None:
        self.lock = threading.Lock()
        self.model: Any = None
        self.base_model = base_model
        self.adapters: dict[str, Any] = {}
        self.weight_loads: list[str] = []  # every model_path or adapter path loaded, in order
        self.requests = 0
        self.models_requested: list[str] = []
        if base_model:
            self.model = self._load(base_model)
        double = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length", 0))
                try:
                    body = json.loads(self.rfile.read(length))
                    status, answer = double.route(self.path, body)
                except Exception as exc:  # noqa: BLE001 - reported to the client
                    status, answer = 500, {"error": f"{type(exc).__name__}: {exc}"}
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    @staticmethod
    def _load(path: str) -> Any:
        import transformers

        return transformers.AutoModelForCausalLM.from_pretrained(path).eval()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def route(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        with self.lock:
            if path == "/update_weights_from_disk":
                self.model = self._load(body["model_path"])
                self.weight_loads.append(body["model_path"])
                return 200, {"success": True, "message": "loaded"}
            if path == "/v1/load_lora_adapter":
                from peft import PeftModel

                base = self._load(str(self.base_model))
                adapter_model = PeftModel.from_pretrained(base, body["lora_path"]).eval()
                self.adapters[body["lora_name"]] = adapter_model
                self.weight_loads.append(body["lora_path"])
                return 200, {"success": True}
            if path == "/v1/unload_lora_adapter":
                self.adapters.pop(body["lora_name"], None)
                return 200, {"success": True}
            if path == "/v1/completions":
                return self._complete(body)
        return 404, {"error": f"no route {path}"}

    @torch.no_grad()
    def _complete(self, body: dict[str, Any]) -> tuple[int, Any]:
        name = body.get("model", "")
        self.models_requested.append(name)
        model = self.adapters.get(name, self.model)
        if model is None:
            return 503, {"error": "no weights loaded yet"}
        if not body.get("return_tokens_as_token_ids"):
            return 400, {"error": "this double answers with token ids only"}
        self.requests += 1
        prompt = torch.tensor([body["prompt"]])
        eos = model.config.eos_token_id
        out = model.generate(
            input_ids=prompt,
            attention_mask=torch.ones_like(prompt),
            do_sample=True,
            temperature=float(body.get("temperature", 1.0)),
            top_p=float(body.get("top_p", 1.0)),
            top_k=0,
            max_new_tokens=int(body["max_tokens"]),
            pad_token_id=eos,
            eos_token_id=eos,
            output_scores=True,
            return_dict_in_generate=True,
        )
        ids = out.sequences[0, prompt.shape[1] :].tolist()
        scores = torch.stack(out.scores, dim=1)[0].float()
        logp = torch.log_softmax(scores, dim=-1)
        if eos in ids:  # up to and with the first EOS, as the server stops there
            ids = ids[: ids.index(eos) + 1]
        values = [float(logp[i, t]) for i, t in enumerate(ids)]
        choice = {
            "index": 0,
            "text": "",
            "finish_reason": "stop" if ids and ids[-1] == eos else "length",
            "logprobs": {
                "tokens": [f"token_id:{t}" for t in ids],
                "token_logprobs": values,
            },
        }
        return 200, {"object": "text_completion", "choices": [choice]}


def save_tiny_model(folder: Path, corpus: list[str]) -> Path:
    """A tiny GPT-2 and its byte-level tokenizer in a folder, as a served model would be."""
    from kgym.train.config import ModelConfig
    from kgym.train.policy import load_policy

    policy = load_policy(ModelConfig(tokenizer_corpus=corpus, device="cpu"))
    policy.model.save_pretrained(folder)
    policy.tokenizer.save_pretrained(folder)
    return folder
