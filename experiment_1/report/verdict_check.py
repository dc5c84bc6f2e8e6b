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
  was decided before the rule was reached and is not re-derived — except where a composite rule below gives it.

The shapes (re-derived from ``effect``, ``seed``, ``statistic`` and ``parameters``):

- CI against the original study's number: "holds when the CI lies above it, fails when below" (and the
  mirror "lies below it, fails when above", "at or below", "at or above");
- CI against a threshold: "holds when the 95 % CI … lies (at or) above <t>, fails when … below <t>" (and the
  mirror), the threshold read from the rule or its parameters;
- "holds when the 95 % CI … excludes 0, else cannot tell";
- a statistic against a tolerance: "… is below <t> …, else fails" / "… exceeds <t>, else fails".

The composite rules (:data:`COMPOSITE_SHAPES`), each re-derived from its block's numbers, or — where the verdict
constructor never stored them — from the source numbers elsewhere in the same summary (a summary that lacks those is
refused, naming what is missing): Experiment 2's ``resolved`` (the smallest floor ratio against ``floor_margin``),
``peak`` (the per-image peak order's CI against the null's tied peaks), ``middle_peak`` (that CI within the middle
orders 4 … L − 1 and κ's and C≤3's CIs in ``projections[p]`` against ``binomial_null``), ``shape`` (``projections[p]`` κ and C≤3 against
``binomial_null``; the verdict's own κ − null κ CI checked against them), the same in the Walsh basis (``walsh.*``) and
``basis.*`` (the two shape verdicts of the summary); the λ sweep's ``migration`` (CI and sign test) and ``monotone``
(``kappa_changes[p].steps``, Holm over the steps); the depth ladder's paired rule; the equivalence (TOST) rule of
every 'no change' claim (its 1 − 2α interval against ±margin); Experiment 4's
alignment (Holm p; no power when the floor times the family size exceeds α), ``scalar_minus_vector`` (the paired
AUC-difference CI with its Holm p and floor), the global core against random top-K sets (Holm p and floor) and its seed
claim (its parts' verdicts); Experiment 5's hard − easy rule (Holm p and CI, breadth or order measure; an order measure's TOST from its
parameters) and its seed claim
at the strength of its parts; Experiment 3's ``relative_error`` (the block keeps only the smallest K: every K < 2^L read
from ``sources.magnitude_<ranking>.curves.relative_error``) and ``controls`` (its numbers only in notes: read from
``improvement.<ranking>.<control>.top1_agreement`` at the verdict's K, Holm over the controls); the λ sweep's
``power_law`` (the slopes of ``power_law.projections[p]`` against k ± tolerance); Experiment 2's ``null`` in a
``null_comparison.json`` (both κ CIs, round-off floors and the null's ``input_dependent`` from the two summaries it names:
the run's ``summary.json`` beside it and its ``null_summary``, see :func:`_with_null_sources`); Experiment 3C's limit
laws ``exp3c.<variant>.<law>`` (``lambda_k``, ``kink``, ``kink_chain``: the law's slopes from ``kink_exponent`` and
``exact_zero_chain``, per-order convergence from ``limit_slopes`` and ``successive_slopes`` against
``parameters.convergence_tolerance``, the CI against ``parameters.tolerance``, post hoc from the block's
``laws.<law>.post_hoc``), the same law at its deciding order (``exp3c.<variant>.<law>.k<order>``), and the combined
verdict over a law's replications (``replications.*``: all must hold, from ``replications[]``'s decisions);
Experiment 2's null over networks (``null_input_function``: the seeds' spreads in ``networks`` against the trained
network's; ``null_networks.*``: the rank ps recomputed from ``statistics``, Holm over ``config.tested``, the power rule).

Not re-derived (vocabulary and non-finite numbers only): Experiment 3's ``empty_top1`` share and the other saturation /
constant rules, decided from per-image arrays no summary keeps; the λ sweep's ``cost`` rule, whose range (the original
study's) is written only in its claim text, not as a number in the summary.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Iterator

from experiment_1.errors import PipelineError
from experiment_1.files import load_summary, read_json
from experiment_1.report.markdown import NON_FINITE
from experiment_1.report.verdicts import (
    CANNOT_TELL,
    DECISIONS,
    FAILS,
    HOLDS,
    NO_POWER,
    NOT_CONVERGED,
    PARTLY_CONTRADICTED,
    POST_HOC,
    UNRESOLVED,
    all_must_hold,
)

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
    sources = _with_null_sources(document, path)
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
        try:
            expected, decides = composite_decision(entry, sources)
            if not decides:
                if decision not in DECIDED_BY_RULE:
                    continue
                expected = rule_decision(entry)
        except _Missing as missing:
            raise PipelineError(
                f"{path}: verdict {name} says {decision!r} but lacks {missing}, which its rule needs; a verdict without its numbers is not printed — {fix}"
            ) from None
        except _Contradiction as contradiction:
            raise PipelineError(f"{path}: verdict {name}: {contradiction}; {fix}") from None
        if expected is None and not decides:
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


# --- composite rules: re-derived from the block's own numbers, or from the source numbers elsewhere in the same
# summary where the block does not keep them (a committed block that lacks them is read from there, never skipped) ---


def _source(document: Any, *keys: str) -> Any:
    """``document[k1][k2]…``; :class:`_Missing` naming the dotted path when a key is absent."""
    node = document
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            raise _Missing(".".join(keys) + " (the source numbers its rule is re-derived from)")
        node = node[key]
    return node


def _interval(stat: Any, name: str) -> tuple[float, float]:
    if not isinstance(stat, dict) or not (_real(stat.get("ci_low")) and _real(stat.get("ci_high"))):
        raise _Missing(f"{name}.ci_low / ci_high")
    return float(stat["ci_low"]), float(stat["ci_high"])


def _side_of(low: float, high: float, value: float) -> int:
    """+1 when the CI lies above ``value``, −1 below, 0 when it contains it."""
    return 1 if low > value else -1 if high < value else 0


def _parameter(entry: dict[str, Any], key: str) -> float:
    return _need(entry, "parameters", key)


def _projection(entry: dict[str, Any]) -> str:
    return str(entry.get("id", "")).rsplit(".", 1)[-1]


def _resolved_rule(entry: dict[str, Any], document: Any) -> str:
    """Every order clears ``floor_margin`` × its round-off floor: the smallest ratio (the statistic) against the margin."""
    return HOLDS if _need(entry, "statistic", "value") >= _parameter(entry, "floor_margin") else UNRESOLVED


def _peak_rule(entry: dict[str, Any], document: Any) -> str:
    """The per-image peak order's CI against the null's tied peak orders (tie-aware)."""
    low, high = _ci(entry)
    tied = (entry.get("parameters") or {}).get("null_peak_orders")
    if not isinstance(tied, list) or not tied or not all(_real(order) for order in tied):
        raise _Missing("parameters.null_peak_orders")
    if high < min(tied) or low > max(tied):
        return HOLDS
    return FAILS if min(tied) <= low and high <= max(tied) else CANNOT_TELL


def _shape_rule(entry: dict[str, Any], document: Any) -> str:
    """κ's and C≤3's CIs against the binomial null's values, from the summary's projection block (the verdict keeps only
    κ − null κ); the verdict's own κ − null κ CI is checked against them."""
    projection, walsh = _projection(entry), str(entry.get("id", "")).startswith("walsh.")
    block = _source(document, *(("walsh",) if walsh else ()), "projections", projection)
    null = _source(document, "binomial_null")
    kappa, c_le3 = (
        _interval(block.get("kappa"), "projections.kappa"),
        _interval(block.get("c_le3"), "projections.c_le3"),
    )
    if not (_real(null.get("kappa")) and _real(null.get("c_le3"))):
        raise _Missing("binomial_null.kappa / c_le3")
    low, high = _ci(entry)
    if not all(math.isclose(a - null["kappa"], b, rel_tol=1e-9, abs_tol=1e-9) for a, b in zip(kappa, (low, high))):
        raise _Contradiction(
            f"its CI of κ − null κ [{low:.3g}, {high:.3g}] is not the summary's κ CI less the null's κ {null['kappa']:.3g}"
        )
    kappa_side, c_le3_side = _side_of(*kappa, null["kappa"]), _side_of(*c_le3, null["c_le3"])
    if kappa_side > 0 and c_le3_side < 0:
        return HOLDS
    return FAILS if kappa_side < 0 and c_le3_side > 0 else CANNOT_TELL


def _middle_peak_rule(entry: dict[str, Any], document: Any) -> str:
    """The per-image peak order's CI (the verdict's effect) within the middle orders (its parameters, checked against L),
    and κ's and C≤3's CIs from the summary's projection block against the binomial null's (a low-order bias)."""
    low, high = _ci(entry)
    orders = (entry.get("parameters") or {}).get("middle_orders")
    if not isinstance(orders, list) or len(orders) != 2 or not all(_real(order) for order in orders):
        raise _Missing("parameters.middle_orders")
    null = _source(document, "binomial_null")
    block = _source(document, "projections", _projection(entry))
    num_blocks, first, last = null.get("num_blocks"), *orders
    if not _real(num_blocks) or not (_real(null.get("kappa")) and _real(null.get("c_le3"))):
        raise _Missing("binomial_null.num_blocks / kappa / c_le3")
    if last != num_blocks - 1:
        raise _Contradiction(f"its middle orders end at {last}, not at L − 1 = {num_blocks - 1}")
    if first > last:
        return CANNOT_TELL
    kappa_side = _side_of(*_interval(block.get("kappa"), "projections.kappa"), null["kappa"])
    c_le3_side = _side_of(*_interval(block.get("c_le3"), "projections.c_le3"), null["c_le3"])
    if high <= first - 1 or low >= num_blocks or (kappa_side < 0 and c_le3_side > 0):
        return FAILS
    return HOLDS if first <= low and high <= last and kappa_side > 0 else CANNOT_TELL


def _decision_of(document: Any, verdict_id: str) -> str:
    for entry in _verdicts(document):
        if entry.get("id") == verdict_id:
            return str(entry["decision"])
    raise _Missing(f"the verdict {verdict_id} (a part its rule combines)")


def _basis_rule(entry: dict[str, Any], document: Any) -> str:
    """The Möbius and the Walsh shape verdicts of the same summary: agree → holds, disagree → fails, else cannot tell."""
    projection = _projection(entry)
    mobius, walsh = _decision_of(document, f"shape.{projection}"), _decision_of(document, f"walsh.shape.{projection}")
    if UNRESOLVED in (mobius, walsh):
        return UNRESOLVED
    if mobius in (HOLDS, FAILS) and walsh in (HOLDS, FAILS):
        return HOLDS if mobius == walsh else FAILS
    return CANNOT_TELL


def _falls_rule(entry: dict[str, Any], document: Any) -> str:
    """A paired change's CI on one side of 0 with a significant sign test: holds below, fails above (migration)."""
    low, high = _ci(entry)
    p_value, alpha = _need(entry, "test", "p_value"), _parameter(entry, "alpha")
    side = _side_of(low, high, 0.0)
    return (HOLDS if side < 0 else FAILS) if p_value <= alpha and side != 0 else CANNOT_TELL


def _holm(p_values: list[float]) -> list[float]:
    order = sorted(range(len(p_values)), key=lambda index: p_values[index])
    adjusted, running = [0.0] * len(p_values), 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def _monotone_rule(entry: dict[str, Any], document: Any) -> str:
    """Every λ step's change falls (Holm over the steps), from the summary's per-step changes: fails when a step rises."""
    steps = _source(document, "kappa_changes", _projection(entry), "steps")
    alpha = _parameter(entry, "alpha")
    p_values = [step.get("sign_test_p") if isinstance(step, dict) else None for step in steps]
    if not steps or not all(_real(p_value) for p_value in p_values):
        raise _Missing(f"kappa_changes.{_projection(entry)}.steps[].sign_test_p")
    parts = []
    for step, p_value in zip(steps, _holm([float(p) for p in p_values])):
        side = _side_of(*_interval(step.get("change"), "kappa_changes.steps[].change"), 0.0)
        parts.append((HOLDS if side < 0 else FAILS) if p_value <= alpha and side != 0 else CANNOT_TELL)
    if FAILS in parts:
        return FAILS
    return HOLDS if all(part == HOLDS for part in parts) else CANNOT_TELL


def _paired_rule(entry: dict[str, Any], document: Any) -> str:
    """The depth ladder's paired difference: above 0 with the exact sign test at p < α and enough shared images."""
    low, high = _ci(entry)
    p_value, alpha = _need(entry, "test", "p_value"), _parameter(entry, "alpha")
    enough = _need(entry, "statistic", "value") >= _parameter(entry, "min_paired_images")
    if enough and p_value < alpha and low > 0:
        return HOLDS
    return FAILS if enough and p_value < alpha and high < 0 else CANNOT_TELL


def _equivalence_rule(entry: dict[str, Any], document: Any) -> str:
    """The TOST equivalence rule: the stored 1 − 2α interval inside ±margin holds, wholly beyond it fails (at least two
    values), else cannot tell."""
    low, high = _ci(entry)
    margin = _parameter(entry, "margin")
    if _need(entry, "statistic", "value") < 2:
        return CANNOT_TELL
    if -margin < low and high < margin:
        return HOLDS
    return FAILS if low > margin or high < -margin else CANNOT_TELL


def _no_power(entry: dict[str, Any]) -> bool:
    """The test's best attainable adjusted p (its floor times its Holm family's size) exceeds α."""
    family = (entry.get("test") or {}).get("family_size") or 1
    return family * _need(entry, "test", "p_floor") > _parameter(entry, "alpha") * (1 + 1e-9)


def _alignment_rule(entry: dict[str, Any], document: Any) -> str:
    """Every statistic beats the label-permutation null at Holm p < α: the claim's Holm p (the largest) below α; never
    fails; no power when the best attainable adjusted p exceeds α."""
    if _no_power(entry):
        return NO_POWER
    return HOLDS if _need(entry, "test", "p_adjusted") < _parameter(entry, "alpha") else CANNOT_TELL


def _auc_contrast_rule(entry: dict[str, Any], document: Any) -> str:
    """Experiment 4's scalar − vector AUC difference: the CI's side with the Holm-adjusted bootstrap p below α; no power
    when its best attainable adjusted p exceeds α."""
    low, high = _ci(entry)
    p_adjusted, alpha = _need(entry, "test", "p_adjusted"), _parameter(entry, "alpha")
    if _no_power(entry):
        return NO_POWER
    if p_adjusted < alpha and low > 0:
        return HOLDS
    return FAILS if p_adjusted < alpha and high < 0 else CANNOT_TELL


def _core_rule(entry: dict[str, Any], document: Any) -> str:
    """Experiment 4's global core against random top-K sets: Holm-adjusted p below α holds; never fails."""
    if _no_power(entry):
        return NO_POWER
    return HOLDS if _need(entry, "test", "p_adjusted") < _parameter(entry, "alpha") else CANNOT_TELL


def _seed_alignment_rule(entry: dict[str, Any], document: Any) -> str:
    """Experiment 4's seed claim from its parts (the alignment and contrast verdicts of the same summary)."""
    scalar, vector = _decision_of(document, "class_alignment.scalar"), _decision_of(document, "class_alignment.vector")
    difference = _decision_of(document, "scalar_minus_vector")
    if NON_FINITE in (scalar, vector, difference):
        return NON_FINITE
    if scalar == HOLDS and difference == HOLDS and vector != HOLDS:
        return HOLDS
    return FAILS if difference == FAILS or (vector == HOLDS and difference != HOLDS) else CANNOT_TELL


BREADTH_PREFIXES = ("n_eff", "k_err", "k_mass")  # Experiment 5's breadth measures (claimed larger on hard images)


def _difficulty_rule(entry: dict[str, Any], document: Any) -> str:
    """Experiment 5's hard − easy rule: Holm-adjusted Mann–Whitney p ≤ α with the CI excluding 0; a breadth measure holds
    above 0 and fails below, an order measure (claimed invariant) fails either way; else cannot tell."""
    low, high = _ci(entry)
    alpha = _parameter(entry, "alpha")
    significant = _need(entry, "test", "p_adjusted") <= alpha and (low > 0 or high < 0)
    if not str(entry.get("id", "")).startswith(BREADTH_PREFIXES):
        if "tost_p_adjusted" not in entry.get("parameters", {}):  # written before the equivalence test
            return FAILS if significant else CANNOT_TELL
        if _parameter(entry, "tost_p_adjusted") <= alpha:
            return HOLDS
        return FAILS if significant and _parameter(entry, "p_beyond") <= alpha else CANNOT_TELL
    if not significant:
        return CANNOT_TELL
    return HOLDS if low > 0 else FAILS


def _seed_difficulty_rule(entry: dict[str, Any], document: Any) -> str:
    """Experiment 5's seed claim at the strength of its parts: the summary's measure verdicts it names (breadth:
    N_eff^v, K_τ^err; invariance: the order measures)."""
    families = _source(document, "published", "resnet18", "invariant_measures")
    breadth = [_decision_of(document, f"{measure}.hard_minus_easy") for measure in ("n_eff_vector", "k_err")]
    invariance = [
        _decision_of(document, f"{family}_{projection}.hard_minus_easy")
        for family in families
        for projection in ("vector", "scalar")
    ]
    parts = breadth + invariance
    if NON_FINITE in parts:
        return NON_FINITE
    if (FAILS in breadth and FAILS in invariance) or (FAILS in parts and all(p in (HOLDS, FAILS) for p in parts)):
        return FAILS
    if all(part == HOLDS for part in parts):
        return HOLDS
    return PARTLY_CONTRADICTED if FAILS in parts else CANNOT_TELL


def _ranking(entry: dict[str, Any]) -> str:
    return str(entry.get("id", "")).rsplit(".", 1)[-1]


def _relative_error_rule(entry: dict[str, Any], document: Any) -> str:
    """Experiment 3's mean relative error at every K < 2^L of the grid (the block keeps only the smallest), from the
    summary's per-K curve ``sources.magnitude_<ranking>.curves.relative_error``: holds when every CI lies at or above
    1, fails when one lies below 1; the block's own CI is checked to be the curve's at its smallest mean."""
    ranking = _ranking(entry)
    curve = _source(document, "sources", f"magnitude_{ranking}", "curves", "relative_error")
    ks, num_masks = _source(document, "ks"), _source(document, "num_masks")
    where = f"sources.magnitude_{ranking}.curves.relative_error"
    columns = [curve.get(key) for key in ("mean", "ci_low", "ci_high")]
    if not all(isinstance(column, list) and len(column) == len(ks) for column in columns):
        raise _Missing(f"{where}.mean / ci_low / ci_high (one per K)")
    below_all = [index for index, k in enumerate(ks) if k < num_masks]
    means, lows, highs = ([column[index] for index in below_all] for column in columns)
    if not all(_real(value) for value in means + lows + highs):
        raise _Missing(f"{where} at every K < 2^L")
    if below_all:
        best = below_all[min(range(len(below_all)), key=lambda position: means[position])]
        low, high = _ci(entry)
        if not (
            math.isclose(low, curve["ci_low"][best], rel_tol=1e-9)
            and math.isclose(high, curve["ci_high"][best], rel_tol=1e-9)
        ):
            raise _Contradiction(
                f"its CI [{low:.3g}, {high:.3g}] is not the summary's relative error at its smallest mean (K = {ks[best]})"
            )
    if below_all and min(lows) >= 1:
        return HOLDS
    return FAILS if any(high < 1 for high in highs) else CANNOT_TELL


def _controls_rule(entry: dict[str, Any], document: Any) -> str:
    """Experiment 3's magnitude top-K against every control (the block keeps its numbers only in notes), from the
    summary's ``improvement.<ranking>.<control>.top1_agreement`` at the verdict's K: each control's paired difference CI
    above 0 with Holm p ≤ α holds, below 0 fails, else cannot tell; the claim holds when every control's holds, fails
    when one fails."""
    ranking = _ranking(entry)
    k, alpha = _parameter(entry, "k"), _parameter(entry, "alpha")
    ks = _source(document, "ks")
    if k not in ks:
        raise _Missing(f"ks entry K = {k:g} (the K its parameters name)")
    index = ks.index(k)
    blocks = _source(document, "improvement", ranking)
    p_values, differences = [], []
    for control, block in blocks.items():
        agreement = block.get("top1_agreement") if isinstance(block, dict) else None
        where = f"improvement.{ranking}.{control}.top1_agreement"
        try:
            p_value = agreement["sign_flip_p"][index]
            difference = {key: agreement["difference"][key][index] for key in ("ci_low", "ci_high")}
        except (TypeError, KeyError, IndexError):
            raise _Missing(f"{where}.sign_flip_p / difference at K = {k:g}") from None
        if not (_real(p_value) and _real(difference["ci_low"]) and _real(difference["ci_high"])):
            raise _Missing(f"{where}.sign_flip_p / difference at K = {k:g}")
        p_values.append(float(p_value))
        differences.append(difference)
    if not blocks:
        raise _Missing(f"improvement.{ranking} (no control)")
    parts = [
        (HOLDS if side > 0 else FAILS) if p_value <= alpha and side != 0 else CANNOT_TELL
        for difference, p_value in zip(differences, _holm(p_values))
        for side in [_side_of(difference["ci_low"], difference["ci_high"], 0.0)]
    ]
    if FAILS in parts:
        return FAILS
    return HOLDS if all(part == HOLDS for part in parts) else CANNOT_TELL


def _power_law_rule(entry: dict[str, Any], document: Any) -> str:
    """The λ sweep's power law over the resolved orders k ≥ 2, from the summary's ``power_law.projections[p]`` slopes:
    every CI inside k ± tolerance holds, one wholly outside fails, else cannot tell; none resolved is unresolved."""
    projection, tolerance = _projection(entry), _parameter(entry, "slope_tolerance")
    law = _source(document, "power_law")
    if _real(law.get("slope_tolerance")) and not math.isclose(law["slope_tolerance"], tolerance, rel_tol=1e-9):
        raise _Contradiction(
            f"parameters.slope_tolerance is {tolerance!r} but the summary's power_law.slope_tolerance is {law['slope_tolerance']!r}"
        )
    rows = _source(document, "power_law", "projections", projection)
    where = f"power_law.projections.{projection}[]"
    if not isinstance(rows, list) or not all(isinstance(row, dict) and _real(row.get("order")) for row in rows):
        raise _Missing(f"{where}.order")
    resolved = [row for row in rows if row["order"] >= 2 and row.get("resolved")]
    if not all(_real(row.get("ci_low")) and _real(row.get("ci_high")) for row in resolved):
        raise _Missing(f"{where}.ci_low / ci_high")
    if not resolved:
        return UNRESOLVED
    if all(
        row["order"] - tolerance <= row["ci_low"] and row["ci_high"] <= row["order"] + tolerance for row in resolved
    ):
        return HOLDS
    outside = any(
        row["ci_high"] < row["order"] - tolerance or row["ci_low"] > row["order"] + tolerance for row in resolved
    )
    return FAILS if outside else CANNOT_TELL


NULL_SOURCES = ("this_run", "null_run")  # where check_verdicts puts the two summaries a null comparison names


def _with_null_sources(document: Any, path: Path | str) -> Any:
    """A ``null_comparison.json`` (Experiment 2's run against its random-init null) keeps the null's κ CI only in a note:
    the two summaries it names are read — the run's ``summary.json`` beside it and its ``null_summary`` (a path from the
    repository root, looked up from the file's folders upwards) — and set beside its verdicts as :data:`NULL_SOURCES`;
    one not found is left out (its rule then refuses, naming it)."""
    if not (isinstance(document, dict) and "null_summary" in document and "verdicts" in document):
        return document
    here = Path(path).resolve()
    named = Path(str(document["null_summary"]))
    candidates = {
        "this_run": [here.parent / "summary.json"],
        "null_run": [named] if named.is_absolute() else [base / named for base in here.parents],
    }
    view = dict(document)
    for key, paths in candidates.items():
        found = next((candidate for candidate in paths if candidate.is_file()), None)
        if found is not None:
            view[key] = read_json(found)
    return view


def _null_rule(entry: dict[str, Any], document: Any) -> str:
    """The run against its random-init null, from the two summaries the comparison names: unresolved when either has an
    order within the round-off floor, cannot tell when the null's ``input_dependent`` fails (a constant function), else
    holds when the two κ CIs are disjoint; the verdict's own CI is checked to be the run's κ."""
    projection, runs = _projection(entry), {}
    for key, label, id_key in (
        ("this_run", "the summary beside it", "run_id"),
        ("null_run", "the null summary", "null_run_id"),
    ):
        if not isinstance(document, dict) or not isinstance(document.get(key), dict):
            raise _Missing(
                f"{label} ({document.get('null_summary') if key == 'null_run' else 'summary.json'}) and its κ CI"
            )
        run = document[key]
        if id_key in document and (run.get("config") or {}).get("run_id") != document[id_key]:
            raise _Contradiction(f"{label} is not the run its {id_key} names")
        runs[key] = run
    ours = _interval(
        _source(runs["this_run"], "projections", projection).get("kappa"), f"projections.{projection}.kappa"
    )
    theirs = _interval(
        _source(runs["null_run"], "projections", projection).get("kappa"), f"the null's projections.{projection}.kappa"
    )
    low, high = _ci(entry)
    if not (math.isclose(low, ours[0], rel_tol=1e-9) and math.isclose(high, ours[1], rel_tol=1e-9)):
        raise _Contradiction(f"its CI [{low:.3g}, {high:.3g}] is not the κ CI of the summary beside it")
    floors = [_source(run, "roundoff", projection, "unresolved_orders") for run in runs.values()]
    if any(floors):
        return UNRESOLVED
    if _decision_of(runs["null_run"], "input_dependent") == FAILS:
        return CANNOT_TELL
    return HOLDS if ours[1] < theirs[0] or theirs[1] < ours[0] else CANNOT_TELL


def _null_input_rule(entry: dict[str, Any], document: Any) -> str:
    """Experiment 2's null over networks, the input rule: every seed's trunk-energy spread at least ``fraction`` × the
    trained network's (``parameters``) and resolved, from the summary's ``networks``; the verdict's statistic is checked
    to be the smallest spread ratio."""
    networks = _source(document, "networks")
    fraction, trained = _parameter(entry, "fraction"), _parameter(entry, "trained_spread")
    if not networks or not all(_real(record.get("trunk_energy_relative_spread")) for record in networks):
        raise _Missing("networks[].trunk_energy_relative_spread")
    ratios = [record["trunk_energy_relative_spread"] / trained for record in networks]
    if not math.isclose(_need(entry, "statistic", "value"), min(ratios), rel_tol=1e-9):
        raise _Contradiction(f"its smallest spread ratio is not the networks' ({min(ratios):.3g})")
    nulls = [
        record["trunk_energy_relative_spread"] >= fraction * trained and record.get("resolved") is True
        for record in networks
    ]
    return HOLDS if all(nulls) else FAILS


def _null_rank_rule(entry: dict[str, Any], document: Any) -> str:
    """Experiment 2's null over networks, the rank rule: each tested statistic's one-sided rank p recomputed from the
    trained value and the networks' values in ``statistics``, Holm over ``config.tested``, the power rule m/(n + 1) > α."""
    tested = _source(document, "config", "tested")
    direction, alpha = (entry.get("parameters") or {}).get("direction"), _parameter(entry, "alpha")
    p_values, counts = [], []
    for name in tested:
        block = _source(document, "statistics", name)
        values, trained = block.get("networks") or [], block.get("trained")
        if not values or not _real(trained) or direction not in ("lower", "higher"):
            raise _Missing(f"statistics.{name}.networks / trained, parameters.direction")
        beyond = sum(1 for value in values if (value <= trained if direction == "lower" else value >= trained))
        p_values.append((1 + beyond) / (len(values) + 1))
        counts.append(len(values))
    position = list(tested).index(str(entry.get("id", "")).split(".", 1)[-1])
    if not math.isclose(_need(entry, "test", "p_value"), p_values[position], rel_tol=1e-9):
        raise _Contradiction(f"its rank p is not the one its networks give ({p_values[position]:.3g})")
    if min(1.0, len(tested) / (counts[position] + 1)) > alpha:
        return CANNOT_TELL
    return HOLDS if _holm(p_values)[position] <= alpha else CANNOT_TELL


def _law_prediction(law: str, num_blocks: int, exponent: float, chain: int) -> list[float]:
    """Experiment 3C's predicted limit slope per order k = 0 … L: k (λ^k), min(k, s) (kink), 1 up to R then 3/2 above
    (the refined kink law)."""
    if law == "lambda_k":
        return [float(k) for k in range(num_blocks + 1)]
    if law == "kink":
        return [min(float(k), exponent) for k in range(num_blocks + 1)]
    if law == "kink_chain":
        return [min(float(k), 1.0 if k <= chain else 1.5) for k in range(num_blocks + 1)]
    raise _Missing(f"a known law (not {law!r})")


SLOPE_ROUNDING = 1e-9  # slopes equal to this are equal (experiment_2.limit.laws.SLOPE_ROUNDING)


def _converged(row: dict[str, Any], pairs: list[Any], tolerance: float, points: float) -> bool:
    """An order's limit has converged: its window holds every λ and the successive slopes inside it move ≤ tolerance."""
    window, order = set(row["fit_lambdas"]), row["order"]
    slopes = [pair["slope"][order] for pair in pairs if set(pair["lambdas"]) <= window and pair["resolved"][order]]
    if len(window) < points or len(slopes) < points - 1 or not all(_real(slope) for slope in slopes):
        return False
    return max(slopes) - min(slopes) <= tolerance + SLOPE_ROUNDING


def _law_order(
    row: dict[str, Any], pairs: list[Any], target: float, tolerance: float, settled: float, points: float, where: str
) -> str:
    """One resolved order of a 3C law: not converged (window slopes against ``settled``), else the limit slope's CI
    against ``target ± tolerance``."""
    if not _converged(row, pairs, settled, points):
        return NOT_CONVERGED
    if not (_real(row.get("ci_low")) and _real(row.get("ci_high"))):
        raise _Missing(f"{where}.limit_slopes[{row['order']}].ci_low / ci_high")
    if target - tolerance <= row["ci_low"] and row["ci_high"] <= target + tolerance:
        return HOLDS
    if row["ci_high"] < target - tolerance or row["ci_low"] > target + tolerance:
        return FAILS
    return CANNOT_TELL


def _law_sources(entry: dict[str, Any], document: Any) -> tuple[str, str, list[Any], list[Any], list[float]]:
    """A 3C law verdict's variant, law, limit and successive slopes, and the law's slopes (checked against
    ``parameters.predicted``), from the summary's ``variants.<variant>``."""
    _, variant, law = (str(entry.get("id", "")).split(".") + ["", ""])[:3]
    limit = _source(document, "variants", variant, "limit_slopes")
    pairs = _source(document, "variants", variant, "successive_slopes")
    where = f"variants.{variant}"
    if not isinstance(limit, list) or not all(
        isinstance(row, dict) and _real(row.get("order")) and isinstance(row.get("fit_lambdas"), list) for row in limit
    ):
        raise _Missing(f"{where}.limit_slopes[].order / fit_lambdas")
    if not isinstance(pairs, list) or not all(
        isinstance(pair, dict) and all(isinstance(pair.get(key), list) for key in ("lambdas", "slope", "resolved"))
        for pair in pairs
    ):
        raise _Missing(f"{where}.successive_slopes[].lambdas / slope / resolved")
    exponent = _source(document, "variants", variant, "kink_exponent")
    chain = _source(document, "variants", variant, "exact_zero_chain")
    predicted = _law_prediction(law, len(limit) - 1, float(exponent), int(chain or 0))
    stated = (entry.get("parameters") or {}).get("predicted")
    if not (isinstance(stated, list) and len(stated) == len(predicted)):
        raise _Missing("parameters.predicted")
    if not all(math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) for a, b in zip(stated, predicted)):
        raise _Contradiction(f"parameters.predicted {stated} is not the {law} law's slopes {predicted}")
    return variant, law, limit, pairs, predicted


def _law_rule(entry: dict[str, Any], document: Any) -> str:
    """Experiment 3C's law per order, from the summary's ``variants.<variant>`` limit and successive slopes: the law's
    slopes (checked against ``parameters.predicted``), per-order convergence and the CI against them, then over k ≥ 2
    fails at any converged order, holds at every resolved order, cannot tell (not converged) where only unconverged
    orders stand in the way, else cannot tell; ``consistent (post hoc)`` for a holding law the block marks as fitted to
    these data."""
    variant, law, limit, pairs, predicted = _law_sources(entry, document)
    tolerance, settled = _parameter(entry, "tolerance"), _parameter(entry, "convergence_tolerance")
    points, first = _parameter(entry, "limit_points"), _parameter(entry, "first_counted_order")
    where = f"variants.{variant}"
    tested = [
        _law_order(row, pairs, predicted[int(row["order"])], tolerance, settled, points, where)
        for row in limit
        if row["order"] >= first and row.get("resolved")
    ]
    if not tested:
        return CANNOT_TELL  # no order resolved: nothing to judge
    if FAILS in tested:
        return FAILS
    if all(part == HOLDS for part in tested):
        return POST_HOC if _source(document, "variants", variant, "laws", law, "post_hoc") is True else HOLDS
    return NOT_CONVERGED if CANNOT_TELL not in tested else CANNOT_TELL


def _deciding_order_rule(entry: dict[str, Any], document: Any) -> str:
    """Experiment 3C's law at its deciding order (``parameters.order``), from the same sources as :func:`_law_rule`."""
    variant, _, limit, pairs, predicted = _law_sources(entry, document)
    order = int(_parameter(entry, "order"))
    if not 1 <= order < len(limit):
        raise _Missing(f"variants.{variant}.limit_slopes[{order}]")
    row = limit[order]
    if not row.get("resolved"):
        return UNRESOLVED
    return _law_order(
        row,
        pairs,
        predicted[order],
        _parameter(entry, "tolerance"),
        _parameter(entry, "convergence_tolerance"),
        _parameter(entry, "limit_points"),
        f"variants.{variant}",
    )


def _replication_rule(entry: dict[str, Any], document: Any) -> str:
    """Experiment 3C's combined verdict over replications, from each replication's decision in ``replications[]``
    (``parameters.part_of`` names the field; ``parameters.parts`` must be those decisions): all must hold."""
    key = (entry.get("parameters") or {}).get("part_of")
    rows = _source(document, "replications")
    if (
        not isinstance(key, str)
        or not isinstance(rows, list)
        or not all(isinstance(row, dict) and key in row for row in rows)
    ):
        raise _Missing(f"replications[].{key} (parameters.part_of)")
    parts = [row[key] for row in rows]
    if (entry.get("parameters") or {}).get("parts") != parts:
        raise _Contradiction(
            f"parameters.parts {entry['parameters'].get('parts')} are not replications[].{key} {parts}"
        )
    return all_must_hold(parts)


COMPOSITE_SHAPES: tuple[tuple[re.Pattern[str], tuple[str, ...], Any], ...] = (
    (re.compile(r"^holds when every order k ≥ 1 has mean (?:Walsh )?energy ≥ "), (HOLDS, UNRESOLVED), _resolved_rule),
    (
        re.compile(r"^holds when the 95 % CI of the per-image peak order lies outside the binomial null"),
        DECIDED_BY_RULE, _peak_rule,
    ),
    (
        re.compile(r"^holds when the 95 % CI of the per-image peak order lies within the middle orders"),
        DECIDED_BY_RULE, _middle_peak_rule,
    ),
    (
        re.compile(r"^holds \(higher orders\) when the 95 % CI of κ lies above the binomial null's κ and that of C≤3"),
        DECIDED_BY_RULE, _shape_rule,
    ),
    (
        re.compile(r"^holds when the Möbius and the Walsh shape verdicts are both decided"),
        (*DECIDED_BY_RULE, UNRESOLVED), _basis_rule,
    ),
    (
        re.compile(r"^holds when the 95 % CI of the paired per-image change κ\(λ_min\) − κ\(1\) lies below 0 and the two-sided sign test"),
        DECIDED_BY_RULE, _falls_rule,
    ),
    (
        re.compile(r"^holds when at every step of the λ grid the 95 % CI of the paired per-image change of κ lies below 0"),
        DECIDED_BY_RULE, _monotone_rule,
    ),
    (
        re.compile(r"^holds when the 95 % CI of the paired difference lies above 0 and the exact sign test gives p < "),
        DECIDED_BY_RULE, _paired_rule,
    ),
    (re.compile(r"^equivalence by two one-sided t-tests \(TOST\) at level α"), DECIDED_BY_RULE, _equivalence_rule),
    (
        re.compile(r"^holds when the same − different mean Jaccard, the AUC and the 1-NN accuracy all beat the label-permutation null"),
        (*DECIDED_BY_RULE, NO_POWER), _alignment_rule,
    ),
    (
        re.compile(r"^the scalar − vector difference of the pooled AUC"),
        (*DECIDED_BY_RULE, NO_POWER), _auc_contrast_rule,
    ),
    (
        re.compile(r"^holds when more of each image's top-K lies in the global core than random top-K sets"),
        (*DECIDED_BY_RULE, NO_POWER), _core_rule,
    ),
    (
        re.compile(r"^holds when the scalar ranking's alignment holds, scalar − vector holds and the vector's alignment is not detected"),
        (*DECIDED_BY_RULE, NON_FINITE), _seed_alignment_rule,
    ),
    (
        re.compile(r"^a measure at its bound, .* Otherwise, by the hard − easy quartile difference of the primary score"),
        DECIDED_BY_RULE, _difficulty_rule,
    ),
    (
        re.compile(r"^at the strength of its parts: holds when every part holds; fails when a part fails in both halves"),
        (*DECIDED_BY_RULE, PARTLY_CONTRADICTED, NON_FINITE), _seed_difficulty_rule,
    ),
    (
        re.compile(r"^holds when the 95 % CI of the mean relative error lies at or above 1 at every K < 2\^L of the grid"),
        DECIDED_BY_RULE, _relative_error_rule,
    ),
    (
        re.compile(r"^holds when the paired per-image difference magnitude − control has a 95 % CI above 0 and a two-sided paired sign-flip"),
        DECIDED_BY_RULE, _controls_rule,
    ),
    (
        re.compile(r"^over the resolved orders k ≥ 2: holds when every slope's 95 % CI lies inside k ± tolerance"),
        (*DECIDED_BY_RULE, UNRESOLVED), _power_law_rule,
    ),
    (
        re.compile(r"^unresolved when either run has an order within the round-off floor; cannot tell when the null is a constant function"),
        (*DECIDED_BY_RULE, UNRESOLVED), _null_rule,
    ),
    (
        re.compile(r"^a random-init network is a null when the relative spread of its trunk energy over images is at least"),
        (HOLDS, FAILS), _null_input_rule,
    ),
    (
        re.compile(r"^exact one-sided rank test of the trained network's per-network mean among the null networks'"),
        DECIDED_BY_RULE, _null_rank_rule,
    ),
    (
        re.compile(r"^per order k ≥ 1: an order whose window lacks one of its λs \(the round-off floor\)"),
        (*DECIDED_BY_RULE, NOT_CONVERGED, POST_HOC), _law_rule,
    ),
    (
        re.compile(r"^at the deciding order alone \(parameters\.order\): unresolved without two λs above floor_margin"),
        (*DECIDED_BY_RULE, NOT_CONVERGED, UNRESOLVED), _deciding_order_rule,
    ),
    (
        re.compile(r"^all must hold over the replications: holds when every replication's verdict holds"),
        (*DECIDED_BY_RULE, NOT_CONVERGED), _replication_rule,
    ),
)  # fmt: skip


def composite_decision(entry: dict[str, Any], document: Any) -> tuple[str | None, tuple[str, ...]]:
    """The decision a composite rule gives on the verdict's numbers (or the summary's source numbers), and the decisions
    that rule can give (another decision was reached before the rule: not re-derived, unless it is holds / fails / cannot
    tell, which the rule is asked for); ``(None, ())`` for no known shape."""
    rule = str(entry.get("rule", ""))
    for pattern, decides, derive in COMPOSITE_SHAPES:
        if pattern.search(rule):
            derived = entry.get("decision") in decides or entry.get("decision") in DECIDED_BY_RULE
            return (derive(entry, document) if derived else None), decides
    return None, ()
