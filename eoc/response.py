"""What the cascade returns for one query."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eoc.cost import JouleCost
from eoc.ledger import Avoided
from eoc.query import Stage
from eoc.receipt import Receipt
from eoc.store.entry import Generation


@dataclass(frozen=True, slots=True, init=False, eq=False, repr=False)
class Response:
    """The answer to one query: which stage answered, what, at what cost, and the receipt.

    Read-only: the cascade hands the same Response to every repeat of a cache hit
    charged the same, so nothing may change it after it is built.

    ``tokens`` is (tokens in, tokens out) when a model produced this answer and counted them;
    :attr:`uj_per_token` is then the figure per generated token, of the cost's provenance.

    ``generation`` is how a model generated the answer (:class:`eoc.store.entry.Generation`: finish
    reason, token counts, seconds): a fresh model answer's, or, for a remembered one served again
    (``replayed``), the one kept with it, :data:`eoc.store.entry.UNKNOWN` when it was kept before eoc
    recorded it; ``None`` when no model made the answer.

    ``stored`` says whether the answer was remembered for next time (not part of the receipt):
    ``"yes"``; ``"pending"`` (kept in memory, and written to a shared store that is down when it
    is back, or, with ``Cascade(kv_after_reply=True)`` and no cache, on its way to the kv; lost
    if this process stops first); ``"no"`` (a store refused the write: it is
    served but not remembered); ``""`` when there was nothing to remember (a cache hit, an
    answer never remembered).

    ``avoided`` is what an answer given without the model avoided (:mod:`eoc.ledger`): the
    model's work it did not need, gross, with its own provenance (``measured-when-made`` or
    ``estimated``, never ``measured``); ``None`` for a neural answer, or when no model is
    configured to compare with (no figure, never 0). Not part of the receipt.
    """

    stage: Stage
    payload: str
    cost: JouleCost
    receipt: Receipt
    query_id: str
    tokens: tuple[int, int] | None
    stored: str
    generation: Generation | None
    replayed: bool
    avoided: Avoided | None

    def __init__(
        self,
        stage: Stage,
        payload: str,
        cost: JouleCost,
        receipt: Receipt,
        query_id: str,
        tokens: tuple[int, int] | None = None,
        stored: str = "",
        generation: Generation | None = None,
        replayed: bool = False,
        avoided: Avoided | None = None,
    ) -> None:
        _set = object.__setattr__
        _set(self, "stage", stage)
        _set(self, "payload", payload)
        _set(self, "cost", cost)
        _set(self, "receipt", receipt)
        _set(self, "query_id", query_id)
        _set(self, "tokens", tokens)
        _set(self, "stored", stored)
        _set(self, "generation", generation)
        _set(self, "replayed", replayed)
        _set(self, "avoided", avoided)

    @property
    def uj_per_token(self) -> int | None:
        """µJ per generated token (rounded), or ``None`` without a model's token count."""
        if self.tokens is None or self.tokens[1] <= 0:
            return None
        return round(self.cost.uj / self.tokens[1])

    def to_dict(self) -> dict[str, Any]:
        """The answer as JSON: the one shape ``eoc query --json`` prints and ``eoc serve`` sends
        as the ``eoc`` object of every answer and of a stream's last event. ``eoc verify``
        reads it back (:func:`check_answer_document`).

        ``query_id``, ``stage``, ``payload`` and ``cost`` repeat fields of ``receipt``, which
        binds them; ``tokens`` (when a model counted them), ``generation`` (when a model made
        the answer, now or when it was remembered), ``stored`` (when there was something to
        remember) and ``avoided`` (when an answer given without the model has a figure for the
        model's work it avoided) are not part of the receipt.
        """
        out: dict[str, Any] = {
            "query_id": self.query_id,
            "stage": self.stage.value,
            "payload": self.payload,
            "cost": self.cost.to_dict(),
            "receipt": self.receipt.to_dict(),
        }
        if self.tokens is not None:
            out["tokens"] = {
                "in": self.tokens[0],
                "out": self.tokens[1],
                "uj_per_token": self.uj_per_token,
                "provenance": self.cost.provenance.value,
            }
        if self.generation is not None:
            out["generation"] = self.generation.to_dict(self.replayed)
        if self.stored:
            out["stored"] = self.stored
        if self.avoided is not None:
            out["avoided"] = self.avoided.to_dict()
        return out

    def headers(self) -> list[tuple[str, str]]:
        """The answer in short, as HTTP headers (``eoc serve``): stage, µJ, provenance, the
        receipt's digest, the counter (when there is one), whether the answer was
        remembered (``x-eoc-stored``, when there was something to remember) and the model's
        work it avoided (``x-eoc-avoided-microjoules`` and ``x-eoc-avoided-provenance``, only
        when there is a figure: absent, never 0, when there is none)."""
        cost = self.cost
        out = [
            ("x-eoc-stage", self.stage.value),
            ("x-eoc-microjoules", str(cost.uj)),
            ("x-eoc-provenance", cost.provenance.value),
            ("x-eoc-receipt", self.receipt.digest),
        ]
        if cost.counter:
            out.append(("x-eoc-counter", cost.counter))
        if self.stored:
            out.append(("x-eoc-stored", self.stored))
        if self.avoided is not None:
            out.append(("x-eoc-avoided-microjoules", str(self.avoided.uj)))
            out.append(("x-eoc-avoided-provenance", self.avoided.provenance.value))
        return out

    def __repr__(self) -> str:
        return f"Response(stage={self.stage.value}, payload={self.payload!r:.40}, cost={self.cost})"


__all__ = ["Response"]
