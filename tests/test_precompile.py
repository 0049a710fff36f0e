"""The candidate's compilation ahead of its job's hold (harness/precompile.py), through a real
candidate runner: forked by ``spawn`` into its own PID namespace with every layer, asked for its
warm-up with the compilation's spec, then for its end. On a CPU the warm-up makes no CUDA
context, so the spec carries the GPU's capability (a GPU's runner sends its own); Triton
compiles for it all the same (``bench/precompile``).

Each case runs in a fresh Python process (the runner is forked from it, as from a judge).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import DEVICE, run, solution_source

ROOT = Path(__file__).resolve().parents[1]
BASE = solution_source("01_relu")

DRIVER = """
import json, sys
from pathlib import Path
from kgym.harness.spawn import RunnerGone, spawn

work = Path(sys.argv[1])
spec = json.loads(sys.argv[2])
wait_s = float(sys.argv[3])
handle = spawn("candidate", work, True)
handle.request({"op": "ping"})
out = {"pid_namespace": bool(handle.layers.get("pid_namespace"))}
try:
    out["warm"] = handle.request({"op": "warm", "device": "cpu", "precompile": spec})
    out["precompiled"] = handle.request({"op": "precompiled", "wait_s": wait_s})
    out["after"] = handle.request({"op": "ping"})
except RunnerGone as gone:
    out["gone"] = gone.how
    out["audit"] = gone.audit
    out["exit_code"] = handle.exit_code()
handle.close()
print(json.dumps(out))
"""


def precompile(tmp_path: Path, candidate: str, wait_s: float = 60.0, audit: bool = True) -> dict:
    work = tmp_path / "job"
    work.mkdir()
    (work / "task.py").write_text((ROOT / "tasks" / "01_relu.py").read_text())
    (work / "candidate.py").write_text(candidate)
    spec = {
        "task_file": str(work / "task.py"),
        "candidate_file": str(work / "candidate.py"),
        "sizes": "cpu",
        "seed": 0,
        "audit": audit,
        "protected": [],
        "arch": 90,
    }
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(work), json.dumps(spec), str(wait_s)],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    if not out["pid_namespace"]:
        pytest.skip("no PID namespace here (not root): the runner starts no compilation ahead")
    out["runner_dir"] = work / "runner-candidate"
    out["cache"] = work / "runner-candidate" / "precompile" / "triton-cache"
    return out


HIT = """
import json, os, sys
from pathlib import Path
import torch
from kgym.harness import loader
from kgym.harness.precompile import compile_only

cache = Path(sys.argv[1])
os.environ["TRITON_CACHE_DIR"] = str(cache)
for group in cache.rglob("__grp__*.json"):
    assert all(Path(p).is_file() for p in json.loads(group.read_text())["child_paths"].values())
before = sorted(p.name for p in cache.iterdir())
compile_only(90)
task = loader.load_module(Path(sys.argv[2]), "kgym_task")
loader.apply_sizes(task, "cpu")  # as the child was told
candidate = loader.load_module(Path(sys.argv[3]), "kgym_candidate")
with torch.device("meta"), torch.no_grad():
    candidate.ModelNew(*task.get_init_inputs())(*task.get_inputs())
print(json.dumps(sorted(p.name for p in cache.iterdir()) == before))
"""


def test_the_candidates_kernels_are_compiled_into_its_runners_cache(tmp_path: Path) -> None:
    out = precompile(tmp_path, BASE)
    result = out["precompiled"]["precompile"]
    assert result["status"] == "done", result
    assert result["swept"] is True
    assert result["cache_entries"] >= 1
    assert result["arch_from"] == "judge"  # the spec's, as a fork server's judge gives it
    cubins = [p.name for p in out["cache"].rglob("*.cubin")]
    assert any(name.startswith("relu") for name in cubins), cubins
    assert out["after"] == {"ok": True}  # the runner serves on
    # Where the runner's first call looks (the same key, compiled for the same target): every
    # kernel found, nothing compiled again.
    work = out["runner_dir"].parent
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    again = subprocess.run(
        [
            sys.executable,
            "-c",
            HIT,
            str(out["cache"]),
            str(work / "task.py"),
            str(work / "candidate.py"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert again.returncode == 0, again.stderr[-2000:]
    assert json.loads(again.stdout.strip().splitlines()[-1]) is True


def test_the_childs_meta_tensors_pass_for_cuda_tensors() -> None:
    """Under ``looks_like_cuda`` a meta tensor says it is on the GPU, and what is asked for on
    the GPU is made on the meta device (no memory, no GPU reached)."""
    import torch

    from kgym.harness.precompile import looks_like_cuda

    with torch.device("meta"):
        x = torch.randn(4, 8)
    plain = torch.ones(2)  # a CPU tensor stays one
    with torch.device("meta"), looks_like_cuda():
        assert x.is_cuda and x.device == torch.device("cuda", 0) and x.device.type == "cuda"
        assert x.get_device() == 0
        assert not plain.is_cuda and plain.device.type == "cpu" and plain.get_device() == -1
        made = [
            torch.empty((2, 3), device=x.device),
            torch.zeros(3, device="cuda"),
            torch.full((2,), 1.0, device=torch.device("cuda", 0)),
            x.cuda(),
            x.to("cuda"),
            x.to(x.device),
            x.to(device="cuda", dtype=torch.float16),
            x.to(0),
            x.to("cuda", torch.float16, True),
            torch.ones(2, device=0),
            plain.cuda(),
            x.new_empty(3),
            torch.empty_like(x),
            x + 1,
        ]
        assert all(t.is_meta and t.is_cuda for t in made)
        assert made[6].dtype == made[8].dtype == torch.float16
        assert x.to(torch.float16).dtype == torch.float16  # a dtype is no device
    assert not x.is_cuda and x.device.type == "meta"  # only inside the mode


def test_a_candidate_that_branches_on_is_cuda_gets_its_cuda_branch_compiled(
    tmp_path: Path,
) -> None:
    """Solutions choose their block sizes and warps by ``x.is_cuda``; the child compiles the
    kernel the GPU's first call looks for, the CUDA branch's (8 warps here, 4 otherwise)."""
    branching = (ROOT / "tests" / "honest" / "01_relu__is_cuda_blocks_2d_grid.py").read_text()
    assert "if x.is_cuda:\n            block, warps = 2048, 8" in branching
    out = precompile(tmp_path, branching)
    result = out["precompiled"]["precompile"]
    assert result["status"] == "done", result
    compiled = [
        json.loads(path.read_text()) for path in out["cache"].rglob("relu_rows_kernel.json")
    ]
    assert compiled, list(out["cache"].rglob("*"))
    assert {meta["num_warps"] for meta in compiled} == {8}


def test_a_candidate_that_never_ends_is_ended_at_the_wait(tmp_path: Path) -> None:
    began = time.monotonic()
    out = precompile(tmp_path, "while True:\n    pass\n" + BASE, wait_s=1.0)
    result = out["precompiled"]["precompile"]
    assert result["status"] == "timed out", result
    assert result["swept"] is True
    assert time.monotonic() - began < 60


def test_what_the_candidate_started_is_gone_before_its_runner_goes_on(tmp_path: Path) -> None:
    """Unaudited (a job's audit off), the candidate's code forks a process that writes on and
    on: the sweep ends it with the compilation, so nothing of the candidate's runs beside the
    runner from then on."""
    beat = tmp_path / "job" / "runner-candidate" / "precompile" / "beat"
    leaver = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    while True:\n"
        f"        open({str(beat)!r}, 'a').write('.')\n"
        "        time.sleep(0.01)\n" + BASE
    )
    out = precompile(tmp_path, leaver, audit=False)
    result = out["precompiled"]["precompile"]
    assert result["status"] == "done", result
    assert result["swept"] is True
    size = beat.stat().st_size
    assert size > 0  # it ran, outside the hold's time, as the compilation did
    time.sleep(0.3)
    assert beat.stat().st_size == size


def test_every_config_of_an_autotuned_kernel_is_compiled(tmp_path: Path) -> None:
    autotuned = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 1024})], key=["n"]
)
@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
        return y
"""
    out = precompile(tmp_path, autotuned)
    assert out["precompiled"]["precompile"]["status"] == "done", out
    assert len(list(out["cache"].rglob("relu_kernel.cubin"))) == 2


def test_what_the_child_writes_stays_in_its_own_directory(tmp_path: Path) -> None:
    """Not the runner's cache, whose driver helpers the runner loads while the child runs (a
    helper replaced there would be native code in the runner before any of its guards)."""
    planter = (
        "import os\n"
        "for name in ('triton-cache/planted', 'planted'):\n"
        "    try:\n"
        "        open(name, 'w').write('x')\n"
        "    except OSError:\n"
        "        pass\n" + BASE
    )
    out = precompile(tmp_path, planter, audit=False)
    assert out["precompiled"]["precompile"]["status"] == "done", out
    runner_dir = out["runner_dir"]
    assert not (runner_dir / "planted").exists()
    assert not (runner_dir / "triton-cache" / "planted").exists()


def test_the_child_cannot_signal_its_runner(tmp_path: Path) -> None:
    stopper = (
        "import os, signal\n"
        "for sig in (signal.SIGSTOP, signal.SIGINT, signal.SIGKILL):\n"
        "    try:\n"
        "        os.kill(os.getppid(), sig)\n"
        "    except OSError:\n"
        "        pass\n" + BASE
    )
    out = precompile(tmp_path, stopper, audit=False)
    assert out["warm"] == {"ok": True}, out
    assert out["precompiled"]["precompile"]["status"] == "done", out
    assert out["after"] == {"ok": True}


def test_the_audit_hook_stops_the_child_as_it_would_stop_the_runner(tmp_path: Path) -> None:
    out = precompile(tmp_path, "import os\nos.system('true')\n" + BASE)
    assert out.get("exit_code") == 86, out
    assert "os.system" in out.get("audit", ""), out


def test_the_child_cannot_speak_for_the_runner(tmp_path: Path) -> None:
    """The runner's socket to the judge is closed in the child: whatever it writes to its
    descriptors reaches no judge, and the runner's replies stay its own."""
    writer = (
        "import os\n"
        "for fd in range(3, 64):\n"
        "    try:\n"
        "        os.write(fd, b'forged')\n"
        "    except OSError:\n"
        "        pass\n" + BASE
    )
    out = precompile(tmp_path, writer, audit=False)
    assert out["precompiled"]["ok"] is True, out
    assert out["precompiled"]["precompile"]["status"] == "done"
    assert out["after"] == {"ok": True}


@pytest.mark.skipif(DEVICE != "cuda", reason="the compilation ahead runs for GPU jobs only")
def test_on_a_gpu_the_first_call_finds_its_kernels_compiled() -> None:
    result = run("01_relu", BASE)
    assert result["status"] == "ok", result.get("error")
    ahead = result["judge"]["precompile"]
    assert ahead["status"] == "done", ahead
    assert ahead["swept"] is True
    assert ahead["cache_entries"] >= 1


@pytest.mark.skipif(DEVICE != "cuda", reason="the compilation ahead runs for GPU jobs only")
def test_on_a_gpu_the_compilation_ahead_cannot_open_the_gpu() -> None:
    """The candidate's import opens the GPU's control device: refused in the child (which then
    fails, and compiles nothing), allowed in its runner, whose evaluation goes on."""
    probe = "import os\nos.close(os.open('/dev/nvidiactl', os.O_RDWR))\n" + BASE
    result = run("01_relu", probe, screen=False)
    assert result["status"] == "ok", result.get("error")
    assert result["judge"]["precompile"]["status"] == "failed", result["judge"]["precompile"]
