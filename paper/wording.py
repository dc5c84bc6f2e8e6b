"""Verdicts and runs in words: the one place paper/ words a stored verdict (tables.md, the README blocks, the paper).

A verdict is worded from its rule's declaration (:mod:`experiment_1.report.rules`): its ``claim`` is the rule's claim
template filled with the experiment's fields — :func:`claim_fields` reads them back, so a sentence that names the
projection or ranking itself states the claim without that subject (:func:`predicate`) —, its decision is the closed
vocabulary's word or, in a sentence about the original study's claims, its phrase (:func:`decision_phrase`); the number
beside it is its effect with the CI, else its statistic (:func:`number_text`); the reason is its test, its comparison
with the original study's value or its first note (:func:`why_text`).

A run is named as a reader knows it (:func:`network_label`: the network, its weights when not trained, its input size
when not its own); tables.md names its folder too (:func:`run_label`), and runs that read the same are told apart by
what differs — seed, λ grid, image list (:func:`run_facts`, :func:`distinguishing_notes`).
"""

from __future__ import annotations

import re
import string
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

from experiment_1.network import native_input_size
from experiment_1.report import (
    BASES,
    PARTLY_CONTRADICTED,
    Rule,
    by_id,
    format_number,
    format_percent,
    network_name,
    pretty_networks,
    rule_of,
)
from paper.experiments import rules_of

DECISION_PHRASES = {
    "holds": "confirmed",
    "fails": "not confirmed",
    "cannot tell": "not decided by these data",
    "saturated": "untestable here (the measure is saturated)",
    "constant": "untestable here (the measure is constant)",
    "n/a — non-finite": "untestable here (a non-finite input)",
    "unresolved": "unresolved (at the round-off floor)",
    "consistent (post hoc)": "consistent, post hoc (a law fitted to the data that test it)",
}
WHY_CLAUSES = 2  # a note of many clauses is cut to its first two where it is the reason


def decision_phrase(decision: str, entry: Mapping[str, Any] | None = None) -> str:
    """The words for a decision in a sentence about a claim; a qualified one (``cannot tell (not converged)``) keeps its
    qualifier, and a partly contradicted claim names its failing parts (from ``entry``'s parameters)."""
    if decision in DECISION_PHRASES:
        return DECISION_PHRASES[decision]
    base, _, qualifier = decision.partition(" (")
    failing = (entry or {}).get("parameters", {}).get("failing_parts") if decision == PARTLY_CONTRADICTED else None
    qualifier = qualifier.removesuffix(")") + (f": fails on {', '.join(failing)}" if failing else "")
    return DECISION_PHRASES.get(base, base) + (f" ({qualifier})" if qualifier else "")


def value_text(part: Mapping[str, Any], value: float) -> str:
    return format_percent(value) if part.get("percent") else format_number(value)


def number_text(entry: Mapping[str, Any]) -> str:
    """The verdict's effect with its CI, else its statistic; "—" without either."""
    effect, statistic = entry.get("effect"), entry.get("statistic")
    if effect:
        interval = f"[{value_text(effect, effect['ci_low'])}, {value_text(effect, effect['ci_high'])}]"
        return f"{effect['name']}: {value_text(effect, effect['value'])} {interval}"
    if statistic:
        return f"{statistic['name']}: {value_text(statistic, statistic['value'])}"
    return "—"


def hypothesis_text(entry: Mapping[str, Any]) -> str:
    """``name, p = …`` with the corrected p and its family when there is one; "—" without a test."""
    test = entry.get("test")
    if not test:
        return "—"
    text = test["name"] + ("" if test.get("p_value") is None else f", p = {format_number(test['p_value'])}")
    if test.get("p_adjusted") is not None:
        correction = test.get("correction") or "adjusted"
        text += f"; {correction} ({test.get('family_size')}): {format_number(test['p_adjusted'])}"
    return text


def why_text(entry: Mapping[str, Any], pattern: str = "") -> str:
    """One clause saying why: the notes ``pattern`` chooses, else the comparison with the original study's value, the
    test, the first note (its first clauses) or the rule's first clause."""
    notes = [str(note) for note in entry.get("notes", ())]
    chosen = [note for note in notes if pattern and re.search(pattern, note)]
    if chosen:
        return "; ".join(chosen)
    seed = entry.get("seed")
    if seed:
        reported = value_text(entry.get("effect") or {}, seed["reported"])
        if seed["relation"] == "inside":
            return f"our CI contains the reported {reported}"
        return f"the reported {reported} lies {seed['relation']} our CI"
    if (entry.get("test") or {}).get("p_value") is not None:
        return hypothesis_text(entry)
    if notes:
        clauses = notes[0].split("; ")
        return "; ".join(clauses[:WHY_CLAUSES]) + ("; …" if len(clauses) > WHY_CLAUSES else "")
    return str(entry["rule"]).split(";")[0]


PROJECTION = re.compile(r"\b(vector|scalar)\b")


def is_basis_reading(entry: Mapping[str, Any]) -> bool:
    """A verdict that reads a claim's Möbius and Walsh decisions together (an id part ``basis`` or ``basis_…``: 3A's
    ``basis.migration.vector``, the depth ladder's ``kappa_over_l.basis.…``, Experiment 5's ``kappa_vector.basis``)."""
    return any(part == "basis" or part.startswith("basis_") for part in str(entry.get("id", "")).split("."))


def basis_of(entry: Mapping[str, Any]) -> str:
    """The basis a verdict reads its orders in: a basis verdict's two decisions in words — what its claim states after
    its last " — " (experiment_1.report.basis_reading: "holds in both bases", "Möbius only: reverses in the Walsh
    basis", …), else "Möbius and Walsh read together" —, "Walsh" for a Walsh verdict (its id's first part ``walsh`` or ``walsh_…``), else "Möbius"."""
    if is_basis_reading(entry):
        claim = str(entry["claim"])
        return claim.rsplit(" — ", 1)[-1] if " — " in claim else "Möbius and Walsh read together"
    first = str(entry.get("id", "")).split(".")[0]
    return BASES["walsh"] if first == "walsh" or first.startswith("walsh_") else BASES["mobius"]


def basis_label(entry: Mapping[str, Any]) -> str:
    """The basis and the projection of a verdict (``Walsh, vector projection``), the projection from its id, else its
    claim; the basis alone where neither names one."""
    found = PROJECTION.search(str(entry.get("id", "")).replace("_", " ")) or PROJECTION.search(str(entry["claim"]))
    return basis_of(entry) + (f", {found.group(1)} projection" if found else "")


def verdict_line(entry: Mapping[str, Any]) -> str:
    """A verdict in one line (tables.md): its claim, its decision and its number."""
    number = number_text(entry)
    return f"{entry['claim']}: **{entry['decision']}**" + ("" if number == "—" else f" — {number}")


def entry_of(document: Any, verdict_id: str) -> dict[str, Any] | None:
    """The verdict ``verdict_id`` of a results file, ``None`` when it has none."""
    verdicts = document.get("verdicts") if isinstance(document, dict) else None
    return by_id(verdicts).get(verdict_id) if isinstance(verdicts, list) else None


def rule_for(document: Mapping[str, Any], entry: Mapping[str, Any]) -> Rule | None:
    """The rule the document's record declares for the entry (:data:`paper.experiments.VERDICTS`)."""
    return rule_of(rules_of(document), str(entry.get("id", "")))


@lru_cache(maxsize=None)
def _template(claim: str) -> re.Pattern[str]:
    """A rule's claim template as a pattern whose groups are its fields (a repeated field matches its first value)."""
    pattern, named = "", set()
    for literal, field, _, _ in string.Formatter().parse(claim):
        pattern += re.escape(literal)
        if field is not None:
            pattern += f"(?P={field})" if field in named else f"(?P<{field}>.+?)"
            named.add(field)
    return re.compile(pattern + r"\Z", re.S)


def claim_fields(rule: Rule | None, claim: str) -> dict[str, str] | None:
    """The fields the experiment filled the rule's claim template with, read back from the stored ``claim``; ``None``
    where the rule declares no template or the claim is not its template's."""
    if rule is None or not rule.claim:
        return None
    match = _template(rule.claim).match(claim)
    return match.groupdict() if match else None


def predicate(document: Mapping[str, Any], entry: Mapping[str, Any]) -> str:
    """The claim without its subject — the part of the template before its first ``": "`` when that part is filled by a
    field (``{projection} projection: …``) — for a sentence that names the projection itself."""
    rule, claim = rule_for(document, entry), str(entry["claim"])
    head = rule.claim.split(": ", 1)[0] if rule is not None and ": " in rule.claim else ""
    if "{" in head and claim_fields(rule, claim) is not None:
        return claim.split(": ", 1)[1]
    return claim


def decided_claim(document: Mapping[str, Any], verdict_id: str, note: int | None = None) -> str:
    """``the claim that … **decision** (verdict `id` — its note)``: a decision only ever beside the claim it decides."""
    entry = entry_of(document, verdict_id)
    if entry is None:
        raise KeyError(verdict_id)
    notes = entry.get("notes", [])
    said = f" — {notes[note]}" if note is not None and len(notes) > abs(note) else ""
    verb = "" if entry["decision"] in ("holds", "fails") else "reads "
    return f"the claim that {predicate(document, entry)} {verb}**{entry['decision']}** (verdict `{verdict_id}`{said})"


def input_size_note(config: Mapping[str, Any]) -> str:
    """`` at 240 px`` for a network evaluated at another input size than it was trained at, else ""."""
    size, native = config.get("input_size"), native_input_size(str(config["arch"]))
    return f" at {size} px" if size is not None and native is not None and size != native else ""


def network_label(summary: Mapping[str, Any], entry: Mapping[str, Any] | None = None) -> str:
    """The network of a run as a reader knows it; a paired comparison (the depth ladder) names its pair, from ``entry``'s
    effect (``EfficientNet-Lite0 vs EfficientNet-Lite1``), else from its id's last part (``…basis.a-b``)."""
    config = summary.get("config")
    if isinstance(config, dict) and "arch" in config:
        return network_name(config["arch"], config.get("weights")) + input_size_note(config)
    effect = (entry or {}).get("effect") or {}
    parts = str(effect.get("name", "")).split("−")[::-1]
    if len(parts) != 2:  # a verdict without an effect (reading two others) names its pair in its id's last part
        parts = str((entry or {}).get("id", "")).rsplit(".", 1)[-1].split("-")
    return " vs ".join(network_name(part.strip()) for part in parts) if len(parts) == 2 else "every step"


def run_label(path: Path, root: Path, summary: Mapping[str, Any]) -> str:
    """A run in tables.md: its folder, network (input size), weights and N."""
    config = summary["config"]
    folder = path.parent.relative_to(root).as_posix()
    return f"`{folder}` — {config['arch']}{input_size_note(config)}, `{config['weights']}`, N = {summary['num_valid']}"


RUN_LABEL = re.compile(r"`[^`]+` — ([A-Za-z0-9_.:]+)((?: at \d+ px)?), `(pretrained|random)`, N = ")


def reader_label(text: str) -> str:
    """The paper's form of :func:`run_label` in ``text``: the network as a reader names it (random init when untrained)
    and N, without the results folder (tables.md keeps the folder, to find the files)."""
    named = RUN_LABEL.sub(lambda match: f"{network_name(match.group(1), match.group(3))}{match.group(2)}, N = ", text)
    return pretty_networks(named)


def run_facts(summary: Mapping[str, Any]) -> dict[str, str]:
    """What may tell two runs of one network apart: its seed, its λ grid, its image list."""
    config = summary.get("config") if isinstance(summary.get("config"), dict) else {}
    facts = {}
    if config.get("seed") is not None:
        facts["seed"] = f"seed {config['seed']}"
    if summary.get("lambdas"):
        facts["grid"] = f"λ ≥ {format_number(min(summary['lambdas']))}"
    if config.get("sample_index"):
        facts["images"] = f"images of `{Path(str(config['sample_index'])).stem.removeprefix('sample_index_')}`"
    return facts


def distinguishing_notes(labels: Sequence[str], facts: Sequence[Mapping[str, str]]) -> list[str]:
    """Per label, ``" (…)"`` naming the facts that tell it from the labels that read the same in the paper
    (:func:`reader_label` drops the results folder) — e.g. replications of one network: another seed, grid or image
    list —, or ``""`` where no other label reads the same."""
    readers = [reader_label(label) for label in labels]
    notes = []
    for reader, own in zip(readers, facts):
        twins = [other for other_reader, other in zip(readers, facts) if other_reader == reader]
        differing = [name for name in own if len({other.get(name) for other in twins}) > 1]
        notes.append(f" ({'; '.join(own[name] for name in differing)})" if differing else "")
    return notes
