"""Worked example: a CIFAR-style ResNet-20 of your own, gated through the public API (:mod:`experiment_1.network.gating`).

ResNet-20 (He et al. 2016, §4.2): a 3×3 stem conv to 16 channels, three stages of three basic
blocks (16, 32, 64 channels; the first block of stages 2 and 3 halves the resolution with a 1×1
projection shortcut), global average pooling and a 10-way linear layer. Each block computes
``ReLU(shortcut(x) + F(x))`` — ReLU after the sum — so the gated stack has ``L = 9`` blocks,
``x_{l+1} = ReLU(shortcut_l(x_l) + λ·m_l·F_l(x_l))``.

The network below is a plain PyTorch module that knows nothing of gates; :func:`build_model` is
the factory the pipeline calls with ``--arch experiment_1.examples.cifar_resnet20:build_model``::

    python -m experiment_2.step_1_evaluate --arch experiment_1.examples.cifar_resnet20:build_model --weights random \\
        --sample-index experiment_1/sample_index_sample_test.json --data-dir imagenet-1k/sample-1750 \\
        --limit 8 --output-dir experiment_2/results_resnet20
    python -m experiment_2.step_2_plot --summary experiment_2/results_resnet20/summary.json

(the README's own command: offline, on the embedded sample, from the checkout's root.)

``--weights`` is ``random`` or a path to a ``state_dict`` of :class:`CifarResNet20` (there are no
published pretrained weights to fetch). Images are resized and cropped to 32 px and normalised with
the CIFAR-10 channel statistics.
"""

from __future__ import annotations

import torch
from torch import nn

from experiment_1.errors import PipelineError
from experiment_1.network import Preprocess, Residual, ResidualNetwork, Weights, load_weights_into

CIFAR_PREPROCESS = Preprocess(resize=32, crop=32, mean=(0.4914, 0.4822, 0.4465), std=(0.2470, 0.2435, 0.2616))


class BasicBlock(nn.Module):
    """``ReLU(shortcut(x) + bn2(conv2(ReLU(bn1(conv1(x))))))``."""

    def __init__(self, in_channels: int, out_channels: int, stride: int) -> None:
        super().__init__()
        self.residual = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, 3, stride, 1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
            nn.Conv2d(out_channels, out_channels, 3, 1, 1, bias=False),
            nn.BatchNorm2d(out_channels),
        )
        self.shortcut = nn.Identity()
        if stride != 1 or in_channels != out_channels:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, stride, bias=False), nn.BatchNorm2d(out_channels)
            )
        self.relu = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.relu(self.shortcut(x) + self.residual(x))


class CifarResNet20(nn.Module):
    """The plain network: stem, three stages of three :class:`BasicBlock`, pooling and a linear head."""

    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        blocks, channels = [], 16
        for width, stride in ((16, 1), (32, 2), (64, 2)):
            for index in range(3):
                blocks.append(BasicBlock(channels, width, stride if index == 0 else 1))
                channels = width
        self.blocks = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(64, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.pool(self.blocks(self.stem(x))), 1))


def build_model(weights: Weights) -> ResidualNetwork:
    """The factory: build the network, load ``weights``, and say where its residual blocks are."""
    if weights.kind in ("pretrained", "named"):
        raise PipelineError(
            f"--weights {weights}: ResNet-20 has no published weights here; pass --weights random or a state-dict path of CifarResNet20"
        )
    network = CifarResNet20()
    load_weights_into(network, weights)
    return ResidualNetwork(
        network=network,
        stem=network.stem,
        residuals=[
            Residual(branch=block.residual, shortcut=block.shortcut, post=block.relu, name=f"blocks.{index}")
            for index, block in enumerate(network.blocks)
        ],
        head=nn.Sequential(network.pool, nn.Flatten(1), network.fc),
        preprocess=CIFAR_PREPROCESS,
    )
