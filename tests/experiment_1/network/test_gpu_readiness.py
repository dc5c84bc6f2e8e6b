"""The CUDA paths, checked as far as a CPU allows: version-robust torch calls, a dtype-safe round-off unit,
deterministic reductions (the same bits as the sequential sum, whatever the batch), the run key of a CUDA
run. The device-only checks are in :mod:`experiment_1.tools.gpu_checks`."""

from __future__ import annotations

import math
import re
import types
from pathlib import Path

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

import experiment_1.reconstruction.single_pass as reconstruction_pass
import experiment_1.step_3_evaluate as step_3
from experiment_1.errors import PipelineError
from experiment_1.mobius.sparsity import captured_fraction, power_of_two_ks, row_cumsum
from experiment_1.mobius.spectrum import order_energies, order_layout, unit_in_last_place
from experiment_1.mobius.transform import subset_orders
from experiment_1.network.compile_stack import compile_stack, raise_recompile_limit
from experiment_1.network.engines import evaluate_masks_tree
from experiment_1.network.gating import (
    EVALUATION_PARITY_RTOL,
    GateableBlock,
    Preprocess,
    ResidualStack,
    check_evaluation_parity,
)
from experiment_1.network.memory import (
    REDUCTION_LOGIT_MULTIPLE,
    LiveTensorBytes,
    StackProfile,
    peak_estimate,
    stack_profile,
    tree_activation_bound,
)
from experiment_1.network.registry import build_gated_stack
from experiment_1.reconstruction.metrics import PEAK_LOGIT_MULTIPLE, reconstruction_metrics
from experiment_1.run import partial_store
from experiment_1.run.distributed import device_id_argument
from experiment_1.run.setup import memory_format_for
from experiment_1.step_2_sample import main as sample_main
from experiment_1.tools.gpu_checks import DEVICE_CHECKS, deterministic_reductions
from experiment_1.tools.gpu_memory_plan import largest_batch
from experiment_2.spectrum.evaluation import spectrum_metrics
from experiment_3.topk import topk_metrics

DEVICES = [
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")),
]


def test_recompile_limit_is_raised_under_either_name(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch._dynamo

    old_torch = types.SimpleNamespace(cache_size_limit=8)  # torch < 2.6: only the older name
    monkeypatch.setattr(torch._dynamo, "config", old_torch)
    raise_recompile_limit(72)
    assert old_torch.cache_size_limit == 72 and not hasattr(old_torch, "recompile_limit")
    new_torch = types.SimpleNamespace(recompile_limit=100, cache_size_limit=8)
    monkeypatch.setattr(torch._dynamo, "config", new_torch)
    raise_recompile_limit(72)
    assert (new_torch.recompile_limit, new_torch.cache_size_limit) == (100, 8)  # never lowered; the newer name wins
    monkeypatch.setattr(torch._dynamo, "config", types.SimpleNamespace())
    with pytest.raises(AttributeError, match="recompile_limit, cache_size_limit"):
        raise_recompile_limit(72)


def test_compile_without_either_limit_name_stays_eager_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    import torch._dynamo

    from experiment_1.network.registry import build_gated_stack

    monkeypatch.setattr(torch._dynamo, "config", types.SimpleNamespace())
    model = build_gated_stack("resnet18", "random", seed=0)
    assert compile_stack(model, resolution=32) is False and not model.compiled
    assert (
        "AttributeError: torch._dynamo.config has none of recompile_limit, cache_size_limit); running eager"
        in capsys.readouterr().err
    )


def test_device_id_is_passed_only_where_init_process_group_takes_it() -> None:
    device = torch.device("cuda", 3)

    def new_init(backend: str, timeout: object = None, device_id: object = None) -> None: ...

    def old_init(backend: str, timeout: object = None, rank: int = -1) -> None: ...

    assert device_id_argument(new_init, device) == {"device_id": device}
    assert device_id_argument(old_init, device) == {}
    assert device_id_argument(len, device) in ({}, {"device_id": device})  # a builtin: no guess that raises


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64])
def test_unit_in_last_place_equals_nextafter_on_cpu(dtype: torch.dtype) -> None:
    info = torch.finfo(dtype)
    generator = torch.Generator().manual_seed(0)
    spread = torch.randn(4000, dtype=torch.float64, generator=generator).abs() * 10.0 ** torch.randint(
        -6, 5, (4000,), generator=generator
    )
    edges = torch.tensor(
        [0.0, info.tiny, info.tiny * info.eps, info.tiny * (1 - info.eps), 0.5, 1.0, 2.0, 3.0, info.max / 2],
        dtype=torch.float64,
    )
    magnitude = torch.cat([spread, edges]).to(dtype)
    magnitude = magnitude[magnitude.isfinite()]  # float16 overflows part of the spread
    expected = (torch.nextafter(magnitude, torch.full_like(magnitude, math.inf)) - magnitude).double()
    assert torch.equal(unit_in_last_place(magnitude).double(), expected)
    largest = torch.tensor(
        [info.max], dtype=dtype
    )  # nextafter steps to inf there; the spacing of the top binade is finite
    assert unit_in_last_place(largest).item() == math.ldexp(info.eps, math.frexp(info.max)[1] - 1)


@pytest.mark.parametrize("device", DEVICES)
def test_unit_in_last_place_needs_no_nextafter_kernel(device: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(*args: object, **kwargs: object) -> None:
        raise RuntimeError('"nextafter_cuda" not implemented for \'BFloat16\'')

    monkeypatch.setattr(torch, "nextafter", missing)
    magnitude = torch.tensor([0.0, 1.0, 3.0, 1000.0], dtype=torch.bfloat16, device=device)
    eps = torch.finfo(torch.bfloat16).eps
    expected = torch.tensor(
        [torch.finfo(torch.bfloat16).tiny * eps, eps, 2 * eps, 512 * eps], dtype=torch.float64, device=device
    )
    assert torch.equal(unit_in_last_place(magnitude).double(), expected)


def test_order_layout_lists_every_mask_once_by_order() -> None:
    for num_blocks in (1, 4, 7):
        layout = order_layout(num_blocks)
        orders = subset_orders(num_blocks).tolist()
        for order, row in enumerate(layout.tolist()):
            masks = [mask for mask in row if mask < 2**num_blocks]
            assert masks == [mask for mask in range(2**num_blocks) if orders[mask] == order]
            assert all(mask == 2**num_blocks for mask in row[len(masks) :])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("num_blocks", [1, 5, 12])
def test_order_energies_are_the_sequential_sums_the_same_for_any_batch(device: str, num_blocks: int) -> None:
    coefficients = torch.randn(
        4, 2**num_blocks, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(num_blocks)
    ).to(device)
    energies = order_energies(coefficients)
    energy = coefficients.square().sum(dim=2).cpu().tolist()
    orders = subset_orders(num_blocks).tolist()
    for image in range(4):  # independent computation: the exactly rounded sum (math.fsum) is within a few ulp
        for order in range(num_blocks + 1):
            exact = math.fsum(value for value, mask_order in zip(energy[image], orders) if mask_order == order)
            assert energies[image, order].item() == pytest.approx(exact, rel=4 * num_blocks * 2**-52)
    for image in range(4):  # each image's energies do not depend on the images batched with it
        assert torch.equal(order_energies(coefficients[image : image + 1]), energies[image : image + 1])
    if (
        device == "cpu"
    ):  # CPU: the left-to-right sum, bit for bit what index_add_ gave before (committed results unmoved)
        flat = coefficients.square().sum(dim=2)
        assert torch.equal(energies, flat.new_zeros(4, num_blocks + 1).index_add_(1, subset_orders(num_blocks), flat))


@pytest.mark.parametrize("device", DEVICES)
def test_captured_fraction_of_one_image_equals_its_row_in_a_batch(device: str) -> None:
    generator = torch.Generator().manual_seed(5)
    energies = torch.rand(3, 8192, dtype=torch.float64, generator=generator).to(device)
    permutation = torch.stack([torch.randperm(8192, generator=generator) for _ in range(3)]).to(device)
    batched = captured_fraction(energies, permutation)
    for image in range(3):
        assert torch.equal(
            captured_fraction(energies[image : image + 1], permutation[image : image + 1]), batched[image : image + 1]
        )
    if device == "cpu":  # CPU: the plain sequential scan, as before
        assert torch.equal(row_cumsum(energies[:1]), energies[:1].cumsum(dim=1))
    assert torch.all(batched[:, -1] == 1.0)


def test_cuda_run_key_names_the_gpu_and_library_versions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA H100 80GB HBM3")
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))
    monkeypatch.setattr(torch.backends.cudnn, "version", lambda: 90100)
    identity = partial_store.device_identity(torch.device("cuda", 0))["cuda_device"]
    reduced = {
        "bfloat16": torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
        "float16": torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
    }
    assert identity == {
        "name": "NVIDIA H100 80GB HBM3",
        "capability": "9.0",
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": 90100,
        "reduced_precision_reduction": reduced,
    }
    assert partial_store.device_identity(torch.device("cpu")) == {}  # CPU keys keep their old content
    previous = {"device_type": "cuda", "cuda_device": {**identity, "name": "NVIDIA A100-SXM4-80GB"}}
    assert partial_store.describe_changes(previous, {"device_type": "cuda", "cuda_device": identity}) == "cuda_device"


# --- memory ------------------------------------------------------------------------------------------------


def test_live_tensor_bytes_counts_new_storages_until_freed() -> None:
    before = torch.zeros(1000)  # made outside: neither it nor its views count
    with LiveTensorBytes() as live:
        first = torch.zeros(256, dtype=torch.float64)  # 2 KiB
        view = first[:10]
        second = torch.ones(512)  # 2 KiB
        assert live.current == 4096 and live.peak == 4096
        del first
        assert live.current == 4096  # the view keeps the storage
        del view
        assert live.current == 2048
        assert (before[:500] * 1).shape == (
            500,
        )  # a 2000-byte temporary, freed; the slice of an outside storage is not counted
        del second
    assert (live.current, live.peak) == (0, 4096)


def resnet50_prefix(blocks: int) -> ResidualStack:
    """ResNet-50's stem and first ``blocks`` gateable blocks with a small head (the full L = 16 pass takes over a minute on one core)."""
    full = build_gated_stack("resnet50", "random", seed=0)
    channels = [module for module in full.blocks[blocks - 1].modules() if isinstance(module, torch.nn.Conv2d)][
        -1
    ].out_channels
    head = torch.nn.Sequential(torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(channels, 10))
    stack = ResidualStack(full.stem, list(full.blocks[:blocks]), head, full.preprocess, "resnet50", "random").eval()
    stack.memory_format = full.memory_format
    return stack


@pytest.mark.parametrize("batch, mask_chunk", [(2, 16), (1, 64)])
def test_tree_engine_holds_no_more_than_its_stated_bound(batch: int, mask_chunk: int) -> None:
    model = resnet50_prefix(10)  # layer1–3 widths; levels 4 … 9 (c = 16) or 6 … 9 (c = 64) split
    images = torch.randn(batch, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    bound = tree_activation_bound(stack_profile(model, 32), batch, mask_chunk)
    with LiveTensorBytes() as live:
        logits = evaluate_masks_tree(model, images, mask_chunk)
    assert logits.shape == (batch, 2**10, 10)
    # the bound is tight (within a few %): an engine keeping each group's input alive while its subtree runs holds about twice as much
    assert 0.8 * bound < live.peak <= bound


def test_reductions_stay_within_their_stated_multiple_of_the_logits() -> None:
    num_blocks, classes = 14, 20
    logits = torch.randn(1, 2**num_blocks, classes, generator=torch.Generator().manual_seed(2))
    labels = torch.zeros(1, dtype=torch.long)
    size = logits.numel() * 4
    with LiveTensorBytes() as live:
        reconstruction_metrics(logits, labels)
    assert live.peak <= PEAK_LOGIT_MULTIPLE * size  # one float64 copy plus 1/8-of-the-masks temporaries
    for reduction in (
        lambda: spectrum_metrics(logits),
        lambda: topk_metrics(logits, [0], power_of_two_ks(num_blocks), 1, 0, [0.9], [0.1]),
    ):
        with LiveTensorBytes() as live:
            reduction()
        assert live.peak <= REDUCTION_LOGIT_MULTIPLE * size


# --- host synchronisation --------------------------------------------------------------------------------

SYNC_METHODS = ("item", "cpu", "tolist", "numpy", "__bool__", "__int__", "__float__")


class ScalarReads(TorchDispatchMode):
    """Counts aten._local_scalar_dense: every tensor → Python scalar read, also those made inside torch."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        if func is torch.ops.aten._local_scalar_dense.default:
            self.count += 1
        return func(*args, **(kwargs or {}))


def toy_stack(num_blocks: int, classes: int = 4) -> ResidualStack:
    torch.manual_seed(num_blocks)
    blocks = [GateableBlock(torch.nn.Conv2d(2, 2, 1), post=torch.nn.ReLU()) for _ in range(num_blocks)]
    head = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(8, classes))
    return ResidualStack(torch.nn.Conv2d(3, 2, 1), blocks, head, Preprocess(resize=2, crop=2), "toy", "random").eval()


def host_reads_per_batch(num_blocks: int, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    model = toy_stack(num_blocks)
    images = torch.randn(2, 3, 2, 2, generator=torch.Generator().manual_seed(3))
    counts = dict.fromkeys(SYNC_METHODS, 0)
    with monkeypatch.context() as patch:
        for name in SYNC_METHODS:
            original = getattr(torch.Tensor, name)

            def counted(
                self: torch.Tensor, *args: object, _name: str = name, _original=original, **kwargs: object
            ) -> object:
                counts[_name] += 1
                return _original(self, *args, **kwargs)

            patch.setattr(torch.Tensor, name, counted)
        with ScalarReads() as reads:
            logits = evaluate_masks_tree(model, images, mask_chunk=64)
            reconstruction_metrics(logits, torch.zeros(2, dtype=torch.long))
            spectrum_metrics(logits)
            topk_metrics(logits, [0, 1], power_of_two_ks(num_blocks), 1, 0, [0.9], [0.1])
    return {**counts, "scalar reads": reads.count}


def test_device_to_host_reads_per_batch_do_not_grow_with_the_number_of_masks(monkeypatch: pytest.MonkeyPatch) -> None:
    small, large = (
        host_reads_per_batch(12, monkeypatch),
        host_reads_per_batch(14, monkeypatch),
    )  # 1 and 4 chunks of 4096 subsets
    assert large == small
    assert (
        small["scalar reads"] + sum(small[name] for name in SYNC_METHODS) <= 16
    )  # a handful per batch, none per group or chunk


def test_tree_engine_makes_no_host_copy_on_a_non_cpu_device() -> None:
    class CrossDeviceCopies(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.copies: list[str] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
            devices = {value.device.type for value in tree_leaves((args, kwargs)) if isinstance(value, torch.Tensor)}
            target = (kwargs or {}).get("device")
            if len(devices) > 1 or (
                devices and target is not None and torch.device(target).type not in devices
            ):  # a copy between devices
                self.copies.append(str(func))
            return func(*args, **(kwargs or {}))

    model = toy_stack(6).to("meta")  # a stand-in device without data: any host copy of a device tensor shows
    images = torch.empty(2, 3, 2, 2, device="meta")
    with CrossDeviceCopies() as mode:
        logits = evaluate_masks_tree(model, images, mask_chunk=8)
    assert logits.device.type == "meta" and logits.shape == (2, 64, 4)
    assert mode.copies == []


# --- the evaluation loop on a device ------------------------------------------------------------------------


def run_step_3(tiny_shards: Path, tmp_path: Path, *extra: str) -> None:
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
            "3",
            "--output",
            str(sample_index),
        ]
    )
    step_3.main(
        [
            "--data-dir",
            str(tiny_shards),
            "--sample-index",
            str(sample_index),
            "--weights",
            "random",
            "--batch-size",
            "2",
            "--num-workers",
            "0",
            "--output-dir",
            str(tmp_path / "results"),
            *extra,
        ]
    )


def test_out_of_memory_in_a_stage_reduction_is_one_line_with_flags_and_estimate(
    tiny_shards: Path, tmp_path: Path, small_input: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    def exhausted(logits: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
        raise torch.cuda.OutOfMemoryError(
            "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.1 GiB total capacity)\nmore"
        )

    monkeypatch.setattr(reconstruction_pass, "reconstruction_metrics", exhausted)
    with pytest.raises(PipelineError) as caught:
        run_step_3(tiny_shards, tmp_path, "--device", "cpu", "--mask-chunk", "64")
    message = str(caught.value)
    assert message.startswith(
        "out of memory with --batch-size 2 --mask-chunk 64 (CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.1 GiB total capacity))"
    )
    assert (
        re.search(
            r"; estimated peak \d+\.\d GiB for these flags; reduce --batch-size, or --mask-chunk \(try 16\)", message
        )
        and "\n" not in message
    )


@pytest.mark.parametrize("device", DEVICES)
def test_evaluation_parity_holds_on_the_device_and_catches_a_wrong_model(device: str, small_input: int) -> None:
    model = build_gated_stack("resnet18", "random", seed=0, device=device)
    assert model.full_mask_reference is not None and model.full_mask_reference[1].device.type == "cpu"
    assert check_evaluation_parity(model, "float32") <= EVALUATION_PARITY_RTOL["float32"]
    with torch.no_grad():
        model.head[-1].bias.add_(1.0)  # a kernel or layout bug on the device would move the logits like this
    with pytest.raises(
        PipelineError,
        match=rf"on {device}.* with --dtype float32, the model with every gate on differs from the float32 CPU network",
    ):
        check_evaluation_parity(model, "float32")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["bfloat16", "float64"])
def test_evaluation_parity_tolerance_admits_the_dtype_round_off(device: str, dtype: str, small_input: int) -> None:
    model = build_gated_stack(
        "resnet18", "random", seed=0, device=device, dtype={"bfloat16": torch.bfloat16, "float64": torch.float64}[dtype]
    )
    error = check_evaluation_parity(model, dtype)
    assert (error > 0) and error <= EVALUATION_PARITY_RTOL[dtype]


def test_device_checks_run_their_device_agnostic_part_on_cpu() -> None:
    names = [name for name, _, _ in DEVICE_CHECKS]
    assert len(set(names)) == len(names)
    passed, details = deterministic_reductions(None, torch.device("cpu"))
    assert passed and details == {"differ_between_runs": [], "differ_batch_1_vs_4": []}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("name", [name for name, _, _ in DEVICE_CHECKS])
def test_device_check_passes_on_cuda(name: str) -> None:
    function = next(function for check, _, function in DEVICE_CHECKS if check == name)
    passed, details = function(None, torch.device("cuda"))
    assert passed, details


def test_memory_plan_picks_the_largest_batch_that_fits() -> None:
    profile = StackProfile(
        image=100,
        stem_output=1000,
        block_outputs=[1000, 500, 500, 250],
        block_working_sets=[3000, 2000, 2000, 1000],
        head_working_set=400,
        num_classes=10,
        logit_bytes=4,
    )
    budget = 10**6
    batch = largest_batch(profile, 4, 2.6, budget)
    assert peak_estimate(profile, batch, 4, 2.6) <= budget < peak_estimate(profile, batch + 1, 4, 2.6)
    # by hand for c = 4: groups 1, 2 (merged), 4, 4 (split at levels 2 and 3); each level holds its input plus the working set
    fixed = 100 + 8 * 3 * (1 + 2 + 4 + 4 + 4)  # the image copy and the prefix ids
    levels = [
        1 * (1000 + 3000),
        2 * (1000 + 2000),
        4 * (500 + 2000),
        4 * 500 + 4 * (500 + 1000),
    ]  # level 3: level 2's gate-on half waits
    head = 4 * 500 + 4 * 250 + 4 * (250 + 400)  # both waiting halves, then the head on 4 states
    assert tree_activation_bound(profile, 1, 4) == fixed + max(*levels, head) + 2**4 * 10 * 4
    assert tree_activation_bound(profile, 3, 4) == 3 * tree_activation_bound(profile, 1, 4)


def test_float64_on_cuda_runs_contiguous_everything_else_channels_last() -> None:
    assert memory_format_for(torch.device("cuda", 0), torch.float64) == "contiguous"
    for device, dtype in (
        (torch.device("cuda"), torch.float32),
        (torch.device("cuda"), torch.bfloat16),
        (torch.device("cpu"), torch.float64),
        (torch.device("cpu"), torch.float32),
    ):
        assert memory_format_for(device, dtype) == "channels_last"
