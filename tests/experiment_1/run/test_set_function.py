"""Deterministic set functions only: a network the Möbius transform cannot be taken of is refused
before a run, with one line naming the cause — batch statistics that make an image's logits
depend on its batch (and so on --mask-chunk), a stochastic layer, a train() that ignores eval(),
complex or non-(batch, classes) outputs; a head without nn.Linear still gets its label check."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from experiment_1.data.shards import SampleRef
from experiment_1.errors import PipelineError
from experiment_1.network.gating import Residual, ResidualNetwork, gate
from experiment_1.network.stack import Preprocess
from experiment_1.run.preflight import check_labels, check_set_function, num_classes

CHANNELS, CLASSES = 4, 3
PREPROCESS = Preprocess(resize=8, crop=8)


class BatchStatisticsNorm(nn.Module):
    """Normalises over the batch even in eval(): an image's output depends on what shares its batch."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (
            (x - x.mean(dim=0, keepdim=True)) / (x.std(dim=0, keepdim=True, unbiased=False) + 1e-5)
            if x.shape[0] > 1
            else x
        )


class FunctionalDropout(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.dropout(x, 0.5, training=True)


class StaysTraining(nn.Module):
    """A train() override that ignores mode=False."""

    def train(self, mode: bool = True) -> "StaysTraining":
        return super().train(True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


class ComplexHead(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.complex(x, x)


class Network(nn.Module):
    """stem conv → blocks (conv branches, the last with ``extra`` after it) → pooled head."""

    def __init__(self, extra: nn.Module | None = None, head: nn.Module | None = None, blocks: int = 3) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.stem = nn.Conv2d(3, CHANNELS, 3, padding=1)
        self.branches = nn.ModuleList(
            nn.Sequential(nn.Conv2d(CHANNELS, CHANNELS, 3, padding=1), nn.Tanh()) for _ in range(blocks)
        )
        if extra is not None:
            self.branches[-1].append(extra)
        self.head = head or nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(CHANNELS, CLASSES))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stem(x)
        for branch in self.branches:
            x = x + branch(x)
        return self.head(x)


def gated(network: Network):
    cut = ResidualNetwork(
        network,
        network.stem,
        [Residual(branch, name=f"b{index}") for index, branch in enumerate(network.branches)],
        network.head,
        PREPROCESS,
    )
    return gate(cut, "toy", "random")


def test_a_deterministic_per_image_network_passes() -> None:
    check_set_function(gated(Network()))


def test_batch_statistics_are_refused_naming_the_batch() -> None:
    model = gated(Network(BatchStatisticsNorm()))  # the full-mask parity check sees one image: it passes
    with pytest.raises(
        PipelineError,
        match="not a set function of the gates — an image's logits change when other masks of it share the batch \\(batch statistics",
    ):
        check_set_function(model)


def test_a_stochastic_layer_is_refused_as_stochastic_not_as_a_wrong_cut() -> None:
    with pytest.raises(PipelineError) as refused:
        gated(Network(FunctionalDropout()))
    assert "two calls of the network's own forward on one image give different logits" in str(
        refused.value
    ) and "stochastic" in str(refused.value)
    assert "stem → residuals → head" not in str(refused.value)


def test_a_train_override_that_ignores_eval_is_refused() -> None:
    with pytest.raises(PipelineError, match="stay in training mode after eval\\(\\) \\(first: branches.2.2\\)"):
        gated(Network(StaysTraining()))


def test_complex_logits_are_refused() -> None:
    head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(CHANNELS, CLASSES), ComplexHead())
    with pytest.raises(
        PipelineError, match="returns a 2-d torch.complex64 tensor; the pipeline needs real \\(batch, classes\\) logits"
    ):
        gated(Network(head=head))


def test_a_head_without_a_linear_layer_still_gets_its_label_check() -> None:
    head = nn.Sequential(nn.Conv2d(CHANNELS, CLASSES, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten())
    model = gated(Network(head=head))
    assert num_classes(model) == CLASSES
    with pytest.raises(PipelineError, match="label 5 .* is outside \\[0, 3\\)"):
        check_labels([SampleRef("a.parquet", 0, 5)], num_classes(model), "list.json")
