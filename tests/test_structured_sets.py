"""The stress sets of structure real data has and independent draws never do (stress.py):
sorted rows either way, random walks, few levels, probabilities, massive-activation columns,
tiles mostly zeros; and the aliased call's one tensor for every input of one shape."""

from __future__ import annotations

import torch

from kgym.harness import stress
from kgym.harness.judge.correctness import _aliasable


def test_structured_rows_come_in_five_bands_each_of_its_own_kind() -> None:
    x = torch.randn(50, 40)
    stress.derive("structured_rows", [x])
    kinds = set()
    for band in x.split(10):
        steps = band.diff(dim=1)
        if bool((steps >= 0).all()):
            kinds.add("sorted up")
        elif bool((steps <= 0).all()):
            kinds.add("sorted down")
        elif bool((band > 0).all()) and torch.allclose(band.sum(dim=1), torch.ones(10)):
            kinds.add("probabilities")
        elif all(row.unique().numel() <= 16 for row in band):
            kinds.add("levels")
        else:
            kinds.add("walk")
    assert kinds == {"sorted up", "sorted down", "probabilities", "levels", "walk"}


def test_outlier_channels_are_the_same_places_in_every_row() -> None:
    x = torch.randn(64, 128).clamp(-3, 3)
    stress.derive("outlier_channels", [x])
    big = (x.abs() > 3.5).any(dim=0)
    assert 1 <= int(big.sum()) <= 2
    assert bool((x[:, big].abs() > 0).all())


def test_very_sparse_leaves_a_few_values_among_the_zeros() -> None:
    x = torch.randn(256, 256)
    stress.derive("very_sparse", [x])
    share = float((x == 0).float().mean())
    assert stress.VERY_SPARSE_SHARE[0] - 0.01 < share < stress.VERY_SPARSE_SHARE[1] + 0.01
    assert "very_sparse" in stress.ERROR_SIZE_SETS


def test_the_aliased_call_gives_one_tensor_for_every_input_of_one_shape() -> None:
    q, k, v = (torch.randn(2, 8, 16) for _ in range(3))
    assert _aliasable([q, k, v]) == [(0, 1), (0, 2)]  # keys that are the values too
    assert _aliasable([torch.randn(3), torch.randn(4)]) is None


def test_a_checkpoints_weights_lie_on_int8_levels_of_each_output_channel() -> None:
    layer = torch.nn.Linear(40, 7)
    stress.on_int8_levels(layer)
    rows = layer.weight.detach()
    step = rows.abs().amax(dim=1, keepdim=True) / 127
    assert torch.allclose(rows / step, (rows / step).round(), atol=1e-4)
    assert all(row.unique().numel() <= 255 for row in rows)
