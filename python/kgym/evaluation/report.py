"""What a run folder's Results come to: summary.json, report.md and PNG plots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgym.evaluation.attempt import TASK_INPUTS, Attempt
from kgym.evaluation.metrics import fast_curve


def _pct(entry: dict[str, Any] | None) -> str:
    if not entry or entry.get("value") is None:
        return "–"
    ci = entry.get("ci") or [None, None]
    if ci[0] is None:
        return f"{100 * entry['value']:.1f}%"
    return f"{100 * entry['value']:.1f}% [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def _x(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}x"


def markdown(summary: dict[str, Any], config: dict[str, Any]) -> str:
    lines = [
        "# kgym eval report",
        "",
        f"- model: `{config.get('model')}`",
        f"- tasks: {config.get('task_set')} ({len(config.get('tasks') or [])} tasks), "
        f"{config.get('samples')} sample(s) x {config.get('turns')} turn(s)",
        f"- gym options: `{config.get('options')}`",
        f"- started: {config.get('started')}; command: `{config.get('command')}`",
    ]
    for policy, metrics in summary["policies"].items():
        lines += ["", f"## Policy `{policy}`", ""]
        if policy.endswith(TASK_INPUTS):
            lines += [
                "KernelBench's convention for inputs: an attempt wrong only on the judge's stress "
                "sets counts as correct here; it was not timed, so it adds to correct, not to "
                "Fast@p for p > 0.",
                "",
            ]
        if not metrics["timing_available"]:
            lines.append(
                "No timing (kernels ran under Triton's interpreter on a CPU): Fast@p for p > 0 "
                "is not defined; correctness and the integrity verdicts are."
            )
            lines.append("")
        for group, g in metrics["groups"].items():
            ps = list(g["per_turn"][0]["fast"]) if g["per_turn"] else []
            lines += [
                f"### {group}: {g['tasks']} tasks, {g['trajectories']} trajectories, "
                f"{g['attempts']} attempts",
                "",
                "Per turn (95% bootstrap CI over tasks):",
                "",
                "| turn | compiled | correct | "
                + " | ".join(f"Fast@{p}" for p in ps)
                + " | geomean speedup |",
                "| --- | --- | --- | " + " | ".join("---" for _ in ps) + " | --- |",
            ]
            for row in g["per_turn"]:
                lines.append(
                    f"| {row['turn']} | {_pct(row['compile_rate'])} | {_pct(row['correct_rate'])}"
                    f" | "
                    + " | ".join(_pct(row["fast"][p]) for p in ps)
                    + f" | {_x(row['geomean_speedup'])} |"
                )
            lines += [
                "",
                "KernelBench's conventions, per turn: compiled whatever the integrity policy "
                "(a candidate kgym rejected counts, as KernelBench has no such rules); Fast@p "
                "with speedup **>** p (kgym's Fast@p above: >= p, as Dr. Kernel's):",
                "",
                "| turn | compiled (KernelBench) | "
                + " | ".join(f"fast_{p} (>)" for p in ps)
                + " |",
                "| --- | --- | " + " | ".join("---" for _ in ps) + " |",
            ]
            for row in g["per_turn"]:
                kb = row["kernelbench"]
                lines.append(
                    f"| {row['turn']} | {_pct(kb['compile_rate'])} | "
                    + " | ".join(_pct(kb["fast"][p]) for p in ps)
                    + " |"
                )
            lines += [
                "",
                "Best of turns 1..t (per trajectory, its best accepted attempt so far):",
                "",
                "| turns | correct | " + " | ".join(f"Fast@{p}" for p in ps) + " | geomean |",
                "| --- | --- | " + " | ".join("---" for _ in ps) + " | --- |",
            ]
            for row in g["best_of_turns"]:
                lines.append(
                    f"| 1..{row['turn']} | {_pct(row['correct_rate'])} | "
                    + " | ".join(_pct(row["fast"][p]) for p in ps)
                    + f" | {_x(row['geomean_speedup'])} |"
                )
            lines += ["", "| k | " + " | ".join(g["at_k"][next(iter(g["at_k"]))]) + " |"]
            lines.append(
                "| --- | " + " | ".join("---" for _ in g["at_k"][next(iter(g["at_k"]))]) + " |"
            )
            for k, entry in g["at_k"].items():
                lines.append(f"| {k} | " + " | ".join(_pct(v) for v in entry.values()) + " |")
            pr = g["pr"]["accepted_attempts"]
            lines += [
                "",
                "PR (Triton share of kernel time) over accepted attempts: "
                + (
                    f"n={pr['n']}, min {pr['min']:.3f}, quartiles {pr['p25']:.3f} / "
                    f"{pr['median']:.3f} / {pr['p75']:.3f}, max {pr['max']:.3f}"
                    if pr.get("n")
                    else "none profiled"
                ),
                "",
                f"Hacks (rejected by an integrity rule): {g['hacks']['count']} of "
                f"{g['attempts']} attempts"
                + (
                    "; by rule: "
                    + ", ".join(f"`{r}` {n}" for r, n in g["hacks"]["by_rule"].items())
                    if g["hacks"]["by_rule"]
                    else ""
                ),
                "",
            ]
    lines += ["Plots: `plots/` (Fast@p against p per turn, speedups, metrics against turn)."]
    return "\n".join(lines) + "\n"


def plots(summary: dict[str, Any], attempts: list[Attempt], out: Path, policy: str) -> list[Path]:
    """Fast@p against p per turn, the speedup distribution, and metrics against turn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    g = summary["policies"][policy]["groups"]["overall"]
    written = []
    turns = [row["turn"] for row in g["per_turn"]]

    fig, ax = plt.subplots(figsize=(6, 4))
    timed = bool(summary["policies"][policy]["timing_available"])
    # The summary's own figure (the mean over tasks of each task's share of samples, a
    # trajectory that ended early not fast), at every p; without timing only p = 0 is defined.
    ps = [0.0] + [round(0.1 * i, 1) for i in range(5, 31)] if timed else [0.0]
    curves = fast_curve(attempts, len(turns), policy, ps)
    for t in turns:
        if timed:
            ax.step(ps, curves[t], where="post", label=f"turn {t}")
        else:
            ax.plot([0.0], curves[t][:1], marker="o", linestyle="none", label=f"turn {t}")
    if not timed:
        ax.text(
            0.5,
            0.5,
            "no timing: Fast@p for p > 0 is undefined\n(Fast@0, the correct rate, is drawn)",
            ha="center",
            va="center",
            transform=ax.transAxes,
        )
        ax.set_xlim(-0.5, 3.0)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("p (speedup threshold: accepted and speedup >= p)")
    ax.set_ylabel("Fast@p (mean over tasks of\nthe share of samples)")
    ax.set_title(f"Fast@p per turn ({policy})")
    ax.legend()
    ax.grid(alpha=0.3)
    written.append(out / "fast_p.png")
    fig.tight_layout()
    fig.savefig(written[-1], dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    speedups = [a.speedup for a in attempts if a.accepted.get(policy) and a.speedup is not None]
    if speedups:
        ax.hist(speedups, bins=30)
        ax.axvline(1.0, color="k", lw=1)
        ax.set_xlabel("speedup over the PyTorch reference (accepted attempts)")
    else:
        ax.text(0.5, 0.5, "no timed, accepted attempts", ha="center", va="center")
    ax.set_ylabel("attempts")
    ax.set_title("Speedup distribution")
    written.append(out / "speedups.png")
    fig.tight_layout()
    fig.savefig(written[-1], dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    for label, values in (
        ("compiled", [row["compile_rate"]["value"] for row in g["per_turn"]]),
        ("correct", [row["correct_rate"]["value"] for row in g["per_turn"]]),
        ("best-of-turns correct", [row["correct_rate"]["value"] for row in g["best_of_turns"]]),
    ):
        ax.plot(turns, values, marker="o", label=label)
    if "1.2" in (g["per_turn"][0]["fast"] if g["per_turn"] else {}):
        ax.plot(
            turns,
            [row["fast"]["1.2"]["value"] for row in g["per_turn"]],
            marker="o",
            label="Fast@1.2",
        )
    ax.set_xlabel("turn")
    ax.set_ylabel("share")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xticks(turns)
    ax.legend()
    ax.grid(alpha=0.3)
    ax.set_title(f"Metrics against turn ({policy})")
    written.append(out / "turns.png")
    fig.tight_layout()
    fig.savefig(written[-1], dpi=120)
    plt.close(fig)
    return written
