"""The random-init null over networks: does training change the spectrum, judged between networks?

A single random-init network gives a CI over images of one draw; whether the *trained* network differs from *random*
networks is a question about networks. Here every network — the trained one and each random-init seed — is reduced to
one number per statistic, its mean over the same images (the first images of the sample list, which every seed
evaluated and the trained run evaluated among its own), and the trained network's number is ranked among the seeds'.

The rules, fixed before the seeds ran (experiment_2/README.md, The random-init null over networks):

- ``null_input_function`` — a random-init network counts as a null only when it is a function of its input, resolved
  above round-off: the relative spread (the sample standard deviation, ``ddof = 1``, over the mean) of its trunk
  energy over its images is at least :data:`INPUT_FRACTION` of the trained network's (over all the trained run's
  images), and every order of both projections clears the round-off floor in the Möbius basis and the Walsh basis. A
  seed that fails either is left out of the null (listed, never silently). The verdict holds when every seed passes,
  else fails (the notes name them). The rule said "std / mean" before the seeds ran; the first decision read it as
  the population SD, which left out two seeds on 4 images; the sample SD is the estimator the rule means (corrected
  after the run, issue #61; experiment_2/README.md says what it changed).
- ``null_networks.<statistic>`` — training changes the statistic: the exact one-sided rank test of the trained
  network's per-network mean among the n null networks', p = (1 + #{seeds at or beyond the trained value}) / (n + 1),
  in the direction :data:`DIRECTION` stated before the run; Holm over the :data:`TESTED` family. Holds when the
  Holm-adjusted p ≤ α; cannot tell otherwise (no equivalence margin: never fails); and cannot tell (no power) when even
  the most extreme rank, p = 1/(n + 1), cannot reach α after Holm — m/(n + 1) > α — which the notes say.

The statistics outside the family (:data:`DESCRIBED`) are reported with their rank p, undecided.

The REPORT of the random-init null over networks (experiment_2.step_14_null_compare), and the table of it that
Experiment 2's own REPORT shows — from the between-network summary only.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping, Sequence

import numpy as np

from experiment_1.errors import PipelineError
from experiment_1.files import SCHEMA_VERSION
from experiment_1.mobius import PROJECTIONS
from experiment_1.report import (
    ALPHA,
    CANNOT_TELL,
    FAILS,
    HOLDS,
    Missing,
    Reading,
    Rule,
    bootstrap_mean_ci,
    bootstrap_mean_ci_rows,
    effect_from_stat,
    format_number,
    format_stat,
    holm,
    markdown_table,
    verdict_lines,
)
from experiment_2.spectrum.evaluation import kappa_distribution

QUESTION = "Does training change the spectrum, judged between networks (the trained network against random-init seeds)?"
INPUT_FRACTION = 0.01  # a null's trunk-energy spread over images must be at least this share of the trained network's
DIRECTION = "lower"  # the trained value below the seeds': fixed before the run (see DIRECTION_SOURCE)
DIRECTION_SOURCE = (
    "the committed single-seed comparison before these seeds ran (seed 0, batch-norm statistics from its evaluated "
    "images): the trained network's κ^v and κ_W^v lay below that null's"
)
# per-image array → (label, basis, projection); the tested family first
STATISTICS: dict[str, tuple[str, str, str]] = {
    "kappa_vector": ("κ^v", "Möbius", "vector"),
    "walsh_kappa_vector": ("κ_W^v", "Walsh", "vector"),
    "kappa_scalar": ("κ^s", "Möbius", "scalar"),
    "walsh_kappa_scalar": ("κ_W^s", "Walsh", "scalar"),
    "c_le3_vector": ("C≤3 (vector)", "Möbius", "vector"),
    "walsh_c_le3_vector": ("C≤3 (vector)", "Walsh", "vector"),
    "trunk_share_vector": ("trunk share (vector)", "Möbius", "vector"),
    "cancellation_ratio_vector": ("cancellation ratio (vector)", "Möbius vs Walsh", "vector"),
}
TESTED = ("kappa_vector", "walsh_kappa_vector")  # the decided family (Holm over it): the whole logit vector, both bases
DESCRIBED = tuple(name for name in STATISTICS if name not in TESTED)
EFFECT_NAME = "trained − the random-init networks' mean (bootstrap over networks)"


def rank_p_value(trained: float, seeds: Sequence[float], direction: str = DIRECTION) -> float:
    """One-sided exact rank p of ``trained`` among ``seeds``: (1 + #{seeds ≤ trained}) / (n + 1) for ``lower`` (≥ for
    ``higher``); ties count against the trained network."""
    values = np.asarray(seeds, dtype=np.float64)
    if direction not in ("lower", "higher"):
        raise ValueError(f"direction {direction!r}: use lower or higher")
    beyond = values <= trained if direction == "lower" else values >= trained
    return float((1 + int(beyond.sum())) / (len(values) + 1))


def best_attainable_p(num_networks: int, family_size: int) -> float:
    """The smallest Holm-adjusted p a family of ``family_size`` rank tests among ``num_networks`` null networks can give:
    every raw p at its floor 1/(n + 1), times m."""
    return min(1.0, family_size / (num_networks + 1))


def per_network_means(arrays: dict[str, np.ndarray], positions: np.ndarray | None = None) -> dict[str, float]:
    """Each statistic's mean over the network's valid images (those at ``positions`` of its arrays, when given)."""
    valid = np.asarray(arrays["valid"], dtype=bool)
    rows = np.arange(len(valid)) if positions is None else np.asarray(positions)
    rows = rows[valid[rows]]
    means = {}
    for name in STATISTICS:
        values = np.asarray(arrays[name], dtype=np.float64)[rows]
        values = values[np.isfinite(values)]
        means[name] = float(values.mean()) if len(values) else float("nan")
    return means


def resolved(summary: dict[str, Any]) -> bool:
    """Every order of both projections clears the round-off floor, in the Möbius basis and (when recorded) the Walsh one."""
    blocks = [summary["roundoff"]] + ([summary["walsh"]["roundoff"]] if "walsh" in summary else [])
    return not any(block[projection]["unresolved_orders"] for block in blocks for projection in PROJECTIONS)


def input_spread(summary: dict[str, Any]) -> float:
    """The relative spread of the trunk energy over the run's images (experiment_2.spectrum.verdicts.input_dependence)."""
    return float(summary["input_dependence"]["trunk_energy_relative_spread"])


def is_input_function(spread: float, trained_spread: float, fraction: float = INPUT_FRACTION) -> bool:
    """The input rule's threshold: the null's spread at least ``fraction`` × the trained network's."""
    return spread >= fraction * trained_spread


def network_record(summary: dict[str, Any], arrays: dict[str, np.ndarray], trained_spread: float) -> dict[str, Any]:
    """One random-init network: its seed, run, the input rule's numbers and its per-network means."""
    spread = input_spread(summary)
    record = {
        "seed": summary["config"]["seed"],
        "run_id": summary["config"]["run_id"],
        "num_valid": summary["num_valid"],
        "distinct_predictions": summary["input_dependence"]["distinct_predictions"],
        "trunk_energy_relative_spread": spread,
        "spread_ratio": spread / trained_spread if trained_spread > 0 else float("inf"),
        "input_function": is_input_function(spread, trained_spread),
        "resolved": resolved(summary),
        "means": per_network_means(arrays),
    }
    record["null"] = record["input_function"] and record["resolved"]
    return record


def shared_positions(trained_arrays: dict[str, np.ndarray], indices: np.ndarray) -> np.ndarray:
    """The rows of the trained run's arrays that hold the seeds' images (by sample-list position), in their order."""
    where = {int(index): row for row, index in enumerate(np.asarray(trained_arrays["index"]))}
    missing = [int(index) for index in indices if int(index) not in where]
    if missing:
        raise PipelineError(
            f"the trained run did not evaluate image {missing[0]} of the sample list, which the seeds evaluated; "
            "run the seeds on the first images of the trained run's list (--limit)"
        )
    return np.array([where[int(index)] for index in indices])


def _read_networks(reading: Reading) -> dict[str, Any]:
    """Each seed's trunk-energy spread and whether it clears the round-off floor, and the trained network's spread; the
    statistic must be the smallest spread ratio."""
    networks, trained = reading.at("networks"), reading.number("trained", "trunk_energy_relative_spread")
    try:
        spreads = [float(record["trunk_energy_relative_spread"]) for record in networks]
        resolved = [record["resolved"] is True for record in networks]
    except (KeyError, TypeError, ValueError):
        raise Missing("networks[].trunk_energy_relative_spread / resolved") from None
    ratios = [spread / trained if trained > 0 else float("inf") for spread in spreads]
    reading.copied("statistic", {"value": min(ratios, default=None)}, ("value",))
    return {"spreads": spreads, "resolved": resolved, "trained": trained}


NULL_INPUT = Rule(
    "exp2.null_input_function",
    f"a random-init network is a null when the relative spread of its trunk energy over images is at least {INPUT_FRACTION:g} × the "
    "trained network's (spread: the sample standard deviation over the mean) and every order clears the round-off "
    "floor in both bases; holds when every seed is a null, else fails "
    "(those that are not are left out of the null)",
    _read_networks,
    lambda spreads, resolved, trained: (
        HOLDS
        if all(is_input_function(spread, trained) and clear for spread, clear in zip(spreads, resolved))
        else FAILS
    ),
    "every random-init network is a function of its input, resolved above round-off",
)


def _rank_family(summary: Mapping[str, Any]) -> tuple[list[float], list[int]]:
    """Each tested statistic's one-sided rank p among the null networks (recomputed from the trained value and the
    networks'), and how many networks each has."""
    blocks = [summary["statistics"][name] for name in summary["config"]["tested"]]
    return [rank_p_value(block["trained"], block["networks"]) for block in blocks], [
        len(block["networks"]) for block in blocks
    ]


def _read_rank(reading: Reading) -> dict[str, Any]:
    try:
        p_values, counts = _rank_family(reading.summary)
        position = list(reading.summary["config"]["tested"]).index(reading.parts[-1])
    except (KeyError, TypeError, ValueError):
        raise Missing(f"config.tested / statistics.{reading.parts[-1]}.networks / trained") from None
    adjusted = holm(p_values)
    reading.copied("test", {"p_value": p_values[position], "p_adjusted": adjusted[position]}, ("p_value", "p_adjusted"))
    return {"p_adjusted": adjusted[position], "best": best_attainable_p(counts[position], len(p_values))}


RANK = Rule(
    "exp2.null_networks_rank",
    "exact one-sided rank test of the trained network's per-network mean among the null networks' (all on the same images), "
    "p = (1 + #{networks at or beyond it in the direction stated before the run}) / (n + 1), Holm over the tested statistics: "
    "holds when the Holm-adjusted p ≤ α; cannot tell (no power) when m/(n + 1) > α; else cannot tell (no equivalence margin)",
    _read_rank,
    lambda p_adjusted, best: CANNOT_TELL if best > ALPHA else HOLDS if p_adjusted <= ALPHA else CANNOT_TELL,
    "{projection} projection, {basis} basis: training changes {label} (the trained network against the random-init networks)",
)


def input_verdict(summary: dict[str, Any]) -> dict[str, Any]:
    """``null_input_function``: every seed a function of its input, resolved above round-off."""
    networks, trained_spread = summary["networks"], summary["trained"]["trunk_energy_relative_spread"]
    left_out = [record for record in networks if not record["null"]]
    smallest = min(networks, key=lambda record: record["spread_ratio"])
    notes = [
        f"{len(networks) - len(left_out)} of {len(networks)} seeds are nulls; the trained network's spread is "
        f"{trained_spread:.3g}, the threshold {INPUT_FRACTION * trained_spread:.3g}"
    ]
    if left_out:
        notes.append(
            "left out of the null: "
            + ", ".join(
                f"seed {record['seed']} ({'trunk-energy spread below the threshold' if not record['input_function'] else 'unresolved: round-off'})"
                for record in left_out
            )
        )
    return NULL_INPUT.verdict(
        "null_input_function",
        summary,
        parameters={"fraction": INPUT_FRACTION, "trained_spread": trained_spread},
        statistic={
            "name": "least-varying random-init network's trunk-energy spread / the trained network's",
            "value": smallest["spread_ratio"],
        },
        notes=notes,
    )


def rank_verdicts(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """``null_networks.<statistic>`` for each tested statistic (Holm over :data:`TESTED`, the power rule)."""
    ranks = summary["statistics"]
    counts = [len(ranks[name]["networks"]) for name in TESTED]
    adjusted = holm([ranks[name]["rank_p"] for name in TESTED])
    block = []
    for name, count, p_adjusted in zip(TESTED, counts, adjusted):
        label, basis, projection = STATISTICS[name]
        entry = ranks[name]
        best = best_attainable_p(count, len(TESTED))
        notes = (
            [
                f"no power: with {count} null networks and {len(TESTED)} tests the smallest attainable Holm-adjusted p is "
                f"{best:.3g} > α = {ALPHA:g}"
            ]
            if best > ALPHA
            else []
        )
        notes.append(
            f"trained {entry['trained']:.3g}; the {count} random-init networks: mean {entry['mean']:.3g}, range "
            f"[{entry['min']:.3g}, {entry['max']:.3g}]; direction stated before the run: trained {DIRECTION}"
        )
        block.append(
            RANK.verdict(
                f"null_networks.{name}",
                summary,
                fields={"projection": projection, "basis": basis, "label": label},
                parameters={"alpha": ALPHA, "direction": DIRECTION, "best_attainable_p": best, "num_networks": count},
                statistic={"name": f"{label}, the trained network on the same images", "value": entry["trained"]},
                effect=None
                if entry["effect"] is None
                else effect_from_stat(EFFECT_NAME, entry["effect"]["difference"]),
                test={
                    "name": "exact one-sided rank test among the random-init networks",
                    "p_value": entry["rank_p"],
                    "p_floor": 1 / (count + 1),
                    "p_adjusted": p_adjusted,
                    "correction": "Holm",
                    "family_size": len(TESTED),
                },
                notes=notes,
            )
        )
    return block


def effect_size(trained: float, values: Sequence[float], seed: int = 0) -> dict[str, Any] | None:
    """How far the trained network lies from the random-init networks: ``difference``, the trained value minus the
    networks' mean with a percentile-bootstrap CI over networks (:func:`experiment_1.report.bootstrap_mean_ci` of
    trained − each network's value), and ``z``, that difference over the networks' sample standard deviation (None
    with fewer than two networks or no spread)."""
    if not values:
        return None
    differences = trained - np.asarray(values, dtype=np.float64)
    spread = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
    return {
        "difference": bootstrap_mean_ci(differences, seed=seed),
        "z": float(differences.mean() / spread) if spread > 0 else None,
    }


def rank_block(trained: dict[str, float], nulls: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per statistic: the trained network's value, every null network's, their range, how many lie below the trained
    value, the effect size (:func:`effect_size`) and — for a tested statistic — the one-sided rank p."""
    block = {}
    for name in STATISTICS:
        values = [record["means"][name] for record in nulls if np.isfinite(record["means"][name])]
        block[name] = {
            "trained": trained[name],
            "networks": values,
            "mean": float(np.mean(values)) if values else None,
            "min": float(np.min(values)) if values else None,
            "max": float(np.max(values)) if values else None,
            "networks_below": int(np.sum(np.asarray(values) < trained[name])),
            "effect": effect_size(trained[name], values),
            "rank_p": rank_p_value(trained[name], values) if values and name in TESTED else None,
        }
    return block


def random_init_block(runs: list[tuple[dict[str, Any], dict[str, np.ndarray]]], seed: int) -> dict[str, Any]:
    """The null networks' spectrum for the figures: per projection, the mean over networks of each network's mean
    spectrum (bootstrap CI over networks) and the per-image κ of every network pooled."""
    projections = {}
    for projection in PROJECTIONS:
        spectra = np.array([summary["projections"][projection]["mean_spectrum"]["mean"] for summary, _ in runs])
        kappas = np.concatenate(
            [np.asarray(arrays[f"kappa_{projection}"])[np.asarray(arrays["valid"], bool)] for _, arrays in runs]
        )
        projections[projection] = {
            "mean_spectrum": bootstrap_mean_ci_rows(spectra, seed=seed),
            "kappa_distribution": kappa_distribution(kappas, runs[0][0]["config"]["num_blocks"]),
        }
    return {"config": {"arch": runs[0][0]["config"]["arch"], "weights": "random"}, "projections": projections}


def compare_networks(
    trained: dict[str, Any],
    trained_arrays: dict[str, np.ndarray],
    seeds: list[tuple[dict[str, Any], dict[str, np.ndarray]]],
    sources: dict[str, str],
) -> dict[str, Any]:
    """The between-network summary (see the module docstring); ``sources`` names the input files for its config."""
    indices = np.asarray(seeds[0][1]["index"])
    trained_spread = input_spread(trained)
    networks = [network_record(summary, arrays, trained_spread) for summary, arrays in seeds]
    nulls = [record for record in networks if record["null"]]
    trained_means = per_network_means(trained_arrays, shared_positions(trained_arrays, indices))
    ranks = rank_block(trained_means, nulls)
    calibration = seeds[0][0]["config"]["batchnorm_calibration"]
    summary = {
        "experiment": "2N",
        "question": QUESTION,
        "config": {
            **sources,
            "run_id": hashlib.sha256(
                json.dumps([trained["config"]["run_id"], *(record["run_id"] for record in networks)]).encode()
            ).hexdigest(),  # the runs it combines
            "schema_version": SCHEMA_VERSION,
            "arch": trained["config"]["arch"],
            "num_blocks": trained["config"]["num_blocks"],
            "trained_run_id": trained["config"]["run_id"],
            "sample_index": trained["config"]["sample_index"],
            "image_positions": [int(index) for index in indices],
            "batchnorm_calibration": calibration,
            "seeds": [record["seed"] for record in networks],
            "alpha": ALPHA,
            "direction": DIRECTION,
            "direction_source": DIRECTION_SOURCE,
            "input_fraction": INPUT_FRACTION,
            "tested": list(TESTED),
        },
        "num_seeds": len(networks),
        "num_null_networks": len(nulls),
        "num_images_per_network": int(len(indices)),
        "trained": {"means": trained_means, "trunk_energy_relative_spread": trained_spread},
        "networks": networks,
        "statistics": ranks,
        "random_init": random_init_block([run for run, record in zip(seeds, networks) if record["null"]] or seeds, 0),
    }
    summary["verdicts"] = [input_verdict(summary)]
    summary["verdicts"] += rank_verdicts(summary) if nulls else []
    return summary


def calibration_disjoint(config: dict[str, Any], indices: Sequence[int]) -> bool:
    """Whether a seed's batch-norm statistics came from images it did not evaluate: its calibration positions
    ``[first, last + 1)`` in the sample list lie wholly after every evaluated position."""
    calibration = config.get("batchnorm_calibration") or {}
    positions = calibration.get("positions")
    return positions is not None and len(indices) > 0 and int(positions[0]) > max(int(index) for index in indices)


def check_seed_runs(seeds: list[tuple[dict[str, Any], dict[str, np.ndarray]]], paths: list[str]) -> None:
    """Refuse seed runs that are not one null design: batch-norm statistics from images they evaluate, other images
    than the first seed's, or two runs of one seed."""
    if not seeds:
        raise PipelineError("--seeds-dir: no seed_*/summary.json found; run experiment_2.step_13_null_seeds first")
    first = np.asarray(seeds[0][1]["index"])
    seen: set[int] = set()
    for (summary, arrays), path in zip(seeds, paths):
        indices = np.asarray(arrays["index"])
        if not calibration_disjoint(summary["config"], indices.tolist()):
            raise PipelineError(
                f"{path}: its batch-norm statistics were not estimated on images disjoint from the evaluated ones; rerun it "
                "with experiment_2.step_13_null_seeds (--calibrate-batchnorm N takes the N images after the evaluated ones)"
            )
        if not np.array_equal(indices, first):
            raise PipelineError(f"{path}: evaluated other images than {paths[0]}; run every seed with the same --limit")
        if summary["config"]["seed"] in seen:
            raise PipelineError(f"{path}: a second run of seed {summary['config']['seed']}; keep one folder per seed")
        seen.add(summary["config"]["seed"])


def effect_cell(effect: dict[str, Any] | None) -> str:
    """``difference [CI]; z = …`` of :func:`effect_size`, or — without networks."""
    if effect is None:
        return "—"
    z = "" if effect["z"] is None else f"; z = {format_number(effect['z'])}"
    return format_stat(effect["difference"]) + z


def statistics_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Per statistic: basis, the trained network's value, the null networks' mean and range, the rank p, whether tested."""
    headers = [
        "statistic",
        "basis",
        "trained network",
        "random-init networks: mean [min, max]",
        "networks below the trained value",
        "trained − networks' mean [95 % CI over networks]; z",
        "rank p (one-sided, trained lower)",
        "role",
    ]
    rows = []
    for name, (label, basis, _) in STATISTICS.items():
        entry = summary["statistics"][name]
        spread = (
            f"{format_number(entry['mean'])} [{format_number(entry['min'])}, {format_number(entry['max'])}]"
            if entry["mean"] is not None
            else "—"
        )
        rows.append(
            [
                label,
                basis,
                format_number(entry["trained"]),
                spread,
                f"{entry['networks_below']} of {len(entry['networks'])}",
                effect_cell(entry["effect"]),
                format_number(entry["rank_p"]) if entry["rank_p"] is not None else "—",
                "tested (Holm)" if name in TESTED else "described (not tested)",
            ]
        )
    return headers, rows


def design_sentence(summary: dict[str, Any]) -> str:
    """How the null was made: networks, images, calibration images, the direction and why so few images."""
    config = summary["config"]
    positions, calibration = config["image_positions"], config["batchnorm_calibration"]
    first, stop = calibration["positions"]
    return (
        f"{summary['num_seeds']} random-init {config['arch']} networks (seeds {min(config['seeds'])}–{max(config['seeds'])}), "
        f"{summary['num_null_networks']} of them nulls by the input rule, each evaluated under all 2^{config['num_blocks']} masks on "
        f"the {len(positions)} images at positions {positions[0]}–{positions[-1]} of `{config['sample_index']}`, the same images the "
        f"trained network is read on; each network's batch-norm statistics were re-estimated on the {calibration['images']} images at "
        f"positions {first}–{stop - 1} of the same list, disjoint from the evaluated ones. Few images per network and many "
        f"networks: the question is between networks, and the rank test's smallest p, 1/(n + 1), must clear α after Holm over "
        f"{len(config['tested'])} tests, so at least n = {len(config['tested']) / config['alpha'] - 1:g} null networks were needed, "
        "within about 20 minutes of one CPU core. The direction (trained "
        f"{config['direction']}) was stated before the seeds ran, from {config['direction_source']}."
    )


def network_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """One row per seed: the input rule's numbers and the tested statistics."""
    headers = ["seed", "distinct predictions", "trunk-energy spread / trained", "resolved", "null"] + [
        STATISTICS[name][0] + f" ({STATISTICS[name][1]})" for name in TESTED
    ]
    rows = [
        [
            str(record["seed"]),
            str(record["distinct_predictions"]),
            format_number(record["spread_ratio"]),
            "yes" if record["resolved"] else "no",
            "yes" if record["null"] else "no",
        ]
        + [format_number(record["means"][name]) for name in TESTED]
        for record in summary["networks"]
    ]
    return headers, rows


def null_markdown(summary: dict[str, Any], generator: str, source: str, wall_seconds: float | None = None) -> str:
    """REPORT.md of the between-network null; ``wall_seconds``: the seeds' evaluation time summed (their timing.json)."""
    headers, rows = statistics_rows(summary)
    network_headers, network_table = network_rows(summary)
    lines = [
        "# Experiment 2 — the random-init null over networks",
        "",
        f"**Question.** {summary['question']}",
        "",
        f"**Data.** {design_sentence(summary)}",
        "",
        "**Method.** Every network is reduced to one number per statistic: its mean over the shared images. The trained "
        "network's number is ranked among the null networks' (exact one-sided rank test), Holm over the tested statistics.",
        "",
        "## Result",
        "",
        markdown_table(headers, rows),
        "",
        markdown_table(network_headers, network_table),
        "",
        "## Verdicts",
        "",
        *verdict_lines(summary["verdicts"]),
        "",
        *(
            [f"Wall time of the seeds' evaluation, summed over their timing.json: {format_number(wall_seconds)} s.", ""]
            if wall_seconds is not None
            else []
        ),
        f"_Generated by `python -m {generator}` from {source}; do not edit by hand._",
        "",
    ]
    return "\n".join(lines)
