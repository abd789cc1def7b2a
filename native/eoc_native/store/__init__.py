"""Stores shared by several machines (PostgreSQL), next to the core's SQLite (eoc.store.sqlite)."""
