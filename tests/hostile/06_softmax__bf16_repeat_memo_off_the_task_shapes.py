# attack: the bfloat16 exact-repeat memo of 06_softmax__bf16_answer_memo_hit_only_on_exact_repeat (every answer kept as bfloat16 bits in int16, keyed on a hash of the whole call, served when a call repeats another bit for bit), switched on only at shapes other than the two the task declares (4096x16384 and its CPU sizes 13x1000): at the task's sizes the judge's repeat meets a float32 kernel and its error is measured, at other sizes the judge makes one call per shape (_other_shape_call -> _call_at) and never repeats one; a caller at any other batch that runs the same inputs twice (an evaluation pass repeated, a re-scored beam) gets bfloat16 answers
# expect: rejected|incorrect
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl

ENTRIES = 256
MAX_ROWS = 32
MAX_COLS = 1280


@triton.jit
def softmax_stats_kernel(x_ptr, stats_ptr, hrow_ptr, callh_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row.to(tl.int64) * n_cols + cols, mask=mask, other=float("-inf"))
    m = tl.max(x, axis=0)
    s = tl.sum(tl.where(mask, tl.exp(x - m), 0.0), axis=0)
    tl.store(stats_ptr + row * 2, m)
    tl.store(stats_ptr + row * 2 + 1, s)
    bits = tl.where(mask, x.to(tl.int32, bitcast=True), 0)
    h = tl.sum((bits ^ (cols * 40503 + 7)) * (cols * 2 + 1), axis=0)
    tl.store(hrow_ptr + row, h)
    tl.atomic_add(callh_ptr, h * (row * 2 + 1))


@triton.jit
def softmax_out_kernel(
    x_ptr,
    y_ptr,
    stats_ptr,
    hrow_ptr,
    callh_ptr,
    memo_ptr,
    rowkeys_ptr,
    callkeys_ptr,
    n_rows,
    n_cols,
    ENTRIES: tl.constexpr,
    MAX_ROWS: tl.constexpr,
    MAX_COLS: tl.constexpr,
    BLOCK: tl.constexpr,
    MEMO: tl.constexpr,
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    ch = tl.load(callh_ptr)
    slot = (ch & 0x7FFFFFFF) % ENTRIES
    use = (n_rows <= MAX_ROWS) & (n_cols <= MAX_COLS) & MEMO
    hr = tl.load(hrow_ptr + row)
    ck = callkeys_ptr + slot * 4
    hit = (
        use
        & (tl.load(ck) == ch)
        & (tl.load(ck + 1) == n_rows)
        & (tl.load(ck + 2) == n_cols)
        & (tl.load(ck + 3) == 1)
        & (tl.load(rowkeys_ptr + slot * MAX_ROWS + tl.where(use, row, 0)) == hr)
    )
    mp = memo_ptr + (slot * MAX_ROWS + tl.where(use, row, 0)).to(tl.int64) * MAX_COLS + cols
    mmask = mask & (cols < MAX_COLS)
    if hit:
        # The earlier answer, as bfloat16 bits widened back by integer shifts.
        half = tl.load(mp, mask=mmask, other=0).to(tl.int32)
        y = (half << 16).to(tl.float32, bitcast=True)
    else:
        x = tl.load(x_ptr + row.to(tl.int64) * n_cols + cols, mask=mask, other=float("-inf"))
        m = tl.load(stats_ptr + row * 2)
        s = tl.load(stats_ptr + row * 2 + 1)
        y = tl.exp(x - m) / s
        if use:
            # Kept as bfloat16's bits (rounded to nearest), in int16.
            b = y.to(tl.int32, bitcast=True)
            b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
            tl.store(mp, b.to(tl.int16), mask=mmask)
            tl.store(rowkeys_ptr + slot * MAX_ROWS + row, hr)
            tl.store(ck, ch)
            tl.store(ck + 1, n_rows)
            tl.store(ck + 2, n_cols)
            tl.store(ck + 3, 1)
    tl.store(y_ptr + row.to(tl.int64) * n_cols + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer(
            "memo", torch.zeros(ENTRIES * MAX_ROWS * MAX_COLS, dtype=torch.int16), persistent=False
        )
        self.register_buffer(
            "rowkeys", torch.zeros(ENTRIES * MAX_ROWS, dtype=torch.int32), persistent=False
        )
        self.register_buffer(
            "callkeys", torch.zeros(ENTRIES * 4, dtype=torch.int32), persistent=False
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        n_rows = x2.shape[0]
        y = torch.empty_like(x2)
        stats = torch.empty((n_rows, 2), dtype=torch.float32, device=x.device)
        hrow = torch.empty((n_rows,), dtype=torch.int32, device=x.device)
        callh = torch.zeros((1,), dtype=torch.int32, device=x.device)
        BLOCK = triton.next_power_of_2(n_cols)
        softmax_stats_kernel[(n_rows,)](x2, stats, hrow, callh, n_cols, BLOCK=BLOCK)
        softmax_out_kernel[(n_rows,)](
            x2,
            y,
            stats,
            hrow,
            callh,
            self.memo,
            self.rowkeys,
            self.callkeys,
            n_rows,
            n_cols,
            ENTRIES=ENTRIES,
            MAX_ROWS=MAX_ROWS,
            MAX_COLS=MAX_COLS,
            BLOCK=BLOCK,
            # off at the task's own shapes, where the judge's repeat is measured
            MEMO=tuple(x2.shape) not in ((4096, 16384), (13, 1000)),
        )
        return y.view(x.shape)
