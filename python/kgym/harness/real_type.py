"""``isinstance`` for what the candidate made, read from the object's real type alone.

Python's ``isinstance(obj, cls)`` falls back to ``obj.__class__`` where the real type does not
match, and a candidate's class may define ``__class__`` as a property: its code then runs
inside the judge's own scans (a scan only the decoy call made told the model which call it
was), and the judge believes whatever type it answers (plain objects passed for float32
parameters, a Python callable for an ``int`` launch argument). ``is_a`` asks ``type()``,
which no Python code can answer, so every module of the harness that looks at the
candidate's objects in its runner uses it instead (``tests/test_real_type.py`` keeps it so).
"""

from __future__ import annotations

from typing import Any


def is_a(value: Any, types: Any) -> bool:
    """Whether ``value``'s real type is ``types`` (a type, a tuple or a union of them) or a
    subclass of one: ``isinstance`` without its ``__class__`` fallback."""
    return issubclass(type(value), types)
