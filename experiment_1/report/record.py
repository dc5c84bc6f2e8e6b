"""What paper/ needs to know of one experiment, declared once in that experiment's folder (``record.py``).

An :class:`ExperimentRecord` names, for one experiment (or sub-experiment such as 3A/3B), the value of its
summaries' ``experiment`` key, its title, the glob of every run's summary, the paper's run (the summary the
prose, claims table and verdict appendix read), the keys of its tables in ``paper/make_tables.py``, its
figures, the evaluation step whose pass feeds ``python -m paper.single_pass`` and the function that rebuilds a summary from its
per-image arrays (``python -m paper.resummarize``). ``paper/experiments.py`` collects the records; every tool of
``paper/`` iterates them instead of restating the list.

Code is named as ``"module:attribute"`` and imported only when used (:func:`experiment_1.report.rules.resolve`), so reading a record
costs no torch import; the names are this repository's modules, never read from a results file.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExperimentRecord:
    """One experiment as ``paper/`` sees it. Paths and globs are relative to the repository root."""

    experiment: int | str
    """The ``experiment`` value its summaries carry (1, 2, "3A/3B", "3C", …)."""
    title: str
    """How the paper and tables.md name it, e.g. "Experiment 2 — interaction-order spectrum"."""
    macro: str
    """The stem of its LaTeX macros (letters only: tests/paper/test_records.py), e.g. "ExpTwo" → ``\\VerdictsExpTwo``."""
    summaries: str
    """Glob of every run's summary file (the file holding its numbers and ``verdicts`` block)."""
    primary: str
    """The paper's run: a path, or a glob when each of several runs is reported (3C: one per network)."""
    tables: tuple[str, ...] = ()
    """Keys of its table functions in paper/make_tables.py (each writes paper/generated/table_<key>.tex)."""
    figures: tuple[tuple[str, str], ...] = ()
    """(macro name, PDF path) of each figure the paper shows."""
    single_pass: str | None = None
    """``"module:attribute"`` of its evaluation step (:class:`experiment_1.run.run_config.Command`: its flags, and its
    :class:`experiment_1.run.loop.ExperimentPass` as the work), if one pass feeds it."""
    rebuild: str | None = None
    """``"module:function"`` taking ``(summary, arrays, config, seed)`` and returning the summary rebuilt from
    its per-image arrays, if it can be rebuilt."""
    rebuild_keys: tuple[str, ...] = ()
    """Dotted keys the rebuild reads from the old summary beyond its config."""

    @property
    def primary_is_glob(self) -> bool:
        return any(char in self.primary for char in "*?[")
