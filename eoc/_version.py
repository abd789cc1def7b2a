"""eoc's version, in a module of its own so that receipts can bind it without an import cycle."""

__version__ = "0.2.0"
