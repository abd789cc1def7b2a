"""A set of real MiniLM embeddings for ``bench/kvscale.py``'s recall figures.

Random unit vectors are the hardest case for a graph index (no structure to follow) but not what
a kv holds: sentence embeddings lie near a far lower-dimensional surface. This builds a set with
that structure, offline, from text every machine that runs the benchmarks has: the docstrings of
Python's standard library and of the packages installed in the benchmark's environment, split
into sentences of 6-30 mostly-alphabetic words, deduplicated (case folded), sorted, then shuffled
with a fixed seed. Of those sentences:

* ``stored``: the first ``n``, embedded by eoc's all-MiniLM-L6-v2 (the kv's own embedder);
* ``unseen``: the last 1,000 of the list (never stored at any size), embedded as queries whose nearest stored sentence is whatever the
  exact search says (a hard recall query: most lie far from every stored one);
* ``reworded``: 1,000 stored sentences with one word dropped, embedded as queries that have a
  near stored neighbour, as a reworded question has (the case a kv hit depends on).

Embedding runs at about 90 sentences a second on two cores, so the 100k set takes about 20
minutes the first time or longer on long sentences; it is kept in ``~/.cache/eoc/kvscale/``, in
files of 10,240 sentences that a larger set reuses and an interrupted build goes on from.

    python bench/kvreal.py [--n 100000]    # build (or check) the set and print what it holds
"""

from __future__ import annotations

import argparse
import ast
import random
import re
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

CACHE = Path("~/.cache/eoc/kvscale").expanduser()
QUERIES = 1_000
SEED = 20261205
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_SPLIT = re.compile(r"(?<=[.?!])\s+|\n\s*\n")


def sentences() -> list[str]:
    """Every docstring sentence of the standard library and the installed packages that reads
    as prose, deduplicated and sorted (the same list on the same environment)."""
    paths = sysconfig.get_paths()
    roots = sorted({Path(paths["stdlib"]), Path(paths["purelib"])})
    seen: set[str] = set()
    out: list[str] = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            try:
                tree = ast.parse(path.read_text("utf-8"))
            except (SyntaxError, UnicodeDecodeError, ValueError, OSError):
                continue
            for node in ast.walk(tree):
                if not isinstance(
                    node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
                ):
                    continue
                doc = ast.get_docstring(node)
                for part in _SPLIT.split(doc or ""):
                    text = " ".join(part.split())
                    words = text.split()
                    if not 6 <= len(words) <= 30:
                        continue
                    prose = sum(bool(_WORD.fullmatch(w.strip(".,;:()\"'"))) for w in words)
                    if prose < 0.8 * len(words) or text.lower() in seen:
                        continue
                    seen.add(text.lower())
                    out.append(text)
    return sorted(out)


def _drop_a_word(text: str, rng: random.Random) -> str:
    words = text.split()
    del words[rng.randrange(len(words))]
    return " ".join(words)


CHUNK = 10_240
"""Stored sentences embedded and kept per file: a larger set reuses a smaller one's files, and an
interrupted build goes on from its last whole file."""


def _pool() -> list[str]:
    pool = sentences()
    random.Random(SEED).shuffle(pool)
    return pool


def _embed(model: Any, texts: list[str]) -> Any:
    import numpy as np

    return np.asarray(model.embed_batch(texts), np.float32)


def real_set(n: int, *, quiet: bool = False) -> dict[str, Any]:
    """``{"stored", "unseen", "reworded", "reworded_of"}``: float32 unit vectors (the last, the
    row of ``stored`` each reworded query was made from), embedded once and cached. ``stored`` is
    the first ``n`` sentences of the shuffled list; ``unseen`` its last 1,000."""
    import numpy as np

    from eoc_native.semantic import MiniLMEmbedder

    CACHE.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    pool = _pool()
    if len(pool) < n + QUERIES:
        raise SystemExit(f"only {len(pool)} sentences here; asked for {n} and {QUERIES} queries")
    model = MiniLMEmbedder()
    chunks = []
    for start in range(0, n, CHUNK):
        path = CACHE / f"minilm-chunk-{start // CHUNK}.npy"
        if not path.is_file():
            if not quiet:
                print(f"  embedding sentences {start}-{start + CHUNK} ({time.perf_counter() - t0:.0f} s)",
                      file=sys.stderr)  # fmt: skip
            tmp = path.with_suffix(".tmp.npy")
            np.save(tmp, _embed(model, pool[start : start + CHUNK]))
            tmp.replace(path)
        chunks.append(np.load(path))
    stored = np.concatenate(chunks)[:n]
    unseen_path = CACHE / "minilm-unseen.npy"
    if not unseen_path.is_file():
        np.save(unseen_path, _embed(model, pool[-QUERIES:]))
    rng = random.Random(SEED + n)
    rows = sorted(rng.sample(range(n), QUERIES))
    reworded_path = CACHE / f"minilm-reworded-{n}.npy"
    if not reworded_path.is_file():
        np.save(reworded_path, _embed(model, [_drop_a_word(pool[i], rng) for i in rows]))
    return {
        "stored": stored,
        "unseen": np.load(unseen_path),
        "reworded": np.load(reworded_path),
        "reworded_of": np.asarray(rows, np.int64),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=100_000, help="stored sentences (default 100000)")
    args = ap.parse_args(argv)
    data = real_set(args.n)
    print({k: tuple(v.shape) for k, v in data.items()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
