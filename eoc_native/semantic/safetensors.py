"""Reading ``.safetensors`` files with numpy (the format: an 8-byte little-endian header length,
a JSON header naming each tensor's dtype, shape and byte range, then the raw data)."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

from eoc.errors import InputError
from eoc_native import require

_DTYPES = {"F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "BF16": "<u2"}


def load_safetensors(path: str | Path) -> dict[str, Any]:
    """Every tensor in the file as a numpy array (memory-mapped, read-only)."""
    np = require("numpy")
    p = Path(path)
    try:
        with p.open("rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            if n > 100 << 20:
                raise InputError(f"{p}: header of {n} bytes is not a safetensors header")
            header = json.loads(f.read(n))
    except (OSError, struct.error, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {p} as safetensors: {exc}") from None
    data = np.memmap(p, dtype=np.uint8, mode="r", offset=8 + n)
    out: dict[str, Any] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(info["dtype"])
        if dtype is None:
            raise InputError(f"{p}: tensor {name} has unsupported dtype {info['dtype']}")
        start, end = info["data_offsets"]
        out[name] = np.frombuffer(data[start:end], dtype=dtype).reshape(info["shape"])
    return out


__all__ = ["load_safetensors"]
