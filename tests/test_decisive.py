"""Decisive characters (issue 34, item 1): the kv's exact-match key folds only what can never
change a question (spaces, ASCII case, quote and dash variants), and the exact path checks the
numbers and symbols the guard checks, so "what is 7*8!" never gets the answer to "what is 7*8",
"2³" never the answer to "23", "Maße" never the answer to "Masse"."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from eoc import Cascade, Query, Stage
from eoc.knowledge import kv_pairs, seeded_graph, seeded_kv
from eoc.persist import SqliteKV
from eoc.stages import CacheStage, KVStage, NeuralStage
from eoc.stages.guard import EntityGuard, decisive_difference, symbols
from eoc.store.forget import forget_in, forget_of
from eoc.store.partition import SHARED, Partition, keyed, tag_of, unkeyed
from eoc.store.sqlite_db import store_key
from eoc.store.sqlite_schema import row_sum, summed
from eoc.testing import ScriptedBackend
from eoc.text.forms import fold
from tests.helpers import IN_BROWSER

_KEY = {"EOC_KEY_FILE": os.environ["EOC_KEY_FILE"]}  # the same user: the same key


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("What is 7*8?", "what is 7*8"),
        ("  what   is\t7*8 ", "what is 7*8"),
        ("WHAT IS THE CAPITAL OF FRANCE", "what is the capital of france"),
        ("What’s the “capital” of France?", 'what is the "capital" of france'),
        ("what is 10 – 3", "what is 10 - 3"),
        ("what is 10 − 3", "what is 10 - 3"),
        ("Café", "Cafe\u0301"),  # one character or a letter and an accent: NFC
        ("ÉCOLE", "école"),  # letter case in any script
        ("Åland Islands", "åland islands"),
    ],
)
def test_the_fold_merges_only_what_never_changes_a_question(a: str, b: str) -> None:
    assert fold(a) == fold(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("what is 7*8!", "what is 7*8"),
        ("what is 3‼", "what is 3"),
        ("what is 2³", "what is 23"),
        ("what is x²", "what is x2"),
        ("what is 10⁰", "what is 10"),
        ("what is H₂O", "what is H2O"),
        ("what is ½ of 8", "what is 12 of 8"),
        ("what is sin 30°", "what is sin 30"),
        ("Was ist die Maße", "Was ist die Masse"),
        ("STRAẞE", "strasse"),  # a capital ẞ is ß small, never ss
        ("what is (2+3)*4", "what is 2+3)*4"),  # brackets are not trimmed
        ("what is 5′", "what is 5'"),  # a prime is feet, not a quote
        ("how much is 12‰", "how much is 12%"),
    ],
)
def test_every_other_character_decides(a: str, b: str) -> None:
    assert fold(a) != fold(b)


@pytest.mark.parametrize(
    ("stored", "asked"),
    [
        ("what is 7*8", "what is 7*8!"),
        ("what is 23", "what is 2³"),
        ("what is 10", "what is 10⁰"),
        ("what is 3", "what is 3‼"),
        ("what is sin 30", "what is sin 30°"),
        ("what is x2 + 1", "what is x² + 1"),
        ("what is the molar mass of H2O", "what is the molar mass of H₂O"),
        ("Was bedeutet Masse", "Was bedeutet Maße"),
    ],
)
def test_a_look_alike_by_one_character_gets_no_stored_answer(stored: str, asked: str) -> None:
    """Neither by the exact key nor by similarity (the core's embedder scores these alike)."""
    kv = KVStage()
    kv.put(stored, "the stored answer")
    assert kv.lookup(Query(asked)) is None
    assert kv.lookup(Query(stored)) is not None


def test_the_guard_reads_superscripts_degrees_and_double_factorials_as_symbols() -> None:
    assert symbols("2³") == ("³",) and symbols("30°") == ("°",) and symbols("3‼") == ("‼",)
    assert decisive_difference("what is 2³", "what is 23") == "numbers differ"
    assert decisive_difference("what is 2³", "what is 2") == "operators or symbols differ"
    assert decisive_difference("what is 7*8", "What is 7*8?") == ""
    assert not EntityGuard().allows("what is 2³", "what is 2")


def test_an_entry_found_under_the_query_key_is_checked_as_the_guard_checks() -> None:
    """An entry whose prompt differs decisively from the query is not served, whatever key
    found it (a row keyed by an older fold, a store written by another eoc)."""
    kv = KVStage()
    kv.put("what is 7*8", "56")
    entry = kv._entries[fold("what is 7*8")]
    kv._entries[fold("what is 7*8!")] = entry  # as an older eoc keyed it
    assert kv.lookup(Query("what is 7*8!")) is None
    assert kv.lookup(Query("What is 7*8?")) is not None


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _variants(prompt: str) -> list[str]:
    """The pack question with a decisive character added: !, ‼, a superscript ², a ⁰."""
    last = list(re.finditer(r"\d+", prompt))[-1]
    squared = prompt[: last.end()] + "²" + prompt[last.end() :]
    zeroed = prompt[: last.end()] + "⁰" + prompt[last.end() :]
    power = prompt[: last.start()] + last.group().translate(_SUPERSCRIPT) + prompt[last.end() :]
    return [prompt + "!", prompt + "‼", squared, zeroed, power]


def test_no_seeded_computation_answers_its_look_alikes() -> None:
    """The issue's 17 seeded facts with !, ‼, ² or ⁰ added: none gets the pack's answer from the
    kv or the cache (the graph may compute one, rightly; the model answers the rest, and its
    answer may be served again to the same question written with other spaces)."""
    backend = ScriptedBackend()
    stages = [CacheStage(), seeded_kv(), seeded_graph(), NeuralStage(backend)]
    with Cascade(stages) as c:
        asked = 0
        for prompt, answer in kv_pairs():
            if not re.search(r"\d", prompt):
                continue
            for variant in _variants(prompt):
                asked += 1
                got = c.resolve(variant)
                if got.stage in (Stage.KV, Stage.CACHE):  # the model's own answer, asked again
                    assert got.payload != answer, (variant, got.stage)
    assert asked >= 60


def test_a_plain_key_opening_with_a_bracket_never_reads_as_a_partition() -> None:
    """ "(2+3)*4" keeps its bracket in the key, after one space, so no question can be keyed
    like a partition's answers (or overwrite them)."""
    assert keyed(SHARED, fold("(2+3)*4")) == " (2+3)*4"
    assert tag_of(" (2+3)*4") == SHARED and unkeyed(" (2+3)*4") == "(2+3)*4"
    part = Partition.of("material", 64)
    crafted = f"{part.open_tag} what is up"
    kv = KVStage()
    kv.put("what is up", "made in the partition", partition=part.open_tag, origin="m")
    kv.put(crafted, "a plain question's answer")  # typed by someone as a question
    assert kv._entries[keyed(part.open_tag, "what is up")].payload == "made in the partition"
    assert kv.lookup(Query("(2+3)*4")) is None
    kv.put("(2+3)*4", "20")
    got = kv.lookup(Query("(2+3)*4"))
    assert got is not None and got.payload == "20"


def _old_row(path: Path, key: str, prompt: str) -> None:
    """Rewrite the row of ``prompt`` under ``key``, as an eoc that folded more keyed it."""
    conn = sqlite3.connect(path)
    row = conn.execute(
        "SELECT prompt, payload, embedder, vector, origin, meta FROM kv WHERE prompt = ?",
        (prompt,),
    ).fetchone()
    conn.execute("DELETE FROM kv WHERE prompt = ?", (prompt,))
    fields = (key, *row[:5])
    conn.execute(
        "INSERT INTO kv (key, prompt, payload, embedder, vector, origin, meta, checksum) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (*fields, row[5], row_sum("kv", summed(fields, row[5]), store_key())),
    )
    conn.commit()
    conn.close()


def test_a_store_keyed_by_an_older_fold_is_keyed_again_and_forgets_whole(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    kv = SqliteKV(path)
    kv.put("what is 7*8!", "282240")
    kv.put("what is 7*8", "56")
    kv.close()
    _old_row(path, "what is 7*8 ", "what is 7*8!")  # a key the old fold could have made
    kv = SqliteKV(path)
    assert not kv.damaged
    got = kv.lookup(Query("what is 7*8!"))
    assert got is not None and got.payload == "282240"
    kv.close()
    with closing(sqlite3.connect(path)) as conn:
        keys = {k for (k,) in conn.execute("SELECT key FROM kv")}
    assert keys == {"what is 7*8!", "what is 7*8"}
    kv = SqliteKV(path)
    assert forget_in(None, kv, forget_of("what is 7*8!", "kv")) == {"kv": 1}
    kv.close()
    kv = SqliteKV(path)
    assert kv.lookup(Query("what is 7*8!")) is None  # forgotten, not back after a reopen
    assert kv.lookup(Query("what is 7*8")) is not None
    kv.close()


def test_a_row_another_row_replaced_under_the_new_fold_is_removed(tmp_path: Path) -> None:
    """Two rows an older eoc kept apart that fold alike now ("a–b", "a-b"): the later one is
    served, as a put would have replaced the earlier, and the earlier leaves the file."""
    path = tmp_path / "store.db"
    kv = SqliteKV(path)
    kv.put("what is 10 – 3", "first")
    kv.close()
    _old_row(path, "what is 10 – 3", "what is 10 – 3")
    conn = sqlite3.connect(path)
    fields = ("what is 10 - 3", "what is 10 - 3", "second", "hashed-ngrams", None, "")
    conn.execute(
        "INSERT INTO kv (key, prompt, payload, embedder, vector, origin, meta, checksum) "
        "VALUES (?, ?, ?, ?, ?, ?, '', ?)",
        (*fields, row_sum("kv", summed(fields, ""), store_key())),
    )
    conn.commit()
    conn.close()
    kv = SqliteKV(path)
    got = kv.lookup(Query("what is 10 – 3"))
    assert got is not None and got.payload == "second"
    kv.close()
    with closing(sqlite3.connect(path)) as conn:
        rows = conn.execute("SELECT key, payload FROM kv").fetchall()
    assert rows == [("what is 10 - 3", "second")]


@pytest.mark.skipif(IN_BROWSER, reason="the browser runs no processes")
def test_the_cli_answers_a_factorial_look_alike_with_no_neighbours_answer(tmp_path: Path) -> None:
    """The issue's command: `EOC_MODEL=none eoc query --no-store "what is 7*8!"` said kv 56."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "EOC_MODEL": "none", **_KEY}
    cmd = [sys.executable, "-m", "eoc", "query", "--no-store", "--json"]
    for text in ("what is 7*8!", "what is 2²+2", "what is 3‼"):
        out = subprocess.run([*cmd, text], capture_output=True, text=True, env=env)
        doc = json.loads(out.stdout)
        assert doc["stage"] not in ("kv", "cache"), (text, doc["payload"])
    plain = subprocess.run([*cmd, "what is 7*8"], capture_output=True, text=True, env=env)
    assert json.loads(plain.stdout)["payload"] == "56"
