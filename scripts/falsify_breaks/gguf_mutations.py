"""Falsify breaks: issue 35, items 3 and 4, hostile GGUF model files. Each removes one check of a
model file's header or tensor table (native/eoc_native/llm/shape.py, gguf.py, gguf_header.py);
tests/native/test_gguf_mutations.py, which loads every mutated field of a small model, catches it
(``FOCUS``)."""

_SHAPE = "native/eoc_native/llm/shape.py"
_GGUF = "native/eoc_native/llm/gguf.py"
_HEADER = "native/eoc_native/llm/gguf_header.py"
_MUTATIONS = "tests/native/test_gguf_mutations.py"

BREAKS: list[tuple[str, str, str, str]] = [
    (
        "the rope dimension count is not checked against the head dimension",
        _SHAPE,
        "    if rope_dim > head_dim or rope_dim % 2:",
        "    if False:",
    ),
    (
        "the tensors' dims are not checked against the header",
        _SHAPE,
        "        if got != dims:",
        "        if False:",
    ),
    (
        "the memory a context implies has no ceiling",
        _SHAPE,
        "    if need > ceiling:",
        "    if False:",
    ),
    (
        "a tensor followed by unused bytes is read",
        _GGUF,
        "        if after - end >= align:",
        "        if False:",
    ),
    (
        "the norm epsilon is read unchecked",
        _SHAPE,
        '        "norm_eps": r.real(p + "attention.layer_norm_rms_epsilon", 0.0, 0.5, None),',
        '        "norm_eps": float(md[p + "attention.layer_norm_rms_epsilon"]),',
    ),
    (
        "special token ids are not checked against the vocabulary",
        _SHAPE,
        "            _Reader(md, source).whole(key, 0, n - 1)",
        "            pass",
    ),
    (
        "layers past the block count are ignored",
        _SHAPE,
        "        if layer is not None and int(layer.group(1)) >= args.n_layers:",
        "        if False:",
    ),
    (
        "arrays nest without a limit",
        _HEADER,
        "                if depth >= MAX_NESTING:",
        "                if False:",
    ),
]

FOCUS: dict[str, list[str]] = {name: [_MUTATIONS] for name, *_ in BREAKS}
