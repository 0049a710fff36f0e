"""kgym.rewards: reward specs, Result-based rewards and Kernel Coder's rewards vs references."""

from __future__ import annotations

import copy
import difflib
import json
import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgym import rewards
from kgym.rewards import RewardSpec

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
STATUSES = ["ok", "rejected", "compile_error", "runtime_error", "incorrect", "timeout", "crashed"]


def make_result(
    *,
    status="ok",
    compiled=True,
    correct=True,
    hacked=False,
    speedup=1.5,
    speedup_vs_compile=None,
    pr=0.7,
    timing=True,
    profile=True,
    findings=(),
):
    return {
        "schema_version": 1,
        "status": status,
        "compiled": compiled,
        "correct": correct,
        "hacked": hacked,
        "findings": [
            {"rule": f"rule_{i}", "severity": sev, "line": i, "detail": ""}
            for i, sev in enumerate(findings)
        ],
        "timing": {
            "available": timing,
            "speedup": speedup if timing else None,
            "speedup_ci": [speedup, speedup] if timing and speedup else None,
            "speedup_vs_compile": speedup_vs_compile if timing else None,
        },
        "profile": {"available": profile, "triton_share": pr if profile else None},
    }


# ------------------------------------------------------------------------------------------------
# Reference rewards (docs/rl-maths.md, written plainly)


def ref_dr_kernel(r, w=(1.0, 1.0, 1.0), cap=3.0, hack_pen=0.0, warn_pen=0.0):
    honest = (
        not r["hacked"]
        and r["status"] != "rejected"
        and not any(f["severity"] == "reject" for f in r["findings"])
    )
    c = 1.0 if r["correct"] and honest else 0.0
    sp = r["timing"]["speedup"] if r["timing"]["available"] else None
    pr = r["profile"]["triton_share"] if r["profile"]["available"] else None
    speed = w[1] * min(sp, cap) if c and sp is not None else 0.0
    prof = w[2] * pr if c and pr is not None else 0.0
    warns = sum(f["severity"] == "warn" for f in r["findings"])
    pen = (0.0 if honest else hack_pen) + warn_pen * warns
    return w[0] * c + speed + prof - pen


def ref_staged(r, w=(0.1, 0.3, 1.0), cap=3.0, transform="linear"):
    honest = (
        not r["hacked"]
        and r["status"] != "rejected"
        and not any(f["severity"] == "reject" for f in r["findings"])
    )
    if not honest:
        return 0.0
    total = w[0] * (r["compiled"] or r["correct"]) + w[1] * r["correct"]
    sp = r["timing"]["speedup"] if r["timing"]["available"] else None
    if r["correct"] and sp is not None:
        capped = min(sp, cap)
        total += w[2] * (capped if transform == "linear" else math.log2(capped))
    return total


@st.composite
def results(draw):
    timing = draw(st.booleans())
    profile = draw(st.booleans())
    return make_result(
        status=draw(st.sampled_from(STATUSES)),
        compiled=draw(st.booleans()),
        correct=draw(st.booleans()),
        hacked=draw(st.booleans()),
        speedup=draw(st.floats(0.01, 20.0)) if timing else None,
        pr=draw(st.floats(0.0, 1.0)) if profile else None,
        timing=timing,
        profile=profile,
        findings=draw(st.lists(st.sampled_from(["warn", "reject"]), max_size=3)),
    )


@SETTINGS
@given(
    results(),
    st.tuples(st.floats(0, 3), st.floats(0, 3), st.floats(0, 3)),
    st.floats(0.5, 10),
    st.floats(0, 2),
    st.floats(0, 1),
)
def test_dr_kernel_matches_reference(result, weights, cap, hack_pen, warn_pen):
    spec = RewardSpec(
        {
            "kind": "dr_kernel",
            "weights": dict(zip(["correct", "speedup", "profile"], weights, strict=True)),
            "cap": cap,
            "penalties": {"hacked": hack_pen, "warning": warn_pen},
        }
    )
    got = spec(result)
    assert got.valid
    assert got.total == pytest.approx(ref_dr_kernel(result, weights, cap, hack_pen, warn_pen))
    assert got.total == pytest.approx(sum(got.terms.values()))
    if result["hacked"] or result["status"] == "rejected":
        assert got.terms["speedup"] == 0.0 and got.terms["profile"] == 0.0


@SETTINGS
@given(results(), st.sampled_from(["linear", "log2"]), st.floats(1.0, 10.0))
def test_staged_matches_reference(result, transform, cap):
    spec = RewardSpec({"kind": "staged", "speedup_transform": transform, "cap": cap})
    assert spec(result).total == pytest.approx(ref_staged(result, cap=cap, transform=transform))


def test_batch_equals_single_and_infra_is_invalid():
    batch = [
        make_result(),
        make_result(correct=False, status="incorrect"),
        make_result(hacked=True),
    ]
    infra = make_result(status="infra_error", correct=False, timing=False, profile=False)
    batch.append(infra)
    spec = RewardSpec({"kind": "dr_kernel"})
    out = spec.batch(batch)
    for i, r in enumerate(batch):
        one = spec(r)
        assert out.totals[i] == one.total
        assert out.valid[i] == one.valid
        for k, v in one.terms.items():
            assert out.terms[k][i] == v
    assert list(out.valid) == [True, True, True, False]
    assert spec(infra).reason.startswith("infra_error")
    # Results as JSON text work too
    assert spec(json.dumps(batch[0])).total == out.totals[0]


def test_missing_timing_on_cpu_and_policies():
    cpu = make_result(timing=False, profile=False)
    assert RewardSpec("dr_kernel")(cpu).total == 1.0
    assert math.isnan(RewardSpec("dr_kernel")(cpu).metrics["speedup"])
    assume = RewardSpec({"kind": "dr_kernel", "missing_speedup": 1.0, "missing_profile": 0.5})
    assert assume(cpu).total == 2.5
    with pytest.raises(ValueError, match="timing.speedup: not available"):
        RewardSpec({"kind": "dr_kernel", "missing_speedup": "error"})(cpu)
    compile_spec = RewardSpec({"kind": "dr_kernel", "speedup_source": "compile"})
    assert compile_spec(make_result(speedup=2.0, speedup_vs_compile=1.25, pr=0.0)).total == 2.25


def test_kernel_coder_and_composite():
    completion = "plan</think>\n```python\nimport triton\nx = 1\n```"
    reference = "import triton\ny = 2\n"
    code = "import triton\nx = 1"
    sim = difflib.SequenceMatcher(None, code, reference, autojunk=False).ratio()
    got = RewardSpec("kernel_coder")(completion=completion, reference=reference)
    assert got.total == 1.0 + sim
    assert got.metrics == {"format": 1.0, "similarity": sim}
    comp = RewardSpec(
        {
            "kind": "composite",
            "terms": [
                {"name": "kc", "weight": 0.5, "spec": {"kind": "kernel_coder"}},
                {"name": "speed", "spec": {"kind": "dr_kernel"}},
            ],
        }
    )
    r = make_result(speedup=2.0, pr=0.5)
    got = comp(r, completion=completion, reference=reference)
    assert got.total == pytest.approx(0.5 * (1.0 + sim) + 3.5)
    assert set(got.terms) == {
        "kc.format",
        "kc.similarity",
        "speed.correct",
        "speed.speedup",
        "speed.profile",
        "speed.penalty",
    }
    out = comp.batch([r, r], completions=[completion, "no think"], references=reference)
    assert out.totals[0] == pytest.approx(got.total)
    with pytest.raises(ValueError, match="needs the completion"):
        RewardSpec("kernel_coder")(make_result())


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"kind": "dr_kernel", "weights": {"speed": 1.0}}, r"weights\.speed: unknown key"),
        ({"kind": "dr_kernel", "cap": "3"}, r"cap: expected a number"),
        ({"kind": "dr_kernel", "cap": -1}, r"cap"),
        ({"kind": "dr_kernel", "cap": True}, r"cap: expected a number"),
        ({"kind": "dr_kernel", "speedup_source": "jit"}, r"speedup_source"),
        ({"kind": "dr_kernel", "missing_profile": 2.0}, r"missing_profile"),
        ({"kind": "dr_kernel", "penalties": {"hacked": -1}}, r"penalties\.hacked"),
        ({"kind": "dr_kernel", "extra": 1}, r"extra: unknown key"),
        ({"kind": "staged", "speedup_transform": "exp"}, r"speedup_transform"),
        ({"kind": "kernel_coder", "autojunk": "no"}, r"autojunk: expected true or false"),
        ({"kind": "kernel_coder", "partial_format": 2}, r"partial_format"),
        ({"kind": "composite", "terms": []}, r"terms"),
        ({"kind": "composite", "terms": [{"spec": {"kind": "bad"}}]}, r"terms\[0\]\.spec\.kind"),
        (
            {
                "kind": "composite",
                "terms": [{"spec": {"kind": "staged"}}, {"spec": {"kind": "staged"}}],
            },
            r"duplicate term name",
        ),
        ({"weights": {}}, r"kind: missing"),
        ({"kind": "dr_kernel", "cap": float("nan")}, r"not plain data"),
    ],
)
def test_spec_errors_name_the_key(spec, message):
    with pytest.raises(ValueError, match=message):
        RewardSpec(spec)


def test_spec_files_and_roundtrip(tmp_path):
    yml = tmp_path / "reward.yaml"
    yml.write_text("reward:\n  kind: dr_kernel\n  cap: 2.5\n  weights: {profile: 0.5}\n")
    spec = rewards.load_reward_spec(yml)
    assert spec.to_dict()["cap"] == 2.5 and spec.to_dict()["weights"]["profile"] == 0.5
    js = tmp_path / "reward.json"
    js.write_text(json.dumps(spec.to_dict()))
    assert RewardSpec(str(js)) == spec
    assert RewardSpec(spec.to_dict()) == spec
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: dr_kernel\ncapp: 1\n")
    with pytest.raises(ValueError, match="capp: unknown key"):
        RewardSpec(bad)
    with pytest.raises(ValueError, match="neither a file nor a kind"):
        RewardSpec(str(tmp_path / "missing.yaml"))


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda r: r.pop("hacked"), r"result\.hacked: missing"),
        (lambda r: r.update(status="great"), r"unknown status"),
        (lambda r: r.update(correct="yes"), r"result\.correct: expected a boolean"),
        (lambda r: r["timing"].update(speedup=-2.0), r"timing\.speedup"),
        (lambda r: r["profile"].update(triton_share=1.2), r"triton_share"),
        (lambda r: r["timing"].pop("available"), r"timing\.available"),
        (lambda r: r["findings"].append({"severity": "fatal"}), r"findings\[0\]\.severity"),
        (lambda r: r["timing"].update(speedup=float("nan")), r"NaN or infinite"),
    ],
)
def test_bad_results_name_the_field(mutate, message):
    r = copy.deepcopy(make_result())
    mutate(r)
    with pytest.raises(ValueError, match=message):
        RewardSpec("dr_kernel")(r)


# ------------------------------------------------------------------------------------------------
# Kernel Coder's format reward: the original Python function, transcribed, as the reference.


def ref_extract_first_code(output_string, code_language_types):
    trimmed = output_string.strip()
    code_match = re.search(r"```(.*?)```", trimmed, re.DOTALL)
    if code_match:
        code = code_match.group(1).strip()
        for code_type in code_language_types:
            if code.startswith(code_type):
                code = code[len(code_type) :].strip()
        return code
    return None


def ref_format_reward(completion, eos_token):
    code = None
    completion = "<think>" + completion
    if eos_token and completion.endswith(eos_token):
        completion = completion[: -len(eos_token)]
    regex = r"^<think>([^<]*(?:<(?!/?think>)[^<]*)*)<\/think>(.*)$"
    match = re.search(regex, completion, re.DOTALL)
    if match is None or len(match.groups()) != 2:
        return 0.0, code
    think_content = match.group(1).strip()
    after_think = match.group(2).strip()
    code = ref_extract_first_code(after_think, ["python"])
    if think_content and code:
        return 1.0, code
    if think_content:
        return 0.5, code
    return 0.0, code


def ref_similarity(prediction, oracle):
    if not oracle or not prediction:
        return 0.0
    return difflib.SequenceMatcher(None, prediction, oracle, autojunk=False).ratio()


fragments = st.sampled_from(
    [
        "<think>",
        "</think>",
        "<",
        ">",
        "/",
        "think",
        "```",
        "```python\n",
        "python",
        "\n",
        " ",
        "\t",
        "\u00a0",
        "\u2003",
        "x = 1",
        "é",
        "中",
        "\U0001f600",
        "<answer>",
        "</answer>",
        "<|eos|>",
        "tl.load(ptr)",
        "`",
    ]
)
completions = st.lists(fragments, max_size=14).map("".join)


@settings(max_examples=600, deadline=None)
@given(completions)
def test_format_reward_matches_kernel_coder(completion):
    score, code = ref_format_reward(completion, "<|eos|>")
    got = rewards.kernel_coder_format(completion, eos_token="<|eos|>")
    assert got.score == score
    assert got.code == code


@settings(max_examples=300, deadline=None)
@given(completions, st.lists(fragments, max_size=8).map("".join))
def test_kernel_coder_total_matches_reference(completion, reference):
    score, code = ref_format_reward(completion, "")
    want = score + ref_similarity(code, reference)
    got = RewardSpec("kernel_coder")(completion=completion, reference=reference)
    assert got.total == want


def test_format_options():
    assert rewards.kernel_coder_format("<think>a</think>```x```", prepend_think=False).score == 1.0
    assert rewards.kernel_coder_format("a</think>```x```", require_answer_tag=True).score == 0.5
    ok = rewards.kernel_coder_format(
        "a</think><answer>```python\nx\n```</answer>", require_answer_tag=True
    )
    assert ok.score == 1.0 and ok.code == "x"
    assert rewards.kernel_coder_format("a</think>", partial_format=0.25).score == 0.25


def test_similarity_helpers():
    a = ["def f():", "    return 1", ""]
    b = ["def f():", "    return 2", ""]
    assert rewards.similarity_lines(a, b) == difflib.SequenceMatcher(None, a, b).ratio()
    assert rewards.matching_blocks("abxcd", "abcd") == [
        tuple(m) for m in difflib.SequenceMatcher(None, "abxcd", "abcd").get_matching_blocks()
    ]
    many = rewards.similarity_many(["abcd", "", "bcde"], "bcde")
    assert isinstance(many, np.ndarray) and list(many) == [0.75, 0.0, 1.0]
    pairs = rewards.similarity_pairs(["ab", "xy"], ["ab", "yx"])
    assert list(pairs) == [1.0, 0.5]
    with pytest.raises(ValueError, match="a has 2 strings but b has 1"):
        rewards.similarity_pairs(["a", "b"], ["a"])
    with pytest.raises(TypeError):
        rewards.similarity(b"bytes", "str")  # type: ignore[arg-type]
