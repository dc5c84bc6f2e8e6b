"""experiment_1.run.preflight: the estimate counts the engines' MACs, and a pass beyond the limits is refused
(one line naming --confirm-long-run) before anything is evaluated, unless the flag is given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from experiment_1 import step_3_evaluate as step_3
from experiment_1.data.shards import load_sample_list
from experiment_1.errors import PipelineError
from experiment_1.network.engines import work_ratio
from experiment_1.network.registry import build_gated_stack
from experiment_1.run import preflight
from experiment_1.step_2_sample import main as sample_main


def cost_at(num_blocks: int, seconds: float) -> preflight.CostEstimate:
    return preflight.CostEstimate(1.0, 1.0, 1, 1, seconds, 2**30, num_blocks, "tree", 2**num_blocks)


def test_limits_refuse_without_the_flag_and_pass_with_it() -> None:
    with pytest.raises(
        PipelineError, match=r"L = 21 gated blocks.*beyond the limit of L = 20.*pass --confirm-long-run"
    ):
        preflight.check(cost_at(21, 10.0), confirmed=False)
    with pytest.raises(PipelineError, match=r"estimated at 25\.0 h, beyond the limit of 24 h.*pass --confirm-long-run"):
        preflight.check(cost_at(8, 25 * 3600.0), confirmed=False)
    preflight.check(cost_at(21, 25 * 3600.0), confirmed=True)
    preflight.check(cost_at(20, 24 * 3600.0), confirmed=False)  # at the limits: runs
    preflight.check(
        preflight.CostEstimate(1.0, 1.0, 1, 1, 1.0, 1, 21, "naive", 1), confirmed=False
    )  # one mask per image is not exhaustive


def test_estimate_counts_the_engines_work_and_divides_by_the_measured_rate() -> None:
    torch.manual_seed(0)
    model = build_gated_stack("resnet18", "random")
    work = work_ratio(model, 32, torch.device("cpu"))
    tree = preflight.estimate(model, 32, num_images=6, batch_size=2, mask_chunk=16, engine="tree", world_size=3)
    assert tree.gmac_per_image == pytest.approx(work["tree_gmac"]) and tree.masks_per_image == 256
    assert tree.seconds == pytest.approx(6 * work["tree_gmac"] / (tree.measured_gmac_per_s * 3))
    naive = preflight.estimate(model, 32, num_images=6, batch_size=2, mask_chunk=16, engine="naive")
    assert naive.gmac_per_image == pytest.approx(work["naive_gmac"])
    single = preflight.estimate(model, 32, num_images=6, batch_size=2, mask_chunk=16, engine="naive", masks_per_image=1)
    assert single.gmac_per_image == pytest.approx(work["naive_gmac"] / 256)
    # peak: parameters + (B, 2^L, C) float32 logits + 3 × B × the largest (states × layer output) of a part, states capped by the chunk
    parameters, logits = sum(p.numel() for p in model.parameters()) * 4, 2 * 256 * 1000 * 4
    activations = (tree.peak_bytes - parameters - logits) / (3 * 2 * 4)
    assert (
        activations == int(activations) and activations >= 64 * 16 * 16
    )  # at least the stem's conv output (1 state per image)
    alone = preflight.estimate(model, 32, num_images=6, batch_size=1, mask_chunk=16, engine="tree")
    assert (
        alone.peak_bytes - parameters - logits / 2 == (tree.peak_bytes - parameters - logits) / 2
    )  # linear in the batch size
    unchunked = preflight.estimate(model, 32, num_images=6, batch_size=2, mask_chunk=256, engine="tree")
    assert unchunked.peak_bytes > tree.peak_bytes  # more states at once in the late blocks and the head
    largest, classes = preflight.activation_sizes(model, torch.zeros(1, 3, 32, 32))
    assert classes == 1000 and largest[0] == 64 * 16 * 16 and largest[-1] == 1000  # stem conv output; head's logits


def test_a_run_beyond_the_limit_is_refused_before_evaluating(
    tiny_shards: Path,
    small_input: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    index = tmp_path / "sample_index.json"
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
            str(index),
        ]
    )
    flags = [
        "--data-dir",
        str(tiny_shards),
        "--sample-index",
        str(index),
        "--weights",
        "random",
        "--batch-size",
        "2",
        "--num-workers",
        "0",
        "--device",
        "cpu",
    ]
    monkeypatch.setattr(preflight, "MAX_HOURS", 1e-9)
    with pytest.raises(
        PipelineError, match=r"^this pass is estimated at .* pass --confirm-long-run to run it anyway"
    ) as refused:
        step_3.main([*flags, "--output-dir", str(tmp_path / "refused")])
    assert not (tmp_path / "refused" / "partial").exists()
    estimate = f"{len(load_sample_list(index))} image(s) × "
    assert (
        estimate in str(refused.value) and "cost estimate" not in capsys.readouterr().out
    )  # said once: in the refusal
    step_3.main([*flags, "--output-dir", str(tmp_path / "confirmed"), "--confirm-long-run"])
    assert f"cost estimate: {estimate}" in capsys.readouterr().out  # an accepted run prints it
    assert json.loads((tmp_path / "confirmed" / "summary.json").read_text())["num_images"] == 2


def test_a_family_pass_is_counted_as_the_family_and_never_refused_for_its_depth() -> None:
    from experiment_1.network.engines import family_gmac
    from experiment_1.network.mask_family import MaskFamily

    model = build_gated_stack("resnet101", "random")
    cpu = torch.device("cpu")
    for base in ("off", "on"):
        cost = preflight.estimate(
            model, 32, num_images=2, batch_size=1, mask_chunk=64, engine="tree", family=MaskFamily(2, base)
        )
        assert cost.num_blocks == 33 and cost.masks_per_image == 1 + 33 + 528
        assert cost.gmac_per_image == pytest.approx(family_gmac(model, 32, cpu, MaskFamily(2, base)))
        preflight.check_blocks(cost, confirmed=False)  # L = 33, but a family, not 2^33 masks
    naive = preflight.estimate(
        model, 32, num_images=2, batch_size=1, mask_chunk=64, engine="naive", family=MaskFamily(2)
    )
    assert naive.gmac_per_image == pytest.approx(work_ratio(model, 32, cpu)["naive_gmac"] / 2**33 * 562)
    # the whole cube as a family is the exhaustive tree's count (resnet18, L = 8)
    small = build_gated_stack("resnet18", "random")
    assert family_gmac(small, 32, cpu, MaskFamily(8, "off")) == pytest.approx(work_ratio(small, 32, cpu)["tree_gmac"])
    assert family_gmac(small, 32, cpu, MaskFamily(8, "on")) == pytest.approx(work_ratio(small, 32, cpu)["tree_gmac"])
    # base off: the saturated states run only pre + shortcut; base on runs whole blocks on them, so it costs more
    assert family_gmac(model, 32, cpu, MaskFamily(3, "off")) < family_gmac(model, 32, cpu, MaskFamily(3, "on"))
