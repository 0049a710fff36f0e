"""Hostile clients against the real service: deep JSON, oversized request lines and headers,
slow and idle connections, HEAD, and a connection flood. After each, a normal client is served."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from service_util import Gym, call


@pytest.fixture()
def gym(tmp_path: Path) -> Iterator[Gym]:
    args = ["--cpu-workers", "1", "--max-connections", "24"]
    args += ["--idle-timeout", "5", "--header-timeout", "2", "--body-timeout", "2"]
    g = Gym(tmp_path, args).start()
    yield g
    g.stop()


def connect(g: Gym) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", g.port), timeout=20)
    return s


def raw_exchange(g: Gym, data: bytes, timeout: float = 20.0) -> bytes:
    with connect(g) as s:
        s.settimeout(timeout)
        s.sendall(data)
        chunks = []
        while True:
            try:
                chunk = s.recv(65536)
            except (ConnectionResetError, TimeoutError):
                break
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks)


def served(g: Gym) -> bool:
    return call(g.url + "/healthz", timeout=10)[0] == 200


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0


def post(path: str, body: bytes) -> bytes:
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    return head.encode() + f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def test_deep_json_is_refused_fast(gym: Gym) -> None:
    # 100,000 levels used to overflow the service's stack (a segfault).
    deep = b'{"task": {"id": "01_relu"}, "candidate": {"source": "x"}, "reward": '
    deep += b"[" * 100_000 + b"]" * 100_000 + b"}"
    start = time.monotonic()
    status, err, _ = call(gym.url + "/v1/evaluate", "POST", raw=deep)
    assert status == 400 and "nests deeper than 64" in err["error"]["message"]
    assert time.monotonic() - start < 5
    # A composite reward spec nested 10,000 levels (written as text: too deep for json.dumps).
    open_, close = '{"kind": "composite", "terms": [{"weight": 1.0, "reward": ', "}]}"
    spec = open_ * 10_000 + '{"kind": "correctness"}' + close * 10_000
    body = '{"task": {"id": "01_relu"}, "candidate": {"source": "x"}, "reward": ' + spec + "}"
    status, err, _ = call(gym.url + "/v1/evaluate", "POST", raw=body.encode())
    assert status == 400
    assert served(gym)


def test_long_request_line_is_414_and_long_headers_431(gym: Gym) -> None:
    answer = raw_exchange(gym, b"GET /v1/jobs/" + b"a" * 20_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status_of(answer) == 414
    answer = raw_exchange(gym, b"GET /healthz HTTP/1.1\r\nX-Big: " + b"b" * 40_000 + b"\r\n\r\n")
    assert status_of(answer) == 431
    assert served(gym)


def test_head_answers_headers_without_a_body(gym: Gym) -> None:
    answer = raw_exchange(gym, b"HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert status_of(answer) == 200 and body == b""
    assert b"Content-Length: " in head and b"Content-Length: 0" not in head


def test_slow_headers_and_a_short_body_time_out(gym: Gym) -> None:
    start = time.monotonic()
    with connect(gym) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\n")  # and never the end of the headers
        for _ in range(6):
            time.sleep(0.5)
            try:
                s.sendall(b"X-Slow: 1\r\n")
            except OSError:
                break
        s.settimeout(10)
        answer = s.recv(4096)
    assert status_of(answer) == 408 and time.monotonic() - start < 8
    # Content-Length longer than the body sent: the body deadline ends it.
    short = post("/v1/evaluate", b'{"task": 1}').replace(b"Length: 11", b"Length: 99")
    answer = raw_exchange(gym, short, timeout=10)
    assert status_of(answer) == 408
    assert served(gym)


def test_idle_connections_do_not_lock_clients_out(gym: Gym) -> None:
    # More idle connections than the cap: once half are taken, idle ones are closed after 1 s,
    # and a new client is answered (503 at worst while the flood lasts, never a hang).
    idle = [connect(gym) for _ in range(40)]
    try:
        time.sleep(2.5)
        assert served(gym)
    finally:
        for s in idle:
            s.close()


def test_pipelined_requests_on_one_connection(gym: Gym) -> None:
    one = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    last = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    answer = raw_exchange(gym, one + one + last)
    assert answer.count(b"HTTP/1.1 200") == 3
