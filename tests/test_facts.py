"""Fact files and the graph store at their boundary: only encodable, bounded text gets in."""

from __future__ import annotations

import time

import pytest

from eoc import Cascade, Query
from eoc.errors import FactFileError, InputError
from eoc.query import Stage
from eoc.stages import (
    GraphStage,
    NeuralStage,
    TripleStore,
    read_ntriples,
    read_pairs,
    read_tsv_triples,
)
from eoc.stages.base import work_estimate
from eoc.stages.graph import MAX_TERM_BYTES
from eoc.text import facts
from eoc.text.facts import MAX_FIELD_CHARS, MAX_LINE_CHARS, read_fact_file


class _NoLongRegex:
    """The N-Triples pattern, refusing to be run on a line longer than the limit."""

    real = facts._NT

    def match(self, line: str) -> object:
        if len(line) > MAX_LINE_CHARS:
            raise AssertionError(f"the N-Triples regex ran on {len(line):,} characters")
        return self.real.match(line)


def _error(reader, text: str) -> FactFileError:  # type: ignore[no-untyped-def]
    with pytest.raises(FactFileError) as info:
        reader(text, "f")
    return info.value


# -- line length: checked before any pattern runs ------------------------------------------


def test_a_50_mb_line_is_refused_fast_before_the_regex(tmp_path, monkeypatch) -> None:
    big = tmp_path / "big.nt"
    big.write_text('<a> <b> "c" .\n<a> <b> "' + "x" * 50_000_000 + "\n", encoding="utf-8")
    monkeypatch.setattr(facts, "_NT", _NoLongRegex())
    store = TripleStore([("France", "capital", "Paris")])
    t0 = time.perf_counter()
    with pytest.raises(FactFileError) as info:
        store.load(big)
    assert time.perf_counter() - t0 < 2.0
    assert info.value.line == 2 and "big.nt:2:" in str(info.value) and "limit" in str(info.value)
    assert len(store) == 1 and store.objects("France", "capital") == ["Paris"]


@pytest.mark.parametrize("reader", [read_ntriples, read_tsv_triples, read_pairs])
def test_the_line_limit_is_exact(reader) -> None:  # type: ignore[no-untyped-def]
    fields = "a\tb" if reader is read_pairs else "a\tb\tc"
    line = ('<a> <b> "c" .' if reader is read_ntriples else fields) + " "
    at_limit = line + " " * (MAX_LINE_CHARS - len(line))
    assert len(reader(at_limit + "\n")) == 1
    err = _error(reader, "\n" + at_limit + " \n")
    assert err.line == 2 and f"{MAX_LINE_CHARS + 1:,} characters" in err.reason


def test_the_line_limit_leaves_room_for_three_terms_in_their_widest_spelling() -> None:
    label = "\U0001f600" * MAX_FIELD_CHARS  # 12 characters each as %F0%9F%98%80
    iri = "<http://example.org/" + "".join(f"%{b:02X}" for b in label.encode()) + ">"
    (triple,) = read_ntriples(f"{iri} {iri} {iri} .\n")
    assert triple == (label, label, label)


# -- control and separator characters ------------------------------------------------------


@pytest.mark.parametrize("ch", ["\x00", "\x01", "\x1b", "\x7f", "\x85", "\x9b", "\r"])
@pytest.mark.parametrize("reader", [read_tsv_triples, read_ntriples])
def test_a_control_character_in_a_field_is_refused_with_its_line(reader, ch: str) -> None:  # type: ignore[no-untyped-def]
    good, bad = (
        ("a\tb\tc", f"d\te{ch}x\tf")
        if reader is read_tsv_triples
        else ('<a> <b> "c" .', f'<d> <e> "x{ch}y" .')
    )
    err = _error(reader, f"{good}\n# note\n{bad}\n{good}\n")
    assert err.line == 3 and f"U+{ord(ch):04X}" in err.reason


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1e"])
def test_unicode_line_separators_do_not_end_a_line(sep: str) -> None:
    # str.splitlines() would end line 1 at the separator and number every later line one too
    # high; lines end at \n only, so the separator is refused on the line an editor shows it.
    err = _error(read_tsv_triples, f"a\tb\tc{sep}\nd\te\n")
    assert err.line == 1 and f"U+{ord(sep):04X}" in err.reason
    err = _error(read_tsv_triples, f"a\tb\tc\nd\te{sep}f\tg\n")
    assert err.line == 2 and f"U+{ord(sep):04X}" in err.reason


def test_crlf_line_ends_are_tolerated_and_keep_their_numbers() -> None:
    assert read_tsv_triples("a\tb\tc\r\nd\te\tf\r\n") == [("a", "b", "c"), ("d", "e", "f")]
    assert _error(read_tsv_triples, "a\tb\tc\r\n\r\nd\te\r\n").line == 3


def test_a_lone_surrogate_in_text_is_refused_with_its_line() -> None:
    err = _error(read_pairs, "q\ta\nq2\ta\ud800\n")
    assert err.line == 2 and "surrogate" in err.reason


@pytest.mark.parametrize(
    "iri",
    [
        "<http://x/a%00b>",
        "<http://x/a%1fb>",
        "<http://x/a%0Ab>",
        "<http://x/a%7Fb>",
        "<http://x%00/b>",
        "<http://x/a%C2%85b>",  # NEL (C1) as UTF-8
        "<http://x/a%E2%80%A8b>",  # LINE SEPARATOR as UTF-8
    ],
)
@pytest.mark.parametrize("position", [0, 1, 2])
def test_a_percent_encoded_control_in_an_iri_is_refused(iri: str, position: int) -> None:
    terms = ["<http://x/s>", "<http://x/p>", "<http://x/o>"]
    terms[position] = iri
    err = _error(read_ntriples, '<a> <b> "c" .\n' + " ".join(terms) + " .\n")
    assert err.line == 2


def test_a_percent_encoded_control_in_a_datatype_is_refused() -> None:
    assert _error(read_ntriples, '<a> <b> "5"^^<http://x/int%00> .\n').line == 1


@pytest.mark.parametrize(
    "escape", ["\\u0000", "\\U00000000", "\\u001B", "\\u007f", "\\u0085", "\\u2028", "\\b"]
)
def test_a_literal_escape_that_spells_a_control_is_refused(escape: str) -> None:
    err = _error(read_ntriples, f'<a> <b> "ok" .\n<a> <b> "x{escape}y" .\n')
    assert err.line == 2 and "U+" in err.reason


@pytest.mark.parametrize("escape", ["\\uD800", "\\uDFFF", "\\U0000DC00", "\\U00110000"])
def test_a_literal_escape_that_spells_a_surrogate_is_refused(escape: str) -> None:
    assert _error(read_ntriples, f'<a> <b> "x{escape}y" .\n').line == 1


def test_escaped_tab_and_newline_stay_text() -> None:
    (triple,) = read_ntriples('<a> <b> "x\\ty\\nz" .\n')
    assert triple.object == "x\ty\nz"


# -- encoding: BOM and UTF-8 ---------------------------------------------------------------


@pytest.mark.parametrize("reader", [read_tsv_triples, read_ntriples])
def test_a_leading_bom_is_dropped(reader) -> None:  # type: ignore[no-untyped-def]
    text = (
        "\ufeffFrance\tcapital\tParis\n"
        if reader is read_tsv_triples
        else '\ufeff<http://x/France> <http://x/capital> "Paris" .\n'
    )
    assert reader(text)[0].subject == "France"


def test_a_bom_file_reads_without_it(tmp_path) -> None:
    f = tmp_path / "bom.tsv"
    f.write_bytes(b"\xef\xbb\xbfFrance\tcapital\tParis\n")
    assert read_fact_file(f) == "France\tcapital\tParis\n"
    store = TripleStore()
    assert store.load(f) == 1 and store.objects("France", "capital") == ["Paris"]


def test_invalid_utf8_names_its_line(tmp_path) -> None:
    f = tmp_path / "bad.nt"
    f.write_bytes(b'<a> <b> "1" .\n<a> <b> "2" .\n<a> <b> "\xff" .\n')
    with pytest.raises(FactFileError) as info:
        TripleStore().load(f)
    assert info.value.line == 3 and "bad.nt:3:" in str(info.value) and "UTF-8" in str(info.value)


def test_read_fact_file_is_bounded(tmp_path) -> None:
    f = tmp_path / "f.tsv"
    f.write_text("a\tb\tc\n", encoding="utf-8")
    assert read_fact_file(f, limit=6) == "a\tb\tc\n"
    with pytest.raises(FactFileError, match="larger than 5 bytes"):
        read_fact_file(f, limit=5)
    with pytest.raises(FactFileError):
        read_fact_file(tmp_path / "absent.tsv")
    with pytest.raises(FactFileError, match="folder"):
        read_fact_file(tmp_path)


def test_an_unknown_suffix_is_refused_before_reading(tmp_path) -> None:
    with pytest.raises(FactFileError, match="unknown fact file type"):
        TripleStore().load(tmp_path / "absent.json")


# -- the store's own API --------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad", ["Fr\ud800nce", "\udfff", "Fr\x00nce", "a\x1bb", "a\x85b", "x" * (MAX_TERM_BYTES + 1)]
)
@pytest.mark.parametrize("position", [0, 1, 2])
def test_triple_store_add_refuses_text_that_cannot_be_encoded(bad: str, position: int) -> None:
    store = TripleStore([("France", "capital", "Paris")])
    stage = GraphStage(store)
    terms = ["Spain", "capital", "Madrid"]
    terms[position] = bad
    with pytest.raises(InputError):
        store.add(*terms)
    with pytest.raises(InputError):
        store.add_all([("Italy", "capital", "Rome"), tuple(terms)])  # type: ignore[list-item]
    assert store.objects("Italy", "capital") == []  # every triple is checked before one is added
    assert len(store) == 1 and "Madrid" not in store.objects("Spain", "capital")
    hit = stage.lookup(Query("what is the capital of France"))
    assert hit is not None and hit.payload == "Paris"
    assert Cascade([stage, NeuralStage()]).resolve("capital of France").payload == "Paris"


def test_triple_store_add_takes_the_longest_term_a_file_can_hold() -> None:
    store = TripleStore()
    assert store.add("\U0001f600" * MAX_FIELD_CHARS, "p", "o")
    assert MAX_TERM_BYTES == len(("\U0001f600" * MAX_FIELD_CHARS).encode())


# -- what a graph hit costs -----------------------------------------------------------------


def test_a_graph_hit_is_charged_by_the_bytes_matched() -> None:
    stage = GraphStage(TripleStore([("France", "capital", "Paris")]))
    short = Query("capital of France")
    long = Query("What is the capital of France?")
    for q in (short, long):
        hit = stage.lookup(q)
        assert hit is not None and hit.cost == work_estimate(Stage.GRAPH, nbytes=q.size)
    a, b = stage.lookup(short), stage.lookup(long)
    assert a is not None and b is not None and a.cost is not None and b.cost is not None
    assert a.cost.uj < b.cost.uj


def test_a_flat_graph_figure_reports_no_cost_of_its_own() -> None:
    stage = GraphStage(TripleStore([("France", "capital", "Paris")]), figure_uj=700)
    hit = stage.lookup(Query("capital of France"))
    assert hit is not None and hit.cost is None and stage.figure.uj == 700
