"""A neural-stage backend for a language model that runs inside the web page itself.

The demo page runs SmolLM2-135M (the GGUF file the native runner uses) with llama.cpp compiled
to WebAssembly (the ``@wllama/wllama`` npm package), in a Web Worker beside the Pyodide cascade.
:class:`PageModelBackend` is the cascade's side of it, in pure Python: it asks a ``run`` function
for one answer and turns the page's reply into a :class:`~eoc.stages.neural.Reply`.

``run(prompt, max_tokens)`` returns the reply as JSON text (the page's ``generate``, awaited
with ``pyodide.ffi.run_sync``; see :func:`pyodide_run`). The reply is an object::

    {"text": "...", "finish_reason": "stop" | "length", "stopped": false,
     "prompt_tokens": 41, "completion_tokens": 32, "threads": 2}

``stopped`` is true when the visitor pressed stop: the text so far is served, marked
``finish_reason`` "cancelled", and never remembered (the question was not answered in full).
``looped`` is true when the page stopped the model in a repetition loop, by the rule eoc's own
runner stops by (:func:`eoc.stages.degenerate.loop_ends`, the page applying
:data:`~eoc.stages.degenerate.LOOP_RULE` to the pieces it streams): served, and never
remembered either.

Honesty (docs/design.md §3): a browser exposes no energy counter, so every figure is ESTIMATED,
from the tokens the model counted and the multiply-adds one token takes in this model
(:func:`page_rates`, at :data:`NJ_PER_MAC`, a stated assumption). The same rates price what a
cheap answer avoided (the savings ledger), so the page compares like with like.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eoc.cost import JouleCost
from eoc.errors import BackendError, BadJson, ConfigError
from eoc.files.bounded import loads_strict
from eoc.query import Stage
from eoc.stages.base import WorkRates, work_estimate
from eoc.stages.neural import MAX_REPLY_BYTES, MAX_TOKENS, Reply, origin_of

BROWSER_WATTS = 10.0
"""The power assumed for a CPU running the page's model (one laptop package, busy)."""
BROWSER_MACS_PER_S = 3e9
"""The multiply-adds a second assumed for that CPU in WebAssembly SIMD on 4-bit weights (on the
development VM, two threads of Chromium 156 decoded SmolLM2-135M at 46 ms a token: 2.9e9/s)."""
NJ_PER_MAC = BROWSER_WATTS / BROWSER_MACS_PER_S * 1e9
"""Nanojoules one multiply-add is charged in the page (3.33 nJ): watts over multiply-adds/s."""
MAX_REPLY_CHARS = 2 * MAX_REPLY_BYTES
"""The most characters of the page's reply document read (its text is checked again after)."""
MAX_THREADS = 1024
"""The most threads a reply may say ran (more is a broken reply)."""
FINISH_REASONS = frozenset({"stop", "length"})

Run = Callable[[str, int], Any]
"""``run(prompt, max_tokens) -> JSON text``: one answer from the page's model."""


def page_rates(macs_per_token: int, macs_per_prompt_token: int) -> WorkRates:
    """The neural stage's rates for a model whose generated token takes ``macs_per_token``
    multiply-adds and whose prompt token takes ``macs_per_prompt_token`` (no output head: only
    the last prompt token's logits are computed), at :data:`NJ_PER_MAC`."""
    for name, value in (
        ("macs_per_token", macs_per_token),
        ("macs_per_prompt_token", macs_per_prompt_token),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10**13:
            raise ConfigError(f"{name} must be a whole number from 1 to 10^13, not {value!r:.40}")
    if macs_per_prompt_token > macs_per_token:
        raise ConfigError("a prompt token cannot take more multiply-adds than a generated one")
    return WorkRates(
        0.0,
        per_token_in_uj=macs_per_prompt_token * NJ_PER_MAC / 1000,
        per_token_out_uj=macs_per_token * NJ_PER_MAC / 1000,
        why=(
            f"the model in this page: {macs_per_token / 1e6:,.1f}M multiply-adds a token generated, "
            f"{macs_per_prompt_token / 1e6:,.1f}M a prompt token, at {NJ_PER_MAC:.2f} nJ each "
            f"(assumed: a CPU at {BROWSER_WATTS:g} W doing {BROWSER_MACS_PER_S / 1e9:g}G "
            "multiply-adds a second in WebAssembly)"
        ),
    )


class PageModelBackend:
    """Answers with the language model that runs in the page (llama.cpp in WebAssembly).

    Constructing it runs nothing: the page loads the model on the first question that reaches
    it. Answers are greedy (temperature 0), so a repeat is the same answer and is remembered
    under the memo policy like any model's.

    Args:
        run: the page's ``generate`` (see the module docstring); in Pyodide, :func:`pyodide_run`.
        model: the model file's name, e.g. ``SmolLM2-135M-Instruct.Q4_1.gguf``.
        identity: what tells this file from another of the same name (e.g. its SHA-256).
        macs_per_token: multiply-adds one generated token takes in this model.
        macs_per_prompt_token: multiply-adds one prompt token takes.
        max_tokens: the most tokens one answer may have (1 to 4,096).

    Raises:
        ConfigError: an argument it cannot use.
    """

    runs_model = True
    streams = False  # the page streams into its own answer card; the cascade gets the whole

    def __init__(
        self,
        run: Run,
        *,
        model: str,
        identity: str,
        macs_per_token: int,
        macs_per_prompt_token: int,
        max_tokens: int = 256,
    ) -> None:
        if not callable(run):
            raise ConfigError("run must be a function (prompt, max_tokens) -> JSON text")
        for what, text in (("model", model), ("identity", identity)):
            if not isinstance(text, str) or not text.strip() or len(text) > 256:
                raise ConfigError(f"{what} must be a name of 1 to 256 characters")
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
            raise ConfigError(f"max_tokens must be a whole number, not {max_tokens!r:.40}")
        if not 1 <= max_tokens <= 4096:
            raise ConfigError(f"max_tokens must be 1 to 4,096 in the page; got {max_tokens}")
        self.work_rates = page_rates(macs_per_token, macs_per_prompt_token)
        self._run = run
        self.model = model
        self.identity = identity
        self.max_tokens = max_tokens
        self.name = f"page:{model}"
        self.threads: int | None = None  # known after the first answer

    @property
    def origin(self) -> str:
        """The model file and the parameters that change an answer (greedy, ``max_tokens``)."""
        return origin_of(
            f"page:{self.model}#{self.identity}", max_tokens=self.max_tokens, temperature=0.0
        )

    def __repr__(self) -> str:
        return f"PageModelBackend({self.model!r}, max_tokens={self.max_tokens})"

    def generate(self, prompt: str) -> Reply:
        """One answer to ``prompt`` from the page's model.

        Raises:
            BackendError: the model could not load or run, or its reply is not an answer.
        """
        if not isinstance(prompt, str) or not prompt:
            raise BackendError("the prompt must be non-empty text")
        try:
            raw = self._run(prompt, self.max_tokens)
        except BackendError:
            raise
        except Exception as exc:  # the page's loader or llama.cpp failed: say what to do
            raise self._fail(
                f"could not answer ({type(exc).__name__}: {str(exc)[:200]}); ask again to load it "
                "once more, reload the page, or connect an OpenAI-compatible server"
            ) from None
        doc = self._document(raw)
        text, finish, stopped = self._text(doc)
        looped = doc.get("looped", False)
        if not isinstance(looped, bool):
            raise self._fail("its reply's 'looped' is not true or false")
        tokens_in = self._count(doc, "prompt_tokens")
        tokens_out = self._count(doc, "completion_tokens")
        threads = doc.get("threads")
        if (
            isinstance(threads, bool)
            or not isinstance(threads, int)
            or not 1 <= threads <= MAX_THREADS
        ):
            raise self._fail(f"its reply names {threads!r:.20} threads, not a count")
        self.threads = threads
        est = work_estimate(
            Stage.NEURAL, tokens_in=tokens_in, tokens_out=tokens_out, rates=self.work_rates
        )
        r = self.work_rates
        basis = (
            f"{self.model} run in this page (llama.cpp in WebAssembly, {threads} "
            f"thread{'s' if threads != 1 else ''}): a browser has no energy counter; estimated "
            f"from {tokens_in} tokens in and {tokens_out} out, counted by the model, at "
            f"{r.per_token_in_uj:,.0f} µJ a token in and {r.per_token_out_uj:,.0f} µJ out ({r.why})"
        )
        if stopped:
            basis += "; stopped by the visitor, so never remembered"
        elif looped:
            basis += "; stopped in a repetition loop, so never remembered"
        return Reply(
            text,
            None,
            not (stopped or looped),
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            estimate=JouleCost.estimated(est.uj, basis),
            finish_reason="cancelled" if stopped else finish,
        )

    # -- reading the page's reply ----------------------------------------------------------

    def _fail(self, message: str) -> BackendError:
        return BackendError(f"the model in this page ({self.model}): {message}")

    def _document(self, raw: object) -> dict[str, Any]:
        if not isinstance(raw, str):
            raise self._fail(f"its reply is {type(raw).__name__}, not JSON text")
        if len(raw) > MAX_REPLY_CHARS:
            raise self._fail(f"its reply is longer than {MAX_REPLY_CHARS:,} characters")
        try:
            doc = loads_strict(raw, what="its reply")
        except BadJson as exc:
            raise self._fail(exc.reason) from None
        if not isinstance(doc, dict):
            raise self._fail(f"its reply is a JSON {type(doc).__name__}, not an object")
        return doc

    def _text(self, doc: dict[str, Any]) -> tuple[str, str, bool]:
        text = doc.get("text")
        if not isinstance(text, str):
            raise self._fail(f"its reply's text is {type(text).__name__}, not text")
        stopped = doc.get("stopped", False)
        if not isinstance(stopped, bool):
            raise self._fail("its reply's 'stopped' is not true or false")
        finish = doc.get("finish_reason")
        if not stopped and finish not in FINISH_REASONS:
            raise self._fail(f"its reply's finish_reason is {finish!r:.40}, not stop or length")
        if stopped and not text.strip():
            raise self._fail("stopped before it said anything: ask again to get an answer")
        return text, str(finish), stopped

    def _count(self, doc: dict[str, Any], key: str) -> int:
        value = doc.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
            raise self._fail(f"its reply's {key} is {value!r:.40}, not a token count")
        return value


def pyodide_run(generate: Any) -> Run:
    """``run`` for :class:`PageModelBackend` in Pyodide: calls the page's JavaScript
    ``generate(prompt, max_tokens)``, which returns a Promise of the reply's JSON text, and waits
    for it with ``pyodide.ffi.run_sync`` (WebAssembly JSPI: the page stays responsive while
    Python waits). The cascade must have been entered through ``callPromising``."""
    from pyodide.ffi import can_run_sync, run_sync  # type: ignore[import-not-found]

    def run(prompt: str, max_tokens: int) -> Any:
        if not can_run_sync():
            raise BackendError(
                "the model in this page needs a browser with WebAssembly JSPI (Chrome or Edge "
                "137 and later), and the question asked through callPromising"
            )
        return run_sync(generate(prompt, max_tokens))

    return run


__all__ = [
    "BROWSER_MACS_PER_S",
    "BROWSER_WATTS",
    "NJ_PER_MAC",
    "PageModelBackend",
    "page_rates",
    "pyodide_run",
]
