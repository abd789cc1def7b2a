"""The ``eoc`` command line."""

from eoc.cli.main import main

__all__ = ["main"]
