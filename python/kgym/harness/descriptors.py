"""The descriptors a freshly forked process keeps: only those it names."""

from __future__ import annotations

import os


def close_all_but(keep: set[int]) -> None:
    """Closes every descriptor of this process but ``keep``'s."""
    last = 0
    for fd in sorted(keep):
        if fd > last:
            os.closerange(last, fd)
        last = fd + 1
    os.closerange(last, 65536)
