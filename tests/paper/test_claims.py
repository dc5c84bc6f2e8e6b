"""The claims tables and each claim's sentence follow the stored verdicts: a changed verdict changes them, a missing
block leaves its claim out (never a placeholder), runs that read the same are told apart, and a headline that lacks a
claim's sentence or a table that lacks a decided verdict is named."""

from __future__ import annotations

import json
from pathlib import Path

from experiment_1.files import SCHEMA_VERSION
from paper.claims import CLAIMS, claim_rows, claim_sentence, claims_tex, plain_sentences, unreported, variants
from paper.committed_runs import allow_all_runs
from paper.experiments import record_of
from paper.render_latex import latex_text
from paper.wording import basis_of


def current(summary: dict) -> dict:
    """``summary`` as the current code writes it: its configuration carries the schema version and a run id."""
    config = {"run_id": "planted", **summary.get("config", {}), "schema_version": SCHEMA_VERSION}
    return {**summary, "config": config}


def write_summary(root: Path, experiment: int | str, summary: dict) -> None:
    path = root / record_of(experiment).primary
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(current(summary)))


def topk_summary(decision: str) -> dict:
    """An Experiment 3 summary whose Γ_K verdict (decided by its rule on the summary's row) says ``decision``."""
    from experiment_3.verdicts import seed_verdict

    value = {"mean": 0.43, "ci_low": 0.42, "ci_high": 0.44}
    row = {
        "quantity": "captured_energy",
        "ranking": "vector",
        "fraction": 0.25,
        "seed": 0.94 if decision == "fails" else 0.3,
        "seed_k": 64,
        "at_matching_fraction": {"value": value, "k": 4},
        "at_seed_k": {"value": None, "k": None},
    }
    summary = {
        "experiment": 3,
        "config": {"arch": "efficientnet_lite0", "weights": "pretrained"},
        "num_valid": 250,
        "num_masks": 16,
        "beside_seed": {"rows": [row]},
        "published": {"resnet18": {"captured_energy_at_64": 0.94}},
    }
    entry = seed_verdict(summary, "captured_energy", "vector", "Γ_K is as high as reported", "Γ_K", [])
    assert entry["decision"] == decision
    return {**summary, "verdicts": [entry]}


def test_a_row_is_its_verdict_and_follows_it(tmp_path: Path) -> None:
    allow_all_runs(tmp_path)  # a tmp tree without a manifest: every results folder counts
    write_summary(tmp_path, 3, topk_summary("fails"))
    write_summary(
        tmp_path,
        2,
        {"experiment": 2, "config": {"arch": "efficientnet_lite0", "weights": "pretrained"}, "num_valid": 250},
    )  # no block yet
    (row,) = claim_rows(tmp_path)
    assert (row.claim.label, row.reported, row.network, row.images, row.decision) == (
        "4",
        "Γ_64 ≈ 94.0 % of 256 subsets (ResNet-18)",
        "EfficientNet-Lite0",
        "250",
        "fails",
    )
    assert row.number == "Γ_K, K = 4 of 16 (25 % of 2^L): 43.0 % [42.0 %, 44.0 %]"
    assert row.why == "the reported 94.0 % lies above our CI"
    sentence = claim_sentence([row])
    assert (
        sentence
        == "Claim 4, concentration of the coefficients as high as reported: not confirmed on EfficientNet-Lite0."
    )
    table = claims_tex(tmp_path)
    assert "Interaction mass peaks" not in table  # the claim without a block is left out, with no placeholder row
    # Table 1 sets our number (quantity named once, then network, N, mean [CI]) beside what the original study reports
    assert (
        r"\textbf{fails} & M\"obius, vector projection & $\Gamma_{K}$, K = 4 of 16 (25\,\% of $2^{L}$): Lite0 (N = 250) "
        r"43.0\,\% [42.0\,\%, 44.0\,\%] \\"
    ) in table
    write_summary(tmp_path, 3, topk_summary("holds"))
    assert r"\textbf{holds}" in claims_tex(tmp_path) and r"\textbf{fails}" not in claims_tex(tmp_path)


def test_variants_and_labels() -> None:
    assert variants(["exp3c.native.lambda_k", "exp3c.smooth.lambda_k"]) == ["native", "smooth"]
    assert variants(["seed_claim"]) == [""]
    assert len({claim.label for claim in CLAIMS}) == len(CLAIMS)


REPO = Path(__file__).resolve().parents[2]


def sweep_summary(arch: str, decision: str, change: float) -> dict:
    """A 3A/3B summary whose migration verdict (decided by its rule on the summary's paired change) says ``decision``."""
    from experiment_2.lambda_sweep.verdicts import migration_verdict

    end_to_end = {
        "from": 1.0,
        "to": 0.1,
        "change": {"mean": change, "ci_low": change - 0.1, "ci_high": change + 0.1},
        "share_falling": {"mean": float(change < 0), "ci_low": 0.5, "ci_high": 1.0, "n": 6},
        "falls": 6 if change < 0 else 0,
        "rises": 0 if change < 0 else 6,
        "sign_test_p": 0.03125,
        "sign_test_power": 1.0,
    }
    summary = {
        "experiment": "3A/3B",
        "config": {"arch": arch, "weights": "pretrained"},
        "num_valid": 6,
        "published": {"resnet18": {"kappa_at_lambda_1": 5.0, "kappa_at_lambda_0.1": 1.14}},
        "kappa_changes": {"vector": {"end_to_end": end_to_end}},
    }
    entry = migration_verdict(summary, "vector")
    assert entry["decision"] == decision
    return current({**summary, "verdicts": [entry]})


def test_every_committed_decided_verdict_about_a_claim_is_in_its_rows_and_the_readme() -> None:
    rows = claim_rows(REPO)
    readme = (REPO / "README.md").read_text()
    headline = readme[readme.index("<!-- generated:headline") : readme.index("<!-- /generated:headline -->")]
    assert unreported(REPO, rows, {"the README headline": headline}) == []
    two = {
        (row.claim.label, row.network, basis_of(row.entry)): row.decision
        for row in rows
        if row.claim.label in ("2", "2′", "3")
    }
    assert (
        two[("2", "EfficientNet-Lite0", "Möbius")] == "holds" and two[("2′", "EfficientNet-Lite0", "Möbius")] == "fails"
    )
    assert two[("2′", "EfficientNet-Lite1", "Möbius")] == "holds"  # the stronger reading holds on the deeper network
    assert two[("2′", "EfficientNet-Lite0", "Walsh")] == "holds"  # and in the Walsh basis on both
    assert two[("3", "EfficientNet-Lite1", "Walsh only: reverses in the Möbius basis")] == "fails"
    assert {network for label, network, _ in two if label == "3"} >= {"EfficientNet-Lite0", "EfficientNet-Lite1"}


def test_runs_of_one_network_are_told_apart_each_with_its_number() -> None:
    rows = [row for row in claim_rows(REPO) if row.claim.label == "3′"]
    held = [row.label for row in rows if row.network.startswith("ResNet-18 first block held")]
    assert (
        len(held) == len(set(held)) == 4
    )  # the four replications: seed, λ grid and image list named where they differ
    assert all("seed" in label for label in held)
    compact = claims_tex(REPO).split(r"\newcommand{\ClaimsTableFull}")[0]
    for row in rows:  # each run named once in Table 1, with its own number beside it
        run = f"{row.network}{row.facts} (N = {row.images}) {row.number.rpartition(': ')[2]}"
        run = latex_text(run.replace("EfficientNet-Lite", "Lite"))
        assert compact.count(run) == 1, run


def test_a_sentence_counts_the_commonest_decision_and_names_the_others(tmp_path: Path) -> None:
    allow_all_runs(tmp_path)
    for arch, decision, change in (
        ("efficientnet_lite0", "holds", -1.39),
        ("efficientnet_lite1", "fails", 0.907),
        ("efficientnet_lite2", "holds", -1.2),
    ):
        folder = tmp_path / f"experiment_2/results_lambda_{arch}_sample"
        folder.mkdir(parents=True)
        (folder / "summary_all.json").write_text(json.dumps(sweep_summary(arch, decision, change)))
    sentence = plain_sentences(claim_rows(tmp_path))["3"]
    assert sentence == (
        "Claim 3, a shift to low orders under residual scaling: confirmed on 2 of 3 networks; "
        "not confirmed on EfficientNet-Lite1."
    )


def test_a_dropped_verdict_is_caught_in_the_table_and_in_a_headline(tmp_path: Path) -> None:
    allow_all_runs(tmp_path)
    for arch, decision, change in (("efficientnet_lite0", "holds", -1.39), ("efficientnet_lite1", "fails", 0.907)):
        folder = tmp_path / f"experiment_2/results_lambda_{arch}_sample"
        folder.mkdir(parents=True)
        (folder / "summary_all.json").write_text(json.dumps(sweep_summary(arch, decision, change)))
    rows = claim_rows(tmp_path)
    assert [(row.network, row.decision) for row in rows] == [
        ("EfficientNet-Lite0", "holds"),
        ("EfficientNet-Lite1", "fails"),
    ]
    sentence = plain_sentences(rows)["3"]
    assert sentence == (
        "Claim 3, a shift to low orders under residual scaling: confirmed on EfficientNet-Lite0; "
        "not confirmed on EfficientNet-Lite1."
    )
    assert unreported(tmp_path, rows, {"the abstract": sentence}) == []
    primary_only = [row for row in rows if row.network == "EfficientNet-Lite0"]  # the old rows: the paper run alone
    caught = unreported(tmp_path, primary_only, {"the abstract": plain_sentences(primary_only)["3"]})
    assert caught == [
        "experiment_2/results_lambda_efficientnet_lite1_sample/summary_all.json: migration.vector (fails, "
        "EfficientNet-Lite1), claim 3: not in the claims table",
        f"claim 3: the abstract lacks its sentence {sentence!r}",
    ]
    said_confirmed = sentence.replace("not confirmed on EfficientNet-Lite1", "confirmed on EfficientNet-Lite1")
    assert len(unreported(tmp_path, rows, {"the headline": said_confirmed})) == 1  # the wrong decision is caught too


def depth_rows() -> list:
    """D1′'s rows as the depth ladder's summary gives them: κ^v / L rises (Möbius), κ_W^v / L falls (Walsh), and the
    basis verdict reading the two together."""
    from paper.claims import ClaimRow
    from paper.wording import basis_label

    claim = next(claim for claim in CLAIMS if claim.label == "D1′")
    step = "efficientnet_lite0-efficientnet_lite1"
    effect = {"name": "efficientnet_lite1 − efficientnet_lite0", "value": 0.07, "ci_low": 0.06, "ci_high": 0.08}
    entries = [
        ("kappa_over_l.depth", "holds", "(Möbius basis, vector projection: κ^v / L grows)", effect),
        ("walsh_kappa_over_l.depth", "fails", "(Walsh basis, vector projection: κ_W^v / L grows)", effect),
        ("kappa_over_l.basis", "fails", "(vector projection) — Möbius only: reverses in the Walsh basis", None),
    ]
    rows = []
    for prefix, decision, said, number in entries:
        entry = {
            "id": f"{prefix}.{step}",
            "decision": decision,
            "claim": f"κ / L grows {said}",
            "effect": number,
            "rule": "r",
        }
        network = "EfficientNet-Lite0 vs EfficientNet-Lite1"
        variant = prefix.replace("_", " ").replace(".", " ")  # as paper.claims.variants names them
        rows.append(ClaimRow(claim, "not reported", network, variant, "", "24", entry, basis=basis_label(entry)))
    return rows


def test_a_claim_read_in_two_bases_names_each_decisions_basis() -> None:
    """Where a claim's rows read more than one basis, its sentence gives each decision in its basis and the basis
    verdict's own words; the compact table keeps a row per decision and basis, with the basis column."""
    from paper.claims import compact_table_tex, full_table_tex

    rows = depth_rows()
    assert claim_sentence(rows) == (
        "Claim D1′, a peak beyond the binomial null's growing with depth: confirmed (Möbius) on "
        "EfficientNet-Lite0 vs EfficientNet-Lite1; not confirmed (Walsh) on EfficientNet-Lite0 vs "
        "EfficientNet-Lite1; Möbius only: reverses in the Walsh basis on EfficientNet-Lite0 vs EfficientNet-Lite1."
    )
    compact = compact_table_tex(rows)
    assert r"\textbf{fails} & M\"obius only: reverses in the Walsh basis" in compact
    assert r"\textbf{fails} & Walsh, vector projection" in compact
    assert r"\textbf{holds} & M\"obius, vector projection" in compact
    assert "basis, projection" in compact and "basis, projection" in full_table_tex(rows)
    one_basis = [rows[0]]  # a claim read in one basis keeps its plain words
    assert claim_sentence(one_basis).endswith("confirmed on EfficientNet-Lite0 vs EfficientNet-Lite1.")


def test_a_verdict_reading_two_others_counts_their_shared_images() -> None:
    """A paired comparison's N is its shared images; a basis verdict (no statistic of its own) takes its pair's, never
    another pair's, and is "—" where no verdict on its pair has one."""
    from paper.claims import images_of

    summary = {
        "verdicts": [
            {"id": "kappa_over_l.depth.a-b", "statistic": {"name": "shared images", "value": 24}},
            {"id": "kappa_over_l.depth_at_input.c-b", "statistic": {"name": "shared images", "value": 6}},
            {"id": "kappa_over_l.basis.a-b", "statistic": None},
            {"id": "kappa_over_l.basis.d-e", "statistic": None},
        ]
    }
    assert [images_of(summary, entry) for entry in summary["verdicts"]] == ["24", "6", "24", "—"]
