"""The kv's HNSW index on faiss: tombstones, refused candidates, exact cosines, saving and opening."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from eoc.errors import ConfigError, StoreCorrupt, UntrustedFile
from eoc.stages.index import MAX_SCORED
from eoc_native.semantic import AnnIndex, ExactIndex
from eoc_native.semantic.index import FIRST_CANDIDATES


def unit(n: int, d: int = 32, seed: int = 0) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def filled(n: int = 2000, d: int = 32) -> tuple[AnnIndex, np.ndarray]:
    vecs = unit(n, d)
    index = AnnIndex(d)
    index.add_many([f"k{i}" for i in range(n)], vecs)
    return index, vecs


def test_the_cosine_a_search_returns_is_the_exact_one() -> None:
    index, vecs = filled()
    q = vecs[10] + 0.3 * unit(1, seed=9)[0]
    q /= np.linalg.norm(q)
    for score, key in index.search(q, -1.0, 5):
        assert score == pytest.approx(float(vecs[int(key[1:])] @ q), abs=1e-6)


def test_a_removed_key_is_never_found_and_takes_no_result_s_place() -> None:
    index, vecs = filled()
    q = vecs[100]
    rng = np.random.default_rng(11)
    for i in range(200):  # 200 stored nearer the query than "far", all removed
        v = q + 0.005 * rng.standard_normal(32).astype(np.float32)
        index.add(f"near{i}", v / np.linalg.norm(v))
    v = q + 0.03 * rng.standard_normal(32).astype(np.float32)
    index.add("far", v / np.linalg.norm(v))
    for i in range(200):
        assert index.remove(f"near{i}")
    assert index._index.ntotal == 2201  # not rebuilt: the tombstones are in the graph
    hits = index.search(q, 0.95, 2)
    assert [k for _, k in hits] == ["k100", "far"]
    assert len(index) == 2001
    index.add("far", index._index.reconstruct(index._row_of["far"]))  # the same vector again
    assert index._index.ntotal == 2201 and index._dead == 200  # kept in its row: no tombstone
    assert not index.remove("near0")


def test_the_graph_is_rebuilt_past_a_quarter_of_tombstones_and_still_finds_everything() -> None:
    index, vecs = filled(6000)
    for i in range(0, 6000, 3):
        index.remove(f"k{i}")
    assert index._index.ntotal < 6000  # rebuilt once past max(1024, 6000 // 4) tombstones
    found = sum(index.search(vecs[i], 0.99, 1)[0][1] == f"k{i}" for i in range(1, 6000, 3))
    assert found == 2000
    assert all(index.search(vecs[i], 0.99, 1) == [] for i in range(0, 300, 3))


def test_candidates_refused_ask_the_graph_for_more() -> None:
    index, vecs = filled()
    near = [f"n{i}" for i in range(3 * FIRST_CANDIDATES)]
    for i, key in enumerate(near):  # near copies of k7, all above the threshold
        v = vecs[7] + 0.01 * unit(1, seed=100 + i)[0]
        index.add(key, v / np.linalg.norm(v))
    refused = set(near)
    hits = index.search(vecs[7], 0.9, 1, accept=lambda k: k not in refused and k != "k7")
    assert hits == []  # nothing else is above 0.9
    calls: list[str] = []

    def ninth(k: object) -> bool:  # refuses the first eight candidates, takes the ninth
        calls.append(str(k))
        return len(calls) == 9

    hits = index.search(vecs[7], 0.9, 1, accept=ninth)
    assert len(calls) == 9 and [k for _, k in hits] == [calls[-1]]
    taken: list[str] = []

    def after_eight(k: object) -> bool:
        taken.append(str(k))
        return len(taken) > 8

    hits = index.search(vecs[7], 0.9, 1, prefilter=after_eight)
    assert len(hits) == 1 and hits[0][1] == taken[8]


def test_it_agrees_with_exact_search_on_near_queries() -> None:
    index, vecs = filled(3000, 64)
    exact = ExactIndex(64)
    for i, v in enumerate(vecs):
        exact.add(f"k{i}", v)
    rng = np.random.default_rng(5)
    queries = vecs[:200] + 0.1 * rng.standard_normal((200, 64)).astype(np.float32)
    agree = sum(index.search(q, -1.0, 1)[0][1] == exact.search(q, -1.0, 1)[0][1] for q in queries)
    assert agree >= 198


def test_a_saved_index_opens_whole_without_building_again(tmp_path: Path) -> None:
    index, vecs = filled()
    index.remove("k3")
    path = tmp_path / "kv.hnsw"
    index.save(path)
    opened = AnnIndex.open(path, dim=32)
    assert len(opened) == len(index) == 1999
    assert opened.search(vecs[5], 0.99, 1)[0][1] == "k5"
    assert opened.search(vecs[3], 0.99, 1) == []
    opened.add("k3", vecs[3])  # it goes on working: tombstones, additions
    assert opened.search(vecs[3], 0.99, 1)[0][1] == "k3"


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[:-1],  # cut short
        lambda b: b + b"x",  # bytes added
        lambda b: b[:-50] + bytes([b[-50] ^ 1]) + b[-49:],  # one bit in the graph
        lambda b: b.replace(b'"k5"', b'"k6"', 1),  # a key altered
        lambda b: b"not an index\n" + b[20:],
        lambda b: b"",
    ],
)
def test_a_damaged_or_altered_index_file_is_refused_before_faiss_reads_it(
    tmp_path: Path, damage
) -> None:  # type: ignore[no-untyped-def]
    index, _ = filled(300)
    path = tmp_path / "kv.hnsw"
    index.save(path)
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(StoreCorrupt, match="delete"):
        AnnIndex.open(path)


def test_an_index_whose_graph_has_bytes_after_it_is_refused_even_with_its_digest_made_again(
    tmp_path: Path,
) -> None:
    """faiss reads the graph from the file as it needs (in chunks, never the whole file at
    once): what it leaves unread is refused, as a digest-matching file with bytes added is."""
    import hashlib
    import json

    index, _ = filled(300)
    path = tmp_path / "kv.hnsw"
    index.save(path)
    magic, rest = path.read_bytes().split(b"\n", 1)
    line, body = rest.split(b"\n", 1)
    head = json.loads(line)
    body += b"\0" * 64
    head["graph_bytes"] += 64
    head["sha256"] = hashlib.sha256(body).hexdigest()
    path.write_bytes(magic + b"\n" + json.dumps(head).encode() + b"\n" + body)
    with pytest.raises(StoreCorrupt, match="bytes after its graph"):
        AnnIndex.open(path)


def test_an_index_file_of_other_dimensions_is_refused(tmp_path: Path) -> None:
    index, _ = filled(100)
    index.save(tmp_path / "kv.hnsw")
    with pytest.raises(StoreCorrupt, match="32-dimensional"):
        AnnIndex.open(tmp_path / "kv.hnsw", dim=384)


def test_an_index_file_others_could_write_is_refused(tmp_path: Path) -> None:
    index, _ = filled(100)
    path = tmp_path / "kv.hnsw"
    index.save(path)
    path.chmod(0o666)
    with pytest.raises(UntrustedFile):
        AnnIndex.open(path)


def test_only_string_keys_are_saved_and_a_failed_save_leaves_the_old_file(tmp_path: Path) -> None:
    index = AnnIndex(32)
    index.add(7, unit(1)[0])
    with pytest.raises(ConfigError, match="strings"):
        index.save(tmp_path / "kv.hnsw")
    assert not (tmp_path / "kv.hnsw").exists() and os.listdir(tmp_path) == []


@pytest.mark.parametrize("bad", [0, 1, 5000, True, 2.5])
def test_graph_settings_are_checked(bad: object) -> None:
    with pytest.raises(ConfigError, match="whole number"):
        AnnIndex(32, expansion=bad)  # type: ignore[arg-type]


def test_at_most_max_scored_candidates_a_hit_reach_accept() -> None:
    index, vecs = filled()
    rng = np.random.default_rng(3)
    for i in range(200):  # 200 near copies of k7, all above the threshold, all refused
        v = vecs[7] + 0.01 * rng.standard_normal(32).astype(np.float32)
        index.add(f"n{i}", v / np.linalg.norm(v))
    asked: list[str] = []
    assert index.search(vecs[7], 0.9, 1, accept=lambda k: bool(asked.append(str(k)))) == []
    assert len(asked) == MAX_SCORED and len(set(asked)) == MAX_SCORED
