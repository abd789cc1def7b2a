"""The four stages of the cascade and what they share."""

from eoc.stages.base import DEFAULT_FIGURE_UJ, Answer, stage_figure
from eoc.stages.cache import CacheStage
from eoc.stages.contract import Memo, StageLike
from eoc.stages.embed import Embedder, HashedNgramEmbedder
from eoc.stages.graph import GraphStage, QuestionMatcher, TripleSource, TripleStore
from eoc.stages.index import SparseIndex, VectorIndex
from eoc.stages.kv import DEFAULT_THRESHOLD, KVStage
from eoc.stages.neural import Backend, EchoBackend, NeuralStage, Reply
from eoc.text.facts import Triple, read_ntriples, read_pairs, read_tsv_triples

__all__ = [
    "DEFAULT_FIGURE_UJ",
    "DEFAULT_THRESHOLD",
    "Answer",
    "Backend",
    "CacheStage",
    "EchoBackend",
    "Embedder",
    "GraphStage",
    "HashedNgramEmbedder",
    "KVStage",
    "Memo",
    "NeuralStage",
    "QuestionMatcher",
    "Reply",
    "SparseIndex",
    "StageLike",
    "Triple",
    "TripleSource",
    "TripleStore",
    "VectorIndex",
    "read_ntriples",
    "read_pairs",
    "read_tsv_triples",
    "stage_figure",
]
