"""Answers never remembered because they are broken, not because of who made them.

A model that falls into a **repetition loop** ("A moment of stillness, A moment of stillness,
..." until ``max_tokens``) gives an answer nobody wants served again: the neural stage serves it
once, marks it not to be remembered, and the cascade says why in the answer's basis.

The test is on words (split on white space), so it runs alike natively and in the browser: a
run of the same 1 to :data:`MAX_PERIOD` words said at least :data:`MIN_REPEATS` times in a row
that covers at least :data:`MIN_SHARE` of the answer (or :data:`MIN_WORDS` words of it). Lists
and ordinary prose repeat a word, never a whole phrase four times in a row.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Sequence
from typing import TypeVar

MAX_PERIOD = 24
"""The longest repeated phrase looked for, in words."""
MIN_REPEATS = 4
"""How many times in a row a phrase must be said to be a loop."""
MIN_SHARE = 0.4
"""The share of the answer's words a loop must cover (or :data:`MIN_WORDS` of them)."""
MIN_WORDS = 24


def _norm(word: str) -> str:
    return word.strip(".,;:!?\"'()[]").casefold()


def repetition_loop(text: str) -> str | None:
    """Why ``text`` is a repetition loop ("a repetition loop: '...' said N times in a row"),
    or ``None`` when it is not one."""
    words = [_norm(w) for w in text.split()]
    n = len(words)
    if n < MIN_REPEATS:
        return None
    best: tuple[int, int, int] | None = None  # (words covered, period, start)
    for period in range(1, min(MAX_PERIOD, n // MIN_REPEATS) + 1):
        run = 0  # positions i with words[i] == words[i - period], in a row
        for i in range(period, n + 1):
            if i < n and words[i] == words[i - period] and words[i]:
                run += 1
                continue
            covered = run + period
            if run >= period * (MIN_REPEATS - 1) and (best is None or covered > best[0]):
                best = (covered, period, i - covered)
            run = 0
    if best is None:
        return None
    covered, period, start = best
    if covered < MIN_WORDS and covered < MIN_SHARE * n:
        return None
    phrase = " ".join(text.split()[start : start + period])
    return f"a repetition loop: {phrase[:60]!r} said {covered // period} times in a row"


LOOP_PERIOD = 32
"""The longest cycle of tokens :func:`until_loop` looks for."""
LOOP_REPEATS = 4
"""How many times in a row a cycle must come to be a loop."""
LOOP_MIN_TOKENS = 12
"""The fewest tokens a loop spans (a short run such as "!!!!" is not one)."""
LOOP_RULE = {"period": LOOP_PERIOD, "repeats": LOOP_REPEATS, "min_tokens": LOOP_MIN_TOKENS}
"""The loop stop's figures, as the demo page's model reads them (``web/src/model.js`` applies
the same rule to the pieces it streams; ``tests/web/test_loop_rule.py`` runs both on the same
cases)."""

T = TypeVar("T", bound=Hashable)


def loop_ends(seen: Sequence[Hashable]) -> bool:
    """Whether the last of ``seen`` (tokens, or the pieces of text they stream as) close one
    cycle of 1 to :data:`LOOP_PERIOD` of them said :data:`LOOP_REPEATS` times in a row, spanning
    at least :data:`LOOP_MIN_TOKENS`."""
    n = len(seen)
    for period in range(1, min(LOOP_PERIOD, n // LOOP_REPEATS) + 1):
        span = max(period * LOOP_REPEATS, LOOP_MIN_TOKENS - LOOP_MIN_TOKENS % period)
        if span <= n and seen[n - span : n - period] == seen[n - span + period : n]:
            return True
    return False


def until_loop(tokens: Iterable[T]) -> Iterator[T]:
    """``tokens`` until the last ones are a repetition loop (:func:`loop_ends`), which a small
    model at greedy decoding falls into and never leaves. The loop's last token is yielded,
    then generation stops (the answer so far shows the loop; the natively run model and the
    demo page's both stop so)."""
    seen: list[T] = []
    for token in tokens:
        seen.append(token)
        yield token
        if loop_ends(seen):
            return


__all__ = [
    "LOOP_MIN_TOKENS",
    "LOOP_PERIOD",
    "LOOP_REPEATS",
    "LOOP_RULE",
    "MAX_PERIOD",
    "MIN_REPEATS",
    "MIN_SHARE",
    "MIN_WORDS",
    "loop_ends",
    "repetition_loop",
    "until_loop",
]
