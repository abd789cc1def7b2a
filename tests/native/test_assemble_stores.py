"""One assembly, every store and entry point: the shared question table through the Python API
on PostgreSQL and through ``eoc serve`` on memory, SQLite and PostgreSQL gets the answers the
in-memory cascade gives. PostgreSQL's graph once lacked the pack's vocabulary: 6 of 18 graph
questions tried answered differently there (tests/assembly_questions.py VOCABULARY_ONLY)."""

from __future__ import annotations

import io
import itertools
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("psycopg")
pytest.importorskip("uvicorn")

from eoc import Cascade
from eoc.assemble import assemble
from eoc.cli.main import build_parser
from eoc.stages.neural import NoModelBackend
from eoc_native.serve.run import build
from tests.assembly_questions import QUESTIONS, VOCABULARY_ONLY
from tests.native.serving import serving

_names = itertools.count()


@pytest.fixture(scope="module")
def in_memory() -> dict[str, str]:
    with Cascade(assemble(NoModelBackend("no model")).stages) as c:
        return {q: c.resolve(q).payload for q in QUESTIONS}


def test_postgresql_answers_as_memory_does(in_memory: dict[str, str], postgres: Any) -> None:
    url = postgres.new_database(f"eoc_assembly_{next(_names)}")
    built = assemble(NoModelBackend("no model"), store=url)
    with Cascade(built.stages) as c:
        got = {q: c.resolve(q) for q in QUESTIONS}
    assert {q: r.payload for q, r in got.items()} == in_memory
    assert all(got[q].stage.value == "graph" for q in VOCABULARY_ONLY)
    assert built.health() == "" and built.pending() == 0


@pytest.mark.parametrize("where", ["memory", "sqlite", "postgresql"])
def test_eoc_serve_answers_as_the_api_does(
    where: str,
    in_memory: dict[str, str],
    tmp_path: Path,
    postgres: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EOC_MODEL", "none")
    store = {
        "memory": [],
        "sqlite": ["--store", str(tmp_path / "serve.db")],
        "postgresql": ["--store", postgres.new_database(f"eoc_assembly_{next(_names)}")],
    }[where]
    args = build_parser("serve").parse_args(["serve", *store])
    app = build(args, io.StringIO())
    try:
        with serving(app) as url, httpx.Client(base_url=url, timeout=30) as http:
            for question in QUESTIONS:
                r = http.post(
                    "/v1/chat/completions",
                    json={
                        "model": app.config.model_id,
                        "messages": [{"role": "user", "content": question}],
                    },
                )
                assert r.status_code == 200, r.text
                content = r.json()["choices"][0]["message"]["content"]
                assert content == in_memory[question], question
    finally:
        app.cascade.close()
