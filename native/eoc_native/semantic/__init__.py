"""Semantic kv natively: a real sentence embedder and dense vector indexes.

``semantic_kv()`` builds the kv stage a native install would use: all-MiniLM-L6-v2 from files
on disk, an index that is exact while small and HNSW when large, and the entity guard.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eoc_native.semantic.cache import CachedEmbedder
from eoc_native.semantic.index import AnnIndex, AutoIndex, ExactIndex
from eoc_native.semantic.minilm import MiniLMEmbedder, default_model_dir

PACK_VECTORS = Path(__file__).parent / "data" / "pack-vectors.npz"
"""The knowledge pack's kv questions embedded by all-MiniLM-L6-v2, shipped so a cold first
query does not embed them (``scripts/build_pack_vectors.py`` writes it; a test checks it
matches the pack and the model)."""

MINILM_THRESHOLD = 0.7
"""Default cosine threshold for MiniLM hits, with the entity guard: 82 % of real paraphrases
hit, 1.1 % of hits wrong (bench/semantic.py)."""


def semantic_kv_options(
    model_dir: Any = None,
    *,
    threshold: float = MINILM_THRESHOLD,
    cache: bool = True,
    judge: bool = True,
) -> dict[str, Any]:
    """Keyword arguments for a kv stage over MiniLM: embedder, dense index, threshold, and the
    judge of meaning (:func:`eoc_native.judge.default_judging`, unless ``judge`` is False or
    ``EOC_JUDGE=off``)."""
    embedder: Any = MiniLMEmbedder(model_dir)
    if cache:
        embedder = CachedEmbedder(embedder, seed=PACK_VECTORS)
    options = {"embedder": embedder, "index": AutoIndex(embedder.dim), "threshold": threshold}
    if judge:
        from eoc_native.judge import default_judging

        judging = default_judging()
        if judging is not None:
            options["judging"] = judging
    return options


def semantic_kv(
    model_dir: Any = None, *, threshold: float = MINILM_THRESHOLD, **kwargs: Any
) -> Any:
    """A :class:`eoc.stages.KVStage` over MiniLM with an :class:`AutoIndex`."""
    from eoc.stages import KVStage

    embedder = MiniLMEmbedder(model_dir)
    return KVStage(embedder=embedder, index=AutoIndex(embedder.dim), threshold=threshold, **kwargs)


__all__ = [
    "MINILM_THRESHOLD",
    "PACK_VECTORS",
    "AnnIndex",
    "AutoIndex",
    "CachedEmbedder",
    "ExactIndex",
    "MiniLMEmbedder",
    "default_model_dir",
    "semantic_kv",
    "semantic_kv_options",
]
