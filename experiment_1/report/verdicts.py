"""Verdicts as data: the one schema every experiment's summary uses for its ``verdicts`` block.

A summary's ``verdicts`` is a list (render order) of dicts built by :func:`verdict`::

    {"id": "n_eff_vector.hard_minus_easy",            # stable key, unique within the summary
     "claim": "N_eff^v is higher on hard images",      # the statement being judged
     "decision": "holds",                               # one of DECISIONS
     "rule": "holds when the 95 % CI excludes 0 …",     # the rule that decided it, in words
     "parameters": {"alpha": 0.05},                     # the rule's thresholds, as numbers
     "statistic": {"name": "Spearman ρ", "value": 0.31},                           # or None
     "effect": {"name": "hard − easy", "value": 2.1, "ci_low": 0.4, "ci_high": 3.9, "confidence": 0.95,
                "percent": False},                      # or None; statistic and effect may carry "percent": True
     "test": {"name": "Mann–Whitney U", "p_value": 0.003, "p_adjusted": 0.04,
              "correction": "Holm", "family_size": 15, "p_floor": None},          # or None
     "seed": {"reported": 1.4, "relation": "inside", "minimal_detectable_effect": 7.6, "power": 0.8},  # or None
     "notes": ["…"]}                                    # facts the reader must know to read the decision

Decisions (closed vocabulary): ``holds`` / ``fails`` (the data decide the claim), ``cannot tell`` (they do
not: a CI that covers both answers, or that contains the seed's value, or a test too weak to see the effect —
:func:`power_guard`), ``cannot tell (not converged)`` (a limit whose estimates still move across the last
steps of its grid: a cannot tell with its cause), ``cannot tell (no power)`` (a test whose best attainable p — its
floor for the data at hand: 1/(n + 1) for n permutations, 2·0.5^n for an exact sign test on n untied pairs, times
the family size under Holm — exceeds α: no outcome could have decided), ``cannot tell (estimator out of range)`` (an
estimate outside its quantity's range, e.g. a share above 1: the estimator's noise, never a measure at its bound),
``cannot tell (partly contradicted)`` (a claim
of parts where one part fails while others cannot tell: :func:`parts_decision`), ``consistent (post hoc)`` (a law that agrees with the data it was
fitted to: not a test until it meets other data), ``saturated`` (the measure sits at its bound, within :data:`NEAR_BOUND_MARGIN` of it, or
at one value, on ≥ 90 % of images: it cannot move, so it says nothing), ``constant`` (one value on every
image), ``unresolved`` (the quantity sits within the round-off floor of the arithmetic: it is noise, never a
null or a finding), ``n/a — non-finite`` (an input was NaN/inf: no confident verdict is drawn from it).

Small samples: a share of 0/1 outcomes gets its exact (Clopper–Pearson) interval
(:func:`experiment_1.report.stats.exact_proportion_ci`), and :func:`power_guard` turns a decision drawn from a
test whose power against the effect of interest is below :data:`POWER` into ``cannot tell`` where it rests on
absence of significance (:func:`sign_test_power`, :func:`binomial_power` compute that power exactly).

Helpers: :func:`hypothesis_test` (a test entry), :func:`holm` (step-down multiplicity correction),
:func:`saturation` (with ``margin``: near the bound counts as at it), :func:`power_guard`, :func:`binomial_power`,
:func:`sign_test_power`, :func:`proportion_effect`, :func:`all_finite` (the guard; :func:`verdict` applies it to its own numbers and to
``inputs``),
:func:`conjunction` (a claim made of parts), :func:`seed_comparison` (with the smallest detectable effect),
:func:`effect_from_stat`, :func:`by_id` (look a verdict up in a block); equivalence ("no change within ±margin"):
:func:`tost` (two one-sided t-tests), :func:`decide_equivalence`, :func:`equivalence_margin` (a fraction of the
effect the margin must separate); :func:`parts_decision` (names a partly contradicted claim).
Rendering: Markdown bullets for REPORTs in :func:`~experiment_1.report.markdown.verdict_lines`; paper/ words a verdict in
paper/wording.py.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any, Iterable, Sequence

import numpy as np
from scipy.stats import binom, binomtest
from scipy.stats import t as t_distribution

from experiment_1.report.markdown import NON_FINITE

HOLDS = "holds"
FAILS = "fails"
CANNOT_TELL = "cannot tell"
SATURATED = "saturated"
CONSTANT = "constant"
UNRESOLVED = "unresolved"
NOT_CONVERGED = (
    "cannot tell (not converged)"  # a limit whose successive slopes still move: a cannot tell with its cause
)
POST_HOC = "consistent (post hoc)"  # a law that holds on the data it was fitted to: not a test
NO_POWER = "cannot tell (no power)"  # a test whose best attainable p exceeds α: no outcome of it could decide
PARTLY_CONTRADICTED = "cannot tell (partly contradicted)"  # a claim of parts: one part fails, others cannot tell
OUT_OF_RANGE = "cannot tell (estimator out of range)"  # an estimate outside its quantity's range: noise, not a bound
DECISIONS = (
    HOLDS,
    FAILS,
    CANNOT_TELL,
    NOT_CONVERGED,
    NO_POWER,
    OUT_OF_RANGE,
    PARTLY_CONTRADICTED,
    POST_HOC,
    SATURATED,
    CONSTANT,
    UNRESOLVED,
    NON_FINITE,
)

ALPHA = 0.05
SATURATION_SHARE = 0.9  # at a bound (or one value) on at least this share of images → saturated
POWER = (
    0.8  # for the smallest detectable effect, and the least power a test needs before its silence is read (power_guard)
)
NEAR_BOUND_MARGIN = (
    0.05  # within this share of a measure's range from a bound counts as at the bound (saturation with near_bound)
)


def _numbers(value: Any) -> Iterable[float]:
    """Every number inside ``value`` (dicts, lists, arrays; ``None`` and strings skipped)."""
    if value is None or isinstance(value, (str, bool)):
        return
    if isinstance(value, dict):
        for item in value.values():
            yield from _numbers(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _numbers(item)
    elif isinstance(value, np.ndarray):
        yield from np.asarray(value, dtype=np.float64).ravel().tolist()
    else:
        yield float(value)


def all_finite(*values: Any) -> bool:
    """True when every number in ``values`` (scalars, arrays, nested dicts/lists) is finite."""
    return all(math.isfinite(number) for value in values for number in _numbers(value))


def effect_from_stat(
    name: str, stat: dict[str, Any], confidence: float = 1 - ALPHA, percent: bool = False
) -> dict[str, Any]:
    """An effect entry from a :func:`experiment_1.report.stats.bootstrap_mean_ci`-style dict (``mean``, ``ci_low``, ``ci_high``);
    ``percent``: a share, rendered as a percentage."""
    return {
        "name": name,
        "value": stat["mean"],
        "ci_low": stat["ci_low"],
        "ci_high": stat["ci_high"],
        "confidence": confidence,
        "percent": percent,
    }


def verdict(
    verdict_id: str,
    claim: str,
    decision: str,
    rule: str,
    *,
    parameters: dict[str, Any] | None = None,
    statistic: dict[str, Any] | None = None,
    effect: dict[str, Any] | None = None,
    test: dict[str, Any] | None = None,
    seed: dict[str, Any] | None = None,
    notes: Sequence[str] = (),
    inputs: Sequence[Any] = (),
) -> dict[str, Any]:
    """One verdict entry. ``decision`` must be one of :data:`DECISIONS`.

    The non-finite guard: when a number in ``statistic``, ``effect``, ``test`` or ``seed``, or in the raw
    ``inputs`` (per-image arrays the decision was drawn from; not stored) is NaN or infinite, the decision
    becomes ``n/a — non-finite`` whatever was passed, and a note says so.
    """
    if decision not in DECISIONS:
        raise ValueError(f"verdict {verdict_id!r}: decision {decision!r} is not one of {DECISIONS}")
    notes = list(notes)
    if not all_finite(statistic, effect, test, seed, *inputs):
        if decision != NON_FINITE:
            notes.append(f"non-finite input: the rule would have said {decision!r}; no verdict is drawn")
        decision = NON_FINITE
    return {
        "id": verdict_id,
        "claim": claim,
        "decision": decision,
        "rule": rule,
        "parameters": dict(parameters or {}),
        "statistic": statistic,
        "effect": effect,
        "test": test,
        "seed": seed,
        "notes": notes,
    }


def hypothesis_test(
    name: str,
    p_value: float,
    *,
    p_adjusted: float | None = None,
    correction: str | None = None,
    family_size: int | None = None,
    p_floor: float | None = None,
) -> dict[str, Any]:
    """A test entry; ``p_floor`` is the smallest p the test can return (1/(n+1) for n permutations)."""
    return {
        "name": name,
        "p_value": p_value,
        "p_adjusted": p_adjusted,
        "correction": correction,
        "family_size": family_size,
        "p_floor": p_floor,
    }


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order (monotone in the sorted order, capped at 1).

    A non-finite p stays NaN and still counts in the family size m (the conservative choice: a test that
    could not be computed was still attempted).
    """
    p = np.asarray(p_values, dtype=np.float64)
    m = len(p)
    adjusted = np.full(m, np.nan)
    finite = np.flatnonzero(np.isfinite(p))
    order = finite[np.argsort(p[finite], kind="stable")]
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[index]))
        adjusted[index] = running
    return adjusted.tolist()


def saturation(
    values: np.ndarray, bounds: Sequence[float] = (), share: float = SATURATION_SHARE, margin: float = 0.0
) -> dict[str, Any] | None:
    """``constant`` / ``saturated`` diagnosis of a per-image measure, or ``None`` when it moves.

    ``constant``: one value on every (finite) image. ``saturated``: a value in ``bounds`` (the measure's
    attainable limits, e.g. 2^L subsets), or any single value, holds on at least ``share`` of the images.
    With ``margin`` > 0 (a share of the range between the lowest and highest bound, e.g.
    :data:`NEAR_BOUND_MARGIN`), a value within ``margin × range`` of a bound counts as at it ("near_bound":
    K_τ^err at 494–511 of 512 cannot move far either). Returns ``{"decision", "value", "share", "at"}`` with
    ``at`` ∈ {"bound", "near_bound", "mode"}.
    """
    values = np.asarray(values, dtype=np.float64).ravel()
    values = values[np.isfinite(values)]
    if len(values) == 0:
        return None
    levels, counts = np.unique(values, return_counts=True)
    if len(levels) == 1:
        return {
            "decision": CONSTANT,
            "value": float(levels[0]),
            "share": 1.0,
            "at": "bound" if levels[0] in bounds else "mode",
        }
    for bound in bounds:
        at_bound = float(np.mean(values == bound))
        if at_bound >= share:
            return {"decision": SATURATED, "value": float(bound), "share": at_bound, "at": "bound"}
    if margin > 0 and len(bounds) >= 2:
        width = margin * (max(bounds) - min(bounds))
        for bound in bounds:
            near = float(np.mean(np.abs(values - bound) <= width))
            if near >= share:
                return {
                    "decision": SATURATED,
                    "value": float(bound),
                    "share": near,
                    "at": "near_bound",
                    "margin": width,
                }
    modal_share = counts.max() / len(values)
    if modal_share >= share:
        return {
            "decision": SATURATED,
            "value": float(levels[counts.argmax()]),
            "share": float(modal_share),
            "at": "mode",
        }
    return None


def bounded(diagnosis: dict[str, Any] | None) -> str | None:
    """The decision a :func:`saturation` diagnosis stands for: ``constant`` (one value on every image), ``saturated`` (at
    or near a bound, or one value, on at least :data:`SATURATION_SHARE` of the images), ``None`` when the measure moves."""
    if diagnosis is None or not diagnosis["share"] >= SATURATION_SHARE:
        return None
    return CONSTANT if diagnosis["decision"] == CONSTANT and diagnosis["share"] == 1 else SATURATED


def conjunction(decisions: Sequence[str]) -> str:
    """The decision on a claim made of parts, from the parts' decisions: ``n/a — non-finite`` if any part is,
    else ``fails`` if any part fails, ``holds`` if every part holds, else ``cannot tell`` (a saturated or
    constant part says nothing, so the whole cannot hold)."""
    if NON_FINITE in decisions:
        return NON_FINITE
    if FAILS in decisions:
        return FAILS
    return HOLDS if decisions and all(decision == HOLDS for decision in decisions) else CANNOT_TELL


def all_must_hold(decisions: Sequence[str]) -> str:
    """A law's combined decision over its replications: :func:`conjunction`, except ``cannot tell (not converged)``
    when none fails and every replication that does not hold has not converged."""
    decision = conjunction(decisions)
    if decision == CANNOT_TELL and decisions and all(part in (HOLDS, NOT_CONVERGED) for part in decisions):
        return NOT_CONVERGED
    return decision


def by_id(verdicts: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """A verdicts block keyed by ``id``."""
    return {entry["id"]: entry for entry in verdicts}


def seed_comparison(
    reported: float, effect: dict[str, Any], alpha: float = ALPHA, power: float = POWER
) -> dict[str, Any]:
    """Where the seed's reported value sits relative to our CI, with the smallest effect our data could detect.

    ``relation``: "inside" (our CI contains what the seed reports: cannot tell them apart), "above" or
    "below" (the seed's value lies above / below our CI). ``minimal_detectable_effect``: the normal-
    approximation smallest true effect a two-sided level-``alpha`` test detects with probability
    ``power``, (z_{1−α/2} + z_{power})·SE, with SE read off our CI as width / (2·z_{(1+confidence)/2}).
    """
    low, high = effect["ci_low"], effect["ci_high"]
    if not all_finite(reported, low, high):
        return {"reported": reported, "relation": None, "minimal_detectable_effect": None, "power": power}
    relation = "inside" if low <= reported <= high else ("above" if reported > high else "below")
    normal = NormalDist()
    standard_error = (high - low) / (2 * normal.inv_cdf((1 + effect.get("confidence", 1 - ALPHA)) / 2))
    detectable = (normal.inv_cdf(1 - alpha / 2) + normal.inv_cdf(power)) * standard_error
    return {"reported": reported, "relation": relation, "minimal_detectable_effect": detectable, "power": power}


def binomial_power(n: int, p_null: float, p_true: float, alpha: float = ALPHA) -> float:
    """Exact power of the two-sided binomial test of ``p = p_null`` (:func:`scipy.stats.binomtest`) at level ``alpha``
    with ``n`` trials when the true share is ``p_true``: the probability of a count whose p-value is ≤ ``alpha``."""
    if n <= 0:
        return 0.0
    rejecting = [count for count in range(n + 1) if binomtest(count, n, p_null).pvalue <= alpha]
    return float(sum(binom.pmf(count, n, p_true) for count in rejecting))


def sign_test_power(n: int, share_positive: float, alpha: float = ALPHA) -> float:
    """Power of the two-sided sign test over ``n`` untied pairs when a pair moves up with probability ``share_positive``
    (:func:`binomial_power` against ½). Below 6 pairs no outcome reaches p ≤ 0.05, so the power is 0."""
    return binomial_power(n, 0.5, share_positive, alpha)


def power_guard(
    decision: str, power: float, minimum: float = POWER, significant: bool = False
) -> tuple[str, list[str]]:
    """The minimum-power rule: when the test was not ``significant`` and its ``power`` against the effect of interest is
    below ``minimum``, its silence is not read — a ``holds`` / ``fails`` becomes ``cannot tell`` (absence of significance
    is never "fails") and a note says why. A significant result is read whatever the power. Returns the decision and
    the notes."""
    if significant or power >= minimum:
        return decision, []
    note = f"power {power:.2f} < {minimum:.2f} against the effect of interest: too few observations, so the absence of significance is not read"
    return (CANNOT_TELL if decision in (HOLDS, FAILS) else decision), [note]


def proportion_effect(name: str, stat: dict[str, Any]) -> dict[str, Any]:
    """An effect entry (a percentage) from :func:`experiment_1.report.stats.exact_proportion_ci`, naming its interval."""
    effect = effect_from_stat(name, stat, percent=True)
    if "successes" in stat:
        effect.update(successes=stat["successes"], n=stat["n"], interval=stat.get("method", "Clopper-Pearson"))
    return effect


TOST_NAME = "TOST (two one-sided t-tests)"
EQUIVALENCE_RULE = (
    "equivalence by two one-sided t-tests (TOST) at level α: holds when the 1 − 2α t-interval of the mean difference "
    "lies inside ±margin (TOST p ≤ α); fails when it lies wholly beyond the margin (the mean differs by more than the "
    "margin at level α); otherwise cannot tell"
)


def _tost_from(
    mean: float, standard_error: float, df: float, count: int, margin: float, alpha: float
) -> dict[str, Any]:
    """TOST of a mean difference with its standard error and degrees of freedom; a difference without spread (standard
    error 0) gives each one-sided p as 0 when the difference lies strictly on the alternative's side, else 1."""

    def greater(mu: float) -> float:  # p of "difference > mu"
        if count < 2 or not math.isfinite(mean):
            return 1.0
        if standard_error == 0:
            return 0.0 if mean > mu else 1.0
        return float(t_distribution.sf((mean - mu) / standard_error, df))

    def less(mu: float) -> float:  # p of "difference < mu"
        if count < 2 or not math.isfinite(mean):
            return 1.0
        if standard_error == 0:
            return 0.0 if mean < mu else 1.0
        return float(t_distribution.cdf((mean - mu) / standard_error, df))

    half = float(t_distribution.ppf(1 - alpha, df) * standard_error) if count >= 2 and standard_error > 0 else 0.0
    if count < 2:
        half = float("nan")
    p_lower, p_upper = greater(-margin), less(margin)
    return {
        "name": TOST_NAME,
        "n": count,
        "mean": mean,
        "margin": float(margin),
        "p_lower": p_lower,
        "p_upper": p_upper,
        "p_value": max(p_lower, p_upper),
        "p_beyond": min(greater(margin), less(-margin)),
        "ci_low": mean - half,
        "ci_high": mean + half,
        "confidence": 1 - 2 * alpha,
    }


def _finite(values: Sequence[float] | np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64).ravel()
    return values[np.isfinite(values)]


def tost(differences: Sequence[float] | np.ndarray, margin: float, alpha: float = ALPHA) -> dict[str, Any]:
    """Equivalence of a mean to 0 within ±``margin`` by two one-sided t-tests (Schuirmann's TOST) on one sample (e.g. the
    paired per-image differences): ``p_lower`` tests mean > −margin, ``p_upper`` mean < +margin, and ``p_value`` =
    max of the two (equivalence at level ``alpha`` when ≤ ``alpha``). ``p_beyond``: the smaller of the one-sided ps of
    mean > +margin and mean < −margin (the mean lies beyond the margin at level ``alpha`` when ≤ ``alpha``). The
    matching interval is the t-interval of confidence 1 − 2α (``ci_low``, ``ci_high``, ``confidence``): equivalence ⇔
    it lies inside (−margin, margin); beyond ⇔ it lies wholly outside [−margin, margin]."""
    values = _finite(differences)
    count = len(values)
    mean = float(values.mean()) if count else float("nan")
    error = float(values.std(ddof=1) / math.sqrt(count)) if count >= 2 else float("nan")
    return _tost_from(mean, error, count - 1, count, margin, alpha)


def tost_two_sample(
    first: Sequence[float] | np.ndarray, second: Sequence[float] | np.ndarray, margin: float, alpha: float = ALPHA
) -> dict[str, Any]:
    """:func:`tost` of ``mean(second) − mean(first)`` for two independent groups (Welch: unequal variances,
    Welch–Satterthwaite degrees of freedom); ``n`` is the smaller group's size."""
    first, second = _finite(first), _finite(second)
    count = min(len(first), len(second))
    if count < 2:
        return _tost_from(float("nan"), float("nan"), 1.0, count, margin, alpha)
    v1, v2 = first.var(ddof=1) / len(first), second.var(ddof=1) / len(second)
    error = math.sqrt(v1 + v2)
    df = (v1 + v2) ** 2 / (v1**2 / (len(first) - 1) + v2**2 / (len(second) - 1)) if error > 0 else 1.0
    return _tost_from(float(second.mean() - first.mean()), error, df, count, margin, alpha)


def decide_equivalence(result: dict[str, Any], alpha: float = ALPHA) -> str:
    """The equivalence rule on a :func:`tost` result: ``holds`` when TOST's p ≤ ``alpha`` (the 1 − 2α interval inside
    ±margin), ``fails`` when the mean lies beyond the margin at level ``alpha`` (the interval wholly outside it), else
    ``cannot tell`` (fewer than two values, or an interval across the margin); non-finite → ``n/a — non-finite``."""
    if result["n"] < 2:
        return CANNOT_TELL
    if not all_finite(result["p_value"], result["p_beyond"], result["margin"]):
        return NON_FINITE
    if result["p_value"] <= alpha:
        return HOLDS
    return FAILS if result["p_beyond"] <= alpha else CANNOT_TELL


def equivalence_margin(reference_effect: float, fraction: float) -> float:
    """An equivalence margin as a fraction of the effect it must separate: ``fraction × |reference_effect|``."""
    return float(fraction * abs(reference_effect))


def parts_decision(decisions: Sequence[str]) -> str:
    """A claim made of parts: ``n/a — non-finite`` if any part is; ``holds`` when every part holds; ``fails`` when every
    part is decided (holds / fails) and one fails; ``cannot tell (partly contradicted)`` when a part fails beside
    undecided ones (a saturated part is undecided); else ``cannot tell``."""
    if NON_FINITE in decisions:
        return NON_FINITE
    if decisions and all(decision == HOLDS for decision in decisions):
        return HOLDS
    if FAILS not in decisions:
        return CANNOT_TELL
    return FAILS if all(decision in (HOLDS, FAILS) for decision in decisions) else PARTLY_CONTRADICTED
