"""The task as the judge runs it: its module (task code, which runs in the judge), its sizes
and tolerance, the reference model, and every input set, drawn from seeds only the judge
knows. Nothing here depends on the candidate."""

from __future__ import annotations

import contextlib
import secrets
from pathlib import Path
from typing import Any

import torch

from kgym.harness import compare, loader, stress
from kgym.harness import device as dev
from kgym.harness.errors import EvaluationFailure
from kgym.harness.kernels import fast_normals
from kgym.harness.loader import TASK_MODULE


def to_device(values: list[Any], device: torch.device) -> list[Any]:
    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def clone_all(values: list[Any]) -> list[Any]:
    return [v.clone() if isinstance(v, torch.Tensor) else v for v in values]


def fresh_seed() -> int:
    """A seed from the OS: no runner can predict it."""
    return secrets.randbits(62)


def refuse_complex(values: list[Any], what: str) -> None:
    """A task of complex tensors ends as the judge's error, not a verdict: its comparison,
    precision, error size, stress sets and weight moves are made for real tensors (a
    comparison through float64 kept the real parts alone, and a judge's crash was the rest)."""
    if any(isinstance(v, torch.Tensor) and v.is_complex() for v in values):
        raise EvaluationFailure(
            "infra_error",
            "init" if what == "weights" else "correctness",
            message=f"the task's {what} are complex tensors, which kgym does not grade",
        )


class TaskSide:
    """The task's module, loaded under the GPU lock (its code may touch the GPU at import)."""

    def __init__(
        self,
        path: Path,
        sizes: str,
        atol: float | None,
        rtol: float | None,
    ) -> None:
        try:
            self.module = loader.load_module(path, TASK_MODULE)
            for attr in ("Model", "get_inputs", "get_init_inputs"):
                if not hasattr(self.module, attr):
                    raise AttributeError(f"the task defines no {attr}")
        except BaseException as exc:  # noqa: BLE001
            raise EvaluationFailure(
                "infra_error", "load", exc, f"the task does not load: {exc}"
            ) from exc
        self.path = path
        self.device = torch.device("cpu")  # the GPU's, named once the task is loaded
        self.sizes = sizes
        self.size_overrides = loader.apply_sizes(self.module, sizes)
        self.tolerance = loader.tolerance_for(self.module, atol, rtol)
        self.reference: Any = None
        self.init_inputs: list[Any] = []
        # Defaults of the Model's signature passed by keyword, and the inputs' numbers drawn
        # instead of the task's, while ``sizes_changed`` says so.
        self.keywords: dict[str, Any] = {}
        self.numbers: dict[int, Any] = {}
        self.init_values: dict[int, Any] = {}  # get_init_inputs()' values moved by place
        # The timed inputs' normals are drawn by the judge's own kernel once it is ready
        # (kernels/fast_normals.py), in every timed path alike, so that a set drawn again from
        # its seed is the same.
        self.judge_normals = False

    def build_reference(self, seed: int) -> None:
        """The task's Model under ``seed``, on the device, without gradients."""
        self.reference, self.init_inputs = self.build_model(seed)
        torch.set_grad_enabled(False)
        if isinstance(self.reference, torch.nn.Module):
            refuse_complex([*self.reference.parameters(), *self.reference.buffers()], "weights")

    def build_model(self, seed: int) -> tuple[Any, list[Any]]:
        """The task's Model under ``seed`` with the arguments ``get_init_inputs`` gives now (the
        task's, or the other sizes' while ``sizes_changed``), on the device, and them."""
        torch.manual_seed(seed)
        init_inputs = list(self.module.get_init_inputs())
        for place, value in self.init_values.items():
            if place < len(init_inputs):
                init_inputs[place] = value
        try:
            torch.manual_seed(seed)
            model = self.module.Model(*init_inputs, **self.keywords)
            if isinstance(model, torch.nn.Module):
                model = model.to(self.device).eval()
        except BaseException as exc:  # noqa: BLE001
            raise EvaluationFailure(
                "infra_error", "init", exc, f"the task's Model fails: {exc}"
            ) from exc
        return model, init_inputs

    def inputs(
        self,
        seed: int,
        into: contextlib.AbstractContextManager[Any] | None = None,
        timed: bool = False,
    ) -> list[Any]:
        """The task's inputs of ``seed``, and the forward's float defaults they leave
        (``stress.forward_defaults``); ``into``: a mode that draws them into a timed slot
        (timing/input_slots.IntoSlot). ``timed``: a timed call's set, whose normals the
        judge's own kernel draws where it is ready."""
        dev.seed_generators(seed, self.device)
        normals = (
            fast_normals.FastNormals(seed, self.device)
            if timed and self.judge_normals
            else contextlib.nullcontext()
        )
        # Factories inside get_inputs() allocate on the evaluation device. The slot's mode is
        # innermost: it hands the normals' mode its ``out=``.
        with torch.device(self.device), normals, into or contextlib.nullcontext():
            inputs = list(self.module.get_inputs())
        inputs += stress.forward_defaults(getattr(self.module, "Model", None), len(inputs))
        for place, value in self.numbers.items():
            if place < len(inputs) and type(inputs[place]) is type(value):
                inputs[place] = value
        return to_device(inputs, self.device)

    def run_reference(
        self,
        inputs: list[Any],
        phase: str,
        keep_inputs: bool = True,
        sync: bool = True,
        model: Any = None,
    ) -> Any:
        """The reference's answer; ``keep_inputs=False`` when the caller no longer needs
        ``inputs`` (the reference may modify them), which saves a copy of large tensors.
        ``sync=False``: the caller synchronises later (and reports a failure found then).
        ``model``: another build of the task's Model (build_model) instead of the reference."""
        try:
            reference = self.reference if model is None else model
            out = reference(*(clone_all(inputs) if keep_inputs else inputs))
            if sync:
                dev.synchronize(self.device)
            return out
        except BaseException as exc:  # noqa: BLE001
            raise EvaluationFailure(
                "infra_error", phase, exc, f"the reference fails: {exc}"
            ) from exc

    def run_model(self, model: Any, inputs: list[Any], keep_inputs: bool = True) -> Any:
        """``model``'s answer (a build of the task's Model) on ``inputs``, as the reference's
        in the correctness phase (ErrorSize's call)."""
        return self.run_reference(inputs, "correctness", keep_inputs=keep_inputs, model=model)

    def mode_free(self, inputs: list[Any], expected: list[Any]) -> bool:
        """Whether the task's answer on ``inputs`` is the same, bit for bit, with its model in
        training mode, twice, its buffers untouched (no dropout, no batch statistics): then a
        candidate's model may be called in training mode too, and must answer the same."""
        model = self.reference
        if not isinstance(model, torch.nn.Module):
            return False
        buffers = [b.clone() for b in model.buffers()]
        try:
            model.train()
            answers = [compare.flatten(self.run_reference(inputs, "correctness")) for _ in range(2)]
        except EvaluationFailure:
            return False
        finally:
            model.eval()
        same = all(
            all(
                compare.bitwise_equal(a, e) if isinstance(e, torch.Tensor) else a == e
                for a, e in zip(answer, expected)
            )
            for answer in answers
        )
        moved = any(not torch.equal(b, now) for b, now in zip(buffers, model.buffers()))
        if moved:  # put back what a batch norm's training call moved
            with torch.no_grad():
                for b, now in zip(buffers, model.buffers()):
                    now.copy_(b)
        return same and not moved

    def measured_reference(self, inputs: list[Any], model: Any = None) -> tuple[Any, int]:
        """The reference's answer (``model``'s, as ``run_reference``), and (on a GPU) the peak
        of what its call allocated in the judge: a call's working memory, which the
        candidate's runner may hold twice over."""
        if self.device.type != "cuda":
            return self.run_reference(inputs, "correctness", model=model), 0
        torch.cuda.reset_peak_memory_stats(self.device)
        before = torch.cuda.memory_allocated(self.device)
        answer = self.run_reference(inputs, "correctness", model=model)
        return answer, torch.cuda.max_memory_allocated(self.device) - before

    @contextlib.contextmanager
    def sizes_changed(self, changes: dict[str, Any]) -> Any:
        """The task's size constants and the numbers its model is built with set to
        ``changes`` for a while (the other-shape set); a default of the Model's signature
        (``stress.KEYWORD`` + its name) is passed by keyword instead, a value
        ``get_init_inputs()`` returns (``stress.INIT`` + its place) is replaced in its list,
        and a number among the inputs (``stress.INPUT`` + its place) is drawn as given."""
        keywords = stress.keywords_of(changes)
        numbers = stress.inputs_of(changes)
        init_values = stress.init_values_of(changes)
        constants = stress.constants_of(changes)
        saved = {name: getattr(self.module, name) for name in constants}
        saved_keywords, saved_numbers, saved_init = self.keywords, self.numbers, self.init_values
        try:
            for name, value in constants.items():
                setattr(self.module, name, value)
            self.keywords = {**saved_keywords, **keywords}
            self.numbers = {**saved_numbers, **numbers}
            self.init_values = {**saved_init, **init_values}
            yield
        finally:
            self.keywords, self.numbers = saved_keywords, saved_numbers
            self.init_values = saved_init
            for name, value in saved.items():
                setattr(self.module, name, value)
