"""Planted 3C blocks for the limit-law tests (tests/experiment_2/test_limit_rules.py, test_law_entries.py): successive and
limit slopes on a fixed λ grid with tight CIs, so each law rule can be reached by choosing the slopes alone."""

from __future__ import annotations

import numpy as np

LAMBDAS = [0.03, 0.01, 0.003, 0.001]
HALF_WIDTH = 0.02  # tight CIs: only the convergence check can stop a wrong "fails"


def block(
    successive: list[list[float]], resolved_to: list[int] | None = None, chain: int = 0, exponent: float = 1.5
) -> dict:
    """A 3C block from successive slopes per step (``successive[step][order]``, order 0 first) on ``LAMBDAS``; order k is
    resolved down to ``LAMBDAS[resolved_to[k]]``; the limit slope is the mean of the window's successive slopes."""
    num_orders = len(successive[0])
    resolved_to = resolved_to or [len(LAMBDAS) - 1] * num_orders
    pairs = [
        {
            "lambdas": [LAMBDAS[step], LAMBDAS[step + 1]],
            "slope": slopes,
            "ci_low": [s - HALF_WIDTH for s in slopes],
            "ci_high": [s + HALF_WIDTH for s in slopes],
            "resolved": [step + 1 <= resolved_to[order] for order in range(num_orders)],
        }
        for step, slopes in enumerate(successive)
    ]
    limit = []
    for order in range(num_orders):
        columns = list(range(max(0, resolved_to[order] - 2), resolved_to[order] + 1))
        slope = float(np.mean([successive[step][order] for step in columns[:-1]])) if len(columns) >= 2 else 0.0
        limit.append(
            {
                "order": order,
                "fit_lambdas": [LAMBDAS[column] for column in columns],
                "resolved": len(columns) >= 2,
                "slope": slope,
                "ci_low": slope - HALF_WIDTH,
                "ci_high": slope + HALF_WIDTH,
            }
        )
    return {"successive_slopes": pairs, "limit_slopes": limit, "kink_exponent": exponent, "exact_zero_chain": chain}
