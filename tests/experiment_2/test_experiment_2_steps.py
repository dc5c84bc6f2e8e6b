"""Experiment 2 and 3A/3B steps end to end on a random-init ResNet-18 at 64 px, including resume."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
import torchvision

import experiment_1.run.setup as run_setup
import experiment_2.spectrum.evaluation as evaluation
import experiment_2.step_1_evaluate as step_1_evaluate
from experiment_1.data.shards import SampleDataset, draw_sample, list_items, load_sample_list, sample_list_json
from experiment_1.errors import PipelineError
from experiment_1.files import atomic_write_json, read_json
from experiment_1.mobius.spectrum import order_energies
from experiment_1.mobius.transform import mobius_transform
from experiment_1.network.engines import evaluate_all_masks
from experiment_1.report.markdown import format_stat
from experiment_2 import step_2_plot, step_3_lambda_sweep, step_4_lambda_plot


def write_sample_list(data_dir: Path, path: Path, count: int = 3) -> Path:
    """A uniform sample list of ``count`` unlabelled test images."""
    samples = draw_sample(list_items(data_dir, "test-*.parquet"), "uniform", count, 0, seed=0)
    atomic_write_json(path, sample_list_json(samples, "test-*.parquet", "uniform", 0, None))
    return path


def common_flags(
    data_dir: Path, sample_index: Path, output_dir: Path, limit: int = 3, seed: int = 0, weights: str = "random"
) -> list[str]:
    return [
        "--sample-index",
        str(sample_index),
        "--data-dir",
        str(data_dir),
        "--weights",
        weights,
        "--batch-size",
        "2",
        "--num-workers",
        "0",
        "--limit",
        str(limit),
        "--device",
        "cpu",
        "--seed",
        str(seed),
        "--output-dir",
        str(output_dir),
    ]


def trained_weights(folder: Path) -> str:
    """A weights file standing for a trained network (a resnet18 checkpoint): the null is compared with a network that
    is not random-init."""
    torch.manual_seed(0)
    path = folder / "trained.pth"
    torch.save(torchvision.models.resnet18().state_dict(), path)
    return str(path)


def test_spectrum_step_and_report(tiny_shards: Path, small_input: int, tmp_path: Path) -> None:
    sample_index = write_sample_list(tiny_shards, tmp_path / "samples.json")
    trained_dir, random_dir = tmp_path / "results", tmp_path / "results_random"
    step_1_evaluate.main(common_flags(tiny_shards, sample_index, trained_dir, weights=trained_weights(tmp_path)))
    step_1_evaluate.main(common_flags(tiny_shards, sample_index, random_dir, limit=2, seed=1))

    summary = read_json(trained_dir / "summary.json")
    arrays = dict(np.load(trained_dir / "per_image.npz"))
    assert summary["num_valid"] == 3 and summary["config"]["input_size"] == small_input
    assert "wall_seconds" not in json.dumps(summary) and read_json(trained_dir / "timing.json")["images_evaluated"] == 3

    # The per-image energies are those of the Möbius transform of all-mask logits computed here independently.
    model = run_setup.build_gated_stack("resnet18", "random", device="cpu", seed=0)
    dataset = SampleDataset(tiny_shards, load_sample_list(sample_index, 3), model.preprocess)
    images = torch.stack([dataset[index]["image"] for index in range(3)])
    # The step ran the tree engine on batches of 2, this the naive engine on a batch of 3: equal to
    # float32 round-off, not bit for bit. An order's energy is compared relative to the image's
    # total energy (1e-6: round-off moves the logits by ~1e-6 relative, energies by twice that; a
    # wrong mask or transform moves whole orders), the prediction where its top-2 margin is clear.
    logits = evaluate_all_masks(model, images, engine="naive")
    coefficients = mobius_transform(logits, dim=1, dtype=torch.float64)
    expected_vector = order_energies(coefficients).numpy()
    np.testing.assert_allclose(
        arrays["energy_vector"], expected_vector, rtol=0, atol=1e-6 * expected_vector.sum(1).min()
    )
    top2 = logits[:, -1].topk(2, dim=-1).values
    assert ((top2[:, 0] - top2[:, 1]) > 1e-4 * top2[:, 0].abs()).all()  # no near-tie: argmax is round-off proof
    predicted = logits[:, -1].argmax(-1)
    np.testing.assert_array_equal(arrays["full_prediction"], predicted.numpy())
    expected_scalar = order_energies(coefficients[torch.arange(3), :, predicted]).numpy()
    # One class's logit holds a thousandth of the vector's energy, so the same float32 round-off of the logits is
    # ~10× larger relative to it (seen: 1.7e-6 with one OpenMP thread): 1e-5 of the image's total; a wrong mask or
    # projection moves whole orders, far above that.
    np.testing.assert_allclose(
        arrays["energy_scalar"], expected_scalar, rtol=0, atol=1e-5 * expected_scalar.sum(1).min()
    )

    vector = summary["projections"]["vector"]
    orders = np.arange(1, 9)
    assert sum(vector["mean_spectrum"]["mean"]) == pytest.approx(1.0)
    assert vector["kappa"]["mean"] == pytest.approx(float(np.mean(arrays["spectrum_vector"] @ orders)))
    assert vector["kappa"]["mean"] == pytest.approx(float(np.dot(vector["mean_spectrum"]["mean"], orders)))
    assert vector["mean_spectrum_peak_order"] == int(np.argmax(arrays["spectrum_vector"].mean(0))) + 1
    assert sum(vector["peak_order_distribution"]["counts"]) == 3
    assert vector["trunk_share"]["mean"] == pytest.approx(
        float(np.mean(arrays["energy_vector"][:, 0] / arrays["energy_vector"].sum(1)))
    )
    assert summary["binomial_null"]["kappa"] == pytest.approx(4 * 256 / 255)
    assert summary["published"]["resnet18"]["peak_order"] == 5

    step_2_plot.main(
        ["--summary", str(trained_dir / "summary.json"), "--compare-summary", str(random_dir / "summary.json")]
    )
    report = (trained_dir / "REPORT.md").read_text()
    for name in ("spectrum.png", "kappa_histogram.png", "spectrum.pdf"):
        assert (trained_dir / name).stat().st_size > 0
    assert format_stat(vector["kappa"]) in report
    assert format_stat(read_json(random_dir / "summary.json")["projections"]["vector"]["kappa"]) in report
    assert "random-init vector" in report and "## Verdict" in report
    assert summary["binomial_null"]["peak_orders"] == [4]  # L = 8: one peak
    assert {entry["id"] for entry in summary["verdicts"]} >= {
        "resolved.vector",
        "shape.vector",
        "peak.vector",
        "projections_differ",
        "input_dependent",
    }
    assert all(f"**{entry['decision']}**" in report for entry in summary["verdicts"])
    comparison = read_json(trained_dir / "null_comparison.json")["verdicts"]
    assert [entry["id"] for entry in comparison] == [
        "null.vector",
        "null.scalar",
    ] and f"**{comparison[0]['decision']}**" in report

    with pytest.raises(PipelineError):
        step_2_plot.main(["--summary", str(tmp_path / "missing.json")])
    with pytest.raises(PipelineError):
        step_4_lambda_plot.main(["--summary", str(trained_dir / "summary.json")])


class CountingMetrics:
    """Wraps ``spectrum_metrics``, counting calls and raising on call ``fail_on`` (if given)."""

    def __init__(self, original, fail_on: int | None = None) -> None:
        self.original, self.fail_on, self.calls = original, fail_on, 0

    def __call__(self, logits: torch.Tensor, dtype: torch.dtype, network_dtype: torch.dtype) -> dict[str, torch.Tensor]:
        self.calls += 1
        if self.calls == self.fail_on:
            raise RuntimeError("simulated interruption")
        return self.original(logits, dtype, network_dtype)


def test_lambda_sweep_end_to_end_resume_and_report(
    tiny_shards: Path, small_input: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sample_index = write_sample_list(tiny_shards, tmp_path / "samples.json")
    sweep_flags = ["--lambdas", "0.5", "0.25"]
    full_dir, resumed_dir = tmp_path / "full", tmp_path / "resumed"
    step_3_lambda_sweep.main(common_flags(tiny_shards, sample_index, full_dir) + sweep_flags)

    summary = read_json(full_dir / "summary_all.json")
    arrays = dict(np.load(full_dir / "per_image.npz"))
    assert summary["lambdas"] == [1.0, 0.5, 0.25] and summary["lambdas_requested"] == [0.5, 0.25]
    assert summary["power_law"]["fit_lambdas"] == [1.0, 0.5, 0.25]
    assert arrays["energy_vector"].shape == (3, 3, 9)
    # h(∅) does not depend on λ: order-0 energy identical at every λ (bit for bit: the tree engine
    # runs the same operations on the same batches for the all-off path at every λ), slope 0.
    np.testing.assert_array_equal(arrays["energy_vector"][:, 1, 0], arrays["energy_vector"][:, 0, 0])
    assert summary["power_law"]["projections"]["vector"][0]["slope"] == pytest.approx(0.0, abs=1e-12)
    reference = summary["per_lambda"][0]
    assert reference["lambda"] == 1.0 and reference["top1_agreement_with_lambda_1"]["mean"] == 1.0
    agreement = float(np.mean(arrays["full_prediction"][:, 2] == arrays["full_prediction"][:, 0]))
    assert summary["per_lambda"][2]["top1_agreement_with_lambda_1"]["mean"] == pytest.approx(agreement)
    kappas = [entry["projections"]["vector"]["kappa"]["mean"] for entry in summary["per_lambda"]]
    np.testing.assert_allclose(kappas, np.nanmean(arrays["kappa_vector"], axis=0))
    assert summary["kappa_monotonic"]["vector"]["monotonic"] == bool(kappas[0] > kappas[1] > kappas[2])
    mean_energy = arrays["energy_vector"].mean(axis=0)
    log_lambda = np.log([1.0, 0.5, 0.25])
    expected_slope = np.polyfit(log_lambda, 0.5 * np.log(mean_energy[:, 3]), 1)[0]
    assert summary["power_law"]["projections"]["vector"][3]["slope"] == pytest.approx(expected_slope)
    np.testing.assert_allclose(summary["per_lambda"][1]["projections"]["vector"]["mean_energy"]["mean"], mean_energy[1])

    # Interrupt after the first batch of the second λ, then resume: identical results, only the missing batches run.
    failing = CountingMetrics(evaluation.spectrum_metrics, fail_on=4)
    monkeypatch.setattr(evaluation, "spectrum_metrics", failing)
    with pytest.raises(RuntimeError, match="simulated interruption"):
        step_3_lambda_sweep.main(common_flags(tiny_shards, sample_index, resumed_dir) + sweep_flags)
    assert (
        len(list((resumed_dir / "partial" / "experiment_2.step_3_lambda_sweep" / "lambda_1.0").glob("batch_*.pt"))) == 2
    )
    assert (
        len(list((resumed_dir / "partial" / "experiment_2.step_3_lambda_sweep" / "lambda_0.5").glob("batch_*.pt"))) == 1
    )
    counting = CountingMetrics(failing.original)
    monkeypatch.setattr(evaluation, "spectrum_metrics", counting)
    step_3_lambda_sweep.main(common_flags(tiny_shards, sample_index, resumed_dir) + sweep_flags)
    assert counting.calls == 3
    assert (resumed_dir / "summary_all.json").read_text() == (full_dir / "summary_all.json").read_text()
    resumed_arrays = np.load(resumed_dir / "per_image.npz")
    for name, value in arrays.items():
        np.testing.assert_array_equal(resumed_arrays[name], value, err_msg=name)
    timing = read_json(
        resumed_dir / "timing.json"
    )  # every pass of every process: the interrupted one's finished batches count
    assert (
        timing["last_call"]["images_evaluated"] == 4
        and timing["images_evaluated"] == read_json(full_dir / "timing.json")["images_evaluated"]
    )

    step_4_lambda_plot.main(["--summary", str(full_dir / "summary_all.json")])
    report = (full_dir / "REPORT.md").read_text()
    for name in ("kappa_vs_lambda", "spectra_per_lambda", "agreement_vs_lambda", "lambda_law"):
        assert (full_dir / f"{name}.png").stat().st_size > 0 and f"({name}.png)" in report
    assert format_stat(reference["projections"]["vector"]["kappa"]) in report
    assert all(f"{entry['claim']}: **{entry['decision']}**" in report for entry in summary["verdicts"])
    assert "power 0.00 < 0.80" in report  # 2 images: the sign test cannot speak, so no verdict reads its silence
    assert "— (λ not evaluated)" in report  # the seed's λ = 0.1 point is not in this sweep
    assert summary["config"]["post_activation"] == ["ReLU"] and "a ReLU follows every sum" in report
    assert (
        f"The model computes `{summary['config']['gated_recursion']}` for every gateable block l (λ ∈ {{1, 0.5, 0.25}})"
        in report
    )

    with pytest.raises(PipelineError):
        step_3_lambda_sweep.main(
            common_flags(tiny_shards, sample_index, tmp_path / "bad") + ["--lambdas", "0.5", "--fit-lambdas", "0.3"]
        )


def test_null_over_seeds_calibrates_on_other_images_and_is_ranked_between_networks(
    tiny_shards: Path, tmp_path: Path
) -> None:
    from experiment_2 import step_13_null_seeds, step_14_null_compare

    sample_index = write_sample_list(tiny_shards, tmp_path / "samples.json", count=5)
    trained_dir, seeds_dir = tmp_path / "results", tmp_path / "results_null_seeds"
    step_1_evaluate.main(
        common_flags(tiny_shards, sample_index, trained_dir, limit=3, weights=trained_weights(tmp_path))
    )
    flags = common_flags(tiny_shards, sample_index, seeds_dir, limit=2)  # its --seed is replaced by --seeds
    with pytest.raises(PipelineError, match="--calibrate-batchnorm N"):
        step_13_null_seeds.main([*flags, "--seeds", "1", "2"])
    with pytest.raises(PipelineError, match="needs 4 images after the 2 evaluated ones"):
        step_13_null_seeds.main([*flags, "--seeds", "1", "1", "--calibrate-batchnorm", "4"])
    step_13_null_seeds.main([*flags, "--seeds", "1", "2", "--calibrate-batchnorm", "3"])
    for seed in (1, 2):
        config = read_json(seeds_dir / f"seed_{seed:03d}" / "summary.json")["config"]
        assert config["seed"] == seed and config["batchnorm_calibration"]["positions"] == [2, 5]  # after the evaluated
    step_14_null_compare.main(["--summary", str(trained_dir / "summary.json"), "--seeds-dir", str(seeds_dir)])
    between = read_json(seeds_dir / "summary.json")
    assert between["num_seeds"] == 2 and between["config"]["image_positions"] == [0, 1]
    tested = [entry for entry in between["verdicts"] if entry["id"].startswith("null_networks.")]
    assert [entry["decision"] for entry in tested] == ["cannot tell", "cannot tell"]  # 2 networks: no power
    assert all(entry["notes"][0].startswith("no power") for entry in tested)
    assert "**cannot tell**" in (seeds_dir / "REPORT.md").read_text()
    step_2_plot.main(["--summary", str(trained_dir / "summary.json"), "--null-seeds", str(seeds_dir / "summary.json")])
    report = (trained_dir / "REPORT.md").read_text()
    assert "random-init networks: mean [min, max]" in report and "no power" in report
    with pytest.raises(PipelineError, match="ranks another run"):
        step_2_plot.main(
            ["--summary", str(seeds_dir / "seed_001" / "summary.json"), "--null-seeds", str(seeds_dir / "summary.json")]
        )
    compare = ["--summary", str(trained_dir / "summary.json"), "--seeds-dir"]
    with pytest.raises(PipelineError, match="seed_001/summary.json: a random-init run .*not the trained network"):
        step_14_null_compare.main(
            ["--summary", str(seeds_dir / "seed_001" / "summary.json"), "--seeds-dir", str(seeds_dir)]
        )
    for seed in ("seed_001", "seed_002"):
        shutil.copytree(seeds_dir / seed, trained_dir / seed, ignore=shutil.ignore_patterns("partial"))
    before = (trained_dir / "summary.json").read_bytes()  # the seeds' folders inside the trained run's: it stays
    with pytest.raises(
        PipelineError, match=f"^{trained_dir}: holds the results of another step \\(summary.json, experiment 2"
    ):
        step_14_null_compare.main([*compare, str(trained_dir)])
    assert (trained_dir / "summary.json").read_bytes() == before
    shutil.copy(seeds_dir / "seed_002" / "per_image.npz", seeds_dir / "seed_001" / "per_image.npz")  # another seed's
    with pytest.raises(
        PipelineError, match="seed_001/per_image.npz: from run .* but .*seed_001/summary.json is from run"
    ):
        step_14_null_compare.main([*compare, str(seeds_dir)])
