"""A claim read in both bases (experiment_1.report.rules): the decision of "the claim reads the same in both bases" at
every pair of decisions, the words each pair gives, and the reader refusing a claim whose words its parts contradict."""

from __future__ import annotations

import pytest

from experiment_1.report import (
    BASES,
    CANNOT_TELL,
    FAILS,
    HOLDS,
    NO_POWER,
    SATURATED,
    UNRESOLVED,
    Contradiction,
    Missing,
    Reading,
    bases_agree,
    basis_reading,
    read_bases,
)


@pytest.mark.parametrize(
    ("mobius", "walsh", "decision"),
    [
        (HOLDS, HOLDS, HOLDS),
        (FAILS, FAILS, HOLDS),  # the same answer in both bases, though not the claimed one
        (HOLDS, FAILS, FAILS),
        (FAILS, HOLDS, FAILS),
        (HOLDS, CANNOT_TELL, CANNOT_TELL),
        (NO_POWER, FAILS, CANNOT_TELL),
        (SATURATED, HOLDS, CANNOT_TELL),
        (UNRESOLVED, HOLDS, UNRESOLVED),  # round-off in either basis: noise, whatever the other says
        (FAILS, UNRESOLVED, UNRESOLVED),
    ],
)
def test_the_bases_agree_at_every_pair_of_decisions(mobius: str, walsh: str, decision: str) -> None:
    assert bases_agree(mobius, walsh) == decision


@pytest.mark.parametrize(
    ("mobius", "walsh", "contrary", "words"),
    [
        (HOLDS, HOLDS, "reverses", "holds in both bases"),
        (FAILS, FAILS, "reverses", "reverses in both bases"),
        (FAILS, FAILS, "fails", "fails in both bases"),
        (HOLDS, FAILS, "reverses", "Möbius only: reverses in the Walsh basis"),
        (HOLDS, FAILS, "fails", "Möbius only: fails in the Walsh basis"),
        (FAILS, HOLDS, "reverses", "Walsh only: reverses in the Möbius basis"),
        (HOLDS, CANNOT_TELL, "reverses", "Möbius only: the Walsh basis reads cannot tell"),
        (SATURATED, HOLDS, "reverses", "Walsh only: the Möbius basis reads saturated"),
        (FAILS, CANNOT_TELL, "reverses", "neither basis decides it (Möbius: fails; Walsh: cannot tell)"),
        (CANNOT_TELL, CANNOT_TELL, "fails", "neither basis decides it (Möbius: cannot tell; Walsh: cannot tell)"),
    ],
)
def test_each_pair_of_decisions_in_words(mobius: str, walsh: str, contrary: str, words: str) -> None:
    assert basis_reading(mobius, walsh, contrary) == words


def reading(claim: str, mobius: str = HOLDS, walsh: str = FAILS) -> Reading:
    parts = [{"id": "m", "decision": mobius}, {"id": "w", "decision": walsh}]
    return Reading({"id": "basis.x", "claim": claim}, {"verdicts": parts})


def test_the_reader_returns_both_decisions_when_the_claim_says_what_they_say() -> None:
    assert read_bases(reading("x rises — Möbius only: reverses in the Walsh basis"), "m", "w") == {
        "mobius": HOLDS,
        "walsh": FAILS,
    }
    assert (
        read_bases(reading("x — Möbius only: fails in the Walsh basis"), "m", "w", contrary="fails")["walsh"] == FAILS
    )


@pytest.mark.parametrize(
    "claim",
    [
        "x rises — holds in both bases",  # what a flipped Walsh verdict would have said
        "x rises — Möbius only: fails in the Walsh basis",  # the words of another contrary
        "x rises",  # no reading at all
    ],
)
def test_the_reader_refuses_a_claim_its_parts_contradict(claim: str) -> None:
    with pytest.raises(Contradiction, match="its claim does not read 'Möbius only: reverses in the Walsh basis'"):
        read_bases(reading(claim), "m", "w")


def test_the_reader_names_a_missing_part() -> None:
    with pytest.raises(Missing, match="the verdict absent"):
        read_bases(reading("x"), "m", "absent")


def test_the_two_bases_by_name() -> None:
    assert BASES == {"mobius": "Möbius", "walsh": "Walsh"}
