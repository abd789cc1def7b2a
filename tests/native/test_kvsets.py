"""The kv evaluation sets (bench/kvsets.py): generated as documented, and the held-out part
shares no entity, request family or wording with the tuning part."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.append(str(BENCH))

import kvquality  # noqa: E402
import kvsets  # noqa: E402


def _parts(name: str) -> tuple[list[kvsets.Item], ...]:
    return tuple(kvsets.load(name, part) for part in kvsets.parts_of(name))


def test_every_set_has_stored_questions_paraphrases_and_every_trap_class() -> None:
    for name in kvsets.SETS:
        for items in _parts(name):
            assert len(items) >= 15
            assert all(it.paraphrases and it.negatives for it in items)
    classes = {kind for part in _parts("requests") for it in part for _, kind in it.negatives}
    assert {"negation", "polarity", "direction", "scope", "number", "entity"} <= classes
    facts = {kind for part in _parts("facts") for it in part for _, kind in it.negatives}
    assert {"entity", "relation", "superlative"} <= facts


def test_the_held_out_parts_share_no_question_or_wording_with_the_tuning_part() -> None:
    for name in kvsets.SETS:
        tune, *others = _parts(name)
        texts = [
            {t for it in part for t in (it.stored, *it.paraphrases, *(n for n, _ in it.negatives))}
            for part in (tune, *others)
        ]
        assert all(not texts[0] & t for t in texts[1:]), name
        # fresh and blind ask about the held-out entities in other words
        said = [{p for it in part for p in it.paraphrases} for part in others]
        for i, part in enumerate(others):
            assert {it.stored for it in part} == {it.stored for it in others[0]}
            assert all(not said[i] & said[j] for j in range(i)), name
    # the wordings themselves differ, not only the names filled into them
    for relation, (_, groups) in kvsets.FACT_WORDINGS.items():
        assert len(groups) == len(kvsets.PARTS)
        for i, group in enumerate(groups):
            assert all(not set(group) & set(groups[j]) for j in range(i)), relation
    # a request family (its verb, synonyms and opposite) belongs to one part only
    tune, held, *others = ({it.stored.split()[3] for it in p} for p in _parts("requests"))
    assert not tune & held and all(held == o for o in others)


def test_the_quality_harness_runs_on_the_cores_embedder() -> None:
    rows = kvquality.run(["requests"], ["tune"], minilm=False)
    assert len(rows) == 1 and rows[0]["paraphrases"] > 50
    assert 0.0 <= rows[0]["served_right"] <= 1.0 and 0.0 <= rows[0]["hits_wrong"] <= 1.0
