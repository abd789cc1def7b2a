"""The kv stage: exact key match, then similarity over embeddings.

Similarity is cosine between unit vectors; ``threshold`` is the least cosine a
stored prompt needs to be served, so **higher is stricter** (1.0 serves only
prompts that embed identically). A similarity hit is also guarded (see
:mod:`eoc.stages.guard`, :class:`~eoc.stages.guard.EntityGuard` by default, with
either embedder): numbers, named entities and answer-type question words must
agree, every content word of the stored question must be in the query, and
"convert 10 miles to km" never gets the answer stored for "convert 10 km to miles".

The default thresholds (0.6 for the core's hashed n-grams, 0.7 for MiniLM) were
chosen on real paraphrases and hard negatives: see ``bench/semantic.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path

from eoc.errors import ConfigError, FactFileError, InputError
from eoc.query import Query, Stage, check_prompt
from eoc.stages.base import Answer, stage_figure
from eoc.stages.embed import Embedder, HashedNgramEmbedder, from_dense
from eoc.stages.facts import read_pairs
from eoc.stages.guard import EntityGuard, HitGuard
from eoc.stages.index import SparseIndex, VectorIndex
from eoc.stages.text import normalize

DEFAULT_THRESHOLD = 0.6
MAX_PAYLOAD_BYTES = 1 << 20


class _Entry:
    __slots__ = ("key", "payload", "prompt")

    def __init__(self, key: str, prompt: str, payload: str) -> None:
        self.key = key
        self.prompt = prompt
        self.payload = payload


class KVStage:
    """Exact and similarity lookup of stored prompt -> answer pairs.

    Args:
        embedder: turns text into unit vectors; defaults to :class:`HashedNgramEmbedder`.
        index: the vector index; defaults to :class:`SparseIndex` (a dense embedder needs
            a dense index, e.g. ``native.semantic.AutoIndex``).
        threshold: least cosine for a similarity hit, in (0, 1]; higher is stricter. Defaults
            to the embedder's ``threshold`` attribute, else 0.6.
        guard: checks a similarity hit before it is served; defaults to :class:`EntityGuard`
            (:class:`ExactWordsGuard` is stricter, :class:`NoGuard` is a plain cosine cache).
        figure_uj: this stage's own per-hit figure (ESTIMATED); defaults to the documented one.
    """

    stage = Stage.KV

    def __init__(
        self,
        *,
        embedder: Embedder | None = None,
        index: VectorIndex | None = None,
        threshold: float | None = None,
        guard: HitGuard | None = None,
        figure_uj: int | None = None,
    ) -> None:
        self.embedder: Embedder = embedder or HashedNgramEmbedder()
        self.dense = bool(getattr(self.embedder, "dense", False))
        if threshold is None:
            suggested = getattr(self.embedder, "threshold", None)
            threshold = DEFAULT_THRESHOLD if suggested is None else float(suggested)
        if (
            isinstance(threshold, bool)
            or not isinstance(threshold, (int, float))
            or not (0.0 < threshold <= 1.0)
        ):
            raise ConfigError(
                f"threshold is a cosine in (0, 1] (higher = stricter), got {threshold!r}"
            )
        if index is None and self.dense:
            raise ConfigError(
                f"{self.embedder.name} makes dense vectors: pass a dense index "
                "(native.semantic.AutoIndex), not the core's sparse one"
            )
        self.index: VectorIndex = index if index is not None else SparseIndex()
        self.guard: HitGuard = guard or EntityGuard()
        self.threshold = float(threshold)
        self.figure = stage_figure(Stage.KV, figure_uj)
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    @staticmethod
    def checked_key(prompt: str, payload: str) -> str:
        """Validate a prompt and its answer; returns the exact-match key."""
        check_prompt(prompt)
        if not isinstance(payload, str) or not payload.strip():
            raise InputError("a kv answer must be non-empty text")
        if len(payload.encode("utf-8", "surrogatepass")) > MAX_PAYLOAD_BYTES:
            raise InputError(f"a kv answer is at most {MAX_PAYLOAD_BYTES} bytes")
        key = normalize(prompt)
        if not key:
            raise InputError(f"prompt {prompt!r} has no words to key on")
        return key

    def put(self, prompt: str, payload: str, *, embedding: object | None = None) -> None:
        """Store ``payload`` as the answer to ``prompt`` (replacing an earlier answer)."""
        key = self.checked_key(prompt, payload)
        vec = embedding if embedding is not None else self.embedder.embed(prompt)
        entry = _Entry(key, prompt, payload)
        with self._lock:
            self.index.add(key, vec)
            self._entries[key] = entry

    def _query_vector(self, query: Query) -> object | None:
        if query.embedding is None:
            return None
        if self.dense:
            if len(query.embedding) != self.embedder.dim:
                from eoc.errors import BadEmbedding

                raise BadEmbedding(
                    f"embedding has {len(query.embedding)} dimensions; {self.embedder.name} has {self.embedder.dim}"
                )
            return query.embedding
        return from_dense(query.embedding, self.embedder.dim)

    def remember(self, query: Query, payload: str) -> None:
        self.put(query.prompt, payload, embedding=self._query_vector(query))

    def load_pairs(self, pairs: Iterable[tuple[str, str]]) -> int:
        """Store many ``(prompt, answer)`` pairs (embedded in batches when the embedder can)."""
        items = list(pairs)
        batch = getattr(self.embedder, "embed_batch", None)
        if batch is None:
            for prompt, payload in items:
                self.put(prompt, payload)
            return len(items)
        for start in range(0, len(items), 64):
            chunk = items[start : start + 64]
            for prompt, _ in chunk:
                check_prompt(prompt)
            vecs = batch([p for p, _ in chunk])
            for (prompt, payload), vec in zip(chunk, vecs, strict=True):
                self.put(prompt, payload, embedding=vec)
        flush = getattr(self.embedder, "flush", None)  # an embedding cache writes once, here
        if callable(flush):
            flush()
        return len(items)

    def load_tsv(self, path: str | Path) -> int:
        """Load ``prompt<TAB>answer`` lines from a file; errors name the line.

        The file is read and checked whole before anything is stored, so a bad
        file changes nothing.
        """
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise FactFileError(f"cannot read: {exc}", source=str(p)) from None
        pairs = read_pairs(text, source=str(p))
        for lineno, (prompt, _) in pairs:
            try:
                check_prompt(prompt)
            except InputError as exc:
                raise FactFileError(exc.reason, source=str(p), line=lineno) from None
        return self.load_pairs(pair for _, pair in pairs)

    def lookup(self, query: Query) -> Answer | None:
        vec = self._query_vector(query)  # checked first: a bad embedding is an error, hit or not
        key = normalize(query.prompt)
        entry = self._entries.get(key)
        if entry is not None:
            return Answer(entry.payload)
        if vec is None:
            vec = self.embedder.embed(query.prompt)
        entries, guard, text = self._entries, self.guard, query.prompt

        def allowed(k: object) -> bool:
            candidate = entries.get(str(k))
            return candidate is not None and guard.allows(text, candidate.prompt)

        found = self.index.search(vec, self.threshold, 1, allowed)
        if not found:
            return None
        entry = entries.get(str(found[0][1]))
        return None if entry is None else Answer(entry.payload)

    def __len__(self) -> int:
        return len(self._entries)


__all__ = ["DEFAULT_THRESHOLD", "KVStage"]
