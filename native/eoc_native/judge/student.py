"""The student: a logistic classifier distilled from the judge, in front of it.

It reads what costs microseconds: the cosine, why the guard refused (a changed word, an added
one, another wording, or only the cosine short), how many content words and letter triples the
two questions share, and their lengths. It was trained on pairs written for it
(``bench/suites/student/train.jsonl``, ten domains none of the evaluation sets uses), labelled by
the judge, never by hand (``scripts/train_student.py``); its weights and the two probabilities
at which it decides alone are data (``data/student.json``). Between them it hands the pair to the
judge, and gives the energy rule its probability.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from importlib import resources
from typing import Any

from eoc.errors import ConfigError
from eoc.text.forms import STOPWORDS, normalize, words

REASONS = ("", "lacks", "adds", "another wording", "too few")
"""The kinds of judgeable refusal, as the guard words them (:class:`eoc.stages.guard.Wording`);
"" is a pair the guard allows whose cosine was below the kv's threshold."""

FEATURES = (
    "cosine",
    *(f"reason:{r or 'none'}" for r in REASONS),
    "content_jaccard",
    "trigram_jaccard",
    "length_ratio",
    "stored_missing",
    "query_extra",
)


def reason_kind(reason: str) -> str:
    """Which of :data:`REASONS` a guard's judgeable refusal is."""
    if not reason:
        return ""
    if reason.startswith("the query lacks"):
        return "lacks"
    if reason.startswith("the query adds"):
        return "adds"
    if reason.startswith("too few"):
        return "too few"
    return "another wording"


def _content(text: str) -> list[str]:
    ws = words(normalize(text))
    return [w for w in ws if w not in STOPWORDS] or ws


def _trigrams(text: str) -> set[str]:
    t = " ".join(words(normalize(text)))
    return {t[i : i + 3] for i in range(max(0, len(t) - 2))}


def _logistic(weights: tuple[float, ...], bias: float, x: list[float]) -> float:
    """A logistic regression's probability for inputs ``x`` (its sum clamped, never overflowing)."""
    z = bias + sum(w * v for w, v in zip(weights, x, strict=True))
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def features(query: str, stored: str, *, reason: str, cosine: float) -> list[float]:
    """The student's inputs for one pair, in the order of :data:`FEATURES`."""
    kind = reason_kind(reason)
    q, s = _content(query), _content(stored)
    qs, ss = set(q), set(s)
    lq, ls = max(1, len(q)), max(1, len(s))
    return [
        float(cosine),
        *(1.0 if kind == r else 0.0 for r in REASONS),
        _jaccard(qs, ss),
        _jaccard(_trigrams(query), _trigrams(stored)),
        min(lq, ls) / max(lq, ls),
        len(ss - qs) / max(1, len(ss)),
        len(qs - ss) / max(1, len(qs)),
    ]


@dataclass(frozen=True)
class StudentJudge:
    """The logistic student (:class:`eoc.stages.judging.Student`).

    ``weights`` by :data:`FEATURES`, ``bias``; at ``serve_at`` or above it serves alone, at
    ``refuse_at`` or below it refuses alone; between, the judge decides.
    """

    weights: tuple[float, ...]
    bias: float
    serve_at: float
    refuse_at: float
    name: str = "student"

    def __post_init__(self) -> None:
        if len(self.weights) != len(FEATURES):
            raise ConfigError(
                f"the student has {len(self.weights)} weights for {len(FEATURES)} features"
            )
        if not all(math.isfinite(w) for w in (*self.weights, self.bias)):
            raise ConfigError("the student's weights are not all finite numbers")
        if not (0.0 <= self.refuse_at < self.serve_at <= 1.0):
            raise ConfigError(
                f"the student's refuse_at {self.refuse_at} must be below serve_at {self.serve_at}"
            )

    def probability(self, query: str, stored: str, *, reason: str, cosine: float) -> float:
        return _logistic(
            self.weights, self.bias, features(query, stored, reason=reason, cosine=cosine)
        )

    @classmethod
    def from_doc(cls, doc: dict[str, Any], **overrides: Any) -> StudentJudge:
        try:
            if list(doc["features"]) != list(FEATURES):
                raise ConfigError("the student's features are not this eoc's: train it again")
            fields: dict[str, Any] = {
                "weights": tuple(float(w) for w in doc["weights"]),
                "bias": float(doc["bias"]),
                "serve_at": float(doc["serve_at"]),
                "refuse_at": float(doc["refuse_at"]),
            }
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"the student's weights are malformed ({exc})") from None
        fields.update(overrides)
        return cls(**fields)

    def to_doc(self) -> dict[str, Any]:
        return {
            "features": list(FEATURES),
            "weights": list(self.weights),
            "bias": self.bias,
            "serve_at": self.serve_at,
            "refuse_at": self.refuse_at,
        }


MIX_FEATURES = ("judge_logit", *FEATURES)
"""The mix's inputs: the judge's log-odds of "yes", then the student's features."""


@dataclass(frozen=True)
class Mix:
    """How the judge's answer becomes a decision: a logistic mix of its log-odds of "yes" with
    the student's features (what a 1.5B model reads poorly, the cosine and the guard's reason
    say), fitted on hand-labelled pairs (``scripts/train_student.py``: the everyday set's tune
    part and the student's own pairs, never a part that is reported). At ``serve_at`` or above
    the pair is the same question."""

    weights: tuple[float, ...]
    bias: float
    serve_at: float

    def __post_init__(self) -> None:
        if len(self.weights) != len(MIX_FEATURES):
            raise ConfigError(
                f"the judge's mix has {len(self.weights)} weights for {len(MIX_FEATURES)} inputs"
            )
        if not all(math.isfinite(w) for w in (*self.weights, self.bias, self.serve_at)):
            raise ConfigError("the judge's mix holds a number that is not finite")
        if not 0.0 < self.serve_at < 1.0:
            raise ConfigError(
                f"the judge's mix serves at a probability in (0, 1), got {self.serve_at}"
            )

    def probability(
        self, p_yes: float, query: str, stored: str, *, reason: str, cosine: float
    ) -> float:
        p = min(max(p_yes, 1e-6), 1 - 1e-6)
        x = [math.log(p / (1 - p)), *features(query, stored, reason=reason, cosine=cosine)]
        return _logistic(self.weights, self.bias, x)

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> Mix:
        try:
            if list(doc["features"]) != list(MIX_FEATURES):
                raise ConfigError(
                    "the judge's mix reads other inputs than this eoc's: fit it again"
                )
            return cls(
                tuple(float(w) for w in doc["weights"]), float(doc["bias"]), float(doc["serve_at"])
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"the judge's mix is malformed ({exc})") from None

    def to_doc(self) -> dict[str, Any]:
        return {
            "features": list(MIX_FEATURES),
            "weights": list(self.weights),
            "bias": self.bias,
            "serve_at": self.serve_at,
        }


def shipped_mix() -> Mix | None:
    """The judge's mix for the native default, or ``None`` when none has been fitted (the judge
    then serves at its own P(yes) threshold)."""
    found = resources.files("eoc_native.judge").joinpath("data", "mix.json")
    if not found.is_file():
        return None
    return Mix.from_doc(json.loads(found.read_text(encoding="utf-8")))


def shipped_student() -> StudentJudge | None:
    """The student trained for the native default (MiniLM + the judge model), or ``None`` when
    none has been trained yet."""
    found = resources.files("eoc_native.judge").joinpath("data", "student.json")
    if not found.is_file():
        return None
    return StudentJudge.from_doc(json.loads(found.read_text(encoding="utf-8")))


__all__ = [
    "FEATURES",
    "MIX_FEATURES",
    "REASONS",
    "Mix",
    "StudentJudge",
    "features",
    "reason_kind",
    "shipped_mix",
    "shipped_student",
]
