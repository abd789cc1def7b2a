"""Write ``native/eoc_native/semantic/data/pack-vectors.npz``: the knowledge pack's kv questions
embedded by all-MiniLM-L6-v2, with the model's fingerprint, so that a first ``eoc query`` on a
fresh install does not spend seconds embedding them (the vectors are used only when the
installed model's fingerprint matches).

    python scripts/build_pack_vectors.py [--check]

Run it after changing the pack's kv files; ``--check`` exits 1 when the shipped file is stale.
tests/native/test_semantic.py checks the same.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from eoc import knowledge  # noqa: E402
from eoc_native.semantic import PACK_VECTORS, MiniLMEmbedder  # noqa: E402
from eoc_native.semantic.cache import text_key  # noqa: E402


def _pack() -> tuple[str, list[str], np.ndarray]:
    """The installed model's fingerprint, the pack's kv prompts and their vectors, live (the
    float32 pass: the same on every machine, where the int8 one needs AVX-512 VNNI)."""
    model = MiniLMEmbedder(runtime="float32")
    prompts = sorted({p for p, _ in knowledge.kv_pairs()})
    return model.fingerprint, prompts, model.embed_batch(prompts).astype(np.float32)


def build() -> bytes:
    fingerprint, prompts, vectors = _pack()
    buf = io.BytesIO()
    np.savez_compressed(
        buf,
        model=np.array(fingerprint),
        keys=np.array([text_key(p) for p in prompts]),
        vectors=vectors,
    )
    return buf.getvalue()


def stale() -> list[str]:
    """What the shipped file lacks or gets wrong ([] when it is current)."""
    if not PACK_VECTORS.is_file():
        return [f"{PACK_VECTORS} is missing"]
    fingerprint, prompts, live = _pack()
    with np.load(PACK_VECTORS, allow_pickle=False) as data:
        if str(data["model"]) != fingerprint:
            return ["it was computed by other model files"]
        shipped = dict(zip(map(str, data["keys"]), data["vectors"], strict=True))
    out = []
    for p, v in zip(prompts, live, strict=True):
        got = shipped.get(text_key(p))
        if got is None:
            out.append(f"no vector for {p!r}")
        elif not np.allclose(got, v, atol=1e-5):
            out.append(f"the vector for {p!r} differs")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    if args.check:
        problems = stale()
        for line in problems:
            print(line)
        return 1 if problems else 0
    PACK_VECTORS.parent.mkdir(parents=True, exist_ok=True)
    PACK_VECTORS.write_bytes(build())
    print(f"wrote {PACK_VECTORS.relative_to(ROOT)} ({PACK_VECTORS.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
