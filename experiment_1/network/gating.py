"""The public way to gate a residual network: say where its residual blocks are, get a :class:`ResidualStack`.

A factory — built in (:mod:`experiment_1.network.registry`) or a user's, loaded with
``--arch package.module:function`` — takes the parsed ``--weights`` (:class:`~experiment_1.network.choices.Weights`)
and returns a :class:`ResidualNetwork`: the network itself and its cut into ``stem``, one
:class:`Residual` per residual block, and ``head``. Every block must compute
``post(shortcut(pre(x)) + branch(pre(x)))``; the stack multiplies ``branch`` by the gate ``λ·m``.
:func:`gate` builds the stack from the very same modules (nothing is copied) and checks that with
every gate on it computes what the network's own forward computes::

    def build_model(weights: Weights) -> ResidualNetwork:
        net = MyResNet().eval()
        load_weights_into(net, weights)                      # random: nothing to load
        return ResidualNetwork(
            network=net,
            stem=nn.Sequential(net.conv, net.bn, nn.ReLU()),
            residuals=[Residual(branch=b.branch, shortcut=b.shortcut, post=nn.ReLU(), name=f"block{i}")
                       for i, b in enumerate(net.blocks)],
            head=nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(1), net.fc),
            preprocess=Preprocess(resize=32, crop=32, mean=..., std=...),
        )

A complete, runnable example is :mod:`experiment_1.examples.cifar_resnet20`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
from torch import nn

from experiment_1.errors import PipelineError
from experiment_1.network.choices import Weights
from experiment_1.network.stack import GateableBlock, Preprocess, ResidualStack

PARITY_RTOL = 1e-4
# The evaluation model as run (device, dtype, compiled, batch-norm folded) against the float32 CPU stack: round-off of
# its arithmetic (TF32's 10-bit and bfloat16's 8-bit mantissas over some 50 layers), far below a wrong kernel or layout.
EVALUATION_PARITY_RTOL = {
    "float32": 1e-4,
    "float64": 1e-4,
    "tf32": 1e-2,
    "float16": 1e-2,
    "bfloat16": 5e-2,
}  # measured on CPU: bf16 ≤ 5e-3, fp16 ≤ 7e-4 (ResNet-18/50, Lite0)


@dataclass
class Residual:
    """One residual block, ``y = post(shortcut(pre(x)) + branch(pre(x)))``; ``None`` parts are identities.

    ``branch`` is what the gate multiplies; ``pre`` holds fixed (ungated) layers that run before the
    block, e.g. non-residual blocks between two residual ones.
    """

    branch: nn.Module
    shortcut: nn.Module | None = None
    post: nn.Module | None = None
    pre: nn.Module | None = None
    name: str = ""


UNSET = "unset"
"""``ResidualNetwork.preprocess`` when the factory named none: refused by :func:`gate`, since a silent
default would evaluate, say, a 32-px network at 224 px with ImageNet normalisation."""


@dataclass
class ResidualNetwork:
    """What an architecture factory returns: a network and its cut ``stem → residuals → head``.

    ``preprocess`` is the evaluation transform the network expects; it must be given —
    ``preprocess=None`` explicitly takes the ImageNet default (short side 256, crop 224, ImageNet mean/std).
    """

    network: nn.Module
    stem: nn.Module
    residuals: list[Residual]
    head: nn.Module
    preprocess: Preprocess | None | str = UNSET


def cut_preprocess(cut: ResidualNetwork, arch: str) -> Preprocess:
    """The cut's transform (``None`` → the ImageNet default); one line when the factory named none."""
    if isinstance(cut.preprocess, Preprocess):
        return cut.preprocess
    if cut.preprocess is None:
        return Preprocess()
    raise PipelineError(
        f"--arch {arch}: the factory's ResidualNetwork names no preprocess; pass preprocess=Preprocess(resize, crop, mean, std) "
        "for the network's input, or preprocess=None for the ImageNet default (resize 256, crop 224)"
    )


Factory = Callable[[Weights], ResidualNetwork]


def gate(cut: ResidualNetwork, arch: str, weights: str) -> ResidualStack:
    """The gated stack of ``cut`` in ``eval()`` mode (modules shared with ``cut.network``), checked
    against the network's own forward; one-line :class:`PipelineError` when it has no residual
    blocks or its full mask computes something else."""
    if not isinstance(cut, ResidualNetwork):
        raise PipelineError(
            f"--arch {arch}: the factory returned a {type(cut).__name__}, not an experiment_1.network.gating.ResidualNetwork"
        )
    if not cut.residuals:
        raise PipelineError(
            f"--arch {arch}: the factory returned no residual blocks; list one experiment_1.network.gating.Residual per block in ResidualNetwork.residuals"
        )
    blocks = [
        GateableBlock(
            part.branch, shortcut=part.shortcut, post=part.post, pre=part.pre, name=part.name or f"block{index}"
        )
        for index, part in enumerate(cut.residuals)
    ]
    stack = ResidualStack(cut.stem, blocks, cut.head, cut_preprocess(cut, arch), arch, weights).eval()
    check_eval_mode(cut.network.eval(), arch)
    check_full_mask_parity(cut.network, stack)
    return stack


def check_eval_mode(network: nn.Module, arch: str) -> None:
    """Every module must be in inference mode after ``eval()`` (a ``train()`` override that ignores it would run dropout and batch statistics)."""
    training = [name or type(network).__name__ for name, module in network.named_modules() if module.training]
    if training:
        raise PipelineError(
            f"--arch {arch}: {len(training)} module(s) stay in training mode after eval() (first: {training[0]}); "
            "a train() override must honour mode=False — the all-mask evaluation needs the inference-mode network"
        )


@torch.no_grad()
def check_full_mask_parity(network: nn.Module, stack: ResidualStack) -> None:
    """The stack with every gate on must give the network's own logits on one random image at the
    model's input size (to float32 round-off); skipped when the network's own logits are not finite
    (the batch loop reports non-finite logits itself)."""
    parameter = next(stack.parameters(), None)
    device, dtype = (
        (parameter.device, parameter.dtype) if parameter is not None else (torch.device("cpu"), torch.float32)
    )
    size = stack.preprocess.crop
    image = parity_image(size).to(device=device, dtype=dtype)
    expected = network(image)
    if not isinstance(expected, torch.Tensor):
        raise PipelineError(
            f"--arch {stack.arch}: the network's forward returns a {type(expected).__name__}, not a logits tensor; pass a network whose forward returns logits"
        )
    if expected.is_complex() or not expected.is_floating_point() or expected.dim() != 2:
        raise PipelineError(
            f"--arch {stack.arch}: the network's forward returns a {expected.dim()}-d {expected.dtype} tensor; the pipeline needs real (batch, classes) logits"
        )
    stack.num_classes = int(expected.shape[1])  # C as the network computes it (a head without nn.Linear included)
    if not torch.isfinite(expected).all():
        return
    branch_peaks: list[float] = []
    hooks = [
        block.branch.register_forward_hook(
            lambda module, inputs, output: branch_peaks.append(output.abs().max().item())
        )
        for block in stack.blocks
    ]
    try:
        actual = stack(image)
    except RuntimeError as error:
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0][:160]
        raise PipelineError(
            f"--arch {stack.arch}: the gated stack fails on a {size}-px image ({first_line}); check that stem → "
            f"residuals → head lists every layer in forward order"
        ) from None
    finally:
        for hook in hooks:
            hook.remove()
    if actual.shape != expected.shape:
        raise PipelineError(
            f"--arch {stack.arch}: the gated stack gives logits of shape {tuple(actual.shape)}, the network {tuple(expected.shape)}; check the head"
        )
    stack.full_mask_reference = (size, actual.detach().float().cpu())
    error = _relative_max_error(actual, expected)
    if not error <= PARITY_RTOL and not torch.equal(network(image), expected):
        raise PipelineError(
            f"--arch {stack.arch}: two calls of the network's own forward on one image give different logits; "
            "a stochastic layer (F.dropout with training=True, added noise …) makes it no set function — make its forward deterministic"
        )
    if not error <= PARITY_RTOL:
        raise PipelineError(
            f"--arch {stack.arch}: with every gate on the gated stack differs from the network's own forward (relative error {error:.2g}); "
            "check that stem → residuals → head covers every layer in forward order and that each block is post(shortcut(pre(x)) + branch(pre(x)))"
        )
    check_branches_not_zero(stack, branch_peaks)


def check_branches_not_zero(stack: ResidualStack, branch_peaks: list[float]) -> None:
    """One line when a residual branch outputs exactly zero on the parity image (its largest ``|F_l(x)|``):
    gating it changes nothing, so every Möbius coefficient that contains it is 0 — with every branch zero
    there is no interaction energy at all. timm zero-initialises each block's last batch-norm
    (``zero_init_last``), which does exactly this to a random-init network."""
    zero = [block.name for block, peak in zip(stack.blocks, branch_peaks) if peak == 0.0]
    if zero:
        raise PipelineError(
            f"--arch {stack.arch}: residual branch(es) {', '.join(zero[:3])}{' …' if len(zero) > 3 else ''} "
            f"({len(zero)} of {stack.num_blocks}) output exactly zero "
            "(a zero-initialised last batch-norm, as timm's zero_init_last gives random-init weights?); initialise them or load trained weights"
        )


def parity_image(size: int) -> torch.Tensor:
    """The one random ``(1, 3, size, size)`` float32 image the parity checks use (seed 0, on the CPU)."""
    return torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(0))


def _relative_max_error(actual: torch.Tensor, expected: torch.Tensor) -> float:
    return ((actual - expected).abs().max() / expected.abs().max().clamp_min(torch.finfo(expected.dtype).tiny)).item()


@torch.no_grad()
def check_evaluation_parity(stack: ResidualStack, dtype_name: str) -> float:
    """The model as it will be evaluated — on its device, in its dtype, compiled or not — with every gate on
    (the gated forward the naive engine runs) must give the float32 CPU stack's logits on the parity image
    within :data:`EVALUATION_PARITY_RTOL` of ``--dtype dtype_name`` (relative to the largest logit). Returns the
    relative error; nothing to check without a reference (or non-finite reference logits)."""
    if stack.full_mask_reference is None:
        return 0.0
    size, reference = stack.full_mask_reference
    if not torch.isfinite(reference).all():
        return 0.0
    parameter = next(stack.parameters())
    image = (
        parity_image(size)
        .to(device=parameter.device, dtype=parameter.dtype)
        .contiguous(memory_format=stack.memory_format)
    )
    masks = torch.ones(1, stack.num_blocks, dtype=torch.bool, device=parameter.device)
    actual = stack(image, masks=masks).float().cpu()
    error = _relative_max_error(actual, reference)
    tolerance = EVALUATION_PARITY_RTOL[dtype_name]
    if not error <= tolerance:
        how = f"on {parameter.device} with --dtype {dtype_name}" + (" compiled" if stack.compiled else "")
        raise PipelineError(
            f"--arch {stack.arch}: {how}, the model with every gate on differs from the float32 CPU network by {error:.2g} "
            f"(more than the {tolerance:g} round-off of that dtype); rerun with --device cpu or --dtype float32 (and "
            f"without --compile) to find the part at fault"
        )
    return error
