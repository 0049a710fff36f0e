"""Launches the candidate's runner refuses whatever the call: a kernel handed what only Python
runs (a callable however wrapped: in a tuple, a ``tl.constexpr``, an object's method), and a
launch started inside another launch (its grid callable, a hook, a heuristic),
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

    # What only Python runs, however it is wrapped: every launch refused, a plain one not.
    class Method:
        def apply(self, v):
            return v

    for wrapped in (tl.constexpr(print), (print,), Method(), [1, (2, print)], type):
        assert counter._foreign(wrapped, True), wrapped
    for plain in (3, 2.5, True, "s", None, torch.float32, tl.float16, (1, 2), copy):
        assert not counter._foreign(plain, True), plain
    assert counter._foreign(x, True) and not counter._foreign(x, False)
    print("foreign ok")
    """
)


def test_a_launch_inside_another_is_refused_every_time() -> None:
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-2:] == ["nested-launch", "foreign ok"]


BODY_NAMES = textwrap.dedent(
    """
    import torch, triton, triton.language as tl
    from kgym.harness.guards import LaunchCounter

    counter = LaunchCounter()
    counter.install()
    SCALE = tl.constexpr(2.0)
    FINISH = 0

    @triton.jit
    def twice(v):
        return v * SCALE

    @triton.jit
    def kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        v = twice(tl.load(x_ptr + offs, mask=offs < n))
        if FINISH:
            v = FINISH(v)
        tl.store(y_ptr + offs, v, mask=offs < n)

    x = torch.arange(8.0)
    y = torch.empty(8)
    kernel[(1,)](x, y, 8, BLOCK=8)
    assert counter.refused == 0, counter.last_refused
    assert torch.equal(y, x * 2)

    # A name the source binds to a number, rebound to Python before the body runs: by the
    # grid, or a kernel the body calls whose own name is rebound.
    def rebind(meta):
        global FINISH
        FINISH = lambda v: v
        return (1,)

    kernel[rebind](x, y, 8, BLOCK=8)
    assert counter.refused == 1, counter.refused
    FINISH = 0
    SCALE = print
    try:  # refused as the body starts; Python's print then fails in it
        kernel[(1,)](x, y, 8, BLOCK=8)
    except Exception:
        pass
    assert counter.refused == 2, counter.refused
    print(counter.last_refused[1])
    """
)


def test_what_a_kernel_body_reads_is_checked_as_it_runs() -> None:
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run(
        [sys.executable, "-c", BODY_NAMES], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "'SCALE' is a Python callable" in done.stdout, done.stdout
