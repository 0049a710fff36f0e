"""The gym service end to end: a real `kgym-gym serve` (CPU mode) answering over HTTP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from service_util import Gym, call, descendants, gym_exe, wait_for_status

from conftest import ROOT, solution_source

RELU = solution_source("01_relu")
HANG = RELU.replace(
    "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n",
    "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n        while True: pass\n",
    1,
)
WRONG = (ROOT / "tasks" / "wrong").glob("*.py")


def request(source: str, task: str = "01_relu", **options: object) -> dict:
    options.setdefault("trials", 2)
    return {"task": {"id": task}, "candidate": {"source": source}, "options": options}


@pytest.fixture()
def gym(tmp_path: Path) -> Iterator[Gym]:
    g = Gym(tmp_path, ["--cpu-workers", "2"]).start()
    yield g
    g.stop()


def test_evaluate_reward_feedback_and_cache(gym: Gym) -> None:
    body = dict(request(RELU), reward="dr_kernel")
    status, job, _ = call(gym.url + "/v1/evaluate?wait=120", "POST", body)
    assert status == 200, job
    assert job["status"] == "done" and job["result"]["status"] == "ok"
    assert job["cached"] is False and job["attempts"] == 1
    assert job["reward"] == pytest.approx(1.0)  # correct, no timing on a CPU
    assert job["reward_detail"]["kind"] == "dr_kernel"
    assert isinstance(job["feedback"], str) and job["feedback"]
    status, again, _ = call(gym.url + "/v1/evaluate?wait=120", "POST", body)
    assert status == 200 and again["cached"] is True and again["id"] != job["id"]
    assert again["result"] == job["result"]
    status, fetched, _ = call(gym.url + f"/v1/jobs/{job['id']}")
    assert status == 200 and fetched["result"] == job["result"]
    _, metrics, _ = call(gym.url + "/metrics")
    assert "kgym_cache_hits_total 1" in metrics
    assert 'kgym_phase_seconds_bucket{phase="correctness"' in metrics


def test_verdicts_through_the_service(gym: Gym) -> None:
    wrong = next(p for p in sorted(WRONG) if p.name.startswith("01_relu"))
    attack = (ROOT / "tests" / "hostile" / "01_relu__torch_fallback_direct.py").read_text()
    status, out, _ = call(
        gym.url + "/v1/evaluate:batch?wait=120",
        "POST",
        {"requests": [request(RELU, seed=3), request(wrong.read_text()), request(attack)]},
    )
    assert status == 200, out
    verdicts = [j["result"]["status"] for j in out["jobs"]]
    assert verdicts == ["ok", "incorrect", "rejected"]
    assert out["jobs"][2]["result"]["hacked"] is True


def test_torch_compute_policy_through_the_service(gym: Gym) -> None:
    hybrid_dir = ROOT / "tests" / "hybrid"
    task = {"id": "gemm_add_relu", "source": (hybrid_dir / "76_gemm_add_relu_task.py").read_text()}
    source = (hybrid_dir / "hybrid_gemm_then_triton_epilogue.py").read_text()
    bodies = [
        {"task": task, "candidate": {"source": source}, "options": {"trials": 2, **policy}}
        for policy in ({"torch_compute": "hybrid"}, {"torch_compute": "strict"}, {})
    ]
    status, out, _ = call(gym.url + "/v1/evaluate:batch?wait=120", "POST", {"requests": bodies})
    assert status == 200, out
    # strict is the service's default
    assert [j["result"]["status"] for j in out["jobs"]] == ["ok", "rejected", "rejected"]
    assert out["jobs"][0]["result"]["judge"]["torch_compute"] == "hybrid"


def test_batch_is_all_or_none(gym: Gym) -> None:
    status, err, _ = call(
        gym.url + "/v1/evaluate:batch",
        "POST",
        {"requests": [request(RELU), {"task": {"id": "01_relu"}, "candidate": {}}]},
    )
    assert status == 400 and err["error"]["message"].startswith("requests[1].")
    _, metrics, _ = call(gym.url + "/metrics")
    assert "kgym_requests_total" not in metrics  # nothing was accepted


@pytest.mark.parametrize(
    ("method", "path", "body", "code", "status"),
    [
        ("POST", "/v1/evaluate", {"task": {"id": "01_relu"}}, "bad_request", 400),
        ("POST", "/v1/evaluate", dict(request(RELU), extra=1), "bad_request", 400),
        ("POST", "/v1/evaluate", request(RELU, trials=0), "bad_request", 400),
        ("POST", "/v1/evaluate", request(RELU, torch_compute="lenient"), "bad_request", 400),
        ("POST", "/v1/evaluate", request(RELU, task="no_such_task"), "unknown_task", 404),
        ("POST", "/v1/evaluate", b"{not json", "bad_request", 400),
        ("GET", "/v1/jobs/j-missing", None, "not_found", 404),
        ("GET", "/v1/nothing", None, "not_found", 404),
        ("PUT", "/v1/tasks", None, "method_not_allowed", 405),
        ("GET", "/v1/jobs/x?wait=soon", None, "bad_request", 400),
    ],
)
def test_clear_json_errors(
    gym: Gym, method: str, path: str, body: object, code: str, status: int
) -> None:
    raw = body if isinstance(body, bytes) else None
    got, err, _ = call(gym.url + path, method, None if raw else body, raw=raw)
    assert got == status, err
    assert err["error"]["code"] == code and err["error"]["message"]


def test_payload_limit_and_queue_limit(tmp_path: Path) -> None:
    g = Gym(tmp_path, ["--cpu-workers", "1", "--max-queue", "1", "--max-body", "65536"]).start()
    try:
        status, err, _ = call(g.url + "/v1/evaluate", "POST", request("#" * 70000))
        assert status == 413 and err["error"]["code"] == "payload_too_large"
        status, hung, _ = call(
            g.url + "/v1/evaluate", "POST", request(HANG, screen=False, timeout_s=60)
        )
        assert status == 202
        status, err, headers = call(g.url + "/v1/evaluate", "POST", request(RELU))
        assert status == 429 and err["error"]["code"] == "queue_full"
        assert int(headers["Retry-After"]) > 0
        # Cancelling the running job kills its child and frees the queue.
        started = time.monotonic()
        status, cancelled, _ = call(g.url + f"/v1/jobs/{hung['id']}", "DELETE")
        assert status == 200 and cancelled["status"] == "cancelled"
        assert time.monotonic() - started < 20
        status, job, _ = call(g.url + "/v1/evaluate?wait=120", "POST", request(RELU))
        assert status == 200 and job["result"]["status"] == "ok"
    finally:
        g.stop()


@pytest.mark.parametrize("source", ["file", "environment"])
def test_non_loopback_needs_a_token(tmp_path: Path, source: str) -> None:
    refused = subprocess.run(
        [gym_exe(), "serve", "--host", "0.0.0.0", "--port", "0", "--gpus", "none"]
        + ["--state-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2 and "--token-file" in refused.stderr
    # The token is never an argument (argv is readable by every process of the machine).
    argv_token = subprocess.run(
        [gym_exe(), "serve", "--token", "s3cret", "--state-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert argv_token.returncode != 0
    token_file = tmp_path / "token"
    token_file.write_text("s3cret\n")
    if source == "file":
        g = Gym(tmp_path, ["--host", "0.0.0.0", "--token-file", str(token_file)])
    else:
        g = Gym(tmp_path, ["--host", "0.0.0.0"], env={"KGYM_TOKEN": "s3cret"})
    g.start()
    try:
        assert g.proc is not None
        # Neither the command line nor the environment block shows it to a same-user process.
        proc = Path(f"/proc/{g.proc.pid}")
        assert b"s3cret" not in (proc / "cmdline").read_bytes()
        assert b"s3cret" not in (proc / "environ").read_bytes()
        assert call(g.url + "/healthz")[0] == 200  # liveness needs no token
        status, err, _ = call(g.url + "/v1/tasks")
        assert status == 401 and err["error"]["code"] == "unauthorized"
        assert call(g.url + "/v1/tasks", token="wrong")[0] == 401
        status, tasks, _ = call(g.url + "/v1/tasks", token="s3cret")
        assert status == 200 and len(tasks["tasks"]) >= 18
    finally:
        g.stop()


def test_a_killed_service_loses_nothing(tmp_path: Path) -> None:
    g = Gym(tmp_path, ["--cpu-workers", "1"]).start()
    status, jobs, _ = call(
        g.url + "/v1/evaluate:batch",
        "POST",
        {"requests": [request(RELU, seed=s) for s in range(3)]},
    )
    assert status == 202
    for _ in range(200):  # wait until the first job runs, then kill -9 the whole service
        if call(g.url + f"/v1/jobs/{jobs['jobs'][0]['id']}")[1]["status"] == "running":
            break
        time.sleep(0.05)
    g.stop(signal.SIGKILL)
    g.start()
    try:
        for job in jobs["jobs"]:
            status, done, _ = call(g.url + f"/v1/jobs/{job['id']}?wait=120")
            assert status == 200 and done["status"] == "done", done
            assert done["result"]["status"] == "ok"
        first = call(g.url + f"/v1/jobs/{jobs['jobs'][0]['id']}")[1]
        assert first["attempts"] == 2  # started before the kill, re-run after it
    finally:
        g.stop()


def fork_server_of(g: Gym) -> tuple[int, list[int]]:
    """The gym's fork server and the job children it has forked."""
    assert g.proc is not None
    procs = descendants(g.proc.pid)
    below = {pid for pid, _ in descendants(procs[0][0])} if procs else set()
    server = [p for p, cmd in procs if "kgym.harness.forkserver" in cmd and p not in below]
    assert len(server) == 1, procs
    children = [pid for pid, _ in descendants(server[0])]
    return server[0], children


def test_faults_of_the_fork_server_and_its_children(tmp_path: Path) -> None:
    """kill -9 of a job child, then of the fork server, during a batch: each job ends with a
    result or a clear error, later jobs run normally and the restart shows in /metrics."""
    g = Gym(tmp_path, ["--cpu-workers", "1", "--no-cache"]).start()
    try:
        status, batch, _ = call(
            g.url + "/v1/evaluate:batch",
            "POST",
            # The second job's short limit: after the server is killed under it, it runs again.
            {"requests": [request(HANG, timeout_s=60), request(HANG, timeout_s=8), request(RELU)]},
        )
        assert status == 202
        first, second, last = (job["id"] for job in batch["jobs"])
        wait_for_status(g.url, first, "running")
        time.sleep(1.0)  # the child is forked and running the candidate's endless loop
        server, children = fork_server_of(g)
        assert children, "no job child under the fork server"
        os.kill(children[0], signal.SIGKILL)
        status, killed_child, _ = call(g.url + f"/v1/jobs/{first}?wait=60")
        assert status == 200 and killed_child["status"] == "done"
        assert killed_child["result"]["status"] not in ("ok", "incorrect")
        assert killed_child["result"]["error"]["message"]
        assert killed_child["reward"] in (None, 0.0, -1.0) or killed_child["reward"] <= 0

        wait_for_status(g.url, second, "running")
        time.sleep(1.0)
        assert fork_server_of(g)[0] == server  # a dead job child does not cost the server
        os.kill(server, signal.SIGKILL)
        status, killed_server, _ = call(g.url + f"/v1/jobs/{second}?wait=60")
        assert status == 200 and killed_server["status"] == "done"
        # The job ran once more on the restarted server (the hang, to its limit this time), and
        # the result keeps the first run's error.
        assert killed_server["result"]["status"] == "timeout"
        first_error = killed_server["result"]["infra_retry"]["first_error"]
        assert "fork server" in first_error["message"]

        status, after, _ = call(g.url + f"/v1/jobs/{last}?wait=120")
        assert status == 200 and after["result"]["status"] == "ok"
        assert fork_server_of(g)[0] != server
        _, metrics, _ = call(g.url + "/metrics")
        assert 'kgym_worker_restarts_total{worker="cpu"} 1' in metrics
    finally:
        g.stop()


def test_infra_error_runs_once_more_and_keeps_the_first_error(gym: Gym) -> None:
    """A task whose reference fails is not the candidate's fault: the service runs the job a
    second time (the first error kept beside the second run's result), and no more."""
    source = (ROOT / "tasks" / "01_relu.py").read_text()
    broken = source.replace(
        "        super().__init__()\n",
        "        super().__init__()\n        raise RuntimeError('reference out of order')\n",
    )
    assert broken != source
    body = {
        "task": {"id": "broken_relu", "source": broken},
        "candidate": {"source": RELU},
        "reward": "dr_kernel",
    }
    status, job, _ = call(gym.url + "/v1/evaluate?wait=120", "POST", body)
    assert status == 200 and job["status"] == "done", job
    result = job["result"]
    assert result["status"] == "infra_error"
    assert "reference out of order" in result["error"]["message"]
    assert result["infra_retry"]["first_error"]["phase"] == result["error"]["phase"] == "init"
    assert job["reward"] is None and job["reward_detail"]["valid"] is False  # never scored
    # The reference failed in the judge before the candidate's code was sent: no control runs.
    assert "control" not in result["infra_retry"]
    _, metrics, _ = call(gym.url + "/metrics")
    assert "kgym_infra_retries_total 1" in metrics


# A task whose reference side fails only beside a candidate that carries a mark: a stand-in, on
# a CPU, for a candidate that starves the reference side of what they share (the GPU's memory,
# say). The mark is assembled at run time, so that the task's own source (the control's
# candidate) does not carry it. It fails in the reference's forward (a failure the judge names),
# in the judge's making of inputs (an exception no check names: where a starved GPU first failed
# on the H200), or in the reference's forward only in a decoy call (which the control, whose
# torch candidate launches no Triton kernel, never makes: it must still reach as far).
STARVED_RELU = """
import inspect
import os
import torch
import torch.nn as nn


def _beside_a_starving_candidate() -> bool:
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        with open(os.path.join(here, "candidate.py")) as f:
            return "STARVE" + "_THE_REFERENCE" in f.read()
    except OSError:
        return False


def _in_decoy_phase() -> bool:
    return any(frame.function == "_decoy_call" for frame in inspect.stack())


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if WHERE == "forward" and _beside_a_starving_candidate():
            raise MemoryError("the reference could not allocate")
        if WHERE == "decoy" and _in_decoy_phase() and _beside_a_starving_candidate():
            raise MemoryError("the reference could not allocate")
        return torch.relu(x)


def get_inputs():
    if WHERE == "get_inputs" and _beside_a_starving_candidate():
        raise MemoryError("the reference could not allocate")
    return [torch.randn(4096)]


def get_init_inputs():
    return []
"""


@pytest.mark.parametrize("where", ["forward", "get_inputs", "decoy"])
def test_a_reference_failure_only_beside_the_candidate_is_charged_to_it(
    gym: Gym, where: str
) -> None:
    """Twice infra_error beside a candidate, and the reference runs beside the task's own Model
    (the control): the failure is the candidate's, a runtime_error that the reward penalises,
    not an infra_error that would excuse it (training drops those samples)."""
    body = {
        "task": {"id": "starved_relu", "source": f"WHERE = {where!r}\n" + STARVED_RELU},
        "candidate": {"source": RELU + "\n# STARVE_THE_REFERENCE\n"},
        "options": {"trials": 2},
        "reward": "dr_kernel",
    }
    status, job, _ = call(gym.url + "/v1/evaluate?wait=180", "POST", body)
    assert status == 200 and job["status"] == "done", job
    result = job["result"]
    assert result["status"] == "runtime_error", result.get("error")
    assert result["error"]["type"] == "CandidateInterference"
    retry = result["infra_retry"]
    assert retry["charged"] is True
    assert "could not allocate" in retry["first_error"]["message"]
    assert "could not allocate" in retry["second_error"]["message"]
    assert retry["control"]["status"] not in ("infra_error", "timeout", "crashed")
    # A control reaches the last phase the device has (correctness on a CPU) whatever its
    # torch candidate's findings.
    assert retry["control"]["reached"] in ("correctness", "profile")
    assert result["policies"]["strict"]["status"] == "runtime_error"
    assert job["reward_detail"]["valid"] is True and job["reward"] is not None, job["reward_detail"]
    assert job["reward"] <= 0.0
    _, metrics, _ = call(gym.url + "/metrics")
    assert 'kgym_infra_controls_total{charged="true"} 1' in metrics
    if where == "forward":
        # Not cached: the control vouched for one moment of one machine.
        status, again, _ = call(gym.url + "/v1/evaluate?wait=180", "POST", body)
        assert status == 200 and again["cached"] is False, again
        assert again["result"]["infra_retry"]["charged"] is True


def test_openapi_document_matches_docs(gym: Gym) -> None:
    status, served, _ = call(gym.url + "/openapi.json")
    assert status == 200
    assert served == json.loads((ROOT / "docs" / "openapi.json").read_text())
    assert set(served["paths"]) >= {"/v1/evaluate", "/v1/evaluate:batch", "/v1/jobs/{id}"}


def test_kgym_check_through_the_server(gym: Gym, capsys: pytest.CaptureFixture[str]) -> None:
    from kgym.cli import main

    solution = ROOT / "tasks" / "solutions" / "01_relu.py"
    rc = main(["check", "01_relu", str(solution), "--server", gym.url, "--trials", "2", "--json"])
    assert rc == 0
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "ok" and result["task_id"] == "01_relu"


def test_python_client_against_the_real_service(gym: Gym) -> None:
    from kgym.client import Client, GymError

    with Client(gym.url) as client:
        job = client.evaluate("01_relu", RELU, options={"trials": 2}, wait=120)
        assert job["status"] == "done" and job["result"]["status"] == "ok"
        assert {t["id"] for t in client.tasks()} >= {"01_relu", "18_attention"}
        with pytest.raises(GymError) as err:
            client.evaluate("no_such_task", RELU)
        assert err.value.status == 404 and err.value.code == "unknown_task"


def test_storage_keeps_answers_refuses_an_emptied_database_and_restores(tmp_path: Path) -> None:
    g = Gym(tmp_path).start()
    try:
        big = "# " + "x" * 500_000 + "\nimport os\nos.system('true')\n"  # rejected by the screen
        status, job, _ = call(g.url + "/v1/evaluate", "POST", request(big))
        assert status == 200 and job["result"]["status"] == "rejected"
    finally:
        g.stop()
    db = tmp_path / "kgym-gym.sqlite3"
    assert db.stat().st_size < 400_000  # the rejected candidate's text was not stored
    backup = tmp_path / "backup.sqlite3"
    done = subprocess.run(
        [gym_exe(), "backup", str(backup), "--state-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    # Emptied while stopped: starting would lose every job, so the service refuses.
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.write_bytes(b"")
    with pytest.raises(RuntimeError, match="is not the database this service used before"):
        Gym(tmp_path).start()
    db.write_bytes(backup.read_bytes())
    g = Gym(tmp_path).start()
    try:
        status, again, _ = call(g.url + f"/v1/jobs/{job['id']}")
        assert status == 200 and again["result"]["status"] == "rejected"
    finally:
        g.stop()


def post_with_key(g: Gym, body: dict, key: str) -> tuple[int, dict]:
    import urllib.error
    import urllib.request

    req = urllib.request.Request(
        g.url + "/v1/evaluate?wait=120",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Idempotency-Key": key},
    )
    try:
        with urllib.request.urlopen(req, timeout=150) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_idempotent_submissions(gym: Gym) -> None:
    status, first = post_with_key(gym, request(RELU), "retry-1")
    assert status == 200 and first["result"]["status"] == "ok"
    status, again = post_with_key(gym, request(RELU), "retry-1")
    assert status == 200 and again["id"] == first["id"]  # the same job, not a second one
    status, err = post_with_key(gym, request(RELU, seed=1), "retry-1")
    assert status == 409 and err["error"]["code"] == "conflict"
    status, err = post_with_key(gym, request(RELU), "bad key")
    assert status == 400


def test_identical_requests_are_evaluated_once(gym: Gym) -> None:
    body = {"requests": [request(RELU, seed=7), request(RELU, seed=7)]}
    status, answer, _ = call(gym.url + "/v1/evaluate:batch?wait=120", "POST", body)
    assert status == 200, answer
    jobs = answer["jobs"]
    assert len({j["id"] for j in jobs}) == 2  # two jobs, as asked
    assert all(j["result"]["status"] == "ok" for j in jobs)
    assert sorted(j["cached"] for j in jobs) == [False, True]  # one evaluation


def test_require_sandbox(tmp_path: Path) -> None:
    # A contradiction is refused at once, with the reason.
    refused = Gym(tmp_path, ["--require-sandbox", "--no-private-view"])
    with pytest.raises(RuntimeError, match="contradict"):
        refused.start()
    # On a machine that gives every layer (root, namespaces, Landlock, seccomp) the service
    # starts, and a job's Result shows each layer; elsewhere it refuses and says which is missing.
    g = Gym(tmp_path, ["--cpu-workers", "1", "--require-sandbox"])
    try:
        g.start(timeout=120)
    except RuntimeError as exc:
        assert "does not give jobs every sandbox layer" in str(exc), str(exc)
        pytest.skip(f"this machine refuses a sandbox layer: {exc}")
    try:
        status, job, _ = call(g.url + "/v1/evaluate?wait=120", "POST", request(RELU))
        assert status == 200 and job["status"] == "done", job
        sandbox = job["result"]["sandbox"]
        assert sandbox["private_view"] and sandbox["network_isolated"], sandbox
        assert sandbox["writes_confined"] and sandbox["syscalls_filtered"], sandbox
        assert job["result"]["judge"]["unprivileged"] is True, job["result"]["judge"]
    finally:
        g.stop()
