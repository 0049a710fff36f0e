"""The hostile corpus (tests/hostile/): every attack is refused and pays no reward.

Each file is a complete candidate for the built-in task named by its prefix, with a header::

    # attack: what it does and why a naive harness would pay it
    # expect: rejected            (one status, or several separated by '|')
    # rules: torch-compute, ...   (any one of these must be among the reject findings; '-': none)
    # device: any | gpu | cpu     (gpu: only meaningful on a GPU, skipped on the CPU; cpu: a tell
    #                               only the CPU's allocator gives, skipped on a GPU)
    # task: tasks/NAME.py          (optional: a task file beside the corpus, KernelBench-shaped)
    # policy: hybrid               (optional: the torch-compute policy it attacks; default strict)

After every fault (an attack that may crash, hang or fail at run time) the task's honest solution
is evaluated again and must still be accepted: a fault ends only its own child.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from conftest import DEVICE, run, solution_source
from corpus import parse_header
from kgym.rewards import compute_reward

HOSTILE_DIR = Path(__file__).resolve().parent / "hostile"
STATUSES = {"ok", "rejected", "compile_error", "runtime_error", "incorrect", "timeout", "crashed"}
FAULT_STATUSES = {"crashed", "timeout", "runtime_error"}
TIMEOUT_S = 10.0  # for attacks that are expected to hang
DEFAULT_TIMEOUT_S = 300.0  # an attack under the interpreter, beside another worker on 2 cores
# On a GPU, timing runs (briefly) so that attacks aimed at the timed calls are exercised.
GPU_TIMING = {"warmup_ms": 5.0, "min_samples": 6, "max_samples": 12, "budget_ms": 300.0}


@dataclass(frozen=True)
class Attack:
    path: Path
    task_id: str
    description: str
    expect: tuple[str, ...]
    rules: tuple[str, ...]
    device: str
    task_file: Path | None = None
    policy: str = "strict"

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def task(self) -> str | Path:
        return self.task_file or self.task_id

    @property
    def is_fault(self) -> bool:
        return bool(set(self.expect) & FAULT_STATUSES)


def load_attack(path: Path) -> Attack:
    header = parse_header(path)
    rules = header.get("rules", "-").strip()
    return Attack(
        path=path,
        task_id=path.stem.split("__", 1)[0],
        description=header.get("attack", ""),
        expect=tuple(s.strip() for s in header.get("expect", "").split("|") if s.strip()),
        rules=() if rules in ("", "-") else tuple(r.strip() for r in rules.split(",") if r.strip()),
        device=header.get("device", "any"),
        task_file=HOSTILE_DIR / header["task"] if header.get("task") else None,
        policy=header.get("policy", "strict"),
    )


def attacks() -> list[Attack]:
    return [load_attack(p) for p in sorted(HOSTILE_DIR.glob("*__*.py"))]


def rule_catalogue() -> set[str]:
    """Every rule id named in docs/integrity-rules.md (first column of its tables)."""
    doc = Path(__file__).resolve().parents[1] / "docs" / "integrity-rules.md"
    ids: set[str] = set()
    for line in doc.read_text().splitlines():
        if line.startswith("| `"):
            ids.add(line.split("`")[1])
    return ids


def evaluate(attack: Attack) -> dict[str, Any]:
    options: dict[str, Any] = {
        "timeout_s": TIMEOUT_S if "timeout" in attack.expect else DEFAULT_TIMEOUT_S,
        "torch_compute": attack.policy,
    }
    if DEVICE == "cuda":
        # Timing on (conftest turns it off on a GPU): attacks that cheat only once the checks
        # seem over must meet the timed calls' checks.
        options["baseline"] = "eager"
        options.update({f"timing_{key}": value for key, value in GPU_TIMING.items()})
    return run(attack.task, attack.path.read_text(), **options)


@cache
def honest_source(task_id: str) -> str:
    return solution_source(task_id)


def test_corpus_headers_are_well_formed() -> None:
    corpus = attacks()
    assert len(corpus) >= 32
    catalogue = rule_catalogue()
    assert "torch-compute" in catalogue and "report-channel-tampering" in catalogue
    for attack in corpus:
        assert attack.description, f"{attack.name}: no '# attack:' line"
        assert attack.expect and set(attack.expect) <= STATUSES - {"ok"}, attack.name
        assert attack.device in ("any", "gpu", "cpu"), attack.name
        unknown = set(attack.rules) - catalogue
        assert not unknown, f"{attack.name}: rules not in the catalogue: {sorted(unknown)}"
        if "rejected" in attack.expect:
            assert attack.rules, f"{attack.name}: a rejection must name the rules that catch it"
        builtin = Path(__file__).resolve().parents[1] / "tasks" / f"{attack.task_id}.py"
        assert (attack.task_file or builtin).is_file(), attack.name


def caught_as_wrong_answer(attack: Attack, rejects: list[dict]) -> bool:
    return "incorrect" in attack.expect and {f["rule"] for f in rejects} == {"low-precision"}


def accepted_statuses(attack: Attack, rejects: list[dict]) -> set[str]:
    """An answer wrong by more than the task allows is `incorrect` where a compared call shows
    it and `rejected` by `low-precision` where only the error size does; which of the two sees
    it first depends on the evaluation's draw, so either is the same defence working."""
    accepted = set(attack.expect)
    if caught_as_wrong_answer(attack, rejects):
        accepted.add("rejected")
    if "rejected" in accepted and set(attack.rules) == {"low-precision"}:
        accepted.add("incorrect")
    return accepted


@pytest.mark.parametrize("attack", attacks(), ids=lambda a: a.name)
def test_attack_is_not_paid(attack: Attack) -> None:
    if attack.device == "gpu" and DEVICE != "cuda":
        pytest.skip("only meaningful on a GPU")
    if attack.device == "cpu" and DEVICE == "cuda":
        pytest.skip("only meaningful on a CPU")
    result = evaluate(attack)
    status = result["status"]
    rejects = [f for f in result["findings"] if f.get("severity") == "reject"]
    described = (status, [f["rule"] for f in result["findings"]], result.get("error"))
    assert status != "ok", f"PAID: {attack.description} {described}"
    assert result["correct"] is False
    assert status in accepted_statuses(attack, rejects), (
        f"expected {'|'.join(attack.expect)}: {described}"
    )
    if status == "rejected":
        assert result["hacked"] is True
        if attack.rules and not caught_as_wrong_answer(attack, rejects):
            fired = {f["rule"] for f in rejects}
            assert fired & set(attack.rules), (
                f"caught by {sorted(fired)}, expected one of {list(attack.rules)}"
            )
    reward = compute_reward(result, "dr_kernel")
    assert reward.total <= 0.0, reward
    if (attack.is_fault or status in FAULT_STATUSES) and attack.task_file is None:
        # The next evaluation (the task's honest solution) is unaffected by the fault.
        after = run(attack.task_id, honest_source(attack.task_id), trials=2)
        assert after["status"] == "ok", (after["status"], after.get("error"))


def test_one_evaluation_gives_the_verdict_under_both_input_conventions() -> None:
    """A candidate wrong only off the task's input distribution is incorrect under the robust
    default; the same evaluation records that the task's own calls all agreed (what kgym eval
    reports as the task-inputs convention), and --inputs task accepts it."""
    attack = load_attack(HOSTILE_DIR / "leaky_relu_rand__plain_relu.py")
    # Under the default precision policy the error size finds the ReLU on a set whose
    # negatives lie within atol (shifted rand) and rejects it, often before the comparison of
    # a set does; the inputs conventions are what this asks about.
    robust = run(attack.task, attack.path.read_text(), trials=2, precision="tolerant")
    assert robust["status"] == "incorrect", robust.get("error")
    correctness = robust["correctness"]
    assert correctness["mismatch"].startswith("input set "), correctness["mismatch"]
    assert correctness["correct_on_task_inputs"] is True
    assert correctness["passed"] == correctness["trials"]
    task = run(attack.task, attack.path.read_text(), trials=2, inputs="task", precision="tolerant")
    assert task["status"] == "ok", task.get("error")
    assert task["correctness"]["correct_on_task_inputs"] is True
