"""Gated ResNets and the all-mask evaluators: exactness against torchvision and against each other."""

from __future__ import annotations

import os

import pytest
import torch
import torchvision

from experiment_1.errors import PipelineError
from experiment_1.network.choices import ENGINES
from experiment_1.network.compile_stack import compile_stack
from experiment_1.network.engines import evaluate_all_masks, evaluate_masks_naive
from experiment_1.network.gating import MEMORY_FORMATS
from experiment_1.network.registry import ARCHITECTURES, build_gated_stack
from roundoff import ROUNDOFF_RTOL, assert_close_to_roundoff, relative_row_errors


def images(count: int, size: int = 64, seed: int = 0) -> torch.Tensor:
    return torch.randn(count, 3, size, size, generator=torch.Generator().manual_seed(seed))


@pytest.fixture(scope="module")
def resnet18() -> torch.nn.Module:
    return build_gated_stack("resnet18", "random", seed=0)


@pytest.mark.parametrize("memory_format", list(MEMORY_FORMATS))
@pytest.mark.parametrize("arch", ["resnet18", "resnet34", "resnet50"])
def test_full_mask_equals_torchvision_bit_for_bit(arch: str, memory_format: str, tmp_path) -> None:
    # the reference's own weights, handed to the gated stack as a state-dict file: no reliance on both consuming a
    # global seed in the same order
    reference = getattr(torchvision.models, arch)(weights=None)
    torch.save(reference.state_dict(), tmp_path / "weights.pth")
    model = build_gated_stack(arch, str(tmp_path / "weights.pth"), memory_format=memory_format)
    # the same operations run only on the same memory format: channels-last convolutions sum in another order
    reference = reference.eval().to(memory_format=MEMORY_FORMATS[memory_format])
    x = images(2).contiguous(memory_format=MEMORY_FORMATS[memory_format])
    with torch.no_grad():  # the same modules and operations on the same batch: bit for bit
        expected = reference(x)
        assert torch.equal(model(x), expected)
        assert torch.equal(model(x, masks=torch.ones(2, model.num_blocks, dtype=torch.bool)), expected)
    assert model.num_blocks == {"resnet18": 8, "resnet34": 16, "resnet50": 16}[arch]


def test_masked_downsampling_block_still_projects(resnet18: torch.nn.Module) -> None:
    x = images(2)
    block = resnet18.blocks[2]  # layer2.0: stride 2 with a 1×1-conv downsample
    assert block.name == "layer2.0" and not isinstance(block.shortcut, torch.nn.Identity)
    with torch.no_grad():
        state = resnet18.stem(x)
        for earlier in resnet18.blocks[:2]:
            state = earlier(state, None)
        off = block(state, torch.zeros(2))
        expected = torch.relu(block.shortcut(state))
    assert torch.equal(off, expected)  # same batch, and shortcut + 0·branch is shortcut exactly
    assert off.shape[1] == 128 and off.shape[-1] == state.shape[-1] // 2


def test_gated_recursion_states_what_the_blocks_compute(resnet18: torch.nn.Module) -> None:
    assert resnet18.gated_recursion == "x_{l+1} = ReLU(shortcut_l(x_l) + λ·m_l·F_l(x_l))"
    x = torch.randn(2, 64, 8, 8, generator=torch.Generator().manual_seed(9))
    with torch.no_grad():  # gate 0 on layer1.0 (identity shortcut): exactly the ReLU the string names
        assert torch.equal(resnet18.blocks[0](x, torch.zeros(2)), torch.relu(x))


def test_per_sample_masks_differ_within_a_batch(resnet18: torch.nn.Module) -> None:
    x = images(1).repeat(2, 1, 1, 1)
    masks = torch.tensor([[1] * 8, [1] * 7 + [0]], dtype=torch.bool)
    with torch.no_grad():
        logits = resnet18(x, masks=masks)
    assert not torch.allclose(logits[0], logits[1])


@pytest.mark.parametrize("residual_scale", [1.0, 0.6])
@pytest.mark.parametrize("mask_chunk", [256, 8])
def test_tree_equals_naive_on_every_mask_resnet18(
    resnet18: torch.nn.Module, residual_scale: float, mask_chunk: int
) -> None:
    x = images(2, seed=1)
    naive = evaluate_all_masks(resnet18, x, engine="naive", mask_chunk=64, residual_scale=residual_scale)
    tree = evaluate_all_masks(resnet18, x, engine="tree", mask_chunk=mask_chunk, residual_scale=residual_scale)
    assert tree.shape == (2, 256, 1000) and tree.dtype == torch.float32
    assert_close_to_roundoff(tree, naive)
    assert not hasattr(resnet18, "residual_scale") and not hasattr(
        resnet18, "masks"
    )  # λ and masks are arguments, never state


def test_naive_engine_full_and_empty_masks_are_what_they_say(resnet18: torch.nn.Module) -> None:
    x = images(2, seed=2)
    with torch.no_grad():
        full_forward = resnet18(x)
        trunk = resnet18.stem(x)
        for block in resnet18.blocks:
            trunk = block(trunk, torch.zeros(2))
        empty_forward = resnet18.head(trunk)
    # one mask: the naive batch is x itself (same shape and memory format), so the full mask is bit-equal
    assert torch.equal(evaluate_masks_naive(resnet18, x, mask_indices=[255])[:, 0], full_forward)
    # three masks: a batch of 6, whose convolutions CPU kernels may block differently: round-off, not bits
    picked = evaluate_masks_naive(resnet18, x, mask_indices=[255, 0, 127])
    assert_close_to_roundoff(picked[:, 0], full_forward)
    assert_close_to_roundoff(picked[:, 1], empty_forward)
    # The tolerance still tells masks apart: mask 127 (only the last block off) is far outside it.
    assert (relative_row_errors(picked[:, 2], full_forward) > 1000 * ROUNDOFF_RTOL).all()


@pytest.mark.parametrize("engine", ENGINES)
def test_mask_bit_l_switches_block_l_in_both_engines(resnet18: torch.nn.Module, engine: str) -> None:
    """The README's convention, stated directly: bit l of the mask integer gates block l (forward order). Each
    single-block and one two-block mask is compared with a forward whose gate vector names the blocks itself."""
    x = images(2, seed=6)
    chosen = [1 << block for block in range(resnet18.num_blocks)] + [0b10000010]
    if engine == "tree":
        logits = evaluate_all_masks(resnet18, x, engine="tree", mask_chunk=64)[:, chosen]
    else:
        logits = evaluate_masks_naive(resnet18, x, mask_indices=chosen)
    with torch.no_grad():
        for column, mask in enumerate(chosen):
            gates = torch.tensor([[bool(mask >> block & 1) for block in range(resnet18.num_blocks)]] * 2)
            expected = resnet18(x, masks=gates)
            assert_close_to_roundoff(logits[:, column], expected)
            # and a neighbouring block's gate gives something far outside round-off
            other = torch.roll(gates, 1, dims=1)
            assert (relative_row_errors(logits[:, column], resnet18(x, masks=other)) > 1000 * ROUNDOFF_RTOL).all()


def test_residual_scale_changes_the_output(resnet18: torch.nn.Module) -> None:
    x = images(1, seed=4)
    one = evaluate_masks_naive(resnet18, x, mask_indices=[255])
    half = evaluate_masks_naive(resnet18, x, mask_indices=[255], residual_scale=0.5)
    no_branch = evaluate_masks_naive(resnet18, x, mask_indices=[0], residual_scale=0.5)
    assert not torch.allclose(one, half)
    assert_close_to_roundoff(no_branch, evaluate_masks_naive(resnet18, x, mask_indices=[0]))


def test_tree_equals_naive_on_random_masks_resnet34() -> None:
    model = build_gated_stack("resnet34", "random", seed=1)
    x = images(1, size=32, seed=5)
    tree = evaluate_all_masks(model, x, engine="tree", mask_chunk=256, residual_scale=0.8)
    assert tree.shape == (1, 2**16, 1000)
    picked = torch.cat(
        [torch.tensor([0, 2**16 - 1]), torch.randint(0, 2**16, (46,), generator=torch.Generator().manual_seed(0))]
    )
    naive = evaluate_masks_naive(model, x, mask_indices=picked, residual_scale=0.8)
    assert_close_to_roundoff(tree[:, picked], naive)


def test_bad_engine_and_mask_chunk_are_one_line_errors(resnet18: torch.nn.Module) -> None:
    with pytest.raises(PipelineError, match="unknown engine"):
        evaluate_all_masks(resnet18, images(1), engine="fast")
    with pytest.raises(PipelineError, match="power of two"):
        evaluate_all_masks(resnet18, images(1), mask_chunk=100)


def test_out_of_memory_names_mask_chunk(resnet18: torch.nn.Module, monkeypatch: pytest.MonkeyPatch) -> None:
    def exhausted(*args, **kwargs):
        raise RuntimeError(
            "[enforce fail at alloc_cpu.cpp:118] DefaultCPUAllocator: can't allocate memory: you tried to allocate 999 bytes"
        )

    monkeypatch.setattr(type(resnet18.blocks[0]), "forward_both", exhausted)
    with pytest.raises(PipelineError, match="--mask-chunk 256.*reduce --mask-chunk"):
        evaluate_all_masks(resnet18, images(1))


def test_unknown_arch_and_weights_are_clear_errors(tmp_path) -> None:
    with pytest.raises(PipelineError, match="unknown arch 'resnet19'"):
        build_gated_stack("resnet19", "random")
    with pytest.raises(PipelineError, match="unknown weights 'IMAGENET9K'"):
        build_gated_stack("resnet18", "IMAGENET9K")
    with pytest.raises(PipelineError, match="weights file not found"):
        build_gated_stack("resnet18", str(tmp_path / "missing.pth"))


def test_state_dict_path_round_trip(tmp_path) -> None:
    source = torchvision.models.resnet18(weights=None).eval()  # any initialisation: the file carries it
    path = tmp_path / "weights.pth"
    torch.save(source.state_dict(), path)
    loaded = build_gated_stack("resnet18", str(path), seed=0, memory_format="contiguous")
    x = images(1)
    with torch.no_grad():  # identical weights, same operations on the same batch and memory format: bit for bit
        assert torch.equal(loaded(x), source(x))
    with pytest.raises(PipelineError, match="does not fit this architecture"):
        build_gated_stack("resnet34", str(path))


def test_offline_torchvision_weights_error_says_where_to_put_the_file(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOE_CHECKPOINTS", str(tmp_path))
    monkeypatch.setattr(
        torch.hub, "get_dir", lambda: str(tmp_path / "empty_hub")
    )  # a user's torch cache would hold the file

    def offline(*args, **kwargs):
        raise OSError("Name or service not known")

    monkeypatch.setattr(torch.hub, "load_state_dict_from_url", offline)
    with pytest.raises(
        PipelineError, match=f"put the file at {tmp_path}/resnet18-f37072fd.pth.*--arch efficientnet_lite0"
    ):
        build_gated_stack("resnet18", "IMAGENET1K_V1")


def test_cached_checkpoint_with_wrong_hash_is_rejected(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOE_CHECKPOINTS", str(tmp_path))
    (tmp_path / "resnet18-f37072fd.pth").write_bytes(b"truncated download")
    with pytest.raises(PipelineError, match="corrupt or truncated"):
        build_gated_stack("resnet18", "IMAGENET1K_V1")


def test_float64_network_gives_float64_logits_that_agree_with_float32() -> None:
    model32 = build_gated_stack("resnet18", "random", seed=0)
    model64 = build_gated_stack("resnet18", "random", seed=0, dtype=torch.float64)
    x = images(1, size=32, seed=8)
    tree64 = evaluate_all_masks(model64, x)
    naive64 = evaluate_all_masks(model64, x, engine="naive")
    assert tree64.dtype == torch.float64
    torch.testing.assert_close(tree64, naive64, rtol=0, atol=1e-10)
    assert_close_to_roundoff(evaluate_all_masks(model32, x), tree64.float())


def test_registry_knows_each_architectures_pretrained_weights() -> None:
    assert ARCHITECTURES.pretrained_weights("resnet34") == "IMAGENET1K_V1"
    assert ARCHITECTURES.pretrained_weights("efficientnet_lite0") == "pretrained"
    with pytest.raises(PipelineError, match="unknown arch 'vgg16'"):
        ARCHITECTURES.pretrained_weights("vgg16")


def test_compile_falls_back_to_eager_with_one_line(
    resnet18: torch.nn.Module, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    class Broken(torch.nn.Module):
        def forward(self, *args, **kwargs):
            raise RuntimeError("InvalidCxxCompiler: no working C++ compiler found\nmore detail")

    def broken_compile(target, **kwargs):
        if isinstance(target, torch.nn.Module):
            return Broken()
        return lambda *args, **kw: Broken()()

    model = build_gated_stack("resnet18", "random", seed=0)
    monkeypatch.setattr(torch, "compile", broken_compile)
    assert compile_stack(model, resolution=32) is False
    assert not model.compiled
    assert capsys.readouterr().err.strip() == (
        "--compile: torch.compile is unavailable here (RuntimeError: InvalidCxxCompiler: no working C++ compiler found); running eager"
    )
    assert all("forward" not in vars(block) and "forward_both" not in vars(block) for block in model.blocks)
    x = images(2, size=32, seed=9)
    with torch.no_grad():  # the same eager modules on the same batch and memory format
        assert torch.equal(model(x), resnet18(x))


@pytest.mark.skipif(
    not os.environ.get("MOE_TEST_COMPILE"),
    reason="torch.compile on CPU compiles C++ for minutes on a small machine; set MOE_TEST_COMPILE=1 to run",
)
def test_compiled_stack_agrees_with_eager_on_both_engines(resnet18: torch.nn.Module) -> None:
    model = build_gated_stack("resnet18", "random", seed=0)
    if not compile_stack(model, resolution=32):
        pytest.skip("torch.compile is unavailable on this machine")
    assert model.compiled
    x = images(2, size=32, seed=10)
    naive_eager = evaluate_all_masks(resnet18, x, engine="naive", mask_chunk=64, residual_scale=0.7)
    for engine in ENGINES:  # fused kernels sum in another order: round-off, not bit-equality
        compiled = evaluate_all_masks(model, x, engine=engine, mask_chunk=16, residual_scale=0.7)
        assert_close_to_roundoff(compiled, naive_eager)
