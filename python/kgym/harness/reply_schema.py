"""What a runner's reply may contain: the judge checks every reply against this before reading
it, so that a hostile reply can only be a protocol violation, never an error in the judge (an
``infra_error`` would excuse the candidate from its reward)."""

from __future__ import annotations

from typing import Any

# A decoy call's reply names the ablated launches the check could not read (ablation.py), the
# first few, each with its error cut to a length.
UNCHECKED_REPORTED = 4
UNCHECKED_CHARS = 200

NUMBER = (int, float)


def _is_list_of(value: Any, kinds: tuple[type, ...], limit: int = 100_000) -> bool:
    return (
        isinstance(value, list)
        and len(value) <= limit
        and all(
            isinstance(v, kinds)
            and not isinstance(v, bool)
            or (bool in kinds and isinstance(v, bool))
            for v in value
        )
    )


def _findings_ok(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(f, dict) and all(isinstance(v, (str, int, type(None))) for v in f.values())
        for f in value
    )


def _values_ok(value: Any) -> bool:
    if isinstance(value, dict):
        return all(
            isinstance(k, str) and _is_list_of(v, (int, float, bool)) for k, v in value.items()
        )
    return _is_list_of(value, (int, float, bool))


CHECKS = {
    "ok": lambda v: isinstance(v, bool),
    "kind": lambda v: isinstance(v, str),
    "detail": lambda v: isinstance(v, str),
    "compile_error": lambda v: isinstance(v, bool),
    "error": lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
    "values": _values_ok,
    "held_ms": lambda v: isinstance(v, float) and 0.0 <= v < 2000.0,
    "launches": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "strided_timed_outputs": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
    "launched": lambda v: _is_list_of(v, (str,)),
    "kernel_origins": lambda v: (
        isinstance(v, dict)
        and all(
            isinstance(k, str)
            and isinstance(places, list)
            and len(places) <= 16
            and all(
                isinstance(x, list)
                and len(x) == 2
                and isinstance(x[0], str)
                and isinstance(x[1], int)
                and not isinstance(x[1], bool)
                for x in places
            )
            for k, places in v.items()
        )
    ),
    "ablated_launches": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "copying_launches": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "nudged_elements": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "unchecked_launches": lambda v: (
        _is_list_of(v, (str,), UNCHECKED_REPORTED) and all(len(x) <= UNCHECKED_CHARS for x in v)
    ),
    "torch_ops": lambda v: (
        isinstance(v, dict)
        and _is_list_of(v.get("compute", []), (str,))
        and _is_list_of(v.get("in_launch", []), (str,))
        and isinstance(v.get("calls", {}), dict)
    ),
    "dot_precision": lambda v: (
        isinstance(v, dict)
        and isinstance(v.get("source", ""), str)
        and _is_list_of(v.get("products", []), (str,))
        and _is_list_of(v.get("values", []), (str,))
        and isinstance(v.get("pointers_from_integers", False), bool)
        and isinstance(v.get("inline_assembly", False), bool)
    ),
    "findings": _findings_ok,
    "weights_copied": lambda v: isinstance(v, bool),
    "weights_narrowed": lambda v: _is_list_of(v, (str,), limit=4096),
    "triton_functions": lambda v: _is_list_of(v, (str,)),
    "precompile": lambda v: (
        v is None
        or isinstance(v, dict)
        and all(isinstance(k, str) and isinstance(x, (str, int, float, bool)) for k, x in v.items())
    ),
}


def problems(reply: dict[str, Any]) -> list[str]:
    """The keys of ``reply`` that are unknown or of the wrong shape (empty: a valid reply)."""
    if not isinstance(reply.get("ok"), bool):
        return ["ok"]
    return [key for key, value in reply.items() if key not in CHECKS or not CHECKS[key](value)]
