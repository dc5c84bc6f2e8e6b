"""The held-off view (experiment_1/network/held_off.py): its tree-pass table equals the naive engine on the full network
at the corresponding global mask ids, for ResNet (ReLU post, downsampling shortcuts) and EfficientNet-Lite (fixed
``pre`` paths, identity post); its full-mask parity check; one line for a bad subset."""

from __future__ import annotations

import pytest
import torch

from experiment_1.errors import PipelineError
from experiment_1.network import evaluate_all_masks, held_off_view
from experiment_1.network.engines import evaluate_masks_naive
from experiment_1.network.held_off import view_mask_id
from experiment_1.network.registry import build_gated_stack


@pytest.fixture(scope="module")
def resnet18() -> torch.nn.Module:
    model = build_gated_stack("resnet18", "random", seed=0)
    return model


@pytest.mark.parametrize("blocks", [[0, 3, 5], [1, 2, 7], [6], [7, 2, 4, 0]])
def test_view_table_equals_the_naive_engine_at_the_global_ids(resnet18: torch.nn.Module, blocks: list[int]) -> None:
    images = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    view = held_off_view(resnet18, blocks)
    assert view.num_blocks == len(blocks) and view.block_names == [resnet18.block_names[b] for b in sorted(blocks)]
    table = evaluate_all_masks(view, images)
    ids = [view_mask_id(sorted(blocks), local) for local in range(2 ** len(blocks))]
    expected = evaluate_masks_naive(resnet18, images, ids)
    torch.testing.assert_close(table, expected, rtol=1e-5, atol=1e-5)
    # the view's own naive pass, too: the same game whichever engine walks it
    torch.testing.assert_close(evaluate_all_masks(view, images, engine="naive"), expected, rtol=1e-5, atol=1e-5)


def test_view_of_a_network_with_pre_paths_equals_the_naive_engine() -> None:
    model = build_gated_stack("efficientnet_lite0", "random", seed=0)
    blocks = [0, 4, 8]
    images = torch.randn(1, 3, 64, 64, generator=torch.Generator().manual_seed(2))
    table = evaluate_all_masks(held_off_view(model, blocks), images)
    expected = evaluate_masks_naive(model, images, [view_mask_id(blocks, local) for local in range(8)])
    torch.testing.assert_close(table, expected, rtol=1e-5, atol=1e-5)


def test_the_view_passes_the_full_mask_parity_check(resnet18: torch.nn.Module) -> None:
    view = held_off_view(resnet18, [1, 5])
    size, reference = view.full_mask_reference
    assert size == resnet18.preprocess.crop and view.num_classes == resnet18.num_classes
    mask = torch.zeros(1, 8, dtype=torch.bool)
    mask[0, [1, 5]] = True
    from experiment_1.network.gating import parity_image

    torch.testing.assert_close(reference, resnet18(parity_image(size), masks=mask))


@pytest.mark.parametrize("blocks", [[], [0, 0], [8], [-1, 2]])
def test_a_bad_subset_is_one_line(resnet18: torch.nn.Module, blocks: list[int]) -> None:
    with pytest.raises(PipelineError, match=r"^a held-off view needs distinct block indices in 0 … 7"):
        held_off_view(resnet18, blocks)
