"""What a remembered entry keeps besides its answer: how a model generated it, and its age.

:class:`Generation` is what the model said of one answer: why it stopped (``finish_reason``),
its token counts and how long it took. A remembered answer replays it, so a client told
``length`` the first time is told ``length`` again. An answer a model made but that was stored
before eoc kept this (a store of schema version 2 or older) replays :data:`UNKNOWN`: its
``finish_reason`` and usage are ``None``, never made up.

:class:`EntryMeta` is what a store keeps per cache and kv entry (schema version 3, one JSON text
column covered by the row's checksum): when it was stored, when it expires (a TTL), and the
generation, with what making the answer cost (:class:`MadeCost`, the savings ledger's record:
a replay in another process avoided that). A record eoc would not have written (a negative,
NaN, huge or non-integer figure, a provenance other than measured or estimated, a measured
figure without its counter) is refused like any other bad field: the row is listed as damaged
and never served, never trusted. :func:`parse_duration` reads the durations ``--ttl`` and ``eoc store forget
--older-than`` take ("30d", "12h", "90m", "45s", or seconds).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from eoc.cost import METERING_KINDS, JouleCost
from eoc.errors import ConfigError, InvalidText

MAX_TTL_S = 100 * 365 * 86_400
"""The longest TTL or age accepted: a hundred years, in seconds."""
MAX_META_BYTES = 4096
"""The largest entry record read from a store, in UTF-8 bytes."""
MAX_MADE_UJ = 864 * 10**12
"""The largest cost of making one answer a store may record: a day at 10 kW, in µJ."""
MAX_MADE_BASIS = 240
"""The longest basis kept with a made cost, in characters (a longer one is cut, with "…")."""
MAX_MADE_NAME = 128
"""The longest counter or host name kept with a made cost, in characters (printable ASCII)."""
_REASON = re.compile(r"[a-z_]{1,32}")
_DIGEST = re.compile(r"[0-9a-f]{64}")
_ASKED = re.compile(r"[0-9a-f]{32}")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 7 * 86_400}
_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*")
UNKNOWN_NOTE = "stored before eoc kept how answers were generated: finish reason and usage unknown"
FINISH_UNKNOWN_NOTE = (
    "the model's server said neither why the answer ended nor how many tokens it wrote: it may "
    "have been cut, so it is replayed only to the same request"
)


@dataclass(frozen=True, slots=True)
class MadeCost:
    """What making one answer cost, as the cascade charged it then (stored with the entry, so a
    replay in another process, or after a restart, avoided what it really cost).

    ``provenance`` is "measured" or "estimated" as charged then; ``counter`` and
    ``counter_kind`` the counter it was read on (a measured one always names them); ``host`` the
    machine (``platform.node()``). A measured record is a claim read back from a file: the
    cascade keeps it ``measured-when-made`` only on the host that made it, with that counter live
    now (docs/design.md §3 rule 5, :func:`eoc.ledger.recorded_cost`).
    """

    uj: int
    provenance: str
    basis: str
    counter: str | None = None
    counter_kind: str | None = None
    host: str | None = None

    @classmethod
    def of(cls, cost: JouleCost, host: str | None) -> MadeCost | None:
        """The record of ``cost`` made on ``host``; ``None`` when it cannot be kept faithfully
        (a figure past :data:`MAX_MADE_UJ`, a counter name eoc would not read back): the replay
        then estimates, never upgrades."""
        basis = cost.basis
        if len(basis) > MAX_MADE_BASIS:
            basis = basis[: MAX_MADE_BASIS - 1] + "…"
        kind = None if cost.counter_kind is None else cost.counter_kind.value
        host = host if host and _name_ok(host) else None
        try:
            return checked_made(
                cls(cost.uj, cost.provenance.value, basis, cost.counter, kind, host)
            )
        except InvalidText:
            return None

    def to_doc(self) -> dict[str, Any]:
        return {
            "uj": self.uj,
            "prov": self.provenance,
            "basis": self.basis,
            "counter": self.counter,
            "kind": self.counter_kind,
            "host": self.host,
        }


_MADE_KEYS = {"uj", "prov", "basis", "counter", "kind", "host"}
_METERING = {k.value for k in METERING_KINDS}


def _name_ok(name: object) -> bool:
    return (
        isinstance(name, str)
        and 0 < len(name) <= MAX_MADE_NAME
        and name.isascii()
        and name.isprintable()
    )


def checked_made(value: object) -> MadeCost:
    """``value`` if it is a sound :class:`MadeCost`.

    Raises:
        InvalidText: whole µJ not from 1 to :data:`MAX_MADE_UJ` (a bool, a float, NaN, a negative
            or a huge figure), a provenance other than "measured" or "estimated", a measured
            figure that names no counter or a kind no live counter has, a basis that is not short
            printable text, a counter or host name that is not short printable ASCII.
    """
    if not isinstance(value, MadeCost):
        raise InvalidText(f"a made cost is a MadeCost, not {type(value).__name__}")
    uj, prov = value.uj, value.provenance
    if type(uj) is not int or not 1 <= uj <= MAX_MADE_UJ:
        raise InvalidText(f"a made cost is whole µJ from 1 to {MAX_MADE_UJ}, not {uj!r:.40}")
    if prov not in ("measured", "estimated"):
        raise InvalidText(f"a made cost is measured or estimated, not {prov!r:.40}")
    basis = value.basis
    if not isinstance(basis, str) or not basis.isprintable() or len(basis) > MAX_MADE_BASIS:
        raise InvalidText(f"a made cost's basis is printable text of at most {MAX_MADE_BASIS}")
    for what, name in (("counter", value.counter), ("host", value.host)):
        if name is not None and not _name_ok(name):
            raise InvalidText(f"a made cost's {what} is short printable ASCII, not {name!r:.40}")
    kind = value.counter_kind
    if kind is not None and kind not in _METERING and kind != "none":
        raise InvalidText(f"a made cost's counter kind is not one eoc knows: {kind!r:.40}")
    if prov == "measured" and (value.counter is None or kind not in _METERING):
        raise InvalidText("a measured made cost names its counter and a live counter's kind")
    return value


def _made_from_doc(doc: object) -> MadeCost:
    if not isinstance(doc, dict) or set(doc) != _MADE_KEYS:
        raise InvalidText("a made cost record has other fields than eoc writes")
    return checked_made(
        MadeCost(doc["uj"], doc["prov"], doc["basis"], doc["counter"], doc["kind"], doc["host"])
    )


@dataclass(frozen=True, slots=True)
class Generation:
    """How a model generated one answer: why it stopped, its (tokens in, tokens out), the
    seconds it took, what making it cost (``made``: :class:`MadeCost`, ``None`` when not
    recorded) and the receipt it was made with (``receipt``). ``finish_reason`` ``None`` means
    unknown (:data:`UNKNOWN`)."""

    finish_reason: str | None
    tokens: tuple[int, int] | None = None
    seconds: float | None = None
    made: MadeCost | None = None
    receipt: str | None = None
    """The digest of the receipt the answer was given with when the model made it: the answer's
    name, by which it is forgotten (:mod:`eoc.store.forget`), whoever serves it again."""

    @property
    def known(self) -> bool:
        return self.finish_reason is not None

    def to_dict(self, replayed: bool) -> dict[str, Any]:
        """As ``Response.to_dict()`` shows it: ``replayed`` when a store served it again."""
        out: dict[str, Any] = {
            "finish_reason": self.finish_reason,
            "tokens": None
            if self.tokens is None
            else {"in": self.tokens[0], "out": self.tokens[1]},
            "seconds": self.seconds,
            "replayed": replayed,
        }
        if self.receipt is not None:
            out["receipt"] = self.receipt
        if not self.known:
            out["note"] = UNKNOWN_NOTE if self.seconds is None else FINISH_UNKNOWN_NOTE
        return out


UNKNOWN = Generation(None)
"""A remembered model answer whose generation was not kept (stored before schema version 3)."""


def checked_generation(value: object) -> Generation:
    """``value`` if it is a sound :class:`Generation`.

    Raises:
        InvalidText: a finish reason that is not a short lower-case word, token counts that are
            not two whole numbers from 0 to 2**24, seconds not finite and from 0 to a day.
    """
    if not isinstance(value, Generation):
        raise InvalidText(f"a generation record is a Generation, not {type(value).__name__}")
    reason, tokens, seconds = value.finish_reason, value.tokens, value.seconds
    if reason is not None and (not isinstance(reason, str) or not _REASON.fullmatch(reason)):
        raise InvalidText(f"a finish reason is a short lower-case word, not {reason!r:.40}")
    if tokens is not None and (
        not isinstance(tokens, tuple)
        or len(tokens) != 2
        or any(type(n) is not int or not 0 <= n <= 1 << 24 for n in tokens)
    ):
        raise InvalidText(f"token counts are two whole numbers from 0 to 2**24, not {tokens!r:.60}")
    if seconds is not None and (
        isinstance(seconds, bool)
        or not isinstance(seconds, (int, float))
        or not (math.isfinite(seconds) and 0 <= seconds <= 86_400)
    ):
        raise InvalidText(f"generation seconds are from 0 to 86400, not {seconds!r:.40}")
    if value.made is not None:
        checked_made(value.made)
    if value.receipt is not None and (
        not isinstance(value.receipt, str) or not _DIGEST.fullmatch(value.receipt)
    ):
        raise InvalidText(f"a made receipt is 64 lower-case hex digits, not {value.receipt!r:.70}")
    return value


@dataclass(frozen=True, slots=True)
class EntryMeta:
    """What a store keeps with one entry: ``stored_at`` and ``expires_at`` (Unix seconds;
    ``None``: unknown, or never) and how a model generated it (``None`` when no model did)."""

    stored_at: float | None
    expires_at: float | None = None
    generation: Generation | None = None
    asked: str | None = None
    """For a cache entry, the question it answers as a digest (:func:`eoc.stages.cache.asked_of`:
    the folded last message, whatever conversation, system prompt or parameters came with it), so
    forgetting a question reaches every cache entry made for it; ``None`` where not recorded."""

    def expired(self, now: float, max_age: float | None = None) -> bool:
        """Whether the entry may no longer be served at ``now``: past its own expiry, or older
        than ``max_age`` seconds (a store-wide TTL; an entry of unknown age counts as older)."""
        if self.expires_at is not None and now >= self.expires_at:
            return True
        if max_age is None:
            return False
        return self.stored_at is None or now - self.stored_at >= max_age

    def to_text(self) -> str:
        """The canonical JSON a store writes (and checksums)."""
        gen = self.generation
        doc: dict[str, Any] = {"at": self.stored_at, "exp": self.expires_at}
        if self.asked is not None:
            doc["q"] = self.asked
        if gen is not None:
            doc["finish"] = gen.finish_reason
            doc["tokens"] = None if gen.tokens is None else list(gen.tokens)
            doc["seconds"] = gen.seconds
            if gen.made is not None:
                doc["made"] = gen.made.to_doc()
            if gen.receipt is not None:
                doc["receipt"] = gen.receipt
        return json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False)


NO_META = EntryMeta(None)
"""An entry stored before schema version 3: its age and generation are unknown."""


def _time(value: object, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidText(f"{what} is a number of Unix seconds, not {value!r:.40}")
    if not 0 <= value <= 1e11:
        raise InvalidText(f"{what} {value!r:.40} is not a time eoc writes")
    return float(value)


def meta_from_text(text: str) -> EntryMeta:
    """An entry record read from a store; "" is :data:`NO_META` (a row from before version 3).

    Raises:
        InvalidText: anything eoc would not have written (the store lists the row as damaged).
    """
    if text == "":
        return NO_META
    if not isinstance(text, str) or len(text.encode("utf-8", "replace")) > MAX_META_BYTES:
        raise InvalidText("an entry record is JSON text of at most 4 KiB")
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        raise InvalidText("an entry record is not JSON") from None
    if not isinstance(doc, dict) or not {"at", "exp"} <= doc.keys() <= {
        "at",
        "exp",
        "finish",
        "tokens",
        "seconds",
        "made",
        "receipt",
        "q",
    }:
        raise InvalidText("an entry record has other fields than eoc writes")
    if ("made" in doc or "receipt" in doc) and "finish" not in doc:
        raise InvalidText("an entry record has a made cost or receipt but no generation")
    gen = None
    if "finish" in doc:
        tokens = doc.get("tokens")
        gen = checked_generation(
            Generation(
                doc["finish"],
                tuple(tokens) if isinstance(tokens, list) else tokens,
                doc.get("seconds"),
                None if "made" not in doc else _made_from_doc(doc["made"]),
                doc.get("receipt"),
            )
        )
    asked = doc.get("q")
    if asked is not None and not (isinstance(asked, str) and _ASKED.fullmatch(asked)):
        raise InvalidText("an entry record's question digest is 32 lower-case hex digits")
    return EntryMeta(_time(doc["at"], "stored_at"), _time(doc["exp"], "expires_at"), gen, asked)


def checked_ttl(value: object, what: str = "a TTL") -> float | None:
    """A TTL in seconds (a number, or a duration text as :func:`parse_duration` reads), or
    ``None`` for none.

    Raises:
        ConfigError: negative, zero, not finite, longer than a hundred years, or not a number.
    """
    if value is None:
        return None
    if isinstance(value, str):
        return parse_duration(value, what)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(
            f"{what} is a number of seconds or a duration like 12h, not {value!r:.40}"
        )
    if not 0 < value <= MAX_TTL_S:
        raise ConfigError(f"{what} must be more than 0 and at most 100 years, got {value!r}")
    return float(value)


def parse_duration(text: str, what: str = "a duration") -> float:
    """Seconds in "30d", "12h", "90m", "45s", "2w" or a bare number of seconds.

    Raises:
        ConfigError: anything else, zero, or more than a hundred years.
    """
    m = _DURATION.fullmatch(text) if isinstance(text, str) and len(text) <= 40 else None
    if m is None:
        raise ConfigError(
            f"{what} is a number with a unit s, m, h, d or w (e.g. 30d, 12h), not {text!r:.40}"
        )
    seconds = float(m.group(1)) * _UNITS[m.group(2) or "s"]
    if not 0 < seconds <= MAX_TTL_S:
        raise ConfigError(f"{what} must be more than 0 and at most 100 years, got {text!r}")
    return seconds


__all__ = [
    "MAX_MADE_UJ",
    "MAX_TTL_S",
    "NO_META",
    "UNKNOWN",
    "EntryMeta",
    "Generation",
    "MadeCost",
    "checked_generation",
    "checked_made",
    "checked_ttl",
    "meta_from_text",
    "parse_duration",
]
