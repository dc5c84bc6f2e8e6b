"""Experiment 2's REPORT blocks, from summary.json only: the headline and per-order tables, per-image κ quantiles,
the round-off floor per order, the Walsh-basis control (when the run recorded it), the seed's numbers beside ours, and
the method text."""

from __future__ import annotations

from typing import Any

from experiment_1.mobius import PROJECTIONS
from experiment_1.report import figure, format_number, format_percent, format_stat, markdown_table, published_value
from experiment_2.spectrum.figures import element_stat


def null_peak_text(null: dict[str, Any]) -> str:
    """The binomial null's peak order, every tied one named (``4 and 5 (tied)`` at L = 9)."""
    tied = null.get("peak_orders", [null["peak_order"]])
    return " and ".join(map(str, tied)) + (" (tied)" if len(tied) > 1 else "")


def floor_rows(summary: dict[str, Any], compare: dict[str, Any] | None) -> tuple[list[str], list[list[str]]]:
    """Per order: mean E_k over its round-off floor, per projection and run (resolved: ≥ the floor margin)."""
    sources = [(summary, "ours")] + ([(compare, "random-init")] if compare is not None else [])
    headers = ["k"] + [f"Ē_k / floor, {name} {projection}" for _, name in sources for projection in PROJECTIONS]
    rows = [
        [str(order)]
        + [
            format_number(source["roundoff"][projection]["floor_ratio"][order])
            for source, _ in sources
            for projection in PROJECTIONS
        ]
        for order in range(1, summary["binomial_null"]["num_blocks"] + 1)
    ]
    return headers, rows


def headline_rows(summary: dict[str, Any], compare: dict[str, Any] | None) -> tuple[list[str], list[list[str]]]:
    """Table of the headline statistics: ours per projection, random-init per projection, binomial null."""
    sources = [(summary, "ours")] + ([(compare, "random-init")] if compare is not None else [])
    headers = (
        ["statistic"]
        + [f"{name} {projection}" for _, name in sources for projection in PROJECTIONS]
        + ["binomial null"]
    )
    null = summary["binomial_null"]

    def cells(getter: Any) -> list[str]:
        return [getter(source["projections"][projection]) for source, _ in sources for projection in PROJECTIONS]

    rows = [
        ["peak order of the mean spectrum"]
        + cells(lambda block: str(block["mean_spectrum_peak_order"]))
        + [null_peak_text(null)],
        ["per-image peak order, mean [95 % CI]"]
        + cells(lambda block: format_stat(block["peak_order"]))
        + [null_peak_text(null)],
        ["κ = Σ_{k≥1} k·p_k, mean [95 % CI]"]
        + cells(lambda block: format_stat(block["kappa"]))
        + [format_number(null["kappa"])],
        ["C_{≤3} = Σ_{k≤3} p_k (k ≥ 1)"]
        + cells(lambda block: format_stat(block["c_le3"], percent=True))
        + [format_percent(null["c_le3"])],
        ["trunk share E_0 / Σ_{j≥0} E_j"]
        + cells(lambda block: format_stat(block["trunk_share"], percent=True))
        + [format_percent(null["trunk_share"])],
    ]
    return headers, rows


def spectrum_rows(summary: dict[str, Any], compare: dict[str, Any] | None) -> tuple[list[str], list[list[str]]]:
    """Per-order table: mean p_k with CIs per projection, share of images peaking there, binomial p_k."""
    projections = summary["projections"]
    headers = ["k", "p_k vector", "p_k scalar", "images peaking at k (vector)", "images peaking at k (scalar)"]
    if compare is not None:
        headers += ["random-init p_k vector", "random-init p_k scalar"]
    headers.append("binomial p_k")
    rows = []
    for index, order in enumerate(projections["vector"]["peak_order_distribution"]["orders"]):
        row = [str(order)]
        row += [
            format_stat(element_stat(projections[projection]["mean_spectrum"], index), percent=True)
            for projection in PROJECTIONS
        ]
        row += [
            format_percent(projections[projection]["peak_order_distribution"]["fraction"][index])
            for projection in PROJECTIONS
        ]
        if compare is not None:
            row += [
                format_stat(element_stat(compare["projections"][projection]["mean_spectrum"], index), percent=True)
                for projection in PROJECTIONS
            ]
        row.append(format_percent(summary["binomial_null"]["spectrum"][index]))
        rows.append(row)
    return headers, rows


def ratio_cell(ratio: dict[str, Any] | None) -> str:
    """The cancellation ratio's cell: mean [CI], and on how many images it is undefined (h(full) = h(∅))."""
    if ratio is None:
        return "undefined (h(full) = h(∅) on every image)"
    undefined = ratio.get("num_undefined", 0)
    return format_stat(ratio) + (f" ({undefined} image(s) with h(full) = h(∅) left out)" if undefined else "")


def basis_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The basis control: the same statistics of the Möbius spectrum (E_k) and of the Walsh spectrum (W_k), per projection."""
    walsh = summary["walsh"]
    headers = ["statistic"] + [f"{basis} {projection}" for projection in PROJECTIONS for basis in ("Möbius", "Walsh")]

    def cells(getter: Any) -> list[str]:
        return [getter(source["projections"][projection]) for projection in PROJECTIONS for source in (summary, walsh)]

    rows = [
        ["peak order of the mean spectrum"] + cells(lambda block: str(block["mean_spectrum_peak_order"])),
        ["κ (Walsh: κ_W, total influence / variance), mean [95 % CI]"]
        + cells(lambda block: format_stat(block["kappa"])),
        ["C_{≤3} (Walsh: low-degree share of the variance)"]
        + cells(lambda block: format_stat(block["c_le3"], percent=True)),
        ["cancellation ratio Σ_{k≥1} E_k / ‖h(full) − h(∅)‖²"]
        + [cell for projection in PROJECTIONS for cell in (ratio_cell(walsh["cancellation_ratio"][projection]), "—")],
    ]
    return headers, rows


def walsh_spectrum_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Per order: the mean Walsh spectrum W_k / Σ_{j≥1} W_j with CIs per projection, beside the Möbius p_k."""
    walsh, projections = summary["walsh"]["projections"], summary["projections"]
    headers = ["k"] + [
        f"{name} {projection}" for projection in PROJECTIONS for name in ("p_k (Möbius)", "W_k share (Walsh)")
    ]
    rows = [
        [str(order)]
        + [
            format_stat(element_stat(source[projection]["mean_spectrum"], index), percent=True)
            for projection in PROJECTIONS
            for source in (projections, walsh)
        ]
        for index, order in enumerate(projections["vector"]["peak_order_distribution"]["orders"])
    ]
    return headers, rows


def seed_rows(summary: dict[str, Any]) -> list[list[str]]:
    """The seed's (and paper's) numbers beside ours: peak order per published architecture, κ^v and C_{≤3} of ResNet-18."""
    published, arch = summary["published"], summary["config"]["arch"]
    vector = summary["projections"]["vector"]
    peak = str(vector["mean_spectrum_peak_order"])
    seed_archs = [
        name for name in published if name != "source" and published_value(published, name, "peak_order") is not None
    ]
    rows = [
        [f"peak order, {name}", str(published_value(published, name, "peak_order")), peak if name == arch else "—"]
        for name in seed_archs
    ]
    if arch not in seed_archs:
        rows.append([f"peak order, {arch} (L = {summary['config']['num_blocks']})", "—", peak])
    rows.append(
        [
            "κ^v (seed: resnet18)",
            format_number(published_value(published, "resnet18", "kappa_vector")),
            format_stat(vector["kappa"]),
        ]
    )
    rows.append(
        [
            "C_{≤3}, vector (seed: resnet18)",
            format_percent(published_value(published, "resnet18", "c_le3")),
            format_stat(vector["c_le3"], percent=True),
        ]
    )
    return rows


METHOD = (
    "Every image is evaluated under all 2^L residual-gate masks and the Möbius coefficients Δ_S h are taken. Per image, the order energies "
    "E_k = Σ_{|S|=k} energy(Δ_S h) (k = 0 … L) use the squared L2 norm over classes (vector projection) or the square of the predicted-class "
    "component Δ_S h[c], c = argmax h(full) (scalar projection). The interaction spectrum p_k = E_k / Σ_{j≥1} E_j is over k ≥ 1 (order 0, the "
    "trunk h(∅), is reported alone as the trunk share E_0 / Σ_{j≥0} E_j); κ = Σ_{k≥1} k·p_k and C_{≤3} = Σ_{k=1..3} p_k. Every statistic is a "
    "mean over images with a 95 % bootstrap CI. Nulls: the binomial spectrum p_k ∝ C(L, k) (every coefficient equal energy)"
)


def results_blocks(summary: dict[str, Any], compare: dict[str, Any] | None, figures: dict[str, str]) -> list[str]:
    """The Result section: headline statistics, the per-order table, per-image κ quantiles, both figures."""
    headers, rows = headline_rows(summary, compare)
    spectrum_headers, spectrum_table = spectrum_rows(summary, compare)
    quantile_rows = []
    for source, name in [(summary, "ours")] + ([(compare, "random-init")] if compare is not None else []):
        for projection in PROJECTIONS:
            quantiles = source["projections"][projection]["kappa_distribution"]["quantiles"]
            quantile_rows.append([f"{name} {projection}"] + [format_number(value) for value in quantiles.values()])
    quantile_headers = ["per-image κ"] + [
        f"q{key}" for key in summary["projections"]["vector"]["kappa_distribution"]["quantiles"]
    ]
    floor_headers, floor_table = floor_rows(summary, compare)
    blocks = [
        markdown_table(headers, rows),
        markdown_table(spectrum_headers, spectrum_table),
        f"Round-off floor per order (an order is resolved at ≥ {format_number(summary['roundoff']['floor_margin'])}× its floor C(L,k)·2^k·rounding variance):",
        markdown_table(floor_headers, floor_table),
        markdown_table(quantile_headers, quantile_rows),
        figure("interaction-order spectrum", figures["spectrum"]),
        figure("per-image κ", figures["kappa"]),
    ]
    if "walsh" in summary:
        basis_headers, basis_table = basis_rows(summary)
        walsh_headers, walsh_table = walsh_spectrum_rows(summary)
        blocks += [
            "The basis control: the same set functions in the Walsh (±1 Fourier) basis, ĥ(S) = 2^{−L} Σ_T (−1)^{|S∩T|} h(T), whose energies "
            "W_k add up to the variance of h over masks. A Möbius spectrum that peaks at middle orders while the Walsh spectrum does not is "
            "mostly cancellation: large coefficients that sum to a small change (the cancellation ratio).",
            markdown_table(basis_headers, basis_table),
            markdown_table(walsh_headers, walsh_table),
        ]
    return blocks
