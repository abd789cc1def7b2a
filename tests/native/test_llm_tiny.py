"""The runner on a tiny random Llama GGUF written by the test: cache, sampling, stops, errors.

The file is made with ``gguf.GGUFWriter`` (the llama.cpp project's writer), with its tensors in
several GGML types, so these tests need no model download and run in well under a second each.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("gguf", reason="the llm extra is not installed: pip install gguf")
pytest.importorskip("tokenizers", reason="the llm extra is not installed: pip install tokenizers")
pytest.importorskip("jinja2", reason="the llm extra is not installed: pip install jinja2")

from eoc.errors import EocError, InputError, PromptTooLong
from eoc_native.llm.generate import Sampler, generate, generate_ids, load
from eoc_native.llm.llama import Llama
from eoc_native.llm.tokenizer import _byte_decoder
from eoc_native.quant.formats import quantize

DIM, HIDDEN, LAYERS, HEADS, KV_HEADS = 64, 96, 2, 4, 2
TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


#: Per-layer tensor types: a mix (every type the reader dequantizes), or blocks the quantized
#: kernels run as stored (one type per group of matrices the runner joins side by side).
MIXED = {
    "q": "Q4_0",
    "k": "Q4_1",
    "v": "Q5_0",
    "o": "Q5_1",
    "gate": "F16",
    "up": "BF16",
    "down": "F32",
}
BLOCKS = {
    "q": "Q4_1",
    "k": "Q4_1",
    "v": "Q4_1",
    "o": "Q8_0",
    "gate": "Q4_0",
    "up": "Q4_0",
    "down": "Q4_1",
}


def write_tiny_model(
    path: Path,
    *,
    arch: str = "llama",
    seed: int = 0,
    tensor_types: dict[str, str] = MIXED,
    extra: Callable[[Any], None] | None = None,
) -> Path:
    """Write a 2-layer random Llama GGUF with a byte-level vocabulary to ``path``; ``extra`` is
    given the ``gguf.GGUFWriter`` to add metadata of its own before the file is written."""
    import gguf

    rng = np.random.default_rng(seed)
    byte_tokens = sorted(_byte_decoder(), key=lambda c: _byte_decoder()[c])
    tokens = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", *byte_tokens, "he", "ll", "hell"]
    types = [3, 3, 3] + [1] * (len(tokens) - 3)
    w = gguf.GGUFWriter(str(path), arch=arch)
    w.add_context_length(64)
    w.add_embedding_length(DIM)
    w.add_block_count(LAYERS)
    w.add_feed_forward_length(HIDDEN)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_vocab_size(len(tokens))
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("smollm")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(["h e", "l l", "he ll"])
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_add_bos_token(False)
    w.add_chat_template(TEMPLATE)

    def add(name: str, shape: tuple[int, ...], qtype: str, scale: float = 0.3) -> None:
        values = (rng.standard_normal(shape) * scale).astype(np.float32)
        if qtype == "F32":
            w.add_tensor(name, values)
        elif qtype == "F16":
            w.add_tensor(name, values.astype(np.float16))
        else:
            w.add_tensor(name, quantize(values, qtype), raw_dtype=gguf.GGMLQuantizationType[qtype])

    add("token_embd.weight", (len(tokens), DIM), "Q8_0", 1.0)
    head_dim = DIM // HEADS
    for i in range(LAYERS):
        b = f"blk.{i}."
        w.add_tensor(b + "attn_norm.weight", np.ones(DIM, dtype=np.float32))
        w.add_tensor(b + "ffn_norm.weight", np.ones(DIM, dtype=np.float32))
        add(b + "attn_q.weight", (DIM, DIM), tensor_types["q"])
        add(b + "attn_k.weight", (KV_HEADS * head_dim, DIM), tensor_types["k"])
        add(b + "attn_v.weight", (KV_HEADS * head_dim, DIM), tensor_types["v"])
        add(b + "attn_output.weight", (DIM, DIM), tensor_types["o"])
        add(b + "ffn_gate.weight", (HIDDEN, DIM), tensor_types["gate"])
        add(b + "ffn_up.weight", (HIDDEN, DIM), tensor_types["up"])
        add(b + "ffn_down.weight", (DIM, HIDDEN), tensor_types["down"])
    w.add_tensor("output_norm.weight", np.ones(DIM, dtype=np.float32))
    if extra is not None:
        extra(w)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@pytest.fixture(scope="module")
def tiny_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_model(tmp_path_factory.mktemp("llm") / "tiny.gguf")


@pytest.fixture(scope="module")
def tiny(tiny_path: Path) -> tuple[Any, Any]:
    return load(tiny_path, n_ctx=48)


def test_tokenizer_merges_and_special_tokens(tiny: tuple[Any, Any]) -> None:
    _, tok = tiny
    hell = tok.tokens.index("hell")
    assert tok.encode("hello")[0] == hell
    assert tok.decode(tok.encode("héllo wörld 42")) == "héllo wörld 42"
    # Control-token text is plain text unless special parsing is asked for.
    assert tok.encode("<|im_end|>", special=True) == [2]
    assert 2 not in tok.encode("<|im_end|>")
    rendered = tok.apply_chat_template([{"role": "user", "content": "hi"}])
    assert rendered == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


def test_kv_cache_matches_full_recompute(tiny_path: Path, kernels: Any) -> None:
    model, tok = load(tiny_path, n_ctx=48)
    assert model._k is kernels
    ids = tok.encode("hello there, tiny model")
    model.reset()
    full = model.forward(ids, all_logits=True)
    model.reset()
    model.forward(ids[:5])
    steps = [model.forward([t])[0] for t in ids[5:]]
    np.testing.assert_allclose(np.stack(steps), full[5:], rtol=1e-4, atol=1e-4)


def test_max_tokens_and_context_limit(tiny: tuple[Any, Any]) -> None:
    model, tok = tiny
    ids = tok.encode("hello")
    never_eos = -1  # a random model may emit EOS at any step; count tokens without it
    assert len(list(generate_ids(model, ids, eos_id=never_eos, max_tokens=7))) == 7
    assert list(generate_ids(model, ids, eos_id=never_eos, max_tokens=0)) == []
    # Generation stops when the 48-position cache is full instead of failing.
    assert (
        len(list(generate_ids(model, ids, eos_id=never_eos, max_tokens=1000))) == 48 - len(ids) + 1
    )
    with pytest.raises(PromptTooLong):
        list(generate_ids(model, [5] * 49, eos_id=never_eos))


def test_seeded_sampling_is_reproducible(tiny: tuple[Any, Any]) -> None:
    model, tok = tiny
    ids = tok.encode("hello")

    def run(seed: int, top_p: float = 0.9) -> list[int]:
        sampler = Sampler(temperature=1.5, top_p=top_p, seed=seed)
        return list(generate_ids(model, ids, eos_id=-1, max_tokens=20, sampler=sampler))

    assert run(1) == run(1)
    assert run(1) != run(2)
    greedy = list(generate_ids(model, ids, eos_id=-1, max_tokens=20))
    # top_p so small that only the most likely token survives: sampling becomes greedy.
    assert run(3, top_p=1e-9) == greedy
    with pytest.raises(InputError):
        Sampler(top_p=0.0)


def test_stop_strings_cut_the_text(tiny: tuple[Any, Any]) -> None:
    model, tok = tiny
    full_ids = list(generate_ids(model, tok.encode("hello"), eos_id=tok.eos_id, max_tokens=30))
    full = "".join(generate(model, tok, "hello", max_tokens=30))
    assert full == tok.decode(full_ids)
    assert len(full) > 8, "the random model should produce some text"
    stop = full[5:8]
    cut = full.index(stop)
    pieces = list(generate(model, tok, "hello", max_tokens=30, stop=[stop, "never seen"]))
    assert "".join(pieces) == full[:cut]
    assert all(stop not in p for p in pieces)


def test_chat_prompt_uses_template(tiny: tuple[Any, Any]) -> None:
    model, tok = tiny
    messages = [{"role": "user", "content": "hello"}]
    ids = tok.encode(tok.apply_chat_template(messages), special=True)
    expected = tok.decode(list(generate_ids(model, ids, eos_id=tok.eos_id, max_tokens=5)))
    assert "".join(generate(model, tok, messages, max_tokens=5)) == expected


def test_unsupported_architecture(tmp_path: Path) -> None:
    path = write_tiny_model(tmp_path / "mamba.gguf", arch="mamba")
    with pytest.raises(InputError, match="architecture 'mamba' is not supported"):
        load(path)


def test_truncated_file(tiny_path: Path, tmp_path: Path) -> None:
    data = tiny_path.read_bytes()
    for keep in (len(data) - 100, len(data) // 2, 40, 4):
        cut = tmp_path / f"cut{keep}.gguf"
        cut.write_bytes(data[:keep])
        with pytest.raises(InputError) as info:
            load(cut)
        assert isinstance(info.value, EocError)
        assert str(cut) in info.value.reason


def test_not_gguf_and_missing(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("this is not a model\n")
    with pytest.raises(InputError, match="not a GGUF file"):
        load(text)
    with pytest.raises(InputError, match="no such model file"):
        load(tmp_path / "absent.gguf")
    with pytest.raises(InputError, match="is a directory"):
        load(tmp_path)


def test_forward_rejects_bad_ids(tiny: tuple[Any, Any]) -> None:
    model, _ = tiny
    model.reset()
    with pytest.raises(InputError, match="out of range"):
        model.forward([10**6])
    with pytest.raises(InputError):
        Llama.forward(model, [])


def test_a_tiny_temperature_samples_the_most_likely_token_not_nan() -> None:
    from eoc_native.llm.generate import Sampler

    logits = np.array([1.0, 3.0, 2.0], np.float32)
    sampler = Sampler(temperature=5e-324, seed=1)
    assert sampler.pick(logits, sampler.rng()) == 1
