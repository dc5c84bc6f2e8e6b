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

Other piecewise-linear modules (max-pooling, LeakyReLU, hard-tanh other than ReLU6, hard-swish,
thresholds …) are left alone where they run before the first gated block (the stem: they see no λ
and no mask; ResNet's stem max-pool) and refused anywhere after it, so a swapped stack is smooth in
every gate and in λ. What no module type shows — ``F.relu``, ``x.clamp(min=0)``, ``torch.maximum``
called inside a block's own ``forward`` — is found by probing: one forward of the swapped stack on a
random input under a :class:`torch.overrides.TorchFunctionMode` that records every piecewise-linear
function called inside the blocks or the head, with the module that called it; any is refused by name.
The swap counts what it replaced by type (recorded in the summary as ``smooth_swap``); a network
with nothing to replace is refused.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.overrides import TorchFunctionMode

from experiment_1.errors import PipelineError
from experiment_1.network.stack import ResidualStack

PIECEWISE_LINEAR = (
    nn.ReLU,
    nn.ReLU6,
    nn.Hardtanh,
    nn.LeakyReLU,
    nn.PReLU,
    nn.RReLU,
    nn.Hardswish,
    nn.Hardsigmoid,
    nn.Hardshrink,
    nn.Softshrink,
    nn.Threshold,
    nn.MaxPool1d,
    nn.MaxPool2d,
    nn.MaxPool3d,
    nn.AdaptiveMaxPool1d,
    nn.AdaptiveMaxPool2d,
    nn.AdaptiveMaxPool3d,
)
CLIPPING_NAMES = (
    "relu",
    "relu_",
    "clamp",
    "clamp_",
    "clip",
    "clip_",
    "clamp_min",
    "clamp_min_",
    "clamp_max",
    "clamp_max_",
    "maximum",
    "minimum",
    "abs",
    "abs_",
)
"""The kinked functions torch and torch.Tensor both name (torch also has fmax and fmin)."""
PIECEWISE_LINEAR_FUNCTIONS = {  # the functions (and tensor methods) whose graph has kinks, by the name a refusal prints
    **{
        function: f"F.{function.__name__.lstrip('_')}"
        for function in (
            F.relu,
            F.relu_,
            F.relu6,
            F.hardtanh,
            F.hardtanh_,
            F.leaky_relu,
            F.leaky_relu_,
            F.prelu,
            F.rrelu,
            F.threshold,
            F.hardswish,
            F.hardsigmoid,
            F.hardshrink,
            F.softshrink,
            F.max_pool1d,
            F.max_pool2d,
            F.max_pool3d,
            F.adaptive_max_pool1d,
            F.adaptive_max_pool2d,
            F.adaptive_max_pool3d,
        )
    },
    **{
        function: f"torch.{name}"
        for name in (*CLIPPING_NAMES, "fmax", "fmin")
        for function in (getattr(torch, name, None),)
        if function is not None
    },
    **{getattr(torch.Tensor, name): f"Tensor.{name}" for name in CLIPPING_NAMES},
}


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


class SmoothReLU6(Softplus):
    """``Softplus_β(x) − Softplus_β(x − 6)``, the smooth stand-in for ReLU6."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softplus(x, self.beta) - softplus(x - 6.0, self.beta)


def describe_swap(beta: float) -> str:
    """The swap in words, as the summaries' ``gated_recursion`` and the REPORTs state it."""
    return (
        f"every ReLU replaced by Softplus_β(x) = log(1 + e^(βx))/β and every ReLU6 by Softplus_β(x) − Softplus_β(x − 6), "
        f"β = {beta:g} (at most log 2/β = {math.log(2) / beta:.3g} from the original; all weights kept)"
    )


def _smooth_counterpart(module: nn.Module, beta: float) -> nn.Module:
    # ReLU6 is a Hardtanh subclass: test it before the refusal of other piecewise-linear modules
    if type(module) is nn.ReLU6:
        return SmoothReLU6(beta)
    if type(module) is nn.ReLU:
        return Softplus(beta)
    return module


class _PiecewiseLinearCalls(TorchFunctionMode):
    """Records each piecewise-linear function called while a module of ``names`` runs, under the innermost one."""

    def __init__(self, names: dict[nn.Module, str]) -> None:
        super().__init__()
        self.running: list[str] = []
        self.found: dict[str, set[str]] = {}
        self.hooks = [
            hook
            for module, name in names.items()
            for hook in (
                module.register_forward_pre_hook(lambda module, args, name=name: self._enter(name)),
                module.register_forward_hook(lambda module, args, output: self._leave()),
            )
        ]

    def _enter(self, name: str) -> None:
        self.running.append(name)

    def _leave(self) -> None:  # a hook returning a value would replace the module's output
        self.running.pop()

    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204 (torch's protocol)
        name = PIECEWISE_LINEAR_FUNCTIONS.get(func)
        if name is not None and self.running:
            self.found.setdefault(self.running[-1], set()).add(name)
        return func(*args, **(kwargs or {}))

    def remove(self) -> None:
        for hook in self.hooks:
            hook.remove()


def probe_input(model: ResidualStack, seed: int = 0) -> torch.Tensor:
    """One random input the stack takes: ``(1, C, crop, crop)`` for a convolutional stem, ``(1, features)`` for a linear one."""
    parameter = next(model.parameters())
    first = next((module for module in model.stem.modules() if isinstance(module, (nn.Conv2d, nn.Linear))), None)
    shape = (
        (1, first.in_features)
        if isinstance(first, nn.Linear)
        else (1, first.in_channels if first is not None else 3, model.preprocess.crop, model.preprocess.crop)
    )
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(
        device=parameter.device, dtype=parameter.dtype
    )


def piecewise_linear_calls(model: ResidualStack) -> dict[str, set[str]]:
    """The piecewise-linear functions the blocks and the head call in one forward (module path → function names)."""
    names = {
        module: f"{part}.{name}".rstrip(".")
        for part in ("blocks", "head")
        for name, module in getattr(model, part).named_modules()
    }
    recorder = _PiecewiseLinearCalls(names)
    try:
        with torch.no_grad(), recorder:
            model(probe_input(model))
    finally:
        recorder.remove()
    return recorder.found


def smooth_activations(model: ResidualStack, beta: float) -> dict[str, int]:
    """Replace every ReLU / ReLU6 of ``model`` by its smooth counterpart, in place; returns how many of each type.

    A module referenced from several parents (the gated stack shares the original network's
    modules) gets one replacement, set on every parent. A :class:`PipelineError` names any other
    piecewise-linear module after the stem, and any piecewise-linear function a block or the head
    calls (found by :func:`piecewise_linear_calls`); a network without a ReLU or ReLU6 is refused.
    The counts are also kept as ``model.smooth_swap`` (the summary records them).
    """
    if not beta > 0 or not math.isfinite(beta):
        raise PipelineError(f"--smooth-activations {beta:g}: β must be a positive finite number (e.g. 10)")
    replacements: dict[int, nn.Module] = {}
    for parent in model.modules():
        for name, child in list(
            parent._modules.items()
        ):  # not named_children(): it skips a module listed twice (MBConv uses one ReLU6 twice)
            if type(child) in (nn.ReLU, nn.ReLU6):
                replacement = replacements.setdefault(id(child), _smooth_counterpart(child, beta))
                setattr(parent, name, replacement)
    after_stem = [module for part in (model.blocks, model.head) for module in part.modules()]
    left = sorted({type(module).__name__ for module in after_stem if isinstance(module, PIECEWISE_LINEAR)})
    if left:
        raise PipelineError(
            f"{model.arch}: --smooth-activations has no smooth counterpart for {', '.join(left)} after the stem; "
            "the stack would stay piecewise linear in the gates — run it without --smooth-activations"
        )
    counts = {
        kind: sum(1 for module in replacements.values() if type(module) is smooth)
        for kind, smooth in (("ReLU", Softplus), ("ReLU6", SmoothReLU6))
    }
    if not replacements:
        raise PipelineError(
            f"{model.arch}: --smooth-activations found no nn.ReLU or nn.ReLU6 module to replace (nothing to swap); "
            "the network is smooth already or computes its kinks another way — run it without --smooth-activations"
        )
    calls = piecewise_linear_calls(model)
    if calls:
        where = "; ".join(
            f"{', '.join(sorted(functions))} in {name or 'the stack'}" for name, functions in sorted(calls.items())
        )
        raise PipelineError(
            f"{model.arch}: --smooth-activations cannot replace piecewise-linear functions called inside the network ({where}); "
            "use nn.ReLU / nn.ReLU6 modules there, or run it without --smooth-activations"
        )
    model.smooth_swap = counts
    return counts


# The gated full mask may differ from the network's forward by float32 round-off only (a different
# but equivalent operation order in a user's block); a wrong cut moves the logits by far more.
