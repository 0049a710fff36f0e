"""The graded calls at sizes other than the task's: the input sets ``other_shape``,
``odd_shape`` or ``small_shape`` (the sizes drawn near those the task runs at, and near its CPU
sizes where it runs at others) and ``twin`` (a second instance at the task's sizes). What the
judge checks about the task's sizes must hold at every size it calls: a kernel exact at the two
shapes a task declares and cheating at any other (a memo, no max subtraction, bfloat16 under
inference mode or after some calls, a packed weight kept stale) meets, after the call there,
the near repeats and, at the odd or small sizes, a drawn third of the stress sets, every owed
manner, moved weights and plain calls of a drawn count (``_calls_at``). A mixin of
``GradedCalls`` (correctness.py), whose state and calls it uses."""

from __future__ import annotations

import functools
import secrets
from typing import Any

import torch

from kgym.harness import compare, stress
from kgym.harness import device as dev
from kgym.harness.errors import EvaluationFailure
from kgym.harness.judge.error_size import ErrorSize
from kgym.harness.judge.near_repeats import NEAR_WHAT, near_inputs
from kgym.harness.judge.runners import failed_reply
from kgym.harness.judge.task import fresh_seed
from kgym.harness.layout import SlotLayout, SlotViews
from kgym.harness.real_type import is_a

_RANDOM = secrets.SystemRandom()
# The near repeats made again after a call at other sizes (``_calls_at``).
NEAR_AT_OTHER_SIZES = ("same", "swap", "one_row", "one_place", "one_sign")
# Of the stress sets, the share made again at the odd or small sizes: one in this many, drawn.
SETS_AT_OTHER_SIZES = 3
# Plain calls there besides: as many as draws of 1 in this many miss (3 on average, no bound).
PLAIN_AT_OTHER_SIZES = 4


class OtherSizes:
    """The calls at other sizes, made by ``GradedCalls`` (its ``task``, ``lender``,
    ``runners``, ``findings``, ``policy``, ``error_size`` and graded calls)."""

    def _other_shapes(self) -> list[str]:
        """The calls at other sizes (input sets): ``other_shape``, drawn near the sizes the
        task runs at, odd or even; and every size odd, so that every count of elements
        leaves a block's remainder: where the task runs at sizes other than the CPU sizes it
        declares (a GPU's own), ``small_shape``, drawn near those (a short row's path, a grid
        smaller than the GPU, which the task's own sizes never take), else ``odd_shape``,
        near the sizes it runs at. And ``twin``: a second instance of the model at the
        task's sizes, with weights of its own, called under ``torch.inference_mode`` (as a
        server calls it), and the set-up's instance called after it: state that instances
        share (a packed weight in a class attribute) or a path taken only under inference
        mode meets a caller's."""
        declared = getattr(self.task.module, "KGYM_CPU_SIZES", None)
        if isinstance(declared, dict) and any(
            getattr(self.task.module, name, value) != value for name, value in declared.items()
        ):
            return ["other_shape", "small_shape", "twin"]
        return ["other_shape", "odd_shape", "twin"]

    def _other_shape_call(self, name: str) -> dict[str, Any]:
        """One call at other sizes of the task (stress.other_sizes), with both models built
        again where a size or a number the model is built with changed: the candidate's from
        the class it set up, with the judge's weights. Where the task's Model does not build or
        run with the changed arguments, only the sizes its inputs alone use change. The
        task's own model and layout are lent again afterwards, for the timed calls."""
        task, layout = self.task, self.layout
        assert layout is not None
        small = getattr(task.module, "KGYM_CPU_SIZES", None) if name == "small_shape" else None
        twin = name == "twin"
        # After the call: at ``other_shape`` the near repeats, at the odd or small sizes all
        # that ``_calls_at`` makes; the twin's is at the task's sizes, which have all of it.
        more = "" if twin else "near" if name == "other_shape" else "all"
        changes = {} if twin else stress.other_sizes(task.module, small, odd=name != "other_shape")
        if not changes and not twin:
            return {"passed": None, "reason": "no size constant the judge can change"}
        built_with = stress.init_names(task.module) & set(changes)
        inputs_only = {k: v for k, v in changes.items() if k not in built_with}
        tries = [changes]
        if built_with and any(getattr(task.module, k) != v for k, v in inputs_only.items()):
            tries.append(inputs_only)
        for sizes in tries:
            rebuild = twin or bool(built_with & set(sizes))
            seed = fresh_seed()
            try:
                with task.sizes_changed(sizes):
                    model, init_inputs = task.build_model(seed) if rebuild else (None, [])
                    if model is not None:
                        stress.away_from_init(model)
                    pristine = task.inputs(fresh_seed())
                    if twin:
                        self.twin_inputs = [
                            v.clone() if is_a(v, torch.Tensor) else v for v in pristine
                        ]
                    answer, working = task.measured_reference(pristine, model)
                    expected = compare.flatten(answer)
                    del answer
            except EvaluationFailure:
                continue
            self._allow_other_sizes(model, working)
            verdict: dict[str, Any] = {"sizes": sizes}
            at = (sizes, model)
            inference = {"inference": True, "grad": False, "grad_inputs": False} if twin else {}
            if model is None:
                return {
                    **verdict,
                    **self._call_at(layout, pristine, expected, at, inference, more),
                }
            failed, copied = self._build_candidate(model, init_inputs, seed, grad=not twin)
            if failed is None and not copied:
                # Its state takes no weights of the reference's (other names): it was built
                # under the reference's seed, with the initial weights, not the moved ones.
                with task.sizes_changed(sizes):
                    model, _ = task.build_model(seed)
                    expected = compare.flatten(
                        task.run_reference(pristine, "correctness", model=model)
                    )
                at = (sizes, model)
            if failed is None:
                calls = self._call_at(layout, pristine, expected, at, inference, more, copied)
                verdict.update(calls)
            else:
                verdict.update(passed=False, mismatch=failed)
            # The set-up's model back, also where a second build failed after a first one.
            self.runners.ask("candidate", {"op": "model", "restore": True}, "correctness")
            return verdict
        return {"passed": None, "reason": "the reference does not run at other sizes"}

    def _allow_other_sizes(self, model: Any, working: int) -> None:
        """The candidate's runner may hold, at the other sizes (about the task's own on a
        GPU), a call's working memory there twice over and the other sizes' model beside its
        set-up's (gpu_memory.py)."""
        watch = self.memory_watch
        if watch is None:
            return
        watch.working_bytes = max(watch.working_bytes, working)
        if model is not None:
            held = [*model.parameters(), *model.buffers()]
            watch.other_model_bytes = max(
                watch.other_model_bytes, sum(t.numel() * t.element_size() for t in held)
            )

    def _build_candidate(
        self, model: Any, init_inputs: list[Any], seed: int, grad: bool = True
    ) -> tuple[str | None, bool]:
        """The candidate's model built with ``init_inputs`` and ``model``'s weights: None or
        why it did not build (an answer it cannot give), and whether it took the weights. It
        is built under another seed than the reference's, so that the weights it is given are
        not the ones its own initialisation made (what ``__init__`` derived from those, a
        packed or transposed copy, goes stale, as it would when a checkpoint is loaded); a
        model whose state takes no weights (other keys or shapes) is built again under the
        reference's seed, its only way to the same parameters."""
        for build_seed in (fresh_seed(), seed):
            weights, fds = self.lender.weights(model)
            spec = {
                "seed": build_seed,
                "init_inputs": init_inputs,
                "weights": weights,
                "grad": grad,
            }
            try:
                reply = self.runners.ask(
                    "candidate", {"op": "model"}, "correctness", payload=spec, fds=fds
                )
            finally:
                self.lender.free_weights()
            self.findings.take_from_reply(reply)
            self.findings.stop_if_rejected("correctness")
            self.policy.observe_weights(reply)
            if not reply.get("ok"):
                message = failed_reply(reply, "init").message
                return f"the model does not build with other arguments: {message}", False
            if reply.get("weights_copied") or weights is None:
                return None, True
        return None, False

    def _call_at(
        self,
        layout: SlotLayout,
        pristine: list[Any],
        expected: list[Any],
        at: tuple[dict[str, Any], Any],
        manner: dict[str, Any],
        more: str = "",
        movable: bool = False,
    ) -> dict[str, Any]:
        """A graded call on ``pristine`` in an arena of its own layout, in ``manner`` where
        it names one, compared with ``expected`` and, on a float32 task, its error's size
        measured (``at``: the sizes and the model, None for the reference, that made
        ``expected``), then with ``more`` the calls there that follow it (``_calls_at``);
        the task's ``layout`` is lent again afterwards."""
        task, lender = self.task, self.lender
        other = SlotLayout.build(pristine, expected, 1)
        views = lender.lend("candidate", other, lender.new_arena("candidate", other))
        self._allow_copies()
        verdict: dict[str, Any] = {}
        # Not these sizes' inputs but the call before's, as they were judged: the task's.
        at_task_sizes = self.last_called, self.last_set
        # One error-size check for every call at these sizes, with the model built for them
        # (precision kept only at the task's is not kept), folded into the evaluation's.
        there = None
        if self.robust and self.error_size is not None:
            there = ErrorSize(
                task.reference if at[1] is None else at[1],
                lambda m, x: task.run_reference(x, "correctness", model=m),
                products=not self.tf32_exact,
            )
        try:
            failed, answer = self._graded_call(views, pristine, fill=False, manner=manner)
            if failed is not None:
                return {"passed": False, "mismatch": failed}
            comparison = compare.compare_outputs(
                answer, expected, task.tolerance.atol, task.tolerance.rtol
            )
            if not comparison.ok:
                return {"passed": False, "mismatch": comparison.mismatch}
            if there is not None:
                with task.sizes_changed(at[0]):
                    self._judge_error(there, pristine, answer)
                verdict["error_ratio"] = there.worst["ratio"] if there.worst else None
            del answer  # views into the arena that the task's layout replaces next
            base_rms = stress.finite_rms(expected)
            failed = None
            if more:
                failed = self._calls_at(views, pristine, at, base_rms, more, movable, there)
        finally:
            if there is not None and self.error_size is not None:
                self.error_size.absorb(there)
            self.last_called, self.last_set = at_task_sizes
            lender.lend("candidate", layout, lender.new_arena("candidate", layout))
        if failed is not None:
            return {"passed": False, "mismatch": failed}
        return {"passed": True, **verdict}

    def _calls_at(
        self,
        views: SlotViews,
        pristine: list[Any],
        at: tuple[dict[str, Any], Any],
        base_rms: float,
        more: str,
        movable: bool,
        there: ErrorSize | None,
    ) -> str | None:
        """After a right call at other sizes, more graded calls there, in a drawn order, each
        compared with the reference there and its error measured: what is checked about the
        task's sizes holds at every size the judge calls, so that a kernel that cheats only
        off the shapes the task declares meets it. ``near``: the near repeats
        (``NEAR_AT_OTHER_SIZES``, each tensor input drawn afresh), each on the call before's
        inputs (a memo there). ``all``: also a third of the stress sets, drawn (a kernel
        wrong on far inputs there), every owed manner (one under inference mode there), the
        model's weights moved twice, written in place and loaded by its own
        ``load_state_dict``, where it was built there and took them (``movable``: a packed
        copy kept stale there), and plain calls of a drawn count with no bound (precision
        dropped after some number of calls there); ``there`` measures their errors. None, or
        what was wrong. Its time is the other sizes' (``correctness_other_sizes``)."""
        task = self.task
        sizes, model = at
        tensors = [i for i, v in enumerate(pristine) if is_a(v, torch.Tensor)]
        steps = [("near", how) for how in NEAR_AT_OTHER_SIZES]
        steps += [("near", f"one_input:{i}") for i in tensors] if len(tensors) >= 2 else []
        owed = self._owed_manners() if more == "all" else {}
        if more == "all":
            names = stress.set_names(stress.InputFacts.of(pristine))
            drawn = _RANDOM.sample(names, -(-len(names) // SETS_AT_OTHER_SIZES))
            steps += [("stress", name) for name in drawn]
            steps += [("manner", name) for name in owed]
            if model is not None and movable and stress.holds_weights(model):
                # Both ways weights change: written in place (an optimizer's step) and
                # loaded by the model's own load_state_dict (a checkpoint).
                steps += [("weights", "in_place"), ("weights", "checkpoint")]
            while _RANDOM.randrange(PLAIN_AT_OTHER_SIZES):
                steps.append(("plain", ""))
        _RANDOM.shuffle(steps)
        last = pristine
        while steps:
            kind, name = steps.pop(0)
            with task.sizes_changed(sizes):
                if kind == "stress":
                    verdict = self._as_task(model, there, base_rms, name, views)
                    if verdict.get("passed") is False:
                        return f"at these sizes, input set {name}: {verdict['mismatch']}"
                    continue
                if kind == "weights":
                    failed = self._moved_at(model, there, checkpoint=name == "checkpoint")
                    if failed is not None:
                        return f"at these sizes, {failed}"
                    steps.insert(0, ("plain", ""))  # compared under the moved weights
                    continue
                draw = functools.partial(task.inputs, fresh_seed())
                near = near_inputs(name, pristine, last, draw) if kind == "near" else draw()
                manner = owed[name] if kind == "manner" else {}
                failed = self._compared_at(views, near, model, there, manner)
            if failed is not None:
                what = NEAR_WHAT.get(name, f"input {name.split(':')[-1]} drawn afresh")
                where = f"the last inputs with {what}" if kind == "near" else kind
                where = f"the manner {name}" if kind == "manner" else where
                return f"at these sizes, {where}: {failed}"
            last = near
        return None

    def _compared_at(
        self,
        views: SlotViews,
        inputs: list[Any],
        model: Any,
        there: ErrorSize | None,
        manner: dict[str, Any],
    ) -> str | None:
        """A graded call at other sizes (the task's sizes changed by the caller) on
        ``inputs``, compared with ``model``'s answer (the task's reference where None) and
        its error measured with ``there``: None, or what was wrong."""
        tol = self.task.tolerance
        failed, answer = self._graded_call(views, inputs, fill=False, manner=manner)
        if failed is not None:
            return failed
        reference = self.task.run_reference(inputs, "correctness", model=model)
        expected = compare.flatten(reference)
        del reference
        verdict = compare.compare_outputs(answer, expected, tol.atol, tol.rtol, errors=False)
        if not verdict.ok:
            return verdict.mismatch
        if there is not None:
            self._judge_error(there, inputs, answer)
        return None

    def _as_task(
        self, model: Any, there: ErrorSize | None, base_rms: float, name: str, views: SlotViews
    ) -> dict[str, Any]:
        """The stress set ``name`` at other sizes (the task's sizes changed by the caller),
        judged as at the task's: ``model`` as the reference, its error measured with
        ``there``, its atol scaled from ``base_rms``."""
        task = self.task
        saved = task.reference, self.error_size, self.base_rms
        task.reference = saved[0] if model is None else model
        self.error_size, self.base_rms = there, base_rms
        try:
            return self._stress_call(name, views)
        finally:
            task.reference, self.error_size, self.base_rms = saved

    def _moved_at(self, model: Any, there: ErrorSize | None, checkpoint: bool) -> str | None:
        """The weights of the model built at other sizes moved off where they are and written
        into the candidate's model in place (``runner.op_weights``), or with ``checkpoint``
        loaded by its own ``load_state_dict``: why it did not take them, or None."""
        dev.seed_generators(fresh_seed(), self.task.device)
        stress.away_from_init(model)
        failed = self._load_weights(model, ("candidate",), checkpoint=checkpoint)
        if there is not None:
            there.release()  # its float64 and tf32 builds copied the old weights
        return failed
