"""Experiment 3C on tiny residual MLPs: the λ^k law with analytic activations, the kink law with ReLU,
the smooth swap, and the round-off floor in float64 on planted round-off."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from experiment_1.data.shards import draw_sample, list_items, sample_list_json
from experiment_1.errors import PipelineError
from experiment_1.files import atomic_write_json, read_json
from experiment_1.network.engines import evaluate_all_masks
from experiment_1.network.gating import (
    GateableBlock,
    Preprocess,
    ResidualStack,
    SmoothReLU6,
    Softplus,
    smooth_activations,
    softplus,
)
from experiment_1.network.registry import build_gated_stack
from experiment_2 import step_3_lambda_sweep, step_5_limit_report
from experiment_2.limit.laws import exact_zero_chain, kink_exponent, limit_summary, order_verdict, resolved_per_lambda
from experiment_2.spectrum.evaluation import spectrum_metrics
from paper import make_tables
from paper.render_markdown import render_markdown

LAMBDAS = [0.1, 0.03, 0.01, 0.003, 0.001]
WIDTH, NUM_BLOCKS, NUM_INPUTS = 32, 4, 1500


def residual_mlp(post_activation: bool, seed: int = 0) -> ResidualStack:
    """A float64 residual MLP with ReLU: stem Linear+ReLU, four gated blocks (ReLU inside the
    branch; a post-sum ReLU when ``post_activation``, the ResNet pattern, else none, the MBConv
    pattern), head Linear+ReLU+Linear (a fixed path with kinks, as Lite0's head)."""
    torch.manual_seed(seed)
    stem = nn.Sequential(nn.Linear(8, WIDTH), nn.ReLU())
    blocks = [
        GateableBlock(
            nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.ReLU(), nn.Linear(WIDTH, WIDTH)),
            post=nn.ReLU() if post_activation else None,
            name=f"block{index}",
        )
        for index in range(NUM_BLOCKS)
    ]
    head = nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.ReLU(), nn.Linear(WIDTH, 5))
    return ResidualStack(stem, blocks, head, Preprocess(), "residual_mlp", "random").double().eval()


def limit_of(model: ResidualStack, network_dtype: torch.dtype = torch.float64) -> dict:
    """The 3C block (vector projection) of ``model`` over ``LAMBDAS`` on fixed Gaussian inputs."""
    inputs = torch.randn(NUM_INPUTS, 8, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    energies, roundoff = [], []
    for value in LAMBDAS:
        logits = evaluate_all_masks(model, inputs, residual_scale=value, mask_chunk=2**NUM_BLOCKS)
        metrics = spectrum_metrics(logits.to(network_dtype).double(), torch.float64, network_dtype)
        energies.append(metrics["energy_vector"].numpy())
        roundoff.append(metrics["roundoff_variance_vector"].numpy())
    post = sorted({type(block.post).__name__ for block in model.blocks})
    return limit_summary(
        np.array(LAMBDAS),
        np.stack(energies, axis=1),
        np.stack(roundoff, axis=1),
        post,
        exact_zero_chain(model),
        seed=0,
        tolerance=0.25,
    )


def limit_slopes(summary: dict) -> np.ndarray:
    return np.array([row["slope"] for row in summary["limit_slopes"]])


def test_analytic_activations_follow_the_lambda_k_law() -> None:
    model = residual_mlp(post_activation=True)
    smooth_activations(model, beta=2.0)
    summary = limit_of(model)
    assert all(row["resolved"] for row in summary["limit_slopes"])  # float64: every order above the floor at λ ≥ 0.001
    np.testing.assert_allclose(limit_slopes(summary)[1:], np.arange(1, NUM_BLOCKS + 1), atol=0.05)
    assert summary["laws"]["lambda_k"]["verdict"] == "holds" and summary["laws"]["kink"]["verdict"] == "fails"


@pytest.mark.parametrize("post_activation, exponent", [(True, 1.0), (False, 1.5)])
def test_relu_networks_follow_the_kink_law(post_activation: bool, exponent: float) -> None:
    # with a post-sum ReLU every block chains on the stem ReLU's exact zeros (R = 4 = L): slope 1 at every order
    summary = limit_of(residual_mlp(post_activation))
    assert summary["kink_exponent"] == exponent and summary["exact_zero_chain"] == (
        NUM_BLOCKS if post_activation else 0
    )
    slopes = limit_slopes(summary)
    assert abs(slopes[1] - 1.0) <= 0.1
    np.testing.assert_allclose(slopes[2:], exponent, atol=0.25)
    assert summary["laws"]["kink"]["per_order"][1:] != ["fails"] * (NUM_BLOCKS - 1)
    assert (
        summary["laws"]["kink"]["verdict"] in ("holds", "cannot tell", "cannot tell (not converged)")
        and summary["laws"]["lambda_k"]["verdict"] == "fails"
    )
    assert (
        "kink_chain" not in summary["laws"]
    )  # R = L or no post-sum ReLU: the refined law is the first one, not tested twice


def test_exact_zero_chain_of_resnet18() -> None:
    # layer1.0, layer1.1 share the stem's zeros; each later stage starts with a downsampling block: R = 2
    model = build_gated_stack("resnet18", "random", seed=0)
    assert exact_zero_chain(model) == 2
    assert exact_zero_chain(residual_mlp(post_activation=False)) == 0


def test_swap_keeps_weights_and_off_leaves_the_network_unchanged(small_input: int) -> None:
    original = build_gated_stack("resnet18", "random", seed=0)
    swapped = build_gated_stack("resnet18", "random", seed=0)
    images = torch.randn(2, 3, small_input, small_input, generator=torch.Generator().manual_seed(0))
    before = evaluate_all_masks(swapped, images, engine="naive", mask_chunk=256)
    # off (never called): the λ = 1 full-mask logits are the original network's, bit for bit
    assert torch.equal(before, evaluate_all_masks(original, images, engine="naive", mask_chunk=256))
    assert (
        set(smooth_activations(swapped, beta=10.0)) == {"ReLU", "ReLU6"}
        and swapped.smooth_swap["ReLU"] > 0 == swapped.smooth_swap["ReLU6"]
    )
    reference, state = original.state_dict(), swapped.state_dict()
    assert reference.keys() == state.keys() and all(torch.equal(reference[name], state[name]) for name in reference)
    assert not any(isinstance(module, (nn.ReLU, nn.ReLU6)) for module in swapped.modules())
    assert {type(block.post) for block in swapped.blocks} == {Softplus}
    assert not torch.equal(evaluate_all_masks(swapped, images, engine="naive", mask_chunk=256), before)


def test_smooth_functions_match_their_definitions_and_bounds() -> None:
    x = torch.linspace(-50, 50, 20001, dtype=torch.float64)
    beta = 3.0
    np.testing.assert_allclose(
        softplus(x, beta), torch.log1p(torch.exp(beta * x.clamp(max=100))) / beta, rtol=1e-12, atol=1e-300
    )
    assert (softplus(x, beta) - torch.relu(x)).max().item() == pytest.approx(np.log(2) / beta)
    smooth6 = SmoothReLU6(beta)(x)
    assert (smooth6 - nn.ReLU6()(x)).abs().max().item() <= np.log(2) / beta + 1e-12
    # no threshold switch: the derivative is continuous where torch's Softplus(threshold=20) jumps
    near = torch.tensor([20 / beta - 1e-9, 20 / beta + 1e-9], dtype=torch.float64)
    assert softplus(near, beta).diff().item() == pytest.approx(2e-9, rel=1e-6)


def test_swap_refuses_other_piecewise_linear_modules_after_the_stem() -> None:
    model = residual_mlp(post_activation=False)
    model.head[1] = nn.LeakyReLU()
    with pytest.raises(PipelineError, match="LeakyReLU"):
        smooth_activations(model, beta=10.0)
    with pytest.raises(PipelineError, match="β must be a positive"):
        smooth_activations(residual_mlp(post_activation=False), beta=0.0)


def planted_logits(
    lambdas: list[float], dtype: torch.dtype, num_blocks: int = 8, count: int = 20, classes: int = 5
) -> torch.Tensor:
    """Logits ``(count, n_λ, 2^L, classes)`` of an exact λ^k law — ``h_λ(T) = 1.5 + Σ_{S⊆T, S≠∅} c_S·λ^{|S|}``,
    ``c_S ~ N(0, 0.1²)`` — rounded to ``dtype`` after planted forward-pass round-off (3 ulps of ``dtype``, Gaussian)."""
    generator = torch.Generator().manual_seed(0)
    masks = torch.arange(2**num_blocks)
    subset = (masks[:, None] & masks[None, :]) == masks[None, :]  # [T, S]: S ⊆ T
    sizes = torch.tensor([bin(mask).count("1") for mask in range(2**num_blocks)], dtype=torch.float64)
    coefficients = 0.1 * torch.randn(count, 2**num_blocks, classes, generator=generator, dtype=torch.float64)
    coefficients[:, 0] = 1.5
    ulp = torch.finfo(dtype).eps
    logits = []
    for value in lambdas:
        exact = torch.einsum("ts,nsc->ntc", subset.double(), coefficients * value ** sizes[None, :, None])
        logits.append(
            (exact + 3 * ulp * torch.randn(exact.shape, generator=generator, dtype=torch.float64)).to(dtype).double()
        )
    return torch.stack(logits, dim=1)


def test_float64_floor_marks_planted_roundoff_unresolved() -> None:
    orders = np.arange(9)
    unresolved_orders, resolved_cells = {}, {}
    for dtype in (torch.float64, torch.float32):
        logits = planted_logits(LAMBDAS, dtype)
        metrics = [spectrum_metrics(logits[:, column], torch.float64, dtype) for column in range(len(LAMBDAS))]
        energies = np.stack([metric["energy_vector"].numpy() for metric in metrics], axis=1)
        variance = np.stack([metric["roundoff_variance_vector"].numpy() for metric in metrics], axis=1)
        resolved = resolved_per_lambda(energies, variance)
        signal = np.array(LAMBDAS)[:, None] ** (2 * orders)  # E_k ∝ C(L,k)·λ^{2k}; noise ∝ C(L,k)·2^k·ulp²
        eps2 = torch.finfo(dtype).eps ** 2
        assert resolved[signal >= 1e5 * 2.0**orders * eps2].all()  # far above the planted round-off
        assert not resolved[signal <= 2.0**orders * eps2].any()  # below it
        summary = limit_summary(np.array(LAMBDAS), energies, variance, ["Identity"], 0, seed=0, tolerance=0.25)
        for row in summary["limit_slopes"]:
            if row["resolved"]:  # fitted on resolved λs only: the planted law, not the round-off
                assert row["slope"] == pytest.approx(row["order"], abs=0.05)
                assert all(resolved[LAMBDAS.index(value), row["order"]] for value in row["fit_lambdas"])
        unresolved_orders[dtype] = [row["order"] for row in summary["limit_slopes"] if not row["resolved"]]
        resolved_cells[dtype] = resolved
    # float64 resolves (order, λ) cells that float32 cannot — yet not order 8 at λ = 0.001 (λ^16 = 1e-48) —
    # and every order with two resolved λs; float32 leaves orders 3 … 8 without a limit slope
    assert (resolved_cells[torch.float32] <= resolved_cells[torch.float64]).all() and not resolved_cells[torch.float64][
        -1, 8
    ]
    assert unresolved_orders[torch.float64] == [] and unresolved_orders[torch.float32] == [3, 4, 5, 6, 7, 8]
    assert kink_exponent(["ReLU"]) == 1.0 and kink_exponent(["Identity"]) == 1.5


def test_order_verdict_rule() -> None:
    assert order_verdict(1.4, 1.6, 1.5, 0.25) == "holds"
    assert order_verdict(1.9, 2.1, 1.5, 0.25) == "fails"
    assert order_verdict(1.6, 1.9, 1.5, 0.25) == "cannot tell"


def sweep_flags(data_dir: Path, sample_index: Path, output_dir: Path) -> list[str]:
    return [
        "--sample-index",
        str(sample_index),
        "--data-dir",
        str(data_dir),
        "--weights",
        "random",
        "--batch-size",
        "2",
        "--num-workers",
        "0",
        "--limit",
        "2",
        "--device",
        "cpu",
        "--dtype",
        "float64",
        "--lambdas",
        "0.1",
        "0.01",
        "--output-dir",
        str(output_dir),
    ]


def test_smooth_sweep_and_limit_report_end_to_end(tiny_shards: Path, small_input: int, tmp_path: Path) -> None:
    samples = draw_sample(list_items(tiny_shards, "validation-*.parquet"), "uniform", 2, 0, seed=0)
    sample_index = tmp_path / "samples.json"
    atomic_write_json(sample_index, sample_list_json(samples, "validation-*.parquet", "uniform", 0, None))
    results = tmp_path / "experiment_2"
    native_dir, smooth_dir = results / "results_3c_resnet18_native", results / "results_3c_resnet18_smooth"
    step_3_lambda_sweep.main(sweep_flags(tiny_shards, sample_index, native_dir))
    step_3_lambda_sweep.main(sweep_flags(tiny_shards, sample_index, smooth_dir) + ["--smooth-activations"])
    native, smooth = read_json(native_dir / "summary_all.json"), read_json(smooth_dir / "summary_all.json")
    assert (
        "smooth_activations" not in native["config"] and "Softplus" not in native["config"]["gated_recursion"]
    )  # off: the resume key is unchanged
    assert smooth["config"]["smooth_activations"] == {"activation": "softplus", "beta": 10.0}
    assert (
        smooth["config"]["smooth_swap"] == {"replaced": {"ReLU": 17, "ReLU6": 0}}
        and "smooth_swap" not in native["config"]
    )  # the stem's and two per BasicBlock
    assert (
        smooth["config"]["gated_recursion"].startswith("x_{l+1} = Softplus(")
        and "β = 10" in smooth["config"]["gated_recursion"]
    )
    with pytest.raises(PipelineError, match="different run.*smooth_activations"):  # the two never share a partial store
        step_3_lambda_sweep.main(sweep_flags(tiny_shards, sample_index, native_dir) + ["--smooth-activations"])
    limit = native["limit"]["projections"]["vector"]
    assert [pair["lambdas"] for pair in limit["successive_slopes"]] == [[1.0, 0.1], [0.1, 0.01]]
    assert limit["kink_exponent"] == 1.0 and len(limit["renormalised_spectrum"]) == 3

    report_dir = results / "results_3c_resnet18"
    step_5_limit_report.main(
        [
            "--native",
            str(native_dir / "summary_all.json"),
            "--smooth",
            str(smooth_dir / "summary_all.json"),
            "--output-dir",
            str(report_dir),
        ]
    )
    summary = read_json(report_dir / "summary_3c.json")
    assert [entry["id"] for entry in summary["verdicts"]] == [
        f"exp3c.{variant}.{law}" for variant in ("native", "smooth") for law in ("lambda_k", "kink", "kink_chain")
    ]
    assert native["config"]["exact_zero_chain"] == 2
    for entry, (variant, law) in zip(
        summary["verdicts"],
        [(variant, law) for variant in ("native", "smooth") for law in ("lambda_k", "kink", "kink_chain")],
    ):
        assert (
            entry["decision"] == summary["variants"][variant]["laws"][law]["verdict"]
            and entry["parameters"]["predicted"] == summary["variants"][variant]["laws"][law]["predicted"]
        )
    assert summary["variants"]["smooth"]["limit_slopes"] == smooth["limit"]["projections"]["vector"]["limit_slopes"]
    report = (report_dir / "REPORT.md").read_text()
    for name in ("slope_vs_k", "spectrum_above_order_1"):
        assert (report_dir / f"{name}.png").stat().st_size > 0 and f"({name}.png)" in report
    assert smooth["config"]["gated_recursion"] in report and "top-1 agreement with the native network" in report
    make_tables.allow_all_runs(tmp_path)
    table = render_markdown(make_tables.section_blocks("experiment_3c", tmp_path))
    assert table.count("results_3c_resnet18`") == 2 and ", native |" in table and ", smooth |" in table
    with pytest.raises(PipelineError, match="--native .*ran with --smooth-activations"):
        step_5_limit_report.main(
            ["--native", str(smooth_dir / "summary_all.json"), "--smooth", str(smooth_dir / "summary_all.json")]
        )
