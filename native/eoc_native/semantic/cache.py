"""A persistent cache of sentence embeddings, so a process that seeds a kv stage with the same
texts as the last one (``eoc query`` each time it starts) does not embed them again.

One ``.npz`` file per model under ``$EOC_CACHE_DIR`` (default ``~/.cache/eoc``), keyed by the
SHA-256 of each text, written atomically by :meth:`CachedEmbedder.flush` — which the kv stage
calls after a bulk load, and which also runs at interpreter exit — not after every batch.

:meth:`CachedEmbedder.prefetch` embeds a text in a background thread: the kv stage asks for it
when a question it did not need to embed (no stored question could match) goes to the model,
whose answer it will then remember; the embedding is ready, or nearly, when the answer is.

**Who may have written it** (issue 35). The vectors decide which stored question a new one
matches, so a cache file (or the shipped vectors' file) is read only when no one but the user
or root could have written it (:func:`eoc.files.trust.check_file`: owned by the user or root,
writable by no one else, in folders no one else can write to; a shared sticky folder such as
``/tmp`` may hold the user's own file). The cache only saves time and is read with
``allow_pickle=False`` (data, never code), so a file that fails is *ignored with a warning*
(:class:`UntrustedCacheWarning`, naming the path and why), never read, and the texts are
embedded again; the next write replaces the file where the folder lets it. A missing cache
folder is made with mode 700.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import stat
import tempfile
import threading
import time
import warnings
import zipfile
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from eoc.cost import JouleCost
from eoc.errors import UntrustedFile
from eoc.files.trust import check_file
from eoc_native import cache_dir, require


class UntrustedCacheWarning(UserWarning):
    """An embedding cache file another user could have written was ignored (not read)."""


def _trusted(path: Path, what: str) -> bool:
    """Whether ``path`` may be read (:func:`eoc.files.trust.check_file`); warns when it may not.
    A missing or unreadable file is just not read (``False``, no warning)."""
    try:
        check_file(path, what=what)
    except UntrustedFile as exc:
        warnings.warn(f"ignored: {exc.reason}", UntrustedCacheWarning, stacklevel=3)
        return False
    except OSError:
        return False
    return True


def text_key(text: str) -> str:
    """The key a text's vector is kept under (its SHA-256)."""
    return _key(text)


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


MAX_ENTRIES = 200_000  # about 300 MB of vectors; past it, new texts are embedded but not kept


PREFETCH_DELAY_S = 0.003
"""How long a prefetch waits before it embeds: the question it was asked for is on its way to the
model meanwhile, and an embedding (Python and numpy holding the interpreter's lock in turns)
would slow sending it by milliseconds. A model takes far longer than this to answer."""

MAX_PREFETCH = 64
"""Embeddings started by :meth:`CachedEmbedder.prefetch` and not finished, at most (more are
not started: ``embed`` then computes them itself)."""

MAX_CACHE_BYTES = 1 << 30
"""The most an embedding cache may hold unpacked (about 700,000 MiniLM vectors)."""


def _bounded_npz(path: Path) -> bool:
    """True when ``path`` is a regular file whose zip members unpack to at most MAX_CACHE_BYTES
    (a device, a FIFO or a zip bomb in the cache folder is ignored, never read)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with zipfile.ZipFile(path) as z:
            return sum(i.file_size for i in z.infolist()) <= MAX_CACHE_BYTES
    except (OSError, zipfile.BadZipFile, ValueError):
        return False


class CachedEmbedder:
    """Wraps a dense embedder; same interface, with a file-backed memory of past embeddings."""

    dense = True

    def __init__(
        self, inner: Any, path: str | Path | None = None, *, seed: str | Path | None = None
    ) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.threshold = getattr(inner, "threshold", None)
        self.rewordings = bool(getattr(inner, "rewordings", False))
        self.path = Path(path) if path is not None else cache_dir() / f"embeddings-{inner.name}.npz"
        self._mem: dict[str, Any] = {}
        self._dirty = False
        self._lock = threading.Lock()
        self._pending: dict[str, Future[Any]] = {}
        self._prefetcher: ThreadPoolExecutor | None = None
        self._seed_path = None if seed is None else Path(seed)
        self._shipped: set[str] = set()  # keys taken from the shipped file only: never saved
        self._loaded = False  # the files are read on first use: numpy costs 0.1 s to import
        atexit.register(self.flush)

    def _ready(self) -> None:
        """Read the cache file and the shipped vectors, once, before the first embedding."""
        if self._loaded:
            return
        with self._lock:
            if self._loaded:
                return
            self._load()
            if self._seed_path is not None:
                self._seed(self._seed_path)
            self._loaded = True

    def _load(self) -> None:
        np = require("numpy")
        if not _trusted(self.path, "the embedding cache") or not _bounded_npz(self.path):
            return  # no cache yet, or not one this process should read: start empty
        try:
            with np.load(self.path, allow_pickle=False) as data:
                keys, vecs = data["keys"], data["vectors"]
        except (OSError, KeyError, ValueError, EOFError):
            return  # an unreadable cache: start empty (it only saves time)
        if (
            vecs.ndim == 2
            and vecs.shape[1] == self.dim
            and len(keys) == len(vecs)
            and bool(np.isfinite(vecs).all())
        ):
            self._mem = {str(k): v for k, v in zip(keys, vecs, strict=True)}

    def _seed(self, path: Path) -> None:
        """Take the vectors of a file shipped with eoc (the knowledge pack's questions, see
        ``scripts/build_pack_vectors.py``) when they were computed by this very model; they
        are never written to the user's cache (each start reads them from the shipped file,
        and a user's cache holding them too would make every start read them twice)."""
        np = require("numpy")
        if not _trusted(path, "the shipped vectors' file") or not _bounded_npz(path):
            return
        try:
            with np.load(path, allow_pickle=False) as data:
                model, keys, vecs = str(data["model"]), data["keys"], data["vectors"]
        except (OSError, KeyError, ValueError, EOFError):
            return
        if model != getattr(self.inner, "fingerprint", None):
            return  # other weights: their vectors would not match this model's
        if vecs.ndim == 2 and vecs.shape[1] == self.dim and len(keys) == len(vecs):
            for k, v in zip(keys, vecs, strict=True):
                if str(k) not in self._mem:
                    self._mem[str(k)] = v
                    self._shipped.add(str(k))

    def save(self) -> None:
        np = require("numpy")
        with self._lock:  # what the shipped file holds is read from it again, not copied here
            own = [(k, v) for k, v in self._mem.items() if k not in self._shipped]
            if not own:
                return
            keys = np.array([k for k, _ in own])
            vecs = np.stack([v for _, v in own]).astype(np.float32)
        if not self.path.parent.is_dir():
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".embeddings.", suffix=".npz", dir=self.path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez(f, keys=keys, vectors=vecs)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def flush(self) -> None:
        """Write the cache file if anything new was embedded in a batch since the last write."""
        if not self._dirty:
            return
        try:
            self.save()
            self._dirty = False
        except OSError:
            pass  # a read-only home: the cache is an optimisation, the embeddings are right

    def prefetch(self, text: str) -> None:
        """Start embedding ``text`` in a background thread; :meth:`embed` takes the result (or
        waits for it). Nothing happens for a text already known or being embedded."""
        self._ready()
        k = _key(text)
        if k in self._mem:
            return
        with self._lock:
            if k in self._pending or len(self._pending) >= MAX_PREFETCH:
                return
            if self._prefetcher is None:
                self._prefetcher = ThreadPoolExecutor(1, thread_name_prefix="eoc-embed")
            future = self._prefetcher.submit(self._later, text)
            self._pending[k] = future
        future.add_done_callback(lambda f: self._prefetched(k, f))

    def _later(self, text: str) -> Any:
        time.sleep(PREFETCH_DELAY_S)
        return self.inner.embed(text)

    def _prefetched(self, k: str, future: Future[Any]) -> None:
        with self._lock:
            self._pending.pop(k, None)
            if future.exception() is None and len(self._mem) < MAX_ENTRIES:
                self._mem[k] = future.result()

    def embed(self, text: str) -> Any:
        self._ready()
        k = _key(text)
        hit = self._mem.get(k)
        if hit is not None:
            return hit
        pending = self._pending.get(k)
        if pending is not None and pending.exception() is None:  # waits for it to finish
            return pending.result()
        v = self.inner.embed(text)
        with self._lock:
            if len(self._mem) < MAX_ENTRIES:
                self._mem[k] = v
        return v

    def embed_estimate(self, text: str) -> JouleCost | None:
        """What embedding ``text`` is estimated to cost, as the wrapped embedder says (``None``
        where it says nothing). An upper bound where the vector was remembered, which costs a
        lookup instead."""
        estimate = getattr(self.inner, "embed_estimate", None)
        return estimate(text) if callable(estimate) else None

    def embed_batch(self, texts: Sequence[str]) -> Any:
        self._ready()
        np = require("numpy")
        keys = [_key(t) for t in texts]
        missing = [i for i, k in enumerate(keys) if k not in self._mem]
        fresh_by_key: dict[str, Any] = {}
        if missing:
            fresh = self.inner.embed_batch([texts[i] for i in missing])
            with self._lock:
                for i, v in zip(missing, fresh, strict=True):
                    fresh_by_key[keys[i]] = v
                    if len(self._mem) < MAX_ENTRIES:
                        self._mem[keys[i]] = v
                        self._dirty = True
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([fresh_by_key[k] if k in fresh_by_key else self._mem[k] for k in keys])


__all__ = ["CachedEmbedder", "UntrustedCacheWarning", "cache_dir"]
