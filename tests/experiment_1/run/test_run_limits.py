"""Refusal before a run that cannot succeed: an impossible λ or β, and all-mask logits that no
memory holds (L ≥ 25 blocks with 1000 classes) — each refused with one line before the first batch,
the latter without offering --mask-chunk, which bounds activations, not the output; and the profiler's all-mask pass
past the exhaustive limit of L, refused with the same line."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import experiment_1.step_3_evaluate as step_3
import experiment_2.lambda_sweep.sweep as sweep_body
import experiment_2.step_3_lambda_sweep as sweep
from conftest import evaluation_flags
from experiment_1.errors import PipelineError
from experiment_1.run.preflight import check_beta, check_depth, check_lambdas, check_logits_fit
from experiment_1.run.run_config import MAX_BLOCKS
from experiment_1.tools import bench, profile_tree

DEEP_FACTORY = '''
from torch import nn
from experiment_1.network.gating import Residual, ResidualNetwork
from experiment_1.network.gating import Preprocess


def build_model(weights):
    stem = nn.Conv2d(3, 2, 3, padding=1)
    branches = [nn.Conv2d(2, 2, 1) for _ in range(25)]
    head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2, 1000))

    class Deep(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem, self.branches, self.head = stem, nn.ModuleList(branches), head

        def forward(self, x):
            x = self.stem(x)
            for branch in self.branches:
                x = x + branch(x)
            return self.head(x)

    network = Deep()
    return ResidualNetwork(network, stem, [Residual(branch) for branch in branches], head, Preprocess(resize=8, crop=8))
'''


def test_an_underflowing_lambda_is_refused_before_the_first_batch(
    tiny_shards: Path,
    tiny_sample_index: Path,
    tmp_path: Path,
    small_input: int,
    monkeypatch: pytest.MonkeyPatch,
    expect_one_line,
) -> None:
    monkeypatch.setattr(sweep_body, "evaluate_spectrum", lambda *args, **kwargs: pytest.fail("evaluated a batch"))
    line = expect_one_line(
        sweep.main, evaluation_flags(tiny_shards, tiny_sample_index, tmp_path / "out", "--lambdas", "0.5", "1e-300")
    )
    assert "--lambdas 1e-300: the order-8 energy λ^16 underflows float64" in line and "every λ must be at least" in line
    check_lambdas([1.0, 0.1, 1e-3], 8, torch.float64)  # the sweeps this project runs pass


@pytest.mark.parametrize("beta", [1e-300, 1e300])
def test_an_impossible_beta_is_refused_before_the_swap(
    beta: float, tiny_shards: Path, tiny_sample_index: Path, tmp_path: Path, small_input: int, expect_one_line
) -> None:
    line = expect_one_line(
        step_3.main,
        evaluation_flags(tiny_shards, tiny_sample_index, tmp_path / "out", "--smooth-activations", str(beta)),
    )
    assert f"--smooth-activations {beta:g}: Softplus_β overflows or underflows float32" in line
    assert not (tmp_path / "out").exists()


def test_usable_betas_pass() -> None:
    for beta, dtype in ((10.0, torch.float32), (1.0, torch.float16), (100.0, torch.float64)):
        check_beta(beta, dtype)


def test_25_blocks_with_1000_classes_are_refused_without_suggesting_mask_chunk(
    tiny_shards: Path, tiny_sample_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, expect_one_line
) -> None:
    (tmp_path / "deep_factory.py").write_text(DEEP_FACTORY)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(
        "experiment_1.run.preflight.device_memory", lambda device: 64 * 2**30
    )  # the same answer on every machine
    line = expect_one_line(
        step_3.main,
        evaluation_flags(tiny_shards, tiny_sample_index, tmp_path / "out", "--arch", "deep_factory:build_model"),
    )
    assert (
        line.startswith("error: L = 25 gated blocks means 2^25 masks per image") and "pass --confirm-long-run" in line
    )  # the cheap refusal first
    line = expect_one_line(
        step_3.main,
        evaluation_flags(
            tiny_shards, tiny_sample_index, tmp_path / "out", "--arch", "deep_factory:build_model", "--confirm-long-run"
        ),
    )
    assert (
        "L = 25 blocks: one image's all-mask logits (2^25 × 1000 float32) take 125 GiB, more than this cpu device's 64 GiB"
        in line
        and "gate fewer blocks" in line
    )
    assert "reduce --mask-chunk" not in line and "try" not in line


def test_a_batch_too_large_for_memory_names_a_batch_size_that_fits() -> None:
    with pytest.raises(
        PipelineError,
        match="--batch-size 8: one batch's all-mask logits take 31.2 GiB, more than this cpu device's 16 GiB; use --batch-size 2 or less",
    ):
        check_logits_fit(8, 20, 1000, torch.float32, torch.device("cpu"), memory=16 * 2**30)
    check_logits_fit(8, 16, 1000, torch.float32, torch.device("cpu"), memory=16 * 2**30)  # Lite2's L = 16 fits


@pytest.mark.parametrize(
    "flags, expected",
    [
        (["--experiments", "1", "--ks", "3"], "--ks is a flag of Experiment 3, which is not among --experiments 1"),
        (
            ["--experiments", "1", "2", "--store-K", "99999"],
            "--store-K is a flag of Experiment 4, which is not among --experiments 1 2",
        ),
        (["--experiments", "1", "--tau", "7"], "--tau is a flag of Experiment 5, which is not among --experiments 1"),
    ],
)
def test_single_pass_flags_of_experiments_not_chosen_are_refused(
    flags: list[str], expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, expect_one_line
) -> None:
    from paper import single_pass

    monkeypatch.setattr("experiment_1.run.loop.build_setup", lambda *args: pytest.fail("ran"))
    line = expect_one_line(single_pass.main, [*flags, "--results-name", "r", "--results-root", str(tmp_path)])
    assert expected in line


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "../../x"])
def test_single_pass_results_names_stay_inside_the_experiment_folders(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from paper import single_pass

    with pytest.raises(SystemExit):
        single_pass.main(["--experiments", "1", "--results-name", name, "--results-root", str(tmp_path)])
    assert "is not a plain folder name" in capsys.readouterr().err and not any(tmp_path.iterdir())


def test_the_profiler_refuses_a_network_past_the_exhaustive_limit_before_the_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, expect_one_line
) -> None:
    (tmp_path / "deep_factory.py").write_text(DEEP_FACTORY)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(profile_tree, "profile_tree", lambda *args, **kwargs: pytest.fail("profiled a pass"))
    line = expect_one_line(bench.main, ["profile", "--arch", "deep_factory:build_model", "--resolution", "8"])
    assert line.startswith(
        f"error: L = 25 gated blocks means 2^25 masks per image, beyond the limit of L = {MAX_BLOCKS}"
    )
    assert "pass --confirm-long-run" in line
    check_depth(MAX_BLOCKS, confirmed=False)  # the limit itself passes
    check_depth(MAX_BLOCKS + 5, confirmed=True)  # and confirming lifts it
