"""The law test over replications (experiment_2.step_9_law_replications): every replication's test combined."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from experiment_1.errors import PipelineError
from experiment_1.files import atomic_write_json, atomic_write_text, read_json
from experiment_1.report import (
    Missing,
    Reading,
    Rule,
    all_must_hold,
    check_verdicts,
    format_stat,
    markdown_table,
    verdict_lines,
)
from experiment_2.record import VERDICTS
from experiment_2.step_9_law_replications import LawReplicationsFlags

QUESTION = (
    "Does the exact-zero-chain law's a priori prediction for the held-block ResNet-18 hold in every replication predicted "
    "before it ran (the λ grid extended, a second seed, other images)?"
)
RULE = (
    "all must hold over the replications: holds when every replication's verdict holds (an intersection–union test, each "
    "at its own 95 % level: no multiplicity correction); fails when any replication fails (uncorrected: one failing "
    "setting refutes a law stated for every setting); cannot tell (not converged) when none fails and every one that does "
    "not hold has not converged; else cannot tell"
)


def _read_parts(reading: Reading) -> dict[str, list[str]]:
    """Each replication's decision: of the law (``replications.<law>``) or at its deciding order (``….k<order>``); the
    entry's ``parameters.parts`` must be them."""
    key = "deciding_decision" if len(reading.parts) > 2 else "law_decision"
    try:
        parts = [row[key] for row in reading.at("replications")]
    except (KeyError, TypeError):
        raise Missing(f"replications[].{key}") from None
    reading.copied("parameters", {"parts": parts}, ("parts",))
    return {"decisions": parts}


ALL_MUST_HOLD = Rule("exp3c.replications", RULE, _read_parts, all_must_hold)


def replication_row(path: Path, test: dict[str, Any]) -> dict[str, Any]:
    """What the combined summary keeps of one law test: its run, its prediction and its two decisions."""
    prediction, config = test["prediction"], test["config"]
    if "file" not in prediction:
        raise PipelineError(
            f"{path}: judged without a prediction file (the first held-block test); only the replications predicted in "
            "experiment_2/limit/predictions/ combine"
        )
    law, order = prediction["law"], prediction["deciding_order"]
    decisions = {entry["id"]: entry["decision"] for entry in test["verdicts"]}
    row = test["variants"]["native"]["limit_slopes"][order]
    return {
        "test": path.as_posix(),
        "run_id": config["run_id"],
        "git_commit": config["git_commit"],
        "seed": config["seed"],
        "sample_index": config["sample_index"],
        "sample_list_sha256": config["sample_list_sha256"],
        "limit": config.get("limit"),
        "num_valid": test["num_valid"],
        "lambdas": test["lambdas"],
        "prediction": prediction["file"],
        "prediction_commit": prediction["commit"],
        "law": law,
        "deciding_order": order,
        "deciding_slope": {"mean": row["slope"], "ci_low": row["ci_low"], "ci_high": row["ci_high"]}
        if row["resolved"]
        else None,
        "law_decision": decisions[f"exp3c.native.{law}"],
        "deciding_decision": decisions[f"exp3c.native.{law}.k{order}"],
    }


def summarize(tests: list[tuple[Path, dict[str, Any]]]) -> dict[str, Any]:
    """summary_replications.json: each replication's row and the two combined verdicts."""
    if len(tests) < 2:
        raise PipelineError(f"--tests: {len(tests)} test given; a combined verdict needs at least two replications")
    rows = [replication_row(path, test) for path, test in tests]
    seen: dict[tuple[Any, ...], str] = {}
    for row in rows:
        data = (row["seed"], row["sample_list_sha256"], row["limit"])
        if data in seen:
            raise PipelineError(
                f"{row['test']}: the same seed and images as {seen[data]}: not a replication (pass one of them)"
            )
        seen[data] = row["test"]
    if len({(row["law"], row["deciding_order"]) for row in rows}) > 1:
        raise PipelineError(
            "--tests: the tests judge different laws or deciding orders; combine tests of one prediction"
        )
    law, order = rows[0]["law"], rows[0]["deciding_order"]
    summary = {"experiment": "3C", "question": QUESTION, "rule": RULE, "replications": rows}
    summary["verdicts"] = [
        ALL_MUST_HOLD.verdict(
            verdict_id,
            summary,
            claim,
            parameters={"parts": [row[key] for row in rows], "part_of": key, "replications": len(rows)},
            notes=[f"{row['test']}: {row[key]}" for row in rows],
        )
        for verdict_id, key, claim in (
            (
                f"replications.{law}",
                "law_decision",
                f"the {law} law holds at every resolved order k ≥ 2 in every replication",
            ),
            (
                f"replications.{law}.k{order}",
                "deciding_decision",
                f"the {law} law's slope holds at the deciding order k = {order} in every replication",
            ),
        )
    ]
    return summary


def report_markdown(summary: dict[str, Any]) -> str:
    """REPORT.md of the combined verdict, from summary_replications.json only."""
    order = summary["replications"][0]["deciding_order"]
    table = markdown_table(
        ["law test", "seed", "images", "λ ≥", f"limit slope k = {order} [95 % CI]", f"k = {order}", "law (k ≥ 2)"],
        [
            [
                f"`{row['test']}`",
                str(row["seed"]),
                f"{row['num_valid']} of `{row['sample_index']}`" + (f" (first {row['limit']})" if row["limit"] else ""),
                f"{min(row['lambdas']):g}",
                "unresolved" if row["deciding_slope"] is None else format_stat(row["deciding_slope"]),
                row["deciding_decision"],
                row["law_decision"],
            ]
            for row in summary["replications"]
        ],
    )
    lines = [
        "# Experiment 3C — the exact-zero-chain law over its a priori replications",
        "",
        f"**Question.** {summary['question']}",
        "",
        "**Method.** Each replication is one λ sweep of the held-block ResNet-18 judged by "
        "`experiment_2.step_7_law_test` against its own prediction file, committed before it ran (the file and its "
        "commit are named in each law test's REPORT_law_test.md); this step only combines their decisions.",
        "",
        "## Result",
        "",
        table,
        "",
        "## Verdict",
        "",
        *verdict_lines(summary["verdicts"]),
        "",
        "_Generated by `python -m experiment_2.step_9_law_replications` from summary_replications.json; do not edit by hand._",
        "",
    ]
    return "\n".join(lines)


def load_law_test(path: Path) -> dict[str, Any]:
    """One summary_3c.json of experiment_2.step_7_law_test, its verdicts checked; one line when it is not one."""
    fix = "pass the summary_3c.json experiment_2.step_7_law_test wrote to --tests, or rerun it"
    if not path.is_file():
        raise PipelineError(f"{path}: --tests not found; {fix}")
    test = read_json(path, fix=fix)
    missing = [key for key in ("config", "prediction", "variants", "verdicts") if key not in test]
    if test.get("experiment") != "3C" or missing:
        raise PipelineError(f"{path}: not a law test of Experiment 3C (lacks {(missing or ['experiment'])[0]}); {fix}")
    check_verdicts(test, path, VERDICTS["3C"], fix=fix)
    return test


def run(args: LawReplicationsFlags) -> None:
    """The combined summary_replications.json and its REPORT."""
    tests = [(path, load_law_test(path)) for path in args.tests]
    summary = summarize(tests)
    atomic_write_json(args.output_dir / "summary_replications.json", summary)
    atomic_write_text(args.output_dir / "REPORT.md", report_markdown(summary))
    print(
        f"wrote {args.output_dir / 'summary_replications.json'}: "
        + "; ".join(f"{entry['id']} {entry['decision']}" for entry in summary["verdicts"])
    )
