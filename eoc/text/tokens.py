"""How many tokens a text makes, where no tokenizer is at hand: a guess for an estimate of work
(:func:`approx_tokens`) and a bound that can only over-count (:func:`token_bound`)."""

from __future__ import annotations

import math


def approx_tokens(text: str) -> int:
    """Tokens in ``text`` as a small model's tokenizer roughly counts them: one per 4 characters.
    A guess for an estimate of work, never a bound (:func:`token_bound` is one)."""
    return max(1, math.ceil(len(text) / 4)) if text else 0


def token_bound(text: str) -> int:
    """The most tokens a model's tokenizer can make of ``text``: one per UTF-8 byte (a byte-level
    BPE, as Llama 3's, Qwen's and SmolLM2's, never makes more, and a SentencePiece model with
    byte fallback neither), and one more for the word marker SentencePiece puts before the text.
    It can only over-count: where no tokenizer is at hand, what must fit in ``max_tokens`` is
    checked with this, never with :func:`approx_tokens`."""
    return len(text.encode("utf-8")) + 1 if text else 0


__all__ = ["approx_tokens", "token_bound"]
