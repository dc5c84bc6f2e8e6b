"""The smooth control of Experiment 3C: swap every piecewise-linear activation of a gated stack for a smooth one.

The λ^k law is proved for residual stacks that are smooth in λ; ReLU and ReLU6 have kinks. This
module replaces, in place and keeping every weight, each ``nn.ReLU`` by Softplus_β and each
``nn.ReLU6`` by its smooth counterpart ``Softplus_β(x) − Softplus_β(x − 6)`` — in the stem, the
branches, the post-sum activation of ResNets, the fixed (ungated) blocks and the head alike.

- ``Softplus_β(x) = log(1 + e^{βx}) / β`` is analytic; its largest distance from ReLU is
  ``log 2 / β`` (at 0), and its kink is rounded over a width of about ``1/β``. It is computed as
  ``logaddexp(βx, 0) / β`` (the same function, no overflow, one fused kernel) and without
  PyTorch's ``threshold`` switch to the identity, which would put a jump of ``e^{−threshold}/β``
  into the function — a non-smooth point of its own.
- ``SmoothReLU6_β(x) = Softplus_β(x) − Softplus_β(x − 6)``: analytic, 0 for x ≪ 0, 6 for x ≫ 6,
  at most ``log 2 / β`` from ReLU6.

Other piecewise-linear modules (max-pooling, LeakyReLU, hard-tanh other than ReLU6, hard-swish …)
are left alone where they run before the first gated block (the stem: they see no λ and no mask;
ResNet's stem max-pool) and refused anywhere after it, so a swapped stack is smooth in every
gate and in λ.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from experiment_1.errors import PipelineError
from experiment_1.network.residual_stack import ResidualStack

DEFAULT_BETA = 10.0
PIECEWISE_LINEAR = (nn.ReLU, nn.ReLU6, nn.Hardtanh, nn.LeakyReLU, nn.PReLU, nn.RReLU, nn.Hardswish, nn.Hardsigmoid, nn.Hardshrink, nn.Softshrink, nn.MaxPool1d, nn.MaxPool2d, nn.MaxPool3d, nn.AdaptiveMaxPool2d)


def softplus(x: torch.Tensor, beta: float) -> torch.Tensor:
    """``log(1 + e^{βx}) / β`` for every x, without overflow and without a threshold switch."""
    return torch.logaddexp(beta * x, x.new_zeros(())) / beta


class Softplus(nn.Module):
    """Softplus_β, the smooth stand-in for ReLU (no threshold: analytic everywhere)."""

    def __init__(self, beta: float) -> None:
        super().__init__()
        self.beta = float(beta)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softplus(x, self.beta)

    def extra_repr(self) -> str:
        return f"beta={self.beta:g}"


class SmoothReLU6(nn.Module):
    """``Softplus_β(x) − Softplus_β(x − 6)``, the smooth stand-in for ReLU6."""

    def __init__(self, beta: float) -> None:
        super().__init__()
        self.beta = float(beta)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softplus(x, self.beta) - softplus(x - 6.0, self.beta)

    def extra_repr(self) -> str:
        return f"beta={self.beta:g}"


def describe_swap(beta: float) -> str:
    """The swap in words, as the summaries' ``gated_recursion`` and the REPORTs state it."""
    return (f"every ReLU replaced by Softplus_β(x) = log(1 + e^(βx))/β and every ReLU6 by Softplus_β(x) − Softplus_β(x − 6), "
            f"β = {beta:g} (at most log 2/β = {math.log(2) / beta:.3g} from the original; all weights kept)")


def _smooth_counterpart(module: nn.Module, beta: float) -> nn.Module:
    # ReLU6 is a Hardtanh subclass: test it before the refusal of other piecewise-linear modules
    if type(module) is nn.ReLU6:
        return SmoothReLU6(beta)
    if type(module) is nn.ReLU:
        return Softplus(beta)
    return module


def smooth_activations(model: ResidualStack, beta: float) -> int:
    """Replace every ReLU / ReLU6 of ``model`` by its smooth counterpart, in place; returns how many.

    A module referenced from several parents (the gated stack shares the original network's
    modules) gets one replacement, set on every parent. A :class:`PipelineError` names any other
    piecewise-linear module after the stem.
    """
    if not beta > 0 or not math.isfinite(beta):
        raise PipelineError(f"--smooth-activations {beta:g}: β must be a positive finite number (e.g. 10)")
    replacements: dict[int, nn.Module] = {}
    for parent in model.modules():
        for name, child in list(parent._modules.items()):  # not named_children(): it skips a module listed twice (MBConv uses one ReLU6 twice)
            if type(child) in (nn.ReLU, nn.ReLU6):
                replacement = replacements.setdefault(id(child), _smooth_counterpart(child, beta))
                setattr(parent, name, replacement)
    after_stem = [module for part in (model.blocks, model.head) for module in part.modules()]
    left = sorted({type(module).__name__ for module in after_stem if isinstance(module, PIECEWISE_LINEAR)})
    if left:
        raise PipelineError(f"{model.arch}: --smooth-activations has no smooth counterpart for {', '.join(left)} after the stem; "
                            "the stack would stay piecewise linear in the gates — run it without --smooth-activations")
    return len(replacements)
