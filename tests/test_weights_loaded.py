"""Which entry of a candidate's state takes each of the task's weights (runner._matching_names):
by name where every name and shape matches, else in order by shape and type."""

from __future__ import annotations

import torch
from torch import nn

from kgym.harness.runner import _matching_names


class _OwnNames(nn.Module):
    """A linear layer's parameters under names of its own, made as nn.Linear makes them."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(3, 4))
        self.bias = nn.Parameter(torch.empty(3))
        self.register_buffer("scratch", torch.zeros(7))


def test_the_same_names_take_the_weights_by_name() -> None:
    state = nn.Sequential(nn.Linear(4, 3)).state_dict()
    assert _matching_names(nn.Sequential(nn.Linear(4, 3)).state_dict(), state) == {
        "0.weight": "0.weight",
        "0.bias": "0.bias",
    }


def test_other_names_take_them_in_order_by_shape_and_extra_entries_stay() -> None:
    state = nn.Sequential(nn.Linear(4, 3)).state_dict()
    assert _matching_names(_OwnNames().state_dict(), state) == {
        "0.weight": "weight",
        "0.bias": "bias",
    }


def test_a_state_with_no_entry_for_some_weight_takes_none() -> None:
    state = nn.Sequential(nn.Linear(4, 3)).state_dict()
    transposed = {"weight_t": torch.empty(4, 3), "bias": torch.empty(3)}
    assert _matching_names(transposed, state) is None
    assert _matching_names({}, state) is None
    assert _matching_names(_OwnNames().state_dict(), {}) is None
