"""The fourth fault round (identity, not descriptions): each root cause planted in a copy of a committed results
file, and the one-line refusal (or the right result) shown."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

from experiment_1.errors import PipelineError
from experiment_1.files import read_json
from experiment_1.report import check_verdicts
from paper.committed_runs import committed_glob
from paper.experiments import rules_of

REPO = Path(__file__).resolve().parents[2]
EXP1 = "experiment_1/results_efficientnet_lite0_sample"
EXP3 = "experiment_3/results_efficientnet_lite0_sample"


def entry_of(document: dict, verdict_id: str) -> dict:
    return next(entry for entry in document["verdicts"] if entry["id"] == verdict_id)


def planted(relative: str, verdict_id: str, **changes: object) -> dict:
    document = copy.deepcopy(read_json(REPO / relative))
    entry_of(document, verdict_id).update(changes)
    return document


# --- 2: one verdict checker, every rule re-run on the numbers of its summary ---------------------------------------


def test_every_committed_results_file_passes_the_one_checker() -> None:
    for path in committed_glob(REPO, "experiment_*/results*/*.json") + committed_glob(REPO, "paper/results*/*.json"):
        check_verdicts(read_json(path), path, rules_of(read_json(path)))


def flipped(decision: str) -> str:
    return "fails" if decision == "holds" else "holds"


@pytest.mark.parametrize(
    "relative, verdict_id, why",
    [
        (f"{EXP3}/summary.json", "captured_energy.vector", "CI above / below the original study's number"),
        (f"{EXP3}/summary.json", "controls_bound.vector", "CI below the bound the seed reports"),
        (f"{EXP3}/summary.json", "empty_top1.vector", "CI of a share against its threshold"),
        (f"{EXP1}/summary.json", "naive.misses", "CI at or above a threshold"),
        (f"{EXP1}/summary.json", "first_order.interactions", "CI above a threshold"),
        (f"{EXP1}/summary.json", "mobius.exact", "a worst-case error against its tolerance"),
        (
            "experiment_2/results_3c_efficientnet_lite0_native/summary_all.json",
            "seed_endpoint",
            "CI at or below the seed's number",
        ),
    ],
)
def test_a_flipped_decision_contradicts_its_own_numbers(relative: str, verdict_id: str, why: str) -> None:
    document = read_json(REPO / relative)
    decision = entry_of(document, verdict_id)["decision"]
    with pytest.raises(
        PipelineError, match=f"verdict {verdict_id} says '{flipped(decision)}' but its rule .* gives '{decision}'"
    ):
        check_verdicts(planted(relative, verdict_id, decision=flipped(decision)), Path(relative), rules_of(document))


def test_a_cannot_tell_that_should_be_holds_is_refused() -> None:
    relative = f"{EXP3}/summary.json"
    assert entry_of(read_json(REPO / relative), "orders.vector")["decision"] == "holds"
    with pytest.raises(PipelineError, match="verdict orders.vector says 'cannot tell' but its rule .* gives 'holds'"):
        check_verdicts(
            planted(relative, "orders.vector", decision="cannot tell"), Path(relative), rules_of({"experiment": 3})
        )


def test_a_flipped_threshold_on_a_worst_case_error_is_refused() -> None:
    relative = f"{EXP1}/summary.json"
    entry = entry_of(read_json(REPO / relative), "mobius.exact")
    rules = rules_of({"experiment": 1})
    with pytest.raises(PipelineError, match="mobius.exact: its parameters.tolerance 1e-12 is not 0.0001"):
        check_verdicts(
            planted(relative, "mobius.exact", parameters={**entry["parameters"], "tolerance": 1e-12}),
            Path(relative),
            rules,
        )
    with pytest.raises(PipelineError, match="mobius.exact: its statistic.value 0.5 is not "):
        check_verdicts(
            planted(relative, "mobius.exact", statistic={**entry["statistic"], "value": 0.5}), Path(relative), rules
        )


def test_a_verdict_whose_effect_block_was_removed_is_refused_not_skipped() -> None:
    relative = f"{EXP3}/summary.json"
    with pytest.raises(
        PipelineError, match="verdict captured_energy.vector says .* but lacks effect.ci_low, which its rule .* reads"
    ):
        check_verdicts(
            planted(relative, "captured_energy.vector", effect=None), Path(relative), rules_of({"experiment": 3})
        )


def test_a_verdict_beside_non_finite_source_numbers_is_refused() -> None:
    relative = f"{EXP3}/summary.json"
    document = planted(relative, "empty_top1.vector")
    document["small_k"]["vector"]["top1_is_empty_set"]["ci_low"] = float("nan")  # the source the rule reads
    entry_of(document, "empty_top1.vector")["effect"]["ci_low"] = float("nan")  # and the verdict's copy of it
    decision = entry_of(document, "empty_top1.vector")["decision"]
    with pytest.raises(
        PipelineError, match=f"verdict empty_top1.vector says '{decision}' but its rule .* gives 'n/a — non-finite'"
    ):
        check_verdicts(document, Path("summary.json"), rules_of(document))


def test_a_plot_step_refuses_a_contradicted_verdict_before_it_writes(tmp_path: Path, expect_one_line) -> None:
    from experiment_3 import step_2_plot

    folder = tmp_path / "results"
    shutil.copytree(REPO / EXP3, folder)
    document = read_json(folder / "summary.json")
    entry = entry_of(document, "captured_energy.vector")
    entry["decision"] = flipped(entry["decision"])
    (folder / "summary.json").write_text(json.dumps(document))
    (folder / "REPORT.md").unlink()
    line = expect_one_line(step_2_plot.main, ["--summary", str(folder / "summary.json")])
    assert f"{folder / 'summary.json'}: verdict captured_energy.vector" in line
    assert not (folder / "REPORT.md").exists()


# --- 1 and 3: no identity, no trust; counts and schema from the run --------------------------------------------


def copy_results(root: Path, *folders: str) -> None:
    for folder in folders:
        shutil.copytree(REPO / folder, root / folder)


def rewrite(path: Path, change) -> None:
    document = read_json(path)
    change(document)
    path.write_text(json.dumps(document))


def test_a_summary_without_its_run_id_is_refused_by_a_plot_step_naming_the_rebuild(
    tmp_path: Path, expect_one_line
) -> None:
    from experiment_1 import step_4_plot

    copy_results(tmp_path, EXP1)
    path = tmp_path / EXP1 / "summary.json"
    rewrite(path, lambda document: document["config"].pop("run_id"))
    line = expect_one_line(step_4_plot.main, ["--summary", str(path)])
    assert (
        f"{path}: lacks config.run_id" in line
        and "python -m experiment_1.step_3_evaluate" in line
        and f"paper.resummarize --summary {path}" in line
    )


def test_per_image_arrays_are_never_paired_with_a_summary_without_its_run_id(tmp_path: Path) -> None:
    from experiment_1.files import load_run_arrays

    summary = read_json(REPO / EXP1 / "summary.json")
    summary["config"].pop("run_id")
    with pytest.raises(PipelineError, match="summary.json: lacks config.run_id"):
        load_run_arrays(REPO / EXP1 / "per_image.npz", summary, tmp_path / "summary.json")


def test_make_tables_refuses_a_summary_without_its_run_id_and_an_older_schema(tmp_path: Path, expect_one_line) -> None:
    from paper import make_tables

    copy_results(tmp_path, EXP3)
    path = tmp_path / EXP3 / "summary.json"
    rewrite(path, lambda document: document["config"].pop("run_id"))
    line = expect_one_line(make_tables.main, ["--root", str(tmp_path), "--all-runs"])
    assert f"{path}: lacks config.run_id" in line and "experiment_3.step_1_evaluate" in line
    rewrite(path, lambda document: document["config"].update(run_id="r" * 64, schema_version=1))
    line = expect_one_line(make_tables.main, ["--root", str(tmp_path), "--all-runs"])
    assert f"{path}: written with schema version 1" in line
    assert not (tmp_path / "tables.md").exists()


def test_a_limit_run_of_the_same_network_is_refused_by_the_paper(tmp_path: Path) -> None:
    from paper.checks import check_one_network
    from paper.make_tables import PAPER_SOURCES, WHOLE_LIST_SOURCES

    source = f"{EXP1}/summary.json"
    copy_results(tmp_path, EXP1, "experiment_2/results_efficientnet_lite0_sample")
    shutil.copy(
        REPO / "experiment_1/sample_index_sample_test.json", tmp_path / "experiment_1/sample_index_sample_test.json"
    )
    check_one_network(tmp_path, PAPER_SOURCES, WHOLE_LIST_SOURCES)
    rewrite(
        tmp_path / source,
        lambda document: (document.update(num_images=4, num_valid=4), document["config"].update(limit=4)),
    )
    with pytest.raises(
        PipelineError, match=f"{source}: its run evaluated 4 images \\(--limit 4\\), but its sample list .* holds 250"
    ):
        check_one_network(tmp_path, PAPER_SOURCES, WHOLE_LIST_SOURCES)


def test_an_impossible_image_count_is_one_line_not_an_overflow(tmp_path: Path, expect_one_line) -> None:
    from experiment_1 import step_4_plot
    from paper.checks import checked_json

    copy_results(tmp_path, EXP1)
    path = tmp_path / EXP1 / "summary.json"
    rewrite(path, lambda document: document.update(num_valid=10**400))
    line = expect_one_line(step_4_plot.main, ["--summary", str(path)])
    assert f"{path}: num_valid is a 401-digit number, not a count of images" in line
    with pytest.raises(PipelineError, match="num_valid is a 401-digit number"):
        checked_json(path)


# --- the misleading hints -------------------------------------------------------------------------------------


def test_a_moved_module_is_named_as_missing_not_told_to_run_elsewhere() -> None:
    from experiment_1.network.registry import load_factory

    with pytest.raises(PipelineError) as refused:
        load_factory("experiment_2.no_such_module:build")
    assert "no module experiment_2.no_such_module on the import path (moved, renamed or misspelled?)" in str(
        refused.value
    )
    assert "folder that holds it" not in str(refused.value)


def test_a_command_line_name_is_not_told_a_results_file_supplied_it(tmp_path: Path) -> None:
    from paper.depth_ladder import load_rung

    with pytest.raises(PipelineError) as refused:
        load_rung(tmp_path, "../outside", "_sample")
    assert str(refused.value).startswith("--ladder '../outside': ") and "results file" not in str(refused.value)


# --- 4: a manifest that is a manifest ---------------------------------------------------------------------------


def test_make_tables_without_its_manifest_refuses_or_says_all_runs(tmp_path: Path, expect_one_line, capsys) -> None:
    from paper import make_tables

    copy_results(tmp_path, EXP3)
    line = expect_one_line(make_tables.main, ["--root", str(tmp_path)])
    assert f"{tmp_path / 'paper' / 'committed_runs.txt'}: not found" in line and "--all-runs" in line
    assert not (tmp_path / "tables.md").exists()
    make_tables.main(["--root", str(tmp_path), "--all-runs"])
    assert "--all-runs: " in capsys.readouterr().out and (tmp_path / "tables.md").exists()


@pytest.mark.parametrize("linked", ["folder", "file"])
def test_a_committed_run_that_is_a_symlink_to_outside_is_refused(tmp_path: Path, expect_one_line, linked: str) -> None:
    from paper import make_tables

    root, outside = tmp_path / "repo", tmp_path / "outside"
    copy_results(outside, EXP3)
    (root / "paper").mkdir(parents=True)
    (root / "paper" / "committed_runs.txt").write_text(f"{EXP3}\n")
    if linked == "folder":
        (root / EXP3).parent.mkdir(parents=True)
        (root / EXP3).symlink_to(outside / EXP3)
    else:
        (root / EXP3).mkdir(parents=True)
        (root / EXP3 / "summary.json").symlink_to(outside / EXP3 / "summary.json")
    line = expect_one_line(make_tables.main, ["--root", str(root)])
    assert ": a symbolic link (to " in line and str(root / EXP3) in line
    assert not (root / "tables.md").exists()


@pytest.mark.parametrize("linked", ["folder", "file"])
def test_a_plot_step_refuses_a_symlinked_summary_or_results_folder(
    tmp_path: Path, expect_one_line, linked: str
) -> None:
    from experiment_3 import step_2_plot

    real, folder = tmp_path / "real", tmp_path / "results"
    shutil.copytree(REPO / EXP3, real)
    (real / "REPORT.md").unlink()
    if linked == "folder":
        folder.symlink_to(real)
        link = folder
    else:
        folder.mkdir()
        (folder / "summary.json").symlink_to(real / "summary.json")
        link = folder / "summary.json"
    line = expect_one_line(step_2_plot.main, ["--summary", str(folder / "summary.json")])
    assert line.startswith(f"error: {link}: ") and f"is a symbolic link (to {real}" in line
    assert not (real / "REPORT.md").exists() and not (folder / "REPORT.md").exists()


# --- 6: one writer per file; 7a: a priori by identity and commit; the sweep without limit.method ----------------

HELD = "experiment_2/results_3c_resnet18_first_block_held"
FITTED = "experiment_2/results_3c_resnet18_native/summary_all.json"


def test_the_law_test_and_the_lambda_plot_write_reports_of_their_own_names() -> None:
    from experiment_2.limit import law_test

    assert law_test.REPORT_NAME != "REPORT.md"
    assert (REPO / HELD / law_test.REPORT_NAME).exists() and not (REPO / HELD / "REPORT.md").exists()
    assert f"--sweep {HELD}/summary_all.json" in (REPO / "Makefile").read_text()


def test_an_edited_seed_does_not_turn_the_laws_own_data_into_a_test(tmp_path: Path, expect_one_line) -> None:
    from experiment_2 import step_7_law_test

    shutil.copytree(REPO / Path(FITTED).parent, tmp_path / "fitted")
    rewrite(tmp_path / "fitted" / "summary_all.json", lambda document: document["config"].update(seed=1))
    line = expect_one_line(
        step_7_law_test.main,
        ["--sweep", str(tmp_path / "fitted" / "summary_all.json"), "--output-dir", str(tmp_path / "out")],
    )
    assert "the refined law's own data" in line and not (tmp_path / "out").exists()


def test_a_sweep_run_before_the_prediction_was_committed_is_not_a_priori(tmp_path: Path, expect_one_line) -> None:
    from experiment_2 import step_7_law_test
    from experiment_2.limit.laws import PREDICTION_COMMIT

    shutil.copytree(REPO / HELD, tmp_path / "held")
    parent = (
        __import__("subprocess")
        .run(["git", "rev-parse", f"{PREDICTION_COMMIT}^"], cwd=REPO, capture_output=True, text=True)
        .stdout.strip()
    )
    rewrite(tmp_path / "held" / "summary_all.json", lambda document: document["config"].update(git_commit=parent))
    line = expect_one_line(
        step_7_law_test.main,
        ["--sweep", str(tmp_path / "held" / "summary_all.json"), "--output-dir", str(tmp_path / "out")],
    )
    assert (
        f"not an a priori test of the refined law: it ran at commit {parent[:12]}, before the prediction was committed"
        in line
    )


def test_a_sweep_without_limit_method_is_one_line(tmp_path: Path, expect_one_line) -> None:
    from experiment_2 import step_7_law_test

    shutil.copytree(REPO / HELD, tmp_path / "held")
    rewrite(tmp_path / "held" / "summary_all.json", lambda document: document["limit"].pop("method"))
    line = expect_one_line(
        step_7_law_test.main,
        ["--sweep", str(tmp_path / "held" / "summary_all.json"), "--output-dir", str(tmp_path / "out")],
    )
    assert "summary_all.json: lacks limit.method" in line
