"""Native tests need the native extra (and are left out of the suite inside Pyodide)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("numpy", reason='the native extra is not installed: pip install ".[native]"')

from tests.native.models import CpuTimeCounter


@pytest.fixture
def cpu_time_counter() -> CpuTimeCounter:
    return CpuTimeCounter()


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """One throwaway PostgreSQL server for the whole session (tests make their own databases)."""
    pytest.importorskip("psycopg")
    from tests.native.pg import running_postgres

    with running_postgres() as server:
        yield server
