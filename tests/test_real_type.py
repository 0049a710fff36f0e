"""The harness reads the candidate's objects by their real type: ``isinstance`` falls back to
an object's ``__class__``, which a candidate's class may answer with code of its own (a scan
only the decoy call made ran it; fake float32 parameters and an ``int`` that was a Python
callable were believed)."""

from __future__ import annotations

import re
from pathlib import Path

import torch

from kgym.harness.real_type import is_a
from kgym.harness.runner import _pretenders, _state

HARNESS = Path(__file__).resolve().parents[1] / "python" / "kgym" / "harness"
# Every module that looks at the candidate's objects in its runner (or its compilation ahead).
CANDIDATE_SIDE = (
    "ablation",
    "audit",
    "compare",
    "dot_precision",
    "guards",
    "layout",
    "loader",
    "precompile",
    "protocol",
    "runner",
    "stress",
    "torch_ops",
)


class _Pretender:
    """Answers isinstance() as a float32 parameter would, counting how often it was asked."""

    asked = 0
    shape = torch.Size([4])
    dtype = torch.float32

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # noqa: PLW3201 - the attack's own shape
        _Pretender.asked += 1
        return torch.nn.Parameter


def test_no_candidate_side_module_calls_isinstance() -> None:
    for name in CANDIDATE_SIDE:
        source = (HARNESS / f"{name}.py").read_text()
        assert not re.search(r"\bisinstance\(", source), f"{name}.py calls isinstance"


def test_is_a_never_runs_a_class_property() -> None:
    fake = _Pretender()
    before = _Pretender.asked
    assert isinstance(fake, torch.Tensor)  # what the judge used to believe
    assert _Pretender.asked == before + 1
    assert not is_a(fake, torch.Tensor) and not is_a(fake, (int, float, torch.Tensor))
    assert is_a(torch.zeros(1), torch.Tensor) and is_a(True, int)
    assert _Pretender.asked == before + 1


def test_a_fake_parameter_is_named_and_never_read_as_a_weight() -> None:
    model = torch.nn.Linear(4, 4)
    model.add_module("inner", torch.nn.Linear(4, 4))
    # Put where nn.Module's own checks (isinstance, fooled) would let it.
    model.inner._parameters["weight"] = _Pretender()  # type: ignore[assignment]
    asked = _Pretender.asked
    assert _pretenders(model) == ["inner.weight: a _Pretender, not a tensor"]
    assert set(_state(model)) == {"weight", "bias", "inner.bias"}
    assert _Pretender.asked == asked
    assert _pretenders(torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())) == []
