"""Rewards: ``f(Result, reward spec)``, computed by kgym's C++ core (``kgym._core.reward``).

A reward spec is plain data, a dict or a YAML/JSON file::

    from kgym.rewards import RewardSpec

    spec = RewardSpec({"kind": "dr_kernel", "cap": 3.0, "weights": {"profile": 0.5}})
    spec(result).total                   # result: a Result dict (or its JSON text)
    spec.batch(results).totals           # NumPy arrays over a batch

    coder = RewardSpec("kernel_coder")   # a kind name alone means its defaults
    coder(completion=text, reference=triton_code).total

Kinds: ``dr_kernel`` (C + C*min(speedup, cap) + C*PR), ``staged`` (compile, correct, speedup
stages), ``kernel_coder`` (format + difflib similarity) and ``composite`` (a weighted sum of
specs). Every formula, key and default is in ``docs/rl-maths.md``. Unknown keys and bad values
raise ``ValueError`` naming the key path (for example ``weights.speed``).

A hacked or rejected result never earns a positive term; a result with status ``infra_error`` has
no reward: ``valid`` is False and the trainer should drop the sample. Missing timing or profile
(``timing.available`` false, e.g. on a CPU machine) gives a 0 speed or PR term unless the spec's
``missing_speedup`` / ``missing_profile`` say otherwise.

The similarity functions return exactly ``difflib.SequenceMatcher(None, a, b,
autojunk=...).ratio()`` (the same float), many times faster.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np

from kgym import _core

__all__ = [
    "KINDS",
    "BatchRewards",
    "FormatCheck",
    "RewardBreakdown",
    "RewardSpec",
    "compute_reward",
    "compute_rewards",
    "kernel_coder_format",
    "load_reward_spec",
    "matching_blocks",
    "similarity",
    "similarity_lines",
    "similarity_many",
    "similarity_pairs",
]

_core_reward: Any = _core.reward  # type: ignore[attr-defined]

KINDS = ("dr_kernel", "staged", "kernel_coder", "composite")

SpecLike: TypeAlias = "Mapping[str, Any] | str | os.PathLike[str] | RewardSpec"


@dataclass(frozen=True)
class RewardBreakdown:
    """One reward: the total, each weighted term, and the raw measurements behind them."""

    total: float
    valid: bool = True  # False: no reward can be given (infra_error); total is 0
    reason: str = ""
    terms: dict[str, float] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)  # NaN where not measured


@dataclass(frozen=True)
class BatchRewards:
    """Rewards of a batch as arrays: ``terms[name]`` and ``metrics[name]`` are float64 [n]."""

    totals: np.ndarray
    valid: np.ndarray
    terms: dict[str, np.ndarray]
    metrics: dict[str, np.ndarray]


def _read_spec_file(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ValueError(f"reward spec: cannot read {path}: {e}") from e
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"reward spec: {path} is not valid JSON: {e}") from e
    import yaml  # a dependency of kgym; imported here because only files need it

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ValueError(f"reward spec: {path} is not valid YAML: {e}") from e
    # A trainer config may hold the spec under a top-level "reward" key.
    if isinstance(data, Mapping) and "kind" not in data and isinstance(data.get("reward"), Mapping):
        data = data["reward"]
    return data


class RewardSpec:
    """A validated reward spec. Call it on a Result (and/or completion and reference text).

    Args:
        spec: a mapping (``{"kind": ..., ...}``), a path to a YAML or JSON file holding one (or
            holding it under a top-level ``reward`` key), a kind name alone (its defaults), or
            another RewardSpec.
    """

    def __init__(self, spec: SpecLike) -> None:
        if isinstance(spec, RewardSpec):
            self._spec: Any = spec._spec
            return
        if isinstance(spec, str) and spec in KINDS and not Path(spec).exists():
            data: Any = {"kind": spec}
        elif isinstance(spec, str | os.PathLike):
            path = Path(spec)
            if not path.is_file():
                raise ValueError(
                    f"reward spec: {str(spec)!r} is neither a file nor a kind ({', '.join(KINDS)})"
                )
            data = _read_spec_file(path)
        elif isinstance(spec, Mapping):
            data = spec
        else:
            raise TypeError(
                f"reward spec must be a mapping, a file path or a kind name, got {type(spec).__name__}"
            )
        if not isinstance(data, Mapping):
            raise ValueError(f"reward spec: expected a mapping, got {type(data).__name__}")
        try:
            text = json.dumps(data, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise ValueError(f"reward spec: not plain data: {e}") from e
        self._spec = _core_reward.RewardSpec.from_json(text)

    @property
    def kind(self) -> str:
        return str(self._spec.kind)

    def to_dict(self) -> dict[str, Any]:
        """The spec with every default filled in."""
        return dict(json.loads(self._spec.to_json()))

    def __repr__(self) -> str:
        return f"RewardSpec({self.to_dict()!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RewardSpec) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(self._spec.to_json())

    def __call__(
        self,
        result: Mapping[str, Any] | str | None = None,
        *,
        completion: str | None = None,
        reference: str | None = None,
    ) -> RewardBreakdown:
        """The reward of one sample. Result-based kinds need ``result``; ``kernel_coder`` needs
        ``completion`` (the model's text) and ``reference`` (the reference Triton code)."""
        d = self._spec.compute(_result_json(result), completion, reference)
        return RewardBreakdown(
            total=float(d["total"]),
            valid=bool(d["valid"]),
            reason=str(d["reason"]),
            terms={str(k): float(v) for k, v in d["terms"].items()},
            metrics={str(k): float(v) for k, v in d["metrics"].items()},
        )

    def batch(
        self,
        results: Sequence[Mapping[str, Any] | str | None] | None = None,
        *,
        completions: Sequence[str | None] | None = None,
        references: Sequence[str | None] | str | None = None,
    ) -> BatchRewards:
        """Rewards of a batch. ``references`` may be one string shared by every sample."""
        n = next(
            (len(x) for x in (results, completions) if x is not None),
            None if references is None or isinstance(references, str) else len(references),
        )
        if n is None:
            raise ValueError("give results and/or completions (and references)")
        if isinstance(references, str):
            references = [references] * n
        res = None if results is None else [_result_json(r) for r in results]
        totals, valid, term_names, term_values, metric_names, metric_values = (
            self._spec.compute_batch(
                res,
                None if completions is None else list(completions),
                None if references is None else list(references),
            )
        )
        return BatchRewards(
            totals=totals,
            valid=valid,
            terms={name: term_values[:, k] for k, name in enumerate(term_names)},
            metrics={name: metric_values[:, k] for k, name in enumerate(metric_names)},
        )


def _result_json(result: object) -> str | None:
    if result is None or isinstance(result, str):
        return result
    if isinstance(result, bytes):
        return result.decode("utf-8")
    to_dict = getattr(result, "to_dict", None)
    if callable(to_dict):
        result = to_dict()
    if not isinstance(result, Mapping):
        raise TypeError(f"a Result must be a mapping or JSON text, got {type(result).__name__}")
    try:
        return json.dumps(result, allow_nan=False)
    except ValueError as e:
        raise ValueError(f"result: NaN or infinite numbers are not valid in a Result: {e}") from e


def load_reward_spec(spec: SpecLike) -> RewardSpec:
    """Validate a spec given as a mapping, a YAML/JSON file path or a kind name."""
    return RewardSpec(spec)


def compute_reward(
    result: Mapping[str, Any] | str | None,
    spec: SpecLike,
    *,
    completion: str | None = None,
    reference: str | None = None,
) -> RewardBreakdown:
    """The reward of one sample under ``spec`` (see :class:`RewardSpec`)."""
    return RewardSpec(spec)(result, completion=completion, reference=reference)


def compute_rewards(
    results: Sequence[Mapping[str, Any] | str | None] | None,
    spec: SpecLike,
    *,
    completions: Sequence[str | None] | None = None,
    references: Sequence[str | None] | str | None = None,
) -> BatchRewards:
    """Rewards of a batch under ``spec`` (see :meth:`RewardSpec.batch`)."""
    return RewardSpec(spec).batch(results, completions=completions, references=references)


# ------------------------------------------------------------------------------------------------
# Kernel Coder's format check and difflib-exact similarity


@dataclass(frozen=True)
class FormatCheck:
    score: float  # 1 (think + code), partial_format (think only) or 0
    think_ok: bool
    code: str | None  # the first fenced code block after </think>, if any


def kernel_coder_format(
    completion: str,
    *,
    prepend_think: bool = True,
    eos_token: str = "",
    require_answer_tag: bool = False,
    partial_format: float = 0.5,
) -> FormatCheck:
    """Kernel Coder's format reward: a ``<think>...</think>`` block, then a fenced code block.

    The prompt ends with ``<think>``, so by default it is prepended to the completion before
    matching (as Kernel Coder does). ``eos_token`` is stripped from the end when present.
    """
    if not math.isfinite(partial_format):
        raise ValueError("partial_format must be finite")
    score, think_ok, code = _core_reward.kernel_coder_format(
        completion, prepend_think, eos_token, require_answer_tag, partial_format
    )
    return FormatCheck(float(score), bool(think_ok), code)


def similarity(a: str, b: str, *, autojunk: bool = False) -> float:
    """``difflib.SequenceMatcher(None, a, b, autojunk=autojunk).ratio()``, exactly.

    Note the default ``autojunk=False`` (Kernel Coder's setting); difflib's own default is True.
    """
    return float(_core_reward.similarity_ratio(a, b, autojunk))


def similarity_many(candidates: Sequence[str], reference: str, *, autojunk: bool = False) -> Any:
    """The similarity of each candidate against one reference (indexed once), float64 [n]."""
    return _core_reward.similarity_ratio_many(list(candidates), reference, autojunk)


def similarity_pairs(a: Sequence[str], b: Sequence[str], *, autojunk: bool = False) -> Any:
    """The similarity of each pair ``(a[i], b[i])``, float64 [n]."""
    return _core_reward.similarity_ratio_pairs(list(a), list(b), autojunk)


def similarity_lines(a: Sequence[str], b: Sequence[str], *, autojunk: bool = False) -> float:
    """The ratio of two sequences of lines, each line one element (as difflib on lists)."""
    return float(_core_reward.similarity_ratio_lines(list(a), list(b), autojunk))


def matching_blocks(a: str, b: str, *, autojunk: bool = False) -> list[tuple[int, int, int]]:
    """``difflib.SequenceMatcher(None, a, b, autojunk).get_matching_blocks()`` as tuples."""
    return [tuple(m) for m in _core_reward.matching_blocks(a, b, autojunk)]  # type: ignore[misc]
