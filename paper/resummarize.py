"""Rebuild a summary from its committed per-image arrays, without evaluating a single mask.

Question: when the summary's code or provenance changes (a new config key such as
gated_recursion, a new layout of the published numbers), what does the summary of an existing run
become? The evaluation steps write per_image.npz beside every summary; the statistics are a pure
function of those arrays and the configuration, so the rebuild function each experiment's record
names (``rebuild`` in experiment_N/record.py: Experiments 1, 2, 3A/3B and 3) rebuilds them. The
numbers cannot move unless the summarising code changed; compare the old and new JSON to check.

Inputs:  --summary, one or more summary.json of experiment_1.step_3_evaluate,
         experiment_2.step_1_evaluate or experiment_3.step_1_evaluate, or summary_all.json of
         experiment_2.step_3_lambda_sweep, each with its per_image.npz beside it, of the same run
         (both carry its run_id). A pair written before they did (neither carries one) must agree on
         the number of images and valid images; the rebuilt summary then takes the current schema and
         the npz's content hash as run_id. A summary without a run id beside arrays that name one is
         refused: it never adopts another run's identity.
Outputs: each summary file, rewritten atomically: the step's current summary of the same
         arrays, with the model's gated_recursion added to the config and ``summary_rebuilt_by``
         naming this tool and the commit it ran at (read once, before the first file changes);
         git_commit stays the commit that evaluated the images.

    python -m paper.resummarize --summary experiment_*/results_*_sample/summary*.json
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from experiment_1.errors import PipelineError, run_cli
from experiment_1.files import (
    SCHEMA_VERSION,
    atomic_write_json,
    check_finite,
    check_same_run,
    git_commit,
    load_per_image_npz,
    missing_key,
    read_json,
)
from experiment_1.network import ARCHITECTURES, build_gated_stack
from experiment_1.report import ExperimentRecord, resolve
from paper.experiments import RECORDS

REBUILDABLE: dict[int | str, ExperimentRecord] = {record.experiment: record for record in RECORDS if record.rebuild}
"""The ``experiment`` value of a summary → the record whose rebuild function rebuilds it."""
REBUILDABLE_NAMES = ", ".join(str(experiment) for experiment in REBUILDABLE)


def gated_recursion(config: dict[str, Any], path: Path) -> str:
    """The run's gated recursion: as recorded, or — for a summary that predates the field — read off a
    registered architecture built on CPU with random weights (the recursion is the architecture's).

    Nothing a results file names is imported or read: a ``module:function`` factory or an unknown
    name in ``config.arch`` is refused, and the recorded weights (possibly a path) are never loaded.
    """
    recorded = config.get("gated_recursion")
    if isinstance(recorded, str):
        return recorded
    arch = config.get("arch")
    if not isinstance(arch, str) or arch not in ARCHITECTURES.names():
        raise PipelineError(
            f"{path}: config.arch {arch!r} is not a registered architecture and the summary records no gated_recursion; "
            "a results file never names code to import — rerun the evaluation step, which records it"
        )
    return build_gated_stack(arch, "random", seed=0).gated_recursion


def rebuilt_config(
    config: dict[str, Any], commit: str, run_id: str, path: Path = Path("summary.json")
) -> dict[str, Any]:
    """The run's config with its gated recursion (:func:`gated_recursion`), the run id of its
    per-image arrays and the current schema version."""
    return {
        **config,
        "gated_recursion": gated_recursion(config, path),
        "run_id": run_id,
        "schema_version": SCHEMA_VERSION,
        "summary_rebuilt_by": f"paper.resummarize at {commit}",
    }


def resummarize(
    summary: dict[str, Any], arrays: dict[str, np.ndarray], commit: str, run_id: str, path: Path = Path("summary.json")
) -> dict[str, Any]:
    """The current summary of the same arrays, by the rebuild function of its experiment's record."""
    config, seed = rebuilt_config(summary["config"], commit, run_id, path), summary["config"]["seed"]
    record = REBUILDABLE.get(summary.get("experiment"))
    if record is None:
        raise PipelineError(
            f"experiment {summary.get('experiment')!r}: only the summaries of Experiments {REBUILDABLE_NAMES} can be rebuilt"
        )
    return resolve(record.rebuild)(summary, arrays, config, seed)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--summary",
        type=Path,
        nargs="+",
        required=True,
        help="summary.json / summary_all.json files to rebuild (per_image.npz beside each)",
    )
    args = parser.parse_args(argv)
    for path in args.summary:
        if not path.exists() or not (path.parent / "per_image.npz").exists():
            raise PipelineError(
                f"{path}: needs the summary and per_image.npz beside it; rerun the evaluation step that wrote them"
            )
    inputs = [(path, read_json(path)) for path in args.summary]
    loaded = [
        (path, summary, load_pair(path, summary)) for path, summary in inputs
    ]  # every pair checked before the first file changes
    commit = git_commit()
    rebuilt = [(path, resummarize(summary, arrays, commit, run_id, path)) for path, summary, (arrays, run_id) in loaded]
    for path, summary in rebuilt:
        check_finite(summary, f"{path} (not rewritten)", "a statistic of the per-image arrays is NaN or inf")
    for path, summary in rebuilt:
        atomic_write_json(path, summary)
        print(f"rebuilt {path} from {path.parent / 'per_image.npz'}")


def load_pair(path: Path, summary: Any) -> tuple[dict[str, np.ndarray], str]:
    """The per-image arrays beside ``path`` and their run id, checked to be of the summary's run."""
    if (
        not isinstance(summary, dict)
        or not isinstance(summary.get("config"), dict)
        or not {"seed", "arch", "weights"} <= set(summary["config"])
    ):
        raise PipelineError(
            f"{path}: not a summary of an evaluation step (no config.seed/arch/weights); pass summary.json / summary_all.json files"
        )
    if summary.get("experiment") not in REBUILDABLE:
        raise PipelineError(
            f"{path}: a summary of experiment {summary.get('experiment')!r}; only the summaries of Experiments {REBUILDABLE_NAMES} can be rebuilt"
        )
    missing = [key for key in REBUILDABLE[summary["experiment"]].rebuild_keys if missing_key(summary, key)]
    if missing:
        raise PipelineError(
            f"{path}: lacks {missing[0]} (an older schema); rerun the evaluation step that wrote it, which resumes from its partial results"
        )
    arrays, run_id = load_per_image_npz(path.parent / "per_image.npz")
    if "run_id" in summary["config"]:
        check_same_run(path.parent / "per_image.npz", run_id, path, summary["config"]["run_id"])
    elif not run_id.startswith("npz-sha256:"):  # arrays that name their run were written with that run's summary
        raise PipelineError(
            f"{path.parent / 'per_image.npz'}: names run {run_id[:12]}, but {path} names no run: the arrays of a run "
            f"that carries its id are never adopted by a summary without one; rerun the evaluation step that wrote {path}"
        )
    valid = arrays.get("valid")
    counts = (None, None) if valid is None else (len(valid), int(valid.astype(bool).sum()))
    if counts != (summary.get("num_images"), summary.get("num_valid")):
        raise PipelineError(
            f"{path.parent / 'per_image.npz'}: holds {counts[0]} images ({counts[1]} valid) but {path} counts "
            f"{summary.get('num_images')} ({summary.get('num_valid')}); they are not of one run — rerun the evaluation "
            f"step"
        )
    return arrays, run_id


if __name__ == "__main__":
    run_cli(main)
