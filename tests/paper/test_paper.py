"""The paper's generated inputs: every macro it uses exists, every printed number is its JSON value, renderers exact."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from experiment_1.errors import PipelineError
from experiment_1.report.record import ExperimentRecord
from paper.claims import verdicts_body, verdicts_tex
from paper.committed_runs import allow_all_runs, committed_glob
from paper.figures import figures_tex
from paper.macros import MACROS, Macro, follow, macros_tex, total_pass_seconds
from paper.render_latex import latex_text, render_latex
from paper.render_markdown import render_markdown
from paper.table_model import Bullets, NotRun, Paragraph, Table
from paper.tables import SECTIONS

REPO = Path(__file__).resolve().parents[2]
PAPER = REPO / "paper"
GENERATED = PAPER / "generated"
GENERATED_NAME = re.compile(r"\\((?:Exp|Seed|Run|Wall|Fig|Verdict|Claim|Depth)[A-Za-z]*)")
DEFINED_NAME = re.compile(r"\\newcommand\{\\([A-Za-z]+)\}")
MACRO_LINE = re.compile(r"^\\newcommand\{\\([A-Za-z]+)\}\{(.*)\}% (\{.*\})$")
# A printed number: m × 10^e, or a decimal; a percentage when \,\% follows.
NUMBER = re.compile(r"(-?\d+(?:\.\d+)?)(?:\\times 10\^\{(-?\d+)\})?\$?(\\,\\%)?")


def paper_sources() -> list[Path]:
    return [PAPER / "main.tex", *sorted((PAPER / "sections").glob("*.tex"))]


def generated_names() -> set[str]:
    """Every macro name paper/generated/ defines (verdict lists span several lines)."""
    return {name for path in GENERATED.glob("*.tex") for name in DEFINED_NAME.findall(path.read_text())}


def number_macros(text: str) -> dict[str, tuple[str, str]]:
    """Macro name → (body, provenance JSON) of every line of a macros.tex's ``text``."""
    lines = (MACRO_LINE.match(line) for line in text.splitlines())
    return {match.group(1): (match.group(2), match.group(3)) for match in lines if match}


def printed_numbers(body: str) -> list[tuple[float, float, bool]]:
    """(value, half a unit of its last printed digit, is a percentage) for each number in a macro body."""
    numbers = []
    for match in NUMBER.finditer(body):
        mantissa, exponent, percent = match.groups()
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        scale = 10.0 ** int(exponent) if exponent else 1.0
        numbers.append((float(mantissa) * scale, 0.5 * 10.0**-decimals * scale, percent is not None))
    return numbers


def test_every_macro_the_paper_uses_is_generated() -> None:
    used = {name for path in paper_sources() for name in GENERATED_NAME.findall(path.read_text())}
    assert used, "the paper cites no generated macro"
    assert sorted(used - generated_names()) == []
    for key in (section.key for section in SECTIONS):
        assert (GENERATED / f"table_{key}.tex").exists(), f"run python -m paper.make_tables: table_{key}.tex is missing"


def check_generated_numbers(root: Path, text: str, macros: list[Macro]) -> None:
    """Every number macro of ``text`` (a macros.tex) equals its JSON value under ``root``, read from the committed
    runs only (paper/committed_runs.txt): a git-ignored run on disk (make demo's, a scratch --output-dir) is no input."""
    definitions = number_macros(text)
    assert sorted(definitions) == sorted(macro.name for macro in macros)
    for macro in macros:
        body, comment = definitions[macro.name]
        provenance = json.loads(comment)
        assert provenance == {
            "source": macro.source,
            "path": json.loads(json.dumps(list(macro.path))),
            "kind": macro.kind,
        }
        # the wall-time total sums every committed run's timing.json; the other sources are single committed files
        files = committed_glob(root, macro.source) if macro.kind == "hours" else sorted(root.glob(macro.source))
        if body == r"\resultnotrun":
            assert not files, (
                f"\\{macro.name} says not run, but {macro.source} exists: rerun python -m paper.make_tables"
            )
            continue
        documents = [json.loads(path.read_text()) for path in files]
        values = [follow(document, macro.path) for document in documents]
        if macro.kind == "text":
            assert body == latex_text(str(values[0]))
            continue
        expected = {
            "hours": lambda: [total_pass_seconds(documents) / 3600],
            "power_of_two": lambda: [2 ** values[0]],
            "stat": lambda: [values[0][name] for name in ("mean", "ci_low", "ci_high")],
            "stat_percent": lambda: [values[0][name] for name in ("mean", "ci_low", "ci_high")],
            "list": lambda: values[0],
        }.get(macro.kind, lambda: values)()
        printed = printed_numbers(body)
        assert len(printed) == len(expected), f"\\{macro.name} = {body!r} prints {len(printed)} numbers for {expected}"
        for (value, half_unit, percent), truth in zip(printed, expected):
            assert percent == (macro.kind in ("percent", "stat_percent")), f"\\{macro.name} = {body!r}"
            truth = 100 * truth if percent else truth
            assert abs(value - truth) <= half_unit * (1 + 1e-9), (
                f"\\{macro.name} = {body!r} but {macro.source} holds {truth!r}: rerun python -m paper.make_tables"
            )


def test_each_generated_number_equals_its_json_value() -> None:
    check_generated_numbers(REPO, (GENERATED / "macros.tex").read_text(), MACROS)


def test_generated_numbers_are_checked_against_the_committed_runs_only(tmp_path: Path) -> None:
    """A git-ignored run beside the committed ones (make demo's timing.json) changes neither the macros nor the check."""
    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "committed_runs.txt").write_text("experiment_9/results\n")
    for folder, seconds in (("results", 5400), ("results_demo_resnet18", 90000)):
        (tmp_path / "experiment_9" / folder).mkdir(parents=True)
        (tmp_path / "experiment_9" / folder / "timing.json").write_text(json.dumps({"wall_seconds": seconds}))
    macros = [Macro("ExpNineHours", "experiment_9/results*/timing.json", ("wall_seconds",), "hours")]
    text = macros_tex(tmp_path, macros)
    assert r"\newcommand{\ExpNineHours}{1.5}" in text
    check_generated_numbers(tmp_path, text, macros)


def test_macro_generation_marks_absent_results_and_rejects_a_wrong_path(tmp_path: Path) -> None:
    allow_all_runs(tmp_path)  # a tmp tree without a manifest: every results folder counts
    summary = tmp_path / "experiment_9" / "results" / "summary.json"
    summary.parent.mkdir(parents=True)
    summary.write_text(
        json.dumps(
            {
                "metrics": {"error": {"mean": 3.1e-7, "ci_low": 2.95e-7, "ci_high": 3.25e-7}},
                "share": 0.868,
                "per_lambda": [{"lambda": 1.0, "n": 4}, {"lambda": 0.1, "n": 9}],
            }
        )
    )
    (tmp_path / "experiment_9" / "results" / "timing.json").write_text(json.dumps({"wall_seconds": 5400}))
    for shared in ("results_a", "results_b"):  # one shared pass that fed two folders: counted once
        (tmp_path / "experiment_9" / shared).mkdir()
        (tmp_path / "experiment_9" / shared / "timing.json").write_text(
            json.dumps({"wall_seconds": 1800, "shared_pass": ["a/x", "b/y"]})
        )
    macros = [
        Macro("ExpNineError", "experiment_9/results/summary.json", ("metrics", "error"), "stat"),
        Macro("ExpNineShare", "experiment_9/results/summary.json", ("share",), "percent"),
        Macro("ExpNineAtLow", "experiment_9/results/summary.json", ("per_lambda", {"lambda": 0.1}, "n"), "integer"),
        Macro("ExpNineHours", "experiment_9/results*/timing.json", ("wall_seconds",), "hours"),
        Macro("ExpTenAbsent", "experiment_10/results/summary.json", ("share",), "percent"),
    ]
    lines = macros_tex(tmp_path, macros).splitlines()[2:]
    assert [line.split("% {")[0] for line in lines] == [
        r"\newcommand{\ExpNineError}{$3.10\times 10^{-7}$ [$2.95\times 10^{-7}$, $3.25\times 10^{-7}$]}",
        r"\newcommand{\ExpNineShare}{86.8\,\%}",
        r"\newcommand{\ExpNineAtLow}{9}",
        r"\newcommand{\ExpNineHours}{2}",
        r"\newcommand{\ExpTenAbsent}{\resultnotrun}",
    ]
    with pytest.raises(
        PipelineError, match=r"ExpNineWrong: experiment_9/results/summary.json has no 'kappa'.*paper/macros.py"
    ):
        macros_tex(tmp_path, [Macro("ExpNineWrong", "experiment_9/results/summary.json", ("metrics", "kappa"), "stat")])


def test_latex_text_renders_the_reports_inline_notation() -> None:
    assert latex_text("κ^v") == r"$\kappa^{v}$"
    assert (
        latex_text("N_eff^v and K_τ^err, Γ_K at 1/4 of 2^L")
        == r"$N_{\mathrm{eff}}^{v}$ and $K_{\tau}^{\mathrm{err}}$, $\Gamma_{K}$ at 1/4 of $2^{L}$"
    )
    assert latex_text("C≤3 (vector)") == r"$C_{\le 3}$ (vector)"
    assert latex_text("k̄ (scalar)") == r"$\bar{k}$ (scalar)"
    assert latex_text("3.10e-07 [2.39e+03, -0.5]") == r"$3.10\times 10^{-7}$ [$2.39\times 10^{3}$, $-0.5$]"
    assert latex_text("86.8 % — **invariant**, 5/5") == r"86.8\,\% --- \textbf{invariant}, 5/5"
    assert latex_text("`experiment_1/results_x` — efficientnet_lite0, N = 3") == (
        r"\texttt{experiment\_\allowbreak{}1/\allowbreak{}results\_\allowbreak{}x} --- efficientnet\_lite0, N = 3"
    )
    assert (
        latex_text("log sqrt(Ē_k) vs log λ, λ ∈ {0.1}")
        == r"log sqrt($\bar{E}_{k}$) vs log $\lambda$, $\lambda$ $\in$ \{0.1\}"
    )
    with pytest.raises(ValueError, match="no LaTeX form for '☃'"):
        latex_text("a ☃")


def test_both_renderers_render_the_same_blocks() -> None:
    blocks = [
        Paragraph("`run` — N = 3"),
        Table(["λ", "κ^v"], [["0.1", "3.19 [3.07, 3.32]"]]),
        Bullets(["Γ_K: **holds**", "∅ on top: **fails**"]),
        NotRun("No Experiment 2 results yet."),
    ]
    assert render_markdown(blocks) == (
        "`run` — N = 3\n\n| λ | κ^v |\n|---|---|\n| 0.1 | 3.19 [3.07, 3.32] |\n\n"
        "- Γ_K: **holds**\n- ∅ on top: **fails**\n\n_No Experiment 2 results yet._"
    )
    assert render_latex(blocks) == (
        "\\tablerun{\\texttt{run} --- N = 3}\n\n"
        "\\fitwidth{%\n\\begin{tabular}{ll}\n\\toprule\n$\\lambda$ & $\\kappa^{v}$ \\\\\n\\midrule\n0.1 & 3.19 [3.07, 3.32] \\\\\n"
        "\\bottomrule\n\\end{tabular}}\n\n"
        "\\begin{itemize}\n\\item $\\Gamma_{K}$: \\textbf{holds}\n\\item $\\emptyset$ on top: \\textbf{fails}\n\\end{itemize}\n\n"
        "\\notrun{No Experiment 2 results yet.}\n"
    )
    with pytest.raises(ValueError, match="a row has 1 cells for 2 columns"):
        Table(["a", "b"], [["only one"]])


def test_figures_and_verdicts_say_what_is_missing(tmp_path: Path) -> None:
    (tmp_path / "experiment_9").mkdir()
    (tmp_path / "experiment_9" / "present.pdf").write_bytes(b"%PDF")
    (tmp_path / "experiment_9" / "summary.json").write_text(
        "{}\n"
    )  # its run's results file (without it the figure is a deleted run's)
    text = figures_tex(
        tmp_path, {"FigNinePresent": "experiment_9/present.pdf", "FigNineAbsent": "experiment_9/absent.pdf"}
    )
    assert (
        r"\newcommand{\FigNinePresent}[1][width=\linewidth]{\includegraphics[#1]{../experiment_9/present.pdf}}" in text
    )
    assert (
        r"\newcommand{\FigNineAbsent}[1][width=\linewidth]{\figurenotrun{\texttt{experiment\_\allowbreak{}9/\allowbreak{}absent.pdf}}}"
        in text
    )
    assert verdicts_body({}) == ""  # no placeholder: a run without a block is left out of the appendix
    assert verdicts_body({"verdicts": {"kappa": "old per-measure layout"}}) == ""


def test_verdicts_render_every_run_a_glob_matches_and_state_each_rule_once(tmp_path: Path) -> None:
    allow_all_runs(tmp_path)  # a tmp tree without a manifest: every results folder counts
    committed = json.loads((REPO / "experiment_2/results_3c_resnet18/summary_3c.json").read_text())
    for run, arch in (("results_3c_a", "resnet18"), ("results_3c_b", "efficientnet_lite0")):
        (tmp_path / "experiment_2" / run).mkdir(parents=True)
        summary = {**committed, "config": {**committed["config"], "arch": arch, "run_id": run}}
        (tmp_path / "experiment_2" / run / "summary_3c.json").write_text(json.dumps(summary))
    records = (
        ExperimentRecord(
            experiment="9",
            title="Experiment 9",
            macro="ExpNine",
            summaries="experiment_2/results_3c_*/summary_3c.json",
            primary="experiment_2/results_3c_*/summary_3c.json",
        ),
        ExperimentRecord(
            experiment="10",
            title="Experiment 10",
            macro="ExpTen",
            summaries="experiment_10/*.json",
            primary="experiment_10/summary.json",
        ),
    )
    text = verdicts_tex(tmp_path, records).split(r"\newcommand{\VerdictAppendix}")[1]
    for entry in committed["verdicts"]:  # every verdict of both runs
        assert text.count(latex_text(entry["claim"]) + " & ") == 2
    rules = {entry["rule"] for entry in committed["verdicts"]}
    assert all(text.count(r"\item " + latex_text(rule)) == 2 for rule in rules)  # once per run, not once per verdict
    assert text.index("ResNet-18 (random init), N = 6") < text.index("EfficientNet-Lite0 (random init), N = 6")
    assert "Experiment 10" not in text and r"\newcommand{\VerdictPointerExpTen}{}" in verdicts_tex(tmp_path, records)
