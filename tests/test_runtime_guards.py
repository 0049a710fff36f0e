"""Runtime guards in the harness and the sealed report channel (docs/integrity-rules.md)."""

from __future__ import annotations

import pytest

from conftest import run, solution_source

BASE = solution_source("01_relu")
FORWARD = "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n"


def at_forward(statement: str, imports: str = "") -> str:
    assert FORWARD in BASE
    return (imports + "\n" + BASE).replace(FORWARD, FORWARD + f"        {statement}\n", 1)


# Writes a forged "ok" report to every inherited descriptor above stderr.
FAKE = (
    "import os\n"
    "def _w(fd):\n"
    "    try:\n"
    '        os.write(fd, b\'{"type":"report","status":"ok","correct":true}\\n\')\n'
    "    except OSError:\n"
    "        pass\n"
)


def rules(result: dict) -> set[str]:
    return {f["rule"] for f in result["findings"] if f["severity"] == "reject"}


CASES = {
    "patch_allclose": (at_forward("torch.allclose = lambda *a, **k: True"), "patched-function"),
    "patch_event_record": (
        at_forward("torch.cuda.Event.record = lambda *a, **k: None"),
        "patched-function",
    ),
    "patch_perf_counter": (
        at_forward("time.perf_counter = lambda: 0.0", "import time"),
        "patched-function",
    ),
    "patch_harness_module": (
        at_forward(
            "sys.modules['kgym.harness.compare'].compare_outputs = lambda *a, **k: None",
            "import sys",
        ),
        "patched-function",
    ),
    "patch_tensor_eq": (at_forward("torch.Tensor.__eq__ = lambda a, b: True"), "patched-function"),
    # A wrapper made the way torch._dynamo makes its own, but around another function.
    "patch_manual_seed_dynamo_style": (
        at_forward("torch.manual_seed = torch._disable_dynamo(lambda seed: None)"),
        "patched-function",
    ),
    "patch_manual_seed_wraps_original": (
        at_forward(
            "torch.manual_seed = functools.wraps(torch.manual_seed)(lambda seed: None)",
            "import functools",
        ),
        "patched-function",
    ),
    "global_threads": (at_forward("torch.set_num_threads(1)"), "global-state"),
    "global_deterministic": (
        at_forward("torch.use_deterministic_algorithms(True)"),
        "global-state",
    ),
    "thread_left_running": (
        at_forward(
            "threading.Thread(target=time.sleep, args=(30,), daemon=True).start()",
            "import threading, time",
        ),
        "thread-or-process",
    ),
    "trace_hook": (at_forward("sys.settrace(lambda *a: None)", "import sys"), "tracing-hook"),
    "signal_handler": (
        at_forward("signal.signal(signal.SIGALRM, lambda *a: None)", "import signal"),
        "tracing-hook",
    ),
    "no_kernel_at_all": (
        "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
        "        return torch.relu(x)\n",
        "no-triton-launch",
    ),
    "send_on_channel": (
        at_forward("__import__('kgym._core', fromlist=['x']).channel_send('{}')"),
        "report-channel-tampering",
    ),
    "write_fake_report_to_fd": (
        at_forward("[_w(int(fd)) for fd in os.listdir('/proc/self/fd') if int(fd) > 2]", FAKE),
        "report-channel-tampering",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_runtime_guard(name: str) -> None:
    source, rule = CASES[name]
    result = run("01_relu", source, trials=2, screen=False)
    # Since the judge split these guards run inside the candidate's runner, behind its audit
    # hook and the judge's protocol checks, which may stop an attempt first; an attempt to use
    # the report channel only fails the candidate itself (the runner has no channel).
    allowed = ("rejected", "crashed", "runtime_error") if name == "send_on_channel" else None
    assert result["status"] in (allowed or ("rejected", "crashed")), (
        result["status"],
        result["error"],
    )
    if result["status"] == "rejected":
        assert {rule, "audit-hook", "runner-protocol"} & rules(result), result["findings"]
        assert result["hacked"] is True


def test_fake_report_then_exit_is_not_believed() -> None:
    source = at_forward(
        "[_w(int(fd)) for fd in os.listdir('/proc/self/fd') if int(fd) > 2]; os._exit(0)", FAKE
    )
    result = run("01_relu", source, trials=1, screen=False)
    assert result["status"] == "rejected"
    assert {"report-channel-tampering", "runner-protocol", "audit-hook"} & rules(result)
    assert not result["correct"]


def test_honest_solution_raises_no_guard() -> None:
    result = run("01_relu", BASE, trials=2)
    assert result["status"] == "ok"
    assert result["findings"] == []


def test_importing_torch_dynamo_is_not_a_patch() -> None:
    # On a GPU the profiler imports torch._dynamo, which rebinds torch.manual_seed to its own
    # wrapper of the same function; that must not read as the candidate patching it.
    source = at_forward("import torch._dynamo")
    result = run("01_relu", source, trials=2, screen=False)
    assert result["status"] == "ok", (result["findings"], result["error"])


def test_write_outside_the_job_directory_is_refused(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    target = tmp_path_factory.mktemp("outside") / "poisoned-cache-entry.json"
    source = f"with open({str(target)!r}, 'w') as _f:\n    _f.write('{{}}')\n" + BASE
    result = run("01_relu", source, trials=1, screen=False)
    if not result["sandbox"]["writes_confined"]:
        pytest.skip(result["sandbox"]["writes_note"])
    assert not target.exists()
    assert result["status"] == "rejected", (result["status"], result["error"])
    # The candidate's audit hook sees the attempt (the view and the fence would refuse it).
    assert any(
        f["rule"] == "audit-hook" and "write outside its directory" in f["detail"]
        for f in result["findings"]
    ), result["findings"]
    assert result["hacked"] is True


def test_writes_inside_the_job_directory_are_allowed() -> None:
    source = "with open('scratch.txt', 'w') as _f:\n    _f.write('ok')\n" + BASE
    result = run("01_relu", source, trials=1, screen=False)
    assert result["status"] == "ok", (result["findings"], result["error"])
