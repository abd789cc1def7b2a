"""How many multiply-adds one token takes in a GGUF model, read from the file's header.

    python web/ggufmacs.py MODEL.gguf

The page prices its model's answers by multiply-adds (eoc.stages.page_model.page_rates). Every
weight matrix of a decoder is multiplied once per token, so a generated token takes as many
multiply-adds as the 2-D weights hold, the output head included (``output.weight``, or the token
embeddings when the head is tied to them); a prompt token skips the head (llama.cpp computes the
logits of the last prompt token only). Attention over the context adds a little more per token
and is left out (at SmolLM2-135M's sizes and a short context it is under 1 %).

Only the header is read (the key-value metadata, then the tensor list), with the standard
library, in bounded steps: a file that is not GGUF, cut short, or claims absurd sizes is a
:class:`GGUFHeaderError` saying so.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path
from typing import BinaryIO, NamedTuple

MAGIC = b"GGUF"
MAX_COUNT = 1 << 24
"""The most tensors, metadata keys or array items the header may claim."""
MAX_STRING = 1 << 20
"""The longest string in the header (a chat template is a few KB)."""
MAX_DIMS = 8
_FIXED = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9


class GGUFHeaderError(ValueError):
    """The file is not a GGUF model whose header eoc can read."""


class ModelWork(NamedTuple):
    """What one token takes: multiply-adds generated and in the prompt, and the architecture."""

    architecture: str
    macs_per_token: int
    macs_per_prompt_token: int
    parameters: int


class _Reader:
    def __init__(self, f: BinaryIO, name: str) -> None:
        self.f = f
        self.name = name

    def take(self, n: int) -> bytes:
        data = self.f.read(n)
        if len(data) != n:
            raise GGUFHeaderError(f"{self.name}: the GGUF header is cut short")
        return data

    def fixed(self, code: str) -> object:
        return struct.unpack("<" + code, self.take(struct.calcsize(code)))[0]

    def count(self, what: str) -> int:
        n = int(self.fixed("Q"))  # type: ignore[call-overload]
        if n > MAX_COUNT:
            raise GGUFHeaderError(f"{self.name}: the header claims {n:,} {what}: not a model file")
        return n

    def string(self) -> str:
        n = int(self.fixed("Q"))  # type: ignore[call-overload]
        if n > MAX_STRING:
            raise GGUFHeaderError(f"{self.name}: a header string of {n:,} bytes: damaged file")
        return self.take(n).decode("utf-8", "replace")

    def value(self, kind: int) -> object:
        if kind in _FIXED:
            return self.fixed(_FIXED[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            item = int(self.fixed("I"))  # type: ignore[call-overload]
            n = self.count("array items")
            if item in _FIXED:  # skipped in one read: a vocabulary's scores, say
                self.take(n * struct.calcsize(_FIXED[item]))
                return n
            for _ in range(n):
                self.value(item)
            return n
        raise GGUFHeaderError(f"{self.name}: unknown metadata type {kind}: damaged or newer file")


def model_work(path: str | Path) -> ModelWork:
    """The multiply-adds a token takes in the GGUF model at ``path``."""
    path = Path(path)
    with open(path, "rb") as f:
        r = _Reader(f, path.name)
        if r.take(4) != MAGIC:
            raise GGUFHeaderError(f"{path.name}: not a GGUF file (no GGUF magic)")
        version = r.fixed("I")
        if version not in (2, 3):
            raise GGUFHeaderError(f"{path.name}: GGUF version {version}, eoc reads 2 and 3")
        n_tensors = r.count("tensors")
        n_keys = r.count("metadata keys")
        arch = ""
        for _ in range(n_keys):
            key = r.string()
            value = r.value(int(r.fixed("I")))  # type: ignore[call-overload]
            if key == "general.architecture" and isinstance(value, str):
                arch = value
        sizes: dict[str, tuple[int, ...]] = {}
        for _ in range(n_tensors):
            name = r.string()
            n_dims = int(r.fixed("I"))  # type: ignore[call-overload]
            if not 1 <= n_dims <= MAX_DIMS:
                raise GGUFHeaderError(f"{path.name}: tensor {name!r} has {n_dims} dimensions")
            dims = tuple(int(r.fixed("Q")) for _ in range(n_dims))  # type: ignore[call-overload]
            r.fixed("I")  # its type
            r.fixed("Q")  # its offset
            sizes[name] = dims
    return _work(arch, sizes, path.name)


def _work(arch: str, sizes: dict[str, tuple[int, ...]], name: str) -> ModelWork:
    def elements(dims: tuple[int, ...]) -> int:
        n = 1
        for d in dims:
            n *= d
        return n

    matrices = {k: elements(v) for k, v in sizes.items() if len(v) == 2 and k.endswith(".weight")}
    if "token_embd.weight" not in matrices:
        raise GGUFHeaderError(f"{name}: no token_embd.weight: not a decoder eoc can price")
    head = matrices.get("output.weight", matrices["token_embd.weight"])  # tied when absent
    body = sum(n for k, n in matrices.items() if k not in ("token_embd.weight", "output.weight"))
    if body <= 0:
        raise GGUFHeaderError(f"{name}: no weight matrices besides the embeddings")
    return ModelWork(
        arch or "unknown",
        macs_per_token=body + head,
        macs_per_prompt_token=body,
        parameters=sum(elements(v) for v in sizes.values()),
    )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python web/ggufmacs.py MODEL.gguf")
    try:
        print(model_work(sys.argv[1]))
    except (OSError, GGUFHeaderError) as exc:
        sys.exit(f"ggufmacs: {exc}")
