"""HTTPS on the service's front door (--tls-cert/--tls-key), with Python's own TLS client
checking the certificate: a round trip, a plain HTTP client refused, a client that stops in
the handshake timed out, and bad certificate files refused at start."""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from service_util import Gym, gym_exe

SETTLED = {"task": {"id": "01_relu"}, "candidate": {"source": "class ModelNew(:\n"}}


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("tls")
    cert, key = d / "cert.pem", d / "key.pem"
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
        + ["-nodes", "-days", "2", "-subj", "/CN=localhost", "-keyout", str(key)]
        + ["-out", str(cert), "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        pytest.skip(f"openssl cannot make a certificate: {made.stderr}")
    return cert, key


@pytest.fixture(scope="module")
def gym(tmp_path_factory: pytest.TempPathFactory, certificate: tuple[Path, Path]) -> Iterator[Gym]:
    """One HTTPS service for the module's tests (each start is seconds of CI)."""
    cert, key = certificate
    args = ["--cpu-workers", "1", "--tls-cert", str(cert), "--tls-key", str(key)]
    args += ["--header-timeout", "2"]
    g = Gym(tmp_path_factory.mktemp("gym"), args).start()
    yield g
    g.stop()


def https(gym: Gym, cert: Path) -> http.client.HTTPSConnection:
    context = ssl.create_default_context(cafile=str(cert))  # verifies the chain and the name
    return http.client.HTTPSConnection("127.0.0.1", gym.port, context=context, timeout=30)


def test_https_round_trip(gym: Gym, certificate: tuple[Path, Path]) -> None:
    connection = https(gym, certificate[0])
    connection.request("GET", "/healthz")
    answer = connection.getresponse()
    assert answer.status == 200 and json.loads(answer.read())["status"] == "ok"
    # A second request on the same connection (keep-alive over TLS), with a body.
    connection.request(
        "POST",
        "/v1/evaluate",
        body=json.dumps(SETTLED),
        headers={"Content-Type": "application/json"},
    )
    answer = connection.getresponse()
    job = json.loads(answer.read())
    assert answer.status == 200 and job["result"]["status"] == "compile_error", job
    connection.request("GET", f"/v1/jobs/{job['id']}")
    answer = connection.getresponse()
    assert answer.status == 200 and json.loads(answer.read())["id"] == job["id"]
    connection.close()


def test_plain_http_and_a_stalled_handshake_are_refused(
    gym: Gym, certificate: tuple[Path, Path]
) -> None:
    with socket.create_connection(("127.0.0.1", gym.port), timeout=10) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert not s.recv(4096).startswith(b"HTTP/1.1 200")
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", gym.port), timeout=10) as s:
        s.sendall(b"\x16\x03\x01")  # the start of a ClientHello, and nothing more
        assert s.recv(4096) == b""  # closed at the header deadline (2 s)
    assert time.monotonic() - start < 8
    # Still serving.
    connection = https(gym, certificate[0])
    connection.request("GET", "/healthz")
    assert connection.getresponse().status == 200


def test_bad_certificate_files_are_refused_at_start(tmp_path: Path) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    out = subprocess.run(
        [gym_exe(), "serve", "--port", "0", "--state-dir", str(tmp_path), "--gpus", "none"]
        + ["--tls-cert", str(junk), "--tls-key", str(junk)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "--tls-cert" in out.stderr, out.stderr


def test_the_kgym_client_over_https(
    gym: Gym, certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from kgym.client import Client

    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))  # httpx trusts the environment's CA
    with Client(f"https://127.0.0.1:{gym.port}") as client:
        assert client.health()["status"] == "ok"
        assert any(t["id"] == "01_relu" for t in client.tasks())
