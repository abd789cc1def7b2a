"""The neural stage: the last resort, which always answers."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol, runtime_checkable

from eoc.cost import JouleCost
from eoc.errors import BackendError, EocError, InputError
from eoc.query import Query, Stage, check_text
from eoc.stages.base import Answer, WorkRates, stage_figure, work_estimate
from eoc.stages.degenerate import repetition_loop
from eoc.store.entry import Generation, checked_generation
from eoc.text.forms import fold
from eoc.text.tokens import approx_tokens, token_bound

DEFAULT_MAX_TOKENS = 256
"""The tokens a worst case counts out when neither the request nor the backend names a bound."""
MAX_REPLY_BYTES = 1 << 20
"""The largest reply a backend may return (1 MiB of UTF-8): a longer one is a failure."""


class Reply(NamedTuple):
    """A backend's answer and, if it has one, its own cost (measured or estimated).

    ``memoize`` is False for an answer the same question would not get again: sampled
    (temperature > 0) without a seed. The cascade then neither caches it nor offers it to kv.
    ``tokens_in`` and ``tokens_out`` are the model's own token counts (prompt as the model saw
    it, and generated), when the backend knows them.

    ``cost`` is work the cascade's meter may not see (a remote model's): it is combined with the
    bracketed span. ``estimate`` is a local backend's own ESTIMATED figure for work the meter
    does see (a model run in this process): it is charged only when no live counter brackets
    the answer, and a measured span replaces it.

    ``finish_reason`` is why the model stopped, when the backend knows ("stop", "length", ...);
    without it the stage says "length" when the answer used all of ``max_tokens``, "stop" when it
    used fewer (or, its tokens uncounted, when it is too short to have reached the limit however
    counted: :func:`~eoc.text.tokens.token_bound`), else nothing (unknown: never replayed as
    finished).
    """

    text: str
    cost: JouleCost | None = None
    memoize: bool = True
    tokens_in: int | None = None
    tokens_out: int | None = None
    estimate: JouleCost | None = None
    finish_reason: str | None = None
    content: str | None = None
    """What the model wrote, where ``text`` wraps it in more (a forwarded request's whole reply
    body, or its events): what is judged for a repetition loop. ``None``: ``text`` itself."""


@runtime_checkable
class Backend(Protocol):
    """A model backend: generates the neural stage's answer. It may report its own cost, or
    ``None`` when it has none. (A *compute backend*, ``eoc_native.backends``, is another thing:
    it multiplies matrices for a model eoc runs itself.)

    A backend that runs no model says so with ``runs_model = False``: its answers are never
    remembered (a backend without the attribute is taken to run one).

    A backend says what makes its answers with ``origin``: its model's identity and every
    parameter that changes an answer to a plain question (``max_tokens``, sampling, a system
    message), as canonical JSON (:func:`origin_of`). Remembered answers record it, and are served
    only by a cascade whose backend has the same (:meth:`NeuralStage.origin`); a backend without
    it is known by its name alone.

    A backend that can answer a whole conversation with its parameters (what ``eoc serve``
    receives) also has ``chat(request, on_piece=None) -> Reply``, taking an
    :class:`eoc.chat.request.ChatRequest` and calling ``on_piece`` with each piece of text as it is
    produced. A query carrying a conversation (``query.conversation``) reaches only such a
    backend.

    A backend that streams a plain question's answer too says ``streams = True`` and takes
    ``generate(prompt, on_piece=None)`` (:class:`Streams`): a query's ``on_piece`` reaches it.

    A backend whose model costs other than the stage's default rates says so with
    ``work_rates`` (a :class:`~eoc.stages.base.WorkRates`): the stage's own estimates, its worst
    case and what a cheap answer avoided (:meth:`NeuralStage.would_cost`) are then priced at
    them, so the ledger compares with the model that would have answered.
    """

    name: str

    def generate(self, prompt: str) -> Reply: ...


@runtime_checkable
class Streams(Protocol):
    """A backend whose ``generate`` tells ``on_piece`` each piece of the answer as it comes."""

    streams: bool

    def generate(self, prompt: str, on_piece: Callable[[str], None] | None = None) -> Reply: ...


@runtime_checkable
class LoadsWithProgress(Protocol):
    """A backend that loads a model on its first question and tells ``progress(what,
    fraction)`` how far it got (``None``: nobody is told)."""

    progress: Callable[[str, float], None] | None


@runtime_checkable
class TakesMaxTokens(Protocol):
    """A backend whose answers are at most ``max_tokens`` tokens long (a local model)."""

    max_tokens: int


def origin_of(model: str, **params: object) -> str:
    """The canonical ``origin`` of a backend: its model's identity and the parameters given
    (those ``None`` left out), as sorted, compact JSON."""
    doc = {"model": model, **{k: v for k, v in params.items() if v is not None}}
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@functools.lru_cache(maxsize=64)
def endpoint_origin(
    model: str, base_url: str, max_tokens: int, temperature: float, seed: int | None
) -> str:
    """The ``origin`` of an OpenAI-compatible endpoint's answers: the server and model asked,
    and the parameters that change an answer to a plain question (the seed only when sampling).
    Remembered per set of values: a backend asks for it several times per request."""
    return origin_of(
        f"openai:{model}@{base_url}",
        max_tokens=max_tokens,
        temperature=temperature,
        seed=seed if temperature > 0 else None,
    )


class EchoBackend:
    """Answers with the prompt itself. Reports no cost, and is never memoized: it runs no model."""

    name = "echo"
    runs_model = False
    origin = origin_of("echo")

    def generate(self, prompt: str) -> Reply:
        return Reply(f"echo: {prompt}")

    def chat(self, request: Any, on_piece: Callable[[str], None] | None = None) -> Reply:
        """Echoes the conversation's last message (a test double: it runs no model)."""
        reply = self.generate(request.question)
        if on_piece is not None:
            on_piece(reply.text)
        return reply


NO_MODEL_NOTICE = "No language model is connected, so this question has no answer here."


class NoModelBackend:
    """Says plainly that no language model is connected: the default where none is.

    It runs no model, so its notice is never remembered (``runs_model = False``), and it charges
    only the 1 µJ floor a figure may carry, ESTIMATED, with a basis saying no model ran. ``hint``
    is added to the notice: how to connect one where this backend is used.
    """

    runs_model = False
    origin = origin_of("none")

    def __init__(self, hint: str = "", *, name: str = "no-model") -> None:
        self.name = name
        self.hint = hint

    def generate(self, prompt: str) -> Reply:
        text = f"{NO_MODEL_NOTICE} {self.hint}".strip()
        return Reply(text, JouleCost.estimated(1, "no language model ran: only this notice"))

    def chat(self, request: Any, on_piece: Callable[[str], None] | None = None) -> Reply:
        """The same notice for a conversation."""
        reply = self.generate("")
        if on_piece is not None:
            on_piece(reply.text)
        return reply


class NeuralStage:
    """Asks a backend; never passes.

    A reply enters eoc here, so it is checked here: text (``str``) of valid Unicode, no
    control characters but tab and newlines, not empty, at most :data:`MAX_REPLY_BYTES`;
    anything else is a :class:`~eoc.errors.BackendError` and nothing is remembered.

    Args:
        backend: any :class:`Backend`; defaults to :class:`EchoBackend`.
        figure_uj: a flat figure (ESTIMATED) charged when the backend reports none. By
            default such an answer is charged by tokens in and out
            (:func:`~eoc.stages.base.work_estimate`).
    """

    stage = Stage.NEURAL

    def __init__(self, backend: Backend | None = None, *, figure_uj: int | None = None) -> None:
        self.backend: Backend = backend if backend is not None else EchoBackend()
        self.figure = stage_figure(Stage.NEURAL, figure_uj)
        self._flat = figure_uj is not None

    def rates(self) -> WorkRates | None:
        """The backend's own ``work_rates`` when it has them (else the stage's defaults)."""
        found = getattr(self.backend, "work_rates", None)
        return found if isinstance(found, WorkRates) else None

    def origin(self) -> str:
        """What makes this stage's answers now: the backend's ``origin`` (read afresh each time,
        so a changed ``max_tokens`` counts), or its name when it has none."""
        found = getattr(self.backend, "origin", None)
        if isinstance(found, str) and found:
            return found
        return origin_of(f"backend:{self.backend.name}")

    def lookup(self, query: Query) -> Answer:
        chat = query.conversation
        if chat is not None and query.context is None and not hasattr(self.backend, "chat"):
            chat = None  # a plain question at the defaults: a backend without chat() answers it
        started = time.perf_counter()
        try:
            if chat is not None:
                reply = self._chat(chat, query.on_piece)
            elif (
                query.on_piece is not None
                and isinstance(self.backend, Streams)
                and self.backend.streams is True
            ):
                reply = self.backend.generate(query.prompt, on_piece=query.on_piece)
            else:
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
        # a model that ran and said nothing printable (it counted its tokens) gave an empty
        # answer, served as such and never remembered; any other empty reply is a failure
        said_nothing = (
            not reply.text.strip() and reply.tokens_in is not None and reply.tokens_out is not None
        )
        if said_nothing:
            reply = reply._replace(text="", memoize=False)
        else:
            try:
                check_text(reply.text, "the reply", max_bytes=MAX_REPLY_BYTES)
            except InputError as exc:
                raise BackendError(
                    f"neural backend {self.backend.name!r} returned unusable text: {exc.reason}"
                ) from None
        if reply.estimate is not None and (
            not isinstance(reply.estimate, JouleCost) or reply.estimate.measured
        ):
            raise BackendError(
                f"neural backend {self.backend.name!r} reported an estimate that is not an "
                "ESTIMATED JouleCost"
            )
        tokens = _token_counts(self.backend.name, reply)
        runs_model = bool(getattr(self.backend, "runs_model", True))  # no model: none generated
        # memo policy (docs/design.md §4): never remember what no model said, nor a sampled
        # answer, nor a broken one (a repetition loop: eoc.stages.degenerate), which says why
        memo = runs_model and reply.memoize is not False
        unkept = ""
        if memo and not said_nothing:
            wrote = reply.content if reply.content is not None else reply.text
            unkept = repetition_loop(wrote) or ""
            memo = not unkept
        return Answer(
            reply.text,
            reply.cost,
            memo=memo,
            unkept=unkept,
            tokens=tokens,
            generation=self._generation(query, reply, tokens, started) if runs_model else None,
            own_estimate=reply.estimate,
        )

    def count_tokens(self, text: str) -> int | None:
        """How many tokens the model's own tokenizer makes of ``text``, where the backend has one
        at hand (``count_tokens``: a loaded local model); ``None`` otherwise."""
        count = getattr(self.backend, "count_tokens", None)
        if not callable(count):
            return None
        n = count(text)
        return n if type(n) is int and 0 <= n <= MAX_TOKENS else None

    def _generation(
        self, query: Query, reply: Reply, tokens: tuple[int, int] | None, started: float
    ) -> Generation:
        """How the model generated this answer: the backend's finish reason, else "length" when
        it used all of its ``max_tokens`` (the request's, else the backend's), else "stop"."""
        reason = reply.finish_reason
        if reason is None:
            chat = query.conversation
            limit = (
                chat.max_tokens if chat is not None else getattr(self.backend, "max_tokens", None)
            )
            if not isinstance(limit, int):
                reason = "stop"  # no limit cut it
            elif tokens is not None:
                reason = "length" if tokens[1] >= limit else "stop"
            elif token_bound(reply.text) < limit:
                reason = "stop"  # too short to have reached the limit, however it is counted
            # else unknown: it may have been cut (a server that says neither why it stopped nor
            # how many tokens it wrote), and it is never replayed as finished
        seconds = round(min(86_400.0, max(0.0, time.perf_counter() - started)), 6)
        try:
            return checked_generation(Generation(reason, tokens, seconds))
        except InputError as exc:
            raise BackendError(
                f"neural backend {self.backend.name!r} reported {exc.reason}"
            ) from None

    def _chat(self, chat: object, on_piece: Callable[[str], None] | None) -> Reply:
        """A whole conversation (:class:`eoc.chat.request.ChatRequest`) for a backend that takes one."""
        ask = getattr(self.backend, "chat", None)
        if not callable(ask):
            raise BackendError(
                f"neural backend {self.backend.name!r} answers single questions only: it cannot "
                "take a conversation or sampling parameters (give it a chat(request) method)"
            )
        return ask(chat, on_piece)  # type: ignore[no-any-return]

    def worst_case(self, query: Query) -> JouleCost:
        """The most an answer to ``query`` is expected to cost, ESTIMATED: the flat figure when
        the stage has one, else its tokens in and the most tokens it may generate out (the
        request's ``max_tokens``, else the backend's, else :data:`DEFAULT_MAX_TOKENS`) at the
        work-scaled rates. A live counter may still read more: an estimate bounds nothing."""
        if self._flat:
            return self.figure
        chat = query.conversation
        out = chat.max_tokens if chat is not None else getattr(self.backend, "max_tokens", None)
        if isinstance(out, bool) or not isinstance(out, int) or out < 1:
            out = DEFAULT_MAX_TOKENS
        tokens_in = approx_tokens(query.prompt if chat is None else chat.texts())
        return work_estimate(Stage.NEURAL, tokens_in=tokens_in, tokens_out=out, rates=self.rates())

    def would_cost(self, query: Query, payload: str) -> JouleCost | None:
        """What this stage's model would have spent answering ``query`` with ``payload``, had it
        been asked (ESTIMATED), for the savings ledger (:mod:`eoc.ledger`): the flat figure when
        the stage has one, else the question's tokens in and the answer's tokens out, one per
        four characters, at the work-scaled rates. Only the question the cheap answer answers
        counts, as the kv folds it (runs of spaces one, the edges trimmed), not the rest of a
        conversation: the cheap tier did not read it, and a client must not inflate what eoc
        says it saved by padding a question a fact answers or sending it after a long context. ``None`` when the backend runs no model (the no-model notice, the echo):
        there is no model to compare with, and that is no figure, not 0."""
        if not getattr(self.backend, "runs_model", True):
            return None
        if self._flat:
            return self.figure
        return work_estimate(
            Stage.NEURAL,
            tokens_in=approx_tokens(fold(query.prompt)),  # spaces and edges padded: not read
            tokens_out=approx_tokens(payload),
            rates=self.rates(),
        )

    def estimate(self, query: Query, answer: Answer) -> JouleCost:
        """This stage's own ESTIMATED figure for an answer whose backend reported none.

        The backend's own estimate (``Reply.estimate``) when it gave one; else charged by the
        backend's token counts when it gave them, else by an approximation.
        """
        if answer.own_estimate is not None:
            return answer.own_estimate
        if self._flat:
            return self.figure
        chat = query.conversation
        tokens_in, tokens_out = answer.tokens or (
            approx_tokens(query.prompt if chat is None else chat.texts()),
            approx_tokens(answer.payload),
        )
        return work_estimate(
            Stage.NEURAL, tokens_in=tokens_in, tokens_out=tokens_out, rates=self.rates()
        )


MAX_TOKENS = 1 << 24
"""More tokens than any context holds: a count above it is a backend's error."""


def _token_counts(name: str, reply: Reply) -> tuple[int, int] | None:
    """The reply's (tokens in, tokens out), checked; ``None`` when the backend gave none."""
    if reply.tokens_in is None and reply.tokens_out is None:
        return None
    counts = (reply.tokens_in, reply.tokens_out)
    for n in counts:
        if type(n) is not int or not 0 <= n <= MAX_TOKENS:
            raise BackendError(
                f"neural backend {name!r} reported token counts {counts!r}: "
                f"each must be a whole number from 0 to {MAX_TOKENS}"
            )
    return (int(reply.tokens_in), int(reply.tokens_out))  # type: ignore[arg-type]


__all__ = [
    "MAX_TOKENS",
    "NO_MODEL_NOTICE",
    "Backend",
    "EchoBackend",
    "LoadsWithProgress",
    "NeuralStage",
    "NoModelBackend",
    "Reply",
    "Streams",
    "TakesMaxTokens",
    "endpoint_origin",
    "origin_of",
]
