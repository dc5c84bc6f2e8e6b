"""The random-init null over networks (experiment_2.step_14_null_compare): the trained run ranked among the seeds' runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from experiment_1.errors import PipelineError
from experiment_1.files import atomic_write_text, git_commit, read_json, read_timing, write_json_keeping_commit
from experiment_1.report import check_verdicts, load_checked_summary
from experiment_2.record import VERDICTS
from experiment_2.spectrum.null_networks import check_seed_runs, compare_networks, null_markdown
from experiment_2.spectrum.plot import SUMMARY_KEYS
from experiment_2.spectrum.verdicts import check_random_init_null
from experiment_2.step_14_null_compare import NullCompareFlags

GENERATOR = "experiment_2.step_14_null_compare"


def per_image_arrays(summary_path: Path) -> dict[str, np.ndarray]:
    """The per_image.npz beside a summary."""
    path = summary_path.parent / "per_image.npz"
    if not path.is_file():
        raise PipelineError(f"{path}: not found; rerun the step that wrote {summary_path}")
    with np.load(path) as arrays:
        return {name: arrays[name] for name in arrays.files}


def run(args: NullCompareFlags) -> None:
    """The null's summary.json and REPORT.md in the seeds' folder."""
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
