"""A licence file and a citation block: LICENSE (MIT), CITATION.cff whose version and licence agree with pyproject.toml
and which cites the original study; the README points at both."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_the_licence_file_is_mit() -> None:
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("MIT License") and "Permission is hereby granted, free of charge" in text


def test_citation_cff_is_complete_and_agrees_with_pyproject() -> None:
    yaml = pytest.importorskip("yaml")
    citation = yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))
    assert citation["cff-version"] == "1.2.0" and citation["message"] and citation["title"] and citation["authors"]
    pyproject = (REPO / "pyproject.toml").read_text()
    assert f'version = "{citation["version"]}"' in pyproject
    assert citation["license"] == "MIT"
    assert any(reference.get("url") == "https://github.com/lylybig/resnet-moe" for reference in citation["references"])


def test_the_readme_names_the_licence_and_the_citation() -> None:
    readme = (REPO / "README.md").read_text()
    assert re.search(r"MIT \(\[LICENSE\]\(LICENSE\)\)", readme) and "[CITATION.cff](CITATION.cff)" in readme
