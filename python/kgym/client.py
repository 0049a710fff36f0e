"""Clients for the gym service (``kgym-gym serve``, docs/service-api.md): sync and asyncio.

    with Client("http://127.0.0.1:8080") as gym:
        job = gym.evaluate("01_relu", source, options={"trials": 3}, wait=600)
        job = gym.result(job["id"])          # returns at once when the job had finished
        print(job["result"]["status"], job.get("reward"))

Every failure is a :class:`GymError`: an error answer of the service keeps its HTTP status and
code; a service that cannot be reached is code ``unreachable`` (status 0), a request that got no
answer in time is code ``timeout`` (status 0). A 429 (queue full) is retried after its
``Retry-After``, up to ``max_retries`` times.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import os
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any
from urllib.parse import quote

import httpx

__all__ = ["AsyncClient", "Client", "GymError", "TERMINAL", "MAX_WAIT_S", "make_request"]

TERMINAL = frozenset({"done", "cancelled", "failed"})
MAX_WAIT_S = 600.0  # the service holds an answer at most this long (?wait=)
_SLACK_S = 30.0  # read timeout beyond a long poll's wait
_MAX_RETRY_AFTER_S = 600.0
_DEFAULT_RETRY_AFTER_S = 1.0


class GymError(Exception):
    """A failed request: the service's error answer, or ``unreachable`` / ``timeout``."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(status, code, message)
        self.status = status
        self.code = code
        self.message = message

    def __str__(self) -> str:
        where = f"HTTP {self.status}, " if self.status else ""
        return f"{self.message} ({where}{self.code})"


def make_request(
    task: str | Mapping[str, Any],
    candidate: str,
    options: Mapping[str, Any] | None = None,
    reward: str | Mapping[str, Any] | None = None,
    completion: bool = False,
) -> dict[str, Any]:
    """One evaluation request in the API's shape.

    ``task`` is a task id or ``{"source": ..., "id": ...}``; ``candidate`` is Python source, or a
    raw model output when ``completion`` is true (the service extracts the code)."""
    if isinstance(task, str):
        task_obj: dict[str, Any] = {"id": task}
    elif isinstance(task, Mapping):
        task_obj = dict(task)
    else:
        raise TypeError(f"task must be a task id or a mapping, not {type(task).__name__}")
    if not isinstance(candidate, str):
        raise TypeError(f"candidate must be text, not {type(candidate).__name__}")
    request: dict[str, Any] = {
        "task": task_obj,
        "candidate": {"completion" if completion else "source": candidate},
    }
    if options is not None:
        if not isinstance(options, Mapping):
            raise TypeError(f"options must be a mapping, not {type(options).__name__}")
        request["options"] = dict(options)
    if reward is not None:
        if not isinstance(reward, (str, Mapping)):
            raise TypeError(f"reward must be a spec name or mapping, not {type(reward).__name__}")
        request["reward"] = reward if isinstance(reward, str) else dict(reward)
    return request


def _wait_param(wait: float | None) -> dict[str, str]:
    if wait is None:
        return {}
    if not isinstance(wait, (int, float)) or isinstance(wait, bool):
        raise TypeError(f"wait must be a number of seconds, not {type(wait).__name__}")
    w = min(max(float(wait), 0.0), MAX_WAIT_S)
    return {"wait": str(int(w)) if w.is_integer() else f"{w:.3f}".rstrip("0")}


def _read_timeout(base: float, params: Mapping[str, str]) -> float:
    wait = float(params.get("wait", 0))
    return max(base, wait + _SLACK_S) if wait else base


def _retry_after(response: httpx.Response) -> float:
    value = response.headers.get("Retry-After", "").strip()
    if not value:
        return _DEFAULT_RETRY_AFTER_S
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError):
            return _DEFAULT_RETRY_AFTER_S
    if not math.isfinite(seconds):
        return _DEFAULT_RETRY_AFTER_S
    return min(max(seconds, 0.0), _MAX_RETRY_AFTER_S)


def _error_from(response: httpx.Response) -> GymError:
    try:
        body = response.json()
        err = body["error"]
        return GymError(response.status_code, str(err["code"]), str(err["message"]))
    except (ValueError, KeyError, TypeError):
        text = response.text.strip()[:500] or response.reason_phrase
        return GymError(response.status_code, "http_error", f"{response.url}: {text}")


def _transport_error(exc: httpx.TransportError, url: str) -> GymError:
    if isinstance(exc, httpx.TimeoutException) and not isinstance(exc, httpx.ConnectTimeout):
        return GymError(0, "timeout", f"no answer from the gym service at {url} in time ({exc})")
    detail = str(exc) or type(exc).__name__
    return GymError(0, "unreachable", f"cannot reach the gym service at {url} ({detail})")


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError as exc:
        raise GymError(
            response.status_code, "bad_response", f"{response.url}: the answer is not JSON"
        ) from exc


def _field(body: Any, key: str, url: httpx.URL) -> Any:
    if not isinstance(body, dict) or key not in body:
        raise GymError(200, "bad_response", f"{url}: the answer has no {key!r}")
    return body[key]


def _job_path(job_id: str) -> str:
    if not isinstance(job_id, str) or not job_id:
        raise TypeError("job_id must be a non-empty string")
    return "/v1/jobs/" + quote(job_id, safe="")


class _Base:
    def __init__(self, url: str, token: str | None, timeout: float, max_retries: int) -> None:
        if not isinstance(url, str) or not url:
            raise TypeError("url must be a non-empty string")
        self.url = url.rstrip("/")
        self.token = token if token is not None else os.environ.get("KGYM_TOKEN") or None
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": "kgym-client"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def _timeout(self, params: Mapping[str, str]) -> httpx.Timeout:
        return httpx.Timeout(self.timeout, read=_read_timeout(self.timeout, params))

    def _poll_wait(self, deadline: float | None) -> float:
        if deadline is None:
            return MAX_WAIT_S
        # Whole seconds, at least one: a long poll never asks for less than a second.
        return float(min(MAX_WAIT_S, max(1, math.ceil(deadline - time.monotonic()))))

    @staticmethod
    def _poll_timeout_error(job: Mapping[str, Any], poll_timeout: float | None) -> GymError:
        return GymError(
            0,
            "timeout",
            f"job {job.get('id')} is still {job.get('status')} after {poll_timeout} s",
        )


class Client(_Base):
    """A synchronous client of the gym service."""

    def __init__(
        self,
        url: str,
        token: str | None = None,
        timeout: float = 630.0,
        *,
        max_retries: int = 5,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(url, token, timeout, max_retries)
        self._http = httpx.Client(base_url=self.url, headers=self._headers(), transport=transport)

    # plumbing -------------------------------------------------------------------------------
    def _request(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None = None,
        body: Any = None,
    ) -> httpx.Response:
        params = dict(params or {})
        content = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if content is not None else None
        attempt = 0
        while True:
            try:
                response = self._http.request(
                    method,
                    path,
                    params=params,
                    content=content,
                    headers=headers,
                    timeout=self._timeout(params),
                )
            except httpx.TransportError as exc:
                raise _transport_error(exc, self.url) from exc
            if response.status_code == 429 and attempt < self.max_retries:
                attempt += 1
                time.sleep(_retry_after(response))
                continue
            if response.status_code >= 400:
                raise _error_from(response)
            return response

    # API ------------------------------------------------------------------------------------
    def evaluate(
        self,
        task: str | Mapping[str, Any],
        candidate: str,
        *,
        options: Mapping[str, Any] | None = None,
        reward: str | Mapping[str, Any] | None = None,
        completion: bool = False,
        wait: float | None = None,
    ) -> dict[str, Any]:
        """Queues one evaluation; with ``wait``, holds up to that many seconds for it to end."""
        body = make_request(task, candidate, options, reward, completion)
        return _json(self._request("POST", "/v1/evaluate", _wait_param(wait), body))

    def evaluate_batch(
        self, requests: list[dict[str, Any]], wait: float | None = None
    ) -> list[dict[str, Any]]:
        """Queues requests (see :func:`make_request`) all or none; the jobs in request order."""
        r = self._request("POST", "/v1/evaluate:batch", _wait_param(wait), {"requests": requests})
        return list(_field(_json(r), "jobs", r.url))

    def job(self, job_id: str, wait: float | None = None) -> dict[str, Any]:
        return _json(self._request("GET", _job_path(job_id), _wait_param(wait)))

    def result(self, job_id: str, poll_timeout: float | None = None) -> dict[str, Any]:
        """The job once it is done, cancelled or failed (long polls, 600 s at most each).

        With ``poll_timeout``, a job still unfinished after that many seconds is a GymError
        with code ``timeout``."""
        deadline = None if poll_timeout is None else time.monotonic() + poll_timeout
        backoff = 0.05
        while True:
            wait = self._poll_wait(deadline)
            started = time.monotonic()
            job = self.job(job_id, wait=wait)
            if job.get("status") in TERMINAL:
                return job
            if deadline is not None and time.monotonic() >= deadline:
                raise self._poll_timeout_error(job, poll_timeout)
            if time.monotonic() - started < wait / 2:  # answered early: do not spin
                time.sleep(backoff)
                backoff = min(backoff * 2, 1.0)

    def check(
        self,
        task: str | Mapping[str, Any],
        candidate: str,
        *,
        options: Mapping[str, Any] | None = None,
        completion: bool = False,
    ) -> dict[str, Any]:
        """One evaluation, waited for: its Result. A job that failed or was cancelled is a
        GymError (code ``job_failed`` / ``job_cancelled``) with the service's reason."""
        job = self.evaluate(task, candidate, options=options, completion=completion, wait=600)
        if job.get("status") not in TERMINAL:
            job = self.result(job["id"])
        if job.get("status") != "done" or not isinstance(job.get("result"), dict):
            error = job.get("error") or {}
            status = str(job.get("status"))
            raise GymError(0, f"job_{status}", f"job {job.get('id')} {status}: {error}")
        return dict(job["result"])

    def cancel(self, job_id: str) -> dict[str, Any]:
        return _json(self._request("DELETE", _job_path(job_id)))

    def tasks(self) -> list[dict[str, Any]]:
        r = self._request("GET", "/v1/tasks")
        return list(_field(_json(r), "tasks", r.url))

    def health(self) -> dict[str, Any]:
        return _json(self._request("GET", "/healthz"))

    def metrics(self) -> str:
        return self._request("GET", "/metrics").text

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AsyncClient(_Base):
    """An asyncio client of the gym service; the same methods as :class:`Client`, awaited."""

    def __init__(
        self,
        url: str,
        token: str | None = None,
        timeout: float = 630.0,
        *,
        max_retries: int = 5,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(url, token, timeout, max_retries)
        self._http = httpx.AsyncClient(
            base_url=self.url, headers=self._headers(), transport=transport
        )

    async def _request(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None = None,
        body: Any = None,
    ) -> httpx.Response:
        params = dict(params or {})
        content = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if content is not None else None
        attempt = 0
        while True:
            try:
                response = await self._http.request(
                    method,
                    path,
                    params=params,
                    content=content,
                    headers=headers,
                    timeout=self._timeout(params),
                )
            except httpx.TransportError as exc:
                raise _transport_error(exc, self.url) from exc
            if response.status_code == 429 and attempt < self.max_retries:
                attempt += 1
                await asyncio.sleep(_retry_after(response))
                continue
            if response.status_code >= 400:
                raise _error_from(response)
            return response

    async def evaluate(
        self,
        task: str | Mapping[str, Any],
        candidate: str,
        *,
        options: Mapping[str, Any] | None = None,
        reward: str | Mapping[str, Any] | None = None,
        completion: bool = False,
        wait: float | None = None,
    ) -> dict[str, Any]:
        body = make_request(task, candidate, options, reward, completion)
        return _json(await self._request("POST", "/v1/evaluate", _wait_param(wait), body))

    async def evaluate_batch(
        self, requests: list[dict[str, Any]], wait: float | None = None
    ) -> list[dict[str, Any]]:
        r = await self._request(
            "POST", "/v1/evaluate:batch", _wait_param(wait), {"requests": requests}
        )
        return list(_field(_json(r), "jobs", r.url))

    async def job(self, job_id: str, wait: float | None = None) -> dict[str, Any]:
        return _json(await self._request("GET", _job_path(job_id), _wait_param(wait)))

    async def result(self, job_id: str, poll_timeout: float | None = None) -> dict[str, Any]:
        deadline = None if poll_timeout is None else time.monotonic() + poll_timeout
        backoff = 0.05
        while True:
            wait = self._poll_wait(deadline)
            started = time.monotonic()
            job = await self.job(job_id, wait=wait)
            if job.get("status") in TERMINAL:
                return job
            if deadline is not None and time.monotonic() >= deadline:
                raise self._poll_timeout_error(job, poll_timeout)
            if time.monotonic() - started < wait / 2:
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 1.0)

    async def cancel(self, job_id: str) -> dict[str, Any]:
        return _json(await self._request("DELETE", _job_path(job_id)))

    async def tasks(self) -> list[dict[str, Any]]:
        r = await self._request("GET", "/v1/tasks")
        return list(_field(_json(r), "tasks", r.url))

    async def health(self) -> dict[str, Any]:
        return _json(await self._request("GET", "/healthz"))

    async def metrics(self) -> str:
        return (await self._request("GET", "/metrics")).text

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
