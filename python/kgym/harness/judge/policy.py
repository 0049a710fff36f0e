"""The policies every graded call is held to: what the candidate's runner reported of each
call (the Triton kernels it launched, the torch operators it called, the types its matrix
products computed in), and the verdicts of the torch-compute and precision policies on them.
A policy that held only on the first call would pay whatever the candidate does on the others.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import torch

from kgym.harness import dot_precision
from kgym.harness.judge.findings import Findings
from kgym.harness.judge.profile import kernel_names, reported_kernels
from kgym.harness.runner import STRIDED_OUTPUT_COPY

POLICIES = ("strict", "hybrid")
PRECISION_POLICIES = ("faithful", "tolerant")
FULL_PRECISION = (torch.float32, torch.float64)


# The reduced types below a half-precision task's own, by what names them: fp8 below both
# half types, bfloat16's 8 bits of mantissa below float16's 11. An fp8 product on a bf16 task
# runs at twice bf16's tensor-core rate, and on one-signed inputs its errors average to
# bf16's own, which no error size tells apart: the type is what is seen.
_FP8 = re.compile(r"fp8|float8|f8e[45]|e4m3|e5m2", re.IGNORECASE)
_BF16 = re.compile(r"bf16|bfloat16", re.IGNORECASE)


def below_half_task(floats: set[torch.dtype], reduced: list[str]) -> list[str]:
    """The entries of ``reduced`` (``CallPolicy.low_precision``) naming a type below the
    least precise float type of a task that has float16 or bfloat16 ones."""
    if torch.float16 in floats and torch.bfloat16 not in floats:
        return [entry for entry in reduced if _FP8.search(entry) or _BF16.search(entry)]
    if floats & {torch.float16, torch.bfloat16}:
        return [entry for entry in reduced if _FP8.search(entry)]
    return []


class CallPolicy:
    """What the graded calls showed, gathered call by call, and the findings it makes."""

    def __init__(self, findings: Findings, torch_compute: str, precision: str) -> None:
        self.findings = findings
        self.torch_compute = torch_compute if torch_compute in POLICIES else "strict"
        self.precision = precision if precision in PRECISION_POLICIES else "faithful"
        self.launched: list[str] = []  # every Triton kernel a graded call launched
        self.torch_ops: list[str] = []  # every torch compute operator a graded call called
        self.low_precision: list[str] = []  # reduced-precision types the candidate computes in
        self.dot_products: list[str] = []  # its kernels' matrix products (dot_precision)
        self.dot_source = "unknown"
        self.graded_calls = 0
        # The kernel bodies the judge read in the candidate's source (kernel_source.py), and
        # that source's file name: a launched kernel of that file must be one of them.
        self.read_body: Callable[[str, int], bool] | None = None
        self.candidate_file = "candidate.py"
        # Every kernel the graded calls launched, as the kernel trace names them (on a GPU
        # that traces; None elsewhere): the timed calls may launch no other but the
        # candidate's own Triton kernels.
        self.graded_kernels: set[str] | None = None

    def observe(self, reply: dict[str, Any]) -> None:
        """One graded call's report of itself. The policy holds on each call."""
        self.graded_calls += 1
        for name in [str(n)[:100] for n in (reply.get("launched") or [])][:64]:
            if name not in self.launched and len(self.launched) < 64:
                self.launched.append(name)
        self.observe_torch(reply)
        self.observe_products(reply)
        self._observe_origins(reply)
        if int(reply.get("launches") or 0) == 0:
            self.findings.add_once("no-triton-launch", "a forward call launched no Triton kernel")

    def observe_torch(self, reply: dict[str, Any]) -> None:
        """The torch record of a graded call, one that raised too (a model that refuses a
        manner ran its code there as in any call: torch's answer made there and kept is
        torch's work all the same)."""
        ops = reply.get("torch_ops") or {}
        for op in (ops.get("compute") or [])[:64]:
            if str(op)[:80] not in self.torch_ops:
                self.torch_ops.append(str(op)[:80])
        in_launch = [str(op)[:80] for op in (ops.get("in_launch") or [])[:8]]
        if in_launch:
            self.findings.add_once(
                "kernel-not-triton",
                "torch computes while a Triton launch runs (a grid, a heuristic, a hook or a "
                "kernel body): " + ", ".join(in_launch),
            )
        callbacks = [str(op)[:80] for op in (ops.get("callbacks") or [])[:8]]
        if callbacks:
            self.findings.add_once(
                "torch-callback",
                "a torch call was handed an object of the candidate's own type, whose methods "
                "torch calls while its record is off (torch's work there is unseen): "
                + ", ".join(callbacks),
            )
        for op in (ops.get("low_precision") or [])[:20]:
            if f"torch.{str(op)[:80]}" not in self.low_precision:
                self.low_precision.append(f"torch.{str(op)[:80]}")
        if self.torch_ops and self.torch_compute == "strict":
            self.findings.add_once(
                "torch-compute",
                "torch computes part of the answer (strict policy): "
                + ", ".join(self.torch_ops[:10]),
            )

    def _observe_origins(self, reply: dict[str, Any]) -> None:
        """A kernel the candidate made from a function of its own file that is not written as
        a ``@triton.jit`` kernel (``triton.jit(fn)`` called, a lambda): its body was never
        read, and under the interpreter it may be any Python (numpy on the interpreter's
        arrays)."""
        origins = reply.get("kernel_origins") or {}
        if self.read_body is None or not isinstance(origins, dict):
            return
        for name, places in list(origins.items())[:64]:
            for where in places if isinstance(places, list) else []:
                if not (isinstance(where, list) and len(where) == 2):
                    continue
                file, line = str(where[0]), int(where[1])
                if file == self.candidate_file and not self.read_body(str(name), line):
                    self.findings.add_once(
                        "kernel-not-triton",
                        f"kernel {str(name)[:80]} (line {line}) is made from a function not "
                        "written as a @triton.jit kernel: its body was not read",
                    )

    def observe_timed(self, after: dict[str, Any], traced: Any, declared: set[str]) -> None:
        """What the timed calls showed, read after the window: ``after``, the candidate's reply
        to the call after it (every kernel compiled, the timed outputs its runner laid out);
        ``traced``, the kernel trace of the timed calls (kernel_trace.py), where a library
        kernel's name says the types it computes in."""
        self.observe_products(after)
        if int(after.get("strided_timed_outputs") or 0) > 0:
            op = f"{STRIDED_OUTPUT_COPY} in timed calls"
            if op not in self.torch_ops:
                self.torch_ops.append(op)
            if self.torch_compute == "strict":
                self.findings.add_once(
                    "torch-compute",
                    f"torch computes part of the answer (strict policy): {op}",
                )
        for name, _, _ in reported_kernels(traced):
            if name not in declared and dot_precision.kernel_name_reduced(name):
                entry = f"kernel {name[:80]}"
                if entry not in self.low_precision and len(self.low_precision) < 64:
                    self.low_precision.append(entry)
        if self.graded_kernels is not None and isinstance(traced, dict):
            unseen = sorted(kernel_names(traced) - declared - self.graded_kernels)
            if unseen:
                self.findings.add_once(
                    "timed-calls-differ",
                    f"the timed calls launched {len(unseen)} kernel(s) no graded call "
                    f"launched: {', '.join(n[:100] for n in unseen[:4])}",
                )

    def observe_products(self, reply: dict[str, Any]) -> None:
        """What the candidate's kernels compute in (``dot_precision``: every kernel its process
        compiled so far, the timed calls' too when the call after the window reports)."""
        dots = reply.get("dot_precision") or {}
        if isinstance(dots, dict):
            if dots.get("source") in ("ir", "interpreter"):
                self.dot_source = str(dots["source"])
            if dots.get("pointers_from_integers") is True:
                self.findings.add_once(
                    "pointer-from-integer",
                    "a kernel made a pointer from an integer: it reaches memory its launch "
                    "did not hand it as a tensor, which no check can account for",
                )
            if dots.get("inline_assembly") is True:
                self.findings.add_once(
                    "kernel-not-triton",
                    "a kernel ran inline assembly: what it loads and the types it computes "
                    "in are not Triton's, and no reading of its IR sees them",
                )
            for kind in (dots.get("values") or [])[:20]:
                entry = f"tl {str(kind)[:20]} values"
                if entry not in self.low_precision:
                    self.low_precision.append(entry)
            for product in (dots.get("products") or [])[:20]:
                product = str(product)[:40]
                if product not in self.dot_products:
                    self.dot_products.append(product)
                    if dot_precision.is_reduced(product):
                        self.low_precision.append(f"tl.dot {product}")

    def observe_weights(self, reply: dict[str, Any]) -> None:
        """The entries of the candidate's model that hold the task's weights in a float type
        of less precision (runner._narrowed): its compute starts from rounded weights, which
        a float32 task's faithful precision refuses as it does a cast in a kernel."""
        for entry in (reply.get("weights_narrowed") or [])[:8]:
            entry = f"weights {str(entry)[:120]}"
            if entry not in self.low_precision:
                self.low_precision.append(entry)

    def judge_precision(self, task_dtypes: set[torch.dtype]) -> dict[str, Any]:
        """The precision policy: on a task computed in float32 (or float64), ``faithful``
        refuses fp16, bf16 and fp8 compute in the candidate's kernels or its torch calls; tf32
        is float32's matmul precision on a GPU and allowed. ``tolerant`` only reports. Returns
        the Result's ``judge.precision``."""
        floats = {d for d in task_dtypes if d.is_floating_point}
        full = bool(floats) and floats <= set(FULL_PRECISION)
        if full and self.low_precision and self.precision == "faithful":
            self.findings.add_once(
                "low-precision",
                "a float32 task computed in reduced precision (precision policy faithful): "
                + ", ".join(self.low_precision[:6]),
            )
        below = below_half_task(floats, self.low_precision)
        if below and self.precision == "faithful":
            self.findings.add_once(
                "low-precision",
                "a half-precision task computed below its own precision (precision policy "
                "faithful): " + ", ".join(below[:6]),
            )
        return {
            "policy": self.precision,
            "task_dtypes": sorted(str(d).removeprefix("torch.") for d in floats),
            "reduced": self.low_precision[:20],
            # What Triton's products computed in: from the IR (a GPU), the interpreter (a
            # CPU), or unknown (no launch seen); [] when no kernel computes a product.
            "dot_products": {"source": self.dot_source, "products": self.dot_products[:20]},
        }
