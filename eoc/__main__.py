"""``python -m eoc`` runs the CLI, as the ``eoc`` command does."""

from eoc.cli.main import run

run()
