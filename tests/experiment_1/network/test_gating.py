"""The public gating API on a user's own network (the CIFAR ResNet-20 example), pure modules, --arch/--weights.

Exactness: the full mask equals the network's own forward bit for bit; the naive engine equals a
brute-force walk through the network's own modules; the tree engine equals the naive one to
round-off; the engines equal an inline copy of the pre-refactor engines bit for bit on every
registered architecture; masks and λ passed concurrently to one model change nothing.
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

import experiment_2.step_1_evaluate as experiment_2_step_1
from conftest import import_optional
from experiment_1 import step_3_evaluate
from experiment_1.data.shards import draw_sample, list_items, sample_list_json
from experiment_1.errors import PipelineError, run_cli
from experiment_1.examples.cifar_resnet20 import CifarResNet20, build_model
from experiment_1.files import atomic_write_json, read_json
from experiment_1.mobius.transform import mobius_transform
from experiment_1.network.choices import RANDOM, Weights, parse_weights
from experiment_1.network.engines import evaluate_all_masks, evaluate_masks_naive, evaluate_masks_tree
from experiment_1.network.gating import Preprocess, Residual, ResidualNetwork, ResidualStack, gate
from experiment_1.network.registry import ARCHITECTURES, build_gated_stack, load_factory
from roundoff import ROUNDOFF_RTOL, assert_close_to_roundoff, relative_row_errors

RESNET20 = "experiment_1.examples.cifar_resnet20:build_model"


def images(count: int, size: int = 32, seed: int = 0) -> torch.Tensor:
    return torch.randn(count, 3, size, size, generator=torch.Generator().manual_seed(seed))


@pytest.fixture(scope="module")
def resnet20() -> ResidualStack:
    return build_gated_stack(RESNET20, "random", seed=0)


def brute_force(network: CifarResNet20, x: torch.Tensor, mask: int) -> torch.Tensor:
    """The user's own modules, block by block: ``ReLU(shortcut(x) + residual(x))`` where the gate is on, ``ReLU(shortcut(x))`` where off."""
    state = network.stem(x)
    for index, block in enumerate(network.blocks):
        state = block(state) if mask >> index & 1 else block.relu(block.shortcut(state))
    return network.fc(torch.flatten(network.pool(state), 1))


@torch.no_grad()
def test_resnet20_full_mask_is_its_own_forward_and_naive_is_brute_force(tmp_path: Path) -> None:
    own = CifarResNet20().eval()  # any initialisation: the stack gets these very weights as a state-dict file
    torch.save(own.state_dict(), tmp_path / "resnet20.pth")
    resnet20 = build_gated_stack(RESNET20, str(tmp_path / "resnet20.pth"))
    own = own.to(memory_format=resnet20.memory_format)
    network = resnet20.blocks[0].branch  # the stack holds the user's modules, not copies
    assert resnet20.num_blocks == 9 and resnet20.block_names == [f"blocks.{index}" for index in range(9)]
    assert resnet20.gated_recursion == "x_{l+1} = ReLU(shortcut_l(x_l) + λ·m_l·F_l(x_l))"
    assert torch.equal(own.blocks[0].residual[0].weight, network[0].weight)
    x = images(2).contiguous(memory_format=resnet20.memory_format)
    assert torch.equal(resnet20(x), own(x))  # same operations, same batch, same memory format: bit for bit
    for mask in (0, 1, 0b101010101, 511, 256):  # one mask per call: the same batch shapes as the brute force
        assert torch.equal(evaluate_masks_naive(resnet20, x, mask_indices=[mask])[:, 0], brute_force(own, x, mask))
    everything = torch.stack([brute_force(own, x, mask) for mask in range(512)], dim=1)
    assert_close_to_roundoff(evaluate_all_masks(resnet20, x, engine="naive", mask_chunk=64), everything)


@pytest.mark.parametrize("residual_scale", [1.0, 0.6])
def test_resnet20_tree_equals_naive_on_every_mask(resnet20: ResidualStack, residual_scale: float) -> None:
    x = images(2, seed=1)
    tree = evaluate_all_masks(resnet20, x, engine="tree", mask_chunk=16, residual_scale=residual_scale)
    naive = evaluate_all_masks(resnet20, x, engine="naive", mask_chunk=128, residual_scale=residual_scale)
    assert tree.shape == (2, 512, 10)
    assert_close_to_roundoff(tree, naive)


@torch.no_grad()
def test_masks_and_scales_passed_concurrently_to_one_model(resnet20: ResidualStack) -> None:
    x = images(4, seed=2)
    generator = torch.Generator().manual_seed(3)
    calls = [(torch.rand(4, 9, generator=generator) < 0.5, scale) for scale in (1.0, 0.5, 0.8, 1.0, 0.3, 0.5)]
    sequential = [resnet20(x, masks=masks, residual_scale=scale) for masks, scale in calls]
    sequential_tree = [evaluate_masks_tree(resnet20, x[:1], residual_scale=scale) for _, scale in calls]
    with ThreadPoolExecutor(max_workers=3) as pool:
        concurrent = list(pool.map(lambda call: resnet20(x, masks=call[0], residual_scale=call[1]), calls * 3))
        concurrent_tree = list(
            pool.map(lambda call: evaluate_masks_tree(resnet20, x[:1], residual_scale=call[1]), calls * 3)
        )
    # each call's own masks and scale, whatever ran beside it: round-off apart at most (a worker thread's kernels may
    # block their sums differently from the main thread's), while calls with other masks or scales are far apart
    for expected, actual in zip(sequential * 3, concurrent):
        assert_close_to_roundoff(actual, expected)
    for expected, actual in zip(sequential_tree * 3, concurrent_tree):
        assert_close_to_roundoff(actual, expected)
    assert (relative_row_errors(sequential[1], sequential[0]) > 1000 * ROUNDOFF_RTOL).all()
    assert set(vars(resnet20)) == set(vars(build_gated_stack(RESNET20, "random")))  # no run state left behind


# --- the pre-refactor engines, inline: λ and masks were state; the same operations must give the same bits


def old_forward(model: ResidualStack, x: torch.Tensor, masks: torch.Tensor, scale: float) -> torch.Tensor:
    state = model.stem(x)
    for index, block in enumerate(model.blocks):
        state = block(state, masks[:, index].to(state.dtype) * scale)
    return model.head(state)


def old_tree(model: ResidualStack, x: torch.Tensor, scale: float) -> torch.Tensor:
    """Breadth-first prefix tree (``mask_chunk ≥ 2^L``): level by level, gate-off states before gate-on ones."""
    states, ids = model.stem(x), torch.zeros(1, dtype=torch.long)
    for level, block in enumerate(model.blocks):
        off, on = block.forward_both(states, scale)
        states, ids = torch.cat([off, on]), torch.cat([ids, ids + (1 << level)])
    logits = model.head(states).view(len(ids), x.shape[0], -1).transpose(0, 1)
    out = torch.empty_like(logits)
    out[:, ids] = logits
    return out


@torch.no_grad()
@pytest.mark.parametrize("arch", [*ARCHITECTURES.names(), RESNET20])
def test_engines_are_bit_exact_with_the_pre_refactor_engines(arch: str) -> None:
    if arch.startswith("efficientnet_lite"):
        import_optional("efficientnet_lite_pytorch")
    model = build_gated_stack(arch, "random", seed=1)
    x = images(2, seed=4).contiguous(memory_format=model.memory_format)
    picked = torch.tensor([0, 2**model.num_blocks - 1, 5, 2**model.num_blocks - 6])
    bits = (picked[:, None] >> torch.arange(model.num_blocks)) & 1
    for scale in (1.0, 0.7):
        expected = old_forward(model, x.repeat_interleave(len(picked), dim=0), bits.bool().repeat(2, 1), scale).view(
            2, len(picked), -1
        )
        assert torch.equal(
            evaluate_masks_naive(model, x, mask_indices=picked, mask_chunk=len(picked), residual_scale=scale), expected
        )
        if model.num_blocks <= 9:
            size = 2**model.num_blocks
            assert torch.equal(
                evaluate_all_masks(model, x, engine="tree", mask_chunk=size, residual_scale=scale),
                old_tree(model, x, scale),
            )


# --- errors, one line each


def test_factory_errors_are_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(
        PipelineError,
        match=r"^--arch no_such_package.models:build: no module no_such_package on the import path \(moved, renamed or misspelled\?\)",
    ):
        build_gated_stack("no_such_package.models:build", "random")
    with pytest.raises(
        PipelineError,
        match=r"^--arch experiment_1.examples.cifar_resnet20:nothing: experiment_1.examples.cifar_resnet20 has no function nothing$",
    ):
        build_gated_stack("experiment_1.examples.cifar_resnet20:nothing", "random")
    with pytest.raises(PipelineError, match="ResNet-20 has no published weights"):
        build_gated_stack(RESNET20)  # --weights defaults to pretrained

    def no_blocks(weights: Weights) -> ResidualNetwork:
        cut = build_model(weights)
        return ResidualNetwork(cut.network, cut.stem, [], cut.head, cut.preprocess)

    def skips_a_block(
        weights: Weights,
    ) -> ResidualNetwork:  # the cut forgets blocks.4: the gated network computes something else
        cut = build_model(weights)
        return ResidualNetwork(cut.network, cut.stem, cut.residuals[:4] + cut.residuals[5:], cut.head, cut.preprocess)

    def not_finite(weights: Weights) -> ResidualNetwork:  # the network's own logits are NaN: nothing to compare
        cut = build_model(weights)
        with torch.no_grad():
            cut.network.fc.bias.fill_(float("nan"))
        return cut

    def no_preprocess(weights: Weights) -> ResidualNetwork:  # a 32-px network whose factory forgot its transform
        cut = build_model(weights)
        return ResidualNetwork(cut.network, cut.stem, cut.residuals, cut.head)

    def imagenet_preprocess(weights: Weights) -> ResidualNetwork:  # the ImageNet default, asked for explicitly
        cut = build_model(weights)
        return ResidualNetwork(cut.network, cut.stem, cut.residuals, cut.head, preprocess=None)

    module = type(sys)("user_models")
    module.no_blocks, module.skips_a_block, module.not_finite = no_blocks, skips_a_block, not_finite
    module.no_preprocess, module.imagenet_preprocess = no_preprocess, imagenet_preprocess
    monkeypatch.setitem(sys.modules, "user_models", module)
    with pytest.raises(
        PipelineError,
        match=r"^--arch user_models:no_preprocess: the factory's ResidualNetwork names no preprocess; pass preprocess=",
    ):
        build_gated_stack("user_models:no_preprocess", "random")
    assert build_gated_stack("user_models:imagenet_preprocess", "random").preprocess == Preprocess()
    assert build_model(RANDOM).preprocess.crop == 32 != Preprocess().crop
    with pytest.raises(PipelineError, match=r"^--arch user_models:no_blocks: the factory returned no residual blocks"):
        build_gated_stack("user_models:no_blocks", "random")
    with pytest.raises(
        PipelineError,
        match=r"^--arch user_models:skips_a_block: with every gate on the gated stack differs from the network's own forward",
    ):
        build_gated_stack("user_models:skips_a_block", "random")
    model = build_gated_stack("user_models:not_finite", "random")
    assert torch.isnan(model(images(1))).all()


def test_an_unimportable_factory_is_one_line_on_the_command_line(
    tmp_path: Path, tiny_shards: Path, tiny_sample_index: Path, capsys: pytest.CaptureFixture
) -> None:
    with pytest.raises(SystemExit) as exit_info:  # run_cli is what `python -m experiment_1.step_3_evaluate` runs
        run_cli(
            step_3_evaluate.main,
            [
                "--arch",
                "no_such_package.models:build",
                "--weights",
                "random",
                "--sample-index",
                str(tiny_sample_index),
                "--data-dir",
                str(tiny_shards),
                "--device",
                "cpu",
            ],
        )
    stderr = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert len(stderr.strip().splitlines()) == 1 and stderr.startswith(
        "error: --arch no_such_package.models:build: no module no_such_package on the import path"
    )


def test_gate_shares_the_modules_and_checks_parity_without_arch_registration() -> None:
    cut = build_model(RANDOM)
    stack = gate(cut, "mine", "random")
    assert (
        stack.blocks[3].branch is cut.network.blocks[3].residual and stack.blocks[3].post is cut.network.blocks[3].relu
    )
    residual = Residual(nn.Identity())
    assert residual.shortcut is None and residual.pre is None and residual.post is None


# --- --weights: one typed value


def test_weights_are_parsed_once_into_a_typed_value(tmp_path: Path) -> None:
    existing = tmp_path / "weights.ckpt"
    existing.write_bytes(b"")
    assert parse_weights("random") == RANDOM and parse_weights("pretrained").kind == "pretrained"
    assert parse_weights("IMAGENET1K_V2") == Weights("named", "IMAGENET1K_V2")
    assert (
        parse_weights("missing.pth") == Weights("path", "missing.pth") and parse_weights(str(existing)).kind == "path"
    )
    # `pretrained` is made concrete per architecture and recorded as before (partial-store keys unchanged)
    assert ARCHITECTURES.pretrained_weights("resnet18") == "IMAGENET1K_V1"
    assert str(ARCHITECTURES.resolve_weights("efficientnet_lite0", parse_weights("pretrained"))) == "pretrained"
    assert str(ARCHITECTURES.resolve_weights(RESNET20, parse_weights("pretrained"))) == "pretrained"
    assert build_gated_stack(RESNET20, "random").weights == "random"
    assert load_factory(RESNET20) is build_model


# --- the worked example through Experiments 1 and 2


def test_resnet20_runs_experiments_1_and_2(tiny_shards: Path, tmp_path: Path) -> None:
    sample_index = tmp_path / "samples.json"
    samples = draw_sample(list_items(tiny_shards, "validation-*.parquet"), "uniform", 3, 0, seed=0)
    atomic_write_json(sample_index, sample_list_json(samples, "validation-*.parquet", "uniform", 0, None))
    flags = [
        "--arch",
        RESNET20,
        "--weights",
        "random",
        "--sample-index",
        str(sample_index),
        "--data-dir",
        str(tiny_shards),
        "--batch-size",
        "2",
        "--num-workers",
        "0",
        "--device",
        "cpu",
    ]
    step_3_evaluate.main([*flags, "--output-dir", str(tmp_path / "exp1")])
    experiment_2_step_1.main([*flags, "--output-dir", str(tmp_path / "exp2")])
    for folder in ("exp1", "exp2"):
        summary = read_json(tmp_path / folder / "summary.json")
        assert (
            summary["config"]["arch"] == RESNET20
            and summary["config"]["num_blocks"] == 9
            and summary["config"]["input_size"] == 32
        )
        assert summary["num_valid"] == 3
    per_image = np.load(tmp_path / "exp2" / "per_image.npz")
    assert per_image["energy_vector"].shape == (3, 10)  # orders 0 … 9 of a 9-block network


def interaction_share(logits: torch.Tensor) -> float:
    """The share of the Möbius energy Σ_S ‖Δ_S h‖² at orders ≥ 2 (one image, float64)."""
    coefficients = mobius_transform(logits.double(), dim=1)
    energy = (coefficients**2).sum(dim=-1)[0]
    orders = torch.tensor([bin(mask).count("1") for mask in range(energy.numel())])
    return (energy[orders >= 2].sum() / energy.sum()).item()


def test_identically_zero_branches_are_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """timm's zero_init_last, reproduced without timm: a zeroed last batch-norm makes a branch output exactly 0."""

    def zero_last_batchnorm(weights: Weights) -> ResidualNetwork:
        cut = build_model(weights)
        for block in cut.network.blocks:
            nn.init.zeros_(block.residual[-1].weight)
        return cut

    module = type(sys)("zeroed_models")
    module.zero_last_batchnorm = zero_last_batchnorm
    monkeypatch.setitem(sys.modules, "zeroed_models", module)
    with pytest.raises(
        PipelineError,
        match=r"^--arch zeroed_models:zero_last_batchnorm: residual branch\(es\) blocks.0, blocks.1, blocks.2 … \(9 of 9\) output exactly zero",
    ):
        build_gated_stack("zeroed_models:zero_last_batchnorm", "random")
    model = build_gated_stack(RESNET20, "random", seed=0)  # the ordinary init: a real set function
    assert interaction_share(evaluate_all_masks(model, images(1, size=32, seed=5))) > 1e-3


def test_timm_pretrained_offline_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """No timm needed: a stand-in whose hub download fails as it does offline."""

    def create_model(name: str, pretrained: bool = False, **kwargs):
        raise OSError(
            f"We couldn't connect to 'https://huggingface.co' to load the files of timm/{name}.\nCheck your connection"
        )

    import experiment_1.examples.timm_resnet as timm_resnet

    monkeypatch.setitem(sys.modules, "timm", type(sys)("timm"))
    monkeypatch.setattr(sys.modules["timm"], "create_model", create_model, raising=False)
    monkeypatch.setattr(timm_resnet, "hub_reachable", lambda: True)  # the hub answers; the download fails anyway
    with pytest.raises(
        PipelineError,
        match=r"timm could not load the pretrained weights of resnet18 \(OSError: We couldn't connect .*\); offline\? pass --weights",
    ) as error:
        build_gated_stack("experiment_1.examples.timm_resnet:build_resnet18", "pretrained")
    assert "\n" not in str(error.value)


def test_timm_pretrained_with_the_hub_unreachable_reads_only_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hub unreachable: timm runs under HF_HUB_OFFLINE (no requests, no retries), restored after; one whole line."""
    import huggingface_hub.constants as constants

    import experiment_1.examples.timm_resnet as timm_resnet

    seen = []

    def create_model(name: str, pretrained: bool = False, **kwargs):
        seen.append((os.environ.get("HF_HUB_OFFLINE"), constants.HF_HUB_OFFLINE))
        raise RuntimeError(
            "An error happened while trying to locate the file on the Hub and we cannot find the requested files in the "
            "local cache. Please check your connection and try again"
        )

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setitem(sys.modules, "timm", type(sys)("timm"))
    monkeypatch.setattr(sys.modules["timm"], "create_model", create_model, raising=False)
    monkeypatch.setattr(timm_resnet, "hub_reachable", lambda: False)
    with pytest.raises(PipelineError) as error:
        build_gated_stack("experiment_1.examples.timm_resnet:build_resnet18", "pretrained")
    assert seen == [("1", True)]
    assert str(error.value) == (
        "timm could not load the pretrained weights of resnet18: the Hugging Face hub is not reachable and timm's cache "
        "does not hold them; pass --weights <path to a state dict of the same timm model>, or --weights random"
    )
    assert "HF_HUB_OFFLINE" not in os.environ and constants.HF_HUB_OFFLINE is False  # restored


def test_an_upstream_message_is_cut_at_a_word() -> None:
    from experiment_1.examples.timm_resnet import first_sentence

    long = (
        "An error happened while trying to locate the file on the Hub and we cannot find the requested files in the "
        "local cache, so please check your connection and try again"
    )
    cut = first_sentence(long)
    assert cut.endswith(" …") and long.startswith(cut[:-2]) and len(cut) <= 162 and not cut.endswith("aga …")
    assert first_sentence("Repository not found. Check the name.\nmore") == "Repository not found"


def test_timm_resnet_through_the_same_api() -> None:
    pytest.importorskip("timm")
    model = build_gated_stack("experiment_1.examples.timm_resnet:build_resnet18", "random", seed=0)
    assert model.num_blocks == 8
    x = images(1, size=64, seed=5)
    tree = evaluate_all_masks(model, x, engine="tree", mask_chunk=32, residual_scale=0.8)
    assert_close_to_roundoff(tree, evaluate_all_masks(model, x, engine="naive", mask_chunk=64, residual_scale=0.8))
    assert (
        interaction_share(tree) > 1e-3
    )  # random-init branches are not zero (zero_init_last off): interactions above round-off
