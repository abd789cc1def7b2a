"""Native tests need the native extra (and are left out of the suite inside Pyodide)."""

from __future__ import annotations

import pytest

pytest.importorskip("numpy", reason='the native extra is not installed: pip install "eoc[native]"')

from tests.native.models import CpuTimeCounter


@pytest.fixture
def cpu_time_counter() -> CpuTimeCounter:
    return CpuTimeCounter()
