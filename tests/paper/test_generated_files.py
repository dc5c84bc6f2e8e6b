"""The committed generated files are up to date: ``paper.make_tables`` run on a copy of the repository rewrites
``tables.md``, the README's generated blocks and ``paper/generated/`` from the committed summaries, and every file it
writes must be byte-identical to the committed one (and it writes no file that is not committed).

Written against the entry point only (``main(["--root", copy])``), not against a list of outputs, so it keeps
working as the generator gains files; the copy holds every tracked file (files above 1 MB — the sample shards — as
hard links, which the generator never writes)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from paper.make_tables import main as make_tables

REPO = Path(__file__).resolve().parents[2]
LINK_ABOVE_BYTES = 1 << 20


def copy_tracked(destination: Path) -> dict[str, tuple[int, int]]:
    """Every tracked file under ``destination``; returns each one's (inode, mtime_ns) as copied."""
    names = (
        subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True).stdout.decode().split("\0")
    )
    stamps = {}
    for name in filter(None, names):
        source, target = REPO / name, destination / name
        if not source.is_file():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.stat().st_size > LINK_ABOVE_BYTES:
            os.link(source, target)
        else:
            shutil.copy2(source, target)
        stamps[name] = (target.stat().st_ino, target.stat().st_mtime_ns)
    return stamps


def test_tables_readme_blocks_and_paper_inputs_regenerate_byte_for_byte(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    stamps = copy_tracked(root)
    make_tables(["--root", str(root)])
    written = {
        path.relative_to(root).as_posix()
        for path in root.rglob("*")
        if path.is_file()
        and (
            path.relative_to(root).as_posix() not in stamps
            or (path.stat().st_ino, path.stat().st_mtime_ns) != stamps[path.relative_to(root).as_posix()]
        )
    }
    assert "tables.md" in written and any(name.startswith("paper/generated/") for name in written)
    new = sorted(name for name in written if name not in stamps)
    assert not new, f"paper.make_tables writes files that are not committed: {new}; commit them"
    stale = sorted(name for name in written if (root / name).read_bytes() != (REPO / name).read_bytes())
    assert not stale, (
        f"committed generated files differ from what the committed summaries give: {stale}; run `python -m paper.make_tables` and commit"
    )
