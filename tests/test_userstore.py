"""``eoc query`` remembers in a per-user store by default (eoc/cli/userstore.py): where it is
(XDG), ``--no-store`` and ``--store``, and what happens when it cannot be used."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import stat
from contextlib import closing
from pathlib import Path

import pytest

from eoc.assemble import assemble
from eoc.cli import userstore
from eoc.cli.main import main
from eoc.cli.meter import describe_answer_store
from eoc.cli.userstore import choose_store, user_store_path
from tests.helpers import IN_BROWSER

pytestmark = pytest.mark.skipif(IN_BROWSER, reason="the browser keeps no per-user store")


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def stage_of(*argv: str) -> str:
    code, text = run("query", "--json", *argv)
    assert code == 0, text
    return str(json.loads(text)["stage"])


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return home


def test_the_store_is_under_xdg_data_home_when_it_is_absolute() -> None:
    assert user_store_path({"XDG_DATA_HOME": "/x/data", "HOME": "/home/u"}) == (
        Path("/x/data/eoc/store.sqlite"),
        "",
    )


@pytest.mark.parametrize("xdg", ["", "relative/data"])
def test_an_empty_or_relative_xdg_data_home_is_ignored_for_home(xdg: str) -> None:
    path, why = user_store_path({"XDG_DATA_HOME": xdg, "HOME": "/home/u"})
    assert path == Path("/home/u/.local/share/eoc/store.sqlite") and why == ""


@pytest.mark.parametrize("env", [{}, {"HOME": ""}, {"HOME": "relative"}])
def test_without_an_absolute_home_there_is_no_per_user_store(env: dict[str, str]) -> None:
    path, why = user_store_path(env)
    assert path is None and "HOME" in why


def test_the_browser_has_no_per_user_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(userstore, "IN_PYODIDE", True)
    assert user_store_path({"XDG_DATA_HOME": "/x", "HOME": "/h"})[0] is None
    assert choose_store(None, False, {"HOME": "/h"}) == userstore.StoreChoice(None)  # no note


def test_eoc_query_remembers_by_default_across_runs_in_a_private_folder(data_home: Path) -> None:
    assert stage_of("what is 2+2") == "kv"
    store = data_home / "eoc" / "store.sqlite"
    assert store.is_file()
    assert stat.S_IMODE(os.stat(store.parent).st_mode) == 0o700
    assert stage_of("what is 2+2") == "cache"  # another run: the store remembered it


def test_the_per_user_store_keeps_answers_not_the_pack_or_the_graph(data_home: Path) -> None:
    """The graph answers from the store eoc graph load makes (tests/native/test_oxigraph.py),
    or the pack, and kv's pack pairs are deferred in memory (a first exact hit embeds nothing:
    tests/native/test_semantic.py), as without a store; the per-user file holds no copy."""
    assert stage_of("what is the capital of Japan") == "graph"
    with closing(sqlite3.connect(data_home / "eoc" / "store.sqlite")) as conn:
        assert conn.execute("SELECT count(*) FROM triples").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM kv").fetchone()[0] == 0  # the pack stays out
        assert conn.execute("SELECT count(*) FROM cache").fetchone()[0] >= 1
    assert stage_of("what is the capital of Japan") == "cache"


def test_no_store_remembers_nothing_and_makes_no_folder(data_home: Path) -> None:
    assert stage_of("--no-store", "what is 2+2") == "kv"
    assert stage_of("--no-store", "what is 2+2") == "kv"
    assert not data_home.exists()


def test_store_picks_another_store_and_the_per_user_one_is_not_made(
    data_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other.sqlite"
    assert stage_of("--store", str(other), "what is 2+2") == "kv"
    assert stage_of("--store", str(other), "what is 2+2") == "cache"
    monkeypatch.setenv("EOC_STORE", str(tmp_path / "env.sqlite"))
    assert stage_of("what is 2+2") == "kv"
    assert (tmp_path / "env.sqlite").is_file()
    assert stage_of("--no-store", "what is 2+2") == "kv"  # the flag beats $EOC_STORE
    assert not data_home.exists()


def test_no_store_and_store_together_is_a_usage_error(data_home: Path) -> None:
    assert run("query", "--no-store", "--store", "x.sqlite", "what is 2+2")[0] == 2


def test_a_folder_that_cannot_be_made_answers_from_memory_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("XDG_DATA_HOME", str(blocker))
    assert stage_of("what is 2+2") == "kv"
    err = capsys.readouterr().err
    assert err.count("eoc query: note: answers are kept in memory only") == 1
    assert str(blocker / "eoc") in err and "--no-store" in err
    assert stage_of("what is 2+2") == "kv"  # nothing was remembered
    assert blocker.read_text() == "not a folder"


def test_a_store_path_that_cannot_be_opened_answers_from_memory_and_says_so(
    data_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (data_home / "eoc" / "store.sqlite").mkdir(parents=True)  # a folder where the file goes
    assert stage_of("what is 2+2") == "kv"
    err = capsys.readouterr().err
    assert "answers are kept in memory only" in err and "not a regular file" in err


def test_no_home_at_all_answers_from_memory_and_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.delenv("HOME", raising=False)
    assert stage_of("what is 2+2") == "kv"
    assert "neither XDG_DATA_HOME nor HOME" in capsys.readouterr().err
    assert choose_store(None, False, {}).location is None


def test_a_damaged_per_user_store_is_an_error_and_is_left_as_it_was(
    data_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = data_home / "eoc" / "store.sqlite"
    store.parent.mkdir(parents=True)
    store.write_bytes(b"not eoc's store, kept as it is")
    code, _ = run("query", "what is 2+2")
    assert code == 1
    err = capsys.readouterr().err
    assert "StoreVersionError" in err and "eoc store check" in err and "--no-store" in err
    assert store.read_bytes() == b"not eoc's store, kept as it is"
    assert stage_of("--no-store", "what is 2+2") == "kv"


def test_a_named_store_that_cannot_be_opened_is_still_an_error(tmp_path: Path) -> None:
    assert run("query", "--store", str(tmp_path / "missing" / "s.sqlite"), "what is 2+2")[0] == 1


def test_store_forget_defaults_to_the_per_user_store(data_home: Path) -> None:
    code, text = run("store", "forget", "--question", "what is 2+2")
    assert code == 2  # no store yet: forgetting never makes one
    assert stage_of("what is 2+2") == "kv"
    code, text = run("store", "forget", "--json", "--question", "what is 2+2", "--stage", "cache")
    assert code == 0
    doc = json.loads(text)
    assert doc["forgot"]["cache"] == 1
    assert doc["store"] == str(data_home / "eoc" / "store.sqlite")
    assert stage_of("what is 2+2") == "kv"


def test_the_python_api_keeps_memory_unless_a_store_is_named(data_home: Path) -> None:
    assert assemble().store is None
    assert not data_home.exists()


def test_eoc_meter_says_where_eoc_query_remembers(
    data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert describe_answer_store().startswith(f"{data_home / 'eoc' / 'store.sqlite'} (per-user")
    assert "not made yet" in describe_answer_store()
    monkeypatch.setenv("EOC_STORE", "/srv/answers.db")
    assert describe_answer_store().startswith("/srv/answers.db ($EOC_STORE")
