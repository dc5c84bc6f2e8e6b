"""Scale check — wall time and peak memory of Experiment 4's overlap step and Experiment 5's analysis at seed scale.

Question: the original study runs both analysis steps on N = 10 000 images; how long do our steps take
there, and in how much memory? Each size runs in a fresh process (its peak resident memory is the
process's own), on synthetic inputs of the real shapes, seeded:

- Experiment 4: ``signatures.pt`` of an L = 9 network (512 subsets, every subset ranked, as
  EfficientNet-Lite0 stores them), ``--per-class`` images per class (default 10, so N / 10 classes and
  as many class coordinates, 64 ranked subsets each); rankings are random permutations. Then
  ``experiment_4.step_2_overlap`` with ``--nn-K 32`` and ``--num-permutations`` (default 1 000), on every pair
  or, with ``--max-pairs M``, on sampled pairs (the original study's ``--max-pairs 45000``).
- Experiment 5: the committed ``per_image.pt`` of the Lite0 sample run
  (experiment_5/results_efficientnet_lite0_sample, 900 images) resampled to N rows with replacement,
  then ``experiment_5.step_2_analyze`` with its defaults.

The time covers the step's ``main`` (reading, analysis, writing), not the synthesis. Sizes above
``--max-seconds`` are not run: the time at the target N is then extrapolated from the two largest
measured sizes by a power law (the printed exponent), and marked as extrapolated.

Inputs:  none (synthetic), the committed Lite0 per_image.pt for Experiment 5.
Outputs: a table on stdout; ``--json`` writes it.

    python -m paper.scale_analysis --experiment 5 --sizes 1000 2000 5000 10000
    python -m paper.scale_analysis --experiment 4 --sizes 250 500 1000 --target 10000
    python -m paper.scale_analysis --experiment 4 --sizes 1000 3000 10000 --max-pairs 45000
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from experiment_1.errors import PipelineError, run_cli
from experiment_1.paths import REPO_ROOT
from experiment_1.run import run_config

EXP5_SOURCE = REPO_ROOT / "experiment_5" / "results_efficientnet_lite0_sample" / "per_image.pt"
NUM_SUBSETS, CLASS_STORE_K = 512, 64


def synthetic_signatures(count: int, per_class: int, seed: int) -> dict[str, Any]:
    """A signatures.pt document of ``count`` images, ``count // per_class`` classes, L = 9, random rankings."""
    import torch

    from experiment_1.files import SCHEMA_VERSION
    from experiment_4.formats import FORMAT

    generator = torch.Generator().manual_seed(seed)
    classes = max(3, count // per_class)
    labels = torch.arange(count) % classes
    document: dict[str, Any] = {
        "format": FORMAT,
        "question": "synthetic (scale check)",
        "config": {"num_blocks": 9, "schema_version": SCHEMA_VERSION},
        "rankings": ["vector", "scalar", "scalar_true"],
        "num_subsets": NUM_SUBSETS,
        "store_k": NUM_SUBSETS,
        "class_coordinates": list(range(classes)),
        "class_store_k": CLASS_STORE_K,
        "label": labels,
        "predicted": labels.roll(1),
        "valid": torch.ones(count, dtype=torch.bool),
        "full_logits": torch.zeros(count, 1),
        "ranked_class": _ranked_class_in_parts(count, classes, generator),
    }
    for name in document["rankings"]:
        document[f"ranked_{name}"] = torch.rand(count, NUM_SUBSETS, generator=generator).argsort(dim=-1).to(torch.int16)
        document[f"magnitude_{name}"] = (
            torch.rand(count, NUM_SUBSETS, generator=generator).sort(dim=-1, descending=True).values
        )
    return document


def _ranked_class_in_parts(count: int, classes: int, generator: Any) -> Any:
    """Each image's and coordinate's first 64 subsets of a random ranking (the 64 largest of uniform scores), 256 images at a time."""
    import torch

    return torch.cat(
        [
            torch.rand(min(256, count - start), classes, NUM_SUBSETS, generator=generator)
            .topk(CLASS_STORE_K, dim=-1)
            .indices.to(torch.int16)
            for start in range(0, count, 256)
        ]
    )


def synthetic_per_image(count: int, seed: int) -> dict[str, Any]:
    """The committed Lite0 per_image.pt resampled (with replacement) to ``count`` images."""
    import torch

    record = torch.load(EXP5_SOURCE, weights_only=False)
    rows = torch.randint(0, record["num_images"], (count,), generator=torch.Generator().manual_seed(seed))
    arrays = {name: value[rows] for name, value in record["arrays"].items()}
    arrays["index"] = torch.arange(count)
    return {
        **record,
        "arrays": arrays,
        "num_images": count,
        "num_valid": int(arrays["valid"].sum()),
        "num_skipped_corrupt": 0,
        "samples": [],
    }


def child(
    experiment: int, count: int, per_class: int, num_permutations: int, seed: int, max_pairs: int | None = None
) -> dict[str, Any]:
    """Synthesise, then time the step's main in this process; its peak resident memory."""
    import torch

    with tempfile.TemporaryDirectory() as folder:
        if experiment == 4:
            from experiment_4 import step_2_overlap

            path = Path(folder) / "signatures.pt"
            torch.save(synthetic_signatures(count, per_class, seed), path)
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            started = time.perf_counter()
            sampling = [] if max_pairs is None else ["--max-pairs", str(max_pairs)]
            step_2_overlap.main(
                [
                    "--signatures",
                    str(path),
                    "--nn-K",
                    "32",
                    "--num-permutations",
                    str(num_permutations),
                    "--seed",
                    str(seed),
                    *sampling,
                ]
            )
        else:
            from experiment_5 import step_2_analyze

            path = Path(folder) / "per_image.pt"
            torch.save(synthetic_per_image(count, seed), path)
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            started = time.perf_counter()
            step_2_analyze.main(["--per-image", str(path), "--seed", str(seed)])
        seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"n": count, "seconds": seconds, "peak_rss_mib": peak / 1024, "rss_before_step_mib": before / 1024}


def measure(args: argparse.Namespace, count: int) -> dict[str, Any]:
    command = [
        sys.executable,
        "-m",
        "paper.scale_analysis",
        "--child",
        "--experiment",
        str(args.experiment),
        "--sizes",
        str(count),
        "--per-class",
        str(args.per_class),
        "--num-permutations",
        str(args.num_permutations),
        "--seed",
        str(args.seed),
    ]
    if args.max_pairs is not None:
        command += ["--max-pairs", str(args.max_pairs)]
    try:
        result = subprocess.run(
            command,
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=args.max_seconds * 3,
            env={**os.environ, "OMP_NUM_THREADS": str(args.threads)},
        )
    except subprocess.TimeoutExpired:
        return {"n": count, "seconds": None, "timed_out_after": args.max_seconds * 3}
    if result.returncode != 0:
        raise PipelineError(
            f"the N = {count} measurement failed: {result.stderr.strip().splitlines()[-1] if result.stderr.strip() else result.returncode}"
        )
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--experiment", type=int, choices=(4, 5), required=True, help="which analysis step")
    parser.add_argument("--sizes", type=int, nargs="+", required=True, help="numbers of images N, increasing")
    parser.add_argument(
        "--target", type=int, default=10_000, help="N to extrapolate to when it is not measured (default: %(default)s)"
    )
    parser.add_argument(
        "--per-class", type=int, default=10, help="Experiment 4: images per class (default: %(default)s)"
    )
    parser.add_argument(
        "--num-permutations", type=int, default=1000, help="Experiment 4: label permutations (default: %(default)s)"
    )
    parser.add_argument(
        "--max-pairs",
        type=run_config.positive_int,
        default=None,
        help="Experiment 4: step 2's --max-pairs (default: every pair)",
    )
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=180.0,
        help="stop measuring larger sizes once one took longer (a size still running after 3× this is stopped) (default: %(default)s)",
    )
    parser.add_argument(
        "--threads", type=int, default=1, help="OMP_NUM_THREADS of each measurement (default: %(default)s)"
    )
    parser.add_argument(
        "--seed",
        type=run_config.seed,
        default=0,
        help="seed of the synthetic inputs and of the step (default: %(default)s)",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the measurements here")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(
            json.dumps(
                child(args.experiment, args.sizes[0], args.per_class, args.num_permutations, args.seed, args.max_pairs)
            )
        )
        return
    rows = []
    for count in sorted(args.sizes):
        rows.append(measure(args, count))
        print(f"N = {count}: {rows[-1]}", file=sys.stderr)
        if rows[-1]["seconds"] is None or rows[-1]["seconds"] > args.max_seconds:
            break
    measured = [row for row in rows if row["seconds"] is not None]
    result: dict[str, Any] = {
        "experiment": args.experiment,
        "threads": args.threads,
        "per_class": args.per_class,
        "num_permutations": args.num_permutations,
        "max_pairs": args.max_pairs,
        "rows": rows,
    }
    if args.target not in [row["n"] for row in measured] and len(measured) >= 2:
        small, large = measured[-2], measured[-1]
        exponent = math.log(large["seconds"] / small["seconds"]) / math.log(large["n"] / small["n"])
        memory_exponent = math.log(large["peak_rss_mib"] / small["peak_rss_mib"]) / math.log(large["n"] / small["n"])
        result["extrapolated"] = {
            "n": args.target,
            "from_n": [small["n"], large["n"]],
            "time_exponent": exponent,
            "seconds": large["seconds"] * (args.target / large["n"]) ** exponent,
            "memory_exponent": memory_exponent,
            "peak_rss_mib": large["peak_rss_mib"] * (args.target / large["n"]) ** memory_exponent,
        }
    sampling = (
        "" if args.experiment != 4 else ", every pair" if args.max_pairs is None else f", --max-pairs {args.max_pairs}"
    )
    print(f"Experiment {args.experiment} analysis step, {args.threads} thread(s), synthetic inputs{sampling}")
    print(f"{'N':>7} {'wall s':>9} {'peak RSS MiB':>13}")
    for row in rows:
        print(
            f"{row['n']:>7} {row['seconds'] if row['seconds'] is None else round(row['seconds'], 1)!s:>9} {row.get('peak_rss_mib', float('nan')):>13.0f}"
        )
    if "extrapolated" in result:
        guess = result["extrapolated"]
        print(
            f"{guess['n']:>7} {guess['seconds']:>9.0f} {guess['peak_rss_mib']:>13.0f}  extrapolated from N = "
            f"{guess['from_n']} (time ∝ N^{guess['time_exponent']:.2f}, memory ∝ N^{guess['memory_exponent']:.2f})"
        )
    if args.json:
        from experiment_1.files import atomic_write_json

        atomic_write_json(args.json, result)


if __name__ == "__main__":
    run_cli(main)
