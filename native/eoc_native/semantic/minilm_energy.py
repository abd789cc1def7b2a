"""What one MiniLM embedding is estimated to cost where no live counter brackets it: its tokens'
multiply-adds at the constant of the runtime that ran them (:mod:`eoc_native.llm.energy`).

Read by the embeddings endpoint (:mod:`eoc_native.serve.embeddings`) for a text it embeds, and by
the kv stage for a question it embedded to find a stored one (:meth:`MiniLMEmbedder.embed_estimate
<eoc_native.semantic.minilm.MiniLMEmbedder.embed_estimate>`).
"""

from __future__ import annotations

import functools

from eoc.cost import JouleCost
from eoc.stages.base import WorkRates
from eoc_native.llm.energy import nj_per_mac

MACS_PER_TOKEN = 6 * (4 * 384 * 384 + 2 * 384 * 1536)
"""MiniLM's multiply-adds per token read: 6 layers of four 384×384 projections and a 384→1536→384
feed-forward (attention's own share, n² × 384 a layer, is left out: under 1 % for short texts)."""
RUNTIME_BACKENDS = {"float32": ("numpy", "CPU"), "int8": ("cpu-int8", "8-bit encoder")}
"""Each MiniLM runtime's backend constant in :mod:`eoc_native.llm.energy`, and its name there."""


@functools.cache
def embed_rates(runtime: str) -> WorkRates:
    """What one embedding by MiniLM's ``runtime`` is estimated at where no live counter brackets
    it: its tokens' multiply-adds at that runtime's constant."""
    backend, what = RUNTIME_BACKENDS[runtime]
    nj = nj_per_mac(backend)
    return WorkRates(
        0.0,
        per_token_in_uj=MACS_PER_TOKEN * nj / 1000,
        why=f"MiniLM's {MACS_PER_TOKEN / 1e6:.1f}M multiply-adds a token at {nj:g} nJ each, "
        f"eoc's {what} constant (native/eoc_native/llm/energy.py)",
    )


EMBED_RATES = embed_rates("float32")
"""The float32 pass's rates: the higher, what a backend says before its runtime is chosen."""


def embedding_estimate(tokens: int, runtime: str) -> JouleCost:
    """The ESTIMATED figure for embedding one text of ``tokens`` tokens with ``runtime``."""
    rates = embed_rates(runtime)
    uj = tokens * rates.per_token_in_uj
    return JouleCost.estimated(
        max(1, round(uj)),
        f"embedding the question with MiniLM ({runtime}): {tokens} tokens × "
        f"{rates.per_token_in_uj:,.0f} µJ ({rates.why})",
    )


__all__ = [
    "EMBED_RATES",
    "MACS_PER_TOKEN",
    "RUNTIME_BACKENDS",
    "embed_rates",
    "embedding_estimate",
]
