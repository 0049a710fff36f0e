"""The graded calls at sizes other than the task's: the input sets ``other_shape``,
``odd_shape`` or ``small_shape`` (the sizes drawn near those the task runs at, and near its CPU
sizes where it runs at others) and ``twin`` (a second instance at the task's sizes). What the
judge checks about the task's sizes must hold at every size it calls: a kernel exact at the two
shapes a task declares and cheating at any other (a memo, no max subtraction, bfloat16 under
inference mode or after some calls, a packed weight kept stale) meets, after the call there,
the near repeats, moved weights and plain calls of a drawn count, and at one of the two other
sizes, drawn, each stress set, owed manner and manner of memory (``_calls_at``). A mixin of
``GradedCalls`` (correctness.py), whose state and calls it uses."""

from __future__ import annotations

import functools
import math
import secrets
from collections.abc import Callable
from typing import Any

import torch

from kgym.harness import compare, stress
from kgym.harness import device as dev
from kgym.harness.errors import EvaluationFailure
from kgym.harness.judge.error_size import ErrorSize
from kgym.harness.judge.memory_manners import aliasable_inputs, memory_manner, memory_manners
from kgym.harness.judge.near_repeats import NEAR_WHAT, near_inputs
from kgym.harness.judge.runners import failed_reply
from kgym.harness.judge.task import fresh_seed
from kgym.harness.judge.tf32_answers import answers_at_tf32, held_apart
from kgym.harness.layout import SlotLayout, SlotViews
from kgym.harness.real_type import is_a

_RANDOM = secrets.SystemRandom()
# The near repeats made again after a call at other sizes (``_calls_at``), each on the inputs
# of the call right before it.
NEAR_AT_OTHER_SIZES = ("same", "swap_again", "one_row", "one_place", "one_sign")
# The draws of ``other_shape``'s sizes from 1 to twice the task's before one near them.
WIDE_DRAWS = 3
# The calls of the set-up's instance at other sizes its inputs alone use (``_other_shapes``).
BATCH_SHAPE = "batch_shape"
# Plain calls there besides: as many as draws of 1 in this many miss (3 on average, no bound).
PLAIN_AT_OTHER_SIZES = 4


class OtherSizes:
    """The calls at other sizes, made by ``GradedCalls`` (its ``task``, ``lender``,
    ``runners``, ``findings``, ``policy``, ``error_size`` and graded calls)."""

    def _other_shapes(self) -> list[str]:
        """The calls at other sizes (input sets): ``other_shape``, drawn from 1 to twice the
        sizes the task runs at, odd or even; and every size odd, so that every count of elements
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
            shapes = ["other_shape", "small_shape", "twin"]
        else:
            shapes = ["other_shape", "odd_shape", "twin"]
        # And the set-up's instance itself at other sizes its inputs alone use (a batch, a
        # sequence's length): each such size changed alone (a softmax's rows with its width
        # kept), then all of them, a drawn count of times with no bound (each more at even
        # odds). A deployed layer meets many shapes; a model built with its width was met at
        # one alone (the other sizes build another), and a kernel exact until its instance's
        # second shape (or Kth, or a width's second batch) was paid.
        tries = self._batch_tries(draws=1)
        sizes = sorted(tries[0]) if tries else []
        if sizes:
            shapes += [f"{BATCH_SHAPE}:{name}" for name in sizes]
            shapes.append(BATCH_SHAPE)
            while _RANDOM.randrange(2):
                shapes.append(BATCH_SHAPE)
        return shapes

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
        # After the call, all that ``_calls_at`` makes, the stress sets and manners shared
        # between the two other sizes (``share``); the twin's is at the task's sizes, which
        # have all of it.
        batch = name.startswith(BATCH_SHAPE)
        share = None if twin or batch else 0 if name == "other_shape" else 1
        if twin:
            tries = self._twin_tries()
        elif batch:
            alone = name.partition(":")[2]
            tries = [
                {alone: drawn[alone]} if alone else drawn
                for drawn in self._batch_tries()
                if not alone or alone in drawn
            ]
        else:
            tries = self._size_tries(name, small)
        if not tries:
            return {"passed": None, "reason": "no size constant the judge can change"}
        for sizes in tries:
            keywords = stress.keywords_of(sizes)
            rebuild = (
                twin
                or bool(stress.init_names(task.module) & set(sizes))
                or bool(keywords)
                or bool(stress.init_values_of(sizes))
            )
            seed = fresh_seed()
            try:
                with task.sizes_changed(sizes):
                    model, init_inputs = task.build_model(seed) if rebuild else (None, [])
                    if model is not None:
                        stress.away_from_init(model)
                    pristine = task.inputs(fresh_seed())
                    if twin:
                        # For the set-up's instance, in the task's slots: the task's numbers.
                        self.twin_inputs = [
                            v.clone() if is_a(v, torch.Tensor) else spec[1]
                            for v, spec in zip(pristine, layout.inputs)
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
                    **self._call_at(layout, pristine, expected, at, inference, share),
                }
            failed, copied = self._build_candidate(
                model, init_inputs, seed, grad=not twin, keywords=keywords
            )
            if failed is not None and keywords:
                # A class that refuses the keyword says so, loudly, to a caller that passes
                # it: the next try builds both without it.
                self.runners.ask("candidate", {"op": "model", "restore": True}, "correctness")
                continue
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
                calls = self._call_at(layout, pristine, expected, at, inference, share, copied)
                verdict.update(calls)
            else:
                verdict.update(passed=False, mismatch=failed)
            # The set-up's model back, also where a second build failed after a first one.
            self.runners.ask("candidate", {"op": "model", "restore": True}, "correctness")
            return verdict
        return {"passed": None, "reason": "the reference does not run at other sizes"}

    def _twin_tries(self) -> list[dict[str, Any]]:
        """The twin's arguments: the task's sizes, with every float its model is built with
        changed (stress.float_arguments: a kernel that bakes in the task's value only at the
        task's own sizes meets it), then without the keywords among them, for a class that
        takes no such keyword."""
        floats = {
            **stress.float_arguments(self.task.module),
            **self._numbers_changed(),
            **self._integers_changed(),
        }
        passed = stress.without_keywords(floats)
        tries = [floats, passed] if passed != floats else [floats]
        # And the task's own, where its Model refuses the changed ones (a range turned over).
        return tries + [{}] if floats else [{}]

    def _batch_tries(self, draws: int = WIDE_DRAWS) -> list[dict[str, int]]:
        """``batch_shape``'s sizes, ``draws`` draws (a convolution's image smaller than its
        kernel does not run): each size the task's inputs alone use (of those the other sizes
        change), drawn log-uniformly below the one the task runs at (a batch of 1 as likely
        as one of half the task's; 2 where that is 1; a structural power of two as the other
        sizes draw it), the model's own arguments and the numbers kept, so that the set-up's
        instance is called there: below, since the calls are only another shape to meet and
        cost a trial's share at most. Empty: the model is built with every size its inputs
        use."""
        task = self.task.module
        built_with = stress.init_names(task)
        tries: list[dict[str, int]] = []
        for _ in range(draws):
            drawn: dict[str, int] = {}
            changes = stress.without_keywords(stress.other_sizes(task, wide=True))
            for k, other in changes.items():
                now = getattr(task, k, None)
                if k in built_with or type(now) is not int:
                    continue
                if stress.is_structural(now):
                    size = other  # another power of two where the CPU size is one too
                elif now > 1:
                    size = round(math.exp(_RANDOM.uniform(0.0, math.log(now))))
                    size = size if size != now else now - 1
                else:
                    size = 2
                if size != now:
                    drawn[k] = size
            if drawn:
                tries.append(drawn)
        return tries

    def _numbers_changed(self) -> dict[str, Any]:
        """The Python floats among the task's inputs, each changed (stress.numbers_changed),
        and the integers among them the reference uses as numbers (``_scalar_inputs``): the
        slots hold one value of each, the same in every call at the task's arguments."""
        assert self.layout is not None
        held = {
            place: spec[1]
            for place, spec in enumerate(self.layout.inputs)
            if isinstance(spec, tuple) and spec[0] == "value"
        }
        if self.scalar_inputs is None:
            self.scalar_inputs = self._scalar_inputs(held)
        moved = {f"{stress.INPUT}{place}": v for place, v in self.scalar_inputs.items()}
        return {**stress.numbers_changed(held), **moved}

    def _scalar_inputs(self, held: dict[int, Any]) -> dict[int, int]:
        """The integers among the task's inputs (``held``, by place) the reference uses as
        numbers, each with its moved value, once an evaluation (``_number_moved``, on one
        draw of the inputs): a divisor passed at call time and baked in was paid where only
        floats moved."""
        places = [p for p, v in held.items() if type(v) is int and v != 0]
        if not places:
            return {}
        task = self.task
        drawn = task.inputs(fresh_seed())

        def answer(place: int | None = None, value: Any = None) -> Any:
            inputs = list(drawn)
            if place is not None:
                inputs[place] = value
            try:
                out = compare.flatten(task.run_reference(inputs, "correctness"))
            except EvaluationFailure:
                return None
            return [tuple(v.shape) if is_a(v, torch.Tensor) else type(v) for v in out], out

        task_own = functools.cache(answer)
        found: dict[int, int] = {}
        for place in places:
            moved = _number_moved(functools.partial(answer, place), held[place], task_own)
            if moved is not None:
                found[place] = moved
        return found

    def _integers_changed(self) -> dict[str, int]:
        """Another value for each integer constant the model alone is built with that the
        reference uses as a number (``_scalar_integers``: a divisor, a multiplier), drawn as
        a float argument's and rounded (``stress.integer_moved``), once an evaluation: moved
        with the floats, a kernel that bakes in the task's ``divisor = 2`` (KernelBench
        level 2's shape) meets another. The other integers (a kernel size, a reduction's
        dimension, a count of groups) choose an algorithm and are left alone."""
        if self.scalar_integers is None:
            self.scalar_integers = self._scalar_integers()
        return dict(self.scalar_integers)

    def _scalar_integers(self) -> dict[str, int]:
        """The integer constants ``get_init_inputs`` passes, not the task's sizes, with which
        the reference is a number, each with its moved value (``_number_moved``): the model
        built with each value under the same weights' seed, on the same inputs."""
        task = self.task
        module = task.module
        sizes = set(stress.other_sizes(module))
        names = [
            name
            for name in sorted(stress.init_names(module) - sizes)
            if type(getattr(module, name, None)) is int and getattr(module, name) != 0
        ]
        if not names:
            return {}
        seed, inputs = fresh_seed(), task.inputs(fresh_seed())
        task_own = functools.cache(functools.partial(self._built_answer, {}, seed, inputs))
        found: dict[str, int] = {}
        for name in names:

            def answer(value: Any, name: str = name) -> Any:
                return self._built_answer({name: value}, seed, inputs)

            moved = _number_moved(answer, getattr(module, name), task_own)
            if moved is not None:
                found[name] = moved
        return found

    def _built_answer(
        self, changes: dict[str, Any], seed: int, inputs: list[Any]
    ) -> tuple[list[Any], list[Any]] | None:
        """The shapes of the task's model's state and answer, built under ``seed`` with the
        constants ``changes`` sets, on a copy of ``inputs``, and the answer itself; None where
        it does not build or run."""
        try:
            with self.task.sizes_changed(changes):
                model, _ = self.task.build_model(seed)
            answer = compare.flatten(self.task.run_reference(inputs, "correctness", model=model))
        except EvaluationFailure:
            return None
        state = model.state_dict().values() if is_a(model, torch.nn.Module) else []
        shapes = [tuple(v.shape) for v in state] + [
            tuple(v.shape) if is_a(v, torch.Tensor) else type(v) for v in answer
        ]
        return shapes, answer

    def _size_tries(self, name: str, small: Any) -> list[dict[str, Any]]:
        """The sizes to call at, in order until the task's Model runs at one: each draw
        (stress.other_sizes), and where the model is built with some of them, that draw with
        only the sizes its inputs alone use changed. ``other_shape``'s sizes are drawn from 1
        to twice the task's (``wide``), a few times (a convolution's image smaller than its
        kernel does not run), then near the task's; the others' near them, every size odd.
        Empty: no size the judge can change."""
        task = self.task.module
        wide = [True] * WIDE_DRAWS + [False] if name == "other_shape" else [False]
        tries: list[dict[str, Any]] = []
        for draw_wide in wide:
            changes = stress.other_sizes(task, small, odd=name != "other_shape", wide=draw_wide)
            changes.update(self._numbers_changed())
            changes.update(self._integers_changed())
            if not changes:
                return []
            plain = stress.without_keywords(changes)
            # The keywords and the values get_init_inputs returns moved by place, as the
            # constants it reads, build the model.
            built_with = (stress.init_names(task) & set(changes)) | (changes.keys() - plain.keys())
            built_with |= {k for k in changes if k.startswith(stress.INIT)}
            inputs_only = {k: v for k, v in changes.items() if k not in built_with}
            tries.append(changes)
            if plain != changes:  # where the candidate's class takes no such keyword
                tries.append(plain)
            if built_with and any(getattr(task, k, None) != v for k, v in inputs_only.items()):
                tries.append(inputs_only)
        # Last, the sizes alone: where the task's Model refuses every changed number.
        sizes_alone = {
            k: v
            for k, v in stress.constants_of(tries[-1]).items()
            if type(getattr(task, k, None)) is int
        }
        if sizes_alone and sizes_alone not in tries:
            tries.append(sizes_alone)
        return tries

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
        self,
        model: Any,
        init_inputs: list[Any],
        seed: int,
        grad: bool = True,
        spare: bool = False,
        keywords: dict[str, Any] | None = None,
    ) -> tuple[str | None, bool]:
        """The candidate's model built with ``init_inputs`` and ``model``'s weights: None or
        why it did not build (an answer it cannot give), and whether it took the weights. It
        is built under another seed than the reference's, so that the weights it is given are
        not the ones its own initialisation made (what ``__init__`` derived from those, a
        packed or transposed copy, goes stale, as it would when a checkpoint is loaded); a
        model whose state takes no weights (other keys or shapes) is built again under the
        reference's seed, its only way to the same parameters. ``spare``: built beside the
        one called (``runner.op_model``)."""
        for build_seed in (fresh_seed(), seed):
            weights, fds = self.lender.weights(model)
            spec = {
                "seed": build_seed,
                "init_inputs": init_inputs,
                # The Model's defaults changed by keyword (``stress.float_defaults``): where
                # the sizes are changed now, the task's.
                "init_keywords": self.task.keywords if keywords is None else keywords,
                "weights": weights,
                "grad": grad,
            }
            try:
                reply = self.runners.ask(
                    "candidate",
                    {"op": "model", "spare": spare},
                    "correctness",
                    payload=spec,
                    fds=fds,
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
        share: int | None = None,
        movable: bool = False,
    ) -> dict[str, Any]:
        """A graded call on ``pristine`` in an arena of its own layout, in ``manner`` where
        it names one, compared with ``expected`` and, on a float32 task, its error's size
        measured (``at``: the sizes and the model, None for the reference, that made
        ``expected``), then unless ``share`` is None the calls there that follow it
        (``_calls_at``);
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
            there = self.error_size.like(task.reference if at[1] is None else at[1])
        try:
            failed, answer = self._graded_call(views, pristine, fill=False, manner=manner)
            if failed is not None:
                return {"passed": False, "mismatch": failed}
            comparison = compare.compare_outputs(
                answer, expected, task.tolerance.atol, task.tolerance.rtol
            )
            with task.sizes_changed(at[0]):
                failed = self._refused(comparison, answer, expected, pristine, at[1])
                if failed is not None:
                    return {"passed": False, "mismatch": failed}
                if there is not None:
                    self._judge_error(there, pristine, answer, where="other sizes")
                    verdict["error_ratio"] = there.worst["ratio"] if there.worst else None
            del answer  # views into the arena that the task's layout replaces next
            base_rms = stress.finite_rms(expected)
            failed = None
            if share is not None:
                failed = self._calls_at(views, pristine, at, base_rms, share, movable, there)
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
        share: int,
        movable: bool,
        there: ErrorSize | None,
    ) -> str | None:
        """After a right call at other sizes, more graded calls there, in a drawn order, each
        compared with the reference there and its error measured: what is checked about the
        task's sizes holds at every size the judge calls, so that a kernel that cheats only
        off the shapes the task declares meets it. At both other sizes: the near repeats
        (``NEAR_AT_OTHER_SIZES``, each tensor input drawn afresh), each on the call before's
        inputs (a memo there); the model's weights moved twice, written in place and loaded
        by its own ``load_state_dict``, where it was built there and took them (``movable``:
        a packed copy kept stale there); plain calls of a drawn count with no bound
        (precision dropped after some number of calls there); every owed manner (one under
        inference mode there) and every manner of memory (offsets, fresh copies, aliased
        inputs): a model sees them, and one that computes coarsely in one of them off the
        task's sizes meets it at both, not only at one that may be a few elements, where an
        error's size is a sample too small to tell bfloat16 from tf32 (a bfloat16 GEMM under
        inference mode passed about one run in ten, its one call made at 2x5x6). And
        ``share`` of the stress sets, each made at one of the two, which is drawn
        (``_placed``): a kernel wrong on far inputs there, and no property of one of the two
        sizes (a parity) marks where they are met. ``there`` measures their
        errors. None, or what was wrong. Its time is the other sizes'
        (``correctness_other_sizes``)."""
        task = self.task
        sizes, model = at
        tensors = [i for i, v in enumerate(pristine) if is_a(v, torch.Tensor)]
        steps = [("near", how) for how in NEAR_AT_OTHER_SIZES]
        steps += [("near", f"one_input:{i}") for i in tensors] if len(tensors) >= 2 else []
        names = stress.set_names(stress.InputFacts.of(pristine))
        steps += [("stress", name) for name in names if self._placed(name, share)]
        owed = self._owed_manners()
        steps += [("manner", name) for name in owed]
        aliasable = aliasable_inputs(pristine)
        steps += [("memory", name) for name in memory_manners(aliasable)]
        if model is not None and movable and stress.holds_weights(model):
            # Both ways weights change: written in place (an optimizer's step) and loaded by
            # the model's own load_state_dict (a checkpoint). And a second instance of this
            # shape called between two calls of the first, as at the task's sizes.
            steps += [("weights", "in_place"), ("weights", "checkpoint"), ("twin", "")]
        while _RANDOM.randrange(PLAIN_AT_OTHER_SIZES):
            steps.append(("plain", ""))
        _RANDOM.shuffle(steps)
        # A near repeat is made on the inputs of the call right before it (a memo keyed on
        # the last call's rows hits there and nowhere else): after a stress set or a weight
        # move, whose inputs are not plain draws, a plain call comes first.
        last, follows = pristine, True
        before: list[Any] | None = None  # the inputs the call before's were made from
        while steps:
            if task.device.type == "cuda":
                # What the call before left cached (its inputs, answers, float64 reference):
                # the judge's share of the job's GPU memory (gpu_memory.py), as after each of
                # the task's steps; 09_rms_norm's honest kernels met the job's share at 13 GB.
                torch.cuda.empty_cache()
            kind, name = steps.pop(0)
            if kind == "near" and not follows:
                steps[:0] = [("plain", ""), (kind, name)]
                continue
            follows = kind not in ("stress", "weights")
            with task.sizes_changed(sizes):
                if kind == "twin":
                    failed, near = self._twin_at(views, model, there)
                    if failed is not None:
                        return f"at these sizes, {failed}"
                    last = near
                    continue
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
                near = near_inputs(name, pristine, last, draw, before) if kind == "near" else draw()
                manner = owed[name] if kind == "manner" else {}
                if kind == "memory":
                    manner = memory_manner(name, near, aliasable)
                failed = self._compared_at(views, near, model, there, manner)
            if failed is not None:
                what = NEAR_WHAT.get(name, f"input {name.split(':')[-1]} drawn afresh")
                where = f"the last inputs with {what}" if kind == "near" else kind
                where = f"the manner {name}" if kind in ("manner", "memory") else where
                return f"at these sizes, {where}: {failed}"
            if (kind, name) == ("near", "one_row"):
                # Another row of these inputs, one the first left, right after: at a few
                # rows the one drawn is often a memo's key row itself (the last), and a memo
                # keyed on it met no stale answer at either size (an attack paid 1 CPU test
                # run in 5).
                steps.insert(0, ("near", "one_row_again"))
            before, last = last, near
        return None

    def _twin_at(
        self, views: SlotViews, model: Any, there: ErrorSize | None
    ) -> tuple[str | None, list[Any]]:
        """A second instance of the model built at these sizes (the task's sizes changed by
        the caller), with weights of its own, called on fresh inputs, then the first on the
        same inputs: state that instances of one shape share (a packed weight kept in a
        module-level buffer, repacked where only its own weights changed) meets the first,
        at every size the judge calls (the twin at the task's sizes meets it there only).
        What was wrong, or None; and the inputs of the last call."""
        task = self.task
        second, init_inputs = task.build_model(fresh_seed())
        stress.away_from_init(second)
        failed, _ = self._build_candidate(second, init_inputs, fresh_seed(), spare=True)
        if failed is not None:
            return f"a second instance: {failed}", []
        inputs = task.inputs(fresh_seed())
        # Its error's size too, against its own model's tf32 answer: a second instance is
        # a model the judge grades, not only a probe of state the two share.
        own = None
        if there is not None:
            own = there.like(second)
        self._swap_spare()
        try:
            failed = self._compared_at(views, inputs, second, own, {})
        finally:
            self._swap_spare()
        if there is not None and own is not None:
            there.absorb(own)
        if failed is not None:
            return f"a second instance of this shape: {failed}", inputs
        failed = self._compared_at(views, inputs, model, there, {})
        if failed is not None:
            return f"the first instance after a second of its shape: {failed}", inputs
        return None, inputs

    def _swap_spare(self) -> None:
        """The candidate's spare model called instead of the one built before it, and back."""
        reply = self.runners.ask("candidate", {"op": "model", "swap": True}, "correctness")
        if not reply.get("ok"):
            raise EvaluationFailure(
                "infra_error", "correctness", message=f"no spare model: {str(reply)[:300]}"
            )

    def _placed(self, name: str, share: int) -> bool:
        """Whether the stress set ``name`` is made at the other size ``share`` (0 or
        1): drawn once an evaluation, so that each is made at one of the two."""
        return self.placed_off_task.setdefault(name, _RANDOM.randrange(2)) == share

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
        failed = self._refused(verdict, answer, expected, inputs, model)
        if failed is not None:
            return failed
        if there is not None:
            self._judge_error(there, inputs, answer, where="other sizes")
        return None

    def _refused(
        self,
        verdict: compare.Comparison,
        answer: list[Any],
        expected: list[Any],
        inputs: list[Any],
        model: Any,
    ) -> str | None:
        """Why a call at other sizes is wrong (None: right), from its comparison. Where tf32
        products change the task's answer and meet its tolerance, a call the tolerance
        refused is compared again without what the judge's own tf32 answers on ``inputs``
        (``model``'s; the reference's where None) miss themselves (tf32_answers.py): the
        elements beyond the tolerance in either, and the relative L2 bound where either
        misses it (the few outputs of a batch of one, a sum cancelled near zero, as an
        honest tf32 linear was refused). Every other element is held, and the caller still
        measures the error's size, block by block. Made only on a refusal."""
        if verdict.ok:
            return None
        if self.tf32_exact or not self.tf32_meets_task:
            return verdict.mismatch
        tol = self.task.tolerance
        at_tf32 = answers_at_tf32(
            lambda: self.task.run_reference(inputs, "correctness", model=model), False
        )
        held = held_apart(answer, expected, at_tf32, tol.atol, tol.rtol)
        if not held.excused:
            return verdict.mismatch
        if not held.comparison.ok:
            return held.comparison.mismatch
        if not stress.finite_where_expected(answer, expected):
            return "output: not finite where the reference's output is"
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


def _number_moved(
    answer: Callable[[Any], Any], value: int, task_own: Callable[[], Any]
) -> int | None:
    """Another value for an integer the reference uses as a number, or None where it is a
    size, a dimension or a count. ``answer(v)``: the reference's (shapes, answer) with the
    integer given as ``v``, None where it refuses it; ``task_own()``: with the task's own.
    Given as a float, a number answers bit for bit as the integer does (a size, a dimension,
    a count raise or answer otherwise); given the moved value, the shapes of the answer and
    the model's state stay (an upsampling's factor is a number that moves them)."""
    as_float = answer(float(value))
    if as_float is None:  # most integers: a size, a dimension, a count
        return None
    own = task_own()
    if own is None or not _bit_for_bit(as_float, own):
        return None
    moved = stress.integer_moved(value)
    after = answer(moved)
    return moved if after is not None and after[0] == own[0] else None


def _bit_for_bit(one: tuple[list[Any], list[Any]], other: tuple[list[Any], list[Any]]) -> bool:
    """Two of ``_built_answer``'s: the same shapes, and answers equal bit for bit (tensors of
    one type and value, NaN where NaN) or equal (other values)."""
    if one[0] != other[0]:
        return False
    return all(
        compare.bitwise_equal(a, b) if is_a(a, torch.Tensor) and is_a(b, torch.Tensor) else a == b
        for a, b in zip(one[1], other[1])
    )
