"""Four replicas on one pgvector database for a bounded time, one killed and started again:
nothing acknowledged is lost, nothing forgotten is served again (bench/soak_pg.py, 15 s)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("psycopg")

SOAK = Path(__file__).resolve().parents[2] / "bench" / "soak_pg.py"


def _soak() -> Any:
    spec = importlib.util.spec_from_file_location("bench_soak_pg", SOAK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.soak


def test_four_replicas_lose_nothing_acknowledged_and_serve_nothing_forgotten(
    pgvector_server: Any,
) -> None:
    result = _soak()(
        pgvector_server.new_database("eoc_soak_test"), replicas=4, seconds=15, embedder="minilm"
    )
    assert result["writes"] >= 20 and result["forgets"] >= 5 and result["lookups"] >= 20
    assert result["acknowledged"] >= 20
    assert result["lost"] == 0
    assert result["resurrected"] == 0
    assert result["cache_resurrected"] == 0
    assert result["lookup_p99_ms"] < 5_000
