"""Read an answer back and check it against its receipt: what ``eoc verify`` accepts.

One answer has one JSON shape (:meth:`eoc.response.Response.to_dict`). It reaches a user as

* ``eoc query --json``'s output: that shape;
* ``eoc serve``'s answer: a completion object whose ``eoc`` member is that shape and whose
  choice carries the answer's text;
* a streamed answer: server-sent events, the text in pieces, the last event's ``eoc`` member
  that shape;
* a bare receipt (``receipt`` alone).

Each is checked the same way: the receipt's digest must match its fields, every field the
answer repeats (query id, stage, payload, cost) must equal the receipt's, and the text a
client was shown (a choice's content, a stream's pieces joined and stripped) must be the
receipt's payload. An ``avoided`` part (:mod:`eoc.ledger`; not bound by the receipt) must have
its shape and may not say what the rules make impossible: that avoided work was measured (it
never ran), or that a model's own answer avoided the model.
"""

from __future__ import annotations

from typing import Any

from eoc.errors import BadJson, BadReceipt, ReceiptMismatch
from eoc.files.bounded import loads_strict
from eoc.ledger import AVOIDED_PROVENANCES
from eoc.receipt import Receipt

MAX_EVENTS = 100_000
"""The most server-sent events one stream read back may hold."""


def parse_answer_text(text: str) -> Any:
    """A JSON document, or a stream of server-sent events (``data: {...}`` lines) as
    ``{"stream": [event, ...]}``.

    Raises:
        BadReceipt: neither parses.
    """
    if text.lstrip().startswith("data:"):
        events: list[Any] = []
        for line in text.splitlines():
            if not line.startswith("data:"):
                continue
            body = line[5:].strip()
            if body == "[DONE]":
                break
            if len(events) >= MAX_EVENTS:
                raise BadReceipt(f"the stream holds more than {MAX_EVENTS:,} events")
            try:
                events.append(loads_strict(body, what="a stream event"))
            except BadJson as exc:
                raise BadReceipt(f"{exc.reason}: pass the stream as the server sent it") from None
        return {"stream": events}
    try:
        return loads_strict(text, what="receipt")
    except BadJson as exc:
        raise BadReceipt(
            f"{exc.reason}: pass `eoc query --json` output or an eoc serve answer"
        ) from None


def check_answer_document(doc: Any) -> Receipt:
    """The receipt of an answer in any of its shapes (see the module), checked.

    Raises:
        BadReceipt: the document is no answer or receipt eoc wrote.
        ReceiptMismatch: the digest, a repeated field or the text shown does not match.
    """
    if isinstance(doc, dict) and "stream" in doc and isinstance(doc["stream"], list):
        return _check_stream(doc["stream"])
    if isinstance(doc, dict) and "eoc" in doc and "choices" in doc:
        receipt = _check_answer(doc["eoc"])
        shown = _choice_text(doc["choices"])
        if shown is not None and shown != receipt.payload:
            raise ReceiptMismatch("the answer's text does not match its receipt: it was altered")
        return receipt
    return _check_answer(doc)


def _check_answer(doc: Any) -> Receipt:
    """A receipt, or the answer shape holding one, checked."""
    if not isinstance(doc, dict):
        raise BadReceipt("an answer or receipt is a JSON object: pass `eoc query --json` output")
    receipt = Receipt.from_dict(doc)
    if not receipt.verify():
        raise ReceiptMismatch("the digest does not match the fields: this receipt was altered")
    if "receipt" not in doc:
        return receipt
    raw_cost = doc.get("cost")
    cost: dict[str, Any] = raw_cost if isinstance(raw_cost, dict) else {}
    outer: dict[str, Any] = {
        "query_id": doc.get("query_id"),
        "stage": doc.get("stage"),
        "payload": doc.get("payload"),
        "cost_uj": cost.get("uj"),
        "provenance": cost.get("provenance"),
    }
    if receipt.version >= 2:
        outer.update(
            basis=cost.get("basis"),
            counter=cost.get("counter"),
            counter_kind=cost.get("counter_kind"),
        )
    for name, value in outer.items():
        mine = getattr(receipt, name)
        if type(value) is not type(mine) or value != mine:
            raise ReceiptMismatch(f"the answer's {name} does not match its receipt: it was altered")
    if "avoided" in doc:
        _check_avoided(doc["avoided"], receipt.stage)
    return receipt


def _check_avoided(avoided: Any, stage: str) -> None:
    """The ``avoided`` part of an answer (:meth:`eoc.ledger.Avoided.to_dict`): its shape, and
    nothing the rules make impossible."""
    if not isinstance(avoided, dict) or set(avoided) != {
        "uj",
        "net_uj",
        "provenance",
        "basis",
        "counter",
        "counter_kind",
    }:
        raise BadReceipt("the answer's avoided part is not the object eoc writes")
    uj, net = avoided["uj"], avoided["net_uj"]
    if type(uj) is not int or uj < 1 or type(net) is not int:
        raise BadReceipt("the answer's avoided figure is not whole µJ of at least 1")
    if avoided["provenance"] not in AVOIDED_PROVENANCES:
        raise BadReceipt(
            f"the answer's avoided figure says {avoided['provenance']!r}: avoided work never "
            f"ran, so it is one of {', '.join(AVOIDED_PROVENANCES)}, never measured"
        )
    if not isinstance(avoided["basis"], str):
        raise BadReceipt("the answer's avoided figure has no basis line")
    if stage == "neural":
        raise BadReceipt("a neural answer avoided nothing: the model did the work")


def _choice_text(choices: Any) -> str | None:
    """The text of a completion's first choice (chat or text completion), or ``None`` when
    the choice carries none (a stream's last event)."""
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise BadReceipt("the answer's choices are not the list an eoc serve answer holds")
    choice = choices[0]
    message = choice.get("message")
    text = message.get("content") if isinstance(message, dict) else choice.get("text")
    if text is None and "delta" in choice:
        return None
    if not isinstance(text, str):
        raise BadReceipt("the answer's choice holds no text")
    return text


def _check_stream(events: list[Any]) -> Receipt:
    """A streamed answer: the last ``eoc`` member checked, the pieces joined against it."""
    pieces: list[str] = []
    verdict: Any = None
    for event in events:
        if not isinstance(event, dict):
            raise BadReceipt("a stream event is a JSON object")
        if "error" in event:
            raise BadReceipt("the stream ended with an error: it holds no answer")
        for choice in event.get("choices") or ():
            delta = choice.get("delta") if isinstance(choice, dict) else None
            text = delta.get("content") if isinstance(delta, dict) else None
            if text is None and isinstance(choice, dict):
                text = choice.get("text")
            if isinstance(text, str):
                pieces.append(text)
        if "eoc" in event:
            verdict = event["eoc"]
    if verdict is None:
        raise BadReceipt("the stream has no event with the eoc answer: was it cut short?")
    receipt = _check_answer(verdict)
    if "".join(pieces).strip() != receipt.payload:  # a model's answer is stripped once whole
        raise ReceiptMismatch("the streamed text does not match its receipt: it was altered")
    return receipt


__all__ = ["MAX_EVENTS", "check_answer_document", "parse_answer_text"]
