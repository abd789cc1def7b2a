"""Tokenizers of other Llama-family models against llama.cpp's own tokenizer tests.

llama.cpp ships, for each pre-tokenizer it supports, a vocabulary-only GGUF and the token ids
the model's reference (Hugging Face) tokenizer gives for a set of hard strings (accents,
emoji, runs of spaces and newlines, digits, code). ``make test`` extracts Llama 3's
(``llama-bpe``), Qwen2's and Llama 2's SentencePiece one (``llama-spm``, as TinyLlama's) from
the llama-cpp-python source package into tests/native/.vocab.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("gguf", reason="the llm extra is not installed: pip install gguf")
pytest.importorskip("tokenizers", reason="the llm extra is not installed: pip install tokenizers")

from eoc.errors import InputError
from eoc_native.llm.gguf import GGUFFile
from eoc_native.llm.tokenizer import GGUFTokenizer

VOCABS = Path(__file__).parent / ".vocab"
SEPARATOR = "\n__ggml_vocab_test__\n"


@pytest.mark.parametrize("name", ["llama-bpe", "qwen2", "llama-spm"])
def test_the_tokenizer_gives_the_reference_ids(name: str) -> None:
    path = VOCABS / f"ggml-vocab-{name}.gguf"
    if not path.is_file():
        pytest.skip(f"{path} is missing: make {VOCABS.relative_to(Path.cwd())}/.ok")
    metadata = GGUFFile(path).metadata
    if name == "llama-spm":  # SentencePiece: the model says so, not the pre-tokenizer
        assert metadata["tokenizer.ggml.model"] == "llama"
    else:
        assert metadata["tokenizer.ggml.pre"] == name
    tok = GGUFTokenizer(metadata)
    texts = path.with_suffix(".gguf.inp").read_text(encoding="utf-8").split(SEPARATOR)
    expected = path.with_suffix(".gguf.out").read_text(encoding="utf-8").split("\n")
    assert len(texts) >= 40
    for text, ids in zip(texts, expected, strict=False):
        assert tok.encode(text, add_bos=False) == [int(i) for i in ids.split()], repr(text)
        assert tok.decode(tok.encode(text, add_bos=False)) == text


def test_an_unknown_pre_tokenizer_is_refused_with_the_supported_ones() -> None:
    metadata = {
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.pre": "no-such-pre",
        "tokenizer.ggml.tokens": ["a"],
        "tokenizer.ggml.eos_token_id": 0,
    }
    with pytest.raises(InputError, match="llama-bpe"):
        GGUFTokenizer(metadata)
