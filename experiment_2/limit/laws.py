"""Experiment 3C: the small-λ limit of each order's scaling, and the two laws it is tested against.

The laws (derived in experiment_2/README.md, "Experiment 3C"), as the limit slope of
``log sqrt(Ē_k)`` against ``log λ`` at order ``k ≥ 1``:

- ``lambda_k`` — the theorem for stacks smooth in λ: slope ``k``.
- ``kink`` — the law of piecewise-linear activations as stated before the 3C runs: slope
  ``min(k, s)``; ``s = 1`` when the gated blocks have a post-sum activation (their identity
  shortcuts carry exact zeros of the previous one: units exactly at a kink, whose Möbius
  coefficients were expected ``Θ(λ)`` at every order), ``s = 3/2`` when they have none (only units
  near a kink, a fraction ``∝ λ`` of them, each contributing ``Θ(λ)``: ``E_k ∝ λ³``).
- ``kink_chain`` — the same law refined *after* the ResNet-18 measurement (README, "After
  measuring"): a unit exactly at a kink couples only the blocks whose pushes reach it without
  crossing another clipped unit — a run of consecutive identity-shortcut blocks with a post-sum
  ReLU (:func:`exact_zero_chain`, ``R``) — so slope 1 for ``k ≤ R`` and 3/2 above.

Per order: the slope between successive λs (the convergence), and the *limit slope* — the
least-squares slope over the ``LIMIT_POINTS`` smallest λs at which the order is resolved (its mean
energy at least ``FLOOR_MARGIN`` × the round-off floor of the network's arithmetic, float32 or
float64) — each with a bootstrap-over-images CI (:func:`experiment_2.scaling.fit_power_law`).
An order's limit has *converged* when its window holds all ``LIMIT_POINTS`` λs and the successive-λ slopes
inside it differ by at most ``± tolerance`` (:func:`convergence`); where the float64 floor cuts the window
short, or the slopes still move, the order reads *cannot tell (not converged)* whatever its CI says. A law
*holds* at a converged order when the limit slope's CI lies within ``± tolerance`` of its prediction, *fails*
when the CI lies wholly outside, and *cannot tell* otherwise; order 1 has slope 1 in every network, so it is
shown but not counted. A law fitted to the data that tests it (the refined law on the run it was derived
from, :func:`is_post_hoc`) reads *consistent (post hoc)* where the rule would say holds. It is
*visible from* the largest λ from which on every successive-λ slope of every resolved order (and, per order,
of that order) is within ``± tolerance`` of the prediction.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
from torch import nn

from experiment_1.network import ResidualStack
from experiment_1.paths import REPO_ROOT
from experiment_1.report import (
    CANNOT_TELL,
    FAILS,
    HOLDS,
    NOT_CONVERGED,
    POST_HOC,
    UNRESOLVED,
    bootstrap_mean_ci_rows,
)
from experiment_2.scaling import fit_power_law
from experiment_2.spectrum.verdicts import FLOOR_MARGIN, roundoff_floor

LIMIT_POINTS = 3
# The a priori law tests' convergence rule (experiment_2.step_7_law_test with a prediction file; fixed before their runs):
# the successive slopes inside the limit window may move by at most this — under half the ± 0.25 slope tolerance, so a
# limit that still drifts across a quarter of the tolerance band per λ step reads "cannot tell (not converged)". Step 5
# and the first held-block test keep the rule they were run under (convergence tolerance = slope tolerance).
LAW_TEST_CONVERGENCE_TOLERANCE = 0.1
SLOPE_ROUNDING = 1e-9  # slopes equal to this are equal: a spread at the tolerance is within it, whatever the last bit
NO_POST_ACTIVATION = "Identity"
LAWS = ("lambda_k", "kink", "kink_chain")
LAW_NAMES = {
    "lambda_k": "λ^k law (smooth stacks)",
    "kink": "kink law (piecewise-linear activations, stated before the 3C runs)",
    "kink_chain": "kink law refined by the exact-zero chain (after measuring ResNet-18)",
}
PIECEWISE_LINEAR_POST = (nn.ReLU, nn.ReLU6)
FIRST_COUNTED_ORDER = 2  # slope 1 at k = 1 holds for any network: shown, not counted as agreement
# The run the refined law was derived from (README, "After measuring"): the random-init torchvision ResNet-18,
# seed 0, on the test sample list. Any run of that network, seed and list is the law's own data.
REFINED_LAW_FITTED_TO = {
    "arch": "resnet18",
    "weights": "random",
    "seed": 0,
    "sample_list_sha256": "d0435bf1f04c0f81cf1bd1ca91d3c597fe7a8726a7bd4bcde8be1dbdf7eecf8a",
}


# ... and the runs themselves, by identity (config.run_id): experiment_2/results_3c_resnet18_native and _smooth. An edited
# description (config.seed, arch, …) does not turn them into other data.
REFINED_LAW_FITTED_RUNS = frozenset(
    {
        "e6ff9cab2daad729d9a16b6fc609d9b833881dac296923fd1940ea85ee840e9d",
        "2122e651dfe27d16b4b73454e4f56eccc99f5fb8bd4e27c27a59c04500aaaf0e",
    }
)
# The commit that stated the refined law's a priori prediction (experiment_2/README.md, "A test of the refined law on
# data it was not fitted to"): a run is a test of it only when its recorded commit descends from this one.
PREDICTION_COMMIT = "82db6c3f3c0d153389535787c5c9cb98ade55bc4"


def is_post_hoc(config: dict[str, Any]) -> bool:
    """Whether a run is the refined law's own data: one of :data:`REFINED_LAW_FITTED_RUNS` by its ``run_id``, or a run
    whose configuration is :data:`REFINED_LAW_FITTED_TO` (either is enough: identity first, description too)."""
    return config.get("run_id") in REFINED_LAW_FITTED_RUNS or all(
        config.get(key) == value for key, value in REFINED_LAW_FITTED_TO.items()
    )


def after_prediction(config: dict[str, Any], root: Path = REPO_ROOT) -> str | None:
    """Why the run cannot be an a priori test of the refined law (``None`` when it can): its recorded commit
    (``config.git_commit``) must be :data:`PREDICTION_COMMIT` or descend from it in ``root``'s history."""
    recorded = str(config.get("git_commit", "")).removesuffix("-dirty")
    if not re.fullmatch(r"[0-9a-f]{7,40}", recorded):
        return (
            f"it records no commit (config.git_commit {config.get('git_commit')!r}), so nothing shows it ran after the "
            f"prediction was committed ({PREDICTION_COMMIT[:12]})"
        )
    try:
        found = subprocess.run(
            ["git", "merge-base", "--is-ancestor", PREDICTION_COMMIT, recorded],
            cwd=root,
            capture_output=True,
            text=True,
        )
    except OSError:
        return "git is not available to compare its commit with the prediction's"
    if found.returncode == 1:
        return f"it ran at commit {recorded[:12]}, before the prediction was committed ({PREDICTION_COMMIT[:12]})"
    if found.returncode != 0:
        return f"its commit {recorded[:12]} or the prediction's ({PREDICTION_COMMIT[:12]}) is not in this repository's history (a shallow clone?)"
    return None


def exact_zero_chain(model: ResidualStack) -> int:
    """``R``: the longest run of consecutive gated blocks with an identity shortcut, no fixed ``pre`` path and a
    piecewise-linear post-sum activation — the blocks whose pushes meet at the same exactly-clipped trunk unit."""
    longest = run = 0
    for block in model.blocks:
        chained = (
            isinstance(block.shortcut, nn.Identity)
            and isinstance(block.pre, nn.Identity)
            and type(block.post) in PIECEWISE_LINEAR_POST
        )
        run = run + 1 if chained else 0
        longest = max(longest, run)
    return longest


def kink_exponent(post_activation: list[str]) -> float:
    """``s`` of the kink law: 1 with a post-sum activation on the gated blocks, 3/2 without."""
    return 1.0 if any(name != NO_POST_ACTIVATION for name in post_activation) else 1.5


def predicted_slopes(law: str, num_blocks: int, exponent: float, chain: int) -> np.ndarray:
    """Predicted limit slope per order ``k = 0 … L`` (order 0 is λ-independent: 0)."""
    orders = np.arange(num_blocks + 1, dtype=np.float64)
    if law == "lambda_k":
        return orders
    if law == "kink":
        return np.minimum(orders, exponent)
    return np.minimum(orders, np.where(orders <= chain, 1.0, 1.5))


def resolved_per_lambda(energies: np.ndarray, roundoff_variance: np.ndarray) -> np.ndarray:
    """``(n_λ, L+1)`` bools: mean energy ≥ ``FLOOR_MARGIN`` × the round-off floor, per λ and order.

    ``energies`` ``(N, n_λ, L+1)``, ``roundoff_variance`` ``(N, n_λ)`` in the network's arithmetic.
    """
    num_blocks = energies.shape[2] - 1
    floors = np.stack([roundoff_floor(roundoff_variance[:, column], num_blocks) for column in range(energies.shape[1])])
    return energies.mean(axis=0) >= FLOOR_MARGIN * floors


def order_verdict(ci_low: float, ci_high: float, predicted: float, tolerance: float) -> str:
    """``holds`` (CI inside ``predicted ± tolerance``), ``fails`` (CI wholly outside) or ``cannot tell``."""
    if predicted - tolerance <= ci_low and ci_high <= predicted + tolerance:
        return "holds"
    if ci_high < predicted - tolerance or ci_low > predicted + tolerance:
        return "fails"
    return "cannot tell"


def successive_slopes(
    lambdas: np.ndarray, energies: np.ndarray, resolved: np.ndarray, seed: int
) -> list[dict[str, Any]]:
    """Per pair of successive λs (largest first): the slope per order with CI and whether both λs resolve it."""
    pairs = []
    for column in range(len(lambdas) - 1):
        fit = fit_power_law(lambdas[column : column + 2], energies[:, column : column + 2], seed=seed)
        pairs.append(
            {
                "lambdas": [float(lambdas[column]), float(lambdas[column + 1])],
                "slope": fit["slope"],
                "ci_low": fit["ci_low"],
                "ci_high": fit["ci_high"],
                "resolved": (resolved[column] & resolved[column + 1]).tolist(),
            }
        )
    return pairs


def limit_slopes(lambdas: np.ndarray, energies: np.ndarray, resolved: np.ndarray, seed: int) -> list[dict[str, Any]]:
    """Per order: the slope over its ``LIMIT_POINTS`` smallest resolved λs with CI (``None`` with fewer than 2)."""
    rows = []
    fits: dict[tuple[int, ...], dict[str, list[float]]] = {}
    for order in range(energies.shape[2]):
        columns = tuple(sorted(np.flatnonzero(resolved[:, order]), key=lambda column: lambdas[column])[:LIMIT_POINTS])
        row: dict[str, Any] = {
            "order": order,
            "fit_lambdas": sorted((float(lambdas[column]) for column in columns), reverse=True),
            "resolved": len(columns) >= 2,
        }
        if row["resolved"]:
            if columns not in fits:
                fits[columns] = fit_power_law(lambdas[list(columns)], energies[:, list(columns)], seed=seed)
            fit = fits[columns]
            row.update(slope=fit["slope"][order], ci_low=fit["ci_low"][order], ci_high=fit["ci_high"][order])
        else:
            row.update(slope=None, ci_low=None, ci_high=None)
        rows.append(row)
    return rows


def visible_from(
    pairs: list[dict[str, Any]], predicted: np.ndarray, tolerance: float, orders: list[int]
) -> float | None:
    """The largest λ from which on every successive-λ slope of the given orders is within tolerance (steps where
    none of them is resolved are skipped); ``None`` when the smallest resolved step is already outside."""
    first = None
    for pair in reversed(pairs):
        checked = [
            abs(pair["slope"][order] - predicted[order]) <= tolerance for order in orders if pair["resolved"][order]
        ]
        if not checked:
            continue
        if not all(checked):
            break
        first = pair["lambdas"][0]
    return first


def convergence(limit: list[dict[str, Any]], pairs: list[dict[str, Any]], tolerance: float) -> list[dict[str, Any]]:
    """Per order: whether its limit slope has converged — its window holds all ``LIMIT_POINTS`` λs (the floor
    did not cut it short) and the successive-λ slopes inside the window differ by at most ``tolerance``.

    Returns ``{"order", "converged", "window_slopes", "spread", "reason"}`` per row of ``limit``
    (``reason`` ``None`` when converged).
    """
    rows = []
    for row in limit:
        window = set(row["fit_lambdas"])
        slopes = [
            pair["slope"][row["order"]]
            for pair in pairs
            if set(pair["lambdas"]) <= window and pair["resolved"][row["order"]]
        ]
        spread = float(max(slopes) - min(slopes)) if slopes else None
        if not row["resolved"]:
            reason = UNRESOLVED
        elif len(window) < LIMIT_POINTS:
            reason = f"the round-off floor leaves {len(window)} of the {LIMIT_POINTS} λs of the window"
        elif len(slopes) < LIMIT_POINTS - 1:
            reason = "the window's λs are not successive on the grid (an unresolved λ between them)"
        elif spread > tolerance + SLOPE_ROUNDING:
            reason = f"successive slopes in the window still move by {spread:.2f} > {tolerance:g}"
        else:
            reason = None
        rows.append(
            {
                "order": row["order"],
                "converged": reason is None,
                "window_slopes": slopes,
                "spread": spread,
                "reason": reason,
            }
        )
    return rows


def law_test(
    limit: list[dict[str, Any]],
    pairs: list[dict[str, Any]],
    predicted: np.ndarray,
    tolerance: float,
    post_hoc: bool = False,
    convergence_tolerance: float | None = None,
) -> dict[str, Any]:
    """One law against the measured limit slopes: per-order verdicts, the overall one, and from which λ it is visible.

    Per order: ``unresolved``, ``cannot tell (not converged)`` (:func:`convergence` with ``convergence_tolerance``,
    default ``tolerance``), else :func:`order_verdict`.
    Overall, over the orders k ≥ ``FIRST_COUNTED_ORDER``: ``fails`` when it fails at any converged order,
    ``holds`` when it holds at every resolved order (all converged), else ``cannot tell``; ``unresolved``
    when none is resolved. ``post_hoc``: the law was fitted to these data, so ``holds`` reads ``consistent (post hoc)``.
    """
    settled = tolerance if convergence_tolerance is None else convergence_tolerance
    converged = {row["order"]: row for row in convergence(limit, pairs, settled)}
    per_order = {}
    for row in limit:
        if row["order"] < 1:
            continue
        if not row["resolved"]:
            per_order[row["order"]] = UNRESOLVED
        elif not converged[row["order"]]["converged"]:
            per_order[row["order"]] = NOT_CONVERGED
        else:
            per_order[row["order"]] = order_verdict(row["ci_low"], row["ci_high"], predicted[row["order"]], tolerance)
    tested = [value for order, value in per_order.items() if order >= FIRST_COUNTED_ORDER and value != UNRESOLVED]
    overall = (
        UNRESOLVED
        if not tested
        else FAILS
        if FAILS in tested
        else HOLDS
        if all(value == HOLDS for value in tested)
        else NOT_CONVERGED
        if NOT_CONVERGED in tested and not [value for value in tested if value == CANNOT_TELL]
        else CANNOT_TELL
    )
    if post_hoc and overall == HOLDS:
        overall = POST_HOC
    return {
        "predicted": predicted.tolist(),
        "per_order": [per_order[order] for order in sorted(per_order)],
        "converged": [converged[order]["converged"] for order in sorted(per_order)],
        "not_converged_reasons": {
            str(order): converged[order]["reason"]
            for order in sorted(per_order)
            if converged[order]["reason"] not in (None, UNRESOLVED)
        },
        "post_hoc": post_hoc,
        "verdict": overall,
        "visible_from_lambda": visible_from(pairs, predicted, tolerance, list(range(1, len(predicted)))),
        "visible_from_lambda_per_order": [
            visible_from(pairs, predicted, tolerance, [order]) for order in range(1, len(predicted))
        ],
    }


def renormalised_spectrum(energies: np.ndarray) -> np.ndarray:
    """Per image and λ, ``q_k = E_k / Σ_{j≥2} E_j`` for ``k = 2 … L``: ``(N, n_λ, L+1)`` → ``(N, n_λ, L−1)`` (NaN where Σ is 0)."""
    high = energies[..., 2:]
    total = high.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, high / total, np.nan)


def renormalised_spectrum_summary(energies: np.ndarray, seed: int) -> list[dict[str, Any]]:
    """Per λ: the mean over images of ``q_k`` (k = 2 … L) with bootstrap CIs (images without energy above order 1 left out)."""
    spectra = renormalised_spectrum(energies)
    rows = []
    for column in range(spectra.shape[1]):
        values = spectra[:, column]
        rows.append(bootstrap_mean_ci_rows(values[~np.isnan(values).any(axis=1)], seed=seed))
    return rows


def limit_summary(
    lambdas: np.ndarray,
    energies: np.ndarray,
    roundoff_variance: np.ndarray,
    post_activation: list[str],
    chain: int | None,
    seed: int,
    tolerance: float,
) -> dict[str, Any]:
    """The 3C block of one projection: resolution per λ, successive and limit slopes, the spectrum
    renormalised over k ≥ 2 per λ, both laws' tests.

    ``lambdas`` ``(n_λ,)`` largest first; ``energies`` ``(N, n_λ, L+1)``; ``roundoff_variance`` ``(N, n_λ)``;
    ``chain``: :func:`exact_zero_chain` of the network (``None``: not recorded — the refined law is left out).
    """
    lambdas = np.asarray(lambdas, dtype=np.float64)
    resolved = resolved_per_lambda(energies, roundoff_variance)
    pairs = successive_slopes(lambdas, energies, resolved, seed)
    limit = limit_slopes(lambdas, energies, resolved, seed)
    exponent = kink_exponent(post_activation)
    block = {
        "resolved": resolved.tolist(),
        "successive_slopes": pairs,
        "limit_slopes": limit,
        "kink_exponent": exponent,
        "exact_zero_chain": chain,
        "renormalised_spectrum": renormalised_spectrum_summary(energies, seed),
    }
    return {**block, **scored(block, tolerance, post_hoc=True)}


def law_tests(
    block: dict[str, Any], tolerance: float, post_hoc: bool, convergence_tolerance: float | None = None
) -> dict[str, dict[str, Any]]:
    """Each law's :func:`law_test` on one 3C block (its ``limit_slopes``, ``successive_slopes``, ``kink_exponent``,
    ``exact_zero_chain``). The refined law is left out when the chain is not recorded, and when it predicts what the
    law stated before the 3C runs does (R = 0, or R ≥ L): it would be the same test twice."""
    num_blocks = len(block["limit_slopes"]) - 1
    exponent, chain = block["kink_exponent"], block["exact_zero_chain"]
    predictions = {law: predicted_slopes(law, num_blocks, exponent, chain or 0) for law in LAWS}
    laws = [
        law
        for law in LAWS
        if law != "kink_chain" or (chain is not None and not np.array_equal(predictions[law], predictions["kink"]))
    ]
    return {
        law: law_test(
            block["limit_slopes"],
            block["successive_slopes"],
            predictions[law],
            tolerance,
            post_hoc=post_hoc and law == "kink_chain",
            convergence_tolerance=convergence_tolerance,
        )
        for law in laws
    }


def scored(
    block: dict[str, Any], tolerance: float, post_hoc: bool, convergence_tolerance: float | None = None
) -> dict[str, Any]:
    """The parts of a 3C block the rule decides — per-order convergence and the laws' tests — from the block's
    measured parts, so a summary written by earlier code is scored by the current rule without re-evaluating.
    ``post_hoc``: the run is the refined law's own data (:func:`is_post_hoc`; at sweep time, ``True``: only
    the report steps, which see the whole configuration, call a run a test). ``convergence_tolerance``: how far the
    window's successive slopes may move (default ``tolerance``; the a priori tests' :data:`LAW_TEST_CONVERGENCE_TOLERANCE`)."""
    settled = tolerance if convergence_tolerance is None else convergence_tolerance
    return {
        "convergence": convergence(block["limit_slopes"], block["successive_slopes"], settled),
        "laws": law_tests(block, tolerance, post_hoc, convergence_tolerance=settled),
    }
