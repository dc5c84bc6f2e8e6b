"""The random-init null over networks (experiment_2/spectrum/null_networks.py) on a hand-built world, compared whole:
five seeds — three nulls (one tied with the trained value, one with an invalid image, one whose statistic is NaN on
every image), one constant function and one unresolved in the Walsh basis — against a trained run that holds the seeds'
images in another order among others (one invalid, one NaN). The between-network summary, every network record, the
rank block and both kinds of verdict entry are hand-written dicts; the tables, the design sentence and the REPORT are
hand-written strings. Beside them: the power rule with power (holds at α exactly, cannot tell just above), no null at
all, the disjointness of the calibration images at its edge, the refusals' messages and the rank p's direction and
cap. Written against the survivors of `make mutation MODULES=experiment_2/spectrum/null_networks.py`."""

from __future__ import annotations

import hashlib
import json
import statistics
import warnings

import numpy as np
import pytest

from experiment_1.errors import PipelineError
from experiment_1.files import SCHEMA_VERSION
from experiment_1.report import bootstrap_mean_ci, bootstrap_mean_ci_rows, effect_from_stat, format_number, format_stat
from experiment_2.spectrum.evaluation import kappa_distribution
from experiment_2.spectrum.null_networks import (
    DIRECTION_SOURCE,
    EFFECT_NAME,
    NULL_INPUT,
    QUESTION,
    RANK,
    STATISTICS,
    best_attainable_p,
    calibration_disjoint,
    check_seed_runs,
    compare_networks,
    design_sentence,
    network_record,
    network_rows,
    null_markdown,
    per_network_means,
    random_init_block,
    rank_p_value,
    shared_positions,
    statistics_rows,
)

L = 3
NAMES = list(STATISTICS)  # statistic j has the values base + 10 j
TRAINED_SPREAD = 0.2
CALIBRATION = {"images": 10, "batch": 64, "positions": [3, 13]}
SOURCES = {"trained_summary": "t.json", "seeds_dir": "seeds"}


def roundoff(unresolved: list[int]) -> dict:
    return {projection: {"unresolved_orders": unresolved} for projection in ("vector", "scalar")}


def seed_run(
    seed: int,
    base: float,
    spread: float,
    distinct: int,
    spectrum: list[float],
    walsh_unresolved: list[int] | None = None,
    invalid_row: int | None = None,
    nan_statistic: str | None = None,
    nan_row: int | None = None,
) -> tuple[dict, dict]:
    """A seed on the images 0, 1, 2: statistic j is base + 10 j − 0.25, base + 10 j, base + 10 j + 0.25 (mean
    base + 10 j); an invalid row holds 100 (read, it would show); a NaN statistic is NaN on ``nan_row`` (every row when
    None)."""
    summary = {
        "config": {
            "seed": seed,
            "run_id": f"run-{seed}",
            "arch": "resnet18",
            "num_blocks": L,
            "batchnorm_calibration": dict(CALIBRATION),
        },
        "num_valid": 3 if invalid_row is None else 2,
        "input_dependence": {"trunk_energy_relative_spread": spread, "distinct_predictions": distinct},
        "roundoff": roundoff([]),
        "walsh": {"roundoff": roundoff(walsh_unresolved or [])},
        "projections": {projection: {"mean_spectrum": {"mean": spectrum}} for projection in ("vector", "scalar")},
    }
    arrays = {}
    for j, name in enumerate(NAMES):
        values = base + 10 * j + np.array([-0.25, 0.0, 0.25])
        if invalid_row is not None:
            values[invalid_row] = 100.0
        if name == nan_statistic:
            values[slice(None) if nan_row is None else nan_row] = np.nan
        arrays[name] = values
    valid = np.ones(3, dtype=bool)
    if invalid_row is not None:
        valid[invalid_row] = False
    arrays.update(index=np.array([0, 1, 2]), valid=valid)
    return summary, arrays


def world() -> list[tuple[dict, dict]]:
    return [
        seed_run(3, 1.5, 0.004, 5, [0.5, 0.3, 0.2], nan_statistic="trunk_share_vector"),
        seed_run(1, 2.0, 0.1, 6, [0.2, 0.5, 0.3], nan_statistic="c_le3_vector", nan_row=0),
        seed_run(2, 4.0, 0.3, 7, [0.1, 0.1, 0.8], invalid_row=1),
        seed_run(7, 0.0, 1e-6, 1, [1.0, 0.0, 0.0]),  # a constant function: not a null
        seed_run(8, 0.5, 0.05, 4, [0.0, 1.0, 0.0], walsh_unresolved=[3]),  # unresolved in the Walsh basis
    ]


def trained_run() -> tuple[dict, dict]:
    """The trained run read the images 4, 2, 0, 1, 3 (rows 0…4): the seeds' images 0, 1, 2 are its rows 2, 3, 1. Row 3
    (image 1) is invalid; the other images hold 1000; cancellation ratio is NaN on row 2 (image 0)."""
    summary = {
        "config": {"run_id": "trained", "arch": "resnet18", "num_blocks": L, "sample_index": "list.json"},
        "input_dependence": {"trunk_energy_relative_spread": TRAINED_SPREAD, "distinct_predictions": 200},
    }
    arrays = {}
    for j, name in enumerate(NAMES):
        value = 2.0 + 10 * j
        arrays[name] = np.array([1000.0, value + 0.25, value - 0.25, 1000.0, 1000.0])
    arrays["cancellation_ratio_vector"][2] = np.nan
    arrays.update(index=np.array([4, 2, 0, 1, 3]), valid=np.array([True, True, True, False, True]))
    return summary, arrays


def compared(seeds: list[tuple[dict, dict]] | None = None) -> dict:
    summary, arrays = trained_run()
    return compare_networks(summary, arrays, world() if seeds is None else seeds, SOURCES)


def means(base: float, **override: float) -> dict[str, float]:
    return {name: override.get(name, base + 10 * j) for j, name in enumerate(NAMES)}


TRAINED_MEANS = means(2.0, cancellation_ratio_vector=72.25)  # image 0 NaN, image 1 invalid: image 2 alone


def record(seed, spread, distinct, input_function, resolved, seed_means, num_valid=3) -> dict:
    return {
        "seed": seed,
        "run_id": f"run-{seed}",
        "num_valid": num_valid,
        "distinct_predictions": distinct,
        "trunk_energy_relative_spread": spread,
        "spread_ratio": pytest.approx(spread / TRAINED_SPREAD, rel=1e-15),
        "input_function": input_function,
        "resolved": resolved,
        "means": seed_means,
        "null": input_function and resolved,
    }


NETWORKS = [
    record(3, 0.004, 5, True, True, means(1.5, trunk_share_vector=float("nan"))),
    record(1, 0.1, 6, True, True, means(2.0, c_le3_vector=42.125)),
    record(2, 0.3, 7, True, True, means(4.0), num_valid=2),
    record(7, 1e-6, 1, False, True, means(0.0)),
    record(8, 0.05, 4, True, False, means(0.5)),
]


def effect_of(trained: float, networks: list[float]) -> dict:
    """The effect by hand: trained − each network, its bootstrap mean CI (the project's, tested against scipy), and the
    difference of means over the networks' sample SD (statistics.stdev)."""
    differences = bootstrap_mean_ci(np.array([trained - value for value in networks]), seed=0)
    assert differences["mean"] == pytest.approx(trained - statistics.mean(networks), rel=1e-12)
    return {"difference": differences, "z": pytest.approx(differences["mean"] / statistics.stdev(networks), rel=1e-12)}


def effect_text(trained: float, networks: list[float]) -> str:
    effect = effect_of(trained, networks)
    return f"{format_stat(effect['difference'])}; z = {format_number(effect['z'].expected)}"


def stat_entry(trained, networks, below, rank_p) -> dict:
    return {
        "trained": trained,
        "networks": networks,
        "mean": pytest.approx(sum(networks) / len(networks), rel=1e-15),
        "min": min(networks),
        "max": max(networks),
        "networks_below": below,
        "effect": effect_of(trained, networks),
        "rank_p": rank_p,
    }


STATISTICS_BLOCK = {
    "kappa_vector": stat_entry(2.0, [1.5, 2.0, 4.0], 1, 0.75),  # the tie counts against the trained network
    "walsh_kappa_vector": stat_entry(12.0, [11.5, 12.0, 14.0], 1, 0.75),
    "kappa_scalar": stat_entry(22.0, [21.5, 22.0, 24.0], 1, None),
    "walsh_kappa_scalar": stat_entry(32.0, [31.5, 32.0, 34.0], 1, None),
    "c_le3_vector": stat_entry(42.0, [41.5, 42.125, 44.0], 1, None),
    "walsh_c_le3_vector": stat_entry(52.0, [51.5, 52.0, 54.0], 1, None),
    "trunk_share_vector": stat_entry(62.0, [62.0, 64.0], 0, None),  # seed 3's is NaN: left out
    "cancellation_ratio_vector": stat_entry(72.25, [71.5, 72.0, 74.0], 2, None),
}

INPUT_ENTRY = {
    "id": "null_input_function",
    "claim": "every random-init network is a function of its input, resolved above round-off",
    "decision": "fails",
    "rule": NULL_INPUT.text,
    "parameters": {"fraction": 0.01, "trained_spread": 0.2},
    "statistic": {
        "name": "least-varying random-init network's trunk-energy spread / the trained network's",
        "value": pytest.approx(5e-6, rel=1e-12),
    },
    "effect": None,
    "test": None,
    "seed": None,
    "notes": [
        "3 of 5 seeds are nulls; the trained network's spread is 0.2, the threshold 0.002",
        "left out of the null: seed 7 (trunk-energy spread below the threshold), seed 8 (unresolved: round-off)",
    ],
}


def rank_entry(name, claim, label, decision, count, p, p_adjusted, notes, effect=None) -> dict:
    best = min(1.0, 2 / (count + 1))
    effect = effect or STATISTICS_BLOCK[name]["effect"]
    return {
        "id": f"null_networks.{name}",
        "claim": claim,
        "decision": decision,
        "rule": RANK.text,
        "parameters": {"alpha": 0.05, "direction": "lower", "best_attainable_p": best, "num_networks": count},
        "statistic": {
            "name": f"{label}, the trained network on the same images",
            "value": STATISTICS_BLOCK_VALUE[name],
        },
        "effect": effect_from_stat(EFFECT_NAME, effect["difference"]),
        "test": {
            "name": "exact one-sided rank test among the random-init networks",
            "p_value": p,
            "p_floor": 1 / (count + 1),
            "p_adjusted": p_adjusted,
            "correction": "Holm",
            "family_size": 2,
        },
        "seed": None,
        "notes": notes,
    }


STATISTICS_BLOCK_VALUE = {"kappa_vector": 2.0, "walsh_kappa_vector": 12.0}
TESTED_NAMES = ("kappa_vector", "walsh_kappa_vector")
KAPPA_VECTOR_CLAIM = (
    "vector projection, Möbius basis: training changes κ^v (the trained network against the random-init networks)"
)
WALSH_CLAIM = (
    "vector projection, Walsh basis: training changes κ_W^v (the trained network against the random-init networks)"
)
NO_POWER = "no power: with 3 null networks and 2 tests the smallest attainable Holm-adjusted p is 0.5 > α = 0.05"
RANK_ENTRIES = [
    rank_entry(
        "kappa_vector",
        KAPPA_VECTOR_CLAIM,
        "κ^v",
        "cannot tell",
        3,
        0.75,
        1.0,
        [
            NO_POWER,
            "trained 2; the 3 random-init networks: mean 2.5, range [1.5, 4]; direction stated before the run: trained lower",
        ],
    ),
    rank_entry(
        "walsh_kappa_vector",
        WALSH_CLAIM,
        "κ_W^v",
        "cannot tell",
        3,
        0.75,
        1.0,
        [
            NO_POWER,
            "trained 12; the 3 random-init networks: mean 12.5, range [11.5, 14]; direction stated before the run: "
            "trained lower",
        ],
    ),
]


def random_init(runs: list[tuple[dict, dict]]) -> dict:
    """The nulls' spectra: mean over networks with the bootstrap over networks (seed 0), and their valid images' κ."""
    block = {}
    for projection in ("vector", "scalar"):
        spectra = np.array([summary["projections"][projection]["mean_spectrum"]["mean"] for summary, _ in runs])
        kappas = np.concatenate([arrays[f"kappa_{projection}"][arrays["valid"]] for _, arrays in runs])
        block[projection] = {
            "mean_spectrum": bootstrap_mean_ci_rows(spectra, seed=0),
            "kappa_distribution": kappa_distribution(kappas, L),
        }
    return {"config": {"arch": "resnet18", "weights": "random"}, "projections": block}


def test_the_between_network_summary_whole() -> None:
    result = compared()
    run_id = hashlib.sha256(json.dumps(["trained", "run-3", "run-1", "run-2", "run-7", "run-8"]).encode()).hexdigest()
    expected = {
        "experiment": "2N",
        "question": QUESTION,
        "config": {
            "trained_summary": "t.json",
            "seeds_dir": "seeds",
            "run_id": run_id,
            "schema_version": SCHEMA_VERSION,
            "arch": "resnet18",
            "num_blocks": 3,
            "trained_run_id": "trained",
            "sample_index": "list.json",
            "image_positions": [0, 1, 2],
            "batchnorm_calibration": CALIBRATION,
            "seeds": [3, 1, 2, 7, 8],
            "alpha": 0.05,
            "direction": "lower",
            "direction_source": DIRECTION_SOURCE,
            "input_fraction": 0.01,
            "tested": ["kappa_vector", "walsh_kappa_vector"],
        },
        "num_seeds": 5,
        "num_null_networks": 3,
        "num_images_per_network": 3,
        "trained": {"means": TRAINED_MEANS, "trunk_energy_relative_spread": 0.2},
        "networks": NETWORKS,
        "statistics": STATISTICS_BLOCK,
        "random_init": random_init(world()[:3]),
        "verdicts": [INPUT_ENTRY, *RANK_ENTRIES],
    }
    assert set(result) == set(expected)
    for key in expected:
        if key != "networks":
            assert result[key] == expected[key], key
    assert len(result["networks"]) == len(NETWORKS)
    for actual, wanted in zip(result["networks"], NETWORKS):
        nan_free = {name: value for name, value in wanted["means"].items() if np.isfinite(value)}
        assert {name: value for name, value in actual["means"].items() if name in nan_free} == nan_free
        assert [name for name, value in actual["means"].items() if not np.isfinite(value)] == [
            name for name in wanted["means"] if name not in nan_free
        ]
        assert {**actual, "means": None} == {**wanted, "means": None}


def test_no_null_at_all_gives_the_input_verdict_alone_and_the_spectra_of_every_seed() -> None:
    seeds = [seed_run(seed, 1.0 + seed, 1e-6, 1, [0.2 * seed, 0.5, 0.5 - 0.2 * seed]) for seed in (1, 2)]
    result = compared(seeds)
    assert result["num_null_networks"] == 0
    assert [entry["id"] for entry in result["verdicts"]] == ["null_input_function"]
    assert result["verdicts"][0]["notes"] == [
        "0 of 2 seeds are nulls; the trained network's spread is 0.2, the threshold 0.002",
        "left out of the null: seed 1 (trunk-energy spread below the threshold), seed 2 (trunk-energy spread below the threshold)",
    ]
    assert result["random_init"] == random_init(seeds)
    empty = {
        "networks": [],
        "mean": None,
        "min": None,
        "max": None,
        "networks_below": 0,
        "effect": None,
        "rank_p": None,
    }
    assert result["statistics"] == {name: {"trained": TRAINED_MEANS[name], **empty} for name in NAMES}


def test_every_seed_a_null_holds_with_one_note() -> None:
    seeds = world()[:3]
    entry = compared(seeds)["verdicts"][0]
    assert entry == {
        **INPUT_ENTRY,
        "decision": "holds",
        "statistic": {**INPUT_ENTRY["statistic"], "value": pytest.approx(0.02, rel=1e-12)},
        "notes": ["3 of 3 seeds are nulls; the trained network's spread is 0.2, the threshold 0.002"],
    }


def many_seeds(count: int, below: int) -> list[tuple[dict, dict]]:
    """``count`` nulls, the first ``below`` of them below the trained κ^v = 2 (κ_W^v: none below 12)."""
    seeds = []
    for seed in range(1, count + 1):
        summary, arrays = seed_run(seed, 3.0 + seed / 64, 0.1, 9, [0.3, 0.3, 0.4])
        if seed <= below:
            arrays["kappa_vector"] = arrays["kappa_vector"] - 2.0
        seeds.append((summary, arrays))
    return seeds


@pytest.mark.parametrize(
    "below, p, adjusted, walsh_adjusted, decision",
    [
        (0, 1 / 40, 2 / 40, 2 / 40, "holds"),  # both at the floor: Holm 2/40 = α exactly
        (1, 2 / 40, 2 / 40, 2 / 40, "holds"),  # the step-down: max(2 · 1/40, 1 · 2/40) = α
        (2, 3 / 40, 3 / 40, 2 / 40, "cannot tell"),  # 3/40 > α with power: no margin, never fails
    ],
)
def test_rank_verdicts_with_power_whole(
    below: int, p: float, adjusted: float, walsh_adjusted: float, decision: str
) -> None:
    result = compared(many_seeds(39, below))
    values = [3.0 + seed / 64 - (2.0 if seed <= below else 0.0) for seed in range(1, 40)]
    walsh = [13.0 + seed / 64 for seed in range(1, 40)]
    kappa_note = (
        f"trained 2; the 39 random-init networks: mean {float(np.mean(values)):.3g}, range [{min(values):.3g}, "
        f"{max(values):.3g}]; direction stated before the run: trained lower"
    )
    walsh_note = (
        f"trained 12; the 39 random-init networks: mean {float(np.mean(walsh)):.3g}, range [{min(walsh):.3g}, "
        f"{max(walsh):.3g}]; direction stated before the run: trained lower"
    )
    entries = result["verdicts"][1:]
    assert entries == [
        rank_entry(
            "kappa_vector",
            KAPPA_VECTOR_CLAIM,
            "κ^v",
            decision,
            39,
            p,
            pytest.approx(adjusted),
            [kappa_note],
            effect_of(2.0, values),
        ),
        rank_entry(
            "walsh_kappa_vector",
            WALSH_CLAIM,
            "κ_W^v",
            "holds",
            39,
            1 / 40,
            pytest.approx(walsh_adjusted),
            [walsh_note],
            effect_of(12.0, walsh),
        ),
    ]
    assert result["statistics"]["kappa_vector"]["networks_below"] == below


def test_the_trained_network_without_spread_gives_an_infinite_ratio() -> None:
    summary, arrays = world()[0]
    entry = network_record(summary, arrays, 0.0)
    assert entry["spread_ratio"] == float("inf")
    assert entry["input_function"] and entry["null"]


def test_per_network_means_read_valid_finite_rows_at_the_positions() -> None:
    summary, arrays = trained_run()
    assert per_network_means(arrays, np.array([2, 3, 1])) == TRAINED_MEANS
    every_valid = per_network_means(arrays)  # rows 0, 1, 2, 4
    assert every_valid["kappa_vector"] == pytest.approx((1000 + 2.25 + 1.75 + 1000) / 4)
    assert every_valid["cancellation_ratio_vector"] == pytest.approx((1000 + 72.25 + 1000) / 3)
    nothing = per_network_means(arrays, np.array([3]))  # the one invalid row
    assert all(np.isnan(value) for value in nothing.values()) and list(nothing) == NAMES


def test_shared_positions_follow_the_seeds_order_and_name_a_missing_image() -> None:
    _, arrays = trained_run()
    assert shared_positions(arrays, np.array([0, 1, 2])).tolist() == [2, 3, 1]
    assert shared_positions(arrays, np.array([3, 4])).tolist() == [4, 0]
    message = (
        "the trained run did not evaluate image 6 of the sample list, which the seeds evaluated; run the seeds on the "
        "first images of the trained run's list (--limit)"
    )
    with pytest.raises(PipelineError) as raised:
        shared_positions(arrays, np.array([0, 6, 7]))
    assert str(raised.value) == message


# ---- the tables and the REPORT

STATISTICS_HEADERS = [
    "statistic",
    "basis",
    "trained network",
    "random-init networks: mean [min, max]",
    "networks below the trained value",
    "trained − networks' mean [95 % CI over networks]; z",
    "rank p (one-sided, trained lower)",
    "role",
]
STATISTICS_TABLE = [
    ["κ^v", "Möbius", "2", "2.5 [1.5, 4]", "1 of 3", effect_text(2.0, [1.5, 2.0, 4.0]), "0.75", "tested (Holm)"],
    [
        "κ_W^v",
        "Walsh",
        "12",
        "12.5 [11.5, 14]",
        "1 of 3",
        effect_text(12.0, [11.5, 12.0, 14.0]),
        "0.75",
        "tested (Holm)",
    ],
    [
        "κ^s",
        "Möbius",
        "22",
        "22.5 [21.5, 24]",
        "1 of 3",
        effect_text(22.0, [21.5, 22.0, 24.0]),
        "—",
        "described (not tested)",
    ],
    [
        "κ_W^s",
        "Walsh",
        "32",
        "32.5 [31.5, 34]",
        "1 of 3",
        effect_text(32.0, [31.5, 32.0, 34.0]),
        "—",
        "described (not tested)",
    ],
    [
        "C≤3 (vector)",
        "Möbius",
        "42",
        "42.5 [41.5, 44]",
        "1 of 3",
        effect_text(42.0, [41.5, 42.125, 44.0]),
        "—",
        "described (not tested)",
    ],
    [
        "C≤3 (vector)",
        "Walsh",
        "52",
        "52.5 [51.5, 54]",
        "1 of 3",
        effect_text(52.0, [51.5, 52.0, 54.0]),
        "—",
        "described (not tested)",
    ],
    [
        "trunk share (vector)",
        "Möbius",
        "62",
        "63 [62, 64]",
        "0 of 2",
        effect_text(62.0, [62.0, 64.0]),
        "—",
        "described (not tested)",
    ],
    [
        "cancellation ratio (vector)",
        "Möbius vs Walsh",
        "72.2",
        "72.5 [71.5, 74]",
        "2 of 3",
        effect_text(72.25, [71.5, 72.0, 74.0]),
        "—",
        "described (not tested)",
    ],
]
NETWORK_HEADERS = ["seed", "distinct predictions", "trunk-energy spread / trained", "resolved", "null"] + [
    "κ^v (Möbius)",
    "κ_W^v (Walsh)",
]
NETWORK_TABLE = [
    ["3", "5", "0.02", "yes", "yes", "1.5", "11.5"],
    ["1", "6", "0.5", "yes", "yes", "2", "12"],
    ["2", "7", "1.5", "yes", "yes", "4", "14"],
    ["7", "1", "5.00e-06", "yes", "no", "0", "10"],
    ["8", "4", "0.25", "no", "no", "0.5", "10.5"],
]
DESIGN = (
    "5 random-init resnet18 networks (seeds 1–8), 3 of them nulls by the input rule, each evaluated under all 2^3 masks "
    "on the 3 images at positions 0–2 of `list.json`, the same images the trained network is read on; each network's "
    "batch-norm statistics were re-estimated on the 10 images at positions 3–12 of the same list, disjoint from the "
    "evaluated ones. Few images per network and many networks: the question is between networks, and the rank test's "
    "smallest p, 1/(n + 1), must clear α after Holm over 2 tests, so at least n = 39 null networks were needed, within "
    "about 20 minutes of one CPU core. The direction (trained lower) was stated before the seeds ran, from "
    + DIRECTION_SOURCE
    + "."
)


def table(headers: list[str], rows: list[list[str]]) -> str:
    return "\n".join(
        ["| " + " | ".join(headers) + " |", "|" + "|".join(["---"] * len(headers)) + "|"]
        + ["| " + " | ".join(row) + " |" for row in rows]
    )


def test_statistics_table_whole() -> None:
    assert statistics_rows(compared()) == (STATISTICS_HEADERS, STATISTICS_TABLE)


def test_statistics_table_without_null_networks_shows_dashes() -> None:
    seeds = [seed_run(1, 2.0, 1e-6, 1, [0.3, 0.3, 0.4])]
    rows = statistics_rows(compared(seeds))[1]
    assert rows[0] == ["κ^v", "Möbius", "2", "—", "0 of 0", "—", "—", "tested (Holm)"]
    assert rows[7] == [
        "cancellation ratio (vector)",
        "Möbius vs Walsh",
        "72.2",
        "—",
        "0 of 0",
        "—",
        "—",
        "described (not tested)",
    ]


def test_network_table_whole() -> None:
    assert network_rows(compared()) == (NETWORK_HEADERS, NETWORK_TABLE)


def test_design_sentence_whole() -> None:
    assert design_sentence(compared()) == DESIGN


def report(wall_line: list[str]) -> str:
    kappa_effect, walsh_effect = (
        format_stat(STATISTICS_BLOCK[name]["effect"]["difference"], percent=False) for name in TESTED_NAMES
    )
    kappa_evidence = (
        f"κ^v, the trained network on the same images = 2; {EFFECT_NAME} = {kappa_effect} (95 % CI); "
        "exact one-sided rank test among the random-init networks "
        "p = 0.75, Holm over 2 tests p = 1; " + NO_POWER + "; trained 2; the 3 random-init networks: mean 2.5, range "
        "[1.5, 4]; direction stated before the run: trained lower"
    )
    walsh_evidence = (
        f"κ_W^v, the trained network on the same images = 12; {EFFECT_NAME} = {walsh_effect} (95 % CI); "
        "exact one-sided rank test among the random-init networks "
        "p = 0.75, Holm over 2 tests p = 1; " + NO_POWER + "; trained 12; the 3 random-init networks: mean 12.5, range "
        "[11.5, 14]; direction stated before the run: trained lower"
    )
    lines = [
        "# Experiment 2 — the random-init null over networks",
        "",
        f"**Question.** {QUESTION}",
        "",
        f"**Data.** {DESIGN}",
        "",
        "**Method.** Every network is reduced to one number per statistic: its mean over the shared images. The trained "
        "network's number is ranked among the null networks' (exact one-sided rank test), Holm over the tested statistics.",
        "",
        "## Result",
        "",
        table(STATISTICS_HEADERS, STATISTICS_TABLE),
        "",
        table(NETWORK_HEADERS, NETWORK_TABLE),
        "",
        "## Verdicts",
        "",
        "- every random-init network is a function of its input, resolved above round-off: **fails** — least-varying "
        "random-init network's trunk-energy spread / the trained network's = 5.00e-06; 3 of 5 seeds are nulls; the "
        "trained network's spread is 0.2, the threshold 0.002; left out of the null: seed 7 (trunk-energy spread below the threshold), seed 8 "
        "(unresolved: round-off) (rule 1).",
        f"- {KAPPA_VECTOR_CLAIM}: **cannot tell** — {kappa_evidence} (rule 2).",
        f"- {WALSH_CLAIM}: **cannot tell** — {walsh_evidence} (rule 2).",
        "",
        "Decision rules:",
        "",
        f"1. {NULL_INPUT.text}",
        f"2. {RANK.text}",
        "",
        *wall_line,
        "_Generated by `python -m experiment_2.step_14_null_compare` from `seeds/`; do not edit by hand._",
        "",
    ]
    return "\n".join(lines)


def test_report_whole_with_the_seeds_wall_time() -> None:
    text = null_markdown(compared(), "experiment_2.step_14_null_compare", "`seeds/`", wall_seconds=1234.5)
    wall = ["Wall time of the seeds' evaluation, summed over their timing.json: 1.23e+03 s.", ""]
    assert text == report(wall)


def test_report_whole_without_a_wall_time() -> None:
    assert null_markdown(compared(), "experiment_2.step_14_null_compare", "`seeds/`") == report([])


# ---- the calibration images, the refusals, the rank p


@pytest.mark.parametrize(
    "first, indices, disjoint",
    [
        (3, [0, 1, 2], True),  # the calibration starts right after the last evaluated image
        (2, [0, 1, 2], False),  # it starts on the last evaluated image
        (5, [4, 0, 1], True),  # the largest evaluated position counts, not the last listed
        (4, [4, 0, 1], False),
        (3, [], False),  # no evaluated image: nothing to be disjoint from
    ],
)
def test_calibration_disjoint_at_its_edge(first: int, indices: list[int], disjoint: bool) -> None:
    config = {"batchnorm_calibration": {"images": 10, "positions": [first, first + 10]}}
    assert calibration_disjoint(config, indices) is disjoint


def test_calibration_without_a_record_is_not_disjoint() -> None:
    assert calibration_disjoint({}, [0]) is False
    assert calibration_disjoint({"batchnorm_calibration": None}, [0]) is False
    assert calibration_disjoint({"batchnorm_calibration": {"images": 10}}, [0]) is False


def refusal(seeds, paths) -> str:
    with pytest.raises(PipelineError) as raised:
        check_seed_runs(seeds, paths)
    return str(raised.value)


def test_seed_run_refusals_whole() -> None:
    first, second = world()[:2]
    assert refusal([], []) == "--seeds-dir: no seed_*/summary.json found; run experiment_2.step_13_null_seeds first"
    overlapping = (
        {**second[0], "config": {**second[0]["config"], "batchnorm_calibration": {"positions": [2, 12]}}},
        second[1],
    )
    assert refusal([first, overlapping], ["a/summary.json", "b/summary.json"]) == (
        "b/summary.json: its batch-norm statistics were not estimated on images disjoint from the evaluated ones; rerun "
        "it with experiment_2.step_13_null_seeds (--calibrate-batchnorm N takes the N images after the evaluated ones)"
    )
    other = (second[0], {**second[1], "index": np.array([0, 1, 3])})
    other[0]["config"]["batchnorm_calibration"] = {"positions": [4, 14]}
    assert refusal([first, other], ["a/summary.json", "b/summary.json"]) == (
        "b/summary.json: evaluated other images than a/summary.json; run every seed with the same --limit"
    )
    assert refusal([first, second, first], ["a", "b", "c"]) == "c: a second run of seed 3; keep one folder per seed"
    check_seed_runs(world(), [f"s{seed}" for seed in range(5)])  # one design: accepted


def test_rank_p_directions_and_the_attainable_floor() -> None:
    assert rank_p_value(2.0, [1.0, 2.0, 3.0], "lower") == 3 / 4
    assert rank_p_value(2.0, [1.0, 2.0, 3.0], "higher") == 3 / 4
    assert rank_p_value(2.0, [1.0, 1.5, 3.0], "higher") == 2 / 4
    assert rank_p_value(2.0, [1.0, 1.5, 3.0]) == 3 / 4  # lower is the stated direction
    with pytest.raises(ValueError, match=r"^direction 'up': use lower or higher$"):
        rank_p_value(2.0, [1.0], "up")
    assert best_attainable_p(39, 2) == 2 / 40
    assert best_attainable_p(1, 2) == 1.0  # capped: 2/2
    assert best_attainable_p(0, 2) == 1.0  # 2/1 capped
    assert best_attainable_p(3, 1) == 1 / 4


# ---- the readers' edges: older summaries, stored dtypes, empty statistics


def test_a_summary_without_a_walsh_block_is_judged_on_the_mobius_floor_alone() -> None:
    summary, arrays = world()[0]
    older = {key: value for key, value in summary.items() if key != "walsh"}
    assert network_record(older, arrays, TRAINED_SPREAD)["resolved"] is True
    unresolved = {**older, "roundoff": {"vector": {"unresolved_orders": []}, "scalar": {"unresolved_orders": [2]}}}
    assert network_record(unresolved, arrays, TRAINED_SPREAD)["resolved"] is False


def test_valid_flags_stored_as_integers_are_read_as_a_mask() -> None:
    """0/1 flags (a uint8 column) select the same images as booleans, in the means and in the pooled κ."""
    seeds = world()
    flagged = [(summary, {**arrays, "valid": arrays["valid"].astype(np.uint8)}) for summary, arrays in seeds]
    summary, arrays = trained_run()
    as_ints = compare_networks(summary, {**arrays, "valid": arrays["valid"].astype(np.uint8)}, flagged, SOURCES)
    as_bools = compared(seeds)
    assert as_ints["trained"] == as_bools["trained"]
    assert [record["means"]["kappa_vector"] for record in as_ints["networks"]] == [1.5, 2.0, 4.0, 0.0, 0.5]
    assert as_ints["random_init"] == random_init(seeds[:3])


def test_float32_statistics_are_averaged_in_float64() -> None:
    values = np.array([0.1, 0.2, 0.7], dtype=np.float32)
    arrays = {name: values for name in STATISTICS}
    arrays.update(index=np.arange(3), valid=np.ones(3, dtype=bool))
    mean = float(np.mean(values.astype(np.float64)))
    assert mean != float(np.mean(values))  # the float32 mean differs
    assert per_network_means(arrays) == {name: mean for name in STATISTICS}


def test_a_statistic_with_no_finite_value_is_nan_quietly() -> None:
    arrays = {name: np.array([np.nan, np.nan]) for name in STATISTICS}
    arrays.update(index=np.arange(2), valid=np.ones(2, dtype=bool))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = per_network_means(arrays)
    assert list(result) == NAMES and all(np.isnan(value) for value in result.values())


def test_float32_seed_values_are_compared_in_float64() -> None:
    """float32(0.1) lies above the float64 0.1: not at or below it, though equal to it in float32."""
    seeds = np.array([0.1, 5.0], dtype=np.float32)
    assert rank_p_value(0.1, seeds) == 1 / 3
    assert rank_p_value(0.1, seeds, "higher") == 1.0


def test_calibration_disjoint_with_one_evaluated_image() -> None:
    assert calibration_disjoint({"batchnorm_calibration": {"positions": [1, 11]}}, [0]) is True
    assert calibration_disjoint({"batchnorm_calibration": {"positions": [0, 10]}}, [0]) is False


def test_the_nulls_mean_spectrum_is_bootstrapped_over_networks_with_seed_zero() -> None:
    """Twelve nulls with distinct spectra, so the percentile ends depend on the resamples (with three networks they fall
    on the same few attainable means whatever the seed)."""
    seeds = [seed_run(seed, 3.0, 0.1, 9, [0.05 * seed, 0.5, 0.5 - 0.05 * seed]) for seed in range(1, 13)]
    block = compared(seeds)["random_init"]
    spectra = np.array([summary["projections"]["vector"]["mean_spectrum"]["mean"] for summary, _ in seeds])
    assert block == random_init(seeds)
    assert block["projections"]["vector"]["mean_spectrum"] == bootstrap_mean_ci_rows(spectra, seed=0)
    assert bootstrap_mean_ci_rows(spectra, seed=1) != bootstrap_mean_ci_rows(spectra, seed=0)
    assert random_init_block(seeds, 3)["projections"]["vector"]["mean_spectrum"] == bootstrap_mean_ci_rows(
        spectra, seed=3
    )
