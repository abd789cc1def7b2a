"""How many multiply-adds one token takes in a GGUF model, read from the file's header.

    python web/ggufmacs.py MODEL.gguf

The page prices its model's answers by multiply-adds (eoc.stages.page_model.page_rates). Every
weight matrix of a decoder is multiplied once per token, so a generated token takes as many
multiply-adds as the 2-D weights hold, the output head included (``output.weight``, or the token
embeddings when the head is tied to them); a prompt token skips the head (llama.cpp computes the
logits of the last prompt token only). Attention over the context adds a little more per token
and is left out (at SmolLM2-135M's sizes and a short context it is under 1 %).

Only the header is read, by eoc's own parser (``native/eoc_native/llm/gguf_header.py``, standard
library only, so this runs in the venv ``make demo`` makes with pip alone): a file that is not
GGUF, cut short, or claims absurd sizes is a :class:`GGUFHeaderError` saying so.
"""

from __future__ import annotations

import mmap
import sys
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [p for p in (str(ROOT), str(ROOT / "native")) if p not in sys.path]
from eoc_native.llm.gguf_header import HeaderError as GGUFHeaderError  # noqa: E402
from eoc_native.llm.gguf_header import parse  # noqa: E402


class ModelWork(NamedTuple):
    """What one token takes: multiply-adds generated and in the prompt, and the architecture."""

    architecture: str
    macs_per_token: int
    macs_per_prompt_token: int
    parameters: int


def model_work(path: str | Path) -> ModelWork:
    """The multiply-adds a token takes in the GGUF model at ``path``."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            if path.stat().st_size == 0:
                header = parse(b"")  # an empty file cannot be mapped: say it is cut short
            else:
                with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                    header = parse(buf)
    except GGUFHeaderError as exc:
        raise GGUFHeaderError(f"{path.name}: {exc}") from None
    arch = header.metadata.get("general.architecture")
    sizes = {t.name: t.dims for t in header.tensors}
    return _work(arch if isinstance(arch, str) else "", sizes, path.name)


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
