"""Mutation check: plant each known bug in a temporary copy of the repository, run the tests that should catch it,
and print the survivors (bugs no test caught). A script, not a test: it costs CPU (one pytest run per bug).

    python tests/mutation/run.py              # every mutation; exit status 1 if any survives or is stale
    python tests/mutation/run.py M2 O11       # only these
    python tests/mutation/run.py --list       # the list, with the tests each one runs
    python tests/mutation/run.py --baseline   # run every target unmutated (must all pass)
    python tests/mutation/run.py --stale      # only check that every edit still applies (reads, runs nothing)

Each mutation is one or more exact search/replace edits on named files. An edit whose search text does not occur
exactly once is *stale* (the code moved): the script says so and fails, so the list cannot rot silently.
Targets run with ``-x`` and ``OMP_NUM_THREADS=1``; exit status 1 of pytest (a test failed) is "caught", 0 is
"survived", anything else (collection error, timeout) is reported as an error. Add every bug found later to
MUTATIONS, with the test that now catches it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_SECONDS = 600


@dataclass(frozen=True)
class Mutation:
    id: str
    what: str
    edits: tuple[tuple[str, str, str], ...]  # (file, search, replace)
    tests: tuple[str, ...]  # pytest arguments (files, node ids, "-k", expressions)


def m(id: str, what: str, edits: list[tuple[str, str, str]], *tests: str) -> Mutation:
    return Mutation(id, what, tuple(edits), tuple(tests))


T = "experiment_1/mobius/transform.py"
E = "experiment_1/network/engines.py"
S = "experiment_1/report/stats.py"
V = "experiment_1/report/verdicts.py"
R = "experiment_1/reconstruction/metrics.py"
P = "experiment_1/run/partial_store.py"
SP = "experiment_1/mobius/spectrum.py"
SQ = "experiment_1/mobius/sparsity.py"

MUTATIONS: list[Mutation] = [
    # ---- the 19 planted bugs of an early test audit, on the new layout
    m(
        "M1",
        "butterfly sign flipped (zeta and Möbius swap)",
        [(T, "        if sign < 0:", "        if sign > 0:")],
        "tests/experiment_1/mobius/test_mobius.py",
    ),
    m(
        "M2",
        "butterfly transforms only bits 0…9",
        [
            (
                T,
                "    for block in range(num_blocks):\n        view = out.view(lead, size >> (block + 1), 2, 1 << block, trail)\n        if sign",
                "    for block in range(min(num_blocks, 10)):\n        view = out.view(lead, size >> (block + 1), 2, 1 << block, trail)\n        if sign",
            )
        ],
        "tests/experiment_1/mobius/test_mobius.py",
    ),
    m(
        "M3",
        "tree engine: mask 2^L−2 overwritten with the full mask's logits",
        [
            (
                E,
                "            out[:, prefix_ids] = logits.transpose(0, 1)\n",
                "            out[:, prefix_ids] = logits.transpose(0, 1)\n            if bool((prefix_ids == "
                "2**num_blocks - 1).any()):\n                out[:, -2] = out[:, -1]\n",
            )
        ],
        "tests/experiment_1/network/test_engines.py",
        "-k",
        "tree_equals_naive_on_every_mask",
    ),
    m(
        "M4",
        "mask bit order reversed in both engines (bit l = block L−1−l)",
        [
            (
                E,
                "masks = ((chunk[:, None] >> bits[None, :]) & 1).bool()",
                "masks = ((chunk[:, None] >> (num_blocks - 1 - bits)[None, :]) & 1).bool()",
            ),
            (
                E,
                "            return\n        gate_off, gate_on = model.blocks[level].forward_both(states, scale)\n      "
                "  del states\n        on_ids = prefix_ids + (1 << level)",
                "            return\n        gate_off, gate_on = model.blocks[level].forward_both(states, scale)\n      "
                "  del states\n        on_ids = prefix_ids + (1 << (num_blocks - 1 - level))",
            ),
        ],
        "tests/experiment_1/network/test_engines.py",
        "-k",
        "bit_l",
    ),
    m(
        "M5",
        "bootstrap CI at 90 % instead of 95 %",
        [(S, "tail = (1 - confidence) / 2", "tail = 1 - confidence")],
        "tests/experiment_1/report/test_stats.py",
    ),
    m(
        "M6",
        "row-bootstrap quantiles 0.05/0.95",
        [(S, "[0.025, 0.975], axis=0", "[0.05, 0.95], axis=0")],
        "tests/experiment_1/report/test_stats.py",
    ),
    m(
        "M7",
        "first-order baseline Σ singles − empty",
        [
            (
                R,
                "first_order = empty + (singles - empty[:, None]).sum(dim=1)",
                "first_order = singles.sum(dim=1) - empty",
            )
        ],
        "tests/experiment_1/test_reconstruction.py",
    ),
    m(
        "M8",
        "resume key drops the weights file's sha256",
        [(P, 'key["weights"] = f"sha256:{file_sha256(weights)}"', 'key["weights"] = str(weights)')],
        "tests/experiment_1/run/test_resume_key.py::test_the_key_covers_weights_file_content_not_paths",
    ),
    m(
        "M9",
        "writes not atomic (in place, no temporary, no fsync)",
        [
            (
                "experiment_1/files.py",
                "        with os.fdopen(handle, mode) as stream:\n            write(stream)\n            "
                "stream.flush()\n            os.fsync(stream.fileno())\n        os.replace(temporary, path)\n",
                "        os.close(handle)\n        os.unlink(temporary)\n        with open(path, mode) as stream:\n            write(stream)\n",
            )
        ],
        "tests/whole/test_one_line_errors.py",
        "-k",
        "write_failures",
    ),
    m(
        "M10",
        "negative claim with a CI below 0 fails",
        [(V, "(high < 0 and sign < 0)", "(high < 0 and sign < -1)")],
        "tests/experiment_1/report/test_verdict_rules.py",
    ),
    m(
        "M11",
        "low-order mass off by one",
        [(SP, "return spectrum[:, :max_order].sum(dim=1)", "return spectrum[:, :max_order + 1].sum(dim=1)")],
        "tests/experiment_1/mobius/test_spectrum.py",
    ),
    m(
        "M12",
        "trunk share over the interaction energy only",
        [(SP, "return energies[:, 0] / energies.sum(dim=1)", "return energies[:, 0] / energies[:, 1:].sum(dim=1)")],
        "tests/experiment_1/mobius/test_spectrum.py",
    ),
    m(
        "M13",
        "equivalence rule with or",
        [(V, "-margin < low and high < margin", "-margin < low or high < margin")],
        "tests/experiment_1/report/test_verdict_rules.py",
    ),
    m(
        "M14",
        "Holm without step-down monotonicity",
        [(V, "running = max(running, min(1.0, (m - rank) * p[index]))", "running = min(1.0, (m - rank) * p[index])")],
        "tests/experiment_1/report/test_verdicts.py",
    ),
    m(
        "M15",
        "worst-subset error forced to 0",
        [
            (
                R,
                "    return torch.stack(worst, dim=1).amax(dim=1)",
                "    return 0 * torch.stack(worst, dim=1).amax(dim=1)",
            )
        ],
        "tests/experiment_1/test_reconstruction.py",
    ),
    m(
        "M16",
        "full-mask correctness against label + 1",
        [(R, "(predicted == labels).double()", "(predicted == labels + 1).double()")],
        "tests/experiment_1/test_reconstruction.py",
    ),
    m(
        "M17",
        "bootstrap ignores its seed",
        [
            (
                S,
                "        rng = np.random.default_rng(seed)\n        means = np.empty",
                "        rng = np.random.default_rng(0)\n        means = np.empty",
            )
        ],
        "tests/experiment_1/report/test_stats.py",
    ),
    m(
        "M18",
        "resume key ignores engine, mask_chunk and dtype",
        [
            (
                P,
                "for name, value in config.items() if name not in PATH_FIELDS}",
                'for name, value in config.items() if name not in PATH_FIELDS + ("engine", "mask_chunk", "dtype")}',
            )
        ],
        "tests/experiment_1/run/test_resume_key.py",
        "-k",
        "changing_any or every_configuration",
    ),
    m(
        "M19",
        "the parity check of gate disabled",
        [("experiment_1/network/gating.py", "    if not error <= PARITY_RTOL:", "    if False:")],
        "tests/experiment_1/network/test_gating.py",
        "-k",
        "factory_errors or parity",
    ),
    # ---- our own
    m(
        "O1",
        "full mask index off by one",
        [(T, "    return 2**num_blocks - 1\n", "    return 2**num_blocks - 2\n")],
        "tests/experiment_1/mobius/test_mobius.py",
    ),
    m(
        "O2",
        "the transform ignores its dtype argument",
        [
            (
                T,
                "values if in_place else values.to(dtype=dtype or values.dtype, copy=True)",
                "values if in_place else values.to(dtype=values.dtype, copy=True)",
            )
        ],
        "tests/experiment_1/mobius/test_mobius.py",
    ),
    m(
        "O3",
        "naive engine pairs images and masks mask-major",
        [(E, "images.repeat_interleave(len(chunk), dim=0)", "images.repeat(len(chunk), 1, 1, 1)")],
        "tests/experiment_1/network/test_engines.py",
        "-k",
        "naive",
    ),
    m(
        "O4",
        "tree engine ignores λ",
        [
            (
                E,
                "            return\n        gate_off, gate_on = model.blocks[level].forward_both(states, scale)",
                "            return\n        gate_off, gate_on = model.blocks[level].forward_both(states, 1.0)",
            )
        ],
        "tests/experiment_1/network/test_engines.py",
        "-k",
        "tree_equals_naive_on_every_mask",
    ),
    m(
        "O5",
        "interaction spectrum includes E_0 and drops E_L",
        [(SP, "    interaction = energies[:, 1:]\n", "    interaction = energies[:, :-1]\n")],
        "tests/experiment_1/mobius/test_spectrum.py",
    ),
    m(
        "O6",
        "binomial-null κ without the 2^L/(2^L − 1) factor",
        [(SP, '"kappa": num_blocks / 2 * 2**num_blocks / interactions,', '"kappa": num_blocks / 2,')],
        "tests/experiment_1/mobius/test_spectrum.py",
    ),
    m(
        "O7",
        "peak order counted from 0",
        [(SP, ".argmax(dim=1) + 1, torch.zeros_like", ".argmax(dim=1), torch.zeros_like")],
        "tests/experiment_1/mobius/test_spectrum.py",
    ),
    m(
        "O8",
        "participation ratio without the square",
        [(SQ, "total.square() / squares", "total / squares")],
        "tests/experiment_1/mobius/test_sparsity.py",
    ),
    m(
        "O9",
        "smallest K reaching a mass: ≤ instead of <",
        [
            (
                SQ,
                "(captured[:, :, None] < thresholds[None, None, :])",
                "(captured[:, :, None] <= thresholds[None, None, :])",
            )
        ],
        "tests/experiment_1/mobius/test_sparsity.py",
    ),
    m(
        "O10",
        "vector ranking by the L1 norm",
        [(SQ, "return coefficients.norm(dim=2)", "return coefficients.abs().sum(dim=2)")],
        "tests/experiment_1/mobius/test_sparsity.py",
    ),
    m(
        "O11",
        "Jaccard over Σa + Σb",
        [
            (
                "experiment_4/signatures.py",
                "return overlap / (mass_a + mass_b - overlap)",
                "return overlap / (mass_a + mass_b)",
            )
        ],
        "tests/experiment_4/test_signatures.py",
    ),
    m(
        "O12",
        "a zero-mass weighted signature gets weight 0",
        [("experiment_4/signatures.py", "torch.full_like(values, 1.0 / k)\n", "torch.full_like(values, 0.0)\n")],
        "tests/experiment_4/test_signatures.py",
    ),
    m(
        "O13",
        "k̄ counted from order 1",
        [
            (
                "experiment_5/complexity.py",
                "orders = torch.arange(energies.shape[1], dtype=energies.dtype",
                "orders = torch.arange(1, energies.shape[1] + 1, dtype=energies.dtype",
            )
        ],
        "tests/experiment_5/test_complexity.py",
    ),
    m(
        "O14",
        "N_eff counts the empty set",
        [
            (
                "experiment_5/complexity.py",
                "participation_ratio(subset_energies[:, 1:])",
                "participation_ratio(subset_energies)",
            )
        ],
        "tests/experiment_5/test_complexity.py",
    ),
    m(
        "O15",
        "exact proportion CI by Wilson",
        [
            (
                S,
                'proportion_ci(confidence_level=confidence, method="exact")',
                'proportion_ci(confidence_level=confidence, method="wilson")',
            )
        ],
        "tests/experiment_1/report/test_stats.py",
    ),
    m(
        "O16",
        "bootstrap keeps NaNs",
        [(S, "    values = values[~np.isnan(values)]\n    count = len(values)\n", "    count = len(values)\n")],
        "tests/experiment_1/report/test_stats.py",
    ),
    m(
        "O17",
        "a conjunction holds when any part holds",
        [(V, "all(decision == HOLDS for decision in decisions)", "any(decision == HOLDS for decision in decisions)")],
        "tests/experiment_1/report/test_verdicts.py",
    ),
    m(
        "O18",
        "saturation needs more than the share",
        [(V, "        if at_bound >= share:", "        if at_bound > share:")],
        "tests/experiment_1/report/test_verdict_rules.py",
    ),
    m(
        "O19",
        "the seed's value on our CI's end is outside it",
        [(V, '"inside" if low <= reported <= high', '"inside" if low < reported < high')],
        "tests/experiment_1/report/test_verdict_rules.py",
    ),
    m(
        "O20",
        "the sample-list key ignores labels",
        [
            (
                P,
                "entries = [[sample.source, sample.row, sample.label] for sample in samples]",
                "entries = [[sample.source, sample.row] for sample in samples]",
            )
        ],
        "tests/experiment_1/run/test_resume_key.py::test_a_relabelled_sample_list_is_another_run",
    ),
    m(
        "O21",
        "a shard's identity without its footer hash",
        [(P, '"footer_sha256": hashlib.sha256(footer).hexdigest()', '"footer_sha256": ""')],
        "tests/experiment_1/run/test_resume_key.py",
        "-k",
        "data_dir",
    ),
    m(
        "O22",
        "fresh temporaries removed, stale ones kept",
        [(P, "if now - path.stat().st_mtime > max_age:", "if now - path.stat().st_mtime < max_age:")],
        "tests/experiment_1/run/test_resume_key.py",
        "-k",
        "stale",
    ),
    m(
        "O23",
        "rank 0's share overlaps rank 1's",
        [
            (
                "experiment_1/run/distributed.py",
                "num_batches * (rank + 1) // world_size)",
                "num_batches * (rank + 1) // world_size + (rank == 0))",
            )
        ],
        "tests/experiment_1/run/test_distributed.py",
        "-k",
        "shard or single_process_evaluates",
    ),
    m(
        "O24",
        "a sample-list label below −1 accepted",
        [
            (
                "experiment_1/data/shards.py",
                "_is_integer(label) and label >= -1",
                "_is_integer(label) and label >= -2",
            )
        ],
        "tests/whole/test_input_errors.py",
        "-k",
        "sample_list_field",
    ),
    m(
        "O25",
        "16-bit greyscale not rescaled",
        [("experiment_1/data/shards.py", "np.round(values * (255.0 / 65535.0))", "np.round(values)")],
        "tests/experiment_1/data/test_image_decoding.py",
        "-k",
        "sixteen_bit",
    ),
    m(
        "O26",
        "Experiment 1's naive-sum baseline is a mean",
        [(R, "naive_sum = logits.double().sum(dim=1)", "naive_sum = logits.double().mean(dim=1)")],
        "tests/experiment_1/test_reconstruction.py",
    ),
    m(
        "O27",
        "Holm with m − rank + 1",
        [(V, "min(1.0, (m - rank) * p[index])", "min(1.0, (m - rank + 1) * p[index])")],
        "tests/experiment_1/report/test_verdicts.py",
    ),
    m(
        "O28",
        "every batch counted as missing on resume (finished work recomputed)",
        [
            (
                "experiment_1/run/loop.py",
                "[position for position, store in enumerate(stores) if not store.finished(number)]",
                "[position for position, store in enumerate(stores)]",
            )
        ],
        "tests/paper/test_single_pass.py",
        "-k",
        "interrupted",
    ),
    m(
        "O29",
        "a batch stored under its place in this rank's share, not its number",
        [
            (
                "experiment_1/run/loop.py",
                "stores[position].save(number, arrays)",
                "stores[position].save(mine.index(number), arrays)",
            )
        ],
        "tests/paper/test_single_pass.py",
        "-k",
        "interrupted",
    ),
    m(
        "O30",
        "the exact proportion CI ignores its confidence",
        [(S, "proportion_ci(confidence_level=confidence,", "proportion_ci(confidence_level=0.95,")],
        "tests/experiment_1/report/test_stats.py",
    ),
    m(
        "O31",
        "non-finite logits not checked",
        [
            (
                "experiment_1/run/loop.py",
                "                check_finite_logits(logits, batch[\"index\"].tolist(), setup, residual_scale)\n",
                "",
            )
        ],
        "tests/whole/test_non_finite.py",
        "-k",
        "nan_parameter",
    ),
    m(
        "O32",
        "a parquet row read from the row group's first row",
        [
            (
                "experiment_1/data/shards.py",
                "value = self.cached_images[row - int(self.starts[group])]",
                "value = self.cached_images[0]",
            )
        ],
        "tests/experiment_1/data/test_data.py",
        "-k",
        "row_groups",
    ),
    m(
        "O33",
        "the uniform sampler ignores its seed",
        [
            (
                "experiment_1/data/shards.py",
                "    rng = np.random.default_rng(seed)\n    if mode",
                "    rng = np.random.default_rng(0)\n    if mode",
            )
        ],
        "tests/experiment_1/data/test_data.py",
        "-k",
        "sampler",
    ),
    m(
        "O34",
        "a random control seeded without the sample index",
        [
            (
                "experiment_3/topk.py",
                "np.random.SeedSequence([seed, CONTROLS.index(control), draw, sample_index])",
                "np.random.SeedSequence([seed, CONTROLS.index(control), draw])",
            )
        ],
        "tests/experiment_3/test_topk.py",
    ),
    m(
        "O35",
        "the store's key compared on the architecture only",
        [(P, "            if previous != self.key:", '            if previous.get("arch") != self.key.get("arch"):')],
        "tests/experiment_1/run/test_resume_key.py",
        "-k",
        "changing_any",
    ),
    m(
        "O36",
        "scalar projection takes class 0, not the predicted class",
        [
            (
                SP,
                "    predicted = full_logits.argmax(dim=-1)\n    index = predicted",
                "    predicted = full_logits.argmax(dim=-1) * 0\n    index = predicted",
            )
        ],
        "tests/experiment_1/mobius/test_spectrum.py",
    ),
    m(
        "O37",
        "the sampled mask order of the naive engine shifted by one bit",
        [
            (
                E,
                "    bits = torch.arange(num_blocks, device=device)\n",
                "    bits = torch.arange(num_blocks, device=device) + 1\n",
            )
        ],
        "tests/experiment_1/network/test_engines.py",
        "-k",
        "bit_l",
    ),
    m(
        "O38",
        "the null's input rule with the population SD over a network's images (seeds 9 and 43 left out)",
        [("experiment_2/spectrum/verdicts.py", "trunk.std(ddof=1) / trunk.mean()", "trunk.std() / trunk.mean()")],
        "tests/experiment_2/test_spectrum_entries.py",
        "-k",
        "input_dependence or sample_standard_deviation",
    ),
    m(
        "O39",
        "the Möbius–Walsh identity with (+2)^{|S|} instead of (−2)^{|S|}",
        [("experiment_1/mobius/basis_change.py", "_per_order(-2.0, sums, dim)", "_per_order(2.0, sums, dim)")],
        "tests/experiment_1/mobius/test_basis_change.py",
    ),
]


def tracked_files() -> list[str]:
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        check=True,
        capture_output=True,
    ).stdout
    return [name for name in listing.decode().split("\0") if name and (REPO / name).is_file()]


def make_copy(destination: Path) -> None:
    """The working tree (tracked and unignored files) under ``destination``: Python files copied, the rest hard-linked
    (nothing but Python files is ever edited; an edit replaces the file, so a link never carries it back)."""
    for name in tracked_files():
        source, target = REPO / name, destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(".py"):
            shutil.copy2(source, target)
        else:
            try:
                os.link(source, target)
            except OSError:
                shutil.copy2(source, target)


def apply(copy: Path, mutation: Mutation) -> dict[Path, str]:
    """Apply every edit; return the original texts to restore. Raise ``LookupError`` when an edit is stale."""
    originals: dict[Path, str] = {}
    for file, search, replace in mutation.edits:
        path = copy / file
        text = path.read_text() if path.exists() else ""
        count = text.count(search)
        if count != 1:
            for restored, original in originals.items():
                restored.write_text(original)
            raise LookupError(f"{file}: the search text occurs {count} times (need exactly 1): {search.strip()[:70]!r}")
        originals.setdefault(path, text)
        path.write_text(text.replace(search, replace))
    return originals


def run_tests(copy: Path, tests: tuple[str, ...]) -> tuple[int, str]:
    environment = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", "MOE_MUTATION_RUN": "1"}
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--no-header", *tests]
    try:
        done = subprocess.run(
            command, cwd=copy, env=environment, capture_output=True, text=True, timeout=TIMEOUT_SECONDS
        )
    except subprocess.TimeoutExpired:
        return -1, "timeout"
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return done.returncode, (lines[-1] if lines else done.stderr.strip()[-200:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ids", nargs="*", help="mutation ids to run (default: all)")
    parser.add_argument("--list", action="store_true", help="print the mutations and their targets, run nothing")
    parser.add_argument(
        "--baseline", action="store_true", help="run every target on the unmutated copy (each must pass)"
    )
    parser.add_argument(
        "--stale",
        action="store_true",
        help="only check that every edit's search text occurs exactly once (run nothing)",
    )
    parser.add_argument("--root", type=Path, default=REPO, help="the tree --stale reads (default: this checkout)")
    args = parser.parse_args(argv)
    known = {mutation.id: mutation for mutation in MUTATIONS}
    unknown = [name for name in args.ids if name not in known]
    if unknown:
        parser.error(f"unknown mutation id(s): {', '.join(unknown)}")
    chosen = [known[name] for name in args.ids] if args.ids else MUTATIONS
    if args.list:
        for mutation in chosen:
            print(f"{mutation.id:4} {mutation.what}  [{' '.join(mutation.tests)}]")
        return 0
    if args.stale:
        stale = [
            (mutation.id, file, (args.root / file).read_text().count(search) if (args.root / file).exists() else 0)
            for mutation in chosen
            for file, search, _ in mutation.edits
        ]
        stale = [entry for entry in stale if entry[2] != 1]
        for name, file, count in stale:
            print(f"{name:4} STALE     {file}: the search text occurs {count} times (need exactly 1)")
        print(f"{len(chosen)} mutations: {len({name for name, _, _ in stale})} stale")
        return 1 if stale else 0
    survivors, problems = [], []
    with tempfile.TemporaryDirectory(prefix="mutation-") as folder:
        copy = Path(folder) / "repo"
        make_copy(copy)
        if args.baseline:
            for tests in sorted({mutation.tests for mutation in chosen}):
                code, last = run_tests(copy, tests)
                print(f"baseline {'ok' if code == 0 else 'FAILS'}: {' '.join(tests)} — {last}", flush=True)
                if code != 0:
                    problems.append(" ".join(tests))
            return 1 if problems else 0
        for mutation in chosen:
            started = time.monotonic()
            try:
                originals = apply(copy, mutation)
            except LookupError as error:
                print(f"{mutation.id:4} STALE     {error}", flush=True)
                problems.append(mutation.id)
                continue
            try:
                code, last = run_tests(copy, mutation.tests)
            finally:
                for path, text in originals.items():
                    path.write_text(text)
            verdict = {0: "SURVIVED", 1: "caught"}.get(code, f"ERROR({code})")
            print(
                f"{mutation.id:4} {verdict:9} {time.monotonic() - started:5.1f} s  {mutation.what} — {last}", flush=True
            )
            if code == 0:
                survivors.append(mutation)
            elif code != 1:
                problems.append(mutation.id)
    print(
        f"\n{len(chosen)} mutations: {len(chosen) - len(survivors) - len(problems)} caught, {len(survivors)} survived, {len(problems)} stale or errored"
    )
    for mutation in survivors:
        print(f"survivor {mutation.id}: {mutation.what} (ran {' '.join(mutation.tests)})")
    return 1 if survivors or problems else 0


if __name__ == "__main__":
    sys.exit(main())
