"""Greetings and sign-offs around a question: "Hi there! ... Thanks in advance", "Good morning,
... Many thanks", "hey, quick one: ... cheers x". They say nothing about what is asked, so the kv
stage embeds a question without them and its guard reads it without them
(:func:`unwrap`). Only a wrapper at the very start or the very end is taken off, and only
when a question is left: "Thanks for the refund, when will it arrive?" keeps its "thanks for
the refund" (it is no sign-off), and "Good morning" alone is left as it is.

Standard library only (the browser runs it). The phrases are general English, written for eoc.
"""

from __future__ import annotations

import re

_GREETING = (
    r"(?:hi|hello|hey|hiya|heya|howdy|greetings|dear\s+\w+|good\s+(?:morning|afternoon|evening|day))"
    r"(?:\s+(?:there|all|team|folks|guys|everyone))?\b"
)
_OPENER = r"(?:quick\s+(?:question|one|q)|just\s+a\s+quick\s+(?:question|one))\b"
_EMOTICON = r"(?:[:;]-?[()DPp]|\bxx?\b)"
# a greeting ends at punctuation or before a word a question or request opens with ("hi can
# i ...", "hey how do i ..."): "Hey Jude chords" and "Hello Kitty bags" are no greetings
_OPENS = (
    r"(?:how|what|whats|what's|when|whens|where|who|why|which|can|could|do|does|did|is|are|"
    r"will|would|should|have|has|i|i'm|im|i've|ive|my|we|our|just|quick|any|r|u|pls|please)\b"
)
_LEAD = re.compile(
    rf"^\s*(?:(?:{_GREETING}|{_OPENER}|{_EMOTICON})(?:\s*[!,.:;\-–—)]+\s*|\s+(?={_OPENS})))+",
    re.IGNORECASE,
)
_SIGN_OFF = (
    r"(?:(?:many\s+|big\s+)?thanks(?:\s+(?:so|very)\s+much)?(?:\s+in\s+advance)?(?:\s+a\s+lot)?"
    r"|thank\s+you(?:\s+(?:so|very)\s+much)?(?:\s+in\s+advance)?"
    r"|thx|ty|tia|ta|cheers(?:\s+\w+)?|much\s+appreciated|appreciate\s+it|regards"
    rf"|{_EMOTICON})"
)
# a sign-off follows the question's own punctuation ("...? thanks", "... - cheers"): a last word
# that ends the sentence itself ("what is 2 times x", "the TA") stays
_TAIL = re.compile(rf"(?<=[?!.,;:\-–—])(?:\s*\b{_SIGN_OFF}[\s!.,)]*)+$", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]{2,}")


def unwrap(text: str) -> str:
    """``text`` without a greeting it opens with or a sign-off it ends with; unchanged when
    taking them off would leave fewer than two words."""
    inner = _TAIL.sub("", _LEAD.sub("", text, count=1), count=1).strip()
    if inner == text.strip() or len(_WORD.findall(inner)) < 2:
        return text
    return inner


__all__ = ["unwrap"]
