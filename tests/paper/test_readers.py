"""Readers that check what they combine: the tables, the paper's macros and verdicts, its figures,
the depth ladder and the 3C report refuse (one line) what does not belong together — an edited
verdict, a verdict beside a NaN, another network's run in the paper, per-image arrays of another
run, one network twice or out of order — and leave a deleted run's figure out."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from experiment_1.errors import PipelineError
from experiment_1.files import RUN_ID_ARRAY, atomic_save_npz, load_run_arrays, read_json
from paper import depth_ladder, figures, make_tables
from paper.checks import check_one_network, check_verdicts
from paper.committed_runs import committed_glob
from paper.experiments import rules_of
from paper.macros import EXP1, EXP2

REPO = Path(__file__).resolve().parents[2]
EXP3 = "experiment_3/results_efficientnet_lite0_sample"


def committed_verdicts() -> list[Path]:
    return [
        path
        for path in committed_glob(REPO, "experiment_*/results*/*.json") + committed_glob(REPO, "paper/results*/*.json")
        if '"decision"' in path.read_text()
    ]


def test_every_committed_verdict_passes_the_checks() -> None:
    paths = committed_verdicts()
    assert len(paths) >= 5
    for path in paths:
        check_verdicts(read_json(path), path, rules_of(read_json(path)))


EXP1_SUMMARY = "experiment_1/results_efficientnet_lite0_sample/summary.json"


def planted(**changes: object) -> dict:
    """Experiment 1's committed summary with its naive-sum verdict changed."""
    document = read_json(REPO / EXP1_SUMMARY)
    next(entry for entry in document["verdicts"] if entry["id"] == "naive.misses").update(changes)
    return document


@pytest.mark.parametrize(
    "changes, expected",
    [
        ({"decision": "proven"}, "verdict naive.misses has decision 'proven', not one of holds, fails"),
        ({"decision": "cannot tell"}, "says 'cannot tell' but its rule exp1.naive_misses gives 'holds'"),
        (
            {"effect": {"name": "d", "value": 0.1, "ci_low": -0.2, "ci_high": 0.4}},
            "verdict naive.misses: its effect.ci_low -0.2 is not 522.5",
        ),
        ({"rule": "holds when the 95 % CI excludes 0, else cannot tell"}, "states another rule than its declared rule"),
        ({"id": "naive.misses_planted"}, "verdict naive.misses_planted matches no declared rule"),
    ],
)
def test_an_edited_or_unfounded_verdict_is_refused(changes: dict, expected: str) -> None:
    document = planted(**changes)
    with pytest.raises(PipelineError, match="summary.json: ") as refused:
        check_verdicts(document, Path("summary.json"), rules_of(document))
    assert expected in str(refused.value)
    check_verdicts(planted(), Path("ok.json"), rules_of(planted()))


def copy_results(root: Path, *folders: str) -> None:
    for folder in folders:
        shutil.copytree(REPO / folder, root / folder)


def test_make_tables_refuses_an_edited_verdict_naming_the_file(tmp_path: Path, expect_one_line) -> None:
    copy_results(tmp_path, EXP3)
    path = tmp_path / EXP3 / "summary.json"
    text = path.read_text()
    assert '"decision": "holds"' in text
    path.write_text(text.replace('"decision": "holds"', '"decision": "proven"', 1))
    line = expect_one_line(make_tables.main, ["--root", str(tmp_path), "--all-runs"])
    assert f"{path}: verdict" in line and "'proven'" in line
    assert not (tmp_path / "tables.md").exists()


def test_the_paper_refuses_results_of_another_network(tmp_path: Path) -> None:
    copy_results(tmp_path, str(Path(EXP1).parent), str(Path(EXP2).parent))
    check_one_network(tmp_path, [EXP1, EXP2])
    summary = read_json(tmp_path / EXP2)
    summary["config"]["arch"] = "resnet18"
    (tmp_path / EXP2).write_text(json.dumps(summary))
    with pytest.raises(
        PipelineError, match=f"not of one network: {EXP1} has arch 'efficientnet_lite0', {EXP2} has 'resnet18'"
    ):
        check_one_network(tmp_path, [EXP1, EXP2])
    summary["config"].update(arch="efficientnet_lite0", sample_list_sha256="0" * 64)
    (tmp_path / EXP2).write_text(json.dumps(summary))
    with pytest.raises(PipelineError, match="were run on different contents of it"):
        check_one_network(tmp_path, [EXP1, EXP2])


def test_a_deleted_runs_figure_is_not_included(tmp_path: Path) -> None:
    folder = Path(EXP1).parent
    copy_results(tmp_path, str(folder))
    pdf = f"{folder.as_posix()}/reconstruction_error.pdf"
    assert r"\includegraphics" in figures.figure_line("Fig", pdf, tmp_path)
    (tmp_path / folder / "summary.json").unlink()
    assert r"\figurenotrun" in figures.figure_line("Fig", pdf, tmp_path)


def test_per_image_arrays_of_another_run_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / EXP3
    copy_results(tmp_path, EXP3)
    summary = read_json(folder / "summary.json")
    assert load_run_arrays(folder / "per_image.npz", summary, folder / "summary.json")["valid"].any()
    arrays = dict(np.load(folder / "per_image.npz"))
    atomic_save_npz(folder / "per_image.npz", {**arrays, RUN_ID_ARRAY: np.array("f" * 64)})
    with pytest.raises(PipelineError, match="per_image.npz: from run ffffffffffff"):
        depth_ladder.load_rung(tmp_path, "efficientnet_lite0", "_sample")


def rung(arch: str, num_blocks: int, sample_list_sha256: str = "a" * 64) -> depth_ladder.Rung:
    summary = {
        "config": {
            "num_blocks": num_blocks,
            "sample_index": "list.json",
            "sample_list_sha256": sample_list_sha256,
            "num_images": 6,
        }
    }
    return depth_ladder.Rung(arch, summary, None, summary, None, None)


def test_the_depth_ladder_refuses_one_network_twice_or_out_of_order() -> None:
    with pytest.raises(PipelineError, match="names efficientnet_lite0 twice"):
        depth_ladder.check_ladder([rung("efficientnet_lite0", 9), rung("efficientnet_lite0", 9)])
    with pytest.raises(PipelineError, match="not ordered shallow to deep \\(L = 16 → 9\\)"):
        depth_ladder.check_ladder([rung("efficientnet_lite2", 16), rung("efficientnet_lite0", 9)])
    depth_ladder.check_ladder(
        [rung("efficientnet_lite0", 9), rung("efficientnet_lite1", 9), rung("efficientnet_lite2", 16)]
    )


def test_the_depth_ladder_pairs_images_by_the_sample_lists_content_not_its_path() -> None:
    same_path_other_content = (rung("a", 9), rung("b", 16, sample_list_sha256="b" * 64))
    assert depth_ladder._sample_list(same_path_other_content[0].spectrum) != depth_ladder._sample_list(
        same_path_other_content[1].spectrum
    )
    assert depth_ladder._sample_list(rung("a", 9).spectrum) == depth_ladder._sample_list(rung("b", 16).spectrum)
