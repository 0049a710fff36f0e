"""Clients of one service, each with its own token: who may read and cancel which job, what each
may ask for, and how the queue shares the workers between them (docs/service-api.md, Clients)."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from service_util import Gym, call, wait_for_status

from conftest import solution_source

RELU = solution_source("01_relu")
SYNTAX_ERROR = "class ModelNew(:\n"  # settled at submission (compile_error): no worker needed
TOKENS = {"alice": "alice-token-0123456789", "bob": "bob-token-0123456789ab"}


def relu_task(sleep_s: float) -> dict:
    """The ReLU task inline, its module taking `sleep_s` to load: a job of known length."""
    source = (Path(__file__).resolve().parents[1] / "tasks" / "01_relu.py").read_text()
    return {"id": "slow_relu", "source": source + f"\nimport time\ntime.sleep({sleep_s})\n"}


def body(source: str = SYNTAX_ERROR, **options: object) -> dict:
    options.setdefault("trials", 1)
    return {"task": {"id": "01_relu"}, "candidate": {"source": source}, "options": options}


def clients_file(path: Path, extra: list[dict] | None = None) -> Path:
    entries = [
        {
            "name": "alice",
            "token_sha256": hashlib.sha256(TOKENS["alice"].encode()).hexdigest(),
            "scopes": ["submit", "read_own"],
        },
        {
            "name": "bob",
            "token_sha256": hashlib.sha256(TOKENS["bob"].encode()).hexdigest(),
            "scopes": ["submit", "read_own"],
            "max_in_flight": 3,
            "max_priority": 5,
            "max_timeout_s": 60,
        },
        {"name": "dashboard", "token": "dashboard-token-0123", "scopes": ["read_all"]},
        {"name": "ops", "token": "ops-token-0123456789", "scopes": ["admin"]},
        *(extra or []),
    ]
    path.write_text(json.dumps({"clients": entries}))
    return path


@pytest.fixture()
def gym(tmp_path: Path) -> Iterator[Gym]:
    args = ["--cpu-workers", "1", "--no-cache", "--clients-file", str(clients_file(tmp_path / "c"))]
    g = Gym(tmp_path, args).start()
    yield g
    g.stop()


def test_clients_see_and_cancel_only_their_own_jobs(gym: Gym) -> None:
    alice, bob = TOKENS["alice"], TOKENS["bob"]
    status, job, _ = call(gym.url + "/v1/evaluate", "POST", body(), token=alice)
    assert status == 200 and job["result"]["status"] == "compile_error", job
    mine = f"{gym.url}/v1/jobs/{job['id']}"
    assert call(mine, token=alice)[0] == 200
    # Another client: as if the job did not exist (its id says nothing).
    status, err, _ = call(mine, token=bob)
    assert status == 404 and err["error"]["code"] == "not_found"
    assert call(mine, "DELETE", token=bob)[0] == 404
    # Scoped readers read everything, and only read; admin does everything.
    assert call(mine, token="dashboard-token-0123")[0] == 200
    assert call(mine, "DELETE", token="dashboard-token-0123")[0] == 403
    assert call(gym.url + "/v1/evaluate", "POST", body(), token="dashboard-token-0123")[0] == 403
    assert call(mine, "DELETE", token="ops-token-0123456789")[0] == 200
    # Unknown tokens, and none, are refused; liveness needs none.
    assert call(mine, token="nobody-0123456789")[0] == 401
    assert call(mine)[0] == 401
    assert call(gym.url + "/healthz")[0] == 200
    # Metrics: read_all and admin only, with a series per client.
    assert call(gym.url + "/metrics", token=alice)[0] == 403
    status, metrics, _ = call(gym.url + "/metrics", token="dashboard-token-0123")
    assert status == 200
    assert 'kgym_client_requests_total{client="alice"} 1' in metrics
    assert 'kgym_client_jobs_in_flight{client="bob"} 0' in metrics


def test_a_running_job_is_cancelled_by_its_owner_at_once(gym: Gym) -> None:
    alice = TOKENS["alice"]
    slow = {"task": relu_task(60), "candidate": {"source": RELU}, "options": {"trials": 1}}
    status, job, _ = call(gym.url + "/v1/evaluate", "POST", slow, token=alice)
    assert status == 202, job
    wait_for_status(gym.url, job["id"], "running", token=alice)
    started = time.monotonic()
    status, cancelled, _ = call(f"{gym.url}/v1/jobs/{job['id']}", "DELETE", token=alice, timeout=30)
    assert status == 200 and cancelled["status"] == "cancelled", cancelled
    assert time.monotonic() - started < 10
    assert call(gym.url + "/healthz")[0] == 200  # and the service still answers


def test_idempotency_keys_belong_to_their_client(gym: Gym) -> None:
    import urllib.request

    def keyed(token: str) -> dict:
        req = urllib.request.Request(
            gym.url + "/v1/evaluate", data=json.dumps(body()).encode(), method="POST"
        )
        req.add_header("Authorization", f"Bearer {token}")
        req.add_header("Idempotency-Key", "shared-key")
        with urllib.request.urlopen(req, timeout=60) as resp:
            return json.loads(resp.read())

    a1, a2, b1 = keyed(TOKENS["alice"]), keyed(TOKENS["alice"]), keyed(TOKENS["bob"])
    assert a1["id"] == a2["id"]
    assert b1["id"] != a1["id"]  # the same key from another client is another job


def test_ceilings_and_in_flight_limits(gym: Gym) -> None:
    bob = TOKENS["bob"]
    status, err, _ = call(gym.url + "/v1/evaluate", "POST", body(priority=6), token=bob)
    assert status == 403 and "options.priority" in err["error"]["message"]
    status, err, _ = call(gym.url + "/v1/evaluate", "POST", body(timeout_s=61), token=bob)
    assert status == 403 and "options.timeout_s" in err["error"]["message"]
    # Three jobs in flight at most: the fourth waits for one of them.
    slow = {"task": relu_task(30), "candidate": {"source": RELU}, "options": {"trials": 1}}
    ids = []
    for seed in range(3):
        status, job, _ = call(
            gym.url + "/v1/evaluate", "POST", {**slow, "options": {"seed": seed}}, token=bob
        )
        assert status == 202, job
        ids.append(job["id"])
    status, err, headers = call(gym.url + "/v1/evaluate", "POST", {**slow}, token=bob)
    assert status == 429 and err["error"]["code"] == "client_limit" and "Retry-After" in headers
    # Alice is not held by Bob's limit; a batch over Bob's is refused whole.
    assert call(gym.url + "/v1/evaluate", "POST", body(), token=TOKENS["alice"])[0] == 200
    status, _, _ = call(gym.url + "/v1/evaluate:batch", "POST", {"requests": [slow]}, token=bob)
    assert status == 429
    call(f"{gym.url}/v1/jobs/{ids[0]}", "DELETE", token=bob)
    status, _, _ = call(gym.url + "/v1/evaluate", "POST", body(), token=bob)
    assert status == 200  # settled at once: never counted in flight


def test_one_clients_queue_does_not_hold_another_back(tmp_path: Path) -> None:
    """Alice has a job running and 200 queued; Bob's single job starts when Alice's running
    job ends, not after her queue."""
    args = ["--cpu-workers", "1", "--no-cache", "--clients-file", str(clients_file(tmp_path / "c"))]
    with Gym(tmp_path, args) as g:
        alice, bob = TOKENS["alice"], TOKENS["bob"]
        task = relu_task(2.0)
        first = {"task": task, "candidate": {"source": RELU}, "options": {"trials": 1}}
        status, running, _ = call(g.url + "/v1/evaluate", "POST", first, token=alice)
        assert status == 202
        wait_for_status(g.url, running["id"], "running", token=alice)
        queued = [
            {"task": task, "candidate": {"source": RELU}, "options": {"trials": 1, "seed": s}}
            for s in range(1, 201)
        ]
        status, _, _ = call(g.url + "/v1/evaluate:batch", "POST", {"requests": queued}, token=alice)
        assert status == 202
        status, mine, _ = call(g.url + "/v1/evaluate", "POST", first, token=bob)
        assert status == 202
        bob_job = f"{g.url}/v1/jobs/{mine['id']}"
        deadline = time.monotonic() + 120
        while call(bob_job, token=bob)[1]["status"] == "queued":
            assert time.monotonic() < deadline, "Bob's job never started"
            time.sleep(0.05)
        done = call(f"{g.url}/v1/jobs/{running['id']}?wait=60", token=alice)[1]
        started = call(bob_job, token=bob)[1]["started_at"]
        # Within the running job's remaining time plus 1 s: nothing of Alice's queue came first.
        assert started - done["finished_at"] < 1.0, (started, done["finished_at"])
