"""Four replicas on one pgvector database for a bounded time, one killed and started again:
nothing acknowledged is lost, nothing forgotten is served again (bench/soak_pg.py, 15 s)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.native.benches import bench_module

pytest.importorskip("psycopg")


def _soak() -> Any:
    return bench_module("soak_pg").soak


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
