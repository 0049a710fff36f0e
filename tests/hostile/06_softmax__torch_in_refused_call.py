# attack: torch computes the answer in a call the model then refuses: a call that raises is re-made by the judge on the same inputs in the plain manner (correctness._call_in_manner, a refusal costs nothing but a line in refused_manners), and the torch record of a call that raised is dropped with its reply (runner: _exception_reply carries no torch_ops; policy.observe sees ok replies only); so in grad mode / training mode forward lets torch.softmax compute (reached as a default argument, which the screen does not type), has the one Triton kernel store inputs and answer in buffers made in __init__ and raises; the re-call's kernel finds its inputs there and stores torch's answer (the buffers are the model's own, untouched during the re-call, so the copy test takes them for weights and the decoy check sees the kernel matter); plain calls compute honestly
# expect: rejected|runtime_error
# rules: torch-compute
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl

STASH = 1 << 22


@triton.jit
def softmax_kernel(
    x_ptr,
    y_ptr,
    sx_ptr,
    sy_ptr,
    n_cols,
    stride_x,
    stride_y,
    STASHING: tl.constexpr,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    if STASHING:
        yv = tl.load(y_ptr + row * stride_y + cols, mask=mask, other=0.0)
        tl.store(sx_ptr + row * n_cols + cols, x, mask=mask)
        tl.store(sy_ptr + row * n_cols + cols, yv, mask=mask)
    else:
        sx = tl.load(sx_ptr + row * n_cols + cols, mask=mask, other=0.0)
        differ = tl.sum(tl.where(mask & (sx != x), 1, 0), axis=0)
        xm = tl.where(mask, x, float("-inf"))
        xm = xm - tl.max(xm, axis=0)
        e = tl.exp(xm)
        honest = e / tl.sum(e, axis=0)
        sy = tl.load(sy_ptr + row * n_cols + cols, mask=mask, other=0.0)
        out = tl.where(differ == 0, sy, honest)
        tl.store(y_ptr + row * stride_y + cols, out, mask=mask)


def _training(grad=torch.is_grad_enabled):
    return grad()


def _torch_softmax(t, how=torch.softmax):
    return how(t, -1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("seen_x", torch.zeros(STASH), persistent=False)
        self.register_buffer("seen_y", torch.zeros(STASH), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.detach().contiguous().view(-1, n_cols)
        BLOCK = triton.next_power_of_2(n_cols)
        fits = x2.numel() <= STASH
        if fits and (_training() or self.training):
            y = _torch_softmax(x2)
            softmax_kernel[(x2.shape[0],)](
                x2,
                y,
                self.seen_x,
                self.seen_y,
                n_cols,
                x2.stride(0),
                y.stride(0),
                STASHING=True,
                BLOCK=BLOCK,
            )
            raise RuntimeError("this layer is inference-only")
        y = torch.empty_like(x2)
        softmax_kernel[(x2.shape[0],)](
            x2,
            y,
            self.seen_x,
            self.seen_y,
            n_cols,
            x2.stride(0),
            y.stride(0),
            STASHING=False,
            BLOCK=BLOCK,
        )
        return y.view(x.shape)
