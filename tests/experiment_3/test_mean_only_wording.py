"""A claim that holds on the mean over images is worded for the mean (referee D17): the relative-error verdict says so in
its claim, and its note says it is not about every image whenever some image is below 1."""

from __future__ import annotations

import copy
from pathlib import Path

from experiment_1.files import read_json
from experiment_3.verdicts import relative_error_verdict

REPO = Path(__file__).resolve().parents[2]
LITE0 = REPO / "experiment_3" / "results_efficientnet_lite0_sample" / "summary.json"


def test_the_relative_error_claim_is_about_the_mean_and_says_so_where_images_disagree() -> None:
    summary = copy.deepcopy(read_json(LITE0))
    entry = relative_error_verdict(summary, "vector")
    assert entry["decision"] == "holds" and "on the mean over images" in entry["claim"]
    assert "not about every image" in entry["notes"][0]  # some images lie below 1 there
    summary["small_k"]["vector"]["relative_error_at_least_1"] = [1.0] * len(summary["ks"])  # planted: every image ≥ 1
    assert "not about every image" not in relative_error_verdict(summary, "vector")["notes"][0]
