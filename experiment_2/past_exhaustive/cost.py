"""What step 8 will cost, counted over every pass it runs: the mask families at each corner, the Walsh design's random
masks and the random sub-cubes, before the first batch.

Multiply-accumulates per image from the engines' own counts (:mod:`experiment_1.network`): a family by
``family_gmac`` (the family walk), the random masks as that many full forwards (the naive engine on an explicit id list),
each sub-cube as the tree pass over its held-off view (``work_ratio(view)["tree_gmac"]``: the view's blocks, held-off
paths included, on ``2^j`` states, the head on ``2^u``). Each kind of pass runs at its own rate on this machine, measured
before the run on one random image: the random masks at the rate of a batch of full forwards
(:func:`experiment_1.run.measured_rate`, the project's cost estimate); a family at the rate of the family walk of order
1 at the same corner (measured: on CPU the walk's rate grows with its order, so order 1 gives an upper-side time; the
rate of one full forward overstates the walk's 2–5×); the sub-cubes at the rate of the first draw's view pass. The
REPORT sets the estimate beside the wall time of the run, and says what one more order of each family would cost.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

import torch

from experiment_1.network import (
    MaskFamily,
    ResidualStack,
    evaluate_all_masks,
    evaluate_mask_family,
    family_gmac,
    held_off_view,
    work_ratio,
)
from experiment_1.run import measured_rate

CALIBRATION_ORDER = 1  # the family walk timed before the run, at each corner


def _rate(gmac: float, evaluate: Callable[[], Any], device: torch.device) -> float:
    """GMAC/s of one call of ``evaluate`` doing ``gmac``."""
    started = time.perf_counter()
    evaluate()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return gmac / max(time.perf_counter() - started, 1e-9)


def step_cost(
    model: ResidualStack,
    resolution: int,
    num_images: int,
    families: Sequence[MaskFamily],
    random_masks: int,
    subcubes: Sequence[Sequence[int]],
    mask_chunk: int = 256,
) -> dict[str, Any]:
    """GMAC and masks per image of each pass, the rate measured for it and its estimated seconds for ``num_images``
    images, and the totals (``random_masks``: the masks of the random-mask pass, corners included; ``subcubes``: each
    draw's blocks). ``mask_chunk`` as the run's."""
    parameter = next(model.parameters())
    device = parameter.device
    image = torch.randn(1, 3, resolution, resolution, generator=torch.Generator().manual_seed(0))
    image = image.to(device=device, dtype=parameter.dtype)
    full = work_ratio(model, resolution, device)
    forward_gmac = full["naive_gmac"] / 2**model.num_blocks
    parts = []
    for family in families:
        probe = MaskFamily(min(CALIBRATION_ORDER, family.order), family.base)
        rate = _rate(
            family_gmac(model, resolution, device, probe),
            lambda probe=probe: evaluate_mask_family(model, image, probe, mask_chunk=mask_chunk),
            device,
        )
        parts.append(
            {
                "pass": f"family {family.base}",
                "masks": family.size(model.num_blocks),
                "gmac": family_gmac(model, resolution, device, family),
                "gmac_next_order": family_gmac(model, resolution, device, MaskFamily(family.order + 1, family.base))
                if family.order < model.num_blocks
                else None,
                "gmac_per_s": rate,
                "rate_from": f"the family walk of order {probe.order} at the same corner, one image",
            }
        )
    parts.append(
        {
            "pass": "random masks",
            "masks": random_masks,
            "gmac": forward_gmac * random_masks,
            "gmac_per_s": measured_rate(model, resolution, forward_gmac),
            "rate_from": "a batch of full forwards",
        }
    )
    if subcubes:
        views = [held_off_view(model, blocks, check=False) for blocks in subcubes]
        gmacs = [work_ratio(view, resolution, device)["tree_gmac"] for view in views]
        parts.append(
            {
                "pass": "sub-cubes",
                "masks": sum(2 ** len(blocks) for blocks in subcubes),
                "gmac": sum(gmacs),
                "gmac_per_s": _rate(
                    gmacs[0], lambda: evaluate_all_masks(views[0], image, mask_chunk=mask_chunk), device
                ),
                "rate_from": "the first draw's view pass, one image",
            }
        )
    for part in parts:
        part["seconds"] = part["gmac"] * num_images / part["gmac_per_s"]
    return {
        "parts": parts,
        "masks_per_image": sum(part["masks"] for part in parts),
        "gmac_per_image": sum(part["gmac"] for part in parts),
        "num_images": num_images,
        "estimated_seconds": sum(part["seconds"] for part in parts),
        "resolution": resolution,
    }


def describe_cost(cost: dict[str, Any]) -> str:
    """One line per pass and the total, for the terminal."""
    lines = [
        f"  {part['pass']}: {part['masks']} masks, {part['gmac']:.4g} GMAC per image at {part['gmac_per_s']:.3g} GMAC/s "
        f"({part['rate_from']}): about {part['seconds']:.0f} s"
        for part in cost["parts"]
    ]
    return "\n".join(
        [
            f"step cost estimate: {cost['num_images']} image(s) × {cost['gmac_per_image']:.4g} GMAC "
            f"({cost['masks_per_image']} masks per image, {cost['resolution']} px): about {cost['estimated_seconds']:.0f} s",
            *lines,
        ]
    )
