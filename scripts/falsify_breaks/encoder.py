"""Falsify breaks: MiniLM's int8 runtime (``encoder.c``, ``encoder.py``, the embedder's choice of
runtime): its vectors agree with float32's, it refuses what it cannot encode, and the embedder
runs what it is asked to (tests/native/test_encoder_i8.py, ``FOCUS``).

The breaks of the encoder's own arithmetic and checks are caught by tests that run it, which
skip on a CPU without AVX-512 VNNI (the encoder is not built there): on such a machine they are
left out (:data:`RUNS_HERE`), as nothing here could catch them; so are the breaks of its AMX
path where the CPU has no tiles (:data:`TILES_HERE`)."""

from pathlib import Path


def _flags() -> set[str]:
    try:
        return set(Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").split())
    except OSError:
        return set()


RUNS_HERE = {"avx512f", "avx512bw", "avx512_vnni"} <= _flags()
"""Whether this CPU has what ``encoder.c`` is built for (AVX-512 F, BW and VNNI)."""


def _tiles_granted() -> bool:
    """Whether Linux grants this process AMX's tile data (what ``eoc_encoder_amx`` asks; a
    kernel or hypervisor may refuse a CPU that has the flags, and the tiles' test then skips)."""
    import ctypes
    import platform

    if platform.system() != "Linux" or platform.machine() != "x86_64":
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.syscall(158, 0x1023, 18)) == 0  # arch_prctl(REQ_XCOMP_PERM, XTILEDATA)
    except (OSError, AttributeError):
        return False


TILES_HERE = RUNS_HERE and {"amx_tile", "amx_int8"} <= _flags() and _tiles_granted()
"""Whether it has AMX's tiles too, and Linux grants them (elsewhere the tiles' test skips, so
these breaks are left out)."""

_C = "native/eoc_native/quant/encoder.c"
_PY = "native/eoc_native/quant/encoder.py"
_MINILM = "native/eoc_native/semantic/minilm.py"
_T = "tests/native/test_encoder_i8.py"
_AGREE = f"{_T}::test_int8_vectors_agree_with_float32_on_held_out_questions"

_RUNNING: list[tuple[str, str, str, str]] = [  # caught only where the encoder runs
    (
        "the 8-bit encoder forgets the rows' zero points",
        _C,
        "const __m512i zs = _mm512_mullo_epi32(_mm512_set1_epi32(z), _mm512_loadu_si512(w->qsum + col));",
        "const __m512i zs = _mm512_setzero_si512();\n    (void)z;",
    ),
    (
        "the 8-bit encoder pools the first token only",
        _C,
        "for (int64_t m = 0; m < t; m++) s += x[m * d + i];",
        "for (int64_t m = 0; m < 1; m++) s += x[m * d + i];",
    ),
    (
        "the 8-bit encoder's attention never reads the last token's value",
        _C,
        "                for (int64_t j = 0; j < t; j++)\n                    acc = _mm512_fmadd_ps(",
        "                for (int64_t j = 0; j < t - 1; j++)\n                    acc = _mm512_fmadd_ps(",
    ),
    (
        "the 8-bit encoder's softmax counts the padding keys",
        _C,
        "                const __m512 p = _mm512_maskz_mov_ps(real, exp_neg(",
        "                const __m512 p = _mm512_maskz_mov_ps(0xffff, exp_neg(",
    ),
    (
        "the 8-bit encoder takes a text of no tokens",
        _PY,
        "        if not 0 < t <= self.max_tokens:",
        "        if not 0 <= t <= self.max_tokens:",
    ),
]

_BITS = f"{_T}::test_amx_tiles_give_the_vnni_vector_bit_for_bit"
_TILES: list[tuple[str, str, str, str]] = [  # caught only where the tiles run
    (
        "the encoder's tiles drop a last row tile of fewer than 16 rows",
        _C,
        "            if (m0 < rows) { /* one row tile (4) x four column tiles",
        "            if (m0 + 16 <= rows) { /* one row tile (4) x four column tiles",
    ),
    (
        "the encoder's tiles leave out the second row tile's first columns",
        _C,
        "                        _tile_dpbusd(2, 5, 6);\n",
        "",
    ),
    (
        "the encoder's tiles read the weights as if packed for 64 inputs a row",
        _C,
        "                    _tile_loadd(5, wg, 256);\n                    _tile_loadd(6, wg + 64, 256);",
        "                    _tile_loadd(5, wg, 64);\n                    _tile_loadd(6, wg + 64, 256);",
    ),
    (
        "the encoder never runs its products on tiles",
        _C,
        "    if (amx && w->k % 64 == 0) {",
        "    if (0) {",
    ),
    (
        "EOC_ENCODER_AMX=off is not read",
        _PY,
        '    if os.environ.get(AMX_ENV, "").strip().lower() == "off":',
        "    if False:",
    ),
]

BREAKS: list[tuple[str, str, str, str]] = [
    *(_RUNNING if RUNS_HERE else []),
    *(_TILES if TILES_HERE else []),
    (
        "the 8-bit encoder's inputs are not smoothed",
        _PY,
        "    return (s / s.mean()).astype(np.float32)",
        "    return np.ones_like(s, dtype=np.float32)",
    ),
    (
        "asking for int8 where it cannot run falls back to float32 silently",
        _MINILM,
        '            if self._asked == "int8":\n                raise MissingExtra(',
        "            if False:\n                raise MissingExtra(",
    ),
    (
        "EOC_MINILM_RUNTIME is not read",
        _MINILM,
        '        asked = runtime if runtime is not None else os.environ.get(RUNTIME_ENV, "").strip()',
        '        asked = runtime or ""',
    ),
    (
        "the embedder takes any thread count for its int8 encoder",
        _MINILM,
        "        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:",
        "        if False:",
    ),
    (
        "a model the 8-bit encoder cannot run stops the embedder instead of running float32",
        _MINILM,
        "        except (MissingExtra, InputError) as exc:",
        "        except MissingExtra as exc:",
    ),
]

_CHARGED = (
    "tests/native/test_semantic.py::"
    "test_a_hit_that_embedded_its_question_is_charged_for_the_embedding"
)
_KV = "eoc/stages/kv.py"
_CACHE = "native/eoc_native/semantic/cache.py"

_CHARGES: list[tuple[str, str, str, str]] = [  # what a kv hit that embedded its question costs
    (
        "a hit that embedded its question is charged by its bytes",
        _KV,
        "        if embedded is not None and self._embed_estimate is not None:",
        "        if False:",
    ),
    (
        "a hit's embedding is named in its basis but left out of its joules",
        _KV,
        '        return JouleCost.estimated(search.uj + said.uj, f"{search.basis}; {said.basis}")',
        '        return JouleCost.estimated(search.uj, f"{search.basis}; {said.basis}")',
    ),
    (
        "an exact hit is charged for an embedding it never made",
        _KV,
        "                    if self._confirmed(entry):\n                        return self._answer(entry, query, 0)",
        "                    if self._confirmed(entry):\n"
        "                        return self._answer(entry, query, 0, embedded=query.prompt)",
    ),
    (
        "the embedding cache hides the model's estimate",
        _CACHE,
        "        return estimate(text) if callable(estimate) else None",
        "        return None",
    ),
    *(  # (where float32 runs, charging its constant is right)
        [
            (
                "an embedding is charged at float32's constant whatever runs it",
                _MINILM,
                "        return embedding_estimate(tokens, self.runtime)",
                '        return embedding_estimate(tokens, "float32")',
            )
        ]
        if RUNS_HERE
        else []
    ),
]
BREAKS += _CHARGES

FOCUS: dict[str, list[str]] = {
    **{name: [_AGREE] for name, path, *_ in (_RUNNING if RUNS_HERE else []) if path == _C},
    **{name: [_BITS] for name, *_ in (_TILES if TILES_HERE else [])},
    **{name: [_CHARGED] for name, *_ in _CHARGES},
}
