"""The ``eoc`` command line (see :mod:`eoc.cli.main`)."""
