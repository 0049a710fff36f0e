"""kgym: a hardened GPU environment and RL toolkit for fast, honest Triton kernels.

The C++ core (``kgym._core``) extracts candidates, supervises sandboxed evaluations and renders
results; ``kgym.harness`` is the Python side that runs inside the sandbox.
"""

__version__ = "0.1.0"
