"""How a benchmark leaves its figures beside it: one markdown results file per machine,
``results-<machine>.md``, which each run overwrites (git keeps the runs before), headed by the
command, the machine, the date and the commit; with --json the run is printed too. A benchmark
of several parts replaces only its part's section (``## PART``) and keeps the others'."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import re
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def gpu_name() -> str:
    """The first GPU's name as nvidia-smi gives it, or "" without one."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.strip().splitlines()[0].strip() if out.strip() else ""


def machine() -> str:
    """The results file's machine name: the GPU's model ("h200" for "NVIDIA H200", "h100" for
    "NVIDIA H100 80GB HBM3"), or "cpu" on a machine without a GPU."""
    name = gpu_name()
    if not name:
        return "cpu"
    model = re.search(r"\b([A-Z]{1,3}\d{2,4}[A-Za-z]?)\b", name.replace("NVIDIA", ""))
    return (model.group(1) if model else re.sub(r"[^a-z0-9]+", "-", name.lower())).lower()


def results_path(here: Path, name: str | None = None) -> Path:
    """``here/results-<machine>.md``: the benchmark's current results on this machine."""
    return here / f"results-{name or machine()}.md"


def commit() -> str:
    """The checkout's commit (with ``+`` when its tracked files differ from it), or "unknown"
    where the tree has no git directory (a copy on a device machine)."""
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "diff", "--quiet", "HEAD"]).returncode
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+" if dirty else "")


def describe_machine() -> str:
    """Cores, memory and GPU in words, for a results file's header."""
    cores = os.cpu_count()
    gpu = gpu_name() or "no GPU"
    return f"{platform.machine()}, {cores} cores, {gpu}"


def run_lines(command: str) -> list[str]:
    """The run that made a file or a part: command, machine, date and commit."""
    date = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    return [
        f"- command: `{command}`",
        f"- machine: {describe_machine()}",
        f"- date: {date}; commit: {commit()}",
    ]


def header(title: str, command: str) -> list[str]:
    """A results file's first lines: what it holds, and the run that made it."""
    return [f"# {title}", "", *run_lines(command), ""]


def record(md_path: Path, lines: list[str], data: dict[str, Any], print_json: bool) -> None:
    """Writes the results file (replacing the run before) and, with --json, prints the run."""
    md_path.parent.mkdir(parents=True, exist_ok=True)
    md_path.write_text("\n".join(lines).rstrip("\n") + "\n")
    if print_json:
        print(json.dumps(data))


def record_part(
    md_path: Path,
    title: str,
    part: str,
    lines: list[str],
    data: dict[str, Any],
    print_json: bool,
) -> None:
    """Replaces the results file's ``## PART`` section by ``lines`` (the section's body, its
    run's lines included), keeping the title and the other parts' sections; a new part goes
    last."""
    text = md_path.read_text() if md_path.exists() else f"# {title}\n"
    chunks = re.split(r"(?m)^(?=## )", text)
    preamble, sections = chunks[0], chunks[1:]
    body = f"## {part}\n\n" + "\n".join(lines).strip("\n") + "\n\n"
    named = [s.splitlines()[0] == f"## {part}" for s in sections]
    if any(named):
        sections[named.index(True)] = body
    else:
        sections.append(body)
    if not preamble.endswith("\n\n"):
        preamble = preamble.rstrip("\n") + "\n\n"
    record(md_path, [preamble + "".join(sections)], data, print_json)
