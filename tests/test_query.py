"""Queries: content addressing and bad input."""

from __future__ import annotations

import hashlib
import math

import pytest

from eoc import Query
from eoc.errors import BadEmbedding, EmptyPrompt, InputError, InvalidText, PromptTooLong
from eoc.query import MAX_PROMPT_BYTES, query_id


def test_id_is_sha256_of_utf8_prompt() -> None:
    prompt = "what is the capital of Japan — 日本?"
    assert Query(prompt).id == hashlib.sha256(prompt.encode("utf-8")).hexdigest()
    assert query_id(prompt) == Query(prompt).id


def test_same_text_same_id_different_text_different_id() -> None:
    assert Query("a b").id == Query("a b").id
    assert Query("a b").id != Query("a  b").id


@pytest.mark.parametrize("prompt", ["", "   ", "\n\t "])
def test_empty_prompt_is_refused(prompt: str) -> None:
    with pytest.raises(EmptyPrompt):
        Query(prompt)


def test_oversized_prompt_is_refused_at_the_byte_limit() -> None:
    Query("x" * MAX_PROMPT_BYTES)
    with pytest.raises(PromptTooLong):
        Query("x" * (MAX_PROMPT_BYTES + 1))
    with pytest.raises(PromptTooLong):  # multibyte characters count in bytes
        Query("é" * (MAX_PROMPT_BYTES // 2 + 1))


@pytest.mark.parametrize("prompt", ["a\x00b", "esc \x1b[31m", "bad \ud800 surrogate", "\x7f"])
def test_invalid_text_is_refused(prompt: str) -> None:
    with pytest.raises(InvalidText):
        Query(prompt)


@pytest.mark.parametrize("prompt", [None, 42, b"bytes", ["list"]])
def test_non_text_is_refused(prompt: object) -> None:
    with pytest.raises(InvalidText):
        Query(prompt)  # type: ignore[arg-type]


def test_tabs_and_newlines_are_text() -> None:
    assert Query("line one\nline two\tend").prompt == "line one\nline two\tend"


@pytest.mark.parametrize(
    "embedding",
    [[], [math.nan, 1.0], [math.inf], [0.0, 0.0], ["a"], "abc", [True, 1.0], 3.0],
)
def test_bad_embedding_is_refused(embedding: object) -> None:
    with pytest.raises(BadEmbedding):
        Query("hello", embedding=embedding)  # type: ignore[arg-type]


def test_errors_are_input_errors_with_exit_code_2() -> None:
    with pytest.raises(InputError) as info:
        Query("")
    assert info.value.exit_code == 2
    assert "type a question" in info.value.reason


def test_bad_metadata_is_refused() -> None:
    with pytest.raises(InvalidText):
        Query("hello", metadata=["not", "a", "mapping"])  # type: ignore[arg-type]
    assert Query("hello", metadata={"user": 1}).metadata == {"user": 1}
