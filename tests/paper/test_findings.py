"""The paper's finding sentences name the verdicts they rest on, and a changed verdict stops the build."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from experiment_1.errors import PipelineError
from paper.build_log import BODY_PAGES, layout_problems
from paper.findings import findings_in, foreign_numbers, main, stale_findings
from paper.macros import Macro

REPO = Path(__file__).resolve().parents[2]
RESULTS = "experiment_9/results_x/summary.json"
SPECTRUM = REPO / "experiment_2/results_efficientnet_lite0_sample/summary.json"  # its peak.vector reads 'fails'


def test_every_committed_finding_matches_its_verdict() -> None:
    assert stale_findings(REPO) == []


def test_the_paper_states_its_findings_through_verdicts() -> None:
    sources = [REPO / "paper" / "sections" / name for name in ("abstract.tex", "experiment_2.tex", "experiment_3c.tex")]
    for path in sources:
        assert findings_in(path.read_text(encoding="utf-8"), path.name), f"{path.name} states no finding by its verdict"


def _paper(root: Path, sentence: str) -> Path:
    """A paper tree with one section, ``sentence``, and a copy of the committed Experiment 2 summary at RESULTS."""
    (root / "experiment_9" / "results_x").mkdir(parents=True)
    (root / RESULTS).write_text(SPECTRUM.read_text())
    sections = root / "paper" / "sections"
    sections.mkdir(parents=True)
    (sections / "x.tex").write_text(sentence, encoding="utf-8")
    return root


def test_a_sentence_whose_verdict_changed_is_named_with_both_decisions(tmp_path: Path) -> None:
    root = _paper(tmp_path, "Text.\n\\Finding{" + RESULTS + "#peak.vector}{holds}{The peak {\\em moves}.}\n")
    assert stale_findings(root) == [
        f"paper/sections/x.tex:2: the sentence was written for {RESULTS}#peak.vector = 'holds', but it now reads "
        "'fails'; rewrite the sentence for the new result"
    ]
    with pytest.raises(PipelineError, match="1 finding sentence"):
        main(["--root", str(root)])


def test_a_matching_sentence_passes_and_a_missing_verdict_or_file_does_not(tmp_path: Path) -> None:
    root = _paper(tmp_path, "\\Finding{" + RESULTS + "#peak.vector}{fails}{Yes.}\n")
    assert stale_findings(root) == []
    main(["--root", str(root)])
    (root / "paper" / "sections" / "x.tex").write_text(
        "\\Finding{" + RESULTS + "#no_such.vector}{holds}{A.} \\Finding{experiment_9/none.json#a}{holds}{B.}"
    )
    problems = stale_findings(root)
    assert len(problems) == 2 and all("absent" in problem for problem in problems)


def test_every_number_in_a_committed_finding_comes_from_the_run_of_its_verdict() -> None:
    assert foreign_numbers(REPO) == []


def test_a_number_from_another_run_beside_a_verdict_is_named(tmp_path: Path) -> None:
    root = _paper(tmp_path, "\\Finding{" + RESULTS + "#peak.vector}{fails}{Peak \\Own{} at \\Other{}, \\Ranked{}.}")
    verdict_file = json.loads((root / RESULTS).read_text())
    (root / RESULTS).write_text(json.dumps({**verdict_file, "config": {**verdict_file["config"], "run_id": "run-a"}}))
    folder = root / "experiment_9"
    (folder / "other.json").write_text(json.dumps({"config": {"run_id": "run-b", "schema_version": 2}, "value": 1}))
    (folder / "ranked.json").write_text(
        json.dumps({"config": {"run_id": "null", "trained_run_id": "run-a", "schema_version": 2}})
    )
    macros = [
        Macro("Own", RESULTS, ("value",)),
        Macro("Other", "experiment_9/other.json", ("value",)),
        Macro("Ranked", "experiment_9/ranked.json", ("value",)),
    ]
    problems = foreign_numbers(root, macros=macros)
    assert len(problems) == 1, problems
    assert problems[0].startswith("paper/sections/x.tex:1: \\Other comes from experiment_9/other.json, another run")
    (folder / "other.json").write_text(
        json.dumps({"config": {"run_id": "run-a", "schema_version": 2}, "value": 1})
    )  # the same run
    assert foreign_numbers(root, macros=macros) == []


def test_comments_and_other_commands_are_not_findings_and_a_malformed_one_is_refused() -> None:
    text = "% \\Finding{a#b}{holds}{commented}\n\\FindingsTable \\Finding{f.json#v}{cannot  tell}{x {y} z}"
    [finding] = findings_in(text, "t.tex")
    assert (finding.results_file, finding.verdict_id, finding.decision, finding.source) == (
        "f.json",
        "v",
        "cannot tell",
        "t.tex:2",
    )
    with pytest.raises(PipelineError, match="t.tex:1: .*three braced arguments"):
        findings_in("\\Finding{f.json#v}{holds}", "t.tex")
    with pytest.raises(PipelineError, match="not <results file>#<verdict id>"):
        findings_in("\\Finding{f.json}{holds}{x}", "t.tex")


def test_layout_check_fails_on_a_float_too_large_a_wide_box_and_a_long_body() -> None:
    log = (
        "LaTeX Warning: Float too large for page by 256.3pt on input line 17.\n"
        "Overfull \\hbox (10.5pt too wide) in paragraph at lines 1--2\n"
        "Overfull \\hbox (10.0pt too wide) in paragraph at lines 3--4\n"
        "Overfull \\vbox (20.2pt too high) has occurred while \\output is active []\n"
        f"Output written on build/main.pdf ({BODY_PAGES + 1} pages, 100 bytes).\n"
    )
    problems = layout_problems(log, "main.log", BODY_PAGES)
    assert len(problems) == 4
    assert "256.3 pt (input line 17)" in problems[0]
    assert "10.5pt" in problems[1] and "20.2pt" in problems[2]
    assert f"{BODY_PAGES + 1} pages" in problems[3]
    at_limit = f"Output written on build/main.pdf ({BODY_PAGES} pages, 100 bytes).\n"
    assert layout_problems(at_limit, "main.log", BODY_PAGES) == []
    assert layout_problems(log.splitlines()[-1], "supplement.log") == []


def abstract_words(root: Path = REPO) -> int:
    """The abstract's words as printed: its macros expanded from generated/macros.tex, \\Finding's references dropped."""
    macros = dict(
        re.findall(r"^\\newcommand\{\\(\w+)\}\{(.*?)\}%", (root / "paper/generated/macros.tex").read_text(), re.M)
    )
    text = (root / "paper/sections/abstract.tex").read_text(encoding="utf-8")
    text = re.sub(r"\\Finding\{[^}]*\}\{[^}]*\}", "", text)
    text = re.sub(r"\\(\w+)(\{\})?", lambda match: macros.get(match.group(1), " "), text)
    return len(re.findall(r"[\w.\-−]+", re.sub(r"[${}\\]", " ", text)))


def test_the_abstract_is_at_most_200_words() -> None:
    assert 150 <= abstract_words() <= 200, abstract_words()
