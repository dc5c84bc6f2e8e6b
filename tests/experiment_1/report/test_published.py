"""The original study's published numbers, read from experiment_1/report/published.json: the values (and their JSON
types, which the summaries copy byte for byte) are the ones written out below, and every committed summary's
``published`` block is one of the file's blocks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiment_1.report import published_numbers, published_value
from paper.committed_runs import committed_glob

REPO = Path(__file__).resolve().parents[3]
SEED = "seed README (lylybig/resnet-moe), ResNet-18 IMAGENET1K_V1, N = 10000 ImageNet"


@pytest.mark.parametrize(
    ("experiment", "quantity", "expected"),
    [
        ("experiment_1", "mobius_rel_error", 1e-6),
        ("experiment_1", "naive_sum_rel_error", 80.0),
        ("experiment_1", "torchvision_top1", 0.6976),
        ("experiment_2", "peak_order", 5),
        ("experiment_2", "kappa_vector", 5.0),
        ("experiment_2", "c_le3", 0.14),
        ("experiment_3ab", "kappa_at_lambda_0.1", 1.14),
        ("experiment_3ab", "kappa_monotonic", True),
        ("experiment_3ab", "agreement_range_lambda_0.8_to_1", [0.73, 1.0]),
        ("experiment_3", "captured_energy_at_64", 0.94),
        ("experiment_3", "improvement_over_random", 130),
        ("experiment_4", "nn_accuracy_scalar_k32", 0.242),
        ("experiment_4", "vector_ranking", "near-global"),
        ("experiment_5", "k_tau_err_hard_minus_easy", 2.8),
        ("experiment_5", "invariant_measures", ["kbar", "kappa", "c_le3"]),
    ],
)
def test_the_loader_returns_the_published_numbers(experiment: str, quantity: str, expected: object) -> None:
    value = published_value(published_numbers(experiment), "resnet18", quantity)
    assert value == expected and type(value) is type(expected)  # 5 stays an int and 5.0 a float in the summaries


def test_each_block_names_its_source_and_the_seeds_resnet_34_peak() -> None:
    assert published_numbers("experiment_2")["source"] == f"{SEED} test images; paper for ResNet-34"
    assert published_numbers("experiment_4")["source"] == f"{SEED} validation images (10 per class)"
    assert published_value(published_numbers("experiment_2"), "resnet34", "peak_order") == 10
    assert published_value(published_numbers("experiment_2"), "resnet50", "peak_order") is None
    with pytest.raises(KeyError, match="no published numbers for 'experiment_9'"):
        published_numbers("experiment_9")


def test_a_copy_leaves_the_numbers_unchanged() -> None:
    published_numbers("experiment_3ab")["resnet18"]["agreement_range_lambda_0.8_to_1"].append(0.0)
    assert published_value(published_numbers("experiment_3ab"), "resnet18", "agreement_range_lambda_0.8_to_1") == [
        0.73,
        1.0,
    ]


def test_every_committed_summary_copies_one_of_the_blocks() -> None:
    blocks = [published_numbers(name) for name in json.loads((REPO / "experiment_1/report/published.json").read_text())]
    copied = [
        summary["published"]
        for path in committed_glob(REPO, "experiment_*/results*/**/*.json")
        if isinstance(summary := json.loads(path.read_text()), dict) and "published" in summary
    ]
    assert len(copied) >= 60 and all(block in blocks for block in copied)
