"""Experiment 1's per-image metrics (experiment_1.reconstruction) against values worked out by hand on planted set
functions: an additive one (the first-order reading is exact), a pairwise one (known first-order error), a 2-block
"network" written out in full, a tiny linear network run through the tree engine, and labels compared with the
full-mask prediction."""

from __future__ import annotations

import math

import pytest
import torch

from experiment_1.mobius.transform import all_masks
from experiment_1.network.engines import evaluate_all_masks
from experiment_1.network.stack import GateableBlock, Preprocess, ResidualStack
from experiment_1.reconstruction.metrics import reconstruction_metrics

NUM_BLOCKS, CLASSES = 4, 3


def planted_logits(
    base: torch.Tensor, singles: torch.Tensor, pairs: dict[tuple[int, int], torch.Tensor]
) -> torch.Tensor:
    """h(S) = base + Σ_{l∈S} singles[l] + Σ_{{i,j}⊆S} pairs[i,j], as (1, 2^L, C) logits."""
    rows = []
    for mask in all_masks(NUM_BLOCKS).tolist():
        members = [block for block, on in enumerate(mask) if on]
        value = base + sum((singles[block] for block in members), torch.zeros(CLASSES, dtype=torch.float64))
        value = value + sum(
            (term for (i, j), term in pairs.items() if i in members and j in members),
            torch.zeros(CLASSES, dtype=torch.float64),
        )
        rows.append(value)
    return torch.stack(rows)[None]


BASE = torch.tensor([1.0, 0.0, 0.5], dtype=torch.float64)
SINGLES = torch.tensor([[0.5, 0.25, 0.0], [0.0, 1.0, 0.0], [0.25, 0.0, 1.0], [0.0, 0.5, 0.25]], dtype=torch.float64)


def test_an_additive_set_function_is_rebuilt_exactly_by_the_first_order_reading() -> None:
    logits = planted_logits(BASE, SINGLES, {})
    metrics = reconstruction_metrics(logits, torch.tensor([1]))
    full = BASE + SINGLES.sum(dim=0)  # [1.75, 1.75, 1.75]
    assert torch.equal(logits[0, -1], full)
    assert metrics["first_order_rel_error"].item() == pytest.approx(0.0, abs=1e-15)
    assert metrics["first_order_top1_agreement"].item() == 1.0
    # naive subset sum: Σ_S h(S) = 2^L·base + 2^(L−1)·Σ singles
    naive = 16 * BASE + 8 * SINGLES.sum(dim=0)
    assert metrics["naive_sum_rel_error"].item() == pytest.approx(
        ((naive - full).norm() / full.norm()).item(), rel=1e-12
    )
    assert metrics["mobius_rel_error_float64"].item() == pytest.approx(0.0, abs=1e-15)


def test_a_pairwise_term_gives_the_first_order_error_worked_out_by_hand() -> None:
    pair = torch.tensor([0.0, 0.0, 3.0], dtype=torch.float64)
    logits = planted_logits(BASE, SINGLES, {(1, 3): pair})
    metrics = reconstruction_metrics(logits, torch.tensor([-1]))
    full = BASE + SINGLES.sum(dim=0) + pair  # [1.75, 1.75, 4.75]
    first_order = BASE + SINGLES.sum(dim=0)  # the pair is invisible to singletons: [1.75, 1.75, 1.75]
    assert full.tolist() == [1.75, 1.75, 4.75] and first_order.tolist() == [1.75, 1.75, 1.75]
    assert metrics["first_order_rel_error"].item() == pytest.approx(3.0 / math.sqrt(1.75**2 * 2 + 4.75**2), rel=1e-12)
    assert (
        metrics["first_order_top1_agreement"].item() == 0.0
    )  # the first-order argmax is class 0 (a tie), the full one class 2
    assert torch.isnan(metrics["full_correct"]).all()  # unlabelled
    assert metrics["full_prediction"].tolist() == [2]
    assert metrics["empty_top1_agreement"].item() == 0.0  # h(∅) = base: argmax 0
    assert metrics["mobius_top1_agreement_float64"].item() == 1.0


def test_a_two_block_network_written_out_by_hand() -> None:
    # h(∅) = [1, 0], h({0}) = [0, 2], h({1}) = [3, 0], h({0,1}) = [0, 5]  (mask integer = bits of the blocks)
    logits = torch.tensor([[[1.0, 0.0], [0.0, 2.0], [3.0, 0.0], [0.0, 5.0]]])
    metrics = reconstruction_metrics(logits, torch.tensor([1]))
    # first order: h(∅) + (h0 − h∅) + (h1 − h∅) = [1,0] + [−1,2] + [2,0] = [2, 2]; full = [0, 5]
    assert metrics["first_order_rel_error"].item() == pytest.approx(math.sqrt(4 + 9) / 5, rel=1e-12)
    # naive: Σ_S h(S) = [4, 7]
    assert metrics["naive_sum_rel_error"].item() == pytest.approx(math.sqrt(16 + 4) / 5, rel=1e-12)
    assert metrics["naive_sum_top1_agreement"].item() == 1.0 and metrics["empty_top1_agreement"].item() == 0.0
    assert metrics["full_correct"].tolist() == [1.0] and metrics["full_prediction"].tolist() == [1]
    for name in ("float32", "float64"):
        assert (
            metrics[f"mobius_rel_error_{name}"].item() == 0.0 and metrics[f"max_subset_rel_error_{name}"].item() == 0.0
        )


def test_labels_are_compared_with_the_full_mask_prediction_image_by_image() -> None:
    generator = torch.Generator().manual_seed(0)
    logits = torch.randn(4, 2**NUM_BLOCKS, 5, generator=generator)
    predicted = logits[:, -1].argmax(dim=-1)
    labels = torch.tensor([predicted[0].item(), (predicted[1].item() + 1) % 5, -1, predicted[3].item()])
    metrics = reconstruction_metrics(logits, labels)
    assert metrics["full_prediction"].tolist() == predicted.tolist()
    correct = metrics["full_correct"].tolist()
    assert correct[0] == 1.0 and correct[1] == 0.0 and math.isnan(correct[2]) and correct[3] == 1.0


def test_the_worst_subset_error_is_the_round_off_of_the_transform_and_back_at_its_worst_subset() -> None:
    # float32 logits of very different scales: the rebuilt h(S) differs from h(S) by round-off, the worst S most
    generator = torch.Generator().manual_seed(1)
    logits = torch.randn(3, 2**8, 6, generator=generator) * torch.logspace(-3, 3, 2**8)[None, :, None]
    metrics = reconstruction_metrics(logits, torch.tensor([-1, -1, -1]))
    worst = metrics["max_subset_rel_error_float32"]
    assert (worst > 1e-9).all() and (worst < 1e-2).all()
    assert (metrics["max_subset_rel_error_float64"] < 1e-12).all()
    assert (metrics["max_subset_rel_error_float64"] < worst).all()


class Scale(torch.nn.Module):
    def __init__(self, factor: float) -> None:
        super().__init__()
        self.factor = factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.factor * x


def test_a_tiny_linear_network_through_the_engine_gives_the_metrics_worked_out_by_hand() -> None:
    # x_1 = x + m_0·a·x, x_2 = x_1 + m_1·b·x_1, logits = W x_2: h(S) = (1 + a·m_0)(1 + b·m_1)·W x, so
    # h(full) = (1+a)(1+b)·Wx, the first-order reading (1 + a + b)·Wx misses the pair term a·b·Wx, and the naive sum
    # of the four h(S) is (4 + 2a + 2b + ab)·Wx
    a, b = 0.5, -0.25
    head = torch.nn.Linear(3, 4, bias=False)
    with torch.no_grad():
        head.weight.copy_(torch.tensor([[1.0, 0.0, 2.0], [0.0, 1.0, -1.0], [3.0, 1.0, 0.0], [0.0, -2.0, 1.0]]))
    blocks = [GateableBlock(Scale(a), name="a"), GateableBlock(Scale(b), name="b")]
    model = ResidualStack(torch.nn.Identity(), blocks, head, Preprocess(), "tiny", "hand").double().eval()
    x = torch.tensor([[1.0, 2.0, -1.0], [0.5, -1.0, 2.0]], dtype=torch.float64)
    logits = evaluate_all_masks(model, x, engine="tree", mask_chunk=4)
    base = x @ head.weight.T.double()
    for mask, factor in enumerate([1.0, 1 + a, 1 + b, (1 + a) * (1 + b)]):
        torch.testing.assert_close(logits[:, mask], factor * base, rtol=1e-15, atol=1e-15)
    labels = torch.tensor([int(base[0].argmax()), (int(base[1].argmax()) + 1) % 4])
    metrics = reconstruction_metrics(logits, labels)
    full = (1 + a) * (1 + b)
    assert metrics["first_order_rel_error"].tolist() == pytest.approx([abs(a * b) / abs(full)] * 2, rel=1e-12)
    assert metrics["naive_sum_rel_error"].tolist() == pytest.approx(
        [abs(4 + 2 * a + 2 * b + a * b - full) / abs(full)] * 2, rel=1e-12
    )
    assert metrics["mobius_rel_error_float64"].max().item() < 1e-15
    assert metrics["full_correct"].tolist() == [
        1.0,
        0.0,
    ]  # every h(S) is a positive multiple of Wx: argmax Wx throughout
    assert metrics["empty_top1_agreement"].tolist() == metrics["first_order_top1_agreement"].tolist() == [1.0, 1.0]
