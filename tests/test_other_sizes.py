"""The call at other sizes (stress.other_sizes): the sizes a task's inputs use change, and so do
the sizes and numbers its model is built with, the model built again on both sides; the
runner's weak hold on earlier outputs finds a ring of output buffers, not memory handed out
again after its holder let it go."""

from __future__ import annotations

import socket
import types
from pathlib import Path
from typing import Any

import torch

from conftest import run, solution_source
from kgym.harness import stress
from kgym.harness.runner import Runner


def _task(declared: dict[str, int] | None = None) -> types.ModuleType:
    module = types.ModuleType("task_for_test")
    exec(  # noqa: S102 - a task module made for the test
        "batch = 6\nwidth = 100\nkernel = 3\nslope = 0.1\nflag = True\n"
        "def get_inputs():\n    return [batch, width]\n"
        "def get_init_inputs():\n    return [width, kernel, slope, flag]\n",
        module.__dict__,
    )
    if declared is not None:
        module.KGYM_CPU_SIZES = declared
    return module


def test_sizes_the_inputs_use_change_and_floats_the_model_takes_are_scaled() -> None:
    changes = stress.other_sizes(_task())
    assert changes["batch"] != 6 and changes["width"] != 100  # the model's width too
    assert changes["batch"] % 2 != changes["width"] % 2  # one odd, one even
    low, high = stress.FLOAT_ARGUMENT_FACTORS
    assert 0.1 * low <= changes["slope"] <= 0.1 * high
    assert "kernel" not in changes  # an integer only the model takes chooses an algorithm
    assert "flag" not in changes
    assert stress.init_names(_task()) & set(changes) == {"width", "slope"}


def test_the_other_sizes_are_drawn_per_evaluation() -> None:
    """A kernel cannot list the shapes it will be graded at: each size is drawn by the OS,
    odd or even (one of each where several change), between half its own and a quarter
    more, no two alike, the whole at most MAX_GROWTH times as large (a batch of one becomes
    three, the other sizes make up)."""
    import math

    draws = [stress._drawn_sizes({"rows": 13, "cols": 1000}) for _ in range(200)]
    assert len({tuple(d.values()) for d in draws}) > 100
    for d in draws:
        assert d["rows"] % 2 != d["cols"] % 2 and d["rows"] != d["cols"]
        assert 6 <= d["rows"] <= 17 and 500 <= d["cols"] <= 1250 and d["rows"] != 13
        assert d["rows"] * d["cols"] <= stress.MAX_GROWTH * 13 * 1000
    one = [stress._drawn_sizes({"batch": 1, "dim": 4096}) for _ in range(50)]
    assert all(d["batch"] == 3 for d in one)
    assert all(math.prod((d["batch"], d["dim"])) <= stress.MAX_GROWTH * 4096 for d in one)
    assert len({d["dim"] for d in one}) > 10


def test_wide_draws_reach_every_size_up_to_twice_the_task_s() -> None:
    """``other_shape``'s sizes are drawn from 1 to twice the task's, log-uniformly: no band
    around the task's sizes (a batch of one, a width it never has) goes ungraded."""
    draws = [stress._drawn_sizes({"batch": 4096, "dim": 1000}, wide=True) for _ in range(400)]
    batches = [d["batch"] for d in draws]
    assert all(1 <= b <= 2 * 4096 for b in batches)
    assert min(batches) <= 8 and max(batches) > 4096 * 5 // 4  # beyond the near band
    below = sum(b < 2048 for b in batches)
    assert 200 < below < 400  # most of the log range lies below half the task's size
    for d in draws:
        assert d["batch"] % 2 != d["dim"] % 2 and d["batch"] != d["dim"]
        assert d["batch"] * d["dim"] <= stress.MAX_GROWTH * 4096 * 1000
    # A size drawn even stays even where its range holds no even size but its own (a batch
    # of 2 drawn near 1): one draw in nine was all odd, and a kernel coarse at any even size
    # other than the task's was paid there.
    small = [stress._drawn_sizes({"b": 2, "s": 7, "h": 1000}, wide=True) for _ in range(2000)]
    assert all(any(v % 2 == 0 for v in d.values()) for d in small)


def test_a_declared_size_only_the_model_takes_changes_too() -> None:
    changes = stress.other_sizes(_task({"batch": 6, "width": 100, "kernel": 3}))
    assert changes["kernel"] != 3


def test_on_a_gpu_the_other_sizes_are_made_from_the_sizes_the_task_runs_at() -> None:
    """A GPU runs the task at its own sizes (often powers of two): the other sizes are made
    from those, not from the small CPU sizes, so that a row longer than a block meets a
    remainder; a power of two where the CPU size is one too (a head size) becomes a
    smaller power of two, not 16 or less than it."""
    task = _task({"batch": 6, "width": 100})
    task.batch, task.width = 4096, 4096  # not applied: the sizes a GPU runs at
    changes = stress.other_sizes(task)
    assert 2048 <= changes["batch"] <= 5120 and changes["batch"] != 4096
    assert 2048 <= changes["width"] <= 5120 and changes["width"] != 4096
    assert changes["batch"] != changes["width"]
    assert changes["batch"] * changes["width"] <= stress.MAX_GROWTH * 4096 * 4096
    structural = _task({"batch": 6, "width": 64})
    structural.batch, structural.width = 4096, 128
    changes = stress.other_sizes(structural)
    assert changes["width"] in (16, 32, 64) and changes["batch"] != 4096
    head = _task({"batch": 6, "width": 16})
    head.batch, head.width = 4096, 16
    assert stress.other_sizes(head)["width"] == 16  # a tl.dot's least: kept


def test_an_instance_built_with_its_width_meets_other_batches_itself() -> None:
    """The set-up's instance is called at other sizes its inputs alone use (``batch_shape``),
    each such size alone, then all: a layer norm built with its width meets other batches."""
    result = run("08_layer_norm", solution_source("08_layer_norm"), trials=1)
    assert result["status"] == "ok", result
    sets = result["correctness"]["input_sets"]
    alone = sets["batch_shape:batch_size"]
    assert alone["passed"] is True and set(alone["sizes"]) == {"batch_size"}
    assert sets["batch_shape"]["passed"] is True


_RELU_AT_TWO_SCALES = """import torch
import torch.nn as nn

batch_size = 8
dim = 2048

KGYM_CPU_SIZES = {"batch_size": 3, "dim": 40}


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
"""


def test_at_its_own_sizes_a_task_meets_other_sizes_up_to_twice_them_and_near_its_cpu_sizes(
    tmp_path: Path,
) -> None:
    """A task run at sizes other than its CPU sizes (a GPU's; ``--sizes gpu`` here) is called
    at other sizes drawn from 1 to twice the sizes it runs at and at small ones made from its CPU sizes:
    a kernel whose short rows take a path of their own is graded there too."""
    task = tmp_path / "relu_two_scales.py"
    task.write_text(_RELU_AT_TWO_SCALES)
    honest = solution_source("01_relu")
    right = run(task, honest, trials=1, sizes="gpu")
    assert right["status"] == "ok", right
    sets = right["correctness"]["input_sets"]
    own, near_cpu = sets["other_shape"]["sizes"], sets["small_shape"]["sizes"]
    assert 1 <= own["batch_size"] <= 16 and 1 <= own["dim"] <= 4096
    assert own["batch_size"] * own["dim"] <= stress.MAX_GROWTH * 8 * 2048
    assert 1 <= near_cpu["batch_size"] <= 7 and 20 <= near_cpu["dim"] <= 50
    assert sets["small_shape"]["passed"] is True
    assert all(size % 2 == 1 for size in near_cpu.values())  # every count leaves a remainder
    # Wrong only on short rows: the task's sizes pass.
    short_rows_wrong = honest.replace(
        "BLOCK: tl.constexpr):", "BLOCK: tl.constexpr, SHORT: tl.constexpr):"
    ).replace(
        "    y = tl.where(x > 0.0, x, 0.0)", "    y = x if SHORT else tl.where(x > 0.0, x, 0.0)"
    )
    short_rows_wrong = short_rows_wrong.replace(
        "BLOCK=BLOCK,", "BLOCK=BLOCK, SHORT=x.shape[-1] < 100,"
    )
    assert short_rows_wrong != honest
    wrong = run(task, short_rows_wrong, trials=1, sizes="gpu")
    assert wrong["status"] == "incorrect", wrong
    # Met at the small sizes, or at other sizes whose draw made short rows (below 100).
    sets = wrong["correctness"]["input_sets"]
    failed = [(n, v) for n, v in sets.items() if v.get("passed") is False]
    assert len(failed) == 1, sets
    name, verdict = failed[0]
    assert name == "small_shape" or verdict["sizes"]["dim"] < 100, sets
    on_cpu = run(task, honest, trials=1)
    assert "small_shape" not in on_cpu["correctness"]["input_sets"]
    odd = on_cpu["correctness"]["input_sets"]["odd_shape"]
    assert odd["passed"] is True and all(size % 2 == 1 for size in odd["sizes"].values())


def test_a_scale_baked_into_the_kernel_is_wrong_at_the_other_arguments() -> None:
    honest = solution_source("03_scale_add_mul")
    baked = honest.replace("float(self.scale)", "0.5")
    assert baked != honest
    right = run("03_scale_add_mul", honest, trials=1)
    assert right["status"] == "ok", right
    scale = right["correctness"]["input_sets"]["other_shape"]["sizes"]["scale"]
    assert 0.5 * stress.FLOAT_ARGUMENT_FACTORS[0] <= scale <= 0.5 * stress.FLOAT_ARGUMENT_FACTORS[1]
    wrong = run("03_scale_add_mul", baked, trials=1)
    assert wrong["status"] == "incorrect", wrong
    sets = wrong["correctness"]["input_sets"]
    # The first of the calls at other arguments (the two other sizes, and the twin at the
    # task's sizes with the scale changed: drawn in any order) stops the sets.
    assert (sets.get("other_shape") or sets.get("odd_shape") or sets["twin"])["passed"] is False


def test_a_model_that_refuses_other_arguments_answers_nothing_there() -> None:
    honest = solution_source("03_scale_add_mul")
    refusing = honest.replace(
        "        self.scale = scale\n",
        "        assert scale == 0.5, 'built for the benchmark'\n        self.scale = scale\n",
    )
    assert refusing != honest
    result = run("03_scale_add_mul", refusing, trials=1)
    assert result["status"] == "incorrect", result
    sets = result["correctness"]["input_sets"]
    # The first of the calls at other arguments (drawn in any order: the two other sizes, and
    # the twin at the task's sizes with the scale changed) stops the sets.
    other = sets.get("other_shape") or sets.get("odd_shape") or sets["twin"]
    assert "does not build with other arguments" in other["mismatch"]


def test_floats_in_a_tuple_or_dict_are_varied_each_by_its_own_factor() -> None:
    """Each float of a tuple by a factor of its own (a symmetric clamp range does not stay
    symmetric), a range in ascending order kept in order, and a config dict's floats too."""
    module = types.ModuleType("task_for_test")
    exec(  # noqa: S102 - a task module made for the test
        "n = 6\nrange_ = (-0.5, 0.5, 3)\nsizes = (3, 4)\nconfig = {'scale': 0.5, 'steps': 2}\n"
        "def get_inputs():\n    return [n]\n"
        "def get_init_inputs():\n    return [range_, sizes, config]\n",
        module.__dict__,
    )
    low, high = stress.FLOAT_ARGUMENT_FACTORS
    ratios = set()
    for _ in range(20):
        changed = stress.float_arguments(module)
        assert set(changed) == {"range_", "config"}  # integers choose shapes: left alone
        lo, hi, count = changed["range_"]
        assert count == 3 and lo < 0 < hi and 0.5 * low <= -lo <= 0.5 * high
        ratios.add(round(lo / hi, 9))
        assert changed["config"]["steps"] == 2
        assert 0.5 * low <= changed["config"]["scale"] <= 0.5 * high
    assert len(ratios) > 1  # not one factor: -h, h does not stay symmetric
    for _ in range(20):
        lo, hi = stress._floats_scaled((0.9, 1.0))
        assert lo <= hi  # a range stays a range


def test_a_float_default_the_task_never_passes_is_varied_by_keyword() -> None:
    module = types.ModuleType("task_for_test")
    exec(  # noqa: S102 - a task module made for the test
        "batch = 6\nhidden = 100\n"
        "class Model:\n"
        "    def __init__(self, hidden, eps=1e-6, flag=True, n=3, *, slope=0.2, zero=0.0):\n"
        "        pass\n"
        "def get_inputs():\n    return [batch, hidden]\n"
        "def get_init_inputs():\n    return [hidden]\n",
        module.__dict__,
    )
    # Floats only (a flag or an integer chooses an algorithm), never 0 (a reference may be
    # undefined away from it).
    assert stress.float_defaults(module) == {"eps": 1e-6, "slope": 0.2}
    changes = stress.other_sizes(module)
    low, high = stress.FLOAT_ARGUMENT_FACTORS
    assert 1e-6 * low <= changes[stress.KEYWORD + "eps"] <= 1e-6 * high
    assert set(stress.keywords_of(changes)) == {"eps", "slope"}


def test_a_forwards_float_default_the_inputs_leave_is_passed_as_an_input() -> None:
    """Passed as an input, a forward's float default is a number the other sizes and the twin
    move (``numbers_changed``); with the numbers before it, since it is passed by place."""

    def defaults(signature: str, passed: int = 1) -> list[Any]:
        scope: dict[str, Any] = {}
        exec(f"class Model:\n    def forward(self, {signature}):\n        pass\n", scope)  # noqa: S102
        return list(stress.forward_defaults(scope["Model"], passed))

    assert defaults("x, temperature=1.0") == [1.0]
    assert defaults("x, k=2, causal=True, scale=0.5, n=3") == [2, True, 0.5]
    assert defaults("x, k=2, causal=True") == []  # no float: nothing a kernel could bake in
    assert defaults("x, scale=0.5", passed=2) == []  # the inputs pass it
    assert defaults("x, mask=None, scale=0.5") == [None, 0.5]  # the mask's default passed too
    assert defaults("x, mask=[], scale=0.5") == []  # no plain value before it: left alone
    assert defaults("x, *, scale=0.5") == []  # keyword-only: not passed by place
    assert defaults("x, zero=0.0") == []  # 0: a reference may be undefined away from it


def test_an_integer_used_as_a_number_moves_to_another_of_its_sign() -> None:
    for value in (1, 2, 3, 7, 100, -1, -5):
        for _ in range(50):
            moved = stress.integer_moved(value)
            assert type(moved) is int and moved not in (0, value)
            assert (moved > 0) == (value > 0)
            assert abs(moved) <= abs(value) + 1


def test_floats_the_model_is_given_by_no_constant_move_by_place() -> None:
    """A literal or an expression among ``get_init_inputs()``' values moves by its place in
    the list; a constant it returns moves by name, once."""
    module = types.ModuleType("task_for_test")
    exec(  # noqa: S102 - a task module made for the test
        "import numpy as np\nhead_dim = 64\nslope = 0.2\n"
        "class Model:\n    def __init__(self, a, b, c, d, e):\n        pass\n"
        "def get_inputs():\n    return [head_dim]\n"
        "def get_init_inputs():\n"
        "    return [head_dim ** -0.5, 2.0, slope, np.float64(0.5), head_dim]\n",
        module.__dict__,
    )
    changes = stress.float_arguments(module)
    assert set(changes) == {"slope", stress.INIT + "0", stress.INIT + "1", stress.INIT + "3"}
    low, high = stress.FLOAT_ARGUMENT_FACTORS
    assert 2.0 * low <= changes[stress.INIT + "1"] <= 2.0 * high
    assert stress.init_values_of(changes) == {
        0: changes[stress.INIT + "0"],
        1: changes[stress.INIT + "1"],
        3: changes[stress.INIT + "3"],
    }
    assert not set(stress.constants_of(changes)) - {"slope"}


def test_a_default_baked_into_the_kernel_is_wrong_and_one_not_taken_is_let_be() -> None:
    honest = solution_source("09_rms_norm")
    # A class that takes no eps refuses a caller's loudly: it is built without it.
    no_keyword = honest.replace(
        "def __init__(self, hidden: int, eps: float = 1e-6):", "def __init__(self, hidden: int):"
    ).replace("self.eps = eps", "self.eps = 1e-6")
    assert no_keyword != honest
    result = run("09_rms_norm", no_keyword, trials=1)
    assert result["status"] == "ok", result
    sets = result["correctness"]["input_sets"]
    assert stress.KEYWORD + "eps" not in sets["other_shape"]["sizes"], sets
    # One that takes it and ignores it: tests/hostile/09_rms_norm__eps_default_baked_in.py.
    right = run("09_rms_norm", honest, trials=1)
    assert right["status"] == "ok", right
    assert stress.KEYWORD + "eps" in right["correctness"]["input_sets"]["other_shape"]["sizes"]


def _runner() -> tuple[Runner, list[socket.socket]]:
    a, b = socket.socketpair()
    return Runner(a, "candidate"), [a, b]


def _outputs(runner: Runner, out: Any) -> str | None:
    return runner._reused_memory(out, [torch.zeros(4)])


def test_a_ring_of_output_buffers_is_found_however_long() -> None:
    runner, sockets = _runner()
    try:
        ring = [torch.zeros(8) for _ in range(3)]
        found = [_outputs(runner, ring[k % 3][:4]) for k in range(6)]
        assert found[:3] == [None, None, None]
        assert all(f is not None and "earlier call" in f for f in found[3:])
    finally:
        for s in sockets:
            s.close()


def test_memory_let_go_may_be_handed_out_again() -> None:
    runner, sockets = _runner()
    try:
        # A fresh output each call: the caching allocator may give the same memory again
        # once the runner's hold on the previous one is let go; that is not a reuse.
        for _ in range(6):
            assert _outputs(runner, torch.empty(1000)) is None
    finally:
        for s in sockets:
            s.close()


def test_the_other_sizes_model_is_moved_off_its_initialisation() -> None:
    """A kernel keyed on freshly initialised weights (inside nn.Linear's bound, a zero bias, a
    norm's ones) meets others at the other sizes; so do a batch norm's running statistics
    (variances stay positive); other buffers (a mask) stay."""
    import torch

    from kgym.harness import stress

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.BatchNorm1d(32))
    model.register_buffer("mask", torch.tril(torch.ones(4, 4)))
    bound = 1 / 64**0.5
    before = {k: v.clone() for k, v in model.state_dict().items()}
    stress.away_from_init(model)
    after = model.state_dict()
    assert float(after["0.weight"].abs().max()) > bound
    assert bool((after["0.bias"] != before["0.bias"]).all())
    assert bool((after["1.weight"] != 1).any()) and bool((after["1.bias"] != 0).any())
    assert bool((after["1.running_mean"] != 0).all())
    var = after["1.running_var"]
    assert bool((var > 0).all()) and float((var.log()).abs().mean()) > 0.3
    assert torch.equal(after["mask"], before["mask"])
    assert torch.equal(after["1.num_batches_tracked"], before["1.num_batches_tracked"])


def test_a_sparse_move_changes_a_few_elements_far() -> None:
    """A sparse move (a pruned or edited weight) changes one to three elements of each float
    parameter by SPARSE_NOISE times its rms, and leaves the rest exactly as they were."""
    import torch

    from kgym.harness import stress

    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(256, 128), torch.nn.BatchNorm1d(128))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    stress.away_from_init(model, sparse=True)
    after = model.state_dict()
    for name in ("0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean"):
        changed = int((after[name] != before[name]).sum())
        assert 1 <= changed <= 3, (name, changed)
    weight = before["0.weight"]
    rms = float(weight.pow(2).mean().sqrt())
    moved = (after["0.weight"] - weight)[after["0.weight"] != weight].abs()
    assert float(moved.min()) >= 0.99 * stress.SPARSE_NOISE * rms  # a stale copy shows
    assert torch.equal(after["1.running_var"], before["1.running_var"])


def test_a_model_whose_names_differ_is_held_to_the_weights_it_could_take() -> None:
    """A candidate whose module names differ from the reference's (``self.fc`` for
    ``self.linear``) takes no weights and is built under the reference's seed: at the other
    sizes it is compared with the reference's initial weights, not the moved ones."""
    renamed = solution_source("12_linear_bias_relu").replace("self.linear", "self.fc")
    result = run("12_linear_bias_relu", renamed, trials=1)
    assert result["status"] == "ok", result.get("correctness")
    assert result["correctness"]["input_sets"]["other_shape"]["passed"] is True


def test_a_call_at_other_sizes_is_not_held_to_what_tf32_itself_misses() -> None:
    """At other sizes of one row, a linear's one unclipped output can be a sum cancelled near
    zero: an honest tf32 kernel (operands cut as a tensor core cuts them) misses the relative
    L2 bound there, and so does the judge's own tf32 answer, so that bound is not held on the
    call; every element still is (one off by more than atol is refused), and so is every
    bound on a task tf32 does not change or whose tolerance tf32 does not meet."""
    from kgym.harness import compare
    from kgym.harness.judge.other_sizes import OtherSizes

    torch.manual_seed(8)
    linear = torch.nn.Linear(34, 3)
    x = torch.randn(1, 34)
    with torch.no_grad():
        expected = [torch.relu(linear(x))]
        with stress.Tf32Operands(stress.tf32_cut):
            honest = [torch.relu(linear(x))]
    verdict = compare.compare_outputs(honest, expected, 0.01, 0.01)
    assert not verdict.ok and "relative L2" in (verdict.mismatch or "")

    def run_reference(inputs: list[Any], phase: str, model: Any = None) -> Any:
        with torch.no_grad():
            return torch.relu(model(*inputs))

    task = types.SimpleNamespace(
        tolerance=types.SimpleNamespace(atol=0.01, rtol=0.01), run_reference=run_reference
    )
    judge = types.SimpleNamespace(tf32_exact=False, tf32_meets_task=True, task=task)

    def refused(answer: list[Any]) -> str | None:
        seen = compare.compare_outputs(answer, expected, 0.01, 0.01)
        return OtherSizes._refused(judge, seen, answer, expected, [x], linear)

    assert refused(honest) is None
    one_off = [honest[0].clone()]
    one_off[0][0, 1] += 0.02
    assert "[0, 1]" in (refused(one_off) or "")
    assert refused([torch.full_like(honest[0], float("nan"))]) is not None
    judge.tf32_meets_task = False
    assert refused(honest) == verdict.mismatch
    judge.tf32_meets_task, judge.tf32_exact = True, True
    assert refused(honest) == verdict.mismatch
