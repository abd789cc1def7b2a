"""Costs and receipts."""

from __future__ import annotations

import pytest

from eoc import JouleCost, Provenance, Receipt, Stage, worst_of
from eoc.cost import CounterKind
from eoc.errors import BadReceipt, ConfigError
from tests.helpers import native_only

QID = "a" * 64


def test_measured_zero_cannot_be_built() -> None:
    with pytest.raises(ConfigError):
        JouleCost(0, Provenance.MEASURED, "x", counter="rapl", counter_kind=CounterKind.HARDWARE)


def test_no_cost_below_one_microjoule_and_only_ints() -> None:
    for bad in (0, -1):
        with pytest.raises(ConfigError):
            JouleCost.estimated(bad, "x")
    for bad in (1.5, True, "3"):
        with pytest.raises(ConfigError):
            JouleCost.estimated(bad, "x")  # type: ignore[arg-type]


@native_only
def test_measured_needs_a_live_counter_name_and_kind() -> None:
    with pytest.raises(ConfigError):
        JouleCost(5, Provenance.MEASURED, "x")
    with pytest.raises(ConfigError):
        JouleCost(5, Provenance.MEASURED, "x", counter="stub", counter_kind=CounterKind.NONE)
    cost = JouleCost(
        5, Provenance.MEASURED, "x", counter="ioreport", counter_kind=CounterKind.VENDOR_MODEL
    )
    assert cost.measured and cost.counter_kind is CounterKind.VENDOR_MODEL


def test_worst_of_takes_the_worst_provenance() -> None:
    M, E = Provenance.MEASURED, Provenance.ESTIMATED
    assert worst_of([M, M]) is M
    assert worst_of([M, E, M]) is E
    assert worst_of([]) is E


def test_receipt_verifies_and_round_trips() -> None:
    r = Receipt.issue(QID, Stage.KV, 1000, Provenance.ESTIMATED, "4")
    assert len(r.digest) == 64 and r.verify()
    again = Receipt.from_dict(r.to_dict())
    assert again == r and again.verify()


@pytest.mark.parametrize(
    "field,value",
    [
        ("query_id", "b" * 64),
        ("stage", "cache"),
        ("cost_uj", 1001),
        ("provenance", "measured"),
        ("payload", "5"),
        ("digest", "0" * 64),
    ],
)
def test_changing_any_field_fails_verification(field: str, value: object) -> None:
    r = Receipt.issue(QID, Stage.KV, 1000, Provenance.ESTIMATED, "4")
    setattr(r, field, value)
    assert not r.verify()


def test_payload_boundaries_do_not_collide() -> None:
    """Length-prefixing keeps a '|' in the payload from shifting fields."""
    a = Receipt.issue(QID, Stage.KV, 1, Provenance.ESTIMATED, "x|y")
    b = Receipt.issue(QID, Stage.KV, 1, Provenance.ESTIMATED, "x|y ")
    assert a.digest != b.digest


def test_receipt_digest_is_pinned() -> None:
    """The canonical encoding is versioned; a change to it must be deliberate."""
    r = Receipt.issue(QID, Stage.GRAPH, 500, Provenance.ESTIMATED, "Tokyo")
    import hashlib

    body = b"eoc-receipt-v1|" + f"{QID}|graph|500|estimated|5|".encode() + b"Tokyo"
    assert r.digest == hashlib.sha256(body).hexdigest()


@pytest.mark.parametrize(
    "doc",
    [
        [],
        {},
        {"query_id": QID},
        {
            "query_id": QID,
            "stage": "kv",
            "cost_uj": "1",
            "provenance": "estimated",
            "payload": "4",
            "digest": "0" * 64,
        },
        {
            "query_id": QID,
            "stage": "disk",
            "cost_uj": 1,
            "provenance": "estimated",
            "payload": "4",
            "digest": "0" * 64,
        },
        {
            "query_id": QID,
            "stage": "kv",
            "cost_uj": 1,
            "provenance": "guessed",
            "payload": "4",
            "digest": "0" * 64,
        },
        {
            "query_id": QID,
            "stage": "kv",
            "cost_uj": 1,
            "provenance": "estimated",
            "payload": "4",
            "digest": "XYZ",
        },
        {
            "query_id": "short",
            "stage": "kv",
            "cost_uj": 1,
            "provenance": "estimated",
            "payload": "4",
            "digest": "0" * 64,
        },
        {
            "version": 2,
            "query_id": QID,
            "stage": "kv",
            "cost_uj": 1,
            "provenance": "estimated",
            "payload": "4",
            "digest": "0" * 64,
        },
    ],
)
def test_malformed_receipt_documents_are_bad_receipts(doc: object) -> None:
    with pytest.raises(BadReceipt):
        Receipt.from_dict(doc)  # type: ignore[arg-type]


def test_in_the_browser_no_measured_cost_can_be_built(monkeypatch: pytest.MonkeyPatch) -> None:
    import eoc.cost

    monkeypatch.setattr(eoc.cost, "IN_PYODIDE", True)
    with pytest.raises(ConfigError, match="browser"):
        JouleCost(5, Provenance.MEASURED, "x", counter="rapl", counter_kind=CounterKind.HARDWARE)
    assert JouleCost(5, Provenance.ESTIMATED, "x").uj == 5
