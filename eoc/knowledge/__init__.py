"""The seeded knowledge pack shipped inside the package (see ``data/README.md``)."""

from __future__ import annotations

import functools
import threading
from importlib import resources
from pathlib import Path

from eoc.stages.graph import GraphStage, TripleStore
from eoc.stages.kv import KVStage
from eoc.stages.questions import Vocabulary
from eoc.text.facts import Triple, read_ntriples, read_pairs, read_tsv_triples
from eoc.text.forms import normalize

KV_FILES = ("arithmetic.tsv", "constants.tsv")
GRAPH_FILES = (
    "countries.tsv",
    "elements.tsv",
    "planets.nt",
    "space.tsv",
    "services.tsv",
    "si.tsv",
)
VOCABULARY_FILES = ("relations.tsv", "kinds.tsv")


def _read(name: str) -> str:
    return (resources.files(__package__) / "data" / name).read_text(encoding="utf-8")


def kv_pairs() -> list[tuple[str, str]]:
    """Every seeded ``(prompt, answer)`` pair."""
    out: list[tuple[str, str]] = []
    for name in KV_FILES:
        out.extend(pair for _, pair in read_pairs(_read(name), f"eoc/knowledge/data/{name}"))
    return out


def triples() -> list[Triple]:
    """Every seeded triple."""
    return list(_pack_triples())


@functools.cache
def _pack_triples() -> tuple[Triple, ...]:
    out: list[Triple] = []
    for name in GRAPH_FILES:
        source = f"eoc/knowledge/data/{name}"
        reader = read_ntriples if name.endswith(".nt") else read_tsv_triples
        out.extend(reader(_read(name), source))
    return tuple(out)


@functools.cache
def _pack_predicates() -> tuple[str, ...]:
    """The pack's predicates as a :class:`TripleStore` holding it lists them (normalized, in the
    order first seen), read from the files without indexing a triple."""
    return tuple(dict.fromkeys(normalize(p.strip()) for _, p, _ in _pack_triples()))


@functools.cache
def vocabulary() -> Vocabulary:
    """How questions name the pack's relations (``relations.tsv``, ``kinds.tsv``): read once,
    and shared by every graph stage (none changes it)."""
    relations, kinds = (_read(name) for name in VOCABULARY_FILES)
    return Vocabulary.parse(relations, kinds, "eoc/knowledge/data/relations.tsv")


def seeded_kv(**kwargs: object) -> KVStage:
    """A :class:`KVStage` holding the seeded pairs (keyword arguments go to KVStage; with none,
    the core's hashed embedder: :func:`eoc.assemble.kv_options` gives the best one here)."""
    kv = KVStage(**kwargs)  # type: ignore[arg-type]
    kv.defer_pairs(kv_pairs())  # embedded on the first lookup that needs a vector
    return kv


class PackStore(TripleStore):
    """The knowledge pack's triples, read when a question first reaches the graph stage, not
    when the cascade is built: a process whose questions end at the cache or kv (a first
    ``eoc query "what is 2+2"``) never reads the pack's 5,000 triples."""

    def __init__(self) -> None:
        super().__init__()
        self._loaded = False
        self._load_lock = threading.Lock()

    def _ensure(self) -> None:
        if self._loaded:
            return
        with self._load_lock:
            if not self._loaded:
                for t in _pack_triples():
                    TripleStore.add(self, *t)
                self._loaded = True

    def add(self, subject: str, predicate: str, obj: str) -> bool:
        self._ensure()
        return super().add(subject, predicate, obj)

    def load(self, path: str | Path) -> int:
        self._ensure()
        return super().load(path)

    def objects(self, subject: str, predicate: str) -> list[str]:
        self._ensure()
        return super().objects(subject, predicate)

    def subjects(self, predicate: str, obj: str) -> list[str]:
        self._ensure()
        return super().subjects(predicate, obj)

    def predicates(self) -> list[str]:
        # the graph stage's matcher needs only these, and passes most questions on without a
        # lookup: the 5,000 triples are indexed (about 30 ms) when one is looked up
        if not self._loaded:
            return list(_pack_predicates())
        return super().predicates()

    def __len__(self) -> int:
        self._ensure()
        return super().__len__()


def seeded_graph(*, figure_uj: int | None = None) -> GraphStage:
    """A :class:`GraphStage` over a :class:`TripleStore` holding the seeded triples, asked in
    the pack's vocabulary."""
    return GraphStage(TripleStore(triples()), figure_uj=figure_uj, vocabulary=vocabulary())


def pack_counts() -> dict[str, int]:
    """How many kv pairs and triples the pack holds."""
    return {"kv": len(kv_pairs()), "graph": len(triples())}


__all__ = [
    "PackStore",
    "kv_pairs",
    "pack_counts",
    "seeded_graph",
    "seeded_kv",
    "triples",
    "vocabulary",
]
