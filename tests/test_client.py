"""The service clients (kgym.client) and `kgym check --server`, against an in-process fake."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from kgym import cli
from kgym.client import AsyncClient, Client, GymError, make_request

RESULT = {
    "schema": "kgym.result/1",
    "task_id": "01_relu",
    "status": "ok",
    "compiled": True,
    "correct": True,
    "hacked": False,
    "findings": [],
    "correctness": {"trials": 2, "max_abs_error": 0.0},
    "timing": {"available": True, "speedup": 1.5, "speedup_ci": [1.4, 1.6]},
    "profile": {"available": False},
    "error": None,
    "device": {"kind": "cpu", "interpreter": True},
    "durations_ms": {"total": 1234.0},
    "sandbox": {},
    "extraction": {"rule": "whole"},
}

Reply = tuple[int, Any, dict[str, str]]


class Fake:
    """Records every request; answers with ``responder`` (a small model of the API by default)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.jobs: dict[str, dict[str, Any]] = {}
        self.polls_until_done = 0  # GET /v1/jobs/{id} answers "running" this many times first
        self.done_on_submit = True
        self.hold_s = 0.0  # each evaluate answer is held this long (to see concurrency)
        self.in_flight = 0
        self.max_in_flight = 0
        self.responder: Callable[[dict[str, Any]], Reply] = self.model

    def job(self, request: dict[str, Any], status: str) -> dict[str, Any]:
        with self.lock:
            job_id = f"j-{len(self.jobs) + 1}"
            task = request.get("task", {})
            job = {
                "id": job_id,
                "status": status,
                "task_id": task.get("id"),
                "priority": 0,
                "cached": False,
                "attempts": 1,
                "created_at": time.time(),
                "started_at": None,
                "finished_at": None,
                "polls": 0,
            }
            self.jobs[job_id] = job
        return self.finish(job) if status == "done" else dict(job)

    def finish(self, job: dict[str, Any]) -> dict[str, Any]:
        job.update(
            status="done",
            result=RESULT,
            reward=0.73,
            feedback="Status: ok (from the fake service)",
            finished_at=time.time(),
        )
        return {k: v for k, v in job.items() if k != "polls"}

    def model(self, req: dict[str, Any]) -> Reply:
        path, method = req["path"], req["method"]
        status = "done" if self.done_on_submit else "queued"
        if method == "POST" and path == "/v1/evaluate":
            if self.hold_s:
                time.sleep(self.hold_s)
            job = self.job(req["body"], status)
            return (200 if job["status"] == "done" else 202), job, {}
        if method == "POST" and path == "/v1/evaluate:batch":
            jobs = [self.job(r, status) for r in req["body"]["requests"]]
            return 200, {"jobs": jobs}, {}
        if path.startswith("/v1/jobs/"):
            job = self.jobs.get(path.rsplit("/", 1)[-1])
            if job is None:
                return 404, {"error": {"code": "not_found", "message": "no such job"}}, {}
            if method == "DELETE":
                job["status"] = "cancelled"
                return 200, {k: v for k, v in job.items() if k != "polls"}, {}
            job["polls"] += 1
            if job["status"] == "cancelled":
                pass
            elif job["polls"] > self.polls_until_done:
                return 200, self.finish(job), {}
            else:
                job["status"] = "running"
            return 200, {k: v for k, v in job.items() if k != "polls"}, {}
        if path == "/v1/tasks":
            return 200, {"tasks": [{"id": "01_relu", "source_sha256": "ab" * 32}]}, {}
        if path == "/healthz":
            return 200, {"status": "ok", "workers": 2, "queue_depth": 0, "devices": []}, {}
        if path == "/metrics":
            return 200, "kgym_queue_depth 0\n", {"Content-Type": "text/plain"}
        return 404, {"error": {"code": "not_found", "message": f"no route {path}"}}, {}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def serve(self) -> None:
        fake = self.server.fake
        with fake.lock:
            fake.in_flight += 1
            fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
        try:
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            req = {
                "method": self.command,
                "path": url.path,
                "query": parse_qs(url.query),
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": json.loads(raw) if raw else None,
            }
            with fake.lock:
                fake.requests.append(req)
            status, body, headers = fake.responder(req)
        finally:
            with fake.lock:
                fake.in_flight -= 1
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        headers = {"Content-Type": "application/json", **headers}
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_DELETE = serve


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    fake: Fake


@pytest.fixture()
def fake() -> Iterator[Fake]:
    server = Server(("127.0.0.1", 0), Handler)
    server.fake = Fake()
    server.fake.url = f"http://127.0.0.1:{server.server_address[1]}"  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield server.fake
    server.shutdown()
    server.server_close()


def url(fake: Fake) -> str:
    return fake.url  # type: ignore[attr-defined,no-any-return]


# request shapes -----------------------------------------------------------------------------


def test_evaluate_sends_the_documented_request(fake: Fake) -> None:
    with Client(url(fake) + "/", token="s3cret") as gym:
        job = gym.evaluate(
            "01_relu",
            "class ModelNew: ...",
            options={"trials": 2, "baseline": "none"},
            reward="dr_kernel",
            wait=12.5,
        )
    assert job["status"] == "done" and job["result"] == RESULT and job["reward"] == 0.73
    (req,) = fake.requests
    assert req["method"] == "POST" and req["path"] == "/v1/evaluate"
    assert req["query"] == {"wait": ["12.5"]}
    assert req["headers"]["authorization"] == "Bearer s3cret"
    assert req["headers"]["content-type"] == "application/json"
    assert req["body"] == {
        "task": {"id": "01_relu"},
        "candidate": {"source": "class ModelNew: ..."},
        "options": {"trials": 2, "baseline": "none"},
        "reward": "dr_kernel",
    }


def test_task_source_completion_and_no_optional_fields(
    fake: Fake, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KGYM_TOKEN", raising=False)
    with Client(url(fake)) as gym:
        gym.evaluate(
            {"source": "class Model: ...", "id": "mine"}, "```python\nx\n```", completion=True
        )
    (req,) = fake.requests
    assert "authorization" not in req["headers"] and req["query"] == {}
    assert req["body"] == {
        "task": {"source": "class Model: ...", "id": "mine"},
        "candidate": {"completion": "```python\nx\n```"},
    }


def test_token_from_environment(fake: Fake, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KGYM_TOKEN", "from-env")
    with Client(url(fake)) as gym:
        assert gym.health()["status"] == "ok"
    assert fake.requests[0]["headers"]["authorization"] == "Bearer from-env"
    assert fake.requests[0]["path"] == "/healthz"


def test_batch_jobs_cancel_tasks_metrics(fake: Fake) -> None:
    fake.done_on_submit = False
    requests = [make_request("01_relu", f"src {i}", options={"priority": i}) for i in range(3)]
    with Client(url(fake)) as gym:
        jobs = gym.evaluate_batch(requests, wait=0)
        assert [j["status"] for j in jobs] == ["queued"] * 3
        assert gym.cancel(jobs[1]["id"])["status"] == "cancelled"
        assert gym.job(jobs[0]["id"])["status"] == "done"
        assert gym.tasks() == [{"id": "01_relu", "source_sha256": "ab" * 32}]
        assert gym.metrics() == "kgym_queue_depth 0\n"
    batch, cancel, job, tasks, metrics = fake.requests
    assert (batch["method"], batch["path"], batch["query"]) == (
        "POST",
        "/v1/evaluate:batch",
        {"wait": ["0"]},
    )
    assert batch["body"] == {"requests": requests}
    assert batch["body"]["requests"][2]["options"] == {"priority": 2}
    assert (cancel["method"], cancel["path"]) == ("DELETE", "/v1/jobs/j-2")
    assert (job["method"], job["path"], job["query"]) == ("GET", "/v1/jobs/j-1", {})
    assert (tasks["path"], metrics["path"]) == ("/v1/tasks", "/metrics")


def test_make_request_checks_types_only() -> None:
    assert make_request("t", "c", options={"anything": 1}) == {
        "task": {"id": "t"},
        "candidate": {"source": "c"},
        "options": {"anything": 1},  # the server names unknown fields, not the client
    }
    with pytest.raises(TypeError):
        make_request(3, "c")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        make_request("t", b"c")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        make_request("t", "c", options=[("trials", 1)])  # type: ignore[arg-type]


# errors -------------------------------------------------------------------------------------


def test_error_answers_become_gym_errors(fake: Fake) -> None:
    answers = {
        "/v1/evaluate": (400, {"error": {"code": "bad_request", "message": "unknown field 'x'"}}),
        "/v1/tasks": (401, {"error": {"code": "unauthorized", "message": "bad token"}}),
        "/healthz": (502, "<html>bad gateway</html>"),
    }
    fake.responder = lambda req: (*answers[req["path"]], {})
    with Client(url(fake)) as gym:
        with pytest.raises(GymError) as bad:
            gym.evaluate("01_relu", "x", options={"x": 1})
        with pytest.raises(GymError) as unauth:
            gym.tasks()
        with pytest.raises(GymError) as gateway:
            gym.health()
    assert (bad.value.status, bad.value.code, bad.value.message) == (
        400,
        "bad_request",
        "unknown field 'x'",
    )
    assert "unknown field 'x'" in str(bad.value) and "400" in str(bad.value)
    assert (unauth.value.status, unauth.value.code) == (401, "unauthorized")
    assert (gateway.value.status, gateway.value.code) == (502, "http_error")
    assert "bad gateway" in gateway.value.message


def test_unknown_job_is_not_found(fake: Fake) -> None:
    with Client(url(fake)) as gym, pytest.raises(GymError) as err:
        gym.job("j-404")
    assert (err.value.status, err.value.code) == (404, "not_found")


def test_queue_full_is_retried_after_retry_after(fake: Fake) -> None:
    model = fake.model
    calls = []

    def responder(req: dict[str, Any]) -> Reply:
        calls.append(time.monotonic())
        if len(calls) <= 2:
            error = {"error": {"code": "queue_full", "message": "queue is full"}}
            return 429, error, {"Retry-After": "0.3"}
        return model(req)

    fake.responder = responder
    with Client(url(fake)) as gym:
        job = gym.evaluate("01_relu", "x", wait=1)
    assert job["status"] == "done" and len(calls) == 3
    assert calls[1] - calls[0] >= 0.28 and calls[2] - calls[1] >= 0.28
    assert all(r["body"]["candidate"] == {"source": "x"} for r in fake.requests)


def test_queue_full_gives_up_after_max_retries(fake: Fake) -> None:
    error = {"error": {"code": "queue_full", "message": "queue is full"}}
    fake.responder = lambda req: (429, error, {"Retry-After": "0"})
    with Client(url(fake), max_retries=2) as gym, pytest.raises(GymError) as err:
        gym.evaluate("01_relu", "x")
    assert (err.value.status, err.value.code) == (429, "queue_full")
    assert len(fake.requests) == 3


def test_unreachable_service() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    target = f"http://127.0.0.1:{port}"
    with Client(target) as gym, pytest.raises(GymError) as err:
        gym.health()
    assert err.value.code == "unreachable" and err.value.status == 0
    assert target in err.value.message and target in str(err.value)

    async def go() -> None:
        async with AsyncClient(target) as gym:
            await gym.tasks()

    with pytest.raises(GymError) as aerr:
        asyncio.run(go())
    assert aerr.value.code == "unreachable" and target in aerr.value.message


# long polls ---------------------------------------------------------------------------------


def test_result_long_polls_until_done(fake: Fake) -> None:
    fake.done_on_submit = False
    fake.polls_until_done = 3
    with Client(url(fake)) as gym:
        job = gym.evaluate("01_relu", "x")
        assert job["status"] == "queued"
        done = gym.result(job["id"])
    assert done["status"] == "done" and done["result"] == RESULT
    polls = [r for r in fake.requests if r["method"] == "GET"]
    assert len(polls) == 4
    assert all(r["path"] == "/v1/jobs/j-1" and r["query"] == {"wait": ["600"]} for r in polls)


def test_result_caps_waits_at_the_poll_timeout(fake: Fake) -> None:
    fake.done_on_submit = False
    fake.polls_until_done = 10**6
    with Client(url(fake)) as gym:
        job = gym.evaluate("01_relu", "x")
        start = time.monotonic()
        with pytest.raises(GymError) as err:
            gym.result(job["id"], poll_timeout=0.4)
    assert err.value.code == "timeout" and "running" in err.value.message
    assert time.monotonic() - start < 3
    polls = [r for r in fake.requests if r["method"] == "GET"]
    assert polls and all(r["query"] == {"wait": ["1"]} for r in polls)


def test_result_returns_cancelled_and_failed_jobs(fake: Fake) -> None:
    fake.done_on_submit = False
    fake.polls_until_done = 10**6
    with Client(url(fake)) as gym:
        job = gym.evaluate("01_relu", "x")
        gym.cancel(job["id"])
        assert gym.result(job["id"])["status"] == "cancelled"
    failed = {"id": "j-9", "status": "failed", "error": {"code": "internal", "message": "boom"}}
    fake.responder = lambda req: (200, failed, {})
    with Client(url(fake)) as gym:
        assert gym.result("j-9") == failed


# asyncio ------------------------------------------------------------------------------------


def test_async_client_runs_requests_concurrently(fake: Fake) -> None:
    fake.hold_s = 0.3

    async def go() -> list[dict[str, Any]]:
        async with AsyncClient(url(fake), token="t") as gym:
            jobs = await asyncio.gather(
                *(gym.evaluate("01_relu", f"cand {i}", wait=5) for i in range(20))
            )
            assert (await gym.health())["workers"] == 2
            return list(jobs)

    start = time.monotonic()
    jobs = asyncio.run(go())
    elapsed = time.monotonic() - start
    assert len({j["id"] for j in jobs}) == 20 and all(j["status"] == "done" for j in jobs)
    assert fake.max_in_flight >= 10, fake.max_in_flight
    assert elapsed < 20 * 0.3 / 2
    sent = sorted(r["body"]["candidate"]["source"] for r in fake.requests if r["body"])
    assert sent == sorted(f"cand {i}" for i in range(20))
    assert all(r["headers"]["authorization"] == "Bearer t" for r in fake.requests)


def test_async_result_and_batch(fake: Fake) -> None:
    fake.done_on_submit = False
    fake.polls_until_done = 2

    async def go() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        async with AsyncClient(url(fake)) as gym:
            jobs = await gym.evaluate_batch([make_request("01_relu", "a")])
            return jobs, await gym.result(jobs[0]["id"])

    jobs, done = asyncio.run(go())
    assert jobs[0]["status"] == "queued" and done["status"] == "done"
    assert [r["method"] for r in fake.requests] == ["POST", "GET", "GET", "GET"]


# kgym check --server ------------------------------------------------------------------------


def test_check_on_server_prints_the_result(
    fake: Fake, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.done_on_submit = False
    fake.polls_until_done = 1
    cand = tmp_path / "cand.py"
    cand.write_text("class ModelNew: ...\n")
    argv = ["check", "01_relu", str(cand), "--server", url(fake), "--token", "tok"]
    argv += ["--trials", "2", "--device", "cpu", "--timeout", "60", "--no-timing", "--json"]
    assert cli.main(argv) == 0
    assert json.loads(capsys.readouterr().out) == RESULT
    post = fake.requests[0]
    assert (post["path"], post["query"]) == ("/v1/evaluate", {"wait": ["600"]})
    assert post["headers"]["authorization"] == "Bearer tok"
    assert post["body"] == {
        "task": {"id": "01_relu"},
        "candidate": {"source": "class ModelNew: ...\n"},
        # Only what was given: the service applies the options table's defaults.
        "options": {"device": "cpu", "trials": 2, "timeout_s": 60.0, "baseline": "none"},
    }
    assert [r["path"] for r in fake.requests[1:]] == ["/v1/jobs/j-1"] * 2


def test_check_on_server_refuses_local_only_options(fake: Fake, tmp_path: Path) -> None:
    cand = tmp_path / "cand.py"
    cand.write_text("class ModelNew: ...\n")
    argv = ["check", "01_relu", str(cand), "--server", url(fake), "--atol", "0.1"]
    with pytest.raises(SystemExit, match="--atol cannot be sent to a service"):
        cli.main(argv)
    assert fake.requests == []


def test_check_on_server_with_task_file_completion_and_table(
    fake: Fake, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    task = tmp_path / "my_task.py"
    task.write_text("class Model: ...\ndef get_inputs(): ...\ndef get_init_inputs(): ...\n")
    completion = tmp_path / "answer.md"
    completion.write_text("```python\nclass ModelNew: ...\n```\n")
    monkeypatch.setenv("KGYM_SERVER", url(fake))
    argv = ["check", str(task), str(completion), "--baseline", "both", "--no-profile"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "verdict" in out and "1.50x [1.40-1.60]" in out
    assert "Status: ok (from the fake service)" in out
    body = fake.requests[0]["body"]
    assert body["task"] == {"source": task.read_text(), "id": "my_task"}
    assert body["candidate"] == {"completion": completion.read_text()}
    assert body["options"]["baseline"] == "both" and body["options"]["profile"] is False


def test_check_on_server_reports_failures(
    fake: Fake, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cand = tmp_path / "cand.py"
    cand.write_text("x = 1\n")
    failed = {"id": "j-1", "status": "failed", "error": {"code": "internal", "message": "boom"}}
    fake.responder = lambda req: (200, failed, {})
    assert cli.main(["check", "01_relu", str(cand), "--server", url(fake), "--json"]) == 1
    assert "boom" in capsys.readouterr().err
    error = {"error": {"code": "unknown_task", "message": "no task 'nope'"}}
    fake.responder = lambda req: (400, error, {})
    assert cli.main(["check", "nope", str(cand), "--server", url(fake)]) == 2
    err = capsys.readouterr().err
    assert "no task 'nope'" in err and "unknown_task" in err


def test_client_is_reachable_from_the_package() -> None:
    import kgym

    assert kgym.Client is Client and kgym.AsyncClient is AsyncClient


def test_check_waits_for_the_result_and_raises_on_a_failed_job() -> None:
    from kgym.client import Client, GymError

    jobs = {
        "j1": {"id": "j1", "status": "done", "result": {"status": "ok"}},
        "j2": {"id": "j2", "status": "failed", "error": {"code": "internal", "message": "boom"}},
    }
    order = iter(["j1", "j2"])

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            job = jobs[next(order)]
            return httpx.Response(202, json={**job, "status": "queued"})
        job_id = request.url.path.rsplit("/", 1)[-1]
        return httpx.Response(200, json=jobs[job_id])

    with Client("http://gym.test", transport=httpx.MockTransport(handler)) as gym:
        assert gym.check("01_relu", "code") == {"status": "ok"}
        with pytest.raises(GymError, match="boom"):
            gym.check("01_relu", "code")
