"""``POST /v1/eoc/forget``: forget remembered answers (:mod:`eoc.store.forget`), for admin keys only.

The body is ``{"question": str, "stage": "cache"|"kv", "older_than": "30d"|seconds, "receipt":
hex, "response_id": str}`` (at least one; all given must hold): ``receipt`` or ``response_id``
names one remembered model answer (any receipt or response id this server gave with it, or the
receipt it was made with, ``eoc.generation.receipt``), so an app's thumbs-down removes it. A server that takes no API keys has no admin, so it forgets nothing
(403); without a valid key the answer is 401, with a key not marked ``admin`` in the keys file 403;
a malformed body is 400 with eoc's error class as its ``type``. The answer says how many entries
each stage removed (``{"forgot": {"cache": n, "kv": m}}``), and ``/metrics`` counts them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eoc.errors import EocError, InputError
from eoc.files.bounded import loads_strict
from eoc.store.forget import Forget, forget_from_json

MAX_BODY_BYTES = 16 << 10
"""The largest body read: a question and two short fields."""


def parse(body: bytes, made_receipt: Callable[[str], str] | None = None) -> Forget:
    """The request's :class:`~eoc.store.forget.Forget`; ``made_receipt`` reads a receipt or response
    id the body names (the server's: it knows which answer its replays and streams gave).

    Raises:
        InputError: not JSON, too large, or as :func:`eoc.store.forget.forget_from_json` refuses.
    """
    if len(body) > MAX_BODY_BYTES:
        raise InputError(f"a forget request is at most {MAX_BODY_BYTES} bytes of JSON")
    try:
        doc = loads_strict(body, what="the forget request")
    except EocError as exc:
        raise InputError(exc.reason) from None
    return forget_from_json(doc, made_receipt)


def forget(cascade: Any, what: Forget) -> dict[str, int]:
    """Forget from the cascade's cache and kv (memory and store); counts per stage."""
    return dict(cascade.forget(what))


__all__ = ["MAX_BODY_BYTES", "forget", "parse"]
