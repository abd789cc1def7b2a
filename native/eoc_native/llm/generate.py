"""Text generation: prefill the prompt, then decode one token at a time.

:func:`generate_ids` yields token ids (greedy, or seeded temperature / top-p sampling) until
the end-of-sequence token, ``max_tokens`` or a full context; :func:`generate` turns them into
text pieces as they are produced and stops at stop strings.
"""

from __future__ import annotations

import codecs
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from eoc.errors import EocError, InputError, ModelFileError
from eoc_native.autotune.dispatch import Dispatcher
from eoc_native.llm.gguf import GGUFFile
from eoc_native.llm.layout_cache import LayoutCache
from eoc_native.llm.llama import Llama
from eoc_native.llm.shape import ModelArgs, check_model
from eoc_native.llm.tokenizer import GGUFTokenizer
from eoc_native.quant import kernels_cached, load_kernels


def load(
    path: str | os.PathLike[str],
    *,
    n_ctx: int = 512,
    dispatcher: Dispatcher | None = None,
    progress: Callable[[str, float], None] | None = None,
    layouts: LayoutCache | None = None,
    threads: int | None = None,
) -> tuple[Llama, GGUFTokenizer]:
    """Open a GGUF file and return its model (with an ``n_ctx`` KV cache) and tokenizer.

    ``progress(what, fraction)`` is told as the layers are read; ``layouts`` keeps the tiled
    weights for the next load (:class:`~eoc_native.llm.layout_cache.LayoutCache`: mapping them
    takes about 15 ms for SmolLM2, tiling them 60 ms in C and 0.3 s in numpy); ``threads`` is
    the kernels' thread count (:mod:`eoc_native.llm.threads`).
    """

    def tell(what: str) -> None:
        if progress is not None:
            progress(what, 0.0)

    build = None
    if not kernels_cached():
        # the C kernels compile (the compiler is a process of its own, on another core) while
        # the header and the tokenizer are read: about 0.1 s of the 0.6 s a first run waits
        build = threading.Thread(target=_kernels_quietly, args=(tell,), daemon=True)
        build.start()
    try:
        gf = GGUFFile(path)  # the tensor table, checked against the file
        # the header's values against the tensors and the memory they imply, before anything
        # sized by them is allocated (shape.py), then the tokenizer, before the slow weight load
        check_model(gf, ModelArgs.from_metadata(gf.metadata, gf.path), n_ctx)
        tokenizer = _tokenizer(gf)
    finally:
        if build is not None:
            build.join()  # a compile is never left half done, even for a file refused
    # numba's kernels compile on the first forward; the C ones are built by now (or this says
    # why neither can run)
    if build is not None and getattr(load_kernels(tell), "NAME", "") != "C":
        tell("compiling the matmul kernels: the first run only (numba keeps them)")
    model = Llama.from_gguf(
        gf,
        n_ctx=n_ctx,
        dispatcher=dispatcher,
        progress=progress,
        layouts=layouts,
        threads=threads,
    )
    return model, tokenizer


def _tokenizer(gf: GGUFFile) -> GGUFTokenizer:
    """The file's tokenizer; what its keys hold was checked (:func:`.shape.check_model`), and
    anything the tokenizer library still refuses is the file's fault, said as such."""
    try:
        return GGUFTokenizer(gf.metadata)
    except ModelFileError:
        raise
    except EocError as exc:
        raise ModelFileError(
            f"{gf.path}: its tokenizer (the tokenizer.ggml keys) is refused: {exc.reason}"
        ) from None
    except Exception as exc:  # the tokenizers library's own errors, at the boundary
        raise ModelFileError(
            f"{gf.path}: the tokenizer in its metadata cannot be built ({type(exc).__name__}: "
            f"{exc}): the file is damaged, or not a model eoc runs"
        ) from None


def _kernels_quietly(tell: Callable[[str], None]) -> None:
    """Build (or find) the kernels, saying so when a compile starts; an error is left to the
    caller's own :func:`load_kernels` to raise."""
    try:
        load_kernels(tell)
    except EocError:
        pass


@dataclass(frozen=True)
class Sampler:
    """How the next token is chosen from the logits.

    ``temperature <= 0`` is greedy (argmax, ties to the lowest id as llama.cpp does); otherwise
    the logits are divided by ``temperature`` and a token drawn from the smallest set of most
    likely tokens whose probabilities add up to ``top_p``, with a generator seeded by ``seed``.
    """

    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = None

    def __post_init__(self) -> None:
        if not 0.0 < self.top_p <= 1.0:
            raise InputError(f"top_p must be in (0, 1], not {self.top_p}")

    def rng(self) -> np.random.Generator:
        """A fresh generator, so the same seed gives the same draws each generation."""
        return np.random.default_rng(self.seed)

    def pick(self, logits: npt.NDArray[np.float32], rng: np.random.Generator) -> int:
        """Choose a token id from one row of logits."""
        if self.temperature <= 0.0:
            return int(np.argmax(logits))
        # float64 so the probabilities of a 49k-token vocabulary still sum to 1 closely; the
        # maximum is taken off first, so a tiny temperature sends the others to -inf, never NaN
        z = logits.astype(np.float64)
        with np.errstate(over="ignore", divide="ignore"):
            z = (z - z.max()) / self.temperature
        p = np.exp(z)
        p /= p.sum()
        order = np.argsort(-p, kind="stable")
        cumulative = np.cumsum(p[order])
        keep = int(np.searchsorted(cumulative, self.top_p)) + 1  # always at least one token
        kept = order[:keep]
        return int(rng.choice(kept, p=p[kept] / p[kept].sum()))


def generate_ids(
    model: Llama,
    prompt_ids: Sequence[int],
    *,
    eos_id: int,
    max_tokens: int = 128,
    sampler: Sampler | None = None,
) -> Iterator[int]:
    """Yield generated token ids; the model's cache is reset first.

    Stops after ``max_tokens`` ids, before yielding ``eos_id``, or when the context is full.
    """
    if max_tokens < 0:
        raise InputError(f"max_tokens must be >= 0, not {max_tokens}")
    if not prompt_ids:
        raise InputError("the prompt has no tokens")
    sampler = sampler or Sampler()
    rng = sampler.rng()
    model.reset()
    if max_tokens == 0:
        return
    logits = model.forward(prompt_ids)
    for produced in range(1, max_tokens + 1):
        token = sampler.pick(logits[-1], rng)
        if token == eos_id:
            return
        yield token
        if produced == max_tokens or model.pos >= model.n_ctx:
            return
        logits = model.forward([token])


def generate(
    model: Llama,
    tokenizer: GGUFTokenizer,
    prompt: str | Sequence[Mapping[str, str]],
    *,
    max_tokens: int = 128,
    sampler: Sampler | None = None,
    stop: Sequence[str] = (),
) -> Iterator[str]:
    """Yield the text of the reply piece by piece, as tokens are produced.

    Args:
        model: the loaded model.
        tokenizer: its tokenizer.
        prompt: raw text (encoded as is), or chat messages (``role``/``content`` dicts)
            rendered with the model's chat template.
        max_tokens: most tokens to generate.
        sampler: greedy by default.
        stop: strings that end the reply; the stop string itself is not yielded.
    """
    if isinstance(prompt, str):
        ids = tokenizer.encode(prompt)
    else:
        ids = tokenizer.encode(tokenizer.apply_chat_template(prompt), special=True)
    tokens = generate_ids(
        model, ids, eos_id=tokenizer.eos_id, max_tokens=max_tokens, sampler=sampler
    )
    return text_pieces(tokenizer, tokens, stop)


def text_pieces(
    tokenizer: GGUFTokenizer, tokens: Iterable[int], stop: Sequence[str] = ()
) -> Iterator[str]:
    """The text of ``tokens`` piece by piece, ending before the first stop string.

    A token may end in the middle of a UTF-8 character (the decoder keeps those bytes), and text
    that might be the start of a stop string is held back until it is known not to be.
    """
    stops = [s for s in stop if s]
    utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
    held = ""  # text that might be the start of a stop string, not yielded yet
    for token in tokens:
        held += utf8.decode(tokenizer.token_bytes(token))
        cut = _first_stop(held, stops)
        if cut is not None:
            if held[:cut]:
                yield held[:cut]
            return
        keep = _stop_prefix_len(held, stops)
        ready, held = held[: len(held) - keep], held[len(held) - keep :]
        if ready:
            yield ready
    held += utf8.decode(b"", final=True)
    cut = _first_stop(held, stops)
    tail = held if cut is None else held[:cut]
    if tail:
        yield tail


def _first_stop(text: str, stops: Sequence[str]) -> int | None:
    """Index where the earliest stop string in ``text`` begins, or None."""
    found = [i for i in (text.find(s) for s in stops) if i >= 0]
    return min(found) if found else None


def _stop_prefix_len(text: str, stops: Sequence[str]) -> int:
    """Length of the longest end of ``text`` that a stop string starts with."""
    best = 0
    for s in stops:
        for n in range(min(len(s) - 1, len(text)), best, -1):
            if text.endswith(s[:n]):
                best = n
                break
    return best
