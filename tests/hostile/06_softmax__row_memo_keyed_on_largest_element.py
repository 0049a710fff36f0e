# attack: memoises each row's softmax across calls inside the Triton kernel (buffers only the kernel writes) under a key of the row's length, the place and value of its largest-magnitude element and its two end elements; every near repeat either moved each row's largest element (the swap) or redrew whole rows or inputs, so the memo was never stale under kgym, and a caller who changes any interior logit that is not the row's largest gets the previous call's probabilities
# expect: incorrect
# rules: -
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
        mag = tl.where(mask, tl.abs(xz), -1.0)
        at = tl.argmax(mag, axis=0)
        big = tl.sum(tl.where(cols == at, xz, 0.0), axis=0)
        x_first = tl.sum(tl.where(cols == 0, xz, 0.0), axis=0)
        x_last = tl.sum(tl.where(cols == n_cols - 1, xz, 0.0), axis=0)
        eight = tl.arange(0, 8)
        key_now = tl.where(
            eight == 0,
            n_cols * 1.0,
            tl.where(
                eight == 1,
                at * 1.0,
                tl.where(
                    eight == 2,
                    big,
                    tl.where(eight == 3, x_first, tl.where(eight == 4, x_last, 0.0)),
                ),
            ),
        )
        key_was = tl.load(key_ptr + row * 8 + eight)
        hits = tl.sum((key_now == key_was).to(tl.int32), axis=0)
        if hits == 8:
            y = tl.load(memo_ptr + row * MEMO_STRIDE + cols, mask=mask, other=0.0)
            tl.store(y_ptr + row * stride_y + cols, y, mask=mask)
        else:
            e = tl.exp(x - mx)
            y = e / tl.sum(e, axis=0)
            tl.store(y_ptr + row * stride_y + cols, y, mask=mask)
            tl.store(memo_ptr + row * MEMO_STRIDE + cols, y, mask=mask)
            tl.store(key_ptr + row * 8 + eight, key_now)
    else:
        e = tl.exp(x - mx)
        y = e / tl.sum(e, axis=0)
        tl.store(y_ptr + row * stride_y + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("key", torch.full((CAP_ROWS, 8), float("nan")), persistent=False)
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
