"""What the candidate's matrix products computed in, and whether a kernel made a pointer from
an integer: read from Triton's IR on a GPU."""

from __future__ import annotations

from kgym.harness.dot_precision import DotPrecision, is_reduced, products_in_ir

TTIR = """
    %21 = tt.load %20 : tensor<32x32x!tt.ptr<f16>>
    %23 = tt.dot %21, %22, %arg12, inputPrecision = tf32 : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
    %24 = tt.dot %a, %b, %c, inputPrecision = tf32x3 : tensor<64x16xf32> * tensor<16x64xf32> -> tensor<64x64xf32>
    %25 = tt.dot %a, %b, %c : tensor<64x16xf32> * tensor<16x64xf32> -> tensor<64x64xf32>
    %26 = tt.dot %p, %q, %r : tensor<16x32xf8E4M3FN> * tensor<32x16xf8E4M3FN> -> tensor<16x16xf32>
"""


def test_each_product_is_named_by_its_operands_and_input_precision() -> None:
    assert products_in_ir(TTIR) == {
        "fp16 (-)",
        "fp32 (tf32x3)",
        "fp32 (ieee)",
        "fp8e4nv (-)",
    }
    assert products_in_ir("%1 = arith.addf %a, %b : tensor<32xf32>") == set()


def test_reduced_products_are_those_below_float32() -> None:
    assert [p for p in sorted(products_in_ir(TTIR)) if is_reduced(p)] == ["fp16 (-)", "fp8e4nv (-)"]


class _Compiled:
    def __init__(self, ttir: str) -> None:
        self.asm = {"ttir": ttir}


def test_a_compiled_kernel_is_read_once() -> None:
    recorder = DotPrecision()
    kernel = _Compiled(TTIR)
    recorder.note_launch(kernel)
    kernel.asm["ttir"] = ""  # a second launch of the same kernel is not read again
    recorder.note_launch(kernel)
    recorder.note_launch(object())  # not a compiled kernel: the interpreter's launches
    assert recorder.summary() == {
        "source": "ir",
        "products": ["fp16 (-)", "fp32 (ieee)", "fp32 (tf32x3)", "fp8e4nv (-)"],
        "values": ["fp16", "fp8e4nv"],
        "pointers_from_integers": False,
        "inline_assembly": False,
    }


def test_reduced_float_values_anywhere_in_a_kernels_ir_are_found() -> None:
    """A cast to fp16 with no dot, however the source named the type, leaves f16 values in
    the IR; float32 and tf32 products leave none."""
    from kgym.harness.dot_precision import reduced_floats_in_ir

    cast = "%1 = arith.truncf %0 : tensor<128xf32> to tensor<128xf16> loc(#loc3)"
    assert reduced_floats_in_ir(cast) == {"fp16"}
    fp8 = "%2 = tt.fp_to_fp %1 : tensor<64xf32> -> tensor<64xf8E4M3FN>"
    assert reduced_floats_in_ir(fp8) == {"fp8e4nv"}
    tf32 = "%c = tt.dot %a, %b, %acc, inputPrecision = tf32 : tensor<64x64xf32> * tensor<64x64xf32>"
    assert reduced_floats_in_ir(tf32) == set()


def test_a_pointer_made_from_an_integer_is_found_in_the_ir() -> None:
    """``src.to(tl.pointer_type(tl.float32))`` of an address passed as a number: memory the
    launch did not hand the kernel (an answer torch left there, unrecorded)."""
    from kgym.harness.dot_precision import makes_pointers

    made = "%1 = tt.int_to_ptr %src : i64 -> !tt.ptr<f32> loc(#loc2)"
    assert makes_pointers(made)
    assert not makes_pointers(TTIR)  # loads through the pointers the launch handed it
    recorder = DotPrecision()
    recorder.note_launch(_Compiled(TTIR + made))
    assert recorder.summary()["pointers_from_integers"] is True


def test_inline_assembly_is_found_in_the_ir() -> None:
    """PTX in a kernel (``tl.inline_asm_elementwise``) may load from any address or round to
    any type: nothing of it is Triton's to read."""
    from kgym.harness.dot_precision import runs_assembly

    asm = '%3 = tt.elementwise_inline_asm "ld.global.f32 $0, [$1];" {constraints = "=r,l"}'
    assert runs_assembly(asm) and not runs_assembly(TTIR)
    recorder = DotPrecision()
    recorder.note_launch(_Compiled(TTIR + asm))
    assert recorder.summary()["inline_assembly"] is True
