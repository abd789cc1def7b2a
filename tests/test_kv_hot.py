"""The kv's bounded entries and its index over a store's own search (the rules alone; the real
store, PostgreSQL with pgvector, is tested in tests/native/test_store_pgvector.py)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from eoc.errors import ConfigError
from eoc.stages.index import MAX_SCORED
from eoc.stages.kv_hot import FIRST_ROWS, MIN_HOT, HotEntries, StoreIndex
from eoc.store.entry import EntryMeta
from eoc.store.protocols import KVRow


def test_hot_entries_drop_the_least_recently_used_beyond_their_capacity() -> None:
    hot: HotEntries[int] = HotEntries(MIN_HOT)
    for i in range(MIN_HOT):
        hot[f"k{i}"] = i
    assert hot.get("k0") == 0  # read: now the most recent
    hot["new"] = -1
    assert len(hot) == MIN_HOT and "k0" in hot and "k1" not in hot and hot.get("new") == -1
    assert hot.pop("k2") == 2 and hot.pop("k2") is None and hot.get("k2", "x") == "x"


@pytest.mark.parametrize("bad", [0, MIN_HOT - 1, True, 1.5])
def test_a_hot_set_too_small_to_hold_one_search_is_refused(bad: object) -> None:
    with pytest.raises(ConfigError, match=str(MIN_HOT)):
        HotEntries(bad)  # type: ignore[arg-type]


class Rows:
    """A store's search over rows given as (cosine, key), best first, counting what it is asked."""

    what = "a list"

    def __init__(self, scored: list[tuple[float, str]]) -> None:
        self.scored = scored
        self.asked: list[int] = []

    def nearest(
        self, vec: object, k: int, parts: Sequence[str] | None
    ) -> list[tuple[float, KVRow]]:
        self.asked.append(k)
        meta = EntryMeta(0.0)
        return [(s, KVRow(key, key, "a", "", meta)) for s, key in self.scored[:k]]

    def fetch(self, keys: Sequence[str]) -> list[KVRow]:
        return []

    def count(self) -> int:
        return len(self.scored)


def index_over(scored: list[tuple[float, str]]) -> tuple[StoreIndex, Rows, list[str]]:
    rows, held = Rows(scored), []

    def hold(found: Sequence[KVRow]) -> list[str | None]:
        held.extend(r.key for r in found)
        return [r.key for r in found]

    return StoreIndex(rows, hold), rows, held


def test_it_offers_the_store_s_rows_best_first_above_the_threshold() -> None:
    index, _, held = index_over([(0.9, "a"), (0.8, "b"), (0.5, "c")])
    assert index.search([1.0], 0.7, 2) == [(0.9, "a"), (0.8, "b")]
    assert index.search([1.0], 0.7, 1, accept=lambda k: k != "a") == [(0.8, "b")]
    assert index.search([1.0], 0.95, 1) == [] and set(held) == {"a", "b", "c"}
    assert len(index) == 3


def test_it_asks_the_store_for_more_only_when_every_row_was_refused() -> None:
    scored = [(0.99 - i / 1000, f"k{i}") for i in range(200)]
    index, rows, _ = index_over(scored)
    last = f"k{FIRST_ROWS + 3}"
    assert index.search([1.0], 0.7, 1, accept=lambda k: k == last) == [
        (scored[FIRST_ROWS + 3][0], last)
    ]
    assert rows.asked == [FIRST_ROWS, 4 * FIRST_ROWS]
    rows.asked.clear()
    assert index.search([1.0], 0.7, 1, accept=lambda k: False) == []
    assert max(rows.asked) == MAX_SCORED  # at most MAX_SCORED rows a hit, ever
    refused: list[str] = []
    index.search([1.0], 0.7, 1, accept=lambda k: bool(refused.append(str(k))))
    assert len(refused) == MAX_SCORED and len(set(refused)) == MAX_SCORED  # each offered once
