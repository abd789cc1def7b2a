"""The questions every store and entry point must answer alike (tests/test_assemble.py and
tests/native/test_assemble_stores.py): the graph's shared table, a few the pack's vocabulary
alone reaches (PostgreSQL's graph once lacked it), kv pairs and computed answers."""

from __future__ import annotations

from tests.graph_questions import ANSWERED

VOCABULARY_ONLY = [  # answered only through the pack's relations.tsv / kinds.tsv
    "chemical symbol of iron",
    "what port does https use",
    "official language of brazil",
]
KV_AND_COMPUTED = [
    "what is 2+2",
    "what is 7+8",
    "what is the speed of light",
    "cube root of 27",
]
QUESTIONS = [q for q, _ in ANSWERED] + VOCABULARY_ONLY + KV_AND_COMPUTED
"""Every question, answered by cache, kv or graph (none reaches the model)."""
CLI_SAMPLE = VOCABULARY_ONLY + KV_AND_COMPUTED + [q for q, _ in ANSWERED[:6]]
"""The ones also asked through ``eoc query`` (a process-like run each)."""
