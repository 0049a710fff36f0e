"""A job's host memory and threads where no cgroup counts them (a container that offers none),
sampled from /proc. Jobs run under sandbox uids of their own, never root, so every 0.25 s the
sampler sums, per uid other than root's and the bench's own, the proportional set size (PSS,
smaps_rollup: pages shared with the fork server counted by share, as near as /proc comes to what
a cgroup would charge the job) and the threads (what a pids limit counts). A job's peak is the
largest per-uid figure while it ran (the service's started_at to finished_at): exact with one
job at a time (--workers-per-gpu 1), an upper bound beside others. Needs root to read other
uids' smaps."""

from __future__ import annotations

import os
import threading
import time
from collections import defaultdict

INTERVAL_S = 0.25


class HostSampler:
    def __init__(self) -> None:
        # (time, the largest uid's PSS, the most threads of one uid)
        self.samples: list[tuple[float, int, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.readable = os.geteuid() == 0

    def __enter__(self) -> HostSampler:
        if self.readable:
            self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        own = {0, os.getuid()}
        while not self._stop.wait(INTERVAL_S):
            pss: dict[int, int] = defaultdict(int)
            count: dict[int, int] = defaultdict(int)
            for entry in os.scandir("/proc"):
                if not entry.name.isdigit():
                    continue
                try:
                    uid = entry.stat().st_uid
                    if uid in own:
                        continue
                    with open(f"{entry.path}/smaps_rollup") as f:
                        for line in f:
                            if line.startswith("Pss:"):
                                pss[uid] += int(line.split()[1]) * 1024
                                break
                    with open(f"{entry.path}/status") as f:
                        for line in f:
                            if line.startswith("Threads:"):
                                count[uid] += int(line.split()[1])
                                break
                except (OSError, ValueError):
                    continue  # a process that ended meanwhile
            self.samples.append(
                (time.time(), max(pss.values(), default=0), max(count.values(), default=0))
            )

    def peak(
        self, started: float | None, finished: float | None
    ) -> tuple[float | None, int | None]:
        """(host memory MiB, threads) at their largest while the job ran; None where no
        sample falls in its time or the sampler cannot read other uids."""
        if not self.readable or not started or not finished:
            return None, None
        inside = [s for s in self.samples if started <= s[0] <= finished]
        if not inside:
            return None, None
        return round(max(s[1] for s in inside) / (1 << 20), 1), max(s[2] for s in inside)
