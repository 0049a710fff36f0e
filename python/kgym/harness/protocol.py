"""Messages between the judge and a runner, over a Unix stream socket.

A frame is a 12-byte header (JSON length, payload length, descriptor count) followed by the
JSON and the payload; descriptors travel with the header (SCM_RIGHTS). The judge may attach a
pickled payload (it is trusted: the runner unpickles it). A runner's frames are read by the
judge as JSON only: a payload or descriptors from a runner, a frame over ``MAX_REPLY_BYTES``,
or anything but a JSON object is a protocol violation, never data.
"""

from __future__ import annotations

import json
import math
import pickle
import socket
import struct
from typing import Any

from kgym.harness.real_type import is_a

HEADER = struct.Struct("<IIi")
MAX_REPLY_BYTES = 1 << 20
MAX_FDS = 4


class ProtocolError(Exception):
    """The peer broke the protocol."""


class PeerClosed(ProtocolError):
    """The peer closed its end (it exited, or is exiting)."""


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < n:
        chunk = sock.recv(n - len(chunks))
        if not chunk:
            raise PeerClosed("the peer closed the connection")
        chunks += chunk
    return bytes(chunks)


def _clean(value: Any) -> Any:
    if is_a(value, float):
        return value if math.isfinite(value) else repr(value)
    if is_a(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if is_a(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def send(
    sock: socket.socket, message: dict[str, Any], payload: Any = None, fds: list[int] | None = None
) -> None:
    body = json.dumps(_clean(message), default=str).encode()
    blob = b"" if payload is None else pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    fds = fds or []
    header = HEADER.pack(len(body), len(blob), len(fds))
    if fds:
        socket.send_fds(sock, [header], fds)
    else:
        sock.sendall(header)
    sock.sendall(body + blob)


def recv_trusted(sock: socket.socket) -> tuple[dict[str, Any], Any, list[int]]:
    """In a runner: a message from the judge, its unpickled payload and its descriptors."""
    data, fds, _, _ = socket.recv_fds(sock, HEADER.size, MAX_FDS)
    if not data:
        raise PeerClosed("the judge closed the connection")
    data += _recv_exact(sock, HEADER.size - len(data)) if len(data) < HEADER.size else b""
    body_len, blob_len, _ = HEADER.unpack(data)
    body = _recv_exact(sock, body_len)
    blob = _recv_exact(sock, blob_len) if blob_len else b""
    return json.loads(body), (pickle.loads(blob) if blob else None), list(fds)


def recv_untrusted(sock: socket.socket) -> dict[str, Any]:
    """In the judge: a runner's reply, which is JSON and nothing else."""
    data, fds, _, _ = socket.recv_fds(sock, HEADER.size, MAX_FDS)
    for fd in fds:  # never accepted from a runner
        import os

        os.close(fd)
    if not data:
        raise PeerClosed("the runner closed the connection")
    if len(data) < HEADER.size:
        data += _recv_exact(sock, HEADER.size - len(data))
    body_len, blob_len, nfds = HEADER.unpack(data)
    if fds or nfds or blob_len:
        raise ProtocolError("the runner sent descriptors or a payload")
    if body_len > MAX_REPLY_BYTES:
        raise ProtocolError(f"the runner sent a {body_len}-byte reply")
    try:
        message = json.loads(_recv_exact(sock, body_len))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolError(f"the runner sent something that is not JSON: {exc}") from exc
    if not is_a(message, dict):
        raise ProtocolError("the runner's reply is not a JSON object")
    return message
