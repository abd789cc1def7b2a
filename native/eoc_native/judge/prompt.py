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
    "You check a question-answer cache. Decide whether the answer to a stored question is a "
    "full and correct answer to a new question. Greetings, stories, names and details that do "
    "not change the answer do not matter; another object, place, time, amount or action does."
)
ASK = (
    "Stored question: {stored}\n"
    "New question: {query}\n"
    "Would the stored question's answer fully and correctly answer the new question? Answer "
    "yes or no."
)
EXAMPLES: tuple[tuple[str, str, str], ...] = (
    ("How do I reset my password?", "forgot my pw, how do i get a new one", "yes"),
    ("How long should I bake a potato?", "How long should I boil a potato?", "no"),
    ("What time does the library open on Saturdays?", "library saturday opening hours?", "yes"),
    ("Can I bring my cat on the train?", "Can I bring my cat on the bus?", "no"),
    (
        "How do I get a refund for a cancelled flight?",
        "my flight got cancelled, can I get my money back?",
        "yes",
    ),
    (
        "How much does it cost to send a parcel to France?",
        "How long does it take to send a parcel to France?",
        "no",
    ),
    (
        "What time is check-in at the campsite?",
        "Hiya! We're driving up Friday with the kids for my sister's 40th - what's the earliest "
        "we can pitch the tent? Cheers, Dave",
        "yes",
    ),
    ("How much does a guitar lesson cost?", "How much does a drum lesson cost?", "no"),
    (
        "How do I fix a puncture on my bike?",
        "got a flat on the way home last night, how do i repair it",
        "yes",
    ),
    ("What are the museum's opening hours?", "Is the museum open on Christmas Day?", "no"),
    (
        "How long does a filling take at the dentist?",
        "how long will i be in the chair for a filling",
        "yes",
    ),
    ("How do I tune a guitar?", "How do I restring a guitar?", "no"),
    (
        "Can I pay the wedding venue in instalments?",
        "is it possible to spread the venue payments over a few months?",
        "yes",
    ),
    ("How long does a filling take at the dentist?", "How long does a filling last?", "no"),
    (
        "How do I descale my coffee machine?",
        "Coffee machine getting crusty inside, how do I get the limescale out?",
        "yes",
    ),
    ("How do I clean a camera lens?", "How do I clean a camera sensor?", "no"),
    ("How long should a cover letter be?", "whats a good length for a covering letter", "yes"),
    (
        "How do I return a bike I bought online?",
        "How do I return a bike I bought in the shop?",
        "no",
    ),
)
"""Worked pairs the model reads before each judgement (written for the prompt, in domains no
evaluation set uses). They are the same for every pair, so a runtime that keeps its cache
(llama.cpp's) reads them once."""
YES = ("yes", "Yes")
NO = ("no", "No")
MAX_QUESTION_CHARS = 400
"""Each question is cut to this many characters in the prompt (a judgement reads a bounded
prompt however long the question: the kv's questions are short, and a longer one is judged on
its start)."""


def _prompt_id() -> str:
    import hashlib

    text = repr((SYSTEM, ASK, EXAMPLES))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


PROMPT_ID = _prompt_id()
"""What the prompt is, in 12 hex digits: a judge's recorded probabilities are reused only for
the prompt they were read with (``scripts/train_student.py``, ``bench/judge.py --scores``)."""


def messages(query: str, stored: str) -> list[dict[str, str]]:
    """The chat the judge's model reads for one pair: the instruction, the worked examples, the
    pair."""
    chat = [{"role": "system", "content": SYSTEM}]
    for s, q, said in EXAMPLES:
        chat.append({"role": "user", "content": ASK.format(stored=s, query=q)})
        chat.append({"role": "assistant", "content": said})
    cut = ASK.format(
        stored=stored[:MAX_QUESTION_CHARS].strip(), query=query[:MAX_QUESTION_CHARS].strip()
    )
    chat.append({"role": "user", "content": cut})
    return chat


def yes_probability(yes_logits: Sequence[float], no_logits: Sequence[float]) -> float:
    """P(yes) between yes and no alone: the best spelling of each, through a two-way softmax."""
    y, n = max(yes_logits), max(no_logits)
    d = n - y
    if d > 700:
        return 0.0
    return 1.0 / (1.0 + math.exp(d))


__all__ = [
    "ASK",
    "EXAMPLES",
    "MAX_QUESTION_CHARS",
    "NO",
    "PROMPT_ID",
    "SYSTEM",
    "YES",
    "messages",
    "yes_probability",
]
