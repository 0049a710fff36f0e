"""The decoy check's scans of a whole source run in chunks (ablation._first_equal, _nearest):
they find what one scan of the whole finds, with temporaries bounded by a chunk, which the
candidate's runner is charged for."""

from __future__ import annotations

import pytest
import torch

from kgym.harness import ablation


@pytest.mark.parametrize("chunk_bytes", [16, 400, 64 << 20])
def test_chunked_scans_find_what_a_whole_scan_finds(
    chunk_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ablation, "NOISE_CHUNK_BYTES", chunk_bytes)
    monkeypatch.setattr(ablation, "EQUAL_SCAN_BYTES", chunk_bytes)
    generator = torch.Generator().manual_seed(7)
    source = torch.randn(5000, generator=generator)
    source[torch.rand(5000, generator=generator) < 0.7] = 0.0  # a value held almost everywhere
    source[17] = float("inf")
    for value in (source[0], torch.tensor(0.0), source[4321], torch.tensor(0.25)):
        whole = (source == value).nonzero().flatten()[:4].tolist()
        assert ablation._first_equal(source, value, 4) == whole
        distance = (source - value).abs()
        distance = torch.where(torch.isfinite(distance), distance, float("inf"))
        nearest = ablation._nearest(source, value, 16)
        assert len(nearest) == 16 and len(set(nearest)) == 16
        # Ties may be broken otherwise; the distances are the whole scan's 16 nearest.
        expected = torch.topk(distance, 16, largest=False).values
        assert torch.equal(distance[nearest], expected)
    assert sorted(ablation._nearest(source[:3], source[0], 16)) == [0, 1, 2]
