"""The judge's build names its code: a cache key or a resumed run holding it never meets a
verdict an older judge made."""

from __future__ import annotations

from pathlib import Path

from kgym.build import digest_of, judge_build


def test_the_digest_follows_every_file_but_pythons_caches(tmp_path: Path) -> None:
    (tmp_path / "harness").mkdir()
    (tmp_path / "harness" / "judge.py").write_text("LIMIT = 3\n")
    first = digest_of(tmp_path)
    (tmp_path / "harness" / "__pycache__").mkdir()
    (tmp_path / "harness" / "__pycache__" / "judge.cpython-311.pyc").write_bytes(b"\0")
    assert digest_of(tmp_path) == first
    (tmp_path / "harness" / "judge.py").write_text("LIMIT = 2\n")
    assert digest_of(tmp_path) != first
    assert len(judge_build()) == 16 and judge_build() == judge_build()
