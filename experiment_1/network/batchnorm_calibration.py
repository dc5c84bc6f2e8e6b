"""Re-estimate batch-norm running statistics on images: the input-dependent null of Experiment 2.

At its default initialisation EfficientNet-Lite0 keeps the batch-norm running statistics the package
starts with (mean 0, variance 1), which do not match the activations of the random weights: the
normalised signal shrinks block by block, the logits are the same on every image to 1e-8, and every
Möbius coefficient beyond the trunk is round-off. Re-estimating the statistics on images — one
forward pass with every batch-norm layer accumulating its exact (cumulative, ``momentum=None``) mean
and variance, what training mode does before the first weight update — restores unit-scale signals
through every branch while no weight is learned, so the network is a function of its input again; the
weights stay the seeded random ones. The run takes the statistics from images it does not evaluate (the ones after
the evaluated images in its sample list: experiment_1.run.preflight.calibration_samples).

:func:`calibrate_batchnorm` changes only the running statistics (and the batch counter); every
parameter is left as it was, and the model is returned in ``eval()`` mode.
"""

from __future__ import annotations

from typing import Iterable

import torch
from torch import nn

from experiment_1.errors import PipelineError


def batchnorm_layers(model: nn.Module) -> list[nn.modules.batchnorm._BatchNorm]:
    """Every batch-norm layer of ``model`` (each once)."""
    return [module for module in model.modules() if isinstance(module, nn.modules.batchnorm._BatchNorm)]


@torch.no_grad()
def calibrate_batchnorm(model: nn.Module, batches: Iterable[torch.Tensor]) -> int:
    """Replace every batch-norm layer's running mean and variance by their cumulative estimates over ``batches``
    (image tensors ``(B, 3, H, W)`` on the model's device and dtype), all gates on; returns the number of images.

    Batch statistics are those of each batch (as in training mode), averaged over batches with equal weight
    (``momentum=None``); a batch of one image gives a spatial-only variance, which is fine for convolutions.
    """
    layers = batchnorm_layers(model)
    if not layers:
        raise PipelineError("--calibrate-batchnorm: this network has no batch-norm layer to calibrate; drop the flag")
    saved = [(layer.momentum, layer.training) for layer in layers]
    for layer in layers:
        layer.reset_running_stats()
        layer.momentum = None
        layer.train()
    count = 0
    try:
        for images in batches:
            model(images)
            count += images.shape[0]
    finally:
        for layer, (momentum, _) in zip(layers, saved):
            layer.momentum = momentum
        model.eval()
    if count == 0:
        raise PipelineError("--calibrate-batchnorm: no calibration image; pass a sample list with images")
    return count
