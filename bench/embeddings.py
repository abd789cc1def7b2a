"""``POST /v1/embeddings`` on ``eoc serve``: MiniLM's own embeddings against a cache hit, one run.

    python bench/embeddings.py            # 300 texts one at a time, then in lists of 32
    python bench/embeddings.py --quick    # 60 texts
    python bench/embeddings.py --json     # machine-readable
    python bench/embeddings.py --record   # a full run, written to docs/figures/embeddings.json

One ``eoc serve --no-store --quiet`` process (``EOC_MODEL=none``: no chat model is loaded) on a
free port of 127.0.0.1, stopped when the script ends. The texts are short sentences made from a
fixed word list (each unique); one keep-alive client sends them in order:

1. **made**: each text for the first time, one a request: MiniLM embeds it;
2. **hit**: the same texts again, one a request: the cache returns the stored vector;
3. **made, lists**: as many other new texts in lists of 32 (one request embeds 32);
4. **hit, lists**: those lists again.

Printed per phase: embeddings per second (texts over the phase's wall time, client side, the
HTTP round trip included) and µJ per embedding (the sum of the ``x-eoc-microjoules`` each reply
was charged, over the texts), with whether every figure was measured (a live counter bracketed
the work) or estimated, and the ratio of a made embedding's to a hit's. Nothing is tuned here;
the rates are what the server charges.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from record import record
from serve import Client, child_env, eoc_serve_cmd, free_port, running

WORDS = (
    "apple river stone cloud music garden winter silver market window bridge candle forest "
    "engine letter planet doctor harbor castle pencil ocean valley thunder mirror ladder "
    "orange basket rocket summer island meadow lantern violin tunnel desert pepper"
).split()
MODEL = "all-MiniLM-L6-v2"
BATCH = 32


def texts(n: int, seed: int) -> list[str]:
    """``n`` unique short sentences."""
    rng = random.Random(seed)
    out: set[str] = set()
    while len(out) < n:
        words = rng.sample(WORDS, rng.randint(4, 9))
        out.add(f"The {' '.join(words)}.")
    return sorted(out)


def phase(client: Client, batches: list[list[str]], fmt: str = "float") -> dict[str, Any]:
    """Send each batch (one text: a string) and sum what it was charged."""
    uj = 0
    provenances: set[str] = set()
    stages: set[str] = set()
    n = 0
    t0 = time.perf_counter()
    for batch in batches:
        doc = {"model": MODEL, "input": batch[0] if len(batch) == 1 else batch}
        if fmt != "float":
            doc["encoding_format"] = fmt
        status, headers, body, _ = client.post("/v1/embeddings", doc)
        if status != 200:
            raise RuntimeError(f"eoc serve answered {status}: {str(body)[:300]}")
        if len(body["data"]) != len(batch):
            raise RuntimeError("a reply without one vector per text")
        uj += int(headers["x-eoc-microjoules"])
        provenances.add(headers["x-eoc-provenance"])
        stages.add(headers["x-eoc-stage"])
        n += len(batch)
    seconds = time.perf_counter() - t0
    return {
        "texts": n,
        "seconds": round(seconds, 4),
        "per_second": round(n / seconds, 1),
        "uj_per_embedding": round(uj / n, 1),
        "provenance": "measured" if provenances == {"measured"} else "estimated",
        "stages": sorted(stages),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="60 texts a phase, not 300")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument(
        "--record",
        action="store_true",
        help="write the result to docs/figures/embeddings.json, which the docs cite "
        "(not with --quick)",
    )
    args = ap.parse_args()
    if args.record and args.quick:
        ap.error("--record records a whole run: leave out --quick")
    n = 60 if args.quick else 300
    one, listed = texts(n, 1), texts(2 * n, 2)[n:]
    port = free_port()
    env = child_env(1, EOC_MODEL="none")
    cmd = [*eoc_serve_cmd(), "--port", str(port), "--no-store"]
    with running("eoc serve", cmd, port, env, "/healthz"):
        client = Client(port)
        try:
            client.post("/v1/embeddings", {"model": MODEL, "input": "warm-up: load the weights"})
            singles = [[t] for t in one]
            lists = [listed[i : i + BATCH] for i in range(0, len(listed), BATCH)]
            rows = {
                "made, one a request": phase(client, singles),
                "hit, one a request": phase(client, singles),
                f"made, lists of {BATCH}": phase(client, lists),
                f"hit, lists of {BATCH}": phase(client, lists),
            }
        finally:
            client.close()
    made, hit = rows["made, one a request"], rows["hit, one a request"]
    expected = {
        "made, one a request": ["neural"],
        "hit, one a request": ["cache"],
        f"made, lists of {BATCH}": ["neural"],
        f"hit, lists of {BATCH}": ["cache"],
    }
    for name, row in rows.items():
        if row["stages"] != expected[name]:
            raise RuntimeError(f"{name}: answered by {row['stages']}, not {expected[name]}")
    result = {
        "rows": rows,
        "ratios": {
            "hit_per_second_over_made": round(hit["per_second"] / made["per_second"], 1),
            "made_uj_over_hit_uj": round(made["uj_per_embedding"] / hit["uj_per_embedding"], 1),
        },
    }
    if args.record:
        record("embeddings", result)
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(f"eoc serve /v1/embeddings, {MODEL}, {n} texts a phase (bench/embeddings.py)")
    print(f"{'phase':<22} {'emb/s':>9} {'µJ/emb':>10}  figures")
    for name, row in rows.items():
        print(
            f"{name:<22} {row['per_second']:>9,.1f} {row['uj_per_embedding']:>10,.1f}  "
            f"{row['provenance']}"
        )
    r = result["ratios"]
    print(
        f"a hit: {r['hit_per_second_over_made']}x the embeddings per second of MiniLM's own, "
        f"{r['made_uj_over_hit_uj']}x fewer µJ charged (one text a request)"
    )


if __name__ == "__main__":
    main()
