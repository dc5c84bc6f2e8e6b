"""The one verdict engine: every rule declared once, as data, and the checker that re-runs it.

A :class:`Rule` is declared once, beside the experiment whose summaries it decides: its ``id`` (unique in the
project), the sentence stored in each entry's ``rule`` (``text``) and the claim it judges (``claim``, a template),
``read`` — the inputs it takes from the stored summary (:class:`Reading`: the verdict entry, the summary that holds it)
— and ``decide(**inputs)``, a decision of the closed vocabulary (:data:`experiment_1.report.verdicts.DECISIONS`).

- An experiment makes each verdict entry with :meth:`Rule.verdict`: the summary's numbers in, the decision out of
  the rule's ``decide`` (:meth:`Rule.judge`: ``n/a — non-finite`` when an input or a number of the entry is NaN or
  infinite, whatever ``decide`` would say).
- Each experiment's ``record.py`` declares which rule decides which verdict ids (a :data:`VerdictTable`: fnmatch
  pattern → rule, named ``"module:attribute"`` and imported on first use, so reading a record stays light).
- :func:`check_verdicts` — what every renderer calls before it prints a word (plot steps through
  :func:`load_checked_summary`, ``paper.checks``) — re-runs the same ``read`` and ``decide`` on the stored summary
  and refuses, in one line naming the file and the verdict: a decision outside the vocabulary; a verdict whose id no
  declared rule matches; a rule text that is not its rule's; a number the rule reads that is missing, or an entry's
  copy of a number that disagrees with the summary's source (:class:`Contradiction`); and any decision other than the
  one the rule gives on the summary's numbers — ``saturated``, ``unresolved`` and ``n/a — non-finite`` included.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from experiment_1.errors import PipelineError
from experiment_1.report.markdown import NON_FINITE
from experiment_1.report.verdicts import CANNOT_TELL, DECISIONS, FAILS, HOLDS, all_finite, holm, verdict

NUMBER_PARTS = ("statistic", "effect", "test", "seed")  # the parts of an entry that hold its own numbers
RELATIVE = 1e-9  # an entry's copy of a source number equals it to this relative tolerance (JSON round trip)


class Missing(Exception):
    """A number the rule reads is absent (its dotted name)."""


class Contradiction(Exception):
    """An entry's copy of a number disagrees with the summary's source (what differs)."""


def real(value: Any) -> bool:
    """A finite int or float (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def same(stored: Any, found: Any) -> bool:
    """Two copies of one number: equal to :data:`RELATIVE` (both NaN counts as the same)."""
    if real(stored) and real(found):
        return math.isclose(stored, found, rel_tol=RELATIVE, abs_tol=1e-12)
    both_nan = isinstance(stored, float) and isinstance(found, float) and math.isnan(stored) and math.isnan(found)
    return both_nan or stored == found


@dataclass(frozen=True)
class Reading:
    """What a rule reads: one verdict entry and the summary that holds it."""

    entry: Mapping[str, Any]
    summary: Mapping[str, Any]

    @property
    def parts(self) -> list[str]:
        """The verdict id's dot-separated parts (``shape.vector`` → ``["shape", "vector"]``)."""
        return str(self.entry.get("id", "")).split(".")

    def at(self, *keys: str | int) -> Any:
        """``summary[k1][k2]…``; :class:`Missing` naming the dotted path when one is absent."""
        node: Any = self.summary
        for key in keys:
            try:
                node = node[key]
            except (KeyError, IndexError, TypeError):
                raise Missing(".".join(map(str, keys))) from None
        return node

    def number(self, *keys: str | int) -> float:
        """:meth:`at`, a real number (NaN and inf pass: the guard reads them)."""
        value = self.at(*keys)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise Missing(".".join(map(str, keys)))
        return float(value)

    def own(self, part: str, key: str) -> Any:
        """The entry's own ``part.key`` (its effect, test, parameters …); :class:`Missing` when absent."""
        block = self.entry.get(part)
        if not isinstance(block, Mapping) or key not in block:
            raise Missing(f"{part}.{key}")
        return block[key]

    def interval(self, *keys: str | int) -> tuple[float, float]:
        """The (ci_low, ci_high) of the statistic at ``keys`` in the summary."""
        return self.number(*keys, "ci_low"), self.number(*keys, "ci_high")

    def copied(self, part: str, source: Mapping[str, Any], keys: Sequence[str] = ("ci_low", "ci_high")) -> None:
        """Refuse an entry whose ``part`` (its effect, …) is not the summary's ``source`` numbers (:class:`Contradiction`)."""
        for key in keys:
            stored, found = self.own(part, key), source.get(key) if isinstance(source, Mapping) else None
            if not same(stored, found):
                raise Contradiction(f"its {part}.{key} {stored!r} is not {found!r}, the number its rule reads")

    def decision_of(self, verdict_id: str) -> str:
        """The stored decision of another verdict of the same summary (a part this rule combines)."""
        for other in self.summary.get("verdicts", ()) if isinstance(self.summary, Mapping) else ():
            if isinstance(other, Mapping) and other.get("id") == verdict_id:
                return str(other.get("decision"))
        raise Missing(f"the verdict {verdict_id} (a part its rule combines)")


@dataclass(frozen=True)
class Rule:
    """One verdict rule, declared once (see the module docstring)."""

    id: str
    text: str | Callable[[Mapping[str, Any]], str]
    """The rule in words, as each entry stores it; a function of the entry where the words name its parameters."""
    read: Callable[[Reading], dict[str, Any]]
    """The inputs of :attr:`decide`, from the entry and its summary."""
    decide: Callable[..., str]
    """The decision on the inputs (keyword arguments): the one place this rule is decided."""
    claim: str = ""
    """The claim the rule judges, a ``str.format`` template filled by :meth:`verdict`'s ``fields``."""

    def words(self, entry: Mapping[str, Any]) -> str:
        return self.text if isinstance(self.text, str) else self.text(entry)

    def decide_on(self, inputs: Mapping[str, Any], *numbers: Any) -> str:
        """:attr:`decide` on ``inputs``, or ``n/a — non-finite`` when one of them (or of ``numbers``) is NaN or infinite."""
        if not all_finite(inputs, *numbers):
            return NON_FINITE
        decision = self.decide(**inputs)
        if decision not in DECISIONS:
            raise ValueError(f"rule {self.id}: decision {decision!r} is not one of {DECISIONS}")
        return decision

    def judge(self, entry: Mapping[str, Any], summary: Mapping[str, Any]) -> str:
        """The decision the rule gives on the entry and its summary: :meth:`decide_on` the inputs it reads, with the
        entry's own numbers in the non-finite guard."""
        return self.decide_on(self.read(Reading(entry, summary)), *(entry.get(part) for part in NUMBER_PARTS))

    def verdict(
        self,
        verdict_id: str,
        summary: Mapping[str, Any],
        claim: str | None = None,
        *,
        fields: Mapping[str, Any] | None = None,
        notes: Sequence[str] | Callable[[str], Sequence[str]] = (),
        **parts: Any,
    ) -> dict[str, Any]:
        """A verdict entry (:func:`experiment_1.report.verdicts.verdict`'s schema) decided by this rule on ``summary``:
        ``claim`` (else :attr:`claim` filled with ``fields``), ``parts`` (statistic, effect, test, seed, parameters) and
        ``notes`` (or a function of the decision giving them)."""
        if claim is None:
            claim = self.claim.format(**fields) if fields else self.claim
        draft = verdict(verdict_id, claim, NON_FINITE, "", **parts)
        draft["rule"] = self.words(draft)
        inputs, numbers = self.read(Reading(draft, summary)), [draft.get(part) for part in NUMBER_PARTS]
        draft["decision"] = decision = self.decide_on(inputs, *numbers)
        draft["notes"] = list(notes(decision) if callable(notes) else notes)
        if not all_finite(inputs, *numbers):
            draft["notes"].append("non-finite input: no verdict is drawn from it")
        return draft


def resolve(reference: str) -> Any:
    """The attribute a ``"module:attribute"`` reference names, imported now (a record's code, a table's rule)."""
    module, _, attribute = reference.partition(":")
    if not attribute:
        raise ValueError(f"{reference!r}: expected 'module:attribute'")
    return getattr(importlib.import_module(module), attribute)


VerdictTable = tuple[tuple[str, "Rule | str"], ...]
"""A record's rules: (verdict-id fnmatch pattern, the rule or ``"module:attribute"`` naming it), the first match wins."""


def rule_of(table: VerdictTable, verdict_id: str) -> Rule | None:
    """The rule the table declares for ``verdict_id`` (imported on first use), ``None`` when no pattern matches."""
    for pattern, rule in table:
        if fnmatchcase(verdict_id, pattern):
            return resolve(rule) if isinstance(rule, str) else rule
    return None


def check_verdicts(
    document: Any, path: Path | str, table: VerdictTable, fix: str = "rerun the step that wrote it"
) -> None:
    """Refuse a results file whose ``verdicts`` the table's rules do not give on its own numbers (module docstring)."""
    entries = document.get("verdicts") if isinstance(document, Mapping) else None
    for entry in entries if isinstance(entries, list) else ():
        entry = entry if isinstance(entry, Mapping) else {}
        name, decision = entry.get("id", "?"), entry.get("decision")
        if decision not in DECISIONS:
            raise PipelineError(
                f"{path}: verdict {name} has decision {decision!r}, not one of {', '.join(DECISIONS)}; {fix}"
            )
        rule = rule_of(table, str(name))
        if rule is None:
            raise PipelineError(f"{path}: verdict {name} matches no declared rule, so nothing can check it; {fix}")
        try:
            if entry.get("rule") != rule.words(entry):
                raise Contradiction(f"it states another rule than its declared rule {rule.id} ({rule.words(entry)!r})")
            expected = rule.judge(entry, document)
        except Missing as missing:
            raise PipelineError(
                f"{path}: verdict {name} says {decision!r} but lacks {missing}, which its rule {rule.id} reads; {fix}"
            ) from None
        except Contradiction as contradiction:
            raise PipelineError(f"{path}: verdict {name}: {contradiction}; {fix}") from None
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as error:  # a part of another shape
            raise PipelineError(
                f"{path}: verdict {name} is not in the shape its rule {rule.id} reads ({type(error).__name__}: {error}); {fix}"
            ) from None
        if decision != expected:
            raise PipelineError(
                f"{path}: verdict {name} says {decision!r} but its rule {rule.id} gives {expected!r} on the summary's numbers; {fix}"
            )


def load_checked_summary(
    path: Path, experiment: int | str, producer_step: str, *args: Any, rules: VerdictTable, **kwargs: Any
) -> dict[str, Any]:
    """:func:`experiment_1.files.load_summary` and then :func:`check_verdicts` with the record's ``rules``: what every plot
    step reads its summary with, so that no REPORT or figure is drawn beside a verdict its own numbers contradict."""
    from experiment_1.files import load_summary  # torch, which the rule declarations (read by records) do without

    summary = load_summary(path, experiment, producer_step, *args, **kwargs)
    check_verdicts(summary, path, rules, fix=f"rerun `python -m {producer_step}` to rewrite it")
    return summary


# --- decisions several rules share ---


def side(low: float, high: float, value: float = 0.0) -> int:
    """+1 when the CI [low, high] lies above ``value``, −1 below, 0 when it contains it."""
    return 1 if low > value else -1 if high < value else 0


def ci_against(low: float, high: float, value: float, holds: str = "above", at_or: bool = False) -> str:
    """A CI against a number: holds when it lies (``at_or``: at or) above it (``holds="below"``: below), fails when it
    lies wholly on the other side, else cannot tell."""
    if holds == "above":
        held, failed = (low >= value if at_or else low > value), high < value
    else:
        held, failed = (high <= value if at_or else high < value), low > value
    return HOLDS if held else FAILS if failed else CANNOT_TELL


def excludes_zero(low: float, high: float) -> str:
    """holds when the CI excludes 0, else cannot tell (no equivalence margin: never fails)."""
    return HOLDS if side(low, high) else CANNOT_TELL


def significant_side(low: float, high: float, p_value: float, alpha: float, holds: int = 1) -> str:
    """A CI on one side of 0 with a significant test: holds on the ``holds`` side (+1 above, −1 below), fails on the
    other, else cannot tell."""
    where = side(low, high)
    if p_value <= alpha and where:
        return HOLDS if where == holds else FAILS
    return CANNOT_TELL


def every_part(parts: Sequence[str]) -> str:
    """A claim that every part holds: fails when one fails, holds when all hold, else cannot tell."""
    if FAILS in parts:
        return FAILS
    return HOLDS if parts and all(part == HOLDS for part in parts) else CANNOT_TELL


def holm_sides(
    intervals: Sequence[tuple[float, float]], p_values: Sequence[float], alpha: float, holds: int = 1
) -> str:
    """:func:`every_part` over parts each decided by :func:`significant_side` at its Holm-adjusted p."""
    adjusted = holm(p_values)
    return every_part([significant_side(low, high, p, alpha, holds) for (low, high), p in zip(intervals, adjusted)])
