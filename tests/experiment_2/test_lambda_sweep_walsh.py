"""The 3A migration claim in the Walsh basis (experiment_2.lambda_sweep): the sweep's Walsh block against κ_W written out
by loops over the masks of small all-mask tables, the same migration rule at its boundaries on the Walsh numbers, the
two bases read together (every reading of experiment_1.report.basis_reading the sweep can give), and the checker
refusing a flipped Walsh verdict and a basis claim its two decisions contradict."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy.stats import binomtest

from experiment_1.errors import PipelineError
from experiment_1.files import read_json
from experiment_1.report import CANNOT_TELL, FAILS, HOLDS, by_id, check_verdicts
from experiment_2.lambda_sweep.summary import stack_over_lambdas, walsh_block
from experiment_2.lambda_sweep.verdicts import MIGRATION, SWEEP_BASIS, basis_verdict, migration_verdict, verdicts
from experiment_2.record import VERDICTS
from experiment_2.spectrum.evaluation import spectrum_metrics

EPS = 1e-9
LAMBDAS = [1.0, 0.5, 0.1]


def brute_kappa_w(logits: np.ndarray, scalar: bool) -> float:
    """κ_W of one image's all-mask table ``(2^L, C)``: ĥ(U) = 2^{−L} Σ_T (−1)^{|U ∩ T|} h(T) by loops, W_k the energy at
    degree k (the class argmax h(full) for the scalar projection), κ_W = Σ_k k·W_k / Σ_{k≥1} W_k."""
    size = len(logits)
    predicted = int(np.argmax(logits[size - 1]))
    energies = np.zeros(size.bit_length())
    for subset in range(size):
        coefficient = sum((-1) ** bin(subset & mask).count("1") * logits[mask] for mask in range(size)) / size
        energies[bin(subset).count("1")] += coefficient[predicted] ** 2 if scalar else np.sum(coefficient**2)
    orders = np.arange(len(energies))
    return float(orders @ energies / energies[1:].sum())


def tables(seed: int) -> list[np.ndarray]:
    """Per λ, 7 images' all-mask logits at L = 3 with 4 classes; the higher orders shrink with λ."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(7, 8, 4))
    orders = np.array([bin(mask).count("1") for mask in range(8)])
    return [base * (value**orders)[None, :, None] + 0.3 * rng.normal(size=(7, 8, 4)) for value in LAMBDAS]


def test_the_walsh_block_is_the_paired_change_of_kappa_w_written_out_by_loops() -> None:
    logits = tables(seed=5)
    per_lambda = [
        {
            name: value.numpy()
            for name, value in spectrum_metrics(torch.from_numpy(table).to(torch.float32), torch.float64).items()
        }
        | {"index": np.arange(7), "label": np.zeros(7, dtype=np.int64), "valid": np.ones(7, dtype=bool)}
        for table in logits
    ]
    stacked = stack_over_lambdas(per_lambda)
    block = walsh_block(stacked, np.ones(7, dtype=bool), LAMBDAS, 3, seed=0)
    for projection in ("vector", "scalar"):
        kappa = np.array(
            [[brute_kappa_w(table[image], projection == "scalar") for table in logits] for image in range(7)]
        )
        # float32 logits through the butterfly against the loop in float64 on the same float32 values
        per_lambda_means = [entry["projections"][projection]["kappa"]["mean"] for entry in block["per_lambda"]]
        np.testing.assert_allclose(per_lambda_means, kappa.mean(axis=0), rtol=1e-5)
        change = kappa[:, 2] - kappa[:, 0]
        end = block["kappa_changes"][projection]["end_to_end"]
        assert (end["from"], end["to"]) == (1.0, 0.1)
        assert end["change"]["mean"] == pytest.approx(change.mean(), rel=1e-5)
        assert (end["falls"], end["rises"]) == (int((change < 0).sum()), int((change > 0).sum()))
        assert end["sign_test_p"] == pytest.approx(binomtest(end["falls"], 7).pvalue)


def walsh_summary(mobius: tuple[float, float, float], walsh: tuple[float, float, float]) -> dict:
    """A summary holding only what the migration verdicts read: the end-to-end paired change of κ and of κ_W (CI low,
    high, sign-test p) of the vector projection, on 10 images with power 0.9."""

    def end(low: float, high: float, p: float) -> dict:
        return {
            "from": 1.0,
            "to": 0.1,
            "change": {"mean": (low + high) / 2, "ci_low": low, "ci_high": high},
            "share_falling": {"mean": 0.7, "ci_low": 0.35, "ci_high": 0.93, "n": 10},
            "falls": 7,
            "rises": 3,
            "sign_test_p": p,
            "sign_test_power": 0.9,
        }

    return {
        "kappa_changes": {"vector": {"end_to_end": end(*mobius), "steps": []}},
        "walsh": {"kappa_changes": {"vector": {"end_to_end": end(*walsh), "steps": []}}},
    }


@pytest.mark.parametrize(
    ("low", "high", "p", "decision"),
    [
        (-2.0, -EPS, 0.05, HOLDS),  # p at α: significant
        (-2.0, -EPS, 0.05 + EPS, CANNOT_TELL),
        (-2.0, 0.0, 0.01, CANNOT_TELL),  # a CI touching 0 does not lie below it
        (EPS, 2.0, 0.05, FAILS),  # κ_W rises: the migration reverses
        (0.0, 2.0, 0.01, CANNOT_TELL),
    ],
)
def test_the_walsh_migration_at_the_rules_boundaries(low: float, high: float, p: float, decision: str) -> None:
    summary = walsh_summary((-1.0, 1.0, 0.5), (low, high, p))
    entry = migration_verdict(summary, "vector", "walsh")
    assert entry["decision"] == decision
    assert migration_verdict(summary, "vector")["decision"] == CANNOT_TELL  # the Möbius one reads its own numbers


def test_a_walsh_migration_entry_names_its_basis_and_its_kappa() -> None:
    entry = migration_verdict(walsh_summary((-1.0, 1.0, 0.5), (-0.5, -0.1, 0.02)), "vector", "walsh")
    assert entry["id"] == "walsh.migration.vector"
    assert entry["claim"] == (
        "3A, vector projection, Walsh basis: the spectrum migrates to lower orders (κ_W falls from λ = 1 to λ = 0.1)"
    )
    assert entry["rule"] == MIGRATION.words(entry) and entry["rule"].startswith(
        "holds when the 95 % CI of the paired per-image change κ_W(λ_min) − κ_W(1) lies below 0"
    )
    assert entry["effect"]["name"] == "κ_W(λ = 0.1) − κ_W(λ = 1), paired"
    assert entry["notes"] == ["κ_W falls on 7 of 10 images (70 % [35, 93], exact)"]


def basis_of(mobius: tuple[float, float, float], walsh: tuple[float, float, float]) -> dict:
    summary = walsh_summary(mobius, walsh)
    decided = [migration_verdict(summary, "vector"), migration_verdict(summary, "vector", "walsh")]
    return basis_verdict(summary, decided, "vector")


FALLS, RISES, SILENT = (-2.0, -1.0, 0.01), (1.0, 2.0, 0.01), (-1.0, 1.0, 0.5)


@pytest.mark.parametrize(
    ("mobius", "walsh", "decision", "reading"),
    [
        (FALLS, FALLS, HOLDS, "holds in both bases"),
        (FALLS, RISES, FAILS, "Möbius only: reverses in the Walsh basis"),
        (RISES, FALLS, FAILS, "Walsh only: reverses in the Möbius basis"),
        (RISES, RISES, HOLDS, "reverses in both bases"),
        (FALLS, SILENT, CANNOT_TELL, "Möbius only: the Walsh basis reads cannot tell"),
        (SILENT, SILENT, CANNOT_TELL, "neither basis decides it (Möbius: cannot tell; Walsh: cannot tell)"),
    ],
)
def test_the_two_bases_read_together(mobius: tuple, walsh: tuple, decision: str, reading: str) -> None:
    entry = basis_of(mobius, walsh)
    assert entry["id"] == "basis.migration.vector" and entry["decision"] == decision
    assert entry["claim"] == (
        "3A, vector projection: the migration to lower orders (κ and κ_W fall from λ = 1 to λ = 0.1) reads the same "
        f"in both bases — {reading}"
    )
    assert entry["rule"] == SWEEP_BASIS.text


def a_sweep_summary() -> dict:
    """A whole sweep summary of the committed Lite0 sweep's shape, its Walsh numbers the reverse of its Möbius ones."""
    summary = walsh_summary(FALLS, RISES)
    summary["kappa_changes"]["scalar"] = summary["kappa_changes"]["vector"]
    summary["walsh"]["kappa_changes"]["scalar"] = summary["walsh"]["kappa_changes"]["vector"]
    block = [migration_verdict(summary, projection) for projection in ("vector", "scalar")]
    block += [migration_verdict(summary, projection, "walsh") for projection in ("vector", "scalar")]
    summary["verdicts"] = block + [basis_verdict(summary, block, projection) for projection in ("vector", "scalar")]
    summary["experiment"] = "3A/3B"
    return summary


@pytest.mark.parametrize(
    ("edit", "refusal"),
    [
        ("flip", "verdict walsh.migration.vector says 'holds' but its rule exp3ab.migration gives 'fails'"),
        ("claim", "verdict basis.migration.vector: its claim does not read 'Möbius only: reverses in the Walsh basis'"),
        ("drop", "verdict basis.migration.vector says 'fails' but lacks the verdict walsh.migration.vector"),
    ],
)
def test_the_checker_refuses_a_flipped_walsh_verdict_and_a_contradicted_basis_claim(edit: str, refusal: str) -> None:
    summary = a_sweep_summary()
    check_verdicts(summary, Path("summary_all.json"), VERDICTS["3A/3B"])  # as built: it passes
    entries = by_id(summary["verdicts"])
    if edit == "flip":
        entries["walsh.migration.vector"]["decision"] = HOLDS
    elif edit == "claim":
        entries["basis.migration.vector"]["claim"] = entries["basis.migration.vector"]["claim"].replace(
            "Möbius only: reverses in the Walsh basis", "holds in both bases"
        )
    else:
        summary["verdicts"] = [entry for entry in summary["verdicts"] if entry["id"] != "walsh.migration.vector"]
    with pytest.raises(PipelineError, match=re.escape(f"summary_all.json: {refusal}")):
        check_verdicts(summary, Path("summary_all.json"), VERDICTS["3A/3B"])


def test_a_sweep_evaluated_before_the_walsh_control_keeps_its_verdicts() -> None:
    path = Path(__file__).resolve().parents[2] / "experiment_2/results_3c_efficientnet_lite0_native/summary_all.json"
    summary = read_json(path)
    assert "walsh" not in summary
    assert [entry["id"] for entry in verdicts(summary)] == [entry["id"] for entry in summary["verdicts"]]
    check_verdicts(summary, path, VERDICTS["3A/3B"])  # its stored migration rule text is the Möbius one, unchanged
