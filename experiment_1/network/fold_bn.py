"""Fold eval-mode batch-norm into the convolution before it (optional; not bit-exact).

``BN(conv(x)) = conv'(x)`` with ``w' = w · γ/σ`` and ``b' = (b − μ) · γ/σ + β``, ``σ = sqrt(var + ε)``:
the same function up to float32 round-off, one pass over the activations fewer per convolution.
It pays where batch-norm is a sizeable share of a tree pass (EfficientNet-Lite0 on CPU; see the
PERFORMANCE.md's profile table). Pairs are found in every ``nn.Sequential`` (a ``Conv2d`` followed by a
``BatchNorm2d``) and in modules with EfficientNet's MBConv attribute pairs; each folded BN is
replaced by ``nn.Identity`` wherever it is referenced (the gated stack shares the original modules).
"""

from __future__ import annotations

import torch
from torch import nn

from experiment_1.network.stack import ResidualStack

MBCONV_PAIRS = (("_expand_conv", "_bn0"), ("_depthwise_conv", "_bn1"), ("_project_conv", "_bn2"))


def _conv_bn_pairs(model: nn.Module) -> list[tuple[nn.Conv2d, nn.BatchNorm2d]]:
    pairs = []
    for module in model.modules():
        if isinstance(module, nn.Sequential):
            children = list(module)
            pairs += [
                (a, b)
                for a, b in zip(children, children[1:])
                if isinstance(a, nn.Conv2d) and isinstance(b, nn.BatchNorm2d)
            ]
        for conv_name, bn_name in MBCONV_PAIRS:
            conv, bn = getattr(module, conv_name, None), getattr(module, bn_name, None)
            if isinstance(conv, nn.Conv2d) and isinstance(bn, nn.BatchNorm2d):
                pairs.append((conv, bn))
    unique = {id(bn): (conv, bn) for conv, bn in pairs}
    return list(unique.values())


@torch.no_grad()
def fold_batchnorm(model: ResidualStack) -> int:
    """Fold every conv → batch-norm pair of an ``eval()`` model in place; returns how many were folded.

    A batch norm without ``affine`` parameters folds with ``γ = 1, β = 0``; one without running statistics
    (``track_running_stats=False``: batch statistics even in ``eval()``) is no fixed affine map and stays."""
    pairs = [(conv, bn) for conv, bn in _conv_bn_pairs(model) if bn.running_var is not None]
    for conv, bn in pairs:
        gamma = bn.weight if bn.weight is not None else torch.ones_like(bn.running_var)
        beta = bn.bias if bn.bias is not None else torch.zeros_like(bn.running_mean)
        scale = gamma / torch.sqrt(bn.running_var + bn.eps)
        bias = conv.bias if conv.bias is not None else torch.zeros_like(bn.running_mean)
        conv.weight.copy_(conv.weight * scale.view(-1, 1, 1, 1))
        conv.bias = nn.Parameter((bias - bn.running_mean) * scale + beta, requires_grad=False)
    folded = {id(bn) for _, bn in pairs}
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if id(child) in folded:
                setattr(parent, name, nn.Identity())
    return len(pairs)
