"""The CUDA paths, checked as far as a CPU allows: version-robust torch calls, a dtype-safe round-off unit,
deterministic reductions (the same bits as the sequential sum, whatever the batch), the run key of a CUDA
run. The device-only checks are in :mod:`experiment_1.gpu_checks`."""
from __future__ import annotations

import math
import types

import pytest
import torch

from experiment_1.mobius.sparsity import captured_fraction, row_cumsum
from experiment_1.mobius.spectrum import order_energies, order_layout
from experiment_1.mobius.transform import subset_orders
from experiment_1.network.compile_stack import compile_stack, raise_recompile_limit
from experiment_1.run import partial_store
from experiment_1.run.distributed import device_id_argument
from experiment_2.spectrum import unit_in_last_place

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device"))]


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


def test_compile_without_either_limit_name_stays_eager_with_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    import torch._dynamo

    from experiment_1.network.registry import build_gated_resnet

    monkeypatch.setattr(torch._dynamo, "config", types.SimpleNamespace())
    model = build_gated_resnet("resnet18", "random", seed=0)
    assert compile_stack(model, resolution=32) is False and not model.compiled
    assert "AttributeError: torch._dynamo.config has none of recompile_limit, cache_size_limit); running eager" in capsys.readouterr().err


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
    spread = torch.randn(4000, dtype=torch.float64, generator=generator).abs() * 10.0 ** torch.randint(-6, 5, (4000,), generator=generator)
    edges = torch.tensor([0.0, info.tiny, info.tiny * info.eps, info.tiny * (1 - info.eps), 0.5, 1.0, 2.0, 3.0, info.max / 2], dtype=torch.float64)
    magnitude = torch.cat([spread, edges]).to(dtype)
    magnitude = magnitude[magnitude.isfinite()]  # float16 overflows part of the spread
    expected = (torch.nextafter(magnitude, torch.full_like(magnitude, math.inf)) - magnitude).double()
    assert torch.equal(unit_in_last_place(magnitude).double(), expected)
    largest = torch.tensor([info.max], dtype=dtype)  # nextafter steps to inf there; the spacing of the top binade is finite
    assert unit_in_last_place(largest).item() == math.ldexp(info.eps, math.frexp(info.max)[1] - 1)


@pytest.mark.parametrize("device", DEVICES)
def test_unit_in_last_place_needs_no_nextafter_kernel(device: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(*args: object, **kwargs: object) -> None:
        raise RuntimeError('"nextafter_cuda" not implemented for \'BFloat16\'')

    monkeypatch.setattr(torch, "nextafter", missing)
    magnitude = torch.tensor([0.0, 1.0, 3.0, 1000.0], dtype=torch.bfloat16, device=device)
    eps = torch.finfo(torch.bfloat16).eps
    expected = torch.tensor([torch.finfo(torch.bfloat16).tiny * eps, eps, 2 * eps, 512 * eps], dtype=torch.float64, device=device)
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
    coefficients = torch.randn(4, 2**num_blocks, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(num_blocks)).to(device)
    energies = order_energies(coefficients)
    energy = coefficients.square().sum(dim=2).cpu().tolist()
    orders = subset_orders(num_blocks).tolist()
    for image in range(4):  # independent computation: the exactly rounded sum (math.fsum) is within a few ulp
        for order in range(num_blocks + 1):
            exact = math.fsum(value for value, mask_order in zip(energy[image], orders) if mask_order == order)
            assert energies[image, order].item() == pytest.approx(exact, rel=4 * num_blocks * 2**-52)
    for image in range(4):  # each image's energies do not depend on the images batched with it
        assert torch.equal(order_energies(coefficients[image : image + 1]), energies[image : image + 1])
    if device == "cpu":  # CPU: the left-to-right sum, bit for bit what index_add_ gave before (committed results unmoved)
        flat = coefficients.square().sum(dim=2)
        assert torch.equal(energies, flat.new_zeros(4, num_blocks + 1).index_add_(1, subset_orders(num_blocks), flat))


@pytest.mark.parametrize("device", DEVICES)
def test_captured_fraction_of_one_image_equals_its_row_in_a_batch(device: str) -> None:
    generator = torch.Generator().manual_seed(5)
    energies = torch.rand(3, 8192, dtype=torch.float64, generator=generator).to(device)
    permutation = torch.stack([torch.randperm(8192, generator=generator) for _ in range(3)]).to(device)
    batched = captured_fraction(energies, permutation)
    for image in range(3):
        assert torch.equal(captured_fraction(energies[image : image + 1], permutation[image : image + 1]), batched[image : image + 1])
    if device == "cpu":  # CPU: the plain sequential scan, as before
        assert torch.equal(row_cumsum(energies[:1]), energies[:1].cumsum(dim=1))
    assert torch.all(batched[:, -1] == 1.0)


def test_cuda_run_key_names_the_gpu_and_library_versions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA H100 80GB HBM3")
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))
    monkeypatch.setattr(torch.backends.cudnn, "version", lambda: 90100)
    identity = partial_store.device_identity(torch.device("cuda", 0))["cuda_device"]
    assert identity == {"name": "NVIDIA H100 80GB HBM3", "capability": "9.0", "torch": torch.__version__, "cuda": torch.version.cuda, "cudnn": 90100}
    assert partial_store.device_identity(torch.device("cpu")) == {}  # CPU keys keep their old content
    previous = {"device_type": "cuda", "cuda_device": {**identity, "name": "NVIDIA A100-SXM4-80GB"}}
    assert partial_store.describe_changes(previous, {"device_type": "cuda", "cuda_device": identity}) == "cuda_device"
