"""``POST /v1/embeddings``: OpenAI's embeddings API, answered by the native MiniLM and remembered.

A request names ``all-MiniLM-L6-v2`` (or ``sentence-transformers/all-MiniLM-L6-v2``) and sends
``input``, one text or a list of up to :data:`MAX_INPUTS`; ``encoding_format`` is ``float`` (the
default) or ``base64`` (little-endian float32, as OpenAI sends it); ``dimensions`` is refused
unless it is 384, the only size MiniLM makes. Each text is cut at MiniLM's 256 tokens, as
sentence-transformers cuts it; ``usage`` counts the tokens read.

Each text is its own query in a small cascade of its own (:class:`Embeddings`): the server's
cache, then the model. A text embedded before by the same model files is the stored vector,
charged as a cache hit with its receipt; a new one is embedded and charged as the model's work
(MEASURED where a live counter brackets it, else ESTIMATED from its multiply-adds at the
constant of the runtime that ran them: :func:`embed_rates`). The vector is kept as its base64
text, so a repeat is the same bytes. Each answer's verdict is in the body's ``eoc.answers``; the headers are one text's own,
or sum several.

Any other model id goes to the upstream as sent, when the server has one (its reply relayed
and kept exactly: :mod:`eoc.chat.request`'s forwarded requests).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from eoc.cascade import Cascade
from eoc.chat.request import BadRequest, embedding_inputs
from eoc.query import Query, Stage
from eoc.response import Response
from eoc.stages.base import WorkRates, work_estimate
from eoc.stages.contract import StageLike
from eoc.stages.neural import NeuralStage, Reply, origin_of
from eoc_native import require
from eoc_native.semantic.minilm_energy import EMBED_RATES, embed_rates
from eoc_native.serve.wire import summed, verdict, verdict_headers

MODEL = "all-MiniLM-L6-v2"
NAMES = (MODEL, f"sentence-transformers/{MODEL}")
"""The model ids the native embedder answers."""
MAX_INPUTS = 2048
"""The most texts one request may send (OpenAI's own limit)."""
CONTEXT = "embedding"
"""The context of an embedding's query: no question's key can equal it (:class:`Query`)."""


class MiniLMBackend:
    """The native MiniLM as the model stage of the embeddings cascade: a text in, its vector out
    (base64 of little-endian float32), with the tokens it read and its estimate."""

    runs_model = True
    name = f"minilm:{MODEL}"

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder
        # a vector is served again only by the same model files
        self.origin = origin_of(self.name, files=getattr(embedder, "fingerprint", None))

    @property
    def work_rates(self) -> WorkRates:
        """The rates of the embedder's runtime once chosen (its first embedding), the float32
        pass's before."""
        return embed_rates(getattr(self.embedder, "chosen_runtime", None) or "float32")

    def generate(self, prompt: str) -> Reply:
        np = require("numpy")
        tokens = len(self.embedder.tokenizer.encode(prompt).ids)
        vector = np.asarray(self.embedder.embed(prompt), dtype="<f4")
        rates = embed_rates(getattr(self.embedder, "runtime", "float32"))
        return Reply(
            base64.b64encode(vector.tobytes()).decode("ascii"),
            tokens_in=tokens,
            tokens_out=0,
            estimate=work_estimate(Stage.NEURAL, tokens_in=tokens, rates=rates),
            finish_reason="stop",
        )


class Embeddings:
    """The native embeddings: their cascade (the server's cache, then MiniLM) and their bodies.

    Args:
        cache: the server's cache stage (its store keeps the vectors with the answers).
        cascade: the server's cascade, whose meter, probe, signer and reuse policy this shares.
        embedder: the MiniLM embedder (:class:`eoc_native.semantic.minilm.MiniLMEmbedder`).
    """

    def __init__(self, cache: StageLike, cascade: Cascade, embedder: Any) -> None:
        self.cascade = Cascade(
            [cache, NeuralStage(MiniLMBackend(embedder))],
            cascade.meter,
            liveness=cascade.liveness,
            signer=cascade.signer,
            reuse=cascade.reuse,
        )

    @staticmethod
    def parse(doc: Mapping[str, Any]) -> tuple[list[str], str]:
        """The texts and the encoding a request asks for.

        Raises:
            BadRequest: a field missing, of the wrong kind, or asking what MiniLM cannot do.
        """
        extra = sorted(set(doc) - {"model", "input", "encoding_format", "dimensions", "user"})
        if extra:
            raise BadRequest(
                f"unknown field {extra[0]!r:.60}: the embeddings API takes model, input, "
                "encoding_format, dimensions and user"
            )
        texts = embedding_inputs(doc)
        if len(texts) > MAX_INPUTS:
            raise BadRequest(f'"input" holds {len(texts)} texts; the limit is {MAX_INPUTS}')
        if not all(isinstance(t, str) for t in texts):
            raise BadRequest(
                '"input" holds something other than text (token ids are not taken): send text'
            )
        fmt = doc.get("encoding_format")
        if fmt is None:
            fmt = "float"
        if fmt not in ("float", "base64"):
            raise BadRequest('"encoding_format" is "float" or "base64"')
        dims = doc.get("dimensions")
        if dims is not None and (isinstance(dims, bool) or dims != 384):
            raise BadRequest(
                f'{MODEL} makes 384-dimensional vectors only: leave out "dimensions" (or send 384)'
            )
        user = doc.get("user")
        if user is not None and not isinstance(user, str):
            raise BadRequest('"user" must be a string')
        return texts, str(fmt)

    @staticmethod
    def query(text: str) -> Query:
        """The query of one text (raises the prompt's own InputError for a bad one)."""
        return Query(text, context=CONTEXT)

    def body(
        self, model: str, answers: Sequence[Response], fmt: str, public_key: str | None
    ) -> tuple[bytes, list[tuple[bytes, bytes]]]:
        """The embeddings body and its headers (the answers' verdicts summed)."""
        np = require("numpy")
        data: list[dict[str, Any]] = []
        tokens = 0
        for i, r in enumerate(answers):
            vector: Any = r.payload
            if fmt == "float":
                vector = np.frombuffer(base64.b64decode(r.payload), dtype="<f4")
            data.append({"object": "embedding", "index": i, "embedding": vector})
            counted = r.tokens or (r.generation.tokens if r.generation is not None else None)
            tokens += counted[0] if counted else 0
        doc = {
            "object": "list",
            "data": data,
            "model": model,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            "eoc": {"answers": [verdict(r, public_key) for r in answers]},
        }
        body = orjson.dumps(doc, option=orjson.OPT_SERIALIZE_NUMPY)
        # one text: its answer's own headers (the receipt's digest, what a hit avoided)
        said = verdict_headers(answers[0]) if len(answers) == 1 else summed_headers(answers)
        return body, [
            (b"content-type", b"application/json"),
            *said,
            (b"content-length", str(len(body)).encode()),
        ]


def summed_headers(answers: Sequence[Response]) -> list[tuple[bytes, bytes]]:
    """The ``x-eoc-*`` headers of several answers (:func:`eoc_native.serve.wire.summed`)."""
    stage, uj, provenance = summed(answers)
    return [
        (b"x-eoc-stage", stage.encode()),
        (b"x-eoc-microjoules", str(uj).encode()),
        (b"x-eoc-provenance", provenance.encode()),
    ]


__all__ = [
    "EMBED_RATES",
    "MAX_INPUTS",
    "MODEL",
    "NAMES",
    "Embeddings",
    "MiniLMBackend",
    "embed_rates",
]
