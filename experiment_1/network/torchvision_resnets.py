"""The torchvision ResNets (BasicBlock and Bottleneck) cut into residual blocks for :mod:`experiment_1.network.gating`."""

from __future__ import annotations

import torch
from torch import nn

from experiment_1.errors import PipelineError
from experiment_1.network.gating import (
    Preprocess,
    Residual,
    ResidualNetwork,
    Weights,
    load_torchvision_state_dict,
    load_weights_into,
)


def resnet_cut(network: nn.Module) -> ResidualNetwork:
    """``conv1 … maxpool → one Residual per block of layer1 … layer4 → avgpool, fc``; post-sum ReLU."""
    from torchvision.models.resnet import BasicBlock, Bottleneck

    residuals: list[Residual] = []
    for stage in ("layer1", "layer2", "layer3", "layer4"):
        for index, block in enumerate(getattr(network, stage)):
            if isinstance(block, BasicBlock):
                branch = nn.Sequential(block.conv1, block.bn1, nn.ReLU(), block.conv2, block.bn2)
            elif isinstance(block, Bottleneck):
                branch = nn.Sequential(
                    block.conv1, block.bn1, nn.ReLU(), block.conv2, block.bn2, nn.ReLU(), block.conv3, block.bn3
                )
            else:
                raise PipelineError(f"{type(network).__name__}: unsupported block type {type(block).__name__}")
            residuals.append(Residual(branch, shortcut=block.downsample, post=nn.ReLU(), name=f"{stage}.{index}"))
    return ResidualNetwork(
        network=network,
        stem=nn.Sequential(network.conv1, network.bn1, network.relu, network.maxpool),
        residuals=residuals,
        head=nn.Sequential(network.avgpool, nn.Flatten(1), network.fc),
        preprocess=Preprocess(),  # torchvision's ImageNet transform: short side 256, crop 224
    )


def torchvision_resnet(arch: str, weights: Weights) -> ResidualNetwork:
    """torchvision's ``arch`` (``resnet18`` …) with ``weights``: a torchvision entry name, a state-dict path or random."""
    import torchvision.models as tvm

    weights_class = tvm.get_model_weights(arch)

    def named_state_dict(name: str) -> dict[str, torch.Tensor]:
        try:
            entry = weights_class[name] if name != "DEFAULT" else weights_class.DEFAULT
        except KeyError:
            names = ", ".join(entry.name for entry in weights_class)
            raise PipelineError(
                f"unknown weights '{name}' for {arch}; use one of {names}, DEFAULT, 'random' or a state-dict path"
            ) from None
        return load_torchvision_state_dict(entry)

    network = getattr(tvm, arch)(weights=None)
    load_weights_into(network, weights, named_state_dict)
    return resnet_cut(network.eval())
