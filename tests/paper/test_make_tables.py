"""tables.md is regenerated from the summaries alone."""

from __future__ import annotations

import json
import re
from pathlib import Path

import experiment_1.step_3_evaluate as step_3
from experiment_1.report import format_stat
from experiment_1.report.markdown import format_number
from experiment_1.step_2_sample import main as sample_main
from paper.committed_runs import allow_all_runs
from paper.make_tables import main as tables_main
from paper.tables import saturated_agreement_note

REPO = Path(__file__).resolve().parents[2]


def test_tables_are_built_from_summary_json(tiny_shards: Path, tmp_path: Path, small_input: int) -> None:
    root = tmp_path / "repo"
    index = tmp_path / "index.json"
    sample_main(["--data-dir", str(tiny_shards), "--num-images", "3", "--output", str(index)])
    results = root / "experiment_1" / "results_tiny"
    step_3.main(
        [
            "--data-dir",
            str(tiny_shards),
            "--sample-index",
            str(index),
            "--weights",
            "random",
            "--batch-size",
            "3",
            "--num-workers",
            "0",
            "--device",
            "cpu",
            "--output-dir",
            str(results),
        ]
    )
    bench = {
        "device": "cpu (2 threads)",
        "versions": {},
        "rows": [
            {
                "arch": "resnet18",
                "num_blocks": 8,
                "images": 2,
                "resolution": 224,
                "naive_masks_timed": 32,
                "tree_seconds": 2.5,
                "naive_seconds": 27.7,
                "speedup": 11.08,
                "work_ratio": 8.55,
                "max_abs_disagreement": 0.0,
            }
        ],
    }
    (root / "experiment_1" / "results_bench").mkdir(parents=True)
    (root / "experiment_1" / "results_bench" / "bench_cpu.json").write_text(json.dumps(bench))

    (root / "experiment_1" / "PERFORMANCE.md").write_text(
        "intro\n<!-- generated:benchmark (regenerated) -->\nstale row\n<!-- /generated:benchmark -->\nafter\n"
        "<!-- generated:wall-time -->\n<!-- /generated:wall-time -->\n"
    )
    (root / "README.md").write_text("<!-- generated:headline -->\nstale\n<!-- /generated:headline -->\n")
    tables_main(["--root", str(root), "--all-runs"])
    readme = (root / "experiment_1" / "PERFORMANCE.md").read_text()
    assert (
        "stale row" not in readme
        and "| 11.1× | 8.6× |" in readme
        and "<!-- /generated:benchmark -->\nafter\n" in readme
    )
    assert "| `experiment_1/results_tiny` | cpu | tree | 3 |" in readme
    headline = (
        root / "README.md"
    ).read_text()  # the committed Lite0 runs are absent from this root: "not run", never a stale number
    assert "stale" not in headline and headline.count("| not run (") == 7  # six questions and the depth ladder
    text = (root / "tables.md").read_text()
    summary = json.loads((results / "summary.json").read_text())
    assert "`experiment_1/results_tiny` — resnet18, `random`, N = 3" in text
    assert format_number(summary["metrics"]["naive_sum_rel_error"]["mean"]) in text
    assert "| 11.1× | 8.6× |" in text and "(from 32 masks)" in text
    assert "_No Experiment 2 results yet._" in text
    timing = json.loads((results / "timing.json").read_text())
    assert f"| `experiment_1/results_tiny` | cpu | tree | 3 | 1 | {format_number(timing['wall_seconds'])} |" in text
    generated = root / "paper" / "generated"
    paper_table = (generated / "table_experiment_1.tex").read_text()
    assert (
        "ResNet-18 (random init), N = 3" in paper_table and "texttt" not in paper_table
    )  # the network, not the folder
    assert "\\notrun{No Experiment 2 results yet.}" in (generated / "table_experiment_2.tex").read_text()
    assert "\\newcommand{\\ExpOneNaiveErr}{\\resultnotrun}%" in (generated / "macros.tex").read_text()
    assert (
        "\\newcommand{\\VerdictPointerExpOne}{}" in (generated / "verdicts.tex").read_text()
    )  # no block, no placeholder


def test_the_readme_headline_is_the_committed_runs_table() -> None:
    """The README's headline block is what make_tables writes from the committed summaries (both answers from JSON)."""
    from experiment_1.paths import REPO_ROOT
    from paper.headline import HEADLINE_RUNS, headline_table
    from paper.render_markdown import render_markdown

    table = render_markdown(headline_table(REPO_ROOT))
    assert table in (REPO_ROOT / "README.md").read_text()
    summary = json.loads((REPO_ROOT / HEADLINE_RUNS["2"]).read_text())
    assert (
        f"κ ≈ {format_number(summary['published']['resnet18']['kappa_vector'])}" in table
    )  # the original study's, from its published block
    assert f"κ = {format_number(summary['projections']['vector']['kappa']['mean'])} [" in table  # this project's


def test_the_readme_figure_is_the_committed_spectrum_read_from_its_summary() -> None:
    """The README's figure block is what make_tables writes: a committed figure, its numbers from the summary and each
    finding beside the verdict (id and decision) it rests on."""
    from experiment_1.paths import REPO_ROOT
    from paper.headline import FIGURE, HEADLINE_RUNS, figure_reading
    from paper.render_markdown import render_markdown

    block = render_markdown(figure_reading(REPO_ROOT))
    assert block in (REPO_ROOT / "README.md").read_text() and (REPO_ROOT / FIGURE).is_file()
    assert f"]({FIGURE})" in block
    summary = json.loads((REPO_ROOT / HEADLINE_RUNS["2"]).read_text())
    entries = {entry["id"]: entry for entry in summary["verdicts"]}
    for verdict_id in ("peak.vector", "shape.vector", "shape.scalar", "projections_differ", "walsh.shape.vector"):
        entry = entries[verdict_id]
        claim = entry["claim"].split(": ", 1)[1] if entry["claim"].startswith(("vector", "scalar")) else entry["claim"]
        verb = "" if entry["decision"] in ("holds", "fails") else "reads "
        assert f"the claim that {claim} {verb}**{entry['decision']}** (verdict `{verdict_id}`" in block, verdict_id
    # a decision is printed only right after the claim it decides, never beside a plain statement
    claims = tuple(f"{entry['claim'].split(': ', 1)[-1]} " for entry in entries.values())
    for decision in re.finditer(r"\*\*[^*]+\*\*", block):
        assert block[: decision.start()].removesuffix("reads ").endswith(claims), block[
            decision.start() - 120 : decision.end()
        ]
    assert f"κ = {format_number(summary['projections']['vector']['kappa']['mean'])} [" in block
    walsh = summary["walsh"]["projections"]["vector"]
    assert f"orders 1–3 hold {format_stat(walsh['c_le3'], percent=True)} of the vector's variance" in block
    assert f"κ_W = {format_stat(walsh['kappa'])}" in block


def test_wall_time_table_counts_a_shared_pass_once_and_every_process_of_a_resumed_run(tmp_path: Path) -> None:
    from paper.make_tables import section_blocks

    def record(pass_id: str, rank: int, wall: float, images: int) -> dict:
        return {
            "pass": pass_id,
            "rank": rank,
            "host": "h",
            "started_utc": f"2026-01-01T00:00:0{len(pass_id)}",
            "wall_seconds": wall,
            "images_evaluated": images,
        }

    def timing(folder: str, records: list[dict], **extra: object) -> None:
        walls = {}
        for entry in records:
            walls[entry["pass"]] = max(walls.get(entry["pass"], 0.0), entry["wall_seconds"])
        body = {
            "wall_seconds": sum(walls.values()),
            "images_evaluated": sum(entry["images_evaluated"] for entry in records),
            "processes": records,
            "device_name": "cpu",
            "engine": "tree",
            **extra,
        }
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "timing.json").write_text(json.dumps(body))

    shared = [record("p", 0, 100.0, 4)]
    timing("experiment_1/results_a", shared, shared_pass=["one", "two"])
    timing("experiment_2/results_a", shared, shared_pass=["one", "two"])
    timing(
        "experiment_3/results_b", [record("pq", 0, 30.0, 2), record("pqr", 0, 20.0, 2), record("pqr", 1, 25.0, 2)]
    )  # resumed under torchrun
    (tmp_path / "experiment_4" / "results_old").mkdir(parents=True)  # written before the process records
    (tmp_path / "experiment_4" / "results_old" / "timing.json").write_text(
        json.dumps({"wall_seconds": 7.0, "images_evaluated": 1, "device_name": "cpu", "engine": "tree"})
    )
    timing("experiment_2/results_seeds/seed_001", [record("s1", 0, 5.0, 4)])  # per-seed folders: one row
    timing("experiment_2/results_seeds/seed_002", [record("s2", 0, 6.0, 4)])
    allow_all_runs(tmp_path)
    table = section_blocks("wall_time", tmp_path)[0]
    rows = {row[0]: row for row in table.rows}
    assert rows["`experiment_2/results_seeds` (2 seeds)"][3:6] == ["8", "2", format_number(11.0)]
    assert rows["`experiment_3/results_b`"][3:5] == ["6", "3"] and rows["`experiment_3/results_b`"][5] == format_number(
        55.0
    )
    assert rows["`experiment_1/results_a`"][5] == format_number(100.0) + " (shared by 2)"
    assert rows["all runs, each pass once"][5].startswith(format_number(100.0 + 30.0 + 25.0 + 7.0 + 11.0) + " (")


def test_the_papers_total_hours_are_the_wall_time_tables_total() -> None:
    """``\\WallTotalHours`` and the wall-time table's last row count the same passes (each once, per-seed runs too)."""
    from experiment_1.paths import REPO_ROOT
    from paper.macros import MACROS, source_values
    from paper.make_tables import section_blocks

    (macro,) = [macro for macro in MACROS if macro.name == "WallTotalHours"]
    (seconds,) = source_values(REPO_ROOT, macro)
    total = {row[0]: row for row in section_blocks("wall_time", REPO_ROOT)[0].rows}["all runs, each pass once"][5]
    assert total == f"{format_number(seconds)} ({format_number(seconds / 3600)} h)"


def ladder_rungs(fractions: list[float | None]) -> list[dict]:
    """Depth-ladder rows with only what the note reads (a rung without Experiment 3 has no topk)."""
    return [{"topk": {"agreement_k_fraction": fraction}} for fraction in fractions] + [{"arch": "no topk run"}]


def test_the_depth_tables_agreement_column_gets_its_note_exactly_when_it_is_1_everywhere() -> None:
    (note,) = saturated_agreement_note(ladder_rungs([1, 1.0, 1]))
    assert "It is 1, its bound, on every network here" in note.text
    assert saturated_agreement_note(ladder_rungs([1, 0.5])) == []  # one network reaches 90 % below the full sum
    assert saturated_agreement_note(ladder_rungs([1, None])) == []  # a network that never reaches it is no bound
    assert saturated_agreement_note([{"arch": "no topk run"}]) == []


def test_the_committed_depth_ladder_carries_the_note() -> None:
    ladder = json.loads((REPO / "paper/results_depth_efficientnet_lite_sample/depth.json").read_text())
    fractions = [row["topk"]["agreement_k_fraction"] for row in ladder["rungs"] if row.get("topk")]
    assert fractions and set(fractions) == {1}
    assert len(saturated_agreement_note(ladder["rungs"])) == 1


def test_the_note_reaches_the_papers_depth_table() -> None:
    from paper.make_tables import paper_inputs

    assert "its bound, on every network here" in paper_inputs(REPO)["table_depth.tex"]
