"""The precision the candidate's Triton matrix products compute in, as Triton saw them.

On a GPU it is read from each compiled kernel's Triton IR (``tt.dot`` operand types and their
``inputPrecision``), once per compiled kernel; under the CPU interpreter from the operands the
interpreter's ``create_dot`` receives. Each product is named ``OPERAND (PRECISION)``:
``fp32 (tf32)``, ``fp32 (ieee)``, ``fp16 (-)``, ``fp8e4nv (-)``. The recorder lives in the
candidate's process, so a candidate can hide from it; what it reports adds to the kernel source
scan (kgym.harness.kernel_source), it does not replace it.

The same reading says whether a kernel made a pointer from an integer (``tt.int_to_ptr``,
``x.to(tl.pointer_type(...))``): such a kernel reaches memory its launch did not hand it as a
tensor, whatever torch, another thread or a stash put there, which no check of the judge's can
account for (judge/policy.py refuses it).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kgym.harness import tensor_core_products
from kgym.harness.real_type import is_a

# An element type in MLIR's spelling, as Triton's IR prints it, to triton.language's names.
_MLIR_NAMES = {
    "f64": "fp64",
    "f32": "fp32",
    "tf32": "tf32",
    "f16": "fp16",
    "bf16": "bf16",
    "f8E4M3FN": "fp8e4nv",
    "f8E4M3FNUZ": "fp8e4b8",
    "f8E5M2": "fp8e5",
    "f8E5M2FNUZ": "fp8e5b16",
    "i8": "int8",
}
_DOT = re.compile(r"\btt\.dot(?:_scaled)?\b([^\n]*)")
_OPERAND = re.compile(r":\s*tensor<(?:[0-9?]+x)*(\w+)")
_INPUT_PRECISION = re.compile(r"inputPrecision\s*=\s*(\w+)")
# Names that compute below float32 (the precision policy refuses them on a float32 task).
REDUCED = ("fp16", "bf16", "fp8", "int8")
# Floating-point element types below float32 anywhere in a kernel's values: a cast, a constant,
# a load from such memory, however the kernel named the type (a dtype made at run time and
# passed as a constexpr names none in the source).
REDUCED_FLOATS = ("fp16", "bf16", "fp8")
_IR_FLOAT_TYPE = re.compile(r"(?:(?<=\dx)|(?<!\w))(f16|bf16|f8E\w+)\b")  # 128xf16, : f16


def is_reduced(product: str) -> bool:
    return product.startswith(REDUCED)


# A library kernel's types, as its name spells them (cuBLAS, cuBLASLt, CUTLASS, cuDNN, torch's
# own templates): ``sm90_xmma_gemm_f16f16_f16f32_f32_...``, ``ampere_h16816gemm_...``,
# ``cutlass_80_tensorop_bf16_s16816gemm_...``, ``..._e4m3...``, ``<c10::Half>``, ``<__half>``,
# torch's casts ``float16_copy_kernel_cuda``, ``bfloat16_...``, ``float8_...``. A tf32 GEMM's
# name (``..._f32f32_tf32f32_f32_...``) names none of them. The name is all the kernel trace
# holds of a kernel the candidate did not write; a library that named its types otherwise
# would pass here, and is left to the error size (judge/error_size.py) and to the graded
# calls, which must have launched every library kernel the timed calls did (policy.py).
_LIBRARY_REDUCED = re.compile(
    r"(?:^|[^a-z])(?:b?f16|fp16|half|b?float16|e4m3|e5m2|fp8|float8|f8|i8|int8|imma|hgemm"
    r"|h\d{3,6}gemm)",
)
# cuBLASLt's nvjet kernels spell their types as letters after the architecture, on an H200
# (torch 2.11, CUDA 13): ``nvjet_sm90_hsh_...`` fp16, ``nvjet_sm90_qqsss_...`` fp8 (and
# ``tst`` bf16, which is not read here: what tf32 spells there is not known).
_NVJET_TYPES = re.compile(r"nvjet_(?:sm\d+_)?([a-z]+)_")


def kernel_name_reduced(name: str) -> bool:
    """Whether a kernel's name says it computes or stores below float32."""
    lower = name.lower()
    nvjet = _NVJET_TYPES.search(lower)
    if nvjet is not None and ("h" in nvjet.group(1) or "q" in nvjet.group(1)):
        return True
    return _LIBRARY_REDUCED.search(lower) is not None


def products_in_ir(ttir: str) -> set[str]:
    """Every ``tt.dot`` in a kernel's Triton IR, as ``OPERAND (PRECISION)``."""
    found = set()
    for match in _DOT.finditer(ttir):
        rest = match.group(1)
        operand = _OPERAND.search(rest)
        if operand is None:
            continue
        name = _MLIR_NAMES.get(operand.group(1), operand.group(1))
        precision = _INPUT_PRECISION.search(rest)
        # The IR leaves out the default, IEEE; the input precision applies to float32 only.
        mode = precision.group(1).lower() if precision and name == "fp32" else _default(name)
        found.add(f"{name} ({mode})")
    return found


def reduced_floats_in_ir(ttir: str) -> set[str]:
    """The floating-point types below float32 a kernel's Triton IR holds values of."""
    return {_MLIR_NAMES.get(t, t) for t in _IR_FLOAT_TYPE.findall(ttir)}


def makes_pointers(ttir: str) -> bool:
    """Whether a kernel's Triton IR makes a pointer from an integer."""
    return "tt.int_to_ptr" in ttir


def runs_assembly(ttir: str) -> bool:
    """Whether a kernel's Triton IR runs inline assembly (``tl.inline_asm_elementwise``):
    PTX that may load from any address or compute in any type, which no reading of the IR
    sees (the interpreter refuses it)."""
    return "tt.elementwise_inline_asm" in ttir


def _default(name: str) -> str:
    return "ieee" if name == "fp32" else "-"


class DotPrecision:
    """What products the kernels launched in this process computed, accumulated."""

    def __init__(self) -> None:
        self.products: set[str] = set()
        self.values: set[str] = set()  # reduced floating-point types of the kernels' values
        self._read: set[int] = set()  # compiled kernels whose IR was read (by id)
        self.pointers_from_integers = False  # a kernel made a pointer from an integer
        self.inline_assembly = False  # a kernel ran inline assembly
        self.source = "unknown"  # "ir" (a GPU), "interpreter" (a CPU) once a launch was seen

    def note_launch(self, launched: Any) -> None:
        """After a GPU launch: the compiled kernel JITFunction.run returned, read once."""
        asm = getattr(launched, "asm", None)
        if asm is None or id(launched) in self._read:
            return
        self._read.add(id(launched))
        try:
            ttir = asm["ttir"]
        except (KeyError, TypeError):
            return
        self.source = "ir"
        if is_a(ttir, bytes):
            ttir = ttir.decode(errors="replace")
        self.products |= products_in_ir(str(ttir))
        self.values |= reduced_floats_in_ir(str(ttir))
        self.pointers_from_integers |= makes_pointers(str(ttir))
        self.inline_assembly |= runs_assembly(str(ttir))

    def install_interpreter(self) -> None:
        """Under the CPU interpreter: record the operands of every product it computes, and
        the type of every value it makes that is a float below float32."""
        try:
            from triton.runtime.interpreter import InterpreterBuilder, TensorHandle
        except ImportError:
            return
        self.source = "interpreter"
        made = TensorHandle.__post_init__
        values = self.values

        def post_init(handle: Any) -> None:
            made(handle)
            name = str(getattr(handle.dtype, "name", ""))
            if name.startswith(REDUCED_FLOATS):
                values.add(name)

        TensorHandle.__post_init__ = post_init  # type: ignore[method-assign]
        # Each product computed at its input precision as a GPU's tensor cores would, so that
        # a CPU grades the error a GPU's kernel makes (tensor_core_products.py).
        gpu_dot = tensor_core_products.as_gpu_computes(InterpreterBuilder.create_dot)
        InterpreterBuilder.create_dot = self._recording(gpu_dot, 0, 3)
        scaled = getattr(InterpreterBuilder, "create_dot_scaled", None)
        if scaled is not None:
            InterpreterBuilder.create_dot_scaled = self._recording(scaled, 0, None)
        to_pointer = InterpreterBuilder.create_int_to_ptr
        recorder = self

        def int_to_ptr(builder: Any, *args: Any, **kwargs: Any) -> Any:
            recorder.pointers_from_integers = True
            return to_pointer(builder, *args, **kwargs)

        InterpreterBuilder.create_int_to_ptr = int_to_ptr  # type: ignore[method-assign]

    def _recording(
        self, original: Callable[..., Any], operand: int, precision: int | None
    ) -> Callable[..., Any]:
        recorder = self

        def create(builder: Any, *args: Any, **kwargs: Any) -> Any:
            dtype = getattr(args[operand], "dtype", None) if len(args) > operand else None
            name = str(getattr(dtype, "name", "?"))
            if precision is None:
                mode = "scaled"
            elif name == "fp32" and len(args) > precision:
                mode = tensor_core_products.precision_name(args[precision])
            else:  # the input precision applies to float32 operands only
                mode = _default(name)
            recorder.products.add(f"{name} ({mode})")
            return original(builder, *args, **kwargs)

        return create

    def summary(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "products": sorted(self.products)[:20],
            "values": sorted(self.values)[:20],
            "pointers_from_integers": self.pointers_from_integers,
            "inline_assembly": self.inline_assembly,
        }
