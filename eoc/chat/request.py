"""Conversations as the OpenAI API sends them, and what their cache key is.

:func:`parse_chat` checks a ``/v1/chat/completions`` (or ``/v1/completions``) request body,
already decoded from JSON, and returns a :class:`ChatRequest` whose :meth:`~ChatRequest.query`
is what the cascade resolves. The rules for what may answer a request (docs/serve.md, "What a
cache key is"):

* The key of a request is the whole conversation (every message with its role, the system
  prompt included), the model, and every parameter that changes the answer: ``max_tokens``,
  ``temperature``, ``top_p``, ``stop``, ``seed``, the penalties. Parameters that cannot change
  it are left out (``top_p`` and ``seed`` when decoding is greedy, ``stream``, ``user``).
* A *plain question* (one user message, no system prompt, every parameter at the server's
  default) is keyed by its text alone, so the server, ``eoc query`` and the browser share its
  cache entry, and kv and graph may answer it.
* Anything else is keyed by the canonical JSON of the whole request: the cache answers only
  the same conversation with the same parameters. A model's remembered answer is served to
  another request only in its *partition* (:mod:`eoc.store.partition`, :attr:`ChatRequest.partition`):
  a request whose conversation is one user message, after system messages or none, is in the
  partition of its model, system prompt and content-changing parameters (``temperature``;
  ``top_p`` and ``seed`` when sampling; ``stop``; the penalties), where kv serves a paraphrase
  the model's answer to an earlier one; ``max_tokens`` only bounds the answer (one that stopped
  by itself within the request's ``max_tokens``, or one cut at the same ``max_tokens``). A
  follow-up (earlier turns) is in none: "and its population?" means something else in every
  conversation. A *fact* (an answer no model made: kv's pack, the graph, a computation) may
  still answer it when its last message stands alone, it has no stop strings, no system prompt
  unless the server allows facts under one, and the fact fits ``max_tokens``
  (:mod:`eoc.chat.followup`, :attr:`ChatRequest.facts_may_answer`).
* A sampled request without a seed (temperature above 0) would get another answer each time:
  a model's answer to it is neither served from the cache nor stored, unless the server was
  told otherwise; a fact is the same at any temperature.

Pure standard library: the browser build uses it too.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from eoc.chat.fields import (
    FIELDS,
    MAX_MESSAGES,
    MAX_OUTPUT_TOKENS,
    MAX_STOP,
    MAX_STOP_BYTES,
    MAX_USER_CHARS,
    ROLES,
    bounds,
    fields_of,
)
from eoc.chat.followup import stands_alone
from eoc.errors import InputError, InputTooLarge
from eoc.query import MAX_PROMPT_BYTES, Query, check_text
from eoc.stages.neural import DEFAULT_MAX_TOKENS
from eoc.store.partition import Partition

MAX_CONVERSATION_BYTES = 256 << 10
"""The most UTF-8 bytes all messages of one request may hold together (256 KiB)."""
_SYSTEM_ROLES = ("system", "developer")
_MAX_MODEL_CHARS = FIELDS["model"][1]["maxLength"]
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _canonical_json(doc: dict[str, Any]) -> str:
    """``doc`` as canonical JSON: sorted keys, no spaces, text as written."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class BadRequest(InputError):
    """A request body the API does not take; the message names the field and what to send."""


@dataclass(frozen=True)
class ChatDefaults:
    """What a request that sets nothing gets: the served model and its sampling defaults."""

    model: str
    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = 0.0
    top_p: float = 1.0
    cache_sampled: bool = False
    """Serve and store sampled answers without a seed too (off: each would differ)."""
    facts_under_system_prompts: bool = False
    """Let kv and graph answer facts under a system prompt (off: a system prompt may ask for
    another language or format; see :mod:`eoc.chat.followup`)."""
    partitions: bool = True
    """Keep a model's answer to a request in a partition and serve it to paraphrases there
    (:mod:`eoc.store.partition`; off: only the exact request gets it again, as before partitions)."""


@dataclass(frozen=True)
class ChatRequest:
    """One checked request, with every parameter filled in from the defaults.

    ``kind`` is ``"chat"`` (a conversation rendered with the model's chat template) or
    ``"completion"`` (raw text continued as is: ``messages`` is one user message).
    """

    kind: str
    model: str
    messages: tuple[tuple[str, str], ...]
    max_tokens: int
    temperature: float
    top_p: float
    stop: tuple[str, ...] = ()
    seed: int | None = None
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    stream: bool = False
    include_usage: bool = False
    names: tuple[str | None, ...] = ()
    """Each message's ``name`` (``None`` where it has none; empty when none has one): part of the
    key, and handed to a backend that takes it."""
    forward: str | None = None
    """For a request eoc does not answer itself (tools, JSON mode, ``n``, log-probs, fields it
    does not know: :func:`forwarded_feature`), the canonical JSON of the whole body, its key material;
    ``None`` for a request eoc answers. Such a request goes to the upstream as sent."""
    body: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    """A forwarded request's body as the client sent it (what the upstream gets)."""
    defaults: ChatDefaults = field(default=ChatDefaults("eoc"), compare=False, repr=False)

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0.0

    @property
    def repeatable(self) -> bool:
        """Greedy or seeded: the same request gets the same answer."""
        return self.greedy or self.seed is not None

    @property
    def question(self) -> str:
        """The last message's text: what a stage that reads one question reads."""
        return self.messages[-1][1]

    @property
    def plain(self) -> bool:
        """One user message, no system prompt, every parameter at the default (see module)."""
        d = self.defaults
        return (
            self.forward is None
            and self.kind == "chat"
            and len(self.messages) == 1
            and self.messages[0][0] == "user"
            and self.model == d.model
            and self.max_tokens == d.max_tokens
            and self.temperature == d.temperature
            and (self.greedy or self.top_p == d.top_p)
            and not self.stop
            and (self.greedy or self.seed is None)
            and self.presence_penalty == 0.0
            and self.frequency_penalty == 0.0
            and not any(self.names)
        )

    def canonical(self) -> str:
        """The request's key material: canonical JSON of everything that changes the answer
        (for a forwarded request, its whole body but ``user``: :func:`forwarded_key`)."""
        if self.forward is not None:
            return _canonical_json({"v": 1, "kind": self.kind, "forward": self.forward})
        doc: dict[str, Any] = {
            "v": 1,
            "kind": self.kind,
            "model": self.model,
            "messages": [list(m) for m in self.messages],
            "max_tokens": self.max_tokens,
            **self._sampling(),
        }
        if any(self.names):
            doc["names"] = list(self.names)
        return _canonical_json(doc)

    def _sampling(self) -> dict[str, Any]:
        """The parameters that change an answer's content, as the key material holds them."""
        doc: dict[str, Any] = {
            "temperature": self.temperature,
            "stop": list(self.stop),
            "presence_penalty": self.presence_penalty,
            "frequency_penalty": self.frequency_penalty,
        }
        if not self.greedy:  # greedy decoding ignores top_p and the seed
            doc["top_p"] = self.top_p
            doc["seed"] = self.seed
        return doc

    def query(
        self, on_piece: Callable[[str], None] | None = None, reuse: str | None = None
    ) -> Query:
        """The query the cascade resolves for this request (its id is the cache key).

        ``on_piece`` is handed to a backend that streams (each piece of text as it comes);
        ``reuse`` is the request's own policy for remembered model answers
        (:data:`eoc.query.REUSE`; ``eoc serve`` reads it from the ``x-eoc-reuse`` header).
        """
        cacheable = self.repeatable or self.defaults.cache_sampled
        context = None if self.plain else self.canonical()
        return Query(
            self.question if self.forward is None else _forwarded_prompt(self),
            context=context,
            cacheable=cacheable,
            conversation=self,
            on_piece=on_piece,
            facts_ok=context is not None and self.facts_may_answer,
            partition=None if context is None else self.partition,
            reuse=reuse,
        )

    @property
    def partition(self) -> Partition | None:
        """The kv partition of a request that is not a plain question (:mod:`eoc.store.partition`):
        a chat whose messages are system messages (or none) and then one user message, whose
        answer may be remembered (greedy, seeded, or sampled where the server caches sampled
        answers), and whose messages carry no names. ``None`` for anything else: a plain
        question (the shared partition), a follow-up, a completion, a named message."""
        if (
            not self.defaults.partitions
            or self.kind != "chat"
            or self.plain
            or any(self.names)
            or self.forward is not None
        ):
            return None
        if not (self.repeatable or self.defaults.cache_sampled):
            return None
        *before, last = self.messages
        if last[0] != "user" or any(role != "system" for role, _ in before):
            return None
        doc = {
            "v": 1,
            "model": self.model,
            "system": [text for _, text in before],
            **self._sampling(),
        }
        return Partition.of(_canonical_json(doc), self.max_tokens, facts=self.facts_may_answer)

    @property
    def facts_may_answer(self) -> bool:
        """Whether a fact may answer this request though it is not a plain question: its last
        message stands alone, no stop string, and no system prompt unless the server allows
        facts under one (:mod:`eoc.chat.followup`)."""
        if self.kind != "chat" or self.messages[-1][0] != "user" or self.stop:
            return False
        if self.forward is not None:
            return False  # the reply must be a tool call, JSON or what the upstream makes
        if any(role == "system" for role, _ in self.messages):
            if not self.defaults.facts_under_system_prompts:
                return False
        return stands_alone(self.question)

    def texts(self) -> str:
        """Every message's text, one per line (what a token estimate reads)."""
        return "\n".join(text for _, text in self.messages)

    def as_messages(self) -> list[dict[str, str]]:
        """The conversation as OpenAI-style dicts (``role``, ``content``, and ``name`` where a
        message has one)."""
        out = [{"role": role, "content": text} for role, text in self.messages]
        for message, name in zip(out, self.names, strict=False):
            if name is not None:
                message["name"] = name
        return out


def forwarded_feature(doc: Mapping[str, Any], kind: str) -> str:
    """What in ``doc`` eoc does not answer itself, named for a message ("" when nothing is):
    tools or a tool choice, a ``response_format`` other than text, ``n`` above 1, log-probs, a
    field eoc does not know, or a message it does not read (a tool call or result, an image).
    With an upstream such a request is forwarded (:attr:`ChatRequest.forward`); without one it
    is refused."""
    allowed = fields_of(kind)
    unknown = sorted(str(k) for k in doc if k not in allowed)
    if unknown:
        return f"the field {unknown[0]!r:.60}"
    if doc.get("tools") not in (None, []) or doc.get("tool_choice") not in (None, "none"):
        return "tools"
    logprobs = doc.get("logprobs")
    if logprobs is not None and logprobs is not False:  # 0 is no answer to "false"
        return "logprobs"
    if doc.get("response_format") not in (None, {"type": "text"}):
        return "a response_format other than text (JSON mode, a JSON schema)"
    n = doc.get("n")
    if n is not None and (n != 1 or isinstance(n, bool)):
        return '"n" other than 1'
    messages = doc.get("messages")
    if kind == "chat" and isinstance(messages, list):
        for msg in messages:
            if isinstance(msg, Mapping) and _unread(msg):
                return "a message eoc does not read (a tool call or its result, an image)"
    return ""


def _unread(msg: Mapping[str, Any]) -> bool:
    """Whether a message is of a kind only a forwarding server takes."""
    if msg.get("role") in ("tool", "function") or set(msg) - {"role", "content", "name"}:
        return True
    content = msg.get("content")
    if content is None and msg.get("role") == "assistant":
        return True
    return isinstance(content, list) and any(
        not isinstance(p, Mapping) or p.get("type") != "text" for p in content
    )


def parse_chat(
    doc: object, defaults: ChatDefaults, *, kind: str = "chat", forwards: bool = False
) -> ChatRequest:
    """Check a request body and fill in the defaults.

    ``forwards``: the server has an upstream, and a request with what eoc does not answer
    itself (:func:`forwarded_feature`) is forwarded to it as sent (:func:`_forwarded`).

    Raises:
        BadRequest: a field is missing, unknown, of the wrong type or out of range (the
            message names it); or, without ``forwards``, asks for what eoc does not do
            itself (tools, JSON mode, ``n`` > 1, logprobs).
        InputTooLarge: more than :data:`MAX_MESSAGES` messages or
            :data:`MAX_CONVERSATION_BYTES` bytes of text.
        PromptTooLong: the last message is longer than a prompt may be.
    """
    if not isinstance(doc, Mapping):
        raise BadRequest("the request body must be a JSON object")
    model = doc.get("model")
    if not isinstance(model, str) or not model.strip() or len(model) > _MAX_MODEL_CHARS:
        raise BadRequest('"model" is required: the name of a served model (GET /v1/models)')
    feature = forwarded_feature(doc, kind)
    if feature and forwards:
        return _forwarded(doc, model, defaults, kind)
    if feature.startswith("the field "):
        allowed = fields_of(kind)
        raise BadRequest(
            f"unknown field {feature[10:]}: eoc takes {', '.join(sorted(allowed))} (with "
            "--upstream, eoc serve forwards other fields to the upstream)"
        )
    if feature:
        raise BadRequest(
            f"a request with {feature} needs a model server behind eoc: start eoc serve with "
            "--upstream URL, "
            "which forwards such requests (the model run in this process answers text only)"
        )
    names: tuple[str | None, ...] = ()
    if kind == "chat":
        messages, names = _messages(doc.get("messages"))
    else:
        messages = (("user", _completion_prompt(doc.get("prompt"))),)
    stream = _streamed(doc)
    options = doc.get("stream_options")
    if options is not None and (
        not isinstance(options, Mapping)
        or set(options) - {"include_usage"}
        or not isinstance(options.get("include_usage", False), bool)
    ):
        raise BadRequest('"stream_options" takes only {"include_usage": true|false}')
    legacy = _whole(doc.get("max_tokens"), "max_tokens", None)
    max_tokens = doc.get("max_completion_tokens")
    if max_tokens is None:
        max_tokens = legacy
    temperature = _number(doc, "temperature", defaults.temperature)
    top_p = _top_p(doc, defaults.top_p)  # checked even when greedy decoding ignores it
    seed = _whole(doc.get("seed"), "seed", None)
    return ChatRequest(
        kind=kind,
        model=model,
        messages=messages,
        max_tokens=_whole(max_tokens, "max_completion_tokens", defaults.max_tokens),
        temperature=temperature,
        top_p=top_p if temperature > 0 else 1.0,
        stop=_stops(doc.get("stop")),
        seed=seed if temperature > 0 else None,
        presence_penalty=_number(doc, "presence_penalty", 0.0),
        frequency_penalty=_number(doc, "frequency_penalty", 0.0),
        stream=bool(stream),
        include_usage=bool(options and options.get("include_usage")),
        names=names if any(names) else (),
        defaults=defaults,
    )


FORWARD_LABEL = "(a forwarded request)"
"""The prompt of a forwarded request whose last message holds no text (a tool call)."""
_MAX_N = 128


def forwarded_key(doc: Mapping[str, Any]) -> str:
    """The key material of a forwarded request: canonical JSON of its whole body but ``user``
    (which names the caller and changes no answer). Everything else is in it: the messages,
    the tools and the tool choice, the response format and its schema, ``n``, log-probs,
    ``stream`` and its options (a streamed reply is kept as its events), and every field the
    upstream takes."""
    return _canonical_json({k: v for k, v in doc.items() if k != "user"})


def _forwarded(
    doc: Mapping[str, Any], model: str, defaults: ChatDefaults, kind: str
) -> ChatRequest:
    """A request forwarded to the upstream as sent (see :func:`forwarded_feature`).

    Checked here only for what eoc itself reads: the messages (each an object with a role,
    their text for the estimate), ``stream``, ``user``, and the sampling fields that decide
    whether the same request gets the same reply again (``temperature``, ``seed``) and the
    most tokens it may cost (``max_tokens`` times ``n``). The upstream checks the rest. A
    request without ``temperature`` samples at the upstream's default, unknown here: it is
    taken as sampled."""
    messages: tuple[tuple[str, str], ...]
    if kind == "chat":
        value = doc.get("messages")
        if not isinstance(value, list) or not value:
            raise BadRequest('"messages" must be a non-empty list of message objects')
        if len(value) > MAX_MESSAGES:
            raise InputTooLarge(f"{len(value)} messages; the limit is {MAX_MESSAGES}")
        out = []
        for i, msg in enumerate(value):
            if not isinstance(msg, Mapping) or not isinstance(msg.get("role"), str):
                raise BadRequest(f"messages[{i}] must be an object with a role")
            out.append((str(msg["role"]), _said(msg)))
        messages = tuple(out)
        size = len("\n".join(t for _, t in messages).encode("utf-8"))
        if size > MAX_CONVERSATION_BYTES:
            raise InputTooLarge(
                f"the messages hold {size:,} bytes of text, more than "
                f"{MAX_CONVERSATION_BYTES:,}: shorten the conversation"
            )
    elif kind == "embedding":
        texts = embedding_inputs(doc)
        messages = (("user", "\n".join(t for t in texts if isinstance(t, str))),)
    else:
        messages = (("user", _completion_prompt(doc.get("prompt"))),)
    stream = _streamed(doc)
    options = doc.get("stream_options")
    if options is not None and not isinstance(options, Mapping):
        raise BadRequest('"stream_options" must be an object')
    n = doc.get("n")
    if n is None:
        n = 1
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= _MAX_N:
        raise BadRequest(f'"n" must be a whole number from 1 to {_MAX_N}')
    given = doc.get("max_completion_tokens")
    if given is None:
        given = _whole(doc.get("max_tokens"), "max_tokens", None)
    max_tokens = _whole(given, "max_completion_tokens", defaults.max_tokens)
    # an embedding is the same each time; a reply without a temperature is sampled at the
    # upstream's default, unknown here
    temperature = _number(doc, "temperature", 0.0 if kind == "embedding" else 1.0)
    seed = _whole(doc.get("seed"), "seed", None)
    return ChatRequest(
        kind=kind,
        model=model,
        messages=messages,
        max_tokens=min(MAX_OUTPUT_TOKENS * _MAX_N, max_tokens * n),
        temperature=temperature,
        top_p=1.0,
        seed=seed if temperature > 0 else None,
        stream=bool(stream),
        include_usage=bool(options and options.get("include_usage") is True),
        forward=forwarded_key(doc),
        body=doc,
        defaults=defaults,
    )


def forwarded_embedding(doc: object, defaults: ChatDefaults) -> ChatRequest:
    """An embeddings request (``POST /v1/embeddings``) for a model the upstream serves, forwarded
    as sent and kept exactly as a forwarded chat request is (:func:`forwarded_key`).

    Raises:
        BadRequest: no model, or no ``input`` of text.
    """
    if not isinstance(doc, Mapping):
        raise BadRequest("the request body must be a JSON object")
    model = doc.get("model")
    if not isinstance(model, str) or not model.strip() or len(model) > _MAX_MODEL_CHARS:
        raise BadRequest('"model" is required: the name of an embedding model (GET /v1/models)')
    return _forwarded(doc, model, defaults, "embedding")


def _said(msg: Mapping[str, Any]) -> str:
    """The text of a forwarded message, for the estimate: its text, text parts, and the
    names and arguments of its tool calls ("" where it holds none)."""
    found: list[str] = []
    content = msg.get("content")
    if isinstance(content, str):
        found.append(content)
    elif isinstance(content, list):
        found.extend(
            str(p.get("text"))
            for p in content
            if isinstance(p, Mapping) and isinstance(p.get("text"), str)
        )
    found.extend(tool_call_text(msg.get("tool_calls")))
    return "\n".join(found)


def tool_call_text(calls: object) -> list[str]:
    """Each tool call's function name and arguments, where ``calls`` is a list of them (a
    message's ``tool_calls``, a reply's or a stream delta's): what a model wrote there."""
    found: list[str] = []
    for call in calls if isinstance(calls, list) else ():
        fn = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(fn, Mapping):
            found.extend(v for k in ("name", "arguments") if isinstance(v := fn.get(k), str))
    return found


def embedding_inputs(doc: Mapping[str, Any]) -> list[Any]:
    """An embeddings request's ``input`` as a list (one text is a list of one).

    Raises:
        BadRequest: no text, and no non-empty list.
    """
    given = doc.get("input")
    texts = [given] if isinstance(given, str) else given
    if not isinstance(texts, list) or not texts:
        raise BadRequest('"input" must be a text or a non-empty list of texts')
    return texts


def _streamed(doc: Mapping[str, Any]) -> bool:
    """Whether a request asks for a stream, its ``user`` checked on the way.

    Raises:
        BadRequest: a ``user`` that is not a short string, a ``stream`` that is not a boolean.
    """
    user = doc.get("user")
    if user is not None and (not isinstance(user, str) or len(user) > MAX_USER_CHARS):
        raise BadRequest(f'"user" must be a string of at most {MAX_USER_CHARS} characters')
    stream = doc.get("stream", False)
    if stream is not None and not isinstance(stream, bool):
        raise BadRequest('"stream" must be true or false')
    return bool(stream)


def _forwarded_prompt(request: ChatRequest) -> str:
    """The prompt of a forwarded request's query: its last message's text where that is a valid
    prompt, else :data:`FORWARD_LABEL` (the key is its context, whatever the prompt)."""
    try:
        return Query(request.question).prompt
    except InputError:
        return FORWARD_LABEL


def _messages(
    value: object,
) -> tuple[tuple[tuple[str, str], ...], tuple[str | None, ...]]:
    """The messages as (role, text) and each one's name (``None`` where it has none)."""
    if not isinstance(value, list) or not value:
        raise BadRequest('"messages" must be a non-empty list of {"role", "content"} objects')
    if len(value) > MAX_MESSAGES:
        raise InputTooLarge(f"{len(value)} messages; the limit is {MAX_MESSAGES}")
    out: list[tuple[str, str]] = []
    names: list[str | None] = []
    total = 0
    for i, msg in enumerate(value):
        where = f"messages[{i}]"
        if not isinstance(msg, Mapping):
            raise BadRequest(f"{where} must be an object with role and content")
        extra = set(msg) - {"role", "content", "name"}
        if extra:
            raise BadRequest(f"{where} has a field eoc does not take: {sorted(extra)[0]!r:.40}")
        name = msg.get("name")
        if name is not None and (
            not isinstance(name, str) or not _NAME.fullmatch(name) or len(name) > 64
        ):
            raise BadRequest(
                f"{where}.name must be 1 to 64 letters, digits, _ or - (the OpenAI API's form)"
            )
        names.append(name)
        role = msg.get("role")
        if role not in ROLES:
            raise BadRequest(f"{where}.role must be one of {', '.join(ROLES)}")
        text = _content(msg.get("content"), where)
        total += len(text.encode("utf-8"))
        if total > MAX_CONVERSATION_BYTES:
            raise InputTooLarge(
                f"the messages hold more than {MAX_CONVERSATION_BYTES:,} bytes of text: "
                "shorten the conversation"
            )
        out.append(("system" if role in _SYSTEM_ROLES else str(role), text))
    if out[-1][0] == "system":
        raise BadRequest("the last message must be a user (or assistant) message, not system")
    Query(out[-1][1])  # the question itself must be a valid prompt (PromptTooLong, ...)
    return tuple(out), tuple(names)


def _content(value: object, where: str) -> str:
    if isinstance(value, list):  # content parts: only text parts are taken
        parts = []
        for part in value:
            if not isinstance(part, Mapping) or part.get("type") != "text":
                raise BadRequest(f"{where}.content: only text parts are supported")
            parts.append(part.get("text"))
        if not all(isinstance(p, str) for p in parts):
            raise BadRequest(f"{where}.content: a text part's text must be a string")
        value = "".join(p for p in parts if isinstance(p, str))
    if not isinstance(value, str):
        raise BadRequest(f"{where}.content must be text")
    try:
        return check_text(
            value, f"{where}.content", max_bytes=MAX_CONVERSATION_BYTES, error=BadRequest
        )
    except BadRequest:
        raise
    except InputError as exc:  # pragma: no cover - check_text raises the error it is given
        raise BadRequest(exc.reason) from None


def _completion_prompt(value: object) -> str:
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if not isinstance(value, str):
        raise BadRequest('"prompt" must be one string (lists of several prompts are not taken)')
    Query(value)  # PromptTooLong, EmptyPrompt, InvalidText with their own messages
    return value


def _stops(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or len(items) > MAX_STOP:
        raise BadRequest(f'"stop" must be a string or a list of at most {MAX_STOP} strings')
    out = []
    for s in items:
        if not isinstance(s, str) or not s or len(s.encode("utf-8")) > MAX_STOP_BYTES:
            raise BadRequest(f'each "stop" string must be 1 to {MAX_STOP_BYTES} bytes of text')
        out.append(s)
    return tuple(out)


def _number(doc: Mapping[str, Any], name: str, default: float) -> float:
    """A number field within the bounds the field table gives it (:mod:`eoc.chat.fields`)."""
    low, high = bounds(name)
    value = doc.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BadRequest(f'"{name}" must be a number from {low:g} to {high:g}')
    if not low <= value <= high:
        raise BadRequest(f'"{name}" must be from {low:g} to {high:g}, not {value!r}')
    return float(value)


def _top_p(doc: Mapping[str, Any], default: float) -> float:
    value = _number(doc, "top_p", default)
    if value <= 0.0:
        raise BadRequest(
            '"top_p" must be above 0 (and at most 1); for greedy answers send temperature 0'
        )
    return value


def _whole(value: object, name: str, default: int | None) -> Any:
    """A whole-number field within the bounds the field table gives it."""
    low, high = bounds(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest(f'"{name}" must be a whole number')
    if not low <= value <= high:
        raise BadRequest(f'"{name}" must be from {low} to {high}, not {value}')
    return value


__all__ = [
    "MAX_CONVERSATION_BYTES",
    "MAX_MESSAGES",
    "MAX_OUTPUT_TOKENS",
    "MAX_PROMPT_BYTES",
    "MAX_STOP",
    "MAX_STOP_BYTES",
    "ROLES",
    "BadRequest",
    "ChatDefaults",
    "ChatRequest",
    "embedding_inputs",
    "forwarded_embedding",
    "forwarded_feature",
    "forwarded_key",
    "parse_chat",
    "tool_call_text",
]
