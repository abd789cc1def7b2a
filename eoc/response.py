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
    """

    __slots__ = ("cost", "payload", "query_id", "receipt", "stage")

    stage: Stage
    payload: str
    cost: JouleCost
    receipt: Receipt
    query_id: str

    def __init__(
        self, stage: Stage, payload: str, cost: JouleCost, receipt: Receipt, query_id: str
    ) -> None:
        _set = object.__setattr__
        _set(self, "stage", stage)
        _set(self, "payload", payload)
        _set(self, "cost", cost)
        _set(self, "receipt", receipt)
        _set(self, "query_id", query_id)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Response is read-only; cannot set {name!r}")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; ``eoc verify`` reads it back."""
        return {
            "query_id": self.query_id,
            "stage": self.stage.value,
            "payload": self.payload,
            "cost": self.cost.to_dict(),
            "receipt": self.receipt.to_dict(),
        }

    def __repr__(self) -> str:
        return f"Response(stage={self.stage.value}, payload={self.payload!r:.40}, cost={self.cost})"


__all__ = ["Response"]
