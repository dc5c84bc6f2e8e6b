"""One name for the original study (lylybig/resnet-moe): no committed REPORT, tables.md, README block or generated
paper file calls it "the seed" — the word seed stays only for a random seed ("seed 0", `--seed`, seeded draws)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# "seed" meaning the original study, in each form the renderers once wrote
ORIGINAL_AS_SEED = re.compile(
    r"\b[Tt]he seed\b(?!\s*(?:\d|=|of the draw))|\bseed's\b|^Seed:|\(seed: |\bseed (?:README|paper|K)\b|\| quantity \| seed\b",
    re.M,
)


def committed(pattern: str) -> list[Path]:
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(
        ["git", "ls-files", pattern], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    return [REPO / name for name in listed if (REPO / name).is_file()]


def rendered_files() -> list[Path]:
    return [*committed("*REPORT.md"), *committed("tables.md"), *committed("paper/generated/*.tex")]


def test_the_pattern_finds_each_old_form_and_spares_random_seeds() -> None:
    for old in (
        "## Beside the seed",
        "Seed: seed README (lylybig/resnet-moe)",
        "as far as the seed reports",
        "the seed's K",
        "| quantity | seed | ours |",
        "| quantity | seed / paper | ours |",
        "κ^v (seed: resnet18)",
        "seed K = 64 of 256",
    ):
        assert ORIGINAL_AS_SEED.search(old), old
    for random_seed in (
        "| seed | `0` |",
        "(`random`, seed 0)",
        "seeded by (seed, control, draw, image)",
        "`num_random_seeds` times",
        "1000 resamples of the images, seed 0",
        "\\newcommand{\\SeedExpOneMobiusErr}",
    ):
        assert not ORIGINAL_AS_SEED.search(random_seed), random_seed


def test_no_committed_report_or_table_calls_the_original_study_seed() -> None:
    files = rendered_files()
    assert len(files) > 20
    found = []
    for path in files:
        text = path.read_text()
        for match in ORIGINAL_AS_SEED.finditer(text):
            line = text[text.rfind("\n", 0, match.start()) + 1 : text.find("\n", match.end())]
            found.append(
                f"{path.relative_to(REPO)}: …{line[max(0, match.start() - text.rfind(chr(10), 0, match.start()) - 60) :][:140]}…"
            )
    assert not found, (
        f"{len(found)} place(s) call the original study 'seed' (re-render with `make reports`):\n"
        + "\n".join(found[:10])
    )


def test_the_readme_blocks_use_the_one_name() -> None:
    text = (REPO / "README.md").read_text()
    block = text[text.index("<!-- generated:headline") : text.index("<!-- /generated:headline -->")]
    assert not ORIGINAL_AS_SEED.search(block) and "the original study" in block
