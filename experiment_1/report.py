"""Small helpers that turn summary JSON into Markdown for REPORT.md files and tables.md."""
from __future__ import annotations

from typing import Any, Sequence


def format_number(value: float | int | None, digits: int = 3) -> str:
    """Compact human formatting: scientific for very small/large magnitudes, else ``digits`` significant."""
    if value is None:
        return "—"
    value = float(value)
    if value != value:
        return "n/a"
    if value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e5):
        return f"{value:.{max(digits - 1, 1)}e}"
    return f"{value:.{digits}g}"


def format_percent(value: float | None, digits: int = 1) -> str:
    """``0.123`` → ``12.3 %``."""
    if value is None or value != value:
        return "n/a"
    return f"{100 * value:.{digits}f} %"


def format_stat(stat: dict[str, Any], percent: bool = False, digits: int = 3) -> str:
    """``mean [ci_low, ci_high]`` from a :func:`experiment_1.stats.bootstrap_mean_ci` dict."""
    fmt = format_percent if percent else (lambda value: format_number(value, digits))
    return f"{fmt(stat['mean'])} [{fmt(stat['ci_low'])}, {fmt(stat['ci_high'])}]"


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub-flavoured Markdown table."""
    lines = ["| " + " | ".join(str(h) for h in headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def configuration_section(config: dict[str, Any]) -> str:
    """The provenance block of a REPORT: model, data, engine, versions, commit."""
    keys = ["arch", "weights", "num_blocks", "sample_index", "num_images", "engine", "dtype", "mobius_dtype", "batch_size", "mask_chunk", "seed", "device_name", "git_commit"]
    rows = [(key, f"`{config[key]}`") for key in keys if key in config]
    versions = config.get("versions", {})
    if versions:
        rows.append(("versions", ", ".join(f"{name} {version}" for name, version in sorted(versions.items()))))
    return markdown_table(["setting", "value"], rows)
