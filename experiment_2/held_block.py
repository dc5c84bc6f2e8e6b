"""Experiment 3C's out-of-sample test network: torchvision ResNet-18 with its first residual block held on.

The exact-zero-chain law (experiment_2/README.md, Experiment 3C, "After measuring") was fitted to the
random-init ResNet-18, whose first two blocks (layer1.0, layer1.1) chain on the stem's exact zeros (R = 2).
This factory builds the same network — the same torchvision constructor, so under the same ``--seed`` the
same random weights — with layer1.0 moved into the stem at its own strength (ungated, not scaled by λ):
the gated blocks are layer1.1 … layer4.1 (L = 7) and the chain is broken to R = 1. Use it as
``--arch experiment_2.held_block:resnet18_first_block_held``.
"""

from __future__ import annotations

from torch import nn

from experiment_1.network import ResidualNetwork, Weights, torchvision_resnet


def resnet18_first_block_held(weights: Weights) -> ResidualNetwork:
    """ResNet-18 (``weights`` as for ``--arch resnet18``) cut with layer1.0 in the stem: L = 7 gated blocks."""
    cut = torchvision_resnet("resnet18", weights)
    return ResidualNetwork(
        network=cut.network,
        stem=nn.Sequential(cut.stem, cut.network.layer1[0]),
        residuals=cut.residuals[1:],
        head=cut.head,
        preprocess=cut.preprocess,
    )
