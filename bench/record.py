"""How a benchmark leaves its figures beside it: the whole run as JSON (overwritten), a section
appended to its markdown results file (each run its own section, with its command, machine and
date), and with --json the run printed too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def record(
    json_path: Path, data: dict[str, Any], md_path: Path, lines: list[str], print_json: bool
) -> None:
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(data, indent=1))
    with open(md_path, "a") as f:
        f.write("\n".join(lines) + "\n")
    if print_json:
        print(json.dumps(data))
