"""Experiment 4's analysis and verdicts on planted signatures: alignment detected, absence not, a leaking projection not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from experiment_1.errors import PipelineError
from experiment_1.files import SCHEMA_VERSION, read_json
from experiment_4 import step_2_overlap
from experiment_4.formats import FORMAT

NUM_SUBSETS, CLASSES, PER_CLASS, K = 64, 6, 4, 8


def ranking(rng: np.random.Generator, fixed: list[int], count: int) -> list[int]:
    """A full ranking of the 64 subsets that starts with ``fixed`` and then ``count`` random others."""
    rest = [int(s) for s in rng.permutation(NUM_SUBSETS) if s not in fixed]
    return fixed + rest[:count] + rest[count:]


def planted_document(aligned: bool, seed: int = 0, vector_aligned: bool | None = None) -> dict:
    """Signatures of 6 classes × 4 images over 2^6 subsets.

    Aligned: in every ranking and every class coordinate, an image's top 8 holds 5 subsets of its
    class's prototype. Not aligned: the images carry no class information, but the class coordinates
    leak the label the way a projection does: in coordinate c, an image of class c (its own label)
    starts with 3 subsets shared by every own-label projection and 3 of c's own pattern, every other
    image with 3 subsets of c's foreign pattern, then random subsets. ``vector_aligned`` (default: ``aligned``):
    False gives the vector ranking no class information while the rest stays aligned (the seed's contrast).
    """
    vector_aligned = aligned if vector_aligned is None else vector_aligned
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(CLASSES) * 10, PER_CLASS)  # labels 0, 10, … (not positions)
    prototypes = [list(map(int, rng.choice(NUM_SUBSETS, 5, replace=False))) for _ in range(CLASSES)]
    generic = [60, 61, 62]
    own = [list(map(int, rng.choice(60, 3, replace=False))) for _ in range(CLASSES)]
    foreign = [list(map(int, rng.choice(60, 3, replace=False))) for _ in range(CLASSES)]
    rows = {name: [] for name in ("vector", "scalar", "scalar_true")}
    ranked_class = []
    for image, label in enumerate(labels):
        position = label // 10
        start = prototypes[position] if aligned else []
        per_class = []
        for c in range(CLASSES):
            fixed = start if aligned else (generic + own[c] if c == position else foreign[c])
            per_class.append(ranking(rng, list(dict.fromkeys(fixed)), 3))
        ranked_class.append(per_class)
        rows["vector"].append(ranking(rng, start if vector_aligned else [], 3))
        rows["scalar"].append(ranking(rng, start, 3))
        rows["scalar_true"].append(per_class[position])  # the projection on the image's own label
    document = {
        "format": FORMAT,
        "question": "planted",
        "config": {"num_blocks": 6, "schema_version": SCHEMA_VERSION},
        "num_subsets": NUM_SUBSETS,
        "store_k": NUM_SUBSETS,
        "class_store_k": 16,
        "class_coordinates": [int(c) * 10 for c in range(CLASSES)],
        "label": torch.tensor(labels),
        "predicted": torch.tensor(labels),
        "valid": torch.ones(len(labels), dtype=torch.bool),
        "ranked_class": torch.tensor(ranked_class, dtype=torch.int16)[:, :, :16],
    }
    for name, ranked in rows.items():
        document[f"ranked_{name}"] = torch.tensor(ranked, dtype=torch.int16)
        document[f"magnitude_{name}"] = torch.linspace(1.0, 0.01, NUM_SUBSETS).repeat(len(labels), 1)
    return document


def run_step_2(document: dict, tmp_path: Path) -> dict:
    torch.save(document, tmp_path / "signatures.pt")
    step_2_overlap.main(
        [
            "--signatures",
            str(tmp_path / "signatures.pt"),
            "--nn-K",
            str(K),
            "--sweep-K",
            "4",
            "8",
            "--num-permutations",
            "299",
        ]
    )
    return read_json(tmp_path / "overlap.json")


def decisions(summary: dict) -> dict[str, str]:
    return {verdict["id"]: verdict["decision"] for verdict in summary["verdicts"]}


def test_planted_class_alignment_is_detected_in_every_ranking_and_the_control(tmp_path: Path) -> None:
    summary = run_step_2(planted_document(aligned=True), tmp_path)
    found = decisions(summary)
    assert (
        found["class_alignment.vector"]
        == found["class_alignment.scalar"]
        == found["class_alignment.class_control"]
        == "holds"
    )
    assert found["scalar_minus_vector"] == "cannot tell"  # both at 100 %: no difference to detect
    assert summary["scalar_minus_vector"]["tests"]["nn_accuracy"]["observed"] == 0.0
    assert found["seed_claim"] == "fails"  # the vector ranking is aligned too, and the scalar no more so
    control = summary["rankings"]["class_control"]["binary"]["true_label"]
    assert control["tests"]["nn_accuracy"]["observed"] == 1.0 and control["tests"]["nn_accuracy"]["p_value"] == 1 / 300
    assert summary["rankings"]["class_control"]["nn_sweep"]["ks"] == [
        4,
        8,
    ]  # 16 (class_store_k) bounds the control's sweep


def test_a_leaking_projection_shows_alignment_only_without_the_control(tmp_path: Path) -> None:
    summary = run_step_2(planted_document(aligned=False), tmp_path)
    found = decisions(summary)
    # The true-class projection "finds" classes that the images do not carry …
    leaky = summary["rankings"]["scalar_true"]["binary"]["true_label"]["tests"]
    assert leaky["nn_accuracy"]["observed"] > 0.9 and all(test["p_value"] == 1 / 300 for test in leaky.values())
    # … the leak-free control does not, and neither do the label-free rankings: nothing detected reads cannot tell, never fails.
    assert (
        found["class_alignment.class_control"]
        == found["class_alignment.vector"]
        == found["class_alignment.scalar"]
        == "cannot tell"
    )
    assert found["seed_claim"] == found["scalar_minus_vector"] == "cannot tell"
    control = summary["rankings"]["class_control"]["binary"]["true_label"]
    assert control["tests"]["nn_accuracy"]["p_value"] > 0.05 and "class_alignment.scalar_true" not in found
    # Chance is exact for the class counts: 3 of the 23 other images share a label (the control: 3 of 19).
    assert summary["rankings"]["vector"]["binary"]["true_label"]["chance"] == pytest.approx(3 / 23)
    assert control["chance"] == pytest.approx(3 / 19)


def test_the_seeds_contrast_is_tested_on_the_difference(tmp_path: Path) -> None:
    # scalar aligned, vector carrying no class: the direct difference test detects scalar > vector and the seed's claim holds
    summary = run_step_2(planted_document(aligned=True, vector_aligned=False), tmp_path)
    found = decisions(summary)
    assert found["class_alignment.scalar"] == "holds" and found["class_alignment.vector"] == "cannot tell"
    assert found["scalar_minus_vector"] == "holds" and summary["scalar_minus_vector"]["auc_bootstrap"]["ci_low"] > 0
    assert found["seed_claim"] == "holds"
    core = {entry["id"]: entry for entry in summary["verdicts"]}["vector_global_core"]
    assert "75" not in core["rule"] and core["parameters"]["family_size"] == 11


def test_step_2_refuses_signatures_it_cannot_test(tmp_path: Path) -> None:
    document = planted_document(aligned=True)
    older = {name: value for name, value in document.items() if name != "ranked_class"}
    with pytest.raises(PipelineError, match="no class-coordinate rankings .* rerun experiment_4.step_1_signatures"):
        run_step_2(older, tmp_path)
    with pytest.raises(
        PipelineError, match="--nn-K 32: must lie in 1 … 16, .* per image and class coordinate .* --class-store-K"
    ):
        torch.save(document, tmp_path / "signatures.pt")
        step_2_overlap.main(["--signatures", str(tmp_path / "signatures.pt"), "--nn-K", "32"])
    two_classes = {**document, "label": torch.tensor([0] * 12 + [10] * 12)}
    with pytest.raises(PipelineError, match="at least three classes"):
        run_step_2(two_classes, tmp_path)
