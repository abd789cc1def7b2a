"""The Oxigraph store: the same answers as the core's store, files loaded whole or not at all,
and `eoc graph load` filling the store `eoc query` answers from."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyoxigraph")

from eoc.cli.main import main
from eoc.errors import FactFileError, InvalidText, StoreUnusable
from eoc.knowledge import triples, vocabulary
from eoc.query import Query
from eoc.stages.graph import GraphStage
from eoc_native.graph.oxigraph import OxigraphStore
from tests.graph_questions import ANSWERED, PASSED

NT = (
    '<http://example.org/Hamlet> <http://example.org/author> "William Shakespeare" .\n'
    '<http://example.org/Macbeth> <http://example.org/author> "William Shakespeare" .\n'
    "<http://example.org/Hamlet> <http://example.org/set_in> <http://example.org/Denmark> .\n"
)
TTL = (
    "@prefix ex: <http://example.org/> .\n"
    'ex:Hamlet ex:author "William Shakespeare" ; ex:set_in ex:Denmark .\n'
    'ex:Macbeth ex:author "William Shakespeare" .\n'
)
NQ = (
    '<http://example.org/Hamlet> <http://example.org/author> "William Shakespeare" '
    "<http://example.org/plays> .\n"
    '<http://example.org/Macbeth> <http://example.org/author> "William Shakespeare" .\n'
    "<http://example.org/Hamlet> <http://example.org/set_in> <http://example.org/Denmark> "
    "<http://example.org/places> .\n"
)


@pytest.fixture(scope="module")
def pack_store(tmp_path_factory: pytest.TempPathFactory) -> OxigraphStore:
    store = OxigraphStore(tmp_path_factory.mktemp("oxi") / "graph")
    assert store.add_all(triples()) == len(triples())
    return store


def test_oxigraph_answers_the_shared_table_as_the_core_store_does(
    pack_store: OxigraphStore,
) -> None:
    graph = GraphStage(pack_store, vocabulary=vocabulary())
    for question, answer in ANSWERED:
        hit = graph.lookup(Query(question))
        assert hit is not None and hit.payload == answer, question
    for question in PASSED:
        assert graph.lookup(Query(question)) is None, question


def test_the_store_reads_labels_as_the_core_does(pack_store: OxigraphStore) -> None:
    assert pack_store.objects("FRANCE", "Capital") == ["Paris"]
    assert pack_store.subjects("symbol", "au") == ["Gold"]
    assert "capital" in pack_store.predicates() and len(pack_store) == len(triples())
    assert pack_store.add("France", "capital", "Paris") is False
    with pytest.raises(InvalidText):
        pack_store.add("", "capital", "x")


@pytest.mark.parametrize(("name", "text"), [("a.nt", NT), ("a.ttl", TTL), ("a.nq", NQ)])
def test_each_rdf_format_loads_and_answers(tmp_path: Path, name: str, text: str) -> None:
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    store = OxigraphStore()
    assert store.predicates() == []
    assert store.load(f) == 3
    assert store.predicates() == ["author", "set in"]
    graph = GraphStage(store)
    assert graph.lookup(Query("what is the author of Hamlet")).payload == "William Shakespeare"  # type: ignore[union-attr]
    assert graph.lookup(Query("Hamlet's set in")).payload == "Denmark"  # type: ignore[union-attr]
    hit = graph.lookup(Query("William Shakespeare is the author of which thing"))
    assert hit is not None and hit.payload == "Hamlet, Macbeth"


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        ("bad.nt", NT + "<http://example.org/x> <http://example.org/y> .\n", "not valid RDF"),
        ("bad.ttl", TTL + "ex:x ex:y", "not valid RDF"),
        ("empty.nt", NT + '<http://example.org/x> <http://example.org/y> "" .\n', "empty"),
        ("big.nt", NT + f'<http://e.org/x> <http://e.org/y> "{"z" * 70_000}" .\n', "over"),
        ("facts.csv", "a,b,c\n", "unknown fact file type"),
    ],
)
def test_a_bad_file_is_refused_whole(tmp_path: Path, name: str, text: str, why: str) -> None:
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    store = OxigraphStore()
    store.add("Kept", "is", "here")
    with pytest.raises(FactFileError, match=why):
        store.load(f)
    assert len(store) == 1  # nothing of the bad file was stored


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FactFileError, match="no such file"):
        OxigraphStore().load(tmp_path / "none.nt")


def test_the_store_persists_and_a_second_writer_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "graph"
    first = OxigraphStore(path)
    first.add("Hamlet", "author", "Shakespeare")
    with pytest.raises(StoreUnusable, match="read-only"):
        OxigraphStore(path)
    reader = OxigraphStore(path, read_only=True)
    assert reader.objects("hamlet", "author") == ["Shakespeare"]
    first.close()
    reopened = OxigraphStore(path)
    assert reopened.objects("hamlet", "author") == ["Shakespeare"]


def test_a_folder_that_is_not_a_store_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "notastore"
    bad.write_text("x")
    with pytest.raises(StoreUnusable):
        OxigraphStore(bad)


def test_a_large_file_streams_in(tmp_path: Path) -> None:
    f = tmp_path / "many.nt"
    with f.open("w", encoding="utf-8") as out:
        for i in range(50_000):
            out.write(f'<http://e.org/thing{i}> <http://e.org/rel{i % 7}> "value {i}" .\n')
    store = OxigraphStore(tmp_path / "graph")
    seen: list[int] = []
    assert store.load(f, progress=seen.append) == 50_000
    assert seen and seen[-1] == 50_000
    assert store.objects("thing4243", "rel1") == ["value 4243"]
    assert store.subjects("rel1", "value 4243") == ["thing4243"]


def _cli(*argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "eoc", *argv],
        capture_output=True,
        text=True,
        env={**os.environ, **env, "EOC_MODEL": "none"},
        timeout=120,
        check=False,
    )


def test_graph_load_fills_the_store_eoc_query_answers_from(tmp_path: Path) -> None:
    f = tmp_path / "plays.nt"
    f.write_text(NT, encoding="utf-8")
    env = {"EOC_CACHE_DIR": str(tmp_path / "cache"), "EOC_GRAPH_STORE": ""}
    before = _cli("query", "--json", "what is the author of Hamlet", env=env)
    assert json.loads(before.stdout)["stage"] == "neural"
    loaded = _cli("graph", "load", "--json", str(f), env=env)
    assert loaded.returncode == 0, loaded.stderr
    doc = json.loads(loaded.stdout)
    assert doc["added"] == 3 and doc["triples"] == len(triples()) + 3
    after = json.loads(_cli("query", "--json", "what is the author of Hamlet", env=env).stdout)
    assert (after["stage"], after["payload"]) == ("graph", "William Shakespeare")
    pack = json.loads(_cli("query", "--json", "capital of France", env=env).stdout)
    assert pack["payload"] == "Paris"  # the store was made with the pack


def test_a_graph_store_named_but_missing_is_an_error(tmp_path: Path) -> None:
    r = _cli("query", "capital of France", env={"EOC_GRAPH_STORE": str(tmp_path / "none")})
    assert r.returncode != 0 and "eoc graph load" in r.stderr


def test_graph_load_refuses_a_bad_file_with_its_reason(tmp_path: Path) -> None:
    f = tmp_path / "bad.nt"
    f.write_text("<http://e.org/x> <http://e.org/y> .\n", encoding="utf-8")
    out = io.StringIO()
    code = main(["graph", "load", "--store", str(tmp_path / "g"), str(f)], out=out)
    assert code != 0
