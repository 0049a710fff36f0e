"""The evaluation options as the C++ core defines them (cpp/kgym/check/options.cpp).

One table holds every option's name, type, default, bounds, choices and help. The Python front
ends derive from it rather than restating it: the ``kgym`` command line's flags, the service
client's accepted keys and the checks of :class:`kgym.check.CheckOptions`."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from kgym import _core


@dataclass(frozen=True)
class OptionInfo:
    name: str
    kind: str  # integer | number | boolean | choice
    default: Any
    min: float | None
    max: float | None
    choices: tuple[str, ...]
    help: str
    service: bool  # accepted in the service's "options"
    job: bool  # a field of a local check (CheckOptions)
    cli: str  # the flag without dashes; "" = none

    @property
    def flag(self) -> str:
        """The command-line flag: a boolean that defaults to true is turned off by --no-X."""
        if self.kind == "boolean" and self.default is True:
            return f"--no-{self.cli}"
        return f"--{self.cli}"


@cache
def option_table() -> tuple[OptionInfo, ...]:
    rows = json.loads(_core.option_table())
    return tuple(
        OptionInfo(
            name=r["name"],
            kind=r["kind"],
            default=r["default"],
            min=r["min"],
            max=r["max"],
            choices=tuple(r["choices"]),
            help=r["help"],
            service=r["service"],
            job=r["job"],
            cli=r["cli"],
        )
        for r in rows
    )


def service_option_names() -> frozenset[str]:
    return frozenset(o.name for o in option_table() if o.service)


def job_option_names() -> frozenset[str]:
    return frozenset(o.name for o in option_table() if o.job)


def _bounded(option: OptionInfo, cast: type[int] | type[float]) -> Any:
    def parse(text: str) -> int | float:
        try:
            value = cast(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a valid {option.kind}") from None
        lo, hi = option.min, option.max
        if lo is not None and hi is not None and not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"must be between {lo:g} and {hi:g}")
        return value

    return parse


def add_cli_arguments(parser: argparse.ArgumentParser, names: set[str] | None = None) -> None:
    """One flag per option that has one (all of them, or those in ``names``). Every flag
    defaults to None: an option not given is left to the core's default, shown in the help."""
    for o in option_table():
        if not o.cli or (names is not None and o.name not in names):
            continue
        shown = "the task's" if o.default is None else o.default
        if o.kind == "boolean":
            on = o.default is not True
            parser.add_argument(
                o.flag,
                dest=o.name,
                action="store_const",
                const=on,
                default=None,
                help=f"turns {'on' if on else 'off'}: {o.help} ({'off' if on else 'on'} by default)",
            )
            continue
        kwargs: dict[str, Any] = {"dest": o.name, "default": None}
        if o.kind == "choice":
            kwargs["choices"] = list(o.choices)
        else:
            kwargs["type"] = _bounded(o, int if o.kind == "integer" else float)
            kwargs["metavar"] = o.cli.upper().replace("-", "_")
        parser.add_argument(f"--{o.cli}", help=f"{o.help} (default {shown})", **kwargs)


def options_from_args(args: argparse.Namespace, service_only: bool = False) -> dict[str, Any]:
    """The options the user gave on the command line (those left out keep their defaults)."""
    out: dict[str, Any] = {}
    for o in option_table():
        if service_only and not o.service:
            continue
        value = getattr(args, o.name, None)
        if value is not None:
            out[o.name] = value
    return out


def markdown_table() -> str:
    """The table as docs/options.md shows it (a test keeps the two equal)."""
    lines = [
        "| option | type | default | allowed | service | flag | meaning |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for o in option_table():
        if o.kind == "choice":
            allowed = " ｜ ".join(f"`{c}`" for c in o.choices)
        elif o.kind == "boolean":
            allowed = "`true` ｜ `false`"
        else:
            allowed = f"{o.min:g} … {o.max:g}"
        default = "the task's" if o.default is None else f"`{json.dumps(o.default)}`"
        service = "yes" if o.service else "no"
        flag = f"`{o.flag}`" if o.cli else "–"
        lines.append(
            f"| `{o.name}` | {o.kind} | {default} | {allowed} | {service} | {flag} | {o.help} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kgym.options", description="Print the evaluation options table."
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    if args.json:
        print(_core.option_table())
    else:
        print(markdown_table(), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
