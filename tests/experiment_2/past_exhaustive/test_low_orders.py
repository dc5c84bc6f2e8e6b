"""Experiment 2 step 8 (exact low orders at both corners): the step's energies against the dense butterfly on the
exhaustive table of the same images, its random-mask variance against a direct computation, the family in the resume key."""

from __future__ import annotations

import json
from math import comb
from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import evaluation_flags
from experiment_1.data.shards import SampleDataset, load_sample_list
from experiment_1.errors import PipelineError
from experiment_1.files import read_json
from experiment_1.mobius.transform import mobius_transform
from experiment_1.network.engines import evaluate_all_masks
from experiment_1.network.registry import build_gated_stack
from experiment_2 import step_8_low_orders
from experiment_2.past_exhaustive.sampling.walsh import walsh_design


def test_low_orders_equal_the_dense_butterfly_at_both_corners(
    tiny_shards: Path, tiny_sample_index: Path, tmp_path: Path
) -> None:
    out = tmp_path / "low"
    flags = evaluation_flags(
        tiny_shards,
        tiny_sample_index,
        out,
        "--arch",
        "resnet18",
        "--order",
        "2",
        "--resolution",
        "32",
        "--random-masks",
        "16",
    )
    step_8_low_orders.main(flags)
    summary = read_json(out / "summary.json")
    arrays = np.load(out / "per_image.npz")
    assert (
        summary["num_blocks"] == 8
        and summary["config"]["input_size"] == 32
        and summary["bases"]["on"]["masks_per_image"] == 37
    )
    assert not any(name in json.dumps(summary["bases"]) for name in ("spectrum", "kappa", "peak"))

    model = build_gated_stack("resnet18", "random", seed=0)
    model.preprocess = type(model.preprocess)(resize=37, crop=32)  # the step's proportion: 32 · 256 / 224 ≈ 37
    samples = load_sample_list(tiny_sample_index)
    images = torch.stack(
        [SampleDataset(tiny_shards, samples, model.preprocess)[i]["image"] for i in range(len(samples))]
    )
    logits = evaluate_all_masks(model, images).double()
    sizes = torch.tensor([bin(mask).count("1") for mask in range(256)])
    full = 255
    for base, table in (
        ("off", logits),
        ("on", logits[:, full ^ torch.arange(256)]),
    ):  # about the full network: h(full ∖ A)
        energy = mobius_transform(table).square().sum(dim=2)
        expected = torch.stack([energy[:, sizes == j].sum(dim=1) for j in range(3)], dim=1).numpy()
        np.testing.assert_allclose(arrays[f"order_energy_vector_{base}"], expected, rtol=1e-3)
        ratios = summary["bases"][base]["projections"]["vector"]["per_coefficient_energy"]["mean"]
        np.testing.assert_allclose(ratios, (expected[:, 1:] / [comb(8, 1), comb(8, 2)]).mean(axis=0), rtol=1e-3)
    design = walsh_design(8, 16, 0)
    random = logits[:, design.base]
    np.testing.assert_allclose(arrays["variance_vector"], random.var(dim=1, correction=1).sum(dim=1).numpy(), rtol=1e-4)
    np.testing.assert_allclose(
        arrays["corner_gap_vector"], (logits[:, full] - logits[:, 0]).square().sum(dim=1).numpy(), rtol=1e-4
    )
    # the family's descriptor is in each family pass's resume key
    keys = [json.loads(path.read_text()) for path in (out / "partial").rglob("run_config.json")]
    assert {json.dumps(key.get("mask_family"), sort_keys=True) for key in keys} >= {
        json.dumps({"base": "off", "order_max": 2}, sort_keys=True),
        json.dumps({"base": "on", "order_max": 2}, sort_keys=True),
    }
    assert "out_of_reach" in summary and "Out of reach" in (out / "REPORT.md").read_text()


def test_an_order_above_the_depth_is_one_line(tiny_shards: Path, tiny_sample_index: Path, tmp_path: Path) -> None:
    with pytest.raises(PipelineError, match=r"^--order 9: the network has L = 8"):
        step_8_low_orders.main(
            evaluation_flags(tiny_shards, tiny_sample_index, tmp_path / "x", "--order", "9", "--resolution", "32")
        )
