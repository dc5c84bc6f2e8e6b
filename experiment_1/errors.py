"""User-facing errors: one line naming the file (or flag) at fault and the fix."""
from __future__ import annotations

import sys
from typing import Callable

from tqdm import tqdm


class PipelineError(Exception):
    """An error caused by the user's input; printed as one line, without a traceback."""


def _close_progress_bars() -> None:
    """Finish every open tqdm bar's line, so that an error starts on a line of its own."""
    for bar in list(getattr(tqdm, "_instances", ())):  # tqdm keeps its live bars here
        bar.close()


def run_cli(main: Callable[[list[str] | None], None], argv: list[str] | None = None) -> None:
    """Run a step's ``main`` and turn a :class:`PipelineError` into ``error: …`` and exit status 2."""
    try:
        main(argv)
    except PipelineError as error:
        _close_progress_bars()
        message = " ".join(line.strip() for line in str(error).splitlines())  # causes quoted from libraries may span lines
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(2) from None
