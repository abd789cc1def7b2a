"""The kv stage: exact key match, then similarity over embeddings.

Similarity is cosine between unit vectors; ``threshold`` is the least cosine a
stored prompt needs to be served, so **higher is stricter** (1.0 serves only
prompts that embed identically). A similarity hit is also guarded: the query's
content words and numbers, in order, must agree with the stored prompt's (see
:func:`eoc.stages.text.signature`), so "convert 10 miles to km" never gets the
answer stored for "convert 10 km to miles".
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path

from eoc.errors import ConfigError, FactFileError, InputError
from eoc.query import Query, Stage, check_prompt
from eoc.stages.base import Answer, stage_figure
from eoc.stages.embed import Embedder, HashedNgramEmbedder, SparseVector, from_dense
from eoc.stages.facts import read_pairs
from eoc.stages.index import SparseIndex, VectorIndex
from eoc.stages.text import normalize, signature

DEFAULT_THRESHOLD = 0.8
MAX_PAYLOAD_BYTES = 1 << 20


class _Entry:
    __slots__ = ("key", "payload", "prompt", "signature")

    def __init__(self, key: str, prompt: str, payload: str) -> None:
        self.key = key
        self.prompt = prompt
        self.payload = payload
        self.signature = signature(key)


class KVStage:
    """Exact and similarity lookup of stored prompt -> answer pairs.

    Args:
        embedder: turns text into unit vectors; defaults to :class:`HashedNgramEmbedder`.
        index: the vector index; defaults to :class:`SparseIndex`.
        threshold: least cosine for a similarity hit, in (0, 1]; higher is stricter.
        figure_uj: this stage's own per-hit figure (ESTIMATED); defaults to the documented one.
    """

    stage = Stage.KV

    def __init__(
        self,
        *,
        embedder: Embedder | None = None,
        index: VectorIndex | None = None,
        threshold: float = DEFAULT_THRESHOLD,
        figure_uj: int | None = None,
    ) -> None:
        if (
            isinstance(threshold, bool)
            or not isinstance(threshold, (int, float))
            or not (0.0 < threshold <= 1.0)
        ):
            raise ConfigError(
                f"threshold is a cosine in (0, 1] (higher = stricter), got {threshold!r}"
            )
        self.embedder: Embedder = embedder or HashedNgramEmbedder()
        self.index: VectorIndex = index if index is not None else SparseIndex()
        self.threshold = float(threshold)
        self.figure = stage_figure(Stage.KV, figure_uj)
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    def put(self, prompt: str, payload: str, *, embedding: SparseVector | None = None) -> None:
        """Store ``payload`` as the answer to ``prompt`` (replacing an earlier answer)."""
        check_prompt(prompt)
        if not isinstance(payload, str) or not payload.strip():
            raise InputError("a kv answer must be non-empty text")
        if len(payload.encode("utf-8", "surrogatepass")) > MAX_PAYLOAD_BYTES:
            raise InputError(f"a kv answer is at most {MAX_PAYLOAD_BYTES} bytes")
        key = normalize(prompt)
        if not key:
            raise InputError(f"prompt {prompt!r} has no words to key on")
        vec = embedding if embedding is not None else self.embedder.embed(prompt)
        entry = _Entry(key, prompt, payload)
        with self._lock:
            self.index.add(key, vec)
            self._entries[key] = entry

    def remember(self, query: Query, payload: str) -> None:
        emb = None
        if query.embedding is not None:
            emb = from_dense(query.embedding, self.embedder.dim)
        self.put(query.prompt, payload, embedding=emb)

    def load_pairs(self, pairs: Iterable[tuple[str, str]]) -> int:
        """Store many ``(prompt, answer)`` pairs; returns how many."""
        n = 0
        for prompt, payload in pairs:
            self.put(prompt, payload)
            n += 1
        return n

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
        vec = None
        if query.embedding is not None:  # checked first: a bad embedding is an error, hit or not
            vec = from_dense(query.embedding, self.embedder.dim)
        key = normalize(query.prompt)
        entry = self._entries.get(key)
        if entry is not None:
            return Answer(entry.payload)
        if vec is None:
            vec = self.embedder.embed(query.prompt)
        sig = signature(key)
        entries = self._entries

        def guard(k: object) -> bool:
            candidate = entries.get(str(k))
            return candidate is not None and candidate.signature == sig

        found = self.index.search(vec, self.threshold, 1, guard)
        if not found:
            return None
        entry = entries.get(str(found[0][1]))
        return None if entry is None else Answer(entry.payload)

    def __len__(self) -> int:
        return len(self._entries)


__all__ = ["DEFAULT_THRESHOLD", "KVStage"]
