"""Experiment 3C's prediction files: what an a priori law test predicts, written and committed before its run.

A prediction file (``experiment_2/limit/predictions/<name>.json``) states, for one sweep yet to run, the law, its
predicted limit slope per order ``k = 0 … L``, the order that decides, the run it is about (network, weights, seed, sample
list, arithmetic, λ grid) and the decision rule (slope and convergence tolerances, window, floor margin). The law test
(``experiment_2.step_7_law_test --prediction``) reads it and refuses, with one line:

- a file that is not one (a missing field, a law it does not know);
- a run that is not the one it predicts (:func:`check_run`), or a prediction that is not the law's slopes for the run's
  recorded ``R`` (:func:`check_slopes`), or a rule other than the code's (:func:`check_rule`);
- a prediction newer than the run (:func:`committed_before`): the file must be in the commit the run recorded, with the
  same content it has now, and that commit clean; and, where the run's ``timing.json`` says when it started, the
  file's last commit before the run must be older than that start.
"""

from __future__ import annotations

import json
import re
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

from experiment_1.errors import PipelineError
from experiment_1.files import read_json
from experiment_1.paths import REPO_ROOT
from experiment_2.limit.laws import LAWS, LIMIT_POINTS, predicted_slopes

FIELDS = ("name", "law", "predicted_slopes", "deciding_order", "run", "rule")
RUN_FIELDS = (
    "arch",
    "weights",
    "seed",
    "sample_index",
    "sample_list_sha256",
    "limit",
    "num_images",
    "dtype",
    "lambdas",
)
RULE_FIELDS = ("slope_tolerance", "convergence_tolerance", "limit_points", "floor_margin", "first_counted_order")


def load_prediction(path: Path) -> dict[str, Any]:
    """A prediction file, its fields checked (one line naming the file and the field otherwise)."""
    document = read_json(path, fix="restore it from git (a prediction is written once, before its run)")
    fix = "see experiment_2/limit/prediction.py for the fields"
    if not isinstance(document, dict):
        raise PipelineError(f"{path}: not a prediction file (not a JSON object); {fix}")
    for group, fields in (("", FIELDS), ("run.", RUN_FIELDS), ("rule.", RULE_FIELDS)):
        part = document if not group else document.get(group[:-1])
        missing = [field for field in fields if not isinstance(part, dict) or field not in part]
        if missing:
            raise PipelineError(f"{path}: prediction lacks {group}{missing[0]}; {fix}")
    if document["law"] not in LAWS:
        raise PipelineError(f"{path}: law {document['law']!r} is not one of {', '.join(LAWS)}; {fix}")
    slopes, order = document["predicted_slopes"], document["deciding_order"]
    if not (isinstance(order, int) and isinstance(slopes, list) and 1 <= order < len(slopes)):
        raise PipelineError(f"{path}: deciding_order {order!r} is not an order 1 … L of predicted_slopes; {fix}")
    return document


def check_run(prediction: dict[str, Any], sweep: dict[str, Any], path: Path) -> None:
    """Refuse a sweep that is not the run the prediction is about (its configuration and λ grid)."""
    config = {**sweep["config"], "lambdas": sweep["lambdas"]}
    for field, stated in prediction["run"].items():
        if field in RUN_FIELDS and config.get(field) != stated:
            raise PipelineError(
                f"{path}: the prediction is about run.{field} = {stated!r}, but the sweep has {config.get(field)!r}; "
                "pass the prediction written for this run"
            )


def check_slopes(prediction: dict[str, Any], num_blocks: int, exponent: float, chain: int, path: Path) -> None:
    """Refuse a prediction whose slopes are not its law's for the run's network (``L``, ``s``, ``R`` as recorded)."""
    expected = predicted_slopes(prediction["law"], num_blocks, exponent, chain).tolist()
    if prediction["predicted_slopes"] != expected:
        raise PipelineError(
            f"{path}: predicted_slopes {prediction['predicted_slopes']} are not the {prediction['law']} law's {expected} for "
            f"this network (L = {num_blocks}, s = {exponent:g}, R = {chain}); the prediction was of another network"
        )


def check_rule(prediction: dict[str, Any], code_rule: dict[str, Any], path: Path) -> None:
    """Refuse a prediction whose decision rule differs from the code's (``code_rule``: the rule fields' values)."""
    for field in RULE_FIELDS:
        if prediction["rule"][field] != code_rule[field]:
            raise PipelineError(
                f"{path}: the prediction's rule.{field} is {prediction['rule'][field]!r} but the code decides with "
                f"{code_rule[field]!r}; the rule is fixed before the run: rerun on the code the prediction was written for"
            )


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True)


def committed_before(path: Path, config: dict[str, Any], started: str | None, root: Path = REPO_ROOT) -> dict[str, str]:
    """Refuse a prediction not committed, as it is now, in the (clean) commit the run recorded; and one whose last
    commit up to that commit is younger than the run's start (``started``: ISO time from its timing.json, if known).
    Returns that last commit of the file, ``{"commit", "date"}`` (committer date, ISO)."""
    recorded = str(config.get("git_commit", ""))
    if recorded.endswith("-dirty") or not re.fullmatch(r"[0-9a-f]{7,40}", recorded):
        raise PipelineError(
            f"{path}: the run records commit {recorded!r}, not a clean commit, so nothing shows which prediction it ran "
            "after; commit the prediction, then rerun the sweep from a clean tree"
        )
    try:
        relative = Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        raise PipelineError(f"{path}: a prediction file must lie inside the repository ({root})") from None
    try:
        then = _git(root, "show", f"{recorded}:{relative}")
    except OSError:
        raise PipelineError(f"{path}: git is not available to check that the prediction precedes the run") from None
    if then.returncode != 0:
        raise PipelineError(
            f"{path}: not in the commit the run recorded ({recorded[:12]}): the prediction is newer than the run it judges"
        )
    if json.loads(then.stdout) != read_json(path, fix="restore it from git"):
        raise PipelineError(
            f"{path}: differs from its content at the run's commit ({recorded[:12]}): edited after the run; restore it "
            f"(git checkout {recorded[:12]} -- {relative})"
        )
    commit, _, date = (
        _git(root, "log", "-1", "--format=%H %cI", recorded, "--", relative).stdout.decode().strip().partition(" ")
    )
    if started is not None and date and datetime.fromisoformat(date) >= datetime.fromisoformat(started):
        raise PipelineError(
            f"{path}: committed at {date}, not before the run started ({started}): the prediction is newer than the run"
        )
    return {"commit": commit, "date": date}


def run_started(timing: Path) -> str | None:
    """When the run's first process started (the earliest ``processes[].started_utc`` of its timing.json), if recorded."""
    if not timing.is_file():
        return None
    stamps = [entry.get("started_utc") for entry in read_json(timing).get("processes", [])]
    stamps = [stamp for stamp in stamps if isinstance(stamp, str)]
    return min(stamps, key=datetime.fromisoformat) if stamps else None


def code_rule(slope_tolerance: float, convergence_tolerance: float, floor_margin: float, first: int) -> dict[str, Any]:
    """The rule fields as the code decides them (compared with the prediction's by :func:`check_rule`)."""
    return {
        "slope_tolerance": slope_tolerance,
        "convergence_tolerance": convergence_tolerance,
        "limit_points": LIMIT_POINTS,
        "floor_margin": floor_margin,
        "first_counted_order": first,
    }
