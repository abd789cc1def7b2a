"""A model file's chat template is code from the file: rendering it is bounded (issue 35, item 2).

Each hostile template runs in a child process with its address space capped (1 GiB above what
the imports took) and a timeout, so a bound that does not hold shows as a red test, never as a
machine out of memory or a hung suite. A template that passes a bound on the sample conversation
fails the model's load (``eoc serve --model`` refuses to start); one that passes a bound only on a
long conversation fails that request with a 400, and the server keeps answering others.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("gguf", reason="the llm extra is not installed: pip install gguf")
pytest.importorskip("tokenizers", reason="the llm extra is not installed: pip install tokenizers")
pytest.importorskip("jinja2", reason="the llm extra is not installed: pip install jinja2")

import tests.native.test_llm_tiny as tiny_module
from eoc.errors import EocError, InputError
from eoc_native.llm.tokenizer import GGUFTokenizer, _byte_decoder
from tests.native.smollm2 import SMOLLM2, needs_smollm2

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden" / "smollm2_q41.json"
CHILD_TIMEOUT_S = 15.0
REFUSED_WITHIN_S = 5.0
PEAK_MB = 300

TINY_TEMPLATE = tiny_module.TEMPLATE

#: Loops that do no work of their own 10^9 times: the step bound.
NESTED = (
    "{% for a in range(1000) %}{% for b in range(1000) %}{% for c in range(1000) %}"
    "{% endfor %}{% endfor %}{% endfor %}"
)
#: Few steps, each slow: the time bound.
SLOW = "{% for i in range(20000) %}{% set x = ('x' * 1000000).upper() %}{% endfor %}"
#: Quick on four messages (4^4 steps), 1.6e9 steps on 200: the bound holds per request.
QUARTIC = (
    "{% for a in messages %}{% for b in messages %}{% for c in messages %}{% for d in messages %}"
    "{% endfor %}{% endfor %}{% endfor %}{% endfor %}" + TINY_TEMPLATE
)
LONG_CONVERSATION = [
    {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"} for i in range(199)
] + [{"role": "user", "content": "Name a colour."}]

#: name -> (template, what its reason must say): each must fail the load.
HOSTILE = {
    "repeat": ("{{ 'x' * 4000000000 }}", "over the bound of 1,048,576"),
    "repeat_reversed": ("{{ 4000000000 * 'x' }}", "over the bound of 1,048,576"),
    "nested_loops": (NESTED, "steps"),
    "range": ("{% for i in range(10**9) %}{% endfor %}", "range()"),
    "recursive_macro": ("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "deep"),
    "exponential_macro": (
        "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% else %}x{% endif %}"
        "{% endmacro %}{{ f(24) }}",
        "",
    ),
    "join": (
        "{% set s = 'x' * 1000000 %}{{ ([''] * 600000)|join(s) }}",
        "over the bound of 1,048,576",
    ),
    "center_filter": ("{{ 'x'|center(4000000000) }}", "center()"),
    "center_method": ("{{ 'x'.center(4000000000) }}", "center()"),
    "percent_format": ("{{ '%4000000000s'|format('x') }}", "over the bound of 1,048,576"),
    "str_format": ("{{ '{:>4000000000}'.format('x') }}", "format width"),
    "replace": (
        "{{ ('x' * 1000000)|replace('x', 'y' * 1000) }}",
        "over the bound of 1,048,576",
    ),
    "indent": ("{{ ('\\n' * 1000000)|indent(1000) }}", "over the bound of 1,048,576"),
    "doubling_concat": (
        "{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}"
        "{% endfor %}{{ ns.s }}",
        "over the bound of 1,048,576",
    ),
    "shared_lists_printed": (
        "{% set ns = namespace(l=['x' * 1000]) %}{% for i in range(40) %}"
        "{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l }}",
        "list, tuple or dict",
    ),
    "output": (
        "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}",
        "renders more than 1,048,576 characters",
    ),
    "power": ("{{ 7 ** 100000000 }}", "bits"),
    "source": ("{{ a + b }}" * 20000, "characters, over the bound of 131,072"),
    "macro_output": (
        "{% macro m() %}{% for i in range(1000) %}{{ caller() }}{% endfor %}{% endmacro %}"
        "{% set s = 'x' * 1000000 %}{% call m() %}{{ s }}{% endcall %}",
        "over the bound of 1,048,576",
    ),
}

CHILD = r"""
import json, os, resource, sys, time
spec = json.loads(sys.stdin.read())
sys.path.insert(0, spec["root"])
from eoc_native.llm.tokenizer import GGUFTokenizer, _byte_decoder
try:
    import eoc_native.llm.template as bounds
    if spec.get("seconds"):
        bounds.MAX_SECONDS = spec["seconds"]
except ImportError:
    pass
byte_tokens = sorted(_byte_decoder(), key=lambda c: _byte_decoder()[c])
tokens = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", *byte_tokens]
metadata = {
    "tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "smollm",
    "tokenizer.ggml.tokens": tokens, "tokenizer.ggml.token_type": [3, 3, 3] + [1] * 256,
    "tokenizer.ggml.merges": [], "tokenizer.ggml.bos_token_id": 1,
    "tokenizer.ggml.eos_token_id": 2, "tokenizer.chat_template": spec["template"],
}
with open("/proc/self/statm") as f:
    pages = int(f.read().split()[0])
room = pages * os.sysconf("SC_PAGE_SIZE") + (1 << 30)
resource.setrlimit(resource.RLIMIT_AS, (room, room))
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
out = {"load": "ok", "render": "skipped"}

def attempt(fn):
    start = time.monotonic()
    try:
        value = fn()
        result = ("ok", "", value)
    except BaseException as exc:
        result = (type(exc).__name__, str(getattr(exc, "reason", exc)), None)
    return result + (time.monotonic() - start,)

kind, reason, tok, took = attempt(lambda: GGUFTokenizer(metadata))
out.update(load=kind, reason=reason, seconds=took)
if kind == "ok" and spec.get("messages") is not None:
    kind, reason, text, took = attempt(lambda: tok.apply_chat_template(spec["messages"]))
    out.update(render=kind, reason=reason, seconds=took, chars=len(text or ""))
out["peak_mb"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
print(json.dumps(out))
"""


def in_child(template: str, messages: list[dict[str, str]] | None, **spec: Any) -> dict[str, Any]:
    """Build a tokenizer with ``template`` (and render ``messages``) in a capped child."""
    doc = {"root": str(ROOT), "template": template, "messages": messages, **spec}
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD],
            input=json.dumps(doc),
            capture_output=True,
            text=True,
            timeout=CHILD_TIMEOUT_S,
            cwd=ROOT,
        )
    except subprocess.TimeoutExpired:
        return {"load": "timeout", "render": "timeout", "reason": "", "seconds": CHILD_TIMEOUT_S}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return {"load": "crashed", "reason": done.stderr[-2000:], "seconds": 0.0}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def metadata(template: str | None) -> dict[str, Any]:
    byte_tokens = sorted(_byte_decoder(), key=lambda c: _byte_decoder()[c])
    doc: dict[str, Any] = {
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.pre": "smollm",
        "tokenizer.ggml.tokens": ["<|endoftext|>", "<|im_start|>", "<|im_end|>", *byte_tokens],
        "tokenizer.ggml.token_type": [3, 3, 3] + [1] * 256,
        "tokenizer.ggml.merges": [],
        "tokenizer.ggml.bos_token_id": 1,
        "tokenizer.ggml.eos_token_id": 2,
    }
    if template is not None:
        doc["tokenizer.chat_template"] = template
    return doc


# -- hostile templates fail the load, fast and small -----------------------------------------


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_template_fails_the_load_quickly_and_small(name: str) -> None:
    template, says = HOSTILE[name]
    got = in_child(template, None)
    assert got["load"] == "ChatTemplateError", got
    assert got["reason"] and says in got["reason"], got
    assert "chat template" in got["reason"] and "model file" in got["reason"], got
    assert got["seconds"] < REFUSED_WITHIN_S, got
    assert got["peak_mb"] < PEAK_MB, got


def test_the_step_bound_holds_without_the_clock() -> None:
    # a minute on the clock: the nested loops stop at the step bound, not the time bound
    got = in_child(NESTED, None, seconds=60.0)
    assert got["load"] == "ChatTemplateError" and "1,000,000 steps" in got["reason"], got
    assert got["seconds"] < REFUSED_WITHIN_S, got


def test_few_slow_steps_stop_at_the_time_bound() -> None:
    got = in_child(SLOW, None)
    assert got["load"] == "ChatTemplateError" and "ran longer than 1 s" in got["reason"], got
    assert got["seconds"] < REFUSED_WITHIN_S, got


def test_a_template_quick_on_the_sample_is_bounded_on_a_long_conversation() -> None:
    got = in_child(QUARTIC, LONG_CONVERSATION)
    assert got["load"] == "ok", got
    assert got["render"] == "ChatTemplateError", got
    assert "steps" in got["reason"] or "ran longer" in got["reason"], got
    assert "shorter conversation" in got["reason"], got
    assert got["seconds"] < REFUSED_WITHIN_S, got


# -- ordinary templates render as before ----------------------------------------------------


def test_the_tiny_models_template_renders_as_before() -> None:
    tok = GGUFTokenizer(metadata(TINY_TEMPLATE))
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
    assert tok.apply_chat_template(messages) == (
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    assert tok.apply_chat_template(messages, add_generation_prompt=False).endswith("hi<|im_end|>\n")


def test_a_long_ordinary_conversation_is_within_the_bounds() -> None:
    tok = GGUFTokenizer(metadata(TINY_TEMPLATE))
    messages = [{"role": "user", "content": "word " * 40}] * 3000
    start = time.monotonic()
    text = tok.apply_chat_template(messages)
    assert time.monotonic() - start < 1.0
    assert len(text) == 3000 * (len("<|im_start|>user\n<|im_end|>\n") + 200) + 22


def test_everyday_template_features_still_work() -> None:
    template = (
        "{% set ns = namespace(sys='') %}{% for m in messages %}{% if m.role == 'system' %}"
        "{% set ns.sys = m.content | trim %}{% endif %}{% endfor %}"
        "{{ bos_token }}{{ '[' ~ ns.sys ~ ']' }}"
        "{% for m in messages | rejectattr('role', 'equalto', 'system') | list %}"
        "{{ '%s: %s' | format(m.role, m.content) }}{{ ', '.join([m.role, '{:>3}'.format(loop.index)]) }}"
        "{% endfor %}{{ eos_token if add_generation_prompt }}"
    )
    tok = GGUFTokenizer(metadata(template))
    messages = [
        {"role": "system", "content": "  terse  "},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo"},
    ]
    assert tok.apply_chat_template(messages) == (
        "<|im_start|>[terse]user: hiuser,   1assistant: yoassistant,   2<|im_end|>"
    )


def test_a_template_refusing_a_system_message_still_loads_and_refuses_as_it_says() -> None:
    template = (
        "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}"
        "{% endif %}" + TINY_TEMPLATE
    )
    tok = GGUFTokenizer(metadata(template))
    assert tok.apply_chat_template([{"role": "user", "content": "hi"}]).startswith("<|im_start|>")
    with pytest.raises(InputError, match="System role not supported"):
        tok.apply_chat_template([{"role": "system", "content": "x"}])


@needs_smollm2
def test_smollm2s_template_renders_the_golden_prompts_exactly() -> None:
    from eoc_native.llm.gguf import GGUFFile

    assert SMOLLM2 is not None
    tok = GGUFTokenizer(GGUFFile(SMOLLM2).metadata)
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    chats = [case for case in golden["cases"] if case["kind"] == "chat"]
    assert chats
    for case in chats:
        assert tok.apply_chat_template(case["messages"]) == case["text"]


def test_a_template_that_does_not_parse_fails_the_load_with_a_reason() -> None:
    with pytest.raises(EocError) as info:
        GGUFTokenizer(metadata("{% for m in messages %}"))
    assert type(info.value).__name__ == "ChatTemplateError"
    assert "does not parse" in info.value.reason and "gguf-new-metadata" in info.value.reason


# -- the model's load, eoc serve's start, and requests to a running server -------------------


def write_model(path: Path, template: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(tiny_module, "TEMPLATE", template)
    return tiny_module.write_tiny_model(path, tensor_types=tiny_module.BLOCKS)


def test_loading_a_model_with_a_hostile_template_fails_before_the_weights(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from eoc_native.llm.generate import load

    path = write_model(tmp_path / "hostile.gguf", HOSTILE["recursive_macro"][0], monkeypatch)
    with pytest.raises(InputError) as info:
        load(path)
    assert type(info.value).__name__ == "ChatTemplateError" and info.value.reason


def test_eoc_serve_refuses_to_start_on_a_hostile_template(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_model(tmp_path / "hostile.gguf", HOSTILE["center_method"][0], monkeypatch)
    env = {**os.environ, "EOC_EMBEDDER": "hashed", "PYTHONPATH": str(ROOT)}
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "eoc", "serve", "--model", str(path), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode != 0, done.stderr
    assert "ChatTemplateError" in done.stderr and "center()" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert time.monotonic() - start < 30


def test_a_server_answers_others_while_a_template_is_refused_per_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from eoc_native.llm.backend import LocalModel
    from tests.native.serving import serving
    from tests.native.test_serve import make_app

    path = write_model(tmp_path / "quartic.gguf", QUARTIC, monkeypatch)
    app = make_app(path, backend=LocalModel(path, max_tokens=4), config={"workers": 2})
    with serving(app) as url:
        hostile = {"model": "tiny", "messages": LONG_CONVERSATION, "max_tokens": 4}
        replies: list[httpx.Response] = []

        def send() -> None:
            replies.append(httpx.post(url + "/v1/chat/completions", json=hostile, timeout=60))

        start = time.monotonic()
        threads = [threading.Thread(target=send) for _ in range(3)]
        for t in threads:
            t.start()
        graph = httpx.post(
            url + "/v1/chat/completions",
            json={
                "model": "tiny",
                "messages": [{"role": "user", "content": "what is the capital of France"}],
            },
            timeout=20,
        )
        for t in threads:
            t.join(60)
        assert (
            graph.status_code == 200 and "Paris" in graph.json()["choices"][0]["message"]["content"]
        )
        assert len(replies) == 3
        for r in replies:
            assert r.status_code == 400, r.text
            error = r.json()["error"]
            assert error["type"] == "ChatTemplateError", r.text
            assert (
                "chat template" in error["message"] and "shorter conversation" in error["message"]
            )
        assert time.monotonic() - start < 15
        # and a short conversation still reaches the model
        ok = httpx.post(
            url + "/v1/chat/completions",
            json={
                "model": "tiny",
                "messages": [{"role": "user", "content": "Name a colour."}],
                "max_tokens": 2,
            },
            timeout=30,
        )
        assert ok.status_code == 200, ok.text
