"""The power rule of Experiment 4: the best p each of its tests can attain on the data at hand, and the decision when
that best p exceeds α (``cannot tell (no power)``: no outcome of the test could have decided).

- A label-permutation or Monte Carlo test with ``n`` draws: ``p = (1 + #null ≥ ours) / (1 + n)``, at best ``1 / (n + 1)``.
- A two-sided percentile-bootstrap p with ``B`` replicates (twice the smaller tail, each ``(1 + #) / (B + 1)``):
  at best ``2 / (B + 1)``.
- An exact two-sided McNemar (sign) test on ``n`` discordant pairs: at best ``2 · 0.5^n`` (every pair one way), so
  it cannot reach p ≤ 0.05 below 6 discordant pairs; with the two totals fixed (their difference ``d`` = the
  discordant difference) the lowest p over every split is ``2 · 0.5^|d|``.
- In a Holm family of ``m`` tests every adjusted p is at least ``m`` times the smallest raw p, so a member's best
  adjusted p is ``m`` times its best raw p (capped at 1).
"""

from __future__ import annotations

from scipy.stats import binom

from experiment_1.report import ALPHA


def permutation_best_p(num_permutations: int, family_size: int = 1) -> float:
    """``m / (n + 1)``: the floor of a one-sided permutation (or Monte Carlo) p over ``n`` draws, Holm-adjusted in a
    family of ``m`` (one division, so the boundary ``m / (n + 1) = α`` is exact; capped at 1)."""
    return min(1.0, family_size / (num_permutations + 1))


def bootstrap_best_p(num_resamples: int, family_size: int = 1) -> float:
    """``2 m / (B + 1)``: the floor of a two-sided percentile-bootstrap p over ``B`` replicates, Holm-adjusted in a
    family of ``m`` (capped at 1)."""
    return min(1.0, 2 * family_size / (num_resamples + 1))


def mcnemar_p(first_only: int, second_only: int) -> float:
    """The exact two-sided McNemar p of ``first_only`` vs ``second_only`` discordant pairs (1 without any)."""
    discordant = first_only + second_only
    if discordant == 0:
        return 1.0
    return float(min(1.0, 2 * binom.cdf(min(first_only, second_only), discordant, 0.5)))


def mcnemar_best_p(discordant: int) -> float:
    """``2 · 0.5^n``: the smallest two-sided exact McNemar p on ``n`` discordant pairs (1 without any)."""
    return 1.0 if discordant <= 0 else min(1.0, 2.0 * 0.5**discordant)


def no_power(best_p: float, alpha: float = ALPHA) -> bool:
    """True when even the best attainable p exceeds ``alpha``."""
    return best_p > alpha


def power_note(best_p: float, alpha: float = ALPHA) -> str:
    """The note a verdict carries about its test's floor."""
    relation = "exceeds" if no_power(best_p, alpha) else "is at most"
    return f"the best attainable p of this test on these data is {best_p:.3g}, which {relation} α = {alpha}"
