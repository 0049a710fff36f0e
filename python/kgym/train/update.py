"""The optimiser step: AdamW, a warm-up then constant or cosine learning rate, gradient
clipping by global norm."""

from __future__ import annotations

import math

import torch

from kgym.train.config import OptimConfig


def make_optimizer(
    model: torch.nn.Module, cfg: OptimConfig, steps: int
) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.LambdaLR]:
    params = [p for p in model.parameters() if p.requires_grad]
    opt: torch.optim.Optimizer
    if cfg.name == "sgd":
        opt = torch.optim.SGD(
            params, lr=cfg.lr, momentum=cfg.momentum, weight_decay=cfg.weight_decay
        )
    else:
        opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)

    def factor(step: int) -> float:
        if cfg.warmup_steps and step < cfg.warmup_steps:
            return (step + 1) / cfg.warmup_steps
        if cfg.schedule == "cosine":
            span = max(1, steps - cfg.warmup_steps)
            return 0.5 * (1 + math.cos(math.pi * min(1.0, (step - cfg.warmup_steps) / span)))
        return 1.0

    return opt, torch.optim.lr_scheduler.LambdaLR(opt, factor)


def step(
    model: torch.nn.Module,
    opt: torch.optim.Optimizer,
    sched: torch.optim.lr_scheduler.LambdaLR,
    loss: torch.Tensor,
    max_norm: float,
) -> float:
    """Backward, clip, step; returns the gradient norm before clipping."""
    opt.zero_grad(set_to_none=True)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(
        [p for p in model.parameters() if p.requires_grad], max_norm
    )
    opt.step()
    sched.step()
    return float(norm)
