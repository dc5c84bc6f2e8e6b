"""What the paper's readers check before they combine results files (tables, macros, figures).

- :func:`check_verdicts`: every stored verdict's decision is a word of the closed vocabulary
  (:data:`experiment_1.report.verdicts.DECISIONS`); a verdict drawn from a non-finite number is
  ``n/a — non-finite``; a verdict whose rule gives it when "the CI excludes 0", or by "the CI of the share
  lies at or above" a stated threshold, agrees with its own stored CI (re-derived).
  An edited verdict is refused with one line naming file and verdict, never printed as stored.
- :func:`check_one_network`: the sources of one paper are one network (arch, weights, the user
  network's hash) and, per sample-list file, one list content; otherwise the line says which differ.
- :func:`figure_has_its_run`: a figure is included only while its folder still holds the results
  file it was drawn from (a deleted run's old PDF is not shown as a result).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterator

from experiment_1.errors import PipelineError
from experiment_1.files import read_json
from experiment_1.report import CANNOT_TELL, DECISIONS, FAILS, HOLDS, NON_FINITE

RESULT_FILES = ("summary*.json", "overlap.json", "analysis.json", "depth.json", "swap_cost.json")  # what a figure's folder holds when its run exists
NETWORK_KEYS = ("arch", "weights", "network_sha256")


def _verdicts(document: Any) -> Iterator[dict[str, Any]]:
    """Every verdict entry (a dict with ``decision`` and ``rule``) anywhere in ``document``."""
    if isinstance(document, dict):
        if "decision" in document and "rule" in document:
            yield document
        for value in document.values():
            yield from _verdicts(value)
    elif isinstance(document, list):
        for value in document:
            yield from _verdicts(value)


def _non_finite(value: Any) -> bool:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return False
    if isinstance(value, (int, float)):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_non_finite(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(_non_finite(item) for item in value)
    return False


def _clause(rule: str, decision: str) -> str:
    """The part of a rule that says when ``decision`` is given: from "<decision> when" to the next ";" or ","."""
    start = rule.find(f"{decision} when")
    if start < 0:
        return ""
    ends = [position for position in (rule.find(";", start), rule.find(",", start)) if position >= 0]
    return rule[start:min(ends)] if ends else rule[start:]


def check_verdicts(document: Any, path: Path) -> None:
    """Refuse a results file whose stored verdicts are outside the vocabulary or contradict their own numbers."""
    for entry in _verdicts(document):
        name, decision = entry.get("id", "?"), entry.get("decision")
        if decision not in DECISIONS:
            raise PipelineError(f"{path}: verdict {name} has decision {decision!r}, not one of {', '.join(DECISIONS)}; rerun the step that wrote it")
        numbers = [entry.get(part) for part in ("statistic", "effect", "test", "seed")]
        if decision != NON_FINITE and _non_finite(numbers):
            raise PipelineError(f"{path}: verdict {name} says {decision!r} from a non-finite number (NaN or inf); no verdict is drawn from one — rerun the step that wrote it")
        effect = entry.get("effect") or {}
        low, high = effect.get("ci_low"), effect.get("ci_high")
        if decision in (HOLDS, FAILS) and "excludes 0" in _clause(str(entry.get("rule", "")), decision) and isinstance(low, (int, float)) and isinstance(high, (int, float)) and low <= 0 <= high:
            raise PipelineError(f"{path}: verdict {name} says {decision!r} but its own CI [{low:.3g}, {high:.3g}] covers 0 and its rule needs a CI that excludes 0; rerun the step that wrote it")
        expected = _share_rule_decision(entry)
        if expected is not None and decision != expected:
            raise PipelineError(f"{path}: verdict {name} says {decision!r} but its own CI [{low:.3g}, {high:.3g}] against the threshold of its rule gives {expected!r}; rerun the step that wrote it")


def _share_rule_decision(entry: dict[str, Any]) -> str | None:
    """The decision of a "CI of the share lies at or above <threshold>" rule re-derived from the stored CI and threshold (None for other rules)."""
    parameters, effect = entry.get("parameters") or {}, entry.get("effect") or {}
    threshold = parameters.get("share", parameters.get("threshold"))
    low, high = effect.get("ci_low"), effect.get("ci_high")
    if "CI of the share lies at or above" not in str(entry.get("rule", "")) or not all(isinstance(value, (int, float)) and math.isfinite(value) for value in (threshold, low, high)):
        return None
    return HOLDS if low >= threshold else FAILS if high < threshold else CANNOT_TELL


def check_one_network(root: Path, sources: list[str]) -> None:
    """Refuse sources (results files relative to ``root``; absent ones skipped) of more than one network, or of two contents of one sample list."""
    configs = {}
    for source in sources:
        path = Path(root) / source
        if path.exists():
            document = read_json(path)
            configs[source] = document.get("config", {}) if isinstance(document, dict) else {}
    for key in NETWORK_KEYS:
        values = {source: config.get(key) for source, config in configs.items()}
        if len(set(map(str, values.values()))) > 1:
            first, *others = values.items()
            other = next(item for item in others if str(item[1]) != str(first[1]))
            raise PipelineError(f"the paper's results are not of one network: {first[0]} has {key} {first[1]!r}, {other[0]} has {other[1]!r}; rerun the odd one with the paper's network")
    lists: dict[str, tuple[str, Any]] = {}
    for source, config in configs.items():
        index, content = config.get("sample_index"), config.get("sample_list_sha256")
        if index in lists and content is not None and lists[index][1] is not None and lists[index][1] != content:
            raise PipelineError(f"{source} and {lists[index][0]} name the sample list {index} but were run on different contents of it; rerun one on the current list")
        lists.setdefault(index, (source, content))


def figure_has_its_run(figure: Path) -> bool:
    """True when the figure's folder still holds a results file of its run."""
    return any(any(figure.parent.glob(pattern)) for pattern in RESULT_FILES)


def checked_json(path: Path) -> Any:
    """A results file read and its verdicts checked (:func:`check_verdicts`)."""
    document = read_json(path)
    check_verdicts(document, path)
    return document
