"""A kv vector as a store keeps it: JSON text, dense or sparse, read back only when sound."""

from __future__ import annotations

import json
import math
from typing import Any

MAX_VECTOR_BYTES = 8 << 20
"""Largest stored vector (JSON) decoded; a larger or malformed one is re-embedded."""


def encode_vector(vec: Any) -> str:
    """A kv vector as stored: JSON ``{"dense": [...]}`` or ``{"sparse": {index: value}}``."""
    if isinstance(vec, dict):
        return json.dumps({"sparse": {str(k): v for k, v in vec.items()}})
    return json.dumps({"dense": [float(x) for x in vec]})


def decode_vector(text: str, embedder: Any, dense: bool) -> Any:
    """A stored vector for ``embedder``, or ``None`` (re-embed) if it is too large, malformed,
    not finite, or of the wrong kind or size."""
    if len(text) > MAX_VECTOR_BYTES:
        return None
    try:
        doc = json.loads(text)
        if not isinstance(doc, dict):
            return None
        dim = getattr(embedder, "dim", None)
        if isinstance(doc.get("sparse"), dict):
            sparse = {int(k): float(v) for k, v in doc["sparse"].items()}
            ok = all(math.isfinite(v) and (dim is None or 0 <= k < dim) for k, v in sparse.items())
            return sparse if ok and not dense else None
        values = doc.get("dense")
        if isinstance(values, list) and values and (dim is None or len(values) == dim):
            floats = [float(x) for x in values]
            return floats if dense and all(map(math.isfinite, floats)) else None
    except (ValueError, TypeError, RecursionError):
        pass  # json.JSONDecodeError is a ValueError; int("x"), float([]) and deep nesting
    return None


__all__ = ["MAX_VECTOR_BYTES", "decode_vector", "encode_vector"]
