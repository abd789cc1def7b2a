"""Debian's Chromium for the browser tests and benchmarks (never `playwright install`)."""

from __future__ import annotations

import os

CHROMIUM = os.environ.get("EOC_CHROMIUM", "/usr/lib/chromium/chromium")
# As root, on a machine with no outside network: no sandbox, no GPU, and no background fetches.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

__all__ = ["CHROMIUM", "CHROMIUM_ARGS"]
