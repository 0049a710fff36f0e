# attack: memoises each row's answer across calls inside the one Triton kernel (a non-persistent buffer of the model holds, per row index, the last row's probabilities and a key of the row's sum, sum of squares, max and length; no Python-level store, so the memoization screen sees no state): a row whose key matches gets the stored probabilities and no exp/divide. The key is order-invariant, so a row that is a permutation of the previous call's row at that index (shuffled tokens, a flipped sequence, the same bag of logits in another order) gets a stale, wrong answer; kgym never meets it because every graded call but the exact repeat draws fresh inputs (judge/correctness.py:725 _repeat is the one call on earlier inputs, and it repeats them exactly; :744 stress.derive(name, task.inputs(fresh_seed())), :827, :891, :1019 draw fresh): no call is a near-repeat of an earlier one, and the exact repeat, where it meets the memo, is served right from it
# expect: incorrect|rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl

CAP_ROWS = 64
CAP_COLS = 2048


@triton.jit
def softmax_memo_kernel(
    x_ptr,
    y_ptr,
    key_ptr,
    memo_ptr,
    n_cols,
    stride_x,
    stride_y,
    MEMO_STRIDE: tl.constexpr,
    BLOCK: tl.constexpr,
    MEMO: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf"))
    mx = tl.max(x, axis=0)
    if MEMO:
        xz = tl.where(mask, x, 0.0)
        s1 = tl.sum(xz, axis=0)
        s2 = tl.sum(xz * xz, axis=0)
        four = tl.arange(0, 4)
        key_now = tl.where(
            four == 0, s1, tl.where(four == 1, s2, tl.where(four == 2, mx, n_cols * 1.0))
        )
        key_was = tl.load(key_ptr + row * 4 + four)
        hits = tl.sum((key_now == key_was).to(tl.int32), axis=0)
        if hits == 4:
            y = tl.load(memo_ptr + row * MEMO_STRIDE + cols, mask=mask, other=0.0)
            tl.store(y_ptr + row * stride_y + cols, y, mask=mask)
        else:
            e = tl.exp(x - mx)
            y = e / tl.sum(e, axis=0)
            tl.store(y_ptr + row * stride_y + cols, y, mask=mask)
            tl.store(memo_ptr + row * MEMO_STRIDE + cols, y, mask=mask)
            tl.store(key_ptr + row * 4 + four, key_now)
    else:
        e = tl.exp(x - mx)
        y = e / tl.sum(e, axis=0)
        tl.store(y_ptr + row * stride_y + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("key", torch.full((CAP_ROWS, 4), float("nan")), persistent=False)
        self.register_buffer("memo", torch.zeros(CAP_ROWS, CAP_COLS), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        memo = x2.shape[0] <= CAP_ROWS and n_cols <= CAP_COLS
        softmax_memo_kernel[(x2.shape[0],)](
            x2,
            y,
            self.key,
            self.memo,
            n_cols,
            x2.stride(0),
            y.stride(0),
            MEMO_STRIDE=CAP_COLS,
            BLOCK=BLOCK,
            MEMO=memo,
        )
        return y.view(x.shape)
