"""Small helpers that turn summary JSON into Markdown for REPORT.md files and tables.md.

The original study's published numbers (seed README and paper), for comparison in reports.

These are the only literal results in the code base, kept as data in ``published.json`` beside this module and
loaded as ``PUBLISHED[experiment]``: a ``source`` and, per architecture, the quantities the seed or paper reports.
Every summary JSON copies its experiment's block (:func:`published_numbers`), so a REPORT shows "seed" and "ours"
side by side from JSON alone.

The networks' names as the text and the figures write them: ``efficientnet_lite0`` → EfficientNet-Lite0,
``resnet18`` → ResNet-18, a user's factory by its function's words.
"""

from __future__ import annotations

import copy
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from experiment_1.paths import REPO_ROOT

NETWORK_NAMES = {"resnet": "ResNet-", "efficientnet_lite": "EfficientNet-Lite"}

ARCH = re.compile(r"\b(resnet|efficientnet_lite)(\d+)\b")


def pretty_networks(text: str) -> str:
    """Every architecture name in ``text`` as the paper names it (efficientnet_lite1 → EfficientNet-Lite1)."""
    return ARCH.sub(lambda match: NETWORK_NAMES[match.group(1)] + match.group(2), text)


def network_name(arch: str, weights: str | None = None) -> str:
    """``efficientnet_lite0`` → EfficientNet-Lite0, ``resnet18`` → ResNet-18; "(random init)" when not trained. A factory
    (``package.module:function``) is named by its function, words apart (``resnet18_first_block_held`` → ResNet-18 first
    block held), not by its import path."""
    if ":" in arch:
        return pretty_networks(arch.rpartition(":")[2].replace("_", " ")) + (
            " (random init)" if weights == "random" else ""
        )
    name = arch
    for prefix, pretty in NETWORK_NAMES.items():
        if arch.startswith(prefix) and arch[len(prefix) :].isdigit():
            name = pretty + arch[len(prefix) :]
    return name + (" (random init)" if weights == "random" else "")


NON_FINITE = (
    "n/a — non-finite"  # how a NaN or ±inf is rendered, and the decision drawn from one: never a number to read
)


def format_number(value: float | int | None, digits: int = 3) -> str:
    """Compact human formatting: scientific for very small/large magnitudes, else ``digits`` significant."""
    if value is None:
        return "—"
    value = float(value)
    if not math.isfinite(value):
        return NON_FINITE
    if value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e5):
        return f"{value:.{max(digits - 1, 1)}e}"
    return f"{value:.{digits}g}"


def format_percent(value: float | None, digits: int = 1) -> str:
    """``0.123`` → ``12.3 %``."""
    if value is None:
        return "n/a"
    if not math.isfinite(float(value)):
        return NON_FINITE
    return f"{100 * value:.{digits}f} %"


def format_stat(stat: dict[str, Any], percent: bool = False, digits: int = 3) -> str:
    """``mean [ci_low, ci_high]`` from a :func:`experiment_1.report.stats.bootstrap_mean_ci` dict."""
    fmt = format_percent if percent else (lambda value: format_number(value, digits))
    if not _finite(stat["mean"]):  # an undefined statistic (e.g. ρ of a constant measure) has no interval either
        return fmt(stat["mean"])
    return f"{fmt(stat['mean'])} [{fmt(stat['ci_low'])}, {fmt(stat['ci_high'])}]"


def _finite(value: Any) -> bool:
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub-flavoured Markdown table."""
    lines = ["| " + " | ".join(str(h) for h in headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def configuration_section(config: dict[str, Any]) -> str:
    """The provenance block of a REPORT: model, data, engine, versions, commit."""
    keys = [
        "arch",
        "weights",
        "num_blocks",
        "sample_index",
        "num_images",
        "engine",
        "dtype",
        "mobius_dtype",
        "batch_size",
        "mask_chunk",
        "seed",
        "device_name",
        "git_commit",
    ]
    rows = [(key, f"`{config[key]}`") for key in keys if key in config]
    versions = config.get("versions", {})
    if versions:
        rows.append(("versions", ", ".join(f"{name} {version}" for name, version in sorted(versions.items()))))
    return markdown_table(["setting", "value"], rows)


def evaluating_commit_sentence(config: dict[str, Any], timing: dict[str, Any] | None) -> str:
    """Which code evaluated the images: the commits the evaluating processes recorded in timing.json
    (``evaluating_commits``; several when a run was resumed across commits), beside the configuration's ``git_commit``,
    the commit of the call that wrote the summary (which may have evaluated nothing); "not recorded" for a timing.json
    written before processes recorded their commit, or none."""
    commits = (timing or {}).get("evaluating_commits")
    if not commits or commits == ["not recorded"]:
        said = (
            "not recorded ("
            + ("no timing.json" if timing is None else "this timing.json predates per-process commits")
            + ")"
        )
    else:
        said = ", ".join(f"`{commit}`" for commit in commits) + (
            f" ({len(commits)} commits: the run was resumed across them)" if len(commits) > 1 else ""
        )
    return (
        f"Evaluating commit, recorded by the processes that evaluated the images: {said}. The configuration's "
        f"`git_commit` (`{config.get('git_commit', 'not recorded')}`) is that of the call that wrote the summary."
    )


def report_footer(config: dict[str, Any], timing: dict[str, Any] | None, generator: str, source: str) -> list[str]:
    """The closing lines every REPORT shares: configuration table, the evaluation's wall time (every process of a resumed run), provenance note."""
    lines = ["## Configuration", "", configuration_section(config), ""]
    if timing:
        rate = timing["images_evaluated"] / timing["wall_seconds"] if timing["wall_seconds"] else float("nan")
        lines += [
            (
                "Wall time of the last evaluation run: "
                if "processes" not in timing
                else f"Wall time of the evaluation ({timing['passes']} pass(es) over all its processes): "
            )
            + f"{format_number(timing['wall_seconds'])} s for {timing['images_evaluated']} "
            f"image evaluations ({format_number(rate)} image evaluations per second) on {timing['device_name']}, engine `{timing['engine']}`, "
            f"batch size {timing['batch_size']}, mask chunk {timing['mask_chunk']}.",
            "",
        ]
    lines += [evaluating_commit_sentence(config, timing), ""]
    lines += [f"_Generated by `python -m {generator}` from {source}; do not edit by hand._", ""]
    return lines


def repo_path(text: str) -> str:
    """``text`` relative to the repository when it lies inside it (a REPORT names no machine's absolute path), else as given."""
    path = Path(text)
    if path.is_absolute() and path.is_relative_to(REPO_ROOT):
        return path.relative_to(REPO_ROOT).as_posix()
    return text


def data_sentence(summary: dict[str, Any], extra: str = "") -> str:
    """The REPORT's **Data.** line: images, sample list, data folder (inside the repository: relative to it), model (then ``extra``)."""
    config = summary["config"]
    return (
        f"**Data.** {summary['num_valid']} images from `{repo_path(config['sample_index'])}` (shards in `{repo_path(config.get('data_dir', 'not recorded'))}`; "
        f"{summary['num_skipped_corrupt']} skipped as corrupt){size_reason(config)}, model `{config['arch']}` (L = {config['num_blocks']}) "
        f"with weights `{config['weights']}`{extra}."
    )


def size_reason(config: dict[str, Any]) -> str:
    """Why a run used fewer images than its sample list: ``--limit`` (empty when the whole list was used)."""
    limit = config.get("limit")
    if limit is None:
        return ""
    families = config.get("low_orders")
    masks = (
        f"the masks within {families['order_max']} gates of each corner it evaluates"
        if isinstance(families, dict) and "order_max" in families
        else f"all 2^{config['num_blocks']} masks"
    )
    return f" — the first {limit} of the list (`--limit {limit}` was given; every image costs {masks})"


def comparability_note(config: dict[str, Any]) -> str | None:
    """A warning when the run's model is not the original study's (ImageNet-trained ResNet-18), else ``None``."""
    if config["weights"] == "random":
        return (
            "These are **random-init** weights; the original study's numbers refer to trained weights, so the comparisons "
            "with the original study here are not like for like."
        )
    if config["arch"] != "resnet18":
        return (
            f"These numbers come from `{config['arch']}` (L = {config['num_blocks']}, weights `{config['weights']}`), "
            "not the original study's ImageNet-trained ResNet-18 (L = 8): the original study's figures are a reference for the pattern — "
            "exactness, orders of magnitude, where the spectrum sits relative to L — not digits to match."
        )
    return None


def figure(alt: str, filename: str) -> str:
    """A Markdown image link to a figure saved beside the REPORT."""
    return f"![{alt}]({filename})"


def method_model_line(config: dict[str, Any], residual_scale: str | None = None) -> str:
    """The gated recursion the model computed, as recorded in its configuration, with λ."""
    recursion = config.get("gated_recursion")
    if recursion is None:
        return ""
    scale = (
        residual_scale if residual_scale is not None else "λ = 1"
    )  # a summary that records no λ is of an unscaled pass
    return f"The model computes `{recursion}` for every gateable block l ({scale}). "


def _value(entry: dict[str, Any], value: float) -> str:
    return format_percent(value) if entry.get("percent") else format_number(value)


def _p_value(p: float, floor: float | None) -> str:
    """A p-value; one at the test's floor (e.g. 1/(n+1) for n permutations) says so: the truth may be smaller."""
    return format_number(p) + (" (the test's floor)" if floor is not None and p <= floor else "")


def _verdict_evidence(entry: dict[str, Any]) -> list[str]:
    """The clauses behind one verdict: statistic, effect with CI, test and corrected p, the original study's value, notes."""
    clauses = []
    statistic, effect, test, seed = entry.get("statistic"), entry.get("effect"), entry.get("test"), entry.get("seed")
    if statistic:
        clauses.append(f"{statistic['name']} = {_value(statistic, statistic['value'])}")
    if effect:
        clauses.append(
            f"{effect['name']} = {_value(effect, effect['value'])} [{_value(effect, effect['ci_low'])}, "
            f"{_value(effect, effect['ci_high'])}] ({format_percent(effect.get('confidence', 0.95), 0)} CI)"
        )
    if test:
        text = f"{test['name']} p = {_p_value(test['p_value'], test.get('p_floor'))}"
        if test.get("p_adjusted") is not None:
            text += f", {test.get('correction') or 'adjusted'} over {test.get('family_size')} tests p = {format_number(test['p_adjusted'])}"
        clauses.append(text)
    if seed:
        clauses.append(seed_clause(seed, effect or {}))
    return clauses + list(entry.get("notes", ()))


def seed_clause(seed: dict[str, Any], effect: dict[str, Any]) -> str:
    """``the original study reports X; our CI contains it (smallest detectable effect D)`` — the wording rule's one form."""
    text = f"the original study reports {_value(effect, seed['reported'])}"
    if seed["relation"] == "inside":
        text += "; our CI contains it"
        if seed.get("minimal_detectable_effect") is not None:
            text += (
                f" (the smallest effect these data detect at {format_percent(seed['power'], 0)} power: "
                f"{_value(effect, seed['minimal_detectable_effect'])})"
            )
    elif seed["relation"] in ("above", "below"):
        text += f", {seed['relation']} our CI"
    return text


def verdict_lines(verdicts: Sequence[dict[str, Any]]) -> list[str]:
    """A summary's ``verdicts`` block as Markdown bullets, each rule stated once after the bullets that use it."""
    rules: list[str] = []
    lines = []
    for entry in verdicts:
        if entry["rule"] not in rules:
            rules.append(entry["rule"])
        evidence = "; ".join(_verdict_evidence(entry))
        lines.append(
            f"- {entry['claim']}: **{entry['decision']}**"
            + (f" — {evidence}" if evidence else "")
            + f" (rule {rules.index(entry['rule']) + 1})."
        )
    if rules:
        lines += ["", "Decision rules:", ""] + [f"{number}. {rule}" for number, rule in enumerate(rules, 1)]
    return lines


ORIGINAL_STUDY = "the original study"  # the one name of lylybig/resnet-moe in every REPORT, table and the paper
# "seed" meaning the original study, in text written by the steps (verdict claims and rules, published sources kept in
# the summaries) → its one name; "seed" as a random seed ("seed 0", "--seed", "random seed", "seeded") is left alone.
_ORIGINAL_STUDY_NAMES = [
    (re.compile(r"\b(?:[Tt]he )?seed (README|paper)\b"), r"the original study's \1"),
    (re.compile(r"\(seed: "), "(the original study: "),
    (re.compile(r"\bseed K\b"), "the original study's K"),
    (re.compile(r"\bseed / paper\b"), "the original study / paper"),
    (re.compile(r"\bthe seed's\b"), "the original study's"),
    (re.compile(r"\bThe seed's\b"), "The original study's"),
    (re.compile(r"\bthe seed\b(?!\s*(?:\d|=|of the draw))"), ORIGINAL_STUDY),
    (re.compile(r"\bThe seed\b(?!\s*(?:\d|=|of the draw))"), "The original study"),
]


def original_study_wording(text: str) -> str:
    """``text`` with "the seed" (the original study, as earlier steps wrote it into the summaries) named the original study."""
    for pattern, name in _ORIGINAL_STUDY_NAMES:
        text = pattern.sub(name, text)
    return text


ORIGINAL_STUDY_MISWORDING = re.compile(
    r"\b(?:than|as) the (?:original study|seed)'s\b|\bthe (?:original study|seed)'s (?:network|model|ResNet-18) (?:is|has)\b",
    re.IGNORECASE,
)
SEED_MISWORDING = ORIGINAL_STUDY_MISWORDING  # the rule's earlier name


def check_original_study_wording(text: str) -> None:
    """The wording rule: the original study's numbers have no CI (and some no stated definition), so a comparison
    says what "the original study reports", never that something is "denser than the original study's ResNet-18"
    (nor "the original study's network is …")."""
    match = ORIGINAL_STUDY_MISWORDING.search(text)
    if match:
        context = text[max(0, match.start() - 60) : match.end() + 60].replace("\n", " ")
        raise ValueError(
            f"REPORT wording: {match.group(0)!r} in '…{context}…'; compare with what \"the original study reports\""
        )


check_seed_wording = check_original_study_wording  # the rule's earlier name


@dataclass
class ReportDocument:
    """One experiment's REPORT.md: every plot step fills the same skeleton with content only.

    Sections, in order: title; **Question.** (from the summary); **Method.** (the model's gated
    recursion from the summary's configuration, then ``method``); **Data.**; ``## Result``
    (``results``: Markdown blocks); ``## Beside the original study`` (``seed_rows`` as a quantity / the
    original study / ours table, ``seed_source``, and a comparability note when the model is not the
    original study's); ``## Verdict`` (``verdict`` as bullets, then the summary's ``verdicts`` block via
    :func:`verdict_lines`); ``## Configuration`` (provenance, wall time, generator note). The whole
    document names the original study so (:func:`original_study_wording`: also text a summary stores),
    and the Beside and Verdict sections obey the wording rule (:func:`check_original_study_wording`).
    """

    title: str
    summary: dict[str, Any]
    method: str
    results: list[str]
    seed_rows: list[list[str]]
    generator: str
    seed_source: str | None = None  # None: the summary's ``published.source``
    verdict: Sequence[str] = ()
    timing: dict[str, Any] | None = None
    data_extra: str = ""
    source: str = "summary.json"
    residual_scale: str | None = None
    seed_headers: list[str] = field(default_factory=lambda: ["quantity", "the original study", "ours"])
    verdicts: list[dict[str, Any]] | None = None  # None: the summary's ``verdicts`` block (none when it has none)

    def __post_init__(self) -> None:
        if self.seed_source is None:
            self.seed_source = self.summary["published"]["source"]
        if self.verdicts is None:
            self.verdicts = self.summary.get("verdicts", [])
        if self.residual_scale is None and "residual_scale" in self.summary:
            self.residual_scale = f"λ = {self.summary['residual_scale']:g}"  # the λ the run recorded

    def render(self) -> str:
        config = self.summary["config"]
        lines = [
            f"# {self.title}",
            "",
            f"**Question.** {self.summary['question']}",
            "",
            f"**Method.** {method_model_line(config, self.residual_scale)}{self.method}",
            "",
            data_sentence(self.summary, self.data_extra),
            "",
            "## Result",
            "",
        ]
        for block in self.results:
            lines += [block, ""]
        seed_start = len(lines)
        lines += ["## Beside the original study", ""]
        if self.seed_rows:
            lines += [markdown_table(self.seed_headers, self.seed_rows), ""]
        source = original_study_wording(self.seed_source)
        lines += [
            (
                source[0].upper() + source[1:]
                if source.startswith(ORIGINAL_STUDY) and not source.startswith(f"{ORIGINAL_STUDY}'s")
                else f"Source: {source}"
            )
            + ".",
            "",
        ]
        note = comparability_note(config)
        if note:
            lines += [note, ""]
        lines += ["## Verdict", ""]
        lines += [line if line.startswith("- ") else f"- {line}" for line in self.verdict]
        lines += verdict_lines(self.verdicts)
        lines += [""]
        lines = [original_study_wording(line) for line in lines]
        check_original_study_wording("\n".join(lines[seed_start:]))
        lines += report_footer(config, self.timing, self.generator, self.source)
        return "\n".join(lines)


PUBLISHED: dict[str, dict[str, Any]] = json.loads(
    Path(__file__).with_name("published.json").read_text(encoding="utf-8")
)
"""The original study's published numbers, per experiment: its ``source`` and, per architecture, the quantities the
seed or paper reports (experiment_1/report/published.json, the one place they are written)."""


def published_numbers(experiment: str) -> dict[str, Any]:
    """A copy of ``PUBLISHED[experiment]`` for a summary's ``published`` block."""
    if experiment not in PUBLISHED:
        raise KeyError(f"no published numbers for '{experiment}'; known: {', '.join(PUBLISHED)}")
    return copy.deepcopy(PUBLISHED[experiment])


def published_value(block: dict[str, Any], arch: str, quantity: str) -> Any | None:
    """``quantity`` for ``arch`` in a summary's ``published`` block, or ``None`` where the seed and paper give none."""
    return block.get(arch, {}).get(quantity)
