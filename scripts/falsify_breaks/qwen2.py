"""Falsify breaks: the qwen2 architecture and the judge model's part packages. Each removes one
thing the judge model needs (native/eoc_native/llm/llama.py, shape.py, parts.py and
native/eoc_native/quant/kquants.py); the tiny qwen2 model's float64 reference
(tests/native/test_qwen2.py), the fake part packages (tests/native/test_parts.py) and the
K-quant blocks (tests/native/test_kquants.py) catch them (``FOCUS``)."""

_LLAMA = "native/eoc_native/llm/llama.py"
_SHAPE = "native/eoc_native/llm/shape.py"
_PARTS = "native/eoc_native/llm/parts.py"
_KQUANTS = "native/eoc_native/quant/kquants.py"
_TINY = "tests/native/test_qwen2.py::test_a_tiny_qwen2_model_computes_hf_s_qwen2"
_BIAS = "tests/native/test_qwen2.py::test_a_missing_or_misshapen_bias_is_refused_naming_it"
_PARTS_TESTS = "tests/native/test_parts.py"

BREAKS: list[tuple[str, str, str, str]] = [
    (
        "the qkv bias is not added",
        _LLAMA,
        "            qkv = qkv + layer.bqkv",
        "            qkv = qkv",
    ),
    (
        "qwen2's rope turns adjacent pairs, not the halves of a head",
        _LLAMA,
        "        if args.arch.rope_neox:  # the halves of each head side by side",
        "        if False:  # the halves of each head side by side",
    ),
    (
        "a qwen2 file's bias shapes are not checked",
        _SHAPE,
        '        if args.arch.qkv_bias or any(gf.has_tensor(f"{b}attn_{x}.bias") for x in "qkv"):',
        "        if False:",
    ),
    (
        "a Q4_K block's minimums are added, not subtracted",
        _KQUANTS,
        "    low = (-(dmin[..., None] * mn)).astype(np.float16)",
        "    low = (dmin[..., None] * mn).astype(np.float16)",
    ),
    (
        "a model part's hash is not checked",
        _PARTS,
        "                if not hmac.compare_digest(digest.hexdigest(), part.sha256):",
        "                if False:",
    ),
    (
        "the joined model file's hash is not checked",
        _PARTS,
        "        if not hmac.compare_digest(whole.hexdigest(), model.sha256):",
        "        if False:",
    ),
    (
        "a joined model file swapped afterwards is trusted",
        _PARTS,
        "    if not hmac.compare_digest(digest, model.sha256):\n        return False",
        "    if False:\n        return False",
    ),
    (
        "the joined model file's stamp MAC is not checked",
        _PARTS,
        "        hmac.compare_digest(mac, _mac(key, path, body))",
        "        True",
    ),
]

FOCUS: dict[str, list[str]] = {
    "the qkv bias is not added": [_TINY],
    "qwen2's rope turns adjacent pairs, not the halves of a head": [_TINY],
    "a qwen2 file's bias shapes are not checked": [_BIAS],
    "a Q4_K block's minimums are added, not subtracted": ["tests/native/test_kquants.py"],
    **{name: [_PARTS_TESTS] for name, file, *_ in BREAKS if file == _PARTS},
}
