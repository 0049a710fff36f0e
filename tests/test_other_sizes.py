"""The call at other sizes (stress.other_sizes): the sizes a task's inputs use change, and so do
the sizes and numbers its model is built with, the model built again on both sides."""

from __future__ import annotations

import types
from conftest import run, solution_source
from kgym.harness import stress


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
    assert changes["batch"] % 2 == 1 and changes["batch"] != 6
    assert changes["width"] % 2 == 1 and changes["width"] != 100  # the model's width too
    assert changes["slope"] == 0.1 * stress.FLOAT_ARGUMENT_FACTOR
    assert "kernel" not in changes  # an integer only the model takes chooses an algorithm
    assert "flag" not in changes
    assert stress.init_names(_task()) & set(changes) == {"width", "slope"}


def test_a_declared_size_only_the_model_takes_changes_too() -> None:
    changes = stress.other_sizes(_task({"batch": 6, "width": 100, "kernel": 3}))
    assert changes["kernel"] not in (3,) and changes["kernel"] % 2 == 1


def test_a_scale_baked_into_the_kernel_is_wrong_at_the_other_arguments() -> None:
    honest = solution_source("03_scale_add_mul")
    baked = honest.replace("float(self.scale)", "0.5")
    assert baked != honest
    right = run("03_scale_add_mul", honest, trials=1)
    assert right["status"] == "ok", right
    assert right["correctness"]["input_sets"]["other_shape"]["sizes"]["scale"] == 0.375
    wrong = run("03_scale_add_mul", baked, trials=1)
    assert wrong["status"] == "incorrect", wrong
    assert wrong["correctness"]["input_sets"]["other_shape"]["passed"] is False


def test_a_model_that_refuses_other_arguments_answers_nothing_there() -> None:
    honest = solution_source("03_scale_add_mul")
    refusing = honest.replace(
        "        self.scale = scale\n",
        "        assert scale == 0.5, 'built for the benchmark'\n        self.scale = scale\n",
    )
    assert refusing != honest
    result = run("03_scale_add_mul", refusing, trials=1)
    assert result["status"] == "incorrect", result
    other = result["correctness"]["input_sets"]["other_shape"]
    assert "does not build with other arguments" in other["mismatch"]
