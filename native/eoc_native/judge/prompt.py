"""The judge's question to its model, and how its answer is read.

The model is asked, in its own chat template, whether a new question asks exactly what a stored
one asks, so that the stored answer is correct for it, and to answer yes or no. Nothing is
generated: the probability of "yes" is read from the logits of the first answer token, over the
spellings of "yes" and "no" alone (:func:`yes_probability`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

SYSTEM = (
    "You check a question-answer cache. Decide whether two questions ask for exactly the same "
    "thing, so that the answer to the stored question is a correct answer to the new one."
)
ASK = (
    "Stored question: {stored}\n"
    "New question: {query}\n"
    "Does the new question ask exactly the same thing as the stored question, so the same "
    "answer is correct? Answer yes or no."
)
YES = ("yes", "Yes")
NO = ("no", "No")
MAX_QUESTION_CHARS = 600
"""Each question is cut to this many characters in the prompt (a judgement reads a bounded
prompt however long the question: the kv's questions are short, and a longer one is judged on
its start)."""


def messages(query: str, stored: str) -> list[dict[str, str]]:
    """The chat the judge's model reads for one pair."""
    return [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": ASK.format(
                stored=stored[:MAX_QUESTION_CHARS].strip(), query=query[:MAX_QUESTION_CHARS].strip()
            ),
        },
    ]


def yes_probability(yes_logits: Sequence[float], no_logits: Sequence[float]) -> float:
    """P(yes) between yes and no alone: the best spelling of each, through a two-way softmax."""
    y, n = max(yes_logits), max(no_logits)
    d = n - y
    if d > 700:
        return 0.0
    return 1.0 / (1.0 + math.exp(d))


__all__ = ["ASK", "MAX_QUESTION_CHARS", "NO", "SYSTEM", "YES", "messages", "yes_probability"]
