"""Experiment 2, step 14 — training against the random-init null, decided between networks.

Question: does training change the spectrum, when the trained network is compared with many random-init networks
rather than with the images of one?

Inputs:  --summary: the trained run's summary.json (experiment_2.step_1_evaluate; per_image.npz beside it);
         --seeds-dir: experiment_2.step_13_null_seeds' folder (seed_*/summary.json and per_image.npz).
Outputs: <seeds-dir>/summary.json (the per-network means, the input rule per seed, the rank tests and the verdicts of
         experiment_2.spectrum.null_networks) and <seeds-dir>/REPORT.md generated from it; a re-decision that changes nothing
         but the commit leaves summary.json as it is (the commit that decided it stays). Evaluates nothing.

    python -m experiment_2.step_14_null_compare --summary experiment_2/results_efficientnet_lite0_sample/summary.json \\
        --seeds-dir experiment_2/results_efficientnet_lite0_null_seeds
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from experiment_1.errors import PipelineError, run_cli
from experiment_1.files import atomic_write_text, git_commit, read_json, read_timing, write_json_keeping_commit
from experiment_1.report import check_verdicts, load_checked_summary
from experiment_2.record import VERDICTS
from experiment_2.spectrum.null_networks import check_seed_runs, compare_networks, null_markdown
from experiment_2.spectrum.verdicts import check_random_init_null
from experiment_2.step_2_plot import SUMMARY_KEYS

GENERATOR = "experiment_2.step_14_null_compare"


def per_image_arrays(summary_path: Path) -> dict[str, np.ndarray]:
    """The per_image.npz beside a summary."""
    path = summary_path.parent / "per_image.npz"
    if not path.is_file():
        raise PipelineError(f"{path}: not found; rerun the step that wrote {summary_path}")
    with np.load(path) as arrays:
        return {name: arrays[name] for name in arrays.files}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--summary", type=Path, required=True, help="the trained run's summary.json (step_1_evaluate)")
    parser.add_argument("--seeds-dir", type=Path, required=True, help="experiment_2.step_13_null_seeds' output folder")
    args = parser.parse_args(argv)
    trained = load_checked_summary(
        args.summary, 2, "experiment_2.step_1_evaluate", "--summary", SUMMARY_KEYS, rules=VERDICTS[2]
    )
    paths = sorted(args.seeds_dir.glob("seed_*/summary.json"))
    seeds = []
    for path in paths:
        summary = load_checked_summary(
            path, 2, "experiment_2.step_13_null_seeds", "--seeds-dir", SUMMARY_KEYS, rules=VERDICTS[2]
        )
        check_random_init_null(trained, args.summary, summary, path, "--seeds-dir")
        seeds.append((summary, per_image_arrays(path)))
    check_seed_runs(seeds, [str(path) for path in paths])
    result = compare_networks(
        trained,
        per_image_arrays(args.summary),
        seeds,
        {
            "trained_summary": args.summary.as_posix(),
            "seeds_dir": args.seeds_dir.as_posix(),
            "git_commit": git_commit(),
        },
    )
    output = args.seeds_dir / "summary.json"
    verb = "wrote" if write_json_keeping_commit(output, result) else "kept (the same decision)"
    written = read_json(output)
    check_verdicts(written, output, VERDICTS["2N"], fix=f"rerun `python -m {GENERATOR}`")
    timings = [
        read_timing(path.parent / "timing.json", summary["num_images"]) for path, (summary, _) in zip(paths, seeds)
    ]
    wall = sum(timing["wall_seconds"] for timing in timings if timing) if all(timings) else None
    atomic_write_text(args.seeds_dir / "REPORT.md", null_markdown(written, GENERATOR, f"`{output.as_posix()}`", wall))
    print(f"{verb} {output}, wrote {args.seeds_dir / 'REPORT.md'}: {result['num_null_networks']} null networks")


if __name__ == "__main__":
    run_cli(main)
