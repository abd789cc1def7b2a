"""What an OpenAI-compatible server's chat completion says, read the same way by the page's
backend (:mod:`eoc.stages.browser_remote`) and the native one (``eoc_native.remote``): the reply
object, its first choice, its text and finish reason, any energy it claims, and the checks on a
server's address and the sampling options sent to it."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from eoc.errors import BackendError, ConfigError

EXCERPT_CHARS = 200
"""The most characters of a server's body quoted in an error."""
MAX_TOKENS_LIMIT = 1 << 20
_ENERGY_KEY = re.compile(r"energy|joule", re.IGNORECASE)
_SPACES = re.compile(r"\s+")


def printable(text: str, limit: int) -> str:
    """``text`` on one line, without control characters, at most ``limit`` characters."""
    flat = _SPACES.sub(" ", text).strip()
    flat = "".join(c for c in flat if c.isprintable())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


Fail = Callable[[str], BackendError]
"""How a backend turns a message into its error (it names itself, and may redact)."""


def reply_object(doc: object, what: str, fail: Fail) -> dict[str, Any]:
    """``doc`` as a JSON object that reports no error, else ``fail(why)`` is raised."""
    if not isinstance(doc, dict):
        raise fail(f"the server's {what} is a JSON {type(doc).__name__}, not an object")
    if "error" in doc and doc["error"] is not None:
        err = doc["error"]
        msg = err.get("message") if isinstance(err, dict) else err
        raise fail(f"the server reports an error: {printable(str(msg), EXCERPT_CHARS)}")
    return doc


def first_choice(
    doc: Mapping[str, Any], fail: Fail, *, allow_none: bool = False
) -> dict[str, Any] | None:
    """The reply's first choice (``None`` for none, when ``allow_none``: a stream's last event)."""
    choices = doc.get("choices")
    if not isinstance(choices, list):
        raise fail("the reply has no list of choices: not an OpenAI chat completion")
    if not choices:
        if allow_none:
            return None
        raise fail("the reply has no choices")
    first = choices[0]
    if not isinstance(first, dict):
        raise fail(f"the reply's first choice is {type(first).__name__}, not an object")
    return first


_FINISH = re.compile(r"[a-z_]{1,32}")


def finish_reason_of(choice: Mapping[str, Any] | None, fail: Fail) -> str | None:
    """Why the server says its answer ended (``"stop"``, ``"length"``, ...), from a choice (a
    reply's, or a stream event's); ``None`` when it says nothing. eoc keeps it: an answer the
    server cut at ``max_tokens`` is never replayed as finished.

    Raises:
        ``fail(why)``: a finish reason that is not a short lower-case word.
    """
    if choice is None:
        return None
    reason = choice.get("finish_reason")
    if reason is None:
        return None
    if not isinstance(reason, str) or not _FINISH.fullmatch(reason):
        raise fail(f"the reply's finish_reason is not a short lower-case word: {reason!r:.40}")
    return reason


def message_text(doc: Mapping[str, Any], fail: Fail) -> str:
    """The text of a (non-streamed) chat completion's first choice."""
    choice = first_choice(doc, fail)
    assert choice is not None
    message = choice.get("message")
    if not isinstance(message, dict):
        raise fail("the reply's choice has no message object")
    content = message.get("content")
    if not isinstance(content, str):
        raise fail(
            f"the reply's message content is {type(content).__name__}, not text"
            + (" (the model answered with a tool call or a refusal)" if content is None else "")
        )
    return content


MAX_CLAIMS = 3
"""The most energy claims of a server quoted in one basis."""


def energy_claims(doc: Mapping[str, Any], usage: Mapping[str, Any], into: dict[str, str]) -> None:
    """Add to ``into`` (up to :data:`MAX_CLAIMS`) what ``doc`` and its ``usage`` say of energy
    (keys naming energy or joules, with a finite number or some text), quoted as claims."""
    for where, block in (("", doc), ("usage.", usage)):
        for key, value in block.items():
            if len(into) >= MAX_CLAIMS or not _ENERGY_KEY.search(key) or isinstance(value, bool):
                continue
            if isinstance(value, int | float) and math.isfinite(value):
                shown = f"{value:g}"
            elif isinstance(value, str) and value.strip():
                shown = printable(value, 40)
            else:
                continue
            into[printable(where + key, 60)] = shown


def check_sampling(max_tokens: object, temperature: object, seed: object) -> None:
    """Refuse, with a :class:`ConfigError`, sampling options an OpenAI-compatible server takes
    badly: ``max_tokens`` 1 to :data:`MAX_TOKENS_LIMIT`, ``temperature`` 0 (greedy) to 2,
    ``seed`` a 64-bit whole number or ``None``."""
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise ConfigError(f"max_tokens must be a whole number, not {type(max_tokens).__name__}")
    if not 1 <= max_tokens <= MAX_TOKENS_LIMIT:
        raise ConfigError(f"max_tokens must be 1 to {MAX_TOKENS_LIMIT:,}; got {max_tokens}")
    if isinstance(temperature, bool) or not isinstance(temperature, int | float):
        raise ConfigError(f"temperature must be a number, not {type(temperature).__name__}")
    if not math.isfinite(temperature) or not 0 <= temperature <= 2:
        raise ConfigError(f"temperature must be 0 (greedy) to 2; got {temperature!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ConfigError(f"seed must be a whole number or None, not {type(seed).__name__}")
    if seed is not None and not -(2**63) <= seed < 2**64:
        raise ConfigError("seed must fit in 64 bits")


def check_base_url(
    url: object,
    *,
    missing: str = "no server given: pass an API root such as http://127.0.0.1:8080/v1",
    credentials: str = "base_url must not hold credentials",
) -> tuple[str, str]:
    """``(url without a trailing slash, host[:port])`` for an API root, or a ConfigError.

    ``missing`` and ``credentials`` are the messages for no URL and a URL with a user or password.
    """
    if url is None or url == "":
        raise ConfigError(missing)
    if not isinstance(url, str):
        raise ConfigError(f"base_url must be a string, not {type(url).__name__}")
    if len(url) > 2048 or any(not c.isprintable() or c.isspace() for c in url):
        raise ConfigError("base_url holds spaces or control characters: pass a plain URL")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ConfigError(
            f"base_url must start with http:// or https://, not {parts.scheme or 'nothing'}:// "
            "(e.g. http://127.0.0.1:8080/v1)"
        )
    if parts.username is not None or parts.password is not None:
        raise ConfigError(credentials)
    if parts.query or parts.fragment:
        raise ConfigError("base_url must have no ?query or #fragment: pass the API root only")
    try:
        parts.port  # noqa: B018 (checks the port)
    except ValueError:
        raise ConfigError("base_url has a port that is not a number from 0 to 65535") from None
    if not parts.hostname:
        raise ConfigError("base_url names no host (e.g. http://127.0.0.1:8080/v1)")
    return url.rstrip("/"), parts.netloc


__all__ = [
    "EXCERPT_CHARS",
    "MAX_CLAIMS",
    "MAX_TOKENS_LIMIT",
    "Fail",
    "check_base_url",
    "check_sampling",
    "energy_claims",
    "finish_reason_of",
    "first_choice",
    "message_text",
    "printable",
    "reply_object",
]
