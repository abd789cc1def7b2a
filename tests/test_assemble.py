"""One assembly for every entry point: the same questions get the same answers from the Python
API and ``eoc query``, in memory and in a SQLite store (PostgreSQL and the server:
tests/native/test_assemble_stores.py)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from eoc import Cascade
from eoc.assemble import assemble, open_store
from eoc.cli.main import main
from eoc.errors import StoreUnusable
from eoc.stages.neural import NoModelBackend
from eoc.store import CacheStore, KVStore
from tests.assembly_questions import CLI_SAMPLE, QUESTIONS
from tests.graph_questions import ANSWERED


def answers(store: str | None) -> dict[str, tuple[str, str]]:
    """question -> (stage, payload) through the Python API."""
    with Cascade(assemble(NoModelBackend("no model"), store=store).stages) as c:
        return {q: (r.stage.value, r.payload) for q in QUESTIONS for r in [c.resolve(q)]}


@pytest.fixture(scope="module")
def in_memory() -> dict[str, tuple[str, str]]:
    return answers(None)


def test_in_memory_every_question_is_answered_by_a_cheap_tier(in_memory: dict) -> None:
    assert all(stage != "neural" for stage, _ in in_memory.values()), in_memory
    assert {q: p for q, (_, p) in in_memory.items() if q in dict(ANSWERED)} == dict(ANSWERED)


def test_a_sqlite_store_answers_as_memory_does_first_and_after_a_restart(
    in_memory: dict, tmp_path: Path
) -> None:
    store = str(tmp_path / "eoc.db")
    first = answers(store)
    assert {q: p for q, (_, p) in first.items()} == {q: p for q, (_, p) in in_memory.items()}
    again = answers(store)  # every answer now remembered: the same text from the cache
    assert {q: p for q, (_, p) in again.items()} == {q: p for q, (_, p) in in_memory.items()}
    assert {s for s, _ in again.values()} == {"cache"}


@pytest.mark.parametrize("where", ["memory", "sqlite"])
def test_eoc_query_answers_as_the_api_does(
    where: str, in_memory: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EOC_MODEL", "none")
    store = ["--store", str(tmp_path / "cli.db")] if where == "sqlite" else []
    for question in CLI_SAMPLE:
        out = io.StringIO()
        assert main(["query", "--json", question, *store], out) == 0
        doc = json.loads(out.getvalue())
        assert doc["payload"] == in_memory[question][1], question


def test_a_store_is_chosen_by_its_scheme_and_an_unknown_one_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreUnusable, match="no store takes nosuch://"):
        open_store("nosuch://host/db")
    with pytest.raises(StoreUnusable, match="empty"):
        open_store("  ")
    parts = open_store(f"sqlite://{tmp_path / 'x.db'}")
    try:
        assert isinstance(parts.cache, CacheStore) and isinstance(parts.kv, KVStore)
        assert parts.triples.rows() == [] and (tmp_path / "x.db").exists()
    finally:
        parts.close()
