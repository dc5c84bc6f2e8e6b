"""Batch-norm folding: the folded stack computes the same logits as the original to round-off, on every mask."""

from __future__ import annotations

import copy

import torch
from torch import nn

from experiment_1.network.engines import evaluate_all_masks
from experiment_1.network.fold_bn import fold_batchnorm
from experiment_1.network.registry import build_gated_stack


def test_folded_resnet18_equals_the_original_on_every_mask() -> None:
    model = build_gated_stack("resnet18", "random", seed=0)
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():  # random-init BN is the identity map; give it statistics worth folding
        for bn in (module for module in model.modules() if isinstance(module, nn.BatchNorm2d)):
            for tensor, low in ((bn.weight, 0.5), (bn.running_var, 0.5)):
                tensor.copy_(low + torch.rand(tensor.shape, generator=generator))
            for tensor in (bn.bias, bn.running_mean):
                tensor.copy_(0.2 * torch.randn(tensor.shape, generator=generator))
    folded = copy.deepcopy(model)
    assert fold_batchnorm(folded) == 20  # stem, 16 branch convolutions, 3 downsampling projections
    assert not any(isinstance(module, nn.BatchNorm2d) for module in folded.modules())
    x = torch.randn(2, 3, 32, 32, generator=generator)
    expected = evaluate_all_masks(model, x, engine="naive", residual_scale=0.8)
    # another order of float32 operations (scale folded into the weights): round-off, not bit-equality
    for engine in ("tree", "naive"):
        actual = evaluate_all_masks(folded, x, engine=engine, residual_scale=0.8)
        torch.testing.assert_close(actual, expected, rtol=0, atol=1e-5 * expected.abs().max().item())
    assert not torch.allclose(expected[:, 0], expected[:, -1])  # the masks matter: the check is not vacuous
