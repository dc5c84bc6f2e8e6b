"""Experiment 2, step 8 — exact low interaction orders at both corners, at any depth.

Question: what are the low-order Möbius coefficients of the logits — at the all-off network and about the full
network (the lesion view: one block deleted, pairs, triples) — for a network too deep for all 2^L masks?
Per image the masks within k gates (--order, default 3) of a corner are evaluated by the family walk of the prefix
tree (experiment_1/network/engines.py, evaluate_family_tree), and the Möbius transform on that family gives every
Δ_S, |S| ≤ k, exactly. Reported per projection (vector ‖·‖² over classes; scalar, the class argmax h(full)): the
order energies E_1 … E_k, the per-coefficient means ē_j = E_j / C(L, j), the largest single blocks, pairs and
triples, and only ratios that are observable here: E_j / ‖h(full) − h(∅)‖² (exact) and E_j / Var h, Var h the
variance of h over a uniformly random mask, estimated from --random-masks masks (unbiased sample variance).
Sampled, with intervals (experiment_2/past_exhaustive/sampling, experiment_2/past_exhaustive/sampled.py): the Walsh summaries from a seeded
design built on those masks (each base mask with a one-block flip and one ρ-correlated copy per ρ: variance,
influence, κ_W, κ_W / L, noise stability, W_1 … W_3, the low-degree share); the order-≤k surrogate's R² on the design's
masks by mask size; with --subcube-size u, ē_j for j ≤ u from --subcubes random u-block sub-cubes, each the tree pass
over a held-off view of the network (experiment_1.network.held_off_view). Verdicts (experiment_2/past_exhaustive/verdicts.py)
say what these decide; the spectrum p_j, C≤k, κ and the peak order need every order's energy (all 2^L coefficients)
and are listed as out of reach. Past L = 16 the REPORT withholds the estimators whose intervals step 15 does not
validate at L = 50 (experiment_2/past_exhaustive/sampled.py, NOT_VALIDATED_AT_DEPTH; the summary keeps them).
Before the first batch the step's cost estimate counts every pass (families, random masks, sub-cubes;
experiment_2/past_exhaustive/cost.py); --dry-run prints it and stops, --budget refuses a run over a number of masks per
image.

Inputs:  --sample-index, shards in --data-dir, --arch/--weights (resnet101, resnet152 …), --resolution.
Outputs: <output-dir>/summary.json, REPORT.md, per_image.npz, timing.json, partial/ (resume state).

    python -m experiment_2.step_8_low_orders --arch resnet152 --weights random --resolution 64 --order 3 \\
        --data-dir imagenet-1k/sample-1750 --sample-index experiment_1/sample_index_sample_test.json --limit 2 \\
        --batch-size 1 --num-workers 0 --seed 0 --output-dir experiment_2/results_low_orders_resnet152_random_64px
"""

from __future__ import annotations

from dataclasses import dataclass

from experiment_1.errors import run_cli
from experiment_1.run import Command, RunConfig, flag
from experiment_2.past_exhaustive.sampling.subcubes import MIN_COEFFICIENTS as SUBCUBE_MIN_COEFFICIENTS
from experiment_2.past_exhaustive.sampling.subcubes import VALIDATED_DRAWS as SUBCUBE_VALIDATED_DRAWS

BASES = ("off", "on")
MIN_SUBCUBES = (
    3  # the bootstrap-t interval over draws needs at least 3 (experiment_2.past_exhaustive.sampling.subcubes)
)


@dataclass(frozen=True, kw_only=True)
class LowOrdersConfig(RunConfig):
    """The evaluation flags and the step's own; those bounded by L are checked right after the network is built."""

    order: int = flag("k: every Δ_S with |S| ≤ k (default: %(default)s)", low=1, default=3)
    bases: list[str] = flag(
        "corners: off (the all-off network), on (the full network) (default: both)",
        choices=BASES,
        nargs="+",
        factory=lambda: list(BASES),
    )
    random_masks: int = flag(
        "uniformly random base masks per image of the Walsh design (Var h from them; each also evaluated with a "
        "one-block flip and a ρ-correlated copy per ρ; at least 2; default: %(default)s)",
        low=2,
        default=1024,
    )
    subcube_size: int = flag(
        "u: blocks per random sub-cube (its 2^u masks by the tree pass over a held-off view; an order j gets an "
        f"interval where C(u, j) ≥ {SUBCUBE_MIN_COEFFICIENTS}, every j < u from u = 6 on; 0: no sub-cubes; default: %(default)s)",
        low=0,
        default=0,
    )
    subcubes: int = flag(
        f"random sub-cubes per image, drawn with --seed + 1 (at least {MIN_SUBCUBES} for an interval; step 11 "
        "validates the intervals at the default, fewer under-cover where h is heavy-tailed; default: %(default)s)",
        low=0,
        default=SUBCUBE_VALIDATED_DRAWS,
    )
    budget: int | None = flag(
        "refuse the run before its first batch when the masks per image of all its passes exceed this",
        low=1,
        default=None,
    )
    dry_run: bool = flag("print the step's cost estimate (every pass) and stop", default=False)

    def problems(self) -> list[str]:
        """Sub-cubes too few for their interval."""
        if self.subcube_size and self.subcubes < MIN_SUBCUBES:
            return [
                f"--subcubes {self.subcubes}: the interval over sub-cubes needs at least {MIN_SUBCUBES}; "
                f"pass --subcubes {MIN_SUBCUBES} or more ({SUBCUBE_VALIDATED_DRAWS}, the default, for the coverage step 11 validates)"
            ]
        return []


COMMAND = Command(
    __doc__,
    LowOrdersConfig,
    "experiment_2.past_exhaustive.evaluation:run",
    {"output_dir": "experiment_2/results_low_orders"},
)
main = COMMAND.main

if __name__ == "__main__":
    run_cli(main)
