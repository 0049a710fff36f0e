"""Launches the candidate's runner refuses whatever the call: a kernel handed what only Python
runs, and a launch started inside another launch (its grid callable, a hook, a heuristic),
where the torch record takes torch's moves for Triton's own. Run in a child interpreter, since
the counter wraps Triton's launchers for the life of the process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
    """
    import torch, triton, triton.language as tl
    from kgym.harness.guards import LaunchCounter

    counter = LaunchCounter()
    counter.install()

    @triton.jit
    def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    x = torch.arange(8.0)
    y = torch.empty(8)
    copy[(1,)](x, y, 8, BLOCK=8)
    assert counter.refused == 0, counter.last_refused

    def outer(meta):
        copy[(1,)](x, y, 8, BLOCK=8)  # inside the outer launch
        return (1,)
    # Ten of them, each counted: a list capped at eight once hid every later one.
    for i in range(10):
        copy[outer](x, y, 8, BLOCK=8)
        assert counter.refused == i + 1, counter.refused
    print(counter.last_refused[0])
    """
)


def test_a_launch_inside_another_is_refused_every_time() -> None:
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "nested-launch"
