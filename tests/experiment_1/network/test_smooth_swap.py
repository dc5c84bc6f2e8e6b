"""The smooth swap reports what it did: counts by type, refuses a network with nothing to swap, and
finds — by probing one forward — piecewise-linear functions no module type shows (``F.relu`` in a
block's forward, a clamp, ``nn.Threshold``), refused with their names."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from experiment_1.errors import PipelineError
from experiment_1.network.smooth_swap import SmoothReLU6, Softplus, smooth_activations
from experiment_1.network.stack import GateableBlock, Preprocess, ResidualStack

WIDTH = 6


class FunctionalReLU(nn.Module):
    """A branch whose kink is a function call, not a module."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(WIDTH, WIDTH)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.linear(x))


class ClampAtZero(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.clamp(min=0)


def stack(
    branch: nn.Module, head_activation: nn.Module | None = None, stem_activation: nn.Module | None = None
) -> ResidualStack:
    """A tiny residual MLP: stem Linear(+activation), one gated block around ``branch``, head (activation +) Linear."""
    torch.manual_seed(0)
    stem = nn.Sequential(nn.Linear(4, WIDTH), stem_activation or nn.ReLU())
    head = nn.Sequential(head_activation or nn.Identity(), nn.Linear(WIDTH, 3))
    return ResidualStack(stem, [GateableBlock(branch, name="block0")], head, Preprocess(), "tiny", "random").eval()


def test_the_swap_counts_what_it_replaced_by_type() -> None:
    shared = nn.ReLU()  # one module used twice is one replacement
    model = stack(
        nn.Sequential(nn.Linear(WIDTH, WIDTH), shared, nn.Linear(WIDTH, WIDTH), shared), head_activation=nn.ReLU6()
    )
    assert smooth_activations(model, beta=10.0) == {"ReLU": 2, "ReLU6": 1} == model.smooth_swap
    assert sum(isinstance(module, (Softplus, SmoothReLU6)) for module in model.modules()) == 3


def test_a_network_with_nothing_to_swap_is_refused() -> None:
    model = stack(nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.GELU()), stem_activation=nn.GELU())
    with pytest.raises(PipelineError, match="found no nn.ReLU or nn.ReLU6 module to replace \\(nothing to swap\\)"):
        smooth_activations(model, beta=10.0)


@pytest.mark.parametrize(
    "branch, named",
    [
        (FunctionalReLU(), "F.relu in blocks.0.branch"),
        (nn.Sequential(nn.Linear(WIDTH, WIDTH), ClampAtZero()), "Tensor.clamp in blocks.0.branch.1"),
    ],
)
def test_piecewise_linear_functions_inside_modules_are_found_and_named(branch: nn.Module, named: str) -> None:
    with pytest.raises(PipelineError) as refused:
        smooth_activations(stack(branch), beta=10.0)
    message = str(refused.value)
    assert (
        "cannot replace piecewise-linear functions called inside the network" in message
        and named in message
        and "\n" not in message
    )


def test_a_threshold_module_is_refused_by_type() -> None:
    with pytest.raises(PipelineError, match="no smooth counterpart for Threshold after the stem"):
        smooth_activations(stack(nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.Threshold(0.1, 0.0))), beta=10.0)


def test_kinks_in_the_stem_are_left_alone() -> None:
    # the stem sees no gate and no λ: a clamp there keeps the stack smooth in both
    model = stack(nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.ReLU()), stem_activation=ClampAtZero())
    assert smooth_activations(model, beta=10.0) == {"ReLU": 1, "ReLU6": 0}
