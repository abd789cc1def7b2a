"""A model file's header values, checked against each other, the tensors and a memory ceiling.

A GGUF header states the model's shape (``llama.embedding_length``, the head counts, the rope
dimension count, the context length, ...) in a few bytes each, and the runner sizes its buffers
by them: a ``llama.rope.dimension_count`` of 150,000 once asked for 3.8 GB, 20 M for 153 GiB
(issue 35). Nothing here allocates by a header value. :func:`hyperparameters` reads each value
the runner uses and refuses one of the wrong type, not finite, or out of its range;
:func:`check_model` then checks that they agree with the tensors they describe (each tensor's
dims, the layer count, the vocabulary) and that the memory they imply at the context used (the
KV cache and the rope tables) stays under :func:`memory_ceiling`. The tensor table itself (each
tensor's type, dims and offset against the file's size) is checked as the file is opened
(:class:`eoc_native.llm.gguf.GGUFFile`).

Every refusal is a :class:`~eoc.errors.ModelFileError` that names the file and the field.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eoc.errors import InputError, ModelFileError
from eoc_native.quant.formats import SUPPORTED_TYPES

if TYPE_CHECKING:
    from eoc_native.llm.gguf import GGUFFile


@dataclass(frozen=True)
class Architecture:
    """What sets one ``general.architecture`` the runner reads apart from another.

    Both are the Llama block (RMSNorm, grouped-query attention, SwiGLU); they differ in llama.cpp
    (``llama_model_rope_type``, ``llm_build_qwen2``) by:
    """

    name: str
    rope_neox: bool
    """Rope turns the pairs ``(j, j + rope_dim / 2)`` of a head (llama.cpp's NEOX mode, HF's
    ``rotate_half``), not the adjacent ``(2j, 2j + 1)`` (NORM). llama.cpp's converter permutes a
    Llama's q and k rows so that NORM computes HF's rope; a qwen2 file's rows are HF's own."""
    qkv_bias: bool
    """Every block has ``attn_q.bias``, ``attn_k.bias``, ``attn_v.bias`` (a Llama file may too)."""


ARCHITECTURES = {
    a.name: a
    for a in (
        Architecture("llama", rope_neox=False, qkv_bias=False),
        Architecture("qwen2", rope_neox=True, qkv_bias=True),
    )
}
SUPPORTED_ARCHITECTURES = tuple(ARCHITECTURES)

MAX_CONTEXT = 1 << 24
"""The longest ``context_length`` a model file may state (16 M tokens; Llama 3.1 states 128 K)."""
MAX_WIDTH = 1 << 20
"""The most any width (embedding, feed-forward, head dimension) or count may be."""
MAX_ROPE_BASE = 1e12
MAX_ROPE_SCALING = 1024.0

MAX_MODEL_MEMORY = 32 << 30
"""The most memory (32 GiB) the buffers a model's header sizes may take at the context used,
whatever the file's size."""
MEMORY_FLOOR = 256 << 20
MEMORY_PER_FILE_BYTE = 8
"""Below :data:`MAX_MODEL_MEMORY`, those buffers may take at most this many bytes per byte of the
model file, plus :data:`MEMORY_FLOOR` (SmolLM2's take 0.1 GB at 2,048 tokens, its file 0.1 GB)."""

DAMAGED = "the file is damaged, or not a model eoc runs"


def _shown(value: Any) -> str:
    if isinstance(value, str | bytes):
        return repr(value)
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return repr(value)


def refusal(source: object, field: str, value: Any, why: str) -> ModelFileError:
    """The error for ``field`` of the file ``source`` holding ``value``: ``why`` says what it
    should be."""
    return ModelFileError(f"{source}: {field} is {_shown(value)}, but {why}: {DAMAGED}")


def memory_ceiling(file_size: int) -> int:
    """The most bytes the buffers a header sizes may take for a file of ``file_size`` bytes."""
    return min(MAX_MODEL_MEMORY, MEMORY_FLOOR + MEMORY_PER_FILE_BYTE * max(0, file_size))


class _Reader:
    """Typed, range-checked reads of one architecture's metadata keys."""

    def __init__(self, md: Mapping[str, Any], source: object) -> None:
        self.md = md
        self.source = source

    def whole(self, key: str, lo: int, hi: int, default: int | None = None) -> int:
        """``key`` as a whole number from ``lo`` to ``hi``; ``default`` where absent (``None``:
        it must be there)."""
        if key not in self.md:
            if default is None:
                raise ModelFileError(f"{self.source}: the GGUF metadata lacks {key}: {DAMAGED}")
            return default
        value = self.md[key]
        if isinstance(value, bool) or not isinstance(value, int):
            raise refusal(self.source, key, value, "it must be a whole number")
        if not lo <= value <= hi:
            raise refusal(self.source, key, value, f"it must be from {lo:,} to {hi:,}")
        return value

    def real(
        self, key: str, lo: float, hi: float, default: float | None, *, lo_open: bool = True
    ) -> float:
        """``key`` as a finite float in ``(lo, hi]`` (``[lo, hi]`` without ``lo_open``);
        ``default`` where absent (``None``: it must be there)."""
        if key not in self.md:
            if default is None:
                raise ModelFileError(f"{self.source}: the GGUF metadata lacks {key}: {DAMAGED}")
            return default
        value = self.md[key]
        if not isinstance(value, float):
            raise refusal(self.source, key, value, "it must be a floating-point number")
        if not math.isfinite(value) or not (lo < value if lo_open else lo <= value) or value > hi:
            bounds = f"{'above' if lo_open else 'at least'} {lo:g} and at most {hi:g}"
            raise refusal(self.source, key, value, f"it must be a finite number {bounds}")
        return value


def hyperparameters(md: Mapping[str, Any], source: object = "the model file") -> dict[str, Any]:
    """The arguments of :class:`ModelArgs` read from GGUF metadata ``md``,
    each checked for type and range (``source`` names the file in a refusal)."""
    arch = md.get("general.architecture")
    if arch not in SUPPORTED_ARCHITECTURES:
        raise ModelFileError(
            f"{source}: general.architecture is {_shown(arch)}: model architecture {arch!r} is "
            f"not supported (supported: {', '.join(SUPPORTED_ARCHITECTURES)})"
        )
    r = _Reader(md, source)
    p = f"{arch}."
    dim = r.whole(p + "embedding_length", 1, MAX_WIDTH)
    n_layers = r.whole(p + "block_count", 1, 1 << 16)
    n_heads = r.whole(p + "attention.head_count", 1, dim)
    n_kv = r.whole(p + "attention.head_count_kv", 1, n_heads, n_heads)
    if n_heads % n_kv:
        raise refusal(
            source,
            p + "attention.head_count_kv",
            n_kv,
            f"{p}attention.head_count ({n_heads}) must be a whole multiple of it",
        )
    if p + "attention.key_length" in md:
        head_dim = r.whole(p + "attention.key_length", 1, MAX_WIDTH)
    elif dim % n_heads:
        raise refusal(
            source,
            p + "attention.head_count",
            n_heads,
            f"{p}embedding_length ({dim}) is no whole multiple of it (and no "
            f"{p}attention.key_length gives the head dimension)",
        )
    else:
        head_dim = dim // n_heads
    if head_dim % 2:
        raise refusal(
            source,
            p + "attention.key_length" if p + "attention.key_length" in md else p + "attention.head_count",
            md.get(p + "attention.key_length", n_heads),
            f"the head dimension it gives ({head_dim}) must be even (rope turns pairs)",
        )  # fmt: skip
    value_length = r.whole(p + "attention.value_length", 1, MAX_WIDTH, head_dim)
    if value_length != head_dim:
        raise refusal(
            source,
            p + "attention.value_length",
            value_length,
            f"eoc runs models whose values are as wide as their keys ({head_dim}: "
            f"{p}attention.key_length, or {p}embedding_length / {p}attention.head_count)",
        )
    rope_dim = r.whole(p + "rope.dimension_count", 1, MAX_WIDTH, head_dim)
    if rope_dim > head_dim or rope_dim % 2:
        raise refusal(
            source,
            p + "rope.dimension_count",
            rope_dim,
            f"the head dimension is {head_dim} ({p}attention.key_length, or "
            f"{p}embedding_length / {p}attention.head_count): it must be even and at most that",
        )
    scaling = md.get(p + "rope.scaling.type", "none")
    if scaling not in ("none", "linear"):
        raise ModelFileError(
            f"{source}: {p}rope.scaling.type is {_shown(scaling)}: rope scaling {scaling!r} is "
            "not supported (only linear)"
        )
    factor = r.real(p + "rope.scaling.factor", 0.0, MAX_ROPE_SCALING, 1.0, lo_open=False)
    factor = factor or 1.0  # 0 is no scaling, as llama.cpp reads it
    experts = r.whole(p + "expert_count", 0, 1 << 16, 0)
    used = r.whole(p + "expert_used_count", 0, 1 << 16, 0)
    if experts:
        raise refusal(
            source,
            p + "expert_count",
            experts,
            "eoc runs dense models only, not mixtures of experts",
        )
    if used:
        raise refusal(source, p + "expert_used_count", used, f"{p}expert_count is 0")
    n_tokens = len(md.get("tokenizer.ggml.tokens") or [])
    vocab = r.whole(p + "vocab_size", 1, 1 << 24, n_tokens)
    return {
        "dim": dim,
        "n_layers": n_layers,
        "n_heads": n_heads,
        "n_kv_heads": n_kv,
        "head_dim": head_dim,
        "hidden_dim": r.whole(p + "feed_forward_length", 1, 1 << 24),
        "vocab_size": vocab,
        "context_length": r.whole(p + "context_length", 1, MAX_CONTEXT),
        "norm_eps": r.real(p + "attention.layer_norm_rms_epsilon", 0.0, 0.5, None),
        "rope_base": r.real(p + "rope.freq_base", 1.0, MAX_ROPE_BASE, 10000.0),
        "rope_dim": rope_dim,
        "rope_linear_factor": factor if scaling == "linear" else 1.0,
        "architecture": arch,
    }


_LAYER = re.compile(r"blk\.(\d+)\.")


@dataclass(frozen=True)
class ModelArgs:
    """Hyper-parameters of a Llama-family model, from its architecture's GGUF metadata keys
    (``llama.*``, ``qwen2.*``: :data:`ARCHITECTURES`)."""

    dim: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    hidden_dim: int
    vocab_size: int
    context_length: int
    norm_eps: float
    rope_base: float
    rope_dim: int
    rope_linear_factor: float = 1.0
    architecture: str = "llama"

    @property
    def arch(self) -> Architecture:
        """What the architecture changes in the model (:data:`ARCHITECTURES`)."""
        return ARCHITECTURES[self.architecture]

    @classmethod
    def from_metadata(cls, md: Mapping[str, Any], source: object = "the model file") -> ModelArgs:
        """Read the arguments, each checked for type and range (:func:`.shape.hyperparameters`);
        raise :class:`~eoc.errors.ModelFileError` naming the key otherwise."""
        return cls(**hyperparameters(md, source))


def check_model(gf: GGUFFile, args: ModelArgs, n_ctx: int) -> int:
    """Check ``args`` (read from ``gf``'s header) against ``gf``'s tensors and vocabulary, and the
    memory of an ``n_ctx``-token context against :func:`memory_ceiling`; return the context the
    model will use. Allocates nothing sized by the header."""
    if isinstance(n_ctx, bool) or not isinstance(n_ctx, int) or n_ctx < 1:
        raise InputError(f"n_ctx must be a whole number of tokens, at least 1, not {n_ctx!r}")
    source = gf.path
    md = gf.metadata
    _check_vocabulary(md, source, args)
    arch = args.architecture
    hd, q, kv = args.head_dim, args.n_heads * args.head_dim, args.n_kv_heads * args.head_dim
    emb, ffn = f"{arch}.embedding_length", f"{arch}.feed_forward_length"
    heads = f"{arch}.attention.head_count × the head dimension ({hd}: {arch}.attention.key_length)"
    kv_heads = (
        f"{arch}.attention.head_count_kv × the head dimension ({hd}: {arch}.attention.key_length)"
    )
    vocab = f"the vocabulary (tokenizer.ggml.tokens, {arch}.vocab_size)"
    want: dict[str, tuple[tuple[int, ...], str]] = {
        "token_embd.weight": ((args.dim, args.vocab_size), f"{emb}, {vocab}"),
        "output_norm.weight": ((args.dim,), emb),
    }
    if gf.has_tensor("output.weight"):
        want["output.weight"] = ((args.dim, args.vocab_size), f"{emb}, {vocab}")
    if gf.has_tensor("rope_freqs.weight"):
        want["rope_freqs.weight"] = ((args.rope_dim // 2,), f"half of {arch}.rope.dimension_count")
    for i in range(args.n_layers):
        b = f"blk.{i}."
        want.update(
            {
                b + "attn_norm.weight": ((args.dim,), emb),
                b + "ffn_norm.weight": ((args.dim,), emb),
                b + "attn_q.weight": ((args.dim, q), f"{emb}, {heads}"),
                b + "attn_k.weight": ((args.dim, kv), f"{emb}, {kv_heads}"),
                b + "attn_v.weight": ((args.dim, kv), f"{emb}, {kv_heads}"),
                b + "attn_output.weight": ((q, args.dim), f"{heads}, {emb}"),
                b + "ffn_gate.weight": ((args.dim, args.hidden_dim), f"{emb}, {ffn}"),
                b + "ffn_up.weight": ((args.dim, args.hidden_dim), f"{emb}, {ffn}"),
                b + "ffn_down.weight": ((args.hidden_dim, args.dim), f"{ffn}, {emb}"),
            }
        )
        if args.arch.qkv_bias or any(gf.has_tensor(f"{b}attn_{x}.bias") for x in "qkv"):
            # all three or none (a Llama file may have them, as llama.cpp reads it)
            want.update(
                {
                    b + "attn_q.bias": ((q,), heads),
                    b + "attn_k.bias": ((kv,), kv_heads),
                    b + "attn_v.bias": ((kv,), kv_heads),
                }
            )
        if not gf.has_tensor(b + "attn_norm.weight"):
            raise ModelFileError(
                f"{source}: the file has no tensor {b}attn_norm.weight, but {arch}.block_count "
                f"is {args.n_layers}: {DAMAGED}"
            )
    for name, (dims, why) in want.items():
        got = gf.tensor_dims(name)
        if got is None:
            raise ModelFileError(f"{source}: the file has no tensor {name}: {DAMAGED}")
        if got != dims:
            raise ModelFileError(
                f"{source}: tensor {name} is {list(got)} (GGML order), but the header makes it "
                f"{list(dims)} ({why}): {DAMAGED}"
            )
        kind = gf.tensor_type(name)
        if kind not in SUPPORTED_TYPES:
            raise ModelFileError(
                f"{source}: tensor {name} has type {kind}, which this runner does not read "
                f"(supported: {', '.join(SUPPORTED_TYPES)})"
            )
    for name in gf.tensor_names():
        layer = _LAYER.match(name)
        if layer is not None and int(layer.group(1)) >= args.n_layers:
            raise ModelFileError(
                f"{source}: the file has tensor {name}, but {arch}.block_count is "
                f"{args.n_layers}: {DAMAGED}"
            )
    ctx = min(n_ctx, args.context_length)
    need = runtime_bytes(args, ctx)
    ceiling = memory_ceiling(gf.size)
    if need > ceiling:
        raise ModelFileError(
            f"{source}: at a context of {ctx:,} tokens (n_ctx {n_ctx:,}, "
            f"{arch}.context_length {args.context_length:,}) its KV cache and rope tables would "
            f"take {need / 2**30:,.2f} GiB of memory, more than eoc allows a model file of "
            f"{gf.size / 1e6:,.1f} MB ({ceiling / 2**30:,.2f} GiB: {MEMORY_PER_FILE_BYTE} bytes a "
            f"byte of the file and {MEMORY_FLOOR >> 20} MiB, at most {MAX_MODEL_MEMORY >> 30} "
            "GiB): load it with a smaller n_ctx, or the file is damaged"
        )
    return ctx


def runtime_bytes(args: ModelArgs, ctx: int) -> int:
    """The bytes the buffers sized by the header take at a context of ``ctx`` tokens: the KV
    cache (float32 keys and values, every layer) and the rope tables (float32 cos and sin, and
    the float64 angles they are made from)."""
    kv = 2 * args.n_layers * ctx * args.n_kv_heads * args.head_dim * 4
    rope = ctx * (args.rope_dim // 2) * (2 * 4 + 3 * 8)
    per_token = 4 * (4 * args.dim + 3 * args.hidden_dim + 2 * args.vocab_size)
    return kv + rope + per_token


def _check_vocabulary(md: Mapping[str, Any], source: Path | str, args: ModelArgs) -> None:
    """The tokenizer's keys: a list of strings as long as the embedding's vocabulary, a type per
    token, merges as strings, and special token ids inside the vocabulary."""
    model = md.get("tokenizer.ggml.model")
    if model not in ("gpt2", "llama"):
        raise refusal(
            source,
            "tokenizer.ggml.model",
            model,
            "eoc reads 'gpt2' (byte-level BPE) and 'llama' (SentencePiece BPE) tokenizers",
        )
    pre = md.get("tokenizer.ggml.pre", "default")
    if not isinstance(pre, str):
        raise refusal(source, "tokenizer.ggml.pre", pre, "it must be a pre-tokenizer's name")
    tokens = md.get("tokenizer.ggml.tokens")
    if not isinstance(tokens, list) or not tokens:
        raise refusal(source, "tokenizer.ggml.tokens", tokens, "it must be the list of tokens")
    if not all(isinstance(t, str) for t in tokens):
        raise refusal(source, "tokenizer.ggml.tokens", tokens, "every token must be a string")
    n = len(tokens)
    if args.vocab_size != n:
        raise refusal(
            source,
            f"{args.architecture}.vocab_size",
            args.vocab_size,
            f"tokenizer.ggml.tokens holds {n:,}",
        )
    for key in ("tokenizer.ggml.token_type", "tokenizer.ggml.scores"):
        if key in md:
            values = md[key]
            kind = int if key.endswith("type") else (int, float)
            if (
                not isinstance(values, list)
                or len(values) != n
                or not all(isinstance(v, kind) and not isinstance(v, bool) for v in values)
            ):
                raise refusal(
                    source, key, values, f"it must hold a {'whole ' if kind is int else ''}"
                    f"number for each of the {n:,} tokens"
                )  # fmt: skip
    merges = md.get("tokenizer.ggml.merges", [])
    if not isinstance(merges, list) or not all(isinstance(m, str) for m in merges):
        raise refusal(source, "tokenizer.ggml.merges", merges, "it must be a list of strings")
    for key in (
        "tokenizer.ggml.bos_token_id",
        "tokenizer.ggml.eos_token_id",
        "tokenizer.ggml.unknown_token_id",
    ):
        if key in md:
            _Reader(md, source).whole(key, 0, n - 1)


__all__ = [
    "ARCHITECTURES",
    "MAX_CONTEXT",
    "MAX_MODEL_MEMORY",
    "MEMORY_FLOOR",
    "MEMORY_PER_FILE_BYTE",
    "SUPPORTED_ARCHITECTURES",
    "Architecture",
    "check_model",
    "hyperparameters",
    "memory_ceiling",
    "refusal",
    "runtime_bytes",
]
