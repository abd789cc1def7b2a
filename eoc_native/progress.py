"""A small progress bar on standard error (a redrawn line on a terminal, plain lines otherwise)."""

from __future__ import annotations

import sys
from typing import TextIO


class ProgressBar:
    def __init__(self, total_steps: int = 1, stream: TextIO | None = None, width: int = 28) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = max(total_steps, 1)
        self.done = 0
        self.width = width
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def update(self, what: str, fraction: float) -> None:
        """Progress within the current step (0..1) and what is happening."""
        overall = min((self.done + max(0.0, min(fraction, 1.0))) / self.total, 1.0)
        filled = int(overall * self.width)
        line = f"[{'#' * filled}{'.' * (self.width - filled)}] {overall:4.0%} {what}"
        if self.tty:
            self.stream.write("\r\x1b[2K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        if fraction >= 1.0:
            self.done += 1
            if self.tty and self.done >= self.total:
                self.stream.write("\n")


__all__ = ["ProgressBar"]
