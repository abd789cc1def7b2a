"""The ``qwen2`` architecture: a tiny random model against a plain numpy Qwen2 written here, and
the judge model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M) against llama.cpp.

The tiny model's reference is HF's Qwen2 as written (q, k, v with biases, ``rotate_half`` rope
on the two halves of each head, grouped-query attention, a separate output matrix), computed in
float64 from the file's dequantized tensors: it checks the runner's way of getting there
(q and k rows reordered at load so that its adjacent-pair rope computes the same,
:func:`eoc_native.llm.llama.neox_rows`) without sharing any of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("gguf", reason="the llm extra is not installed: pip install gguf")
pytest.importorskip("tokenizers", reason="the llm extra is not installed: pip install tokenizers")
pytest.importorskip("jinja2", reason="the llm extra is not installed: pip install jinja2")

from eoc.errors import ModelFileError
from eoc_native.llm.generate import load
from eoc_native.llm.gguf import GGUFFile
from eoc_native.llm.llama import neox_rows
from eoc_native.llm.shape import ModelArgs
from tests.native.test_llm_tiny import DIM, HEADS, KV_HEADS, LAYERS, write_tiny_model

HEAD_DIM = DIM // HEADS


def _qwen2_extras(biases: dict[str, int] | None = None) -> Any:
    """The tensors a qwen2 file has beyond a Llama's: q, k, v biases (``biases`` overrides a
    bias's width, 0 leaves it out) and a separate output matrix."""
    widths = {"q": DIM, "k": KV_HEADS * HEAD_DIM, "v": KV_HEADS * HEAD_DIM, **(biases or {})}

    def extra(w: Any) -> None:
        rng = np.random.default_rng(7)
        for i in range(LAYERS):
            for x, width in widths.items():
                if width:
                    bias = rng.standard_normal(width).astype(np.float32)
                    w.add_tensor(f"blk.{i}.attn_{x}.bias", bias)
        n_vocab = len(w.kv_data[0]["tokenizer.ggml.tokens"].value)
        w.add_tensor(
            "output.weight", (rng.standard_normal((n_vocab, DIM)) * 0.3).astype(np.float32)
        )

    return extra


def _tiny_qwen2(path: Path, **biases: int) -> Path:
    return write_tiny_model(path, arch="qwen2", extra=_qwen2_extras(biases))


def reference_logits(path: Path, ids: list[int]) -> np.ndarray:
    """Qwen2's forward pass as HF writes it, in float64, every position's logits."""
    gf = GGUFFile(path)
    a = ModelArgs.from_metadata(gf.metadata, path)

    def t(name: str) -> np.ndarray:
        return gf.tensor(name).astype(np.float64)

    def norm(v: np.ndarray, w: np.ndarray) -> np.ndarray:
        return v / np.sqrt((v * v).mean(-1, keepdims=True) + a.norm_eps) * w

    n, hd, half = len(ids), a.head_dim, a.head_dim // 2
    angles = np.arange(n)[:, None] * a.rope_base ** (-np.arange(half) * 2 / hd)
    cos, sin = np.cos(angles)[:, None, :], np.sin(angles)[:, None, :]

    def rope(v: np.ndarray) -> np.ndarray:  # rotate_half: dim j turns with dim j + half
        x1, x2 = v[..., :half], v[..., half:]
        return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)

    x = t("token_embd.weight")[ids]
    group = a.n_heads // a.n_kv_heads
    for i in range(a.n_layers):
        b = f"blk.{i}."
        h = norm(x, t(b + "attn_norm.weight"))
        q = (h @ t(b + "attn_q.weight").T + t(b + "attn_q.bias")).reshape(n, a.n_heads, hd)
        k = (h @ t(b + "attn_k.weight").T + t(b + "attn_k.bias")).reshape(n, a.n_kv_heads, hd)
        v = (h @ t(b + "attn_v.weight").T + t(b + "attn_v.bias")).reshape(n, a.n_kv_heads, hd)
        q, k = rope(q), rope(k)
        heads = np.empty((n, a.n_heads, hd))
        for head in range(a.n_heads):
            kv = head // group
            scores = q[:, head] @ k[:, kv].T / np.sqrt(hd)
            scores[np.triu(np.ones((n, n), bool), 1)] = -np.inf
            p = np.exp(scores - scores.max(-1, keepdims=True))
            heads[:, head] = (p / p.sum(-1, keepdims=True)) @ v[:, kv]
        x = x + heads.reshape(n, -1) @ t(b + "attn_output.weight").T
        h = norm(x, t(b + "ffn_norm.weight"))
        gate, up = h @ t(b + "ffn_gate.weight").T, h @ t(b + "ffn_up.weight").T
        x = x + (gate / (1 + np.exp(-gate)) * up) @ t(b + "ffn_down.weight").T
    out: np.ndarray = norm(x, t("output_norm.weight")) @ t("output.weight").T
    return out


def test_neox_rows_put_each_head_s_halves_side_by_side() -> None:
    order = neox_rows(2, 8, 8)
    assert order.tolist() == [0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15]
    assert neox_rows(1, 8, 4).tolist() == [0, 2, 1, 3, 4, 5, 6, 7]  # past rope_dim: unturned


def test_a_tiny_qwen2_model_computes_hf_s_qwen2(tmp_path: Path) -> None:
    """Every position's logits, a prompt at once and then token by token (the KV cache and the
    one-token attention), agree with the float64 reference."""
    path = _tiny_qwen2(tmp_path / "qwen2.gguf")
    model, tok = load(path, n_ctx=32)
    assert model.args.architecture == "qwen2" and all(ly.bqkv is not None for ly in model.layers)
    ids = tok.encode("hello hello")
    want = reference_logits(path, ids)
    got = model.forward(ids, all_logits=True)
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-3 * np.abs(want).max())
    model.reset()
    for i, token in enumerate(ids):
        row = model.forward([token])[0]
        np.testing.assert_allclose(row, want[i], rtol=0, atol=2e-3 * np.abs(want).max())


def test_read_as_adjacent_pairs_the_same_tensors_differ(tmp_path: Path) -> None:
    """The reference tells the rope styles apart: the same tensors in a file that says
    ``llama`` (adjacent pairs, rows as stored; the biases still added) give other logits."""
    path = _tiny_qwen2(tmp_path / "qwen2.gguf")
    as_llama = write_tiny_model(tmp_path / "llama.gguf", arch="llama", extra=_qwen2_extras())
    model, tok = load(as_llama, n_ctx=32)
    assert all(ly.bqkv is not None for ly in model.layers)
    ids = tok.encode("hello hello")
    want = reference_logits(path, ids)
    got = model.forward(ids, all_logits=True)
    assert np.abs(got - want).max() > 1e-2 * np.abs(want).max()


@pytest.mark.parametrize(
    ("biases", "named"),
    [
        ({"q": 0}, "blk.0.attn_q.bias"),
        ({"k": 0}, "blk.0.attn_k.bias"),
        ({"v": DIM}, "blk.0.attn_v.bias"),
        ({"q": KV_HEADS * HEAD_DIM}, "blk.0.attn_q.bias"),
    ],
)
def test_a_missing_or_misshapen_bias_is_refused_naming_it(
    tmp_path: Path, biases: dict[str, int], named: str
) -> None:
    path = _tiny_qwen2(tmp_path / "bad.gguf", **biases)
    with pytest.raises(ModelFileError, match=named.replace(".", r"\.")) as err:
        load(path, n_ctx=32)
    assert str(path) in err.value.reason


# --- the judge model against llama.cpp ------------------------------------------------------

PROMPTS = [
    "Hi",
    "Do these two questions mean the same? A: how do I reverse a list in python "
    "B: python list reverse. Answer yes or no.",
    "Write a Python function that returns the square of a number.",
]
SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
LOGIT_TOLERANCE = 0.6
"""The most any logit may differ from llama.cpp's (measured on these prompts: at most 0.37, on
average 0.05, where the logits' standard deviation is 2.0-2.4). llama.cpp multiplies Q4_K and Q6_K blocks by activations it quantizes to 8 bits;
eoc runs float32 activations against Q4_1 (from Q4_K, scales rounded) and Q8_0 (from Q6_K,
requantized) blocks."""


@pytest.fixture(scope="module")
def judge() -> Any:
    """eoc's model and tokenizer for the installed judge model, and llama.cpp's."""
    from eoc.errors import MissingExtra
    from eoc_native.llm.parts import joined_model_path

    llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    try:
        path = joined_model_path()
    except MissingExtra as exc:
        pytest.skip(exc.reason)
    model, tok = load(path, n_ctx=512)
    ref = llama_cpp.Llama(model_path=str(path), logits_all=False, n_ctx=512, verbose=False)
    return model, tok, ref


def _ref_logits(ref: Any) -> np.ndarray:
    """llama.cpp's logits for the last token it evaluated (``scores`` holds them only with
    ``logits_all``)."""
    row = np.ctypeslib.as_array(ref._ctx.get_logits_ith(-1), shape=(ref.n_vocab(),))
    return np.array(row, dtype=np.float32)


def test_the_chat_template_renders_in_the_sandbox_as_qwen_writes_it(judge: Any) -> None:
    _, tok, ref = judge
    text = tok.apply_chat_template([{"role": "user", "content": "Hi"}])
    assert text == (
        f"<|im_start|>system\n{SYSTEM}<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    assert tok.encode(text, special=True) == ref.tokenize(
        text.encode(), add_bos=False, special=True
    )


@pytest.mark.parametrize("prompt", PROMPTS, ids=["hi", "same-question", "code"])
def test_next_token_logits_agree_with_llama_cpp(judge: Any, prompt: str) -> None:
    """The top token and the top five (as a set) are llama.cpp's, every logit within
    :data:`LOGIT_TOLERANCE`, and the few-ids logits are the full row's."""
    model, tok, ref = judge
    ids = tok.encode(tok.apply_chat_template([{"role": "user", "content": prompt}]), special=True)
    model.reset()
    got = model.forward(ids)[0]
    ref.reset()
    ref.eval(ids)
    want = _ref_logits(ref)
    assert int(np.argmax(got)) == int(np.argmax(want))
    assert set(np.argsort(-got)[:5].tolist()) == set(np.argsort(-want)[:5].tolist())
    assert np.abs(got - want).max() <= LOGIT_TOLERANCE
    yes_no = [tok.encode("yes")[0], tok.encode("no")[0], int(np.argmax(want))]
    model.rewind(len(ids) - 1)  # the prompt's last token again, the rest read from the cache
    picked = model.forward(ids[-1:], logit_ids=yes_no)
    assert picked.shape == (1, 3)
    np.testing.assert_allclose(picked[0], got[yes_no], rtol=0, atol=1e-4)


def test_a_greedy_answer_is_llama_cpp_s(judge: Any) -> None:
    """Ten tokens picked greedily, each from eoc's own logits, are llama.cpp's ten."""
    model, tok, ref = judge
    text = tok.apply_chat_template([{"role": "user", "content": PROMPTS[2]}])
    ids = tok.encode(text, special=True)
    model.reset()
    ref.reset()
    ours, theirs = [], []
    row, ref_row = model.forward(ids)[0], None
    ref.eval(ids)
    for _ in range(10):
        ours.append(int(np.argmax(row)))
        ref_row = _ref_logits(ref)
        theirs.append(int(np.argmax(ref_row)))
        row = model.forward([ours[-1]])[0]
        ref.eval([theirs[-1]])
    assert ours == theirs, (tok.decode(ours), tok.decode(theirs))
