"""One shape for an answer (Response.to_dict), read back by ``eoc verify`` in each form it
reaches a user: ``eoc query --json``, a server's completion object, its ``eoc`` member, a
stream's last event and a whole stream; any altered field is refused."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest

from eoc import Cascade
from eoc.answerdoc import check_answer_document, parse_answer_text
from eoc.cli.main import main
from eoc.errors import BadReceipt, ReceiptMismatch
from eoc.response import Response
from tests.helpers import small_stages


@pytest.fixture(scope="module")
def answer() -> Response:
    with Cascade(small_stages()) as c:
        return c.resolve("what is the capital of France")


def body(r: Response, *, kind: str = "chat") -> dict[str, Any]:
    """A completion object as eoc serve writes it."""
    choice: dict[str, Any] = (
        {
            "index": 0,
            "message": {"role": "assistant", "content": r.payload},
            "finish_reason": "stop",
        }
        if kind == "chat"
        else {"index": 0, "text": r.payload, "finish_reason": "stop"}
    )
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [choice],
        "eoc": r.to_dict(),
    }


def stream(r: Response, pieces: list[str]) -> str:
    events = [{"choices": [{"index": 0, "delta": {"content": p}}]} for p in pieces]
    events.append(
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "eoc": r.to_dict()}
    )
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"


def test_every_form_of_one_answer_verifies(answer: Response) -> None:
    receipt = answer.receipt
    assert check_answer_document(answer.to_dict()) == receipt
    assert check_answer_document(body(answer)) == receipt
    assert check_answer_document(body(answer, kind="text")) == receipt
    assert check_answer_document(body(answer)["eoc"]) == receipt  # the eoc member alone
    assert check_answer_document(receipt.to_dict()) == receipt  # a bare receipt
    whole = stream(answer, ["Pa", "ris"])
    assert check_answer_document(parse_answer_text(whole)) == receipt
    last = whole.split("\n\n")[-3]  # the last event: the verdict, no text
    assert check_answer_document(parse_answer_text(last.removeprefix("data: "))) == receipt


def test_the_headers_say_what_the_body_says(answer: Response) -> None:
    doc, headers = answer.to_dict(), dict(answer.headers())
    assert headers["x-eoc-stage"] == doc["stage"]
    assert int(headers["x-eoc-microjoules"]) == doc["cost"]["uj"]
    assert headers["x-eoc-provenance"] == doc["cost"]["provenance"]
    assert headers["x-eoc-receipt"] == doc["receipt"]["digest"]


@pytest.mark.parametrize(
    "path",
    [
        ("eoc", "payload"),
        ("eoc", "stage"),
        ("eoc", "query_id"),
        ("eoc", "cost", "uj"),
        ("eoc", "cost", "provenance"),
        ("eoc", "cost", "basis"),
        ("eoc", "receipt", "payload"),
        ("choices", 0, "message", "content"),
    ],
)
def test_an_altered_field_of_a_server_answer_is_refused(answer: Response, path: tuple) -> None:
    doc = copy.deepcopy(body(answer))
    where: Any = doc
    for key in path[:-1]:
        where = where[key]
    old = where[path[-1]]
    where[path[-1]] = (
        "measured" if path[-1] == "provenance" else (old + 1 if isinstance(old, int) else old + "x")
    )
    with pytest.raises(ReceiptMismatch):
        check_answer_document(doc)


def test_an_altered_or_cut_stream_is_refused(answer: Response) -> None:
    with pytest.raises(ReceiptMismatch, match="streamed text"):
        check_answer_document(parse_answer_text(stream(answer, ["Lo", "ndon"])))
    cut = stream(answer, ["Pa", "ris"]).split("\n\n")[:2]
    with pytest.raises(BadReceipt, match="cut short"):
        check_answer_document(parse_answer_text("\n\n".join(cut)))
    with pytest.raises(BadReceipt):
        parse_answer_text("data: {not json\n\n")


def test_eoc_verify_takes_a_server_answer_and_its_stream(answer: Response, tmp_path: Path) -> None:
    for name, text in (
        ("answer.json", json.dumps(body(answer))),
        ("stream.txt", stream(answer, ["Par", "is"])),
        ("query.json", json.dumps(answer.to_dict())),
    ):
        (tmp_path / name).write_text(text, encoding="utf-8")
        out = io.StringIO()
        assert main(["verify", str(tmp_path / name)], out) == 0, name
        assert "receipt consistent" in out.getvalue()
    altered = body(answer)
    altered["choices"][0]["message"]["content"] = "London"
    (tmp_path / "altered.json").write_text(json.dumps(altered), encoding="utf-8")
    assert main(["verify", str(tmp_path / "altered.json")], io.StringIO()) == 1
