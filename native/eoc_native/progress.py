"""The autotuner's progress on standard error, drawn by ``tqdm`` (a redrawn bar on a terminal;
elsewhere tqdm's plain updates)."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from eoc_native import require


class ProgressBar:
    """Progress over ``total_steps`` steps, each reported as a fraction done (0..1)."""

    def __init__(self, total_steps: int = 1, stream: TextIO | None = None) -> None:
        tqdm: Any = require("tqdm", why="the progress bar").tqdm
        self.total = max(total_steps, 1)
        self.done = 0
        self._bar = tqdm(
            total=float(self.total),
            file=stream if stream is not None else sys.stderr,
            bar_format="{percentage:3.0f}%|{bar}| {elapsed} {desc}",
            leave=True,
        )

    def update(self, what: str, fraction: float) -> None:
        """Progress within the current step (0..1) and what is happening."""
        self._bar.n = min(self.done + max(0.0, min(fraction, 1.0)), float(self.total))
        self._bar.set_description_str(what, refresh=False)
        self._bar.refresh()
        if fraction >= 1.0:
            self.done += 1
            if self.done >= self.total:
                self._bar.close()


__all__ = ["ProgressBar"]
