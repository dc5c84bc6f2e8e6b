"""The one verdict checker every renderer calls before it prints a word (plot steps through
:func:`experiment_1.files.load_summary`, ``paper.make_tables`` and the paper through ``paper.checks``).

:func:`check_verdicts` walks a results file's verdict entries (anything with ``decision`` and ``rule``) and
refuses, with one line naming the file and the verdict:

- a decision outside the closed vocabulary (:data:`experiment_1.report.verdicts.DECISIONS`);
- a decided verdict (anything but ``n/a — non-finite``) drawn from a non-finite number of its own block, or
  beside a non-finite number of the source statistics it summarises (the block of the file its ``id`` names,
  e.g. ``captured_energy.vector`` → ``document["captured_energy"]["vector"]``);
- a verdict whose rule has one of the shapes in :data:`RULE_SHAPES` but whose decision is not what that rule
  gives on the numbers of the same block — and a block missing the numbers its rule needs (refused, not
  skipped). A verdict of another decision family (saturated, constant, unresolved, not converged, post hoc)
  was decided before the rule was reached and is not re-derived.

The shapes (re-derived from ``effect``, ``seed``, ``statistic`` and ``parameters``):

- CI against the original study's number: "holds when the CI lies above it, fails when below" (and the
  mirror "lies below it, fails when above", "at or below", "at or above");
- CI against a threshold: "holds when the 95 % CI … lies (at or) above <t>, fails when … below <t>" (and the
  mirror), the threshold read from the rule or its parameters;
- "holds when the 95 % CI … excludes 0, else cannot tell";
- a statistic against a tolerance: "… is below <t> …, else fails" / "… exceeds <t>, else fails".
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Iterator

from experiment_1.errors import PipelineError
from experiment_1.files import load_summary
from experiment_1.report.markdown import NON_FINITE
from experiment_1.report.verdicts import CANNOT_TELL, DECISIONS, FAILS, HOLDS

DECIDED_BY_RULE = (HOLDS, FAILS, CANNOT_TELL)  # the decisions a rule's CI / threshold clause gives
_NUMBER = r"(-?\d+(?:\.\d+)?(?:e-?\d+)?)\s*(%?)"


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
        return isinstance(value, float) and not math.isfinite(value)
    if isinstance(value, dict):
        return any(_non_finite(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(_non_finite(item) for item in value)
    return False


def _real(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class _Missing(Exception):
    """The block lacks a number its rule needs (the dotted name of it)."""


class _Contradiction(Exception):
    """The block's own numbers disagree with each other (what they are)."""


def _need(entry: dict[str, Any], part: str, key: str) -> float:
    block = entry.get(part)
    value = block.get(key) if isinstance(block, dict) else None
    if not _real(value):
        raise _Missing(f"{part}.{key}")
    return float(value)


def _ci(entry: dict[str, Any]) -> tuple[float, float]:
    return _need(entry, "effect", "ci_low"), _need(entry, "effect", "ci_high")


THRESHOLD_PARAMETERS = (
    "tolerance",
    "threshold",
    "share",
    "material_error",
)  # where a rule's stated threshold is also kept as a number


def _threshold(text: tuple[str, str], entry: dict[str, Any]) -> float:
    """The rule's stated threshold (a percentage as a share), checked against the number its parameters keep."""
    number, percent = text
    value = float(number) / (100 if percent else 1)
    parameters = entry.get("parameters") or {}
    for key in THRESHOLD_PARAMETERS:
        kept = parameters.get(key)
        if _real(kept) and not math.isclose(kept, value, rel_tol=1e-9, abs_tol=1e-12):
            raise _Contradiction(f"its rule states the threshold {number}{percent} but parameters.{key} is {kept!r}")
    return value


def _seed_rule(entry: dict[str, Any], holds_above: bool) -> str:
    """CI against the seed's number: holds when the CI lies above (below) it, fails on the other side."""
    low, high = _ci(entry)
    reported = _need(entry, "seed", "reported")
    above, below = low > reported, high < reported
    rule = str(entry["rule"])
    if "at or below" in rule and not holds_above:
        below = high <= reported
    if "at or above" in rule and holds_above:
        above = low >= reported
    if holds_above:
        return HOLDS if above else FAILS if below else CANNOT_TELL
    return HOLDS if below else FAILS if above else CANNOT_TELL


def _threshold_rule(entry: dict[str, Any], match: re.Match[str]) -> str:
    """CI against a threshold: holds when it lies (at or) above / below the threshold, fails on the other side."""
    low, high = _ci(entry)
    threshold = _threshold(match.group("value", "percent"), entry)
    at_or, side = bool(match.group("at_or")), match.group("side")
    if side == "above":
        holds = low >= threshold if at_or else low > threshold
        fails = high < threshold
    else:
        holds = high <= threshold if at_or else high < threshold
        fails = low > threshold
    return HOLDS if holds else FAILS if fails else CANNOT_TELL


def _excludes_zero_rule(entry: dict[str, Any]) -> str:
    low, high = _ci(entry)
    return HOLDS if low > 0 or high < 0 else CANNOT_TELL


_SEED_ABOVE = re.compile(
    r"against the (?:seed|bound the seed|original)[^:]*: holds when (?:the CI|it) lies (?:at or )?above"
)
_SEED_BELOW = re.compile(
    r"against the (?:seed|bound the seed|original)[^:]*: holds when (?:the CI|it) lies (?:at or )?below"
)
_THRESHOLD = re.compile(
    r"^holds when the (?:95 % )?(?:bootstrap |exact )?CI of [^;,]*? lies (?P<at_or>at or )?(?P<side>above|below) "
    + _NUMBER.replace("(-?", "(?P<value>-?").replace("(%?)", "(?P<percent>%?)")
    + r"(?:\s*\([^)]*\))?, fails when (?:it lies )?(?:below|above)(?: "
    + r"-?\d+(?:\.\d+)?%?)?(?:\s*\([^)]*\))?(?:, (?:else|cannot tell)[^;]*)?(?:;|$)"
)
_EXCLUDES_ZERO = re.compile(r"^holds when the 95 % CI of [^;,]* excludes 0, else cannot tell")
_STATISTIC = re.compile(
    r"^holds when the [^;,]*? (?:is (?P<below>below)|(?P<exceeds>exceeds)) "
    + _NUMBER.replace("(-?", "(?P<value>-?").replace("(%?)", "(?P<percent>%?)")
    + r"(?:\s*\([^)]*\))?, else fails$"
)


def rule_decision(entry: dict[str, Any]) -> str | None:
    """The decision the verdict's rule gives on the numbers of its own block; ``None`` for a rule of no known shape.
    Raises :class:`_Missing` when the block lacks a number its rule needs."""
    rule = str(entry.get("rule", ""))
    if _SEED_ABOVE.search(rule):
        return _seed_rule(entry, holds_above=True)
    if _SEED_BELOW.search(rule):
        return _seed_rule(entry, holds_above=False)
    if match := _THRESHOLD.search(rule):
        return _threshold_rule(entry, match)
    if _EXCLUDES_ZERO.search(rule):
        return _excludes_zero_rule(entry)
    if match := _STATISTIC.search(rule):
        side = "below" if match.group("below") else "above"
        value = _need(entry, "statistic", "value")
        threshold = _threshold(match.group("value", "percent"), entry)
        return HOLDS if (value < threshold if side == "below" else value > threshold) else FAILS
    return None


def _clause(rule: str, decision: str) -> str:
    """The part of a rule that says when ``decision`` is given: from "<decision> when" to the next ";" or ","."""
    start = rule.find(f"{decision} when")
    if start < 0:
        return ""
    ends = [position for position in (rule.find(";", start), rule.find(",", start)) if position >= 0]
    return rule[start : min(ends)] if ends else rule[start:]


def _excludes_zero_clause(entry: dict[str, Any], decision: str) -> str | None:
    """For a rule of another shape whose clause for ``decision`` needs "the CI excludes 0": ``cannot tell`` when the
    block's CI covers 0 (the decision cannot be the rule's), else ``None`` (nothing to say)."""
    effect = entry.get("effect") or {}
    low, high = effect.get("ci_low"), effect.get("ci_high")
    if (
        decision in (HOLDS, FAILS)
        and "excludes 0" in _clause(str(entry.get("rule", "")), decision)
        and _real(low)
        and _real(high)
        and low <= 0 <= high
    ):
        return CANNOT_TELL
    return None


def _source_block(document: Any, verdict_id: str) -> Any:
    """The block of ``document`` the verdict's dotted id names (``None`` when the id names no block)."""
    node = document
    for part in verdict_id.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def check_verdicts(document: Any, path: Path | str, fix: str = "rerun the step that wrote it") -> None:
    """Refuse a results file whose stored verdicts are outside the vocabulary, drawn from or printed beside a
    non-finite number, or contradict the rule they name on their own numbers (see the module docstring)."""
    for entry in _verdicts(document):
        name, decision = entry.get("id", "?"), entry.get("decision")
        if decision not in DECISIONS:
            raise PipelineError(
                f"{path}: verdict {name} has decision {decision!r}, not one of {', '.join(DECISIONS)}; {fix}"
            )
        if decision == NON_FINITE:
            continue
        numbers = [entry.get(part) for part in ("statistic", "effect", "test", "seed")]
        if _non_finite(numbers):
            raise PipelineError(
                f"{path}: verdict {name} says {decision!r} from a non-finite number (NaN or inf); no verdict is drawn from one — {fix}"
            )
        source = _source_block(document, str(name)) if isinstance(name, str) else None
        if source is not None and source is not entry and _non_finite(source):
            raise PipelineError(
                f"{path}: verdict {name} says {decision!r} beside non-finite source numbers (the block {name}); no verdict is drawn from one — {fix}"
            )
        if decision not in DECIDED_BY_RULE:
            continue
        try:
            expected = rule_decision(entry)
        except _Missing as missing:
            raise PipelineError(
                f"{path}: verdict {name} says {decision!r} but lacks {missing}, which its rule needs; a verdict without its numbers is not printed — {fix}"
            ) from None
        except _Contradiction as contradiction:
            raise PipelineError(f"{path}: verdict {name}: {contradiction}; {fix}") from None
        if expected is None:
            expected = _excludes_zero_clause(entry, decision)
        if expected is not None and decision != expected:
            effect = entry.get("effect") or {}
            numbers_text = (
                f"its own CI [{effect.get('ci_low'):.3g}, {effect.get('ci_high'):.3g}]"
                if _real(effect.get("ci_low")) and _real(effect.get("ci_high"))
                else "its own numbers"
            )
            raise PipelineError(
                f"{path}: verdict {name} says {decision!r} but {numbers_text} under its rule gives {expected!r}; {fix}"
            )


def load_checked_summary(
    path: Path, experiment: int | str, producer_step: str, *args: Any, **kwargs: Any
) -> dict[str, Any]:
    """:func:`experiment_1.files.load_summary` and then :func:`check_verdicts`: what every plot step reads its summary with,
    so that no REPORT or figure is drawn beside a verdict its own numbers contradict."""
    summary = load_summary(path, experiment, producer_step, *args, **kwargs)
    check_verdicts(summary, path, fix=f"rerun `python -m {producer_step}` to rewrite it")
    return summary
