"""Which confinement layers CUDA IPC and CUDA itself survive (a diagnostic, run on a GPU).

python bench/judge_precision/probe_ipc.py   # one line per combination of layers
"""

from __future__ import annotations

import os
import subprocess
import sys


def one(layers: list[str]) -> None:
    import torch

    from kgym import _core
    from kgym.harness.arena import Arena, ArenaExport

    r, w = os.pipe()
    r2, w2 = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(w)
        os.close(r2)
        try:
            if "pidns" in layers:
                _core.confine_new_pid_namespace()
                inner = os.fork()
                if inner != 0:
                    _, st = os.waitpid(inner, 0)
                    os._exit(os.waitstatus_to_exitcode(st) & 0xFF)
            if "undumpable" in layers:
                print("undumpable", _core.confine_undumpable())
            if "nocaps" in layers:
                print("nocaps", _core.confine_drop_capabilities())
            if "fence" in layers:
                d = f"/tmp/probe-{os.getpid()}"
                os.makedirs(d, exist_ok=True)
                print("fence", _core.confine_writes([d], ["/dev"]))
            data = os.read(r, 200)
            try:
                torch.cuda.init()
                x = torch.zeros(1, device="cuda")
            except Exception as exc:  # noqa: BLE001
                os.write(w2, f"cuda init failed: {exc}"[:300].encode())
                os._exit(1)
            try:
                arena = Arena.attach(ArenaExport("cuda", 1 << 20, handle=data[:64]), x.device)
                arena.bytes[:4].fill_(7)
                torch.cuda.synchronize()
                os.write(w2, b"ok")
            except Exception as exc:  # noqa: BLE001
                os.write(w2, f"ipc failed: {exc}"[:300].encode())
            os._exit(0)
        finally:
            os._exit(3)
    os.close(r)
    os.close(w2)
    if "judge_undumpable" in layers:
        _core.confine_undumpable()
    torch.zeros(1, device="cuda")
    arena = Arena.create(1 << 20, torch.device("cuda"))
    arena.bytes.zero_()
    torch.cuda.synchronize()
    assert arena.export is not None
    os.write(w, arena.export.handle)
    answer = os.read(r2, 400).decode()
    os.waitpid(pid, 0)
    torch.cuda.synchronize()
    print(f"{'+'.join(layers) or 'none'}: {answer} value={int(arena.bytes[0])}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        one([x for x in sys.argv[1].split("+") if x])
    else:
        for combo in [
            "",
            "nocaps",
            "undumpable",
            "fence",
            "pidns",
            "judge_undumpable",
            "nocaps+undumpable+fence",
            "pidns+nocaps+undumpable+fence",
        ]:
            out = subprocess.run(
                [sys.executable, __file__, combo], capture_output=True, text=True, timeout=120
            )
            print(combo or "none", "->", (out.stdout + out.stderr).strip()[-600:], flush=True)
