"""The neural stage: the last resort, which always answers."""

from __future__ import annotations

from typing import NamedTuple, Protocol, runtime_checkable

from eoc.cost import JouleCost
from eoc.errors import BackendError, EocError
from eoc.query import Query, Stage
from eoc.stages.base import Answer, stage_figure


class Reply(NamedTuple):
    """A backend's answer and, if it has one, its own cost (measured or estimated)."""

    text: str
    cost: JouleCost | None = None


@runtime_checkable
class Backend(Protocol):
    """Generates an answer. It may report its own cost, or ``None`` when it has none."""

    name: str

    def generate(self, prompt: str) -> Reply: ...


class EchoBackend:
    """Answers with the prompt itself. Reports no cost: it runs no model."""

    name = "echo"

    def generate(self, prompt: str) -> Reply:
        return Reply(f"echo: {prompt}")


class NeuralStage:
    """Asks a backend; never passes.

    Args:
        backend: any :class:`Backend`; defaults to :class:`EchoBackend`.
        figure_uj: the stage's own figure (ESTIMATED) charged when the backend reports none.
    """

    stage = Stage.NEURAL

    def __init__(self, backend: Backend | None = None, *, figure_uj: int | None = None) -> None:
        self.backend: Backend = backend if backend is not None else EchoBackend()
        self.figure = stage_figure(Stage.NEURAL, figure_uj)

    def lookup(self, query: Query) -> Answer:
        try:
            reply = self.backend.generate(query.prompt)
        except EocError:
            raise
        except Exception as exc:  # a backend's own failure, translated at the boundary
            raise BackendError(f"neural backend {self.backend.name!r} failed: {exc}") from exc
        if not isinstance(reply, Reply) or not isinstance(reply.text, str):
            raise BackendError(
                f"neural backend {self.backend.name!r} returned {type(reply).__name__}, not a Reply"
            )
        if reply.cost is not None and not isinstance(reply.cost, JouleCost):
            raise BackendError(
                f"neural backend {self.backend.name!r} reported a cost that is not a JouleCost"
            )
        return Answer(reply.text, reply.cost)


__all__ = ["Backend", "EchoBackend", "NeuralStage", "Reply"]
