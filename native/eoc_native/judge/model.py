"""The judge: a small instruct model on eoc's own runner, asked whether two questions are one.

Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, Apache-2.0, installed from PyPI in parts and joined by
:mod:`eoc_native.llm.parts`) reads the pair in its chat template (:mod:`.prompt`); the
probability of "yes" is read from two logits of the next token, nothing is generated, and the
output projection computes only those two rows. A pair at or above :data:`SERVE_AT` is the same
question.

**Two runtimes** read the same file with the same prompt (``EOC_JUDGE_RUNTIME``):

* ``llama.cpp`` (the default where ``llama-cpp-python`` is installed): llama.cpp's batched
  prompt kernels read a judgement's ~100 tokens about ten times faster than eoc's runner on this
  model (``bench/qwen2.py``), and a judgement is all prompt. eoc's own checks run first: the
  file is the pinned one (:mod:`eoc_native.llm.parts`) or, named by ``EOC_JUDGE_MODEL``, passes
  eoc's header and tensor checks (:func:`eoc_native.llm.shape.check_model`) before llama.cpp
  reads it; the prompt is rendered by eoc's bounded template sandbox.
* ``eoc``: eoc's own runner, which reads two rows of the output projection only.

Its joules are estimated like any model call: on eoc's runner from the multiply-adds the
dispatcher counted for this judgement (:func:`eoc_native.llm.energy.estimate`); on llama.cpp
from the model's multiply-adds per token (:data:`PRIOR_MACS`) × the tokens read, at the same
documented CPU constant. Before the first judgement, :meth:`ModelJudge.expected_uj` says what
one is expected to cost from a typical prompt (:data:`TYPICAL_TOKENS`).
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from eoc.cost import JouleCost
from eoc.stages.judging import Verdict
from eoc_native.judge.prompt import NO, YES, messages, yes_probability
from eoc_native.judge.student import Mix, shipped_mix

SERVE_AT = 0.95
"""The least probability of "yes" at which the judge alone serves, with no mix (chosen on the
tune part of ``bench/suites/everyday``: ``bench/judge.py --sweep``). The prompt's worked
examples make the model say yes readily, so only a sure yes serves; the shipped mix
(:class:`~.student.Mix`) decides otherwise."""
TYPICAL_TOKENS = 100
"""Tokens in a typical judgement's prompt (the template, the instruction and two short
questions), for the estimate before the first judgement."""
N_CTX = 2048
"""The judge's context: the prompt is bounded (:data:`.prompt.MAX_QUESTION_CHARS`), so it fits."""
ENV_JUDGE_MODEL = "EOC_JUDGE_MODEL"
ENV_RUNTIME = "EOC_JUDGE_RUNTIME"
RUNTIMES = ("auto", "llama.cpp", "eoc")


def runtime_choice(runtime: str | None = None) -> str:
    """``llama.cpp`` or ``eoc``: ``runtime`` (else ``$EOC_JUDGE_RUNTIME``, else ``auto``: llama.cpp
    where ``llama-cpp-python`` is installed)."""
    import importlib.util

    from eoc.errors import ConfigError

    chosen = (runtime or os.environ.get(ENV_RUNTIME, "") or "auto").strip().lower()
    if chosen not in RUNTIMES:
        raise ConfigError(f"{ENV_RUNTIME} is one of {', '.join(RUNTIMES)}, got {chosen!r}")
    if chosen == "auto":
        return "llama.cpp" if importlib.util.find_spec("llama_cpp") is not None else "eoc"
    return chosen


class ModelJudge:
    """A judge of meaning on eoc's runner (:class:`eoc.stages.judging.Judge`).

    Args:
        path: the GGUF file (``None``: ``$EOC_JUDGE_MODEL``, else the joined part packages).
        serve_at: the least P(yes) that serves.
        threads: the runner's thread count (``None``: ``$EOC_THREADS``, else eoc's runner
            runs on the cores this process may use and llama.cpp on as many, at most 4).
    """

    name = "Qwen2.5-Coder-1.5B judge"

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        serve_at: float = SERVE_AT,
        threads: int | None = None,
        runtime: str | None = None,
        mix: Mix | bool | None = True,
    ) -> None:
        """``mix``: how P(yes) becomes a decision (:class:`~.student.Mix`; ``True``: the shipped
        one where fitted; ``None`` or ``False``: P(yes) at ``serve_at`` alone)."""
        self.mix: Mix | None = shipped_mix() if mix is True else (mix or None)
        self.runtime = runtime_choice(runtime)
        if path is None:
            path = os.environ.get(ENV_JUDGE_MODEL) or None
        self.path: Path | None = None if path is None else Path(path).expanduser()
        self.serve_at = serve_at
        self.threads = threads
        self._lock = threading.Lock()
        self._model: Any = None
        self._tokenizer: Any = None
        self._ids: tuple[list[int], list[int]] = ([], [])
        self._in_cache: list[int] = []  # the token ids eoc's runner holds in its cache
        self._dispatcher: Any = None
        self._spent: list[int] = []  # µJ of each judgement so far (the last 64)
        self._macs_per_token: float | None = None

    def load(self) -> ModelJudge:
        """Read the model now (it is read at the first judgement otherwise)."""
        with self._lock:
            self._load()
        return self

    def _load(self) -> None:
        if self._model is not None:
            return
        if self.runtime == "llama.cpp":
            self._load_llama_cpp()
            return
        from eoc_native.autotune.dispatch import Dispatcher
        from eoc_native.llm.generate import load
        from eoc_native.llm.layout_cache import LayoutCache
        from eoc_native.llm.parts import joined_model_path

        path = self.path or joined_model_path()
        self.path = path
        self._dispatcher = Dispatcher()
        try:
            layouts = LayoutCache(path)
        except OSError:
            layouts = None
        self._model, self._tokenizer = load(
            path, n_ctx=N_CTX, dispatcher=self._dispatcher, layouts=layouts, threads=self.threads
        )
        tok = self._tokenizer
        self._ids = (
            sorted({tok.encode(w, add_bos=False)[0] for w in YES}),
            sorted({tok.encode(w, add_bos=False)[0] for w in NO}),
        )

    def _load_llama_cpp(self) -> None:
        from eoc_native.llm.gguf import GGUFFile
        from eoc_native.llm.parts import joined_model_path
        from eoc_native.llm.shape import ModelArgs, check_model
        from eoc_native.llm.tokenizer import GGUFTokenizer

        named = self.path is not None
        path = self.path if self.path is not None else joined_model_path()  # SHA-256 checked
        self.path = path
        gf = GGUFFile(path)
        if named:  # a file the user named: eoc's checks before llama.cpp's parser reads it
            check_model(gf, ModelArgs.from_metadata(gf.metadata, gf.path), N_CTX)
        self._tokenizer = GGUFTokenizer(gf.metadata)  # the chat template, in eoc's sandbox
        import llama_cpp

        threads = llama_cpp_threads(self.threads)
        self._model = llama_cpp.Llama(
            model_path=str(path), n_ctx=N_CTX, n_threads=threads, n_batch=N_CTX, verbose=False
        )
        tok = self._model
        self._ids = (
            sorted({tok.tokenize(w.encode(), add_bos=False)[0] for w in YES}),
            sorted({tok.tokenize(w.encode(), add_bos=False)[0] for w in NO}),
        )

    def _llama_cpp_logits(self, text: str) -> tuple[list[float], int]:
        import numpy as np

        llm = self._model
        ids = llm.tokenize(text.encode(), add_bos=False, special=True)
        if len(ids) >= N_CTX:
            from eoc.errors import PromptTooLong

            raise PromptTooLong(f"a judgement of {len(ids)} tokens does not fit {N_CTX}")
        # the tokens already in llama.cpp's cache that this prompt starts with (the template,
        # the instruction and the examples: the same for every pair) are not read again
        kept = _shared_start(llm._input_ids[: llm.n_tokens], ids)
        if kept and llm._ctx.kv_cache_seq_rm(-1, kept, -1):
            llm.n_tokens = kept
        else:
            kept = 0
            llm.reset()
        llm.eval(ids[kept:])
        row = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),))
        yes, no = self._ids
        return [float(row[i]) for i in (*yes, *no)], len(ids) - kept

    def expected_uj(self) -> int:
        """µJ per judgement: the mean of the last judgements' estimates, else a prior from the
        model's size (:data:`TYPICAL_TOKENS` at the runner's documented nJ per multiply-add)."""
        spent = self._spent
        if spent:
            return max(1, sum(spent) // len(spent))
        return prior_uj()

    def probability(self, query: str, stored: str) -> tuple[float, JouleCost]:
        """P(yes) that ``query`` asks what ``stored`` asks, and the joules of finding out."""
        with self._lock:
            self._load()
            text = self._tokenizer.apply_chat_template(messages(query, stored))
            if self.runtime == "llama.cpp":
                logits, cost = self._on_llama_cpp(text)
            else:
                logits, cost = self._on_eoc(text)
        self._spent = [*self._spent[-63:], cost.uj]
        k = len(self._ids[0])
        return yes_probability(logits[:k], logits[k:]), cost

    def _on_eoc(self, text: str) -> tuple[list[float], JouleCost]:
        from eoc_native.llm.energy import estimate

        ids = self._tokenizer.encode(text, special=True, add_bos=False)
        before = Counter(self._dispatcher.calls)
        # the tokens the cache already holds that this prompt starts with are not read again
        kept = _shared_start(self._in_cache, ids)
        self._in_cache = []  # unknown until the forward pass below has run
        self._model.rewind(min(kept, self._model.pos))
        start = self._model.pos
        yes, no = self._ids
        row = self._model.forward(ids[start:], logit_ids=[*yes, *no])[-1]
        self._in_cache = list(ids)
        calls = Counter(self._dispatcher.calls)
        calls.subtract(before)
        uj, basis = estimate({c: n for c, n in calls.items() if n > 0})
        cost = JouleCost.estimated(
            uj, f"judge on eoc's runner ({len(ids) - start} new tokens read): {basis}"
        )
        return [float(x) for x in row], cost

    def _on_llama_cpp(self, text: str) -> tuple[list[float], JouleCost]:
        from eoc_native.llm.energy import nj_per_mac

        logits, n = self._llama_cpp_logits(text)
        rate = nj_per_mac("cpu-quant")
        uj = max(1, round(n * PRIOR_MACS * rate / 1000))
        basis = (
            f"judge on llama.cpp ({n} new tokens read): estimated from the model's {PRIOR_MACS:.3g} "
            f"multiply-adds per token at {rate:g} nJ each (native/eoc_native/llm/energy.py)"
        )
        return logits, JouleCost.estimated(uj, basis)

    def judge(self, query: str, stored: str, *, reason: str, cosine: float) -> Verdict:
        p, cost = self.probability(query, stored)
        if self.mix is None:
            return Verdict(p >= self.serve_at, p, self.name, cost)
        q = self.mix.probability(p, query, stored, reason=reason, cosine=cosine)
        return Verdict(q >= self.mix.serve_at, q, self.name, cost)


def llama_cpp_threads(requested: int | None) -> int:
    """llama.cpp's thread count for the judge: ``requested``, else ``$EOC_THREADS`` (as for eoc's
    runner, :mod:`eoc_native.llm.threads`), else the cores this process may run on, at most 4.

    Raises:
        ConfigError: a count below 1, above the cores, or ``$EOC_THREADS`` not a whole number.
    """
    from eoc_native.llm.threads import ENV, cores, model_threads

    if requested is None and not os.environ.get(ENV, "").strip():
        return min(4, cores())
    return model_threads(requested, pool=cores())


def _shared_start(cached: Any, ids: list[int]) -> int:
    """How many of ``ids`` the cache already holds from its start (never the last: its logits
    are what a judgement reads)."""
    kept = 0
    for a, b in zip(cached, ids[:-1], strict=False):
        if a != b:
            break
        kept += 1
    return kept


PRIOR_MACS = 1.31e9
"""Multiply-adds per token of Qwen2.5-1.5B outside the embedding table (28 layers of attention
and a 8,960-wide feed-forward), for :func:`prior_uj`."""


def prior_uj() -> int:
    """The judge's expected µJ per judgement before it has run: :data:`TYPICAL_TOKENS` ×
    :data:`PRIOR_MACS` at the CPU's documented nJ per multiply-add."""
    from eoc_native.llm.energy import nj_per_mac

    return max(1, round(TYPICAL_TOKENS * PRIOR_MACS * nj_per_mac("cpu-quant") / 1000))


__all__ = [
    "ENV_JUDGE_MODEL",
    "ENV_RUNTIME",
    "N_CTX",
    "RUNTIMES",
    "SERVE_AT",
    "TYPICAL_TOKENS",
    "ModelJudge",
    "llama_cpp_threads",
    "prior_uj",
    "runtime_choice",
]
