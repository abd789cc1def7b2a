"""Falsify breaks: the semantic kv, the Oxigraph store, receipt signing, native commands."""

BREAKS: list[tuple[str, str, str, str]] = [
    (
        "receipt signed by an untrusted key accepted",
        "native/eoc_native/receipts.py",
        "    if signer not in keys:",
        "    if False:",
    ),
    (
        "unsigned receipt accepted with trusted keys",
        "native/eoc_native/receipts.py",
        "    if receipt.signature is None:\n        if keys:",
        "    if receipt.signature is None:\n        if False:",
    ),
    (
        "receipt signature not checked",
        "native/eoc_native/receipts.py",
        '        key.verify(bytes.fromhex(sig["value"]), SIGNATURE_PREFIX + receipt.digest.encode("ascii"))',
        "        pass",
    ),
    (
        "prefetched embedding not used",
        "native/eoc_native/semantic/cache.py",
        "        if pending is not None and pending.exception() is None:  # waits for it to finish",
        "        if False:",
    ),
    (
        "prefetch started twice",
        "native/eoc_native/semantic/cache.py",
        "            if k in self._pending or len(self._pending) >= MAX_PREFETCH:",
        "            if len(self._pending) >= MAX_PREFETCH:",
    ),
    (
        "dense exact index hands accept every candidate",
        "native/eoc_native/semantic/index.py",
        "                if budget == 0:\n                    break",
        "                if False:\n                    break",
    ),
    (
        "embedding cache unpacks a zip bomb",
        "native/eoc_native/semantic/cache.py",
        "            return sum(i.file_size for i in z.infolist()) <= MAX_CACHE_BYTES",
        "            return True",
    ),
    (
        "embedding cache keeps non-finite vectors",
        "native/eoc_native/semantic/cache.py",
        "            and bool(np.isfinite(vecs).all())",
        "            and True",
    ),
    (
        "an Oxigraph file stored before it is checked whole",
        "native/eoc_native/graph/oxigraph.py",
        "                _check_term(t, source, n)",
        "                pass",
    ),
    (
        "Oxigraph matches labels with their case",
        "native/eoc_native/graph/oxigraph.py",
        "              GRAPH {KEYS} {{ ?s {KEY} {ox.Literal(normalize(subject))} .",
        "              GRAPH {KEYS} {{ ?s {KEY} {ox.Literal(subject)} .",
    ),
    (
        "Oxigraph keeps its predicates after a load",
        "native/eoc_native/graph/oxigraph.py",
        "        self._store.flush()\n        self._preds = None",
        "        self._store.flush()",
    ),
    (
        "shipped pack vectors taken whatever model computed them",
        "native/eoc_native/semantic/cache.py",
        '        if model != getattr(self.inner, "fingerprint", None):',
        "        if False:",
    ),
    (
        "a MiniLM vocabulary without special tokens is taken",
        "native/eoc_native/semantic/minilm.py",
        "            if special not in tokens:",
        "            if False:",
    ),
    (
        "damaged MiniLM weights are no input error",
        "native/eoc_native/semantic/minilm.py",
        "        except (OSError, ValueError, TypeError, KeyError, IndexError) as exc:",
        "        except ZeroDivisionError as exc:",
    ),
    (
        "the MiniLM index is made (numpy imported) at start",
        "native/eoc_native/semantic/index.py",
        "        self._made: ExactIndex | AnnIndex | None = None  # made on first use: numpy costs 0.1 s",
        "        self._made: ExactIndex | AnnIndex | None = ExactIndex(dim)",
    ),
]
