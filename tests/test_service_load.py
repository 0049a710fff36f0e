"""The load benchmark (bench/service_load) scaled down for CI: concurrent clients against a real
CPU-mode service, every request answered once, every error a JSON error, memory bounded."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from conftest import ROOT


def test_load_scaled_down(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "service_load", ROOT / "bench/service_load/run.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    argv = ["--clients", "40", "--requests", "400", "--fresh", "4", "--out-dir", str(tmp_path)]
    argv += ["--save", str(tmp_path / "results.json")]
    assert bench.main(argv) == 0
    report = json.loads((tmp_path / "results.json").read_text())
    assert report["problems"] == []
    assert sum(report["verdicts"].values()) == 400
    assert all(verdict.endswith("as expected") for verdict in report["verdicts"])
    assert report["rss_mib"]["max"] < 512
    assert (tmp_path / "latency-cpu.png").stat().st_size > 0
    assert (tmp_path / "results-cpu.md").is_file()
