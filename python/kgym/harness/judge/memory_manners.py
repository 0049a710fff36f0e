"""The manners of memory a graded call's inputs come in that the judge's arena never has: an
offset into a storage of their own, a copy in torch's allocator, one tensor given for two
inputs. Every evaluation makes each once at the task's sizes and once at other sizes
(correctness.py, other_sizes.py); a drawn call may take an offset too."""

from __future__ import annotations

import itertools
import secrets
from typing import Any

import torch

_RANDOM = secrets.SystemRandom()

# Where an offset manner's inputs start into their storages (runner._offset_elements): a few
# elements, a multiple of 64 bytes off the arena's 512, whole leading rows (a micro-batch).
OFFSET_KINDS = ("small", "aligned", "rows")


def offset_manner(kind: str) -> list[Any]:
    """An offset manner of ``kind``, its count drawn: 1-15 elements, 1-31 times 16, 1-3 rows."""
    most = {"small": 15, "aligned": 31, "rows": 3}[kind]
    return [kind, 1 + _RANDOM.randrange(most)]


def aliasable_inputs(inputs: list[Any]) -> list[tuple[int, int]] | None:
    """The first group of float tensor inputs of one shape and type (queries, keys and
    values), by place, as pairs of its first and each other: a call may give one tensor for
    them all (``model(x, x, x)``), which gives any two of them one tensor (keys that are the
    values, as well as queries that are the keys)."""
    groups: dict[tuple[Any, ...], list[int]] = {}
    for index, value in enumerate(inputs):
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            groups.setdefault((tuple(value.shape), value.dtype), []).append(index)
    for places in groups.values():
        if len(places) > 1:
            return [(places[0], other) for other in places[1:]]
    return None


def memory_manners(aliasable: list[tuple[int, int]] | None) -> list[str]:
    """The manners of memory the judge's arena never has (``GradedCalls._manners``), where
    ``aliasable`` (``_aliasable``) are the inputs one tensor may be given for."""
    offsets = [f"offset_{kind}" for kind in OFFSET_KINDS]
    aliased = []
    if aliasable is not None:
        # All of them one tensor, and where three or more share a shape each pair alone
        # (``attn(q, kv, kv)``: a kernel that takes another path only when keys are the
        # values, queries apart, never met q = k = v's call).
        places = sorted({p for pair in aliasable for p in pair})
        aliased = ["aliased"]
        if len(places) >= 3:
            aliased += [f"aliased:{a},{b}" for a, b in itertools.combinations(places, 2)]
    return offsets + ["fresh_inputs"] + aliased


def memory_manner(
    name: str, pristine: list[Any], aliasable: list[tuple[int, int]] | None
) -> dict[str, Any]:
    """The manner of the memory manner ``name`` (``memory_manners``) for a call on
    ``pristine``, whose aliased inputs it makes equal (the runner gives one tensor for both)."""
    if name.startswith("offset_"):
        return {"offset": offset_manner(name.removeprefix("offset_"))}
    if name == "fresh_inputs":
        # Off the arena's 512 bytes where the allocator allows (runner._fresh_copy).
        return {"offset": ["fresh", 2]}
    assert name.startswith("aliased") and aliasable is not None
    pairs = aliasable
    if ":" in name:
        first, second = (int(p) for p in name.split(":")[1].split(","))
        pairs = [(first, second)]
    for first, second in pairs:
        pristine[second] = pristine[first].clone()
    return {"alias": [[first, second] for first, second in pairs]}
