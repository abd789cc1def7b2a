"""What the cascade returns for one query."""

from __future__ import annotations

from typing import Any

from eoc.cost import JouleCost
from eoc.query import Stage
from eoc.receipt import Receipt


class Response:
    """The answer to one query: which stage answered, what, at what cost, and the receipt.

    Read-only: the cascade hands the same Response to every repeat of a cache hit
    charged the same, so nothing may change it after it is built.

    ``tokens`` is (tokens in, tokens out) when a model produced this answer and counted them;
    :attr:`uj_per_token` is then the figure per generated token, of the cost's provenance.

    ``stored`` says whether the answer was remembered for next time (not part of the receipt):
    ``"yes"``; ``"pending"`` (kept in memory, and written to a shared store that is down when it
    is back; lost if this process stops first); ``"no"`` (a store refused the write: it is
    served but not remembered); ``""`` when there was nothing to remember (a cache hit, an
    answer never remembered).
    """

    __slots__ = ("cost", "payload", "query_id", "receipt", "stage", "stored", "tokens")

    stage: Stage
    payload: str
    cost: JouleCost
    receipt: Receipt
    query_id: str
    tokens: tuple[int, int] | None
    stored: str

    def __init__(
        self,
        stage: Stage,
        payload: str,
        cost: JouleCost,
        receipt: Receipt,
        query_id: str,
        tokens: tuple[int, int] | None = None,
        stored: str = "",
    ) -> None:
        _set = object.__setattr__
        _set(self, "stage", stage)
        _set(self, "payload", payload)
        _set(self, "cost", cost)
        _set(self, "receipt", receipt)
        _set(self, "query_id", query_id)
        _set(self, "tokens", tokens)
        _set(self, "stored", stored)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Response is read-only; cannot set {name!r}")

    @property
    def uj_per_token(self) -> int | None:
        """µJ per generated token (rounded), or ``None`` without a model's token count."""
        if self.tokens is None or self.tokens[1] <= 0:
            return None
        return round(self.cost.uj / self.tokens[1])

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; ``eoc verify`` reads it back."""
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
        return out

    def __repr__(self) -> str:
        return f"Response(stage={self.stage.value}, payload={self.payload!r:.40}, cost={self.cost})"


__all__ = ["Response"]
