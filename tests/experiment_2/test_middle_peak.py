"""Claim 2 as the original study states it — a middle-order peak, no low-order bias (Möbius basis) — decided by its own
rule, apart from "beyond subset counting" (``peak``): each part planted at, just inside and just outside its
boundaries, and the verdict checker re-derives the stored decision (and refuses an edited one)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from experiment_1.errors import PipelineError
from experiment_1.files import read_json
from experiment_1.report import CANNOT_TELL, FAILS, HOLDS, by_id, check_verdicts
from experiment_2.record import VERDICTS
from experiment_2.spectrum.verdicts import LOW_ORDERS, middle_peak_decision, verdicts

REPO = Path(__file__).resolve().parents[2]
LITE0 = REPO / "experiment_2" / "results_efficientnet_lite0_sample" / "summary.json"


def ci(low: float, high: float) -> dict[str, float]:
    return {"mean": (low + high) / 2, "ci_low": low, "ci_high": high}


@pytest.mark.parametrize(
    ("peak", "kappa_side", "c_le3_side", "expected"),
    [
        (ci(4.86, 4.93), +1, +1, HOLDS),  # Lite0: middle peak, κ above counting (C≤3 above too: wider, not biased)
        (ci(4.0, 8.0), +1, 0, HOLDS),  # at both ends of the middle orders 4 … L − 1 (L = 9)
        (ci(3.99, 5.0), +1, 0, CANNOT_TELL),  # just below the middle: neither middle nor low
        (ci(5.0, 8.01), +1, 0, CANNOT_TELL),  # just above L − 1
        (ci(2.5, 3.0), +1, 0, FAILS),  # at or below the low orders k ≤ 3: a low-order peak
        (ci(2.5, 3.01), +1, 0, CANNOT_TELL),
        (ci(9.0, 9.0), +1, 0, FAILS),  # at the top order L
        (ci(5.0, 6.0), 0, 0, CANNOT_TELL),  # κ's CI covers counting's: a low-order bias is not excluded
        (ci(5.0, 6.0), -1, -1, CANNOT_TELL),  # κ below, C≤3 below: narrower, not biased to low orders
        (ci(5.0, 6.0), -1, +1, FAILS),  # κ below and C≤3 above: a low-order bias
    ],
)
def test_the_middle_peak_rule_at_its_boundaries(
    peak: dict[str, float], kappa_side: int, c_le3_side: int, expected: str
) -> None:
    assert middle_peak_decision(peak, kappa_side, c_le3_side, num_blocks=9)[0] == expected


def test_a_network_too_shallow_for_a_middle_order_cannot_tell() -> None:
    decision, notes = middle_peak_decision(ci(4.0, 4.0), +1, -1, num_blocks=LOW_ORDERS + 1)
    assert decision == CANNOT_TELL and "no middle order" in notes[0]
    assert middle_peak_decision(ci(4.0, 4.0), +1, -1, num_blocks=LOW_ORDERS + 2)[0] == HOLDS


def test_lite0_holds_the_claim_as_stated_and_fails_beyond_counting_each_by_its_own_verdict() -> None:
    summary = copy.deepcopy(read_json(LITE0))
    decided = by_id(verdicts(summary))
    assert decided["middle_peak.vector"]["decision"] == HOLDS  # as the original study states it
    assert decided["peak.vector"]["decision"] == FAILS  # "shifted beyond subset counting": where counting peaks
    assert "Möbius basis" in decided["middle_peak.vector"]["claim"]
    summary["verdicts"] = list(decided.values())
    check_verdicts(summary, Path("summary.json"), VERDICTS[2])
    summary["projections"]["vector"]["kappa"].update(ci_low=4.0, ci_high=4.3)  # planted: κ now below counting's 4.51
    rebuilt = by_id(verdicts(summary))
    assert rebuilt["middle_peak.vector"]["decision"] == FAILS  # C≤3 lies above counting's: a low-order bias
    summary["verdicts"] = list({**rebuilt, "middle_peak.vector": decided["middle_peak.vector"]}.values())  # kept stale
    with pytest.raises(PipelineError, match="verdict middle_peak.vector says 'holds' but"):
        check_verdicts(summary, Path("summary.json"), VERDICTS[2])
