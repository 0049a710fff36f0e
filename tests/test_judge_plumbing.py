"""The judge's plumbing: what a runner may say (protocol, reply schema) and shared memory."""

from __future__ import annotations

import os
import socket
import struct
from typing import Any

import pytest
import torch

from kgym.harness import protocol, reply_schema
from kgym.harness.arena import Arena, ArenaExport
from kgym.harness.layout import SlotLayout, SlotViews


def pair() -> tuple[socket.socket, socket.socket]:
    return socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)


def test_a_reply_round_trips_as_json() -> None:
    judge, runner = pair()
    protocol.send(runner, {"ok": True, "values": {"0": [1.5]}})
    assert protocol.recv_untrusted(judge) == {"ok": True, "values": {"0": [1.5]}}


def test_the_judge_sends_payloads_and_descriptors_to_a_runner() -> None:
    judge, runner = pair()
    r, w = os.pipe()
    protocol.send(judge, {"op": "setup"}, payload={"init_inputs": [3, (4,)]}, fds=[r])
    message, payload, fds = protocol.recv_trusted(runner)
    assert message == {"op": "setup"} and payload == {"init_inputs": [3, (4,)]}
    assert len(fds) == 1
    for fd in (r, w, *fds):
        os.close(fd)


def test_a_runner_may_not_send_a_payload_or_descriptors() -> None:
    judge, runner = pair()
    protocol.send(runner, {"ok": True}, payload={"pickled": "objects"})
    with pytest.raises(protocol.ProtocolError, match="payload"):
        protocol.recv_untrusted(judge)
    judge, runner = pair()
    r, w = os.pipe()
    protocol.send(runner, {"ok": True}, fds=[r])
    with pytest.raises(protocol.ProtocolError):
        protocol.recv_untrusted(judge)
    os.close(r)
    os.close(w)


def test_oversized_and_non_json_replies_are_protocol_errors() -> None:
    judge, runner = pair()
    runner.sendall(protocol.HEADER.pack(protocol.MAX_REPLY_BYTES + 1, 0, 0))
    with pytest.raises(protocol.ProtocolError, match="byte reply"):
        protocol.recv_untrusted(judge)
    judge, runner = pair()
    runner.sendall(protocol.HEADER.pack(5, 0, 0) + b"\xff{x]!")
    with pytest.raises(protocol.ProtocolError, match="not JSON"):
        protocol.recv_untrusted(judge)
    judge, runner = pair()
    body = b"[1, 2]"
    runner.sendall(struct.pack("<IIi", len(body), 0, 0) + body)
    with pytest.raises(protocol.ProtocolError, match="object"):
        protocol.recv_untrusted(judge)


def test_a_closed_runner_is_told_apart_from_a_misbehaving_one() -> None:
    judge, runner = pair()
    runner.close()
    with pytest.raises(protocol.PeerClosed):
        protocol.recv_untrusted(judge)


@pytest.mark.parametrize(
    "reply",
    [
        {"ok": "yes"},
        {"ok": True, "launches": "3"},
        {"ok": True, "values": [[1]]},
        {"ok": True, "values": {"0": ["text"]}},
        {"ok": True, "profile": {"kernels": []}},  # kernels come from the trace, never a reply
        {"ok": True, "torch_ops": {"compute": [1]}},
        {"ok": True, "unknown": 1},
        {"ok": False, "error": {"message": ["a list"]}},
    ],
)
def test_malformed_replies_are_found(reply: dict) -> None:
    assert reply_schema.problems(reply)


def test_wellformed_replies_pass() -> None:
    reply = {
        "ok": True,
        "values": {"0": [1, 2.5, True]},
        "launches": 2,
        "launched": ["relu_kernel"],
        "torch_ops": {"calls": {"linear": 1}, "compute": ["linear"]},
        "findings": [{"rule": "global-state", "severity": "reject", "line": None, "detail": "x"}],
    }
    assert reply_schema.problems(reply) == []


def test_cpu_arena_is_shared_through_its_descriptor() -> None:
    arena = Arena.create(1000, torch.device("cpu"))
    assert arena.export is not None and arena.export.kind == "cpu"
    mapped = Arena.attach(
        ArenaExport("cpu", arena.export.nbytes, fd=os.dup(arena.export.fd)), torch.device("cpu")
    )
    layout = SlotLayout.build([torch.zeros(4, 3), 7], [torch.zeros(4, dtype=torch.float64)], 2)
    again = SlotLayout.from_message(layout.to_message())
    assert again.to_message() == layout.to_message()
    big = Arena.create(layout.slot_bytes * 2, torch.device("cpu"))
    assert big.export is not None
    seen = Arena.attach(
        ArenaExport("cpu", big.export.nbytes, fd=os.dup(big.export.fd)), torch.device("cpu")
    )
    judge_views, runner_views = SlotViews(big, layout), SlotViews(seen, again)
    judge_views.inputs[1][0].copy_(torch.arange(12.0).view(4, 3))
    assert torch.equal(runner_views.inputs[1][0], torch.arange(12.0).view(4, 3))
    assert runner_views.inputs[1][1] == 7
    runner_views.outputs[1][0].fill_(2.0)
    assert torch.equal(judge_views.outputs[1][0], torch.full((4,), 2.0, dtype=torch.float64))
    del judge_views, runner_views
    for a in (seen, big, mapped, arena):
        a.close()


def test_timing_holds_as_many_input_sets_as_memory_allows() -> None:
    from kgym.harness.judge.timing.plan import plan_slots

    gpu = 80 << 30
    small = plan_slots(4 << 20, 70 << 30, 256, gpu)
    assert (small.slots, small.memory_limited, small.note) == (256, False, None)
    # KernelBench level 1 19_ReLU at its native size: 6.4 GB in, 6.4 GB out.
    relu = 2 * 4096 * 393216 * 4
    big = plan_slots(relu, 75 << 30, 256, gpu)
    assert big.slots == 1 and big.memory_limited
    assert big.note is not None and "1 input set(s)" in big.note and "fresh inputs" in big.note
    mid = plan_slots(256 << 20, 70 << 30, 256, gpu)
    assert 1 < mid.slots < 256 and mid.memory_limited and "share" in (mid.note or "")


def test_what_other_jobs_hold_does_not_change_the_calls_per_sample_until_memory_is_short() -> None:
    from kgym.harness.judge.timing.plan import plan_slots

    gpu = 80 << 30
    slot = 128 << 20  # a 06_softmax-sized call: many input sets wanted
    alone = plan_slots(slot, 78 << 30, 256, gpu)
    beside_others = plan_slots(slot, 55 << 30, 256, gpu)
    assert alone.slots == beside_others.slots == int(0.3 * gpu) // (3 * slot)
    # Less than the budget plus the others' reserve free: fewer sets, and the note says why.
    short = plan_slots(slot, 30 << 30, 256, gpu)
    assert 1 <= short.slots < alone.slots
    assert short.note is not None and "other jobs left 30.0 GiB free" in short.note
    assert plan_slots(slot, 1 << 30, 256, gpu).slots == 1


def test_seeded_inputs_are_generated_again_for_checks_only_when_they_come_out_the_same() -> None:
    import random
    from types import SimpleNamespace

    from kgym.harness.judge.timing.plan import COPIES_PER_SLOT_REGENERATED, plan_slots
    from kgym.harness.judge.timing.sampling import inputs_regenerable

    def judge(get_inputs):  # a TaskSide's inputs: the task's inputs under torch's seed
        def inputs(seed: int, timed: bool = False) -> list:
            torch.manual_seed(seed)
            return list(get_inputs())

        return SimpleNamespace(inputs=inputs)

    torch_drawn = judge(lambda: [torch.randn(64, 32), torch.rand(8) > 0.5, 3])
    assert inputs_regenerable(torch_drawn)
    # A NaN in the inputs is still the same bytes.
    assert inputs_regenerable(judge(lambda: [torch.full((4,), float("nan")), torch.randn(4)]))
    elsewhere = judge(lambda: [torch.tensor([random.random() for _ in range(16)])])
    assert not inputs_regenerable(elsewhere)
    # Two copies per slot instead of three: half as many input sets again.
    slot, gpu = 128 << 20, 80 << 30
    kept = plan_slots(slot, 78 << 30, 256, gpu).slots
    regenerated = plan_slots(slot, 78 << 30, 256, gpu, COPIES_PER_SLOT_REGENERATED).slots
    assert regenerated == int(0.3 * gpu) // (2 * slot) and regenerated > kept


def test_the_judges_seeding_leaves_the_generators_as_torch_manual_seed_does() -> None:
    """The judge seeds each input set with ``device.seed_generators`` (torch.manual_seed
    costs ~0.5 ms a call from deep in the judge's stack): the same inputs must follow."""
    from conftest import DEVICE
    from kgym.harness.device import seed_generators

    device = torch.device(DEVICE)
    for seed in (0, 12345, 2**61 + 7):
        torch.manual_seed(seed)
        want = [torch.randn(64), torch.randn(64, device=device), torch.randint(9, (8,))]
        torch.manual_seed(seed + 1)  # something else drawn in between
        torch.randn(3, device=device)
        seed_generators(seed, device)
        got = [torch.randn(64), torch.randn(64, device=device), torch.randint(9, (8,))]
        assert all(torch.equal(a, b) for a, b in zip(want, got))


def test_a_layout_can_be_repeated_for_more_slots() -> None:
    layout = SlotLayout.build([torch.zeros(4, 3), 7], [torch.zeros(4)], 1)
    more = layout.with_slots(5)
    assert more.slots == 5 and more.slot_bytes == layout.slot_bytes
    assert more.inputs == layout.inputs and more.outputs == layout.outputs


def test_each_side_gets_enough_calls_for_a_sample() -> None:
    from kgym.harness.judge.timing.plan import calls_per_sample

    # A 3 ms reference and a 0.5 ms candidate: 4 and 20 calls for a 10 ms sample.
    calls = calls_per_sample({"reference": 3.0, "candidate": 0.5}, 10.0, 256)
    assert calls == {"reference": 4, "candidate": 20}
    # Within the slots the arenas hold, and at least one call.
    assert calls_per_sample({"candidate": 0.001, "reference": 50.0}, 10.0, 64) == {
        "candidate": 64,
        "reference": 1,
    }


def test_a_sample_loses_its_fixed_cost_and_the_output_copy_but_not_everything() -> None:
    from kgym.harness.judge.timing.plan import MIN_SHARE_AFTER_SUBTRACTION, per_call_ms

    # 20 calls in 11 ms, of which 0.8 ms is the sample's fixed cost and 0.02 ms a call's copy.
    assert abs(per_call_ms(11.0, 20, 0.8, 0.02) - (10.2 / 20 - 0.02)) < 1e-12
    # Estimates larger than the sample never leave less than the floor.
    assert per_call_ms(1.0, 1, 5.0, 1.0) == MIN_SHARE_AFTER_SUBTRACTION * 1.0


def _timing_config(**changes: Any) -> Any:
    from kgym.harness.judge.timing.stop_rule import TimingConfig

    job = {
        "warmup_ms": 50,
        "min_samples": 20,
        "max_samples": 200,
        "budget_ms": 4000,
        "target_rel_ci": 0.01,
        "batch_ms": 10,
        "verify_fraction": 0.25,
    }
    config = TimingConfig.from_job(job)
    for name, value in changes.items():
        setattr(config, name, value)
    return config


def test_sampling_stops_where_the_medians_are_within_the_target_and_not_before() -> None:
    """The stop rule (timing.stop_reason): each series' median within the target once
    min_samples are in, checked at every round; the budget once min_samples are in; max_samples always."""
    from kgym.harness.judge.timing.stop_rule import stop_reason

    steady = {"reference": [1.0 + 0.001 * (i % 3) for i in range(40)]}
    steady["candidate"] = [2.0 + 0.002 * (i % 3) for i in range(40)]
    noisy = {"reference": steady["reference"], "candidate": [1.0 + (i % 2) for i in range(40)]}

    def first(samples: dict[str, list[float]], config: Any, elapsed_ms: float = 0.0) -> tuple:
        for rounds in range(1, 41):
            prefix = {name: values[:rounds] for name, values in samples.items()}
            reason = stop_reason(config, rounds, elapsed_ms, prefix)
            if reason is not None:
                return rounds, reason
        return None, None

    config = _timing_config()
    assert first(steady, config) == (20, "converged")  # not before min_samples
    assert first(noisy, config) == (None, None)  # a median 50% wide never converges
    assert first(noisy, config, elapsed_ms=5000.0) == (20, "budget")
    assert first(noisy, _timing_config(max_samples=30)) == (30, "max_samples")
    # Half the first 12 candidate samples 10% slower: its median's interval is within 1% only
    # from round 24 on, and the rule, checked at every round, stops there.
    late = {**steady, "candidate": [2.0 + 0.2 * (i % 2) for i in range(12)] + [2.0] * 28}
    assert first(late, config) == (24, "converged")


def test_a_profile_is_read_bounded_and_typed() -> None:
    from kgym.harness.judge.profile import MAX_KERNELS, OTHER_KERNELS, reported_kernels

    reported = {
        "kernels": [
            {"name": "k" * 1000, "total_ms": 1.5, "calls": 3},
            "not an object",
            {"name": "negative", "total_ms": -1.0, "calls": 1},
            {"name": "nan", "total_ms": float("nan"), "calls": 1},
            {"name": "inf", "total_ms": float("inf"), "calls": 1},
            {"name": "text", "total_ms": "fast", "calls": 1},
            {"name": "huge count", "total_ms": 0.5, "calls": 1e400},
            {"name": "no calls", "total_ms": 0.25},
        ]
    }
    got = list(reported_kernels(reported))
    assert got == [("k" * 200, 1.5, 3), ("no calls", 0.25, 0)]
    assert list(reported_kernels({"kernels": "x"})) == []
    assert list(reported_kernels(["not", "a", "dict"])) == []
    many = {
        "kernels": [{"name": str(i), "total_ms": 0.1, "calls": 1} for i in range(MAX_KERNELS + 10)]
    }
    assert len(list(reported_kernels(many))) == MAX_KERNELS
    # Many small kernels first do not push a long one out: the longest are kept, the rest
    # summed into one entry that no source declares.
    flood = [{"name": f"tiny{i}", "total_ms": 0.001, "calls": 1} for i in range(MAX_KERNELS)]
    flood.append({"name": "cublas_gemm", "total_ms": 50.0, "calls": 10})
    got = list(reported_kernels({"kernels": flood}))
    assert len(got) == MAX_KERNELS and got[0] == ("cublas_gemm", 50.0, 10)
    assert got[-1][0] == OTHER_KERNELS and got[-1][2] == 2
    assert abs(sum(ms for _, ms, _ in got) - (50.0 + MAX_KERNELS * 0.001)) < 1e-9


def test_a_profile_must_fit_in_the_time_the_judge_measured() -> None:
    from kgym.harness.judge.profile import excess_kernel_time

    measured = [0.9, 1.0, 1.1, 5.0]  # median (upper) 1.1 ms per call
    fits = {"kernels": [{"name": "a", "total_ms": 3 * 1.0, "calls": 3}]}
    assert excess_kernel_time(fits, 3, measured) is None
    # 1.5 x 1.1 + 0.05 = 1.7 ms per call is the most a profile of these calls may claim.
    edge = {"kernels": [{"name": "a", "total_ms": 3 * 1.69, "calls": 3}]}
    assert excess_kernel_time(edge, 3, measured) is None
    forged = {"kernels": [{"name": "a", "total_ms": 3 * 1.0, "calls": 3}] * 2}
    forged["kernels"].append({"name": "b", "total_ms": 3 * 0.5, "calls": 3})
    claimed, per_call = excess_kernel_time(forged, 3, measured) or (0.0, 0.0)
    assert claimed == pytest.approx(2.5) and per_call == pytest.approx(1.1)
    assert excess_kernel_time(forged, 3, []) is None  # nothing measured: nothing to hold it to
    assert excess_kernel_time(forged, 0, measured) is None


def _profile_of(recorded: dict | None, measured_ms: list[float], profile: bool = True) -> Any:
    """An Evaluation reduced to its profile phase, after a timing phase that recorded
    ``recorded`` (the candidate's runner's kernels and the calls they cover)."""
    from types import SimpleNamespace

    from kgym.harness.judge.evaluation import Evaluation
    from kgym.harness.judge.findings import Findings
    from kgym.harness.judge.timeline import Timeline

    ev = Evaluation.__new__(Evaluation)
    ev.job = {"profile": profile}
    ev.device = torch.device("cuda")  # only its type is read
    ev.timing = {"available": True, "samples": {"candidate": measured_ms}}
    ev.recorded_kernels = recorded
    ev.declared = {"triton_kernel"}
    ev.findings = Findings()
    ev.runners = SimpleNamespace(trace={"available": True, "reason": ""})
    ev.timeline = Timeline(SimpleNamespace(phase=lambda name: None))  # type: ignore[arg-type]
    ev.profile_phase()
    return ev


def _recorded(ms_per_call: float, calls: int = 400) -> dict:
    kernels = [
        {"name": "triton_kernel", "total_ms": 0.75 * calls * ms_per_call, "calls": calls},
        {
            "name": "at::native::vectorized_elementwise_kernel",
            "total_ms": 0.25 * calls * ms_per_call,
            "calls": calls,
        },
    ]
    return {"profile": {"kernels": kernels, "copies_ms": 1.0}, "calls": calls}


def test_pr_comes_from_the_kernels_recorded_in_the_timed_calls() -> None:
    measured = [1.0] * 9
    ev = _profile_of(_recorded(1.0), measured)
    assert ev.findings.items == []
    assert ev.profile["available"] and ev.profile["calls_profiled"] == 400
    assert ev.profile["source"] == "the timed calls"
    # Triton is the judge's decision, by the names the candidate's source declares.
    assert [k["triton"] for k in ev.profile["kernels"]] == [True, False]
    assert ev.recorded_kernels is None  # read once


def test_a_record_that_does_not_fit_the_judges_clock_is_a_finding() -> None:
    # 4 ms of kernels per call claimed against 1 ms measured per call.
    ev = _profile_of(_recorded(4.0), [1.0] * 9)
    assert [f["rule"] for f in ev.findings.items] == ["profile-inconsistent"]


def test_no_profile_where_the_kernel_trace_did_not_start_and_the_result_says_why() -> None:
    from types import SimpleNamespace

    ev = _profile_of(_recorded(1.0), [1.0] * 9)
    ev.runners = SimpleNamespace(trace={"available": False, "reason": "no CUPTI here"})
    ev.recorded_kernels = _recorded(1.0)
    ev.profile_phase()
    assert ev.profile == {"available": False, "reason": "no CUPTI here"}


def test_no_profile_without_timed_calls_or_when_the_job_does_not_profile() -> None:
    untimed = _profile_of(None, [])
    assert not untimed.profile["available"]
    assert "timed calls" in untimed.profile["reason"]
    off = _profile_of(_recorded(1.0), [1.0] * 9, profile=False)
    assert off.profile == {"available": False, "reason": "profiling disabled by the job"}
    # No kernel at all in ten timed calls: the trace lost the candidate's launches.
    empty = _profile_of({"profile": {"kernels": []}, "calls": 10}, [1.0] * 9)
    assert not empty.profile["available"]
    assert [f["rule"] for f in empty.findings.items] == ["kernel-trace-incomplete"]


def test_the_quick_verdict_of_timed_checks_never_disagrees_with_the_exact_check() -> None:
    """The timed calls' checks pass certainly-close outputs by a float32 check; whatever it
    passes, the exact float64 check passes, and every verdict stays the same."""
    from kgym.harness.compare import clearly_close, compare_outputs

    gen = torch.Generator().manual_seed(0)
    expected = torch.randn(4096, generator=gen)
    atol = rtol = 1e-3
    bound = atol + rtol * expected.abs()
    cases = {
        "exact": expected.clone(),
        "well inside": expected + 0.5 * bound,
        "at the bound": expected + bound,  # exact check decides: the quick one must not
        "just past": expected + bound * (1 + 1e-5),
        "far off": expected + 1.0,
        "one NaN": expected.clone().index_fill_(0, torch.tensor([7]), float("nan")),
        "one inf": expected.clone().index_fill_(0, torch.tensor([9]), float("inf")),
        "half": (expected + 0.1 * bound).half(),
    }
    for name, actual in cases.items():
        want = expected.to(actual.dtype)
        exact = compare_outputs([actual], [want], atol, rtol)
        quick = compare_outputs([actual], [want], atol, rtol, errors=False)
        assert quick.ok == exact.ok, name
        if clearly_close(actual, want, atol, rtol, True):
            assert exact.ok, name
    assert clearly_close(cases["well inside"], expected, atol, rtol, True)
    assert not clearly_close(cases["at the bound"], expected, atol, rtol, True)
    assert not clearly_close(cases["one NaN"], expected, atol, rtol, True)
    # Inside every element's bound but with a relative L2 error above rtol: not close.
    shifted = expected + 0.9 * atol
    assert compare_outputs([shifted], [expected], atol, 1e-5, relative_l2=False).ok
    assert compare_outputs([shifted], [expected], atol, 1e-5).ok is False
    assert compare_outputs([shifted], [expected], atol, 1e-5, errors=False).ok is False
    # float64 data always takes the exact check.
    assert not clearly_close(expected.double(), expected.double(), atol, rtol, True)


def test_the_exact_check_fails_a_mismatched_infinity_and_reads_the_same_in_any_chunks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An infinite expected value made the bound infinite, so -inf or 0 where +inf was expected
    passed. Matching NaNs and infinities pass; a zero
    expected value counts in the max relative error; the figures do not depend on the chunks;
    matched NaNs and infinities count in neither sum of the relative L2 error."""
    from kgym.harness import compare

    inf, nan = float("inf"), float("nan")
    expected = torch.tensor([1.0, 2.0, 4.0, nan, inf, 0.0, 8.0])
    close = torch.tensor([1.0, 2.5, 4.0, nan, inf, 1e-3, 8.0])
    figures = []
    for chunk in (compare.CHUNK_ELEMENTS, 3):
        monkeypatch.setattr(compare, "CHUNK_ELEMENTS", chunk)
        got = compare.compare_outputs([close], [expected], 1.0, 1e-1)  # L2 error 0.054
        assert got.ok, chunk
        figures.append((got.max_abs_error, got.max_rel_error))
        for wrong in (-inf, 0.0, nan):
            bad = close.clone()
            bad[4] = wrong
            assert not compare.compare_outputs([bad], [expected], 1.0, 1e-1).ok, (chunk, wrong)
            assert not compare.compare_outputs([bad], [expected], 1.0, 0.0).ok, (chunk, wrong)
    assert figures[0] == figures[1]
    assert figures[0][0] == 0.5 and figures[0][1] == pytest.approx(1e-3 / 1e-12)
    # Small values everywhere, all zero in the answer: within atol element by element, but the
    # relative L2 error is 1. A NaN (or an infinity) in both at one place made that error NaN,
    # and the output passed.
    small = torch.full((64,), 1e-4)
    for same in (nan, inf):
        want, got = small.clone(), torch.zeros(64)
        want[5] = got[5] = same
        assert not compare.compare_outputs([got], [want], 1e-2, 1e-2).ok, same
    want[5] = got[5] = 1.0
    assert compare.compare_outputs([want.clone()], [want], 1e-2, 1e-2).ok


def test_the_judge_warms_its_checks_while_the_candidates_first_call_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The warm-up goes between the call's request and its reply: the runner compiles while
    the judge loads its checks' kernels, and the reply is read (findings taken, a rejection
    stopping the job) as for any call."""
    from types import SimpleNamespace

    from kgym.harness.judge import correctness
    from kgym.harness.judge.correctness import GradedCalls
    from kgym.harness.judge.runners import Runners

    events: list[str] = []

    class Findings:
        def take_from_reply(self, reply: dict[str, Any]) -> None:
            events.append("findings")

        def stop_if_rejected(self, phase: str) -> None:
            events.append("stop if rejected")

    class Policy:
        def observe(self, reply: dict[str, Any]) -> None:
            events.append("observe")

    class Handle:
        def send(self, message: dict[str, Any], **kw: Any) -> None:
            events.append(f"send {message['op']}")

        def receive(self) -> dict[str, Any]:
            events.append("receive")
            return {"ok": True, "values": {}}

    runners = Runners(Findings())  # type: ignore[arg-type]
    runners.handles["candidate"] = Handle()  # type: ignore[assignment]
    task = SimpleNamespace(device=torch.device("cpu"))
    graded = GradedCalls(
        task,
        runners,
        None,
        Findings(),
        Policy(),
        None,
        lambda: None,  # type: ignore[arg-type]
    )
    monkeypatch.setattr(correctness.slots, "fill", lambda views, k, inputs: events.append("fill"))
    monkeypatch.setattr(correctness.slots, "answer", lambda views, k, reply: ["answer"])
    reply, answer = graded._candidate_call(
        None,  # type: ignore[arg-type]
        [],
        "compile",
        while_waiting=lambda: events.append("warm"),
    )
    assert (reply["ok"], answer) == (True, ["answer"])
    # Every graded call's reply is observed (the policy holds on each call).
    assert events == [
        "fill",
        "send call",
        "warm",
        "receive",
        "findings",
        "observe",
        "stop if rejected",
    ]


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.bool]
)
def test_the_checks_warm_up_on_any_dtype_a_task_may_use(dtype: torch.dtype) -> None:
    """The warm-up runs the very checks (both comparisons, the bitwise check) on the task's
    dtypes: one it could not run would fail every job's first call on them."""
    from conftest import DEVICE
    from kgym.harness import compare

    if DEVICE == "cuda" and not torch.cuda.is_available():
        pytest.skip("no GPU")
    compare.warm_checks(torch.device(DEVICE), {dtype}, {dtype})


def test_each_input_of_a_slot_is_a_storage_of_its_own() -> None:
    """Nothing about an input's memory tells one call from another: its storage starts at the
    input and holds its bytes alone, whichever slot of whichever arena it lies in."""
    layout = SlotLayout.build([torch.zeros(4, 3), torch.zeros(5)], [torch.zeros(4)], 1)
    arena = Arena.create(layout.slot_bytes * 3, torch.device("cpu"))
    views = SlotViews(arena, layout.with_slots(3))
    for k in range(3):
        for value, nbytes in zip(views.inputs[k], (48, 20)):
            assert value.storage_offset() == 0
            assert value.untyped_storage().nbytes() == nbytes
    views.inputs[2][1].fill_(3.0)  # still the arena's memory
    start = 2 * layout.slot_bytes + layout.inputs[1].offset
    assert torch.equal(arena.bytes[start : start + 20].view(torch.float32), torch.full((5,), 3.0))
    with pytest.raises(ValueError):
        arena.view(arena.nbytes - 4, (2,), torch.float32)
    del views
    arena.close()
