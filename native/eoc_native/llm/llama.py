"""A Llama-family transformer in numpy, loaded from a GGUF file.

Read top to bottom, :meth:`Llama.forward` is the whole model: token embedding, then per layer
RMSNorm -> grouped-query attention with rotary position embeddings and a KV cache -> residual,
RMSNorm -> SwiGLU MLP -> residual, then a final RMSNorm and the output projection.

Two architectures (:data:`eoc_native.llm.shape.ARCHITECTURES`): ``llama`` and ``qwen2``, whose
blocks add a bias to q, k and v after their products and whose rope turns the two halves of a
head (llama.cpp's NEOX mode), not adjacent pairs. The runner rotates adjacent pairs only (here
and in the compiled kernels): a qwen2 file's q and k rows, and their biases, are taken at load in
the order :func:`neox_rows` gives, which puts dims ``j`` and ``j + half`` of each head side by
side. Attention reads q and k only through their dot products, so the same order on both changes
nothing else (llama.cpp's converter does the same to a Llama's q and k, the other way round).

Every matrix product goes through the model's :class:`~eoc_native.autotune.dispatch.Dispatcher`:
the products with a weight (:meth:`Dispatcher.apply`, each weight prepared once per backend,
kept quantized as the file stores it until a backend wants another form) and the attention's
products of activations (:meth:`Llama._product`, counted as numpy's).

One token at a time (decoding), when the dispatcher runs every layer's products on the
quantized CPU kernels (its default for a 4-bit model), each layer is one compiled call
(:func:`eoc_native.quant.kernels.decode_layer`): the same products, norms and attention, with
no Python between them. The dispatcher still counts each product, as if it had run it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from eoc.errors import EocError, InputError, ModelFileError, PromptTooLong
from eoc_native.autotune.dispatch import DispatchedWeight, Dispatcher
from eoc_native.llm.gguf import GGUFFile
from eoc_native.llm.layout_cache import LayoutCache
from eoc_native.llm.shape import ModelArgs, check_model
from eoc_native.llm.threads import Pools
from eoc_native.llm.weights import Weight, read_weight
from eoc_native.memory import zeroed
from eoc_native.quant import load_kernels
from eoc_native.quant.formats import dequantize

Array = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Layer:
    """One transformer block's weights: norms as float32 vectors, matrices for ``x @ W``."""

    attn_norm: Array
    wqkv: DispatchedWeight  # q, k and v side by side: one product instead of three
    wo: DispatchedWeight
    ffn_norm: Array
    w_gate_up: DispatchedWeight  # gate and up side by side, for the same reason
    w_down: DispatchedWeight
    bqkv: Array | None = None  # q, k and v's biases side by side (qwen2), added after wqkv


class Embedding:
    """Token embedding rows, dequantized on lookup (the table stays as the file stores it)."""

    def __init__(self, gf: GGUFFile, name: str = "token_embd.weight") -> None:
        self.raw, self.type_name, shape = gf.raw(name)
        if len(shape) != 2:
            raise InputError(f"{gf.path}: {name} is not a matrix (shape {shape})")
        self.vocab, self.dim = shape
        if self.raw.shape[0] != self.vocab:  # plain float types come back flat
            self.raw = self.raw.reshape(self.vocab, -1)

    def __getitem__(self, ids: npt.NDArray[np.int64]) -> Array:
        raw = np.asarray(self.raw[ids])
        if self.type_name == "Q8_0" and self.dim % 32 == 0:  # every decode step: no gguf detour
            blocks = raw.reshape(len(ids), self.dim // 32, 34)
            scales = blocks[:, :, :2].copy().view(np.float16).astype(np.float32)
            q = blocks[:, :, 2:].view(np.int8).astype(np.float32)
            return (q * scales).reshape(len(ids), self.dim)
        rows = dequantize(raw, self.type_name)
        return rows.reshape(len(ids), self.dim)


class Llama:
    """A Llama model with its KV cache; feed it tokens with :meth:`forward`."""

    def __init__(
        self,
        args: ModelArgs,
        token_embd: Embedding,
        layers: Sequence[Layer],
        output_norm: Array,
        output: DispatchedWeight,
        dispatcher: Dispatcher,
        *,
        n_ctx: int = 512,
        rope_freq_factors: Array | None = None,
        threads: int | None = None,
    ) -> None:
        """Wrap prepared weights; ``n_ctx`` bounds the KV cache (and so the sequence length);
        ``threads`` is the kernels' thread count (:mod:`eoc_native.llm.threads`)."""
        self.args = args
        self.n_ctx = min(n_ctx, args.context_length)
        self.token_embd = token_embd  # rows by token id
        self.layers = list(layers)
        self.output_norm = output_norm
        self.output = output  # (dim, vocab)
        self.dispatcher = dispatcher
        cache = (args.n_layers, self.n_ctx, args.n_kv_heads, args.head_dim)
        self.cache_k = zeroed(cache, np.float32)  # plain pages: no huge-page stall (memory.py)
        self.cache_v = zeroed(cache, np.float32)
        self.pos = 0  # how many positions the cache holds
        self.cos, self.sin = rope_tables(args, self.n_ctx, rope_freq_factors)
        self._k = _kernels_or_none()
        self._fused = self._k.decode_attention if self._k is not None and _fusable(args) else None
        self._decode: _DecodePlan | None = None
        self.pools = Pools(self._k, threads)

    @classmethod
    def from_gguf(
        cls,
        gf: GGUFFile,
        *,
        n_ctx: int = 512,
        dispatcher: Dispatcher | None = None,
        progress: Callable[[str, float], None] | None = None,
        layouts: LayoutCache | None = None,
        threads: int | None = None,
    ) -> Llama:
        """Read the weights of a ``llama`` or ``qwen2`` GGUF file (quantized ones stay quantized).

        ``progress(what, fraction)`` is told after each layer. ``layouts`` keeps the tiled
        quantized matrices on disk and maps them on later loads (:mod:`.layout_cache`).

        The header's values are checked against the tensors and the memory they imply at this
        ``n_ctx`` (:func:`.shape.check_model`) before anything is allocated.
        """
        args = ModelArgs.from_metadata(gf.metadata, gf.path)
        check_model(gf, args, n_ctx)
        dispatcher = dispatcher or Dispatcher()
        try:
            return cls._read(gf, args, n_ctx, dispatcher, progress, layouts, threads)
        finally:
            if layouts is not None:
                layouts.close()  # a file this load began and did not finish is removed

    @classmethod
    def _read(
        cls,
        gf: GGUFFile,
        args: ModelArgs,
        n_ctx: int,
        dispatcher: Dispatcher,
        progress: Callable[[str, float], None] | None,
        layouts: LayoutCache | None,
        threads: int | None,
    ) -> Llama:
        def t(name: str) -> Array:
            # the vectors (norms, rope frequency factors): a NaN or infinity in one makes every
            # answer NaN (an empty answer), so each is checked; the factors divide, so positive
            out = gf.tensor(name)
            if not np.isfinite(out).all() or (name == "rope_freqs.weight" and (out <= 0).any()):
                raise ModelFileError(
                    f"{gf.path}: tensor {name} holds a value that is not a finite number"
                    f"{' above 0' if name == 'rope_freqs.weight' else ''}: the file is damaged"
                )
            return out

        def w(
            *names: str, row_orders: Mapping[str, npt.NDArray[np.intp]] | None = None
        ) -> DispatchedWeight:
            label = "+".join(names)
            if row_orders:  # another layout of the same tensors: cached under another label
                label += "@neox-rows"
            if layouts is None:
                return dispatcher.weight(read_weight(gf, *names, row_orders=row_orders))
            kept = layouts.get(label)
            if kept is not None:
                return dispatcher.weight(Weight(label, quant=kept))
            # tiled straight into the pages of the layout file this load writes
            weight = read_weight(gf, *names, alloc=layouts.alloc, row_orders=row_orders)
            if weight.quant is not None:
                layouts.put(label, weight.quant)
            return dispatcher.weight(weight)

        q_rows = k_rows = None
        if args.arch.rope_neox:  # the halves of each head side by side (the module's docstring)
            q_rows = neox_rows(args.n_heads, args.head_dim, args.rope_dim)
            k_rows = neox_rows(args.n_kv_heads, args.head_dim, args.rope_dim)

        def qkv(b: str) -> tuple[DispatchedWeight, Array | None]:
            names = (b + "attn_q.weight", b + "attn_k.weight", b + "attn_v.weight")
            orders = (
                {} if q_rows is None or k_rows is None else {names[0]: q_rows, names[1]: k_rows}
            )
            wqkv = w(*names, row_orders=orders)
            if not gf.has_tensor(b + "attn_q.bias"):
                return wqkv, None
            biases = [t(b + f"attn_{x}.bias") for x in "qkv"]
            if q_rows is not None:
                biases[0], biases[1] = biases[0][q_rows], biases[1][k_rows]
            return wqkv, np.ascontiguousarray(np.concatenate(biases), dtype=np.float32)

        layers = []
        for i in range(args.n_layers):
            b = f"blk.{i}."
            wqkv, bqkv = qkv(b)
            layers.append(
                Layer(
                    attn_norm=t(b + "attn_norm.weight"),
                    wqkv=wqkv,
                    wo=w(b + "attn_output.weight"),
                    ffn_norm=t(b + "ffn_norm.weight"),
                    w_gate_up=w(b + "ffn_gate.weight", b + "ffn_up.weight"),
                    w_down=w(b + "ffn_down.weight"),
                    bqkv=bqkv,
                )
            )
            gf.drop_pages()  # this layer's bytes are copied out
            if progress is not None:
                progress(
                    f"loading {gf.path.name}: layer {i + 1}/{args.n_layers}",
                    (i + 1) / args.n_layers,
                )
        # Tied embeddings (no output.weight): the output projection is the embedding table.
        output = w("output.weight" if gf.has_tensor("output.weight") else "token_embd.weight")
        gf.drop_pages()
        if layouts is not None:
            layouts.save()  # written whole when this load tiled anything
        freq_factors = t("rope_freqs.weight") if gf.has_tensor("rope_freqs.weight") else None
        return cls(
            args,
            Embedding(gf),
            layers,
            t("output_norm.weight"),
            output,
            dispatcher,
            n_ctx=n_ctx,
            rope_freq_factors=freq_factors,
            threads=threads,
        )

    def weights(self) -> list[DispatchedWeight]:
        """Every weight the dispatcher runs, in order of use."""
        out = []
        for layer in self.layers:
            out += [layer.wqkv, layer.wo, layer.w_gate_up, layer.w_down]
        return [*out, self.output]

    def _product(self, a: Array, b: Array) -> Array:
        """An attention product of activations (batched over heads), counted by the dispatcher."""
        out: Array = np.matmul(a, b)
        self.dispatcher.calls[("numpy", f"{a.shape[-2]}x{a.shape[-1]}x{b.shape[-1]}")] += int(
            np.prod(a.shape[:-2], dtype=np.int64)
        )
        return out

    def reset(self) -> None:
        """Forget the sequence so far (the cache is overwritten, not cleared)."""
        self.pos = 0

    def rewind(self, keep: int) -> None:
        """Keep only the first ``keep`` positions of the sequence (a prompt that starts with the
        same tokens as the last one reads only what follows them)."""
        if not 0 <= keep <= self.pos:
            raise InputError(f"rewind keeps 0..{self.pos} positions, not {keep}")
        self.pos = keep

    def forward(
        self,
        tokens: Sequence[int],
        *,
        all_logits: bool = False,
        logit_ids: Sequence[int] | None = None,
    ) -> Array:
        """Run ``tokens`` after those already in the cache; return next-token logits.

        Args:
            tokens: new token ids, appended at position :attr:`pos`.
            all_logits: return a row per new token, not only the last one.
            logit_ids: return the last token's logits for these vocabulary ids only, in this
                order: only their columns of the output matrix are read (a yes/no judge reads
                two of Qwen2.5's 151,936: 0.03 ms, not 29 ms, on 2 cores; bench/qwen2.py).

        Returns:
            float32 logits, shape ``(len(tokens), vocab)``, ``(1, vocab)`` or
            ``(1, len(logit_ids))``.
        """
        n = len(tokens)
        if n == 0:
            raise InputError("forward() needs at least one token")
        picked = None
        if logit_ids is not None:
            picked = np.asarray(logit_ids, dtype=np.intp).reshape(-1)
            if all_logits or not picked.size:
                raise InputError("logit_ids takes one or more ids, and not with all_logits")
            if picked.min() < 0 or picked.max() >= self.args.vocab_size:
                raise InputError(f"a logit id is out of range 0..{self.args.vocab_size - 1}")
        if self.pos + n > self.n_ctx:
            raise PromptTooLong(
                f"{self.pos + n} tokens do not fit the context of {self.n_ctx}; "
                "load the model with a larger n_ctx"
            )
        ids = np.asarray(tokens, dtype=np.int64)
        if ids.min() < 0 or ids.max() >= self.args.vocab_size:
            raise InputError(f"token id out of range 0..{self.args.vocab_size - 1}")
        with self.pools(n):  # eoc's thread count for the kernels and BLAS (threads.py)
            x = self.token_embd[ids]  # (n, dim)
            norm = self._norm
            plan = self._decode_plan() if n == 1 else None
            if plan is not None:
                x = self._decode_layers(x, plan)
            else:
                for i, layer in enumerate(self.layers):
                    x = x + self._attention(i, layer, norm(x, layer.attn_norm))
                    x = x + self._mlp(layer, norm(x, layer.ffn_norm))
            self.pos += n
            if not all_logits:
                x = x[-1:]
            if picked is not None:
                return self._picked_logits(norm(x, self.output_norm), picked)
            out: Array = self.dispatcher.apply(norm(x, self.output_norm), self.output)
        return out

    def _picked_logits(self, x: Array, ids: npt.NDArray[np.intp]) -> Array:
        """``x`` (1, dim) times the output matrix's columns ``ids`` (counted as numpy's)."""
        columns = self.output.weight.columns(ids)
        self.dispatcher.calls[("numpy", f"1x{columns.shape[0]}x{len(ids)}")] += 1
        out: Array = x @ columns
        return out

    def _decode_plan(self) -> _DecodePlan | None:
        """The layers' blocks for :func:`~eoc_native.quant.kernels.decode_layer`, when it can run
        this model and the dispatcher runs each layer's products on the quantized CPU kernels;
        else ``None`` (each product then goes through the dispatcher)."""
        if self._fused is None:
            return None
        plan = self._decode
        if plan is None:
            plan = self._decode = _DecodePlan.of(self)
        if not plan.runs:
            return None
        autotuning = self.dispatcher.autotuning
        if plan.decided and not autotuning:
            return plan if plan.quant else None
        on_quant = all(
            self.dispatcher.backend_for(dw, 1).name == FUSED
            for layer in self.layers
            for dw in (layer.wqkv, layer.wo, layer.w_gate_up, layer.w_down)
        )
        if not autotuning:  # the default depends on the weights alone: decided for good
            plan.decided, plan.quant = True, on_quant
        return plan if on_quant else None

    def _decode_layers(self, x: Array, plan: _DecodePlan) -> Array:
        """Every layer for one token (``x`` is (1, dim)): the kernels' layer plan."""
        a, p = self.args, self.pos
        row = np.ascontiguousarray(x[0], dtype=np.float32)
        plan.layers.run(
            row,
            a.norm_eps,
            p,
            self.cos[p],
            self.sin[p],
            a.n_heads,
            a.n_kv_heads,
            a.head_dim,
            np.float32(1 / math.sqrt(a.head_dim)),
            plan.hidden,
            plan.scratch,
            self.n_ctx,
        )
        calls = self.dispatcher.calls
        calls.update(plan.counts)
        calls[(FUSED, f"{a.n_heads}x{a.head_dim}x{p + 1}")] += 2 * len(self.layers)
        return row[None, :]

    def _attention(self, i: int, layer: Layer, x: Array) -> Array:
        a = self.args
        n, p = x.shape[0], self.pos
        group = a.n_heads // a.n_kv_heads  # query heads sharing one key/value head
        q_size, kv_size = a.n_heads * a.head_dim, a.n_kv_heads * a.head_dim
        mm = self.dispatcher.apply
        qkv = mm(x, layer.wqkv)
        if layer.bqkv is not None:
            qkv = qkv + layer.bqkv
        if n == 1 and self._fused is not None:  # one new token: one compiled call, no BLAS
            heads1 = np.empty(q_size, np.float32)
            self._fused(
                qkv[0],
                self.cache_k[i],
                self.cache_v[i],
                p,
                self.cos[p],
                self.sin[p],
                a.n_heads,
                np.float32(1 / math.sqrt(a.head_dim)),
                heads1,
            )
            self.dispatcher.calls[(FUSED, f"{a.n_heads}x{a.head_dim}x{p + 1}")] += 2
            fused_out: Array = mm(heads1[None, :], layer.wo)
            return fused_out
        q = qkv[:, :q_size].reshape(n, a.n_heads, a.head_dim)
        k = qkv[:, q_size : q_size + kv_size].reshape(n, a.n_kv_heads, a.head_dim)
        v = qkv[:, q_size + kv_size :].reshape(n, a.n_kv_heads, a.head_dim)
        q = apply_rope(q, self.cos[p : p + n], self.sin[p : p + n])
        self.cache_k[i, p : p + n] = apply_rope(k, self.cos[p : p + n], self.sin[p : p + n])
        self.cache_v[i, p : p + n] = v
        s = p + n  # keys visible to the last query
        keys = self.cache_k[i, :s].transpose(1, 2, 0)  # (kv_heads, head_dim, s)
        values = self.cache_v[i, :s].transpose(1, 0, 2)  # (kv_heads, s, head_dim)
        # Query head h reads key/value head h // group (llama.cpp and HF's repeat_kv agree).
        grouped = q.reshape(n, a.n_kv_heads, group, a.head_dim).transpose(1, 2, 0, 3)
        scores = self._product(grouped.reshape(a.n_kv_heads, group * n, a.head_dim), keys)
        scores = scores.reshape(a.n_kv_heads, group, n, s) * np.float32(1 / math.sqrt(a.head_dim))
        # Causal mask: new token t (at position p + t) sees keys 0..p + t.
        future = np.arange(s)[None, :] > (p + np.arange(n))[:, None]
        scores = np.where(future, np.float32(-np.inf), scores)
        probs = softmax(scores).reshape(a.n_kv_heads, group * n, s)
        heads = self._product(probs, values).reshape(a.n_kv_heads, group, n, a.head_dim)
        out: Array = mm(heads.transpose(2, 0, 1, 3).reshape(n, q_size), layer.wo)
        return out

    def _mlp(self, layer: Layer, x: Array) -> Array:
        gate_up = self.dispatcher.apply(x, layer.w_gate_up)
        if gate_up.shape[0] == 1 and self._k is not None:  # one token: one compiled call
            hidden = np.empty((1, gate_up.shape[1] // 2), np.float32)
            self._k.silu_mul(gate_up[0], hidden[0])
        else:
            gate, up = np.split(gate_up, 2, axis=-1)
            hidden = silu(gate) * up
        out: Array = self.dispatcher.apply(hidden, layer.w_down)
        return out

    def _norm(self, x: Array, weight: Array) -> Array:
        """RMSNorm; one compiled call for one token."""
        if x.shape[0] == 1 and self._k is not None:
            out = np.empty_like(x)
            self._k.rms_norm_row(x[0], weight, self.args.norm_eps, out[0])
            return out
        return rms_norm(x, weight, self.args.norm_eps)


FUSED = "cpu-quant"
"""The dispatcher's name for the fused decode attention and layers (cpu-quant's kernels)."""


@dataclass
class _DecodePlan:
    """What :meth:`Llama._decode_layers` hands the kernels: their plan of every layer (each
    layer's norms and four 4-bit matrices), one scratch buffer, and the products it counts a
    token."""

    layers: Any
    hidden: int
    scratch: Array
    counts: Counter[tuple[str, str]]
    decided: bool = False
    quant: bool = False

    @property
    def runs(self) -> bool:
        return self.layers is not None

    @classmethod
    def of(cls, model: Llama) -> _DecodePlan:
        """The plan for ``model``; no kernel plan where a layer matrix is not 4-bit blocks or the
        layers differ in width (the layer kernel then never runs)."""
        a, k = model.args, model._k
        empty = cls(None, 0, np.empty(0, np.float32), Counter())
        weights = [(ly.wqkv, ly.wo, ly.w_gate_up, ly.w_down) for ly in model.layers]
        quants = [[dw.weight.quant for dw in four] for four in weights]
        if k is None or not quants or any(q is None or q.bits != 4 for f in quants for q in f):
            return empty
        if any(ly.bqkv is not None for ly in model.layers):  # the layer kernel adds no biases
            return empty
        widths = {tuple(q.padded_out for q in four) for four in quants}
        hiddens = {four[2].weight.shape[1] // 2 for four in weights}
        if len(widths) != 1 or len(hiddens) != 1:
            return empty
        n_qkv, n_wo, n_gu, n_down = widths.pop()
        size = k.decode_scratch(a.dim, a.n_heads * a.head_dim, n_qkv, max(n_wo, n_down), n_gu)
        counts: Counter[tuple[str, str]] = Counter()
        for four in weights:
            for dw in four:
                k_in, n_out = dw.weight.shape
                counts[(FUSED, f"1x{k_in}x{n_out}")] += 1
        layers = [
            (ly.attn_norm, ly.ffn_norm, tuple((q.qs, q.d, q.m) for q in four))
            for ly, four in zip(model.layers, quants, strict=True)
        ]
        plan = k.LayerPlan(layers, (model.cache_k, model.cache_v))
        return cls(plan, hiddens.pop(), np.zeros(size, np.float32), counts)


def _fusable(args: ModelArgs) -> bool:
    """Whether the compiled one-token attention covers this model: it rotates all of a head's
    dims, in adjacent pairs."""
    return args.rope_dim == args.head_dim and args.head_dim % 2 == 0


def _kernels_or_none() -> Any:
    """The compiled kernels (:func:`eoc_native.quant.load_kernels`: C, else numba), or ``None``
    where neither runs."""
    try:
        return load_kernels()
    except EocError:
        return None


def rope_tables(args: ModelArgs, n_ctx: int, freq_factors: Array | None) -> tuple[Array, Array]:
    """cos and sin of every (position, rotary pair) angle, shape ``(n_ctx, rope_dim // 2)``."""
    pair = np.arange(0, args.rope_dim, 2, dtype=np.float64) / args.rope_dim
    inv_freq = args.rope_base**-pair
    if freq_factors is not None:  # Llama 3.1 style per-frequency scaling, stored as a tensor
        inv_freq = inv_freq / freq_factors.astype(np.float64)
    positions = np.arange(n_ctx, dtype=np.float64) / args.rope_linear_factor
    angles = np.outer(positions, inv_freq)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def neox_rows(n_heads: int, head_dim: int, rope_dim: int) -> npt.NDArray[np.intp]:
    """The order of a q or k projection's rows (``n_heads`` heads of ``head_dim``) that turns
    NEOX rope (dim ``j`` turns with dim ``j + rope_dim / 2``) into adjacent pairs: row ``2j`` of
    a head is its row ``j``, row ``2j + 1`` its row ``j + rope_dim / 2``; rows past ``rope_dim``
    stay (llama.cpp's ``rope_neox`` leaves them unturned too)."""
    half = rope_dim // 2
    head = np.arange(head_dim)
    head[:rope_dim] = np.stack([np.arange(half), np.arange(half) + half], axis=1).reshape(-1)
    order: npt.NDArray[np.intp] = (np.arange(n_heads)[:, None] * head_dim + head).reshape(-1)
    return order


def apply_rope(x: Array, cos: Array, sin: Array) -> Array:
    """Rotate ``x`` (n, heads, head_dim) by position; pairs are adjacent dims (2j, 2j+1).

    Adjacent pairs, not the two halves HF's ``rotate_half`` uses: llama.cpp's converter
    permutes the rows of the q and k weights so that its "normal" rope mode, which rotates
    adjacent pairs, computes the same thing. Dims past ``rope_dim`` are not rotated.
    """
    n, heads, head_dim = x.shape
    r = cos.shape[1] * 2
    pairs = x[..., :r].reshape(n, heads, r // 2, 2)
    x0, x1 = pairs[..., 0], pairs[..., 1]
    c, s = cos[:, None, :], sin[:, None, :]
    rotated = np.stack([x0 * c - x1 * s, x0 * s + x1 * c], axis=-1).reshape(n, heads, r)
    if r == head_dim:
        return rotated
    return np.concatenate([rotated, x[..., r:]], axis=-1)


def rms_norm(x: Array, weight: Array, eps: float) -> Array:
    """RMSNorm: scale each row to unit root-mean-square, then by ``weight``."""
    ms = np.mean(np.square(x), axis=-1, keepdims=True)
    out: Array = (x / np.sqrt(ms + np.float32(eps))) * weight
    return out


def softmax(x: Array) -> Array:
    """Softmax over the last axis, shifted by the max so exp() cannot overflow."""
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    out: Array = e / np.sum(e, axis=-1, keepdims=True)
    return out


def silu(x: Array) -> Array:
    """SiLU (swish): ``x * sigmoid(x)``."""
    with np.errstate(over="ignore"):  # exp(-x) -> inf for x < -88 gives the right limit, 0
        out: Array = (x / (np.exp(-x) + 1)).astype(np.float32, copy=False)
    return out
