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
    return tuple(kvsets.load(name, part) for part in kvsets.PARTS)


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
        tune, held, fresh = _parts(name)
        texts = [
            {t for it in part for t in (it.stored, *it.paraphrases, *(n for n, _ in it.negatives))}
            for part in (tune, held, fresh)
        ]
        assert not texts[0] & texts[1] and not texts[0] & texts[2], name
        # fresh asks about the held-out entities in other words
        assert {it.stored for it in held} == {it.stored for it in fresh}
        assert not {p for it in held for p in it.paraphrases} & {
            p for it in fresh for p in it.paraphrases
        }
    # the wordings themselves differ, not only the names filled into them
    for relation, (_, (a, b, c)) in kvsets.FACT_WORDINGS.items():
        assert not set(a) & set(b) and not set(a) & set(c) and not set(b) & set(c), relation
    # a request family (its verb, synonyms and opposite) belongs to one part only
    tune, held, fresh = ({it.stored.split()[3] for it in p} for p in _parts("requests"))
    assert not tune & held and held == fresh


def test_the_quality_harness_runs_on_the_cores_embedder() -> None:
    rows = kvquality.run(["requests"], ["tune"], minilm=False)
    assert len(rows) == 1 and rows[0]["paraphrases"] > 50
    assert 0.0 <= rows[0]["served_right"] <= 1.0 and 0.0 <= rows[0]["hits_wrong"] <= 1.0
