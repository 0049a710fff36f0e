"""Which entry of a candidate's state takes each of the task's weights (runner._matching_names):
by name where every name and shape matches, else in order by shape and type."""

from __future__ import annotations

import torch
from torch import nn

from kgym.harness.runner import _matching_names, _state


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


def test_the_state_written_in_place_is_named_as_state_dict_names_it_without_its_hooks() -> None:
    model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), _OwnNames())
    model.register_buffer("passing", torch.zeros(2), persistent=False)
    calls: list[str] = []
    model._register_state_dict_hook(lambda *args: calls.append("hook"))
    own = _state(model)
    assert calls == []
    assert list(own) == list(model.state_dict())
    assert own["0.weight"] is model[0].weight  # the parameter itself: written in place


def test_weights_held_in_less_precision_are_named() -> None:
    """A float32 weight loaded into a float16 entry is rounded by the load itself: the runner
    names every such entry (runner.Runner._narrowed), and nothing where the types are as the
    task's or wider."""
    from kgym.harness.runner import Runner

    spec = {"tensors": {"0.weight": (0, [3, 4], "float32"), "0.bias": (64, [3], "float32")}}
    names = {"0.weight": "0.weight", "0.bias": "0.bias"}
    half = nn.Sequential(nn.Linear(4, 3)).half()
    assert Runner._narrowed(half, spec, names) == [
        "0.weight: float32 held as torch.float16",
        "0.bias: float32 held as torch.float16",
    ]
    wide = nn.Sequential(nn.Linear(4, 3)).double()
    assert Runner._narrowed(wide, spec, names) == []
    assert Runner._narrowed(nn.Sequential(nn.Linear(4, 3)), spec, names) == []
    assert Runner._narrowed(half, spec, None) == []
