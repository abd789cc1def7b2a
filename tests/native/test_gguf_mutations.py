"""Hostile GGUF files: one small valid model, and every field the loader reads, mutated.

Issue 35 (items 3 and 4): header values sized allocations without a bound (a
``llama.rope.dimension_count`` of 150,000 took 3.8 GB; 20 M asked for 153 GiB), and many damaged
files were answered (an empty answer from a NaN norm epsilon) or died with a raw Python error
(division by zero, recursion depth, a traceback from ``eoc serve``).

Here one valid 2-layer model is written (:func:`tests.native.test_llm_tiny.write_tiny_model`, the
``gguf`` package's writer) with every optional key the loader reads, and each case below edits a
few bytes of a copy in place: every metadata value the loader reads (to zero, negative, big,
huge, NaN, the wrong type and a value that disagrees with the tensors), every field of the tensor
table (dims, dimension count, type, offset, name) and the header's counts. Each must end in a
typed :class:`~eoc.errors.EocError` (a :class:`~eoc.errors.ModelFileError` for the file's own
fields) whose message names the field, through the public load path, with nothing run. A few go
through ``eoc query --model`` and ``eoc serve --model`` as processes, and a huge dimension is
refused inside a process whose address space could not hold what it claims.
"""

from __future__ import annotations

import math
import os
import re
import struct
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("gguf", reason="the llm extra is not installed: pip install gguf")
pytest.importorskip("tokenizers", reason="the llm extra is not installed: pip install tokenizers")
pytest.importorskip("jinja2", reason="the llm extra is not installed: pip install jinja2")

from eoc.errors import EocError, ModelFileError
from eoc_native.llm.generate import load
from tests.native.test_llm_tiny import DIM, HEADS, KV_HEADS, write_tiny_model

ROOT = Path(__file__).resolve().parents[2]
HEAD_DIM = DIM // HEADS

# GGUF value types (gguf_header._FIXED): struct codes and the signed/float twin of each width
U32, I32, F32, U64, I64, F64, STRING, ARRAY = 4, 5, 6, 10, 11, 12, 8, 9
_CODE = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_SIGNED = {4: 5, 5: 5, 10: 11, 11: 11}
_FLOAT = {4: 6, 5: 6, 6: 6, 10: 12, 11: 12, 12: 12}
_INT = {6: 4, 12: 10}


def _extras(w: Any) -> None:
    """Every optional key the loader reads, at the value the tensors imply."""
    import gguf

    w.add_key_length(HEAD_DIM)
    w.add_value_length(HEAD_DIM)
    w.add_rope_dimension_count(HEAD_DIM)
    w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
    w.add_rope_scaling_factor(1.0)
    w.add_expert_count(0)
    w.add_expert_used_count(0)
    for i in range(2):  # q, k and v biases (optional in a llama file, as llama.cpp reads it)
        for x, width in (("q", DIM), ("k", KV_HEADS * HEAD_DIM), ("v", KV_HEADS * HEAD_DIM)):
            w.add_tensor(f"blk.{i}.attn_{x}.bias", np.linspace(-0.1, 0.1, width, dtype=np.float32))


# --- where each field lies in the file ---------------------------------------------------------


@dataclass
class Field:
    key: str
    type_off: int
    type: int
    value_off: int
    item_type_off: int = -1  # arrays: the items' type and count
    count_off: int = -1
    count: int = 0


@dataclass
class Tensor:
    name: str
    name_off: int
    ndims_off: int
    dims_offs: list[int]
    dims: list[int]
    type_off: int
    type: int
    offset_off: int
    offset: int


@dataclass
class Layout:
    fields: dict[str, Field] = field(default_factory=dict)
    tensors: dict[str, Tensor] = field(default_factory=dict)
    n_tensors: int = 0
    n_keys: int = 0


def layout(data: bytes) -> Layout:
    """Where each metadata value and tensor-table field of a valid GGUF file lies."""
    out = Layout()
    off = 8
    out.n_tensors, out.n_keys = struct.unpack_from("<QQ", data, off)
    off += 16

    def string(at: int) -> tuple[str, int]:
        (n,) = struct.unpack_from("<Q", data, at)
        return data[at + 8 : at + 8 + n].decode(), at + 8 + n

    def skip(kind: int, at: int) -> int:
        if kind in _CODE:
            return at + struct.calcsize(_CODE[kind])
        if kind == STRING:
            return string(at)[1]
        item, n = struct.unpack_from("<IQ", data, at)
        at += 12
        for _ in range(n):
            at = skip(item, at)
        return at

    for _ in range(out.n_keys):
        key, off = string(off)
        (kind,) = struct.unpack_from("<I", data, off)
        f = Field(key, off, kind, off + 4)
        if kind == ARRAY:
            f.item_type_off, f.count_off = off + 4, off + 8
            f.count = struct.unpack_from("<Q", data, off + 8)[0]
        out.fields[key] = f
        off = skip(kind, off + 4)
    for _ in range(out.n_tensors):
        name_off = off
        name, off = string(off)
        (n,) = struct.unpack_from("<I", data, off)
        dims_offs = [off + 4 + 8 * i for i in range(n)]
        dims = [struct.unpack_from("<Q", data, d)[0] for d in dims_offs]
        off = off + 4 + 8 * n
        kind, offset = struct.unpack_from("<IQ", data, off)
        out.tensors[name] = Tensor(name, name_off, dims_offs[0] - 4, dims_offs, dims, off, kind,
                                   off + 4, offset)  # fmt: skip
        off += 12
    return out


# --- the mutations -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    id: str
    edits: tuple[tuple[int, bytes], ...]
    names: str
    """A pattern the refusal's message must hold: the field's name."""
    n_ctx: int = 48


_STRUCTURAL = "corrupt|damaged|cut short"
"""What a refusal says where a count or length was changed: everything after it is misread, so
the field the reader stops at may be another (the message then says the header is damaged)."""


def _value(f: Field, kind: int, value: Any) -> tuple[tuple[int, bytes], ...]:
    """Set field ``f`` to ``value`` stored as GGUF type ``kind`` (of the same width)."""
    edits = [(f.value_off, struct.pack("<" + _CODE[kind], value))]
    if kind != f.type:
        edits.append((f.type_off, struct.pack("<I", kind)))
    return tuple(edits)


INT_KEYS: dict[str, dict[str, int | None]] = {
    # key: the mutations that are still a valid model (None: skipped), or a mismatched value
    "llama.context_length": {"big": None, "mismatched": None},
    "llama.embedding_length": {"mismatched": DIM + 1, "mismatched2": DIM * 2},
    "llama.block_count": {"mismatched": 3, "mismatched2": 1},
    "llama.feed_forward_length": {"mismatched": 97},
    "llama.attention.head_count": {"mismatched": 3, "mismatched2": 8},
    "llama.attention.head_count_kv": {"mismatched": 3, "mismatched2": 4},
    "llama.attention.key_length": {"mismatched": 8, "mismatched2": 15},
    "llama.attention.value_length": {"mismatched": 8},
    "llama.rope.dimension_count": {"mismatched": 17, "mismatched2": 32, "rope20M": 20_000_000},
    "llama.vocab_size": {"mismatched": -1},  # set below: one more than the tokens
    "llama.expert_count": {"zero": None, "mismatched": 1},
    "llama.expert_used_count": {"zero": None, "mismatched": 1},
    "tokenizer.ggml.bos_token_id": {"zero": None, "mismatched": -1},  # one past the vocabulary
    "tokenizer.ggml.eos_token_id": {"zero": None, "mismatched": -1},
}
FLOAT_KEYS: dict[str, dict[str, float | None]] = {
    "llama.attention.layer_norm_rms_epsilon": {"mismatched": 1.5},
    "llama.rope.freq_base": {"mismatched": 1.0},
    "llama.rope.scaling.factor": {"zero": None},  # 0 is no scaling, as llama.cpp reads it
}
STRING_KEYS = {
    "general.architecture": "llamb",
    "llama.rope.scaling.type": "lineaz",
    "tokenizer.ggml.model": "gpt3",
    "tokenizer.ggml.pre": "smollx",
}
ARRAY_KEYS = ("tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "tokenizer.ggml.merges")
#: Tensors whose table entries are mutated: the embedding, every tensor of layer 0, one of
#: layer 1 and the last norm.
TENSORS = (
    "token_embd.weight",
    *(
        f"blk.0.{n}.weight"
        for n in (
            "attn_norm",
            "ffn_norm",
            "attn_q",
            "attn_k",
            "attn_v",
            "attn_output",
            "ffn_gate",
            "ffn_up",
            "ffn_down",
        )
    ),
    "blk.1.attn_k.weight",
    *(f"blk.0.attn_{x}.bias" for x in "qkv"),
    "output_norm.weight",
)
TYPE_NAMES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 6: "Q5_0", 7: "Q5_1", 8: "Q8_0", 30: "BF16"}
_OTHER_TYPE = {0: 1, 1: 0, 30: 0, 2: 8, 3: 8, 6: 8, 7: 8, 8: 2}  # a readable type of other size
_SAME_SIZE_UNREAD = {0: 26, 1: 25, 30: 25}  # F32 -> I32, F16/BF16 -> I16: same bytes, not read


def cases(data: bytes) -> Iterator[Case]:
    lay = layout(data)
    n_vocab = lay.fields["tokenizer.ggml.tokens"].count
    for key, special in INT_KEYS.items():
        f = lay.fields[key]
        named = re.escape(key)
        signed = _SIGNED.get(f.type, I32)
        width = struct.calcsize(_CODE[f.type])
        values: dict[str, tuple[int, Any]] = {
            "zero": (f.type, 0),
            "negative": (signed, -1),
            "very-negative": (signed, -(1 << (8 * width - 1))),
            "big": (f.type, 150_000),
            "huge": (f.type, (1 << (8 * width)) - 1),
            "float": (_FLOAT[f.type], 16.5),
            "nan": (_FLOAT[f.type], math.nan),
        }
        for kind, value in special.items():
            if value is None:
                values.pop(kind, None)
            elif value == -1:
                values[kind] = (f.type, n_vocab + (1 if key == "llama.vocab_size" else 0))
            else:
                values[kind] = (f.type, value)
        for kind, (code, value) in values.items():
            yield Case(f"{key}={kind}", _value(f, code, value), named)
    for key, changes in FLOAT_KEYS.items():
        f = lay.fields[key]
        named = re.escape(key)
        floats: dict[str, tuple[int, Any]] = {
            "zero": (f.type, 0.0),
            "negative": (f.type, -1.0),
            "huge": (f.type, 3e38),
            "inf": (f.type, math.inf),
            "nan": (f.type, math.nan),
            "integer-type": (_INT[f.type], struct.unpack("<I", data[f.value_off : f.value_off + 4])[0]),
        }  # fmt: skip
        for kind, change in changes.items():
            if change is None:
                floats.pop(kind, None)
            else:
                floats[kind] = (f.type, change)
        for kind, (code, value) in floats.items():
            yield Case(f"{key}={kind}", _value(f, code, value), named)
    for key, other in STRING_KEYS.items():
        f = lay.fields[key]
        (n,) = struct.unpack_from("<Q", data, f.value_off)
        assert len(other) == n
        named = re.escape(key) + ("|pre-tokenizer 'smollx'" if key.endswith(".pre") else "")
        yield Case(f"{key}=mismatched", ((f.value_off + 8, other.encode()),), named)
        for kind, length in (("zero-length", 0), ("huge-length", 1 << 62), ("length+1", n + 1)):
            edit = ((f.value_off, struct.pack("<Q", length)),)
            yield Case(f"{key}={kind}", edit, f"{re.escape(key)}|{_STRUCTURAL}")
    for key in ARRAY_KEYS:
        f = lay.fields[key]
        named = f"{re.escape(key)}|{_STRUCTURAL}"
        for kind, count in (
            ("zero-count", 0),
            ("huge-count", 1 << 62),
            ("negative-count", (1 << 64) - 1),
            ("count-1", f.count - 1),
            ("count+1", f.count + 1),
        ):
            yield Case(f"{key}={kind}", ((f.count_off, struct.pack("<Q", count)),), named)
    f = lay.fields["tokenizer.ggml.token_type"]
    yield Case(
        "tokenizer.ggml.token_type=float-items",
        ((f.item_type_off, struct.pack("<I", F32)),),
        re.escape("tokenizer.ggml.token_type"),
    )
    # the header
    header = "the tensor count|metadata|tensor|version|" + _STRUCTURAL
    for kind, version in (("zero", 0), ("old", 1), ("new", 4), ("huge", 0xFFFFFFFF)):
        yield Case(f"version={kind}", ((4, struct.pack("<I", version)),), "version")
    for what, at, n in (("tensor-count", 8, lay.n_tensors), ("key-count", 16, lay.n_keys)):
        for kind, count in (
            ("zero", 0),
            ("huge", 1 << 62),
            ("negative", (1 << 64) - 1),
            ("minus-1", n - 1),
            ("plus-1", n + 1),
        ):
            yield Case(f"{what}={kind}", ((at, struct.pack("<Q", count)),), header)
    # the tensor table
    alignment = 32
    for name in TENSORS:
        t = lay.tensors[name]
        named = re.escape(name)
        for i, at in enumerate(t.dims_offs):
            step = 32 if i == 0 and t.type in (2, 3, 6, 7, 8) else 1
            for kind, value in (
                ("zero", 0),
                ("big", 150_000),
                ("huge", 1 << 40),
                ("negative", (1 << 64) - 1),
                ("plus", t.dims[i] + step),
                ("minus", t.dims[i] - step),
            ):
                yield Case(f"{name}.dims[{i}]={kind}", ((at, struct.pack("<Q", value)),), named)
        if len(t.dims) == 2 and t.dims[0] != t.dims[1]:
            swapped = struct.pack("<QQ", t.dims[1], t.dims[0])
            yield Case(f"{name}.dims=swapped", ((t.dims_offs[0], swapped),), named)
        for kind, n in (("zero", 0), ("five", 5), ("huge", 0xFFFFFFFF), ("other", 3 - len(t.dims))):
            yield Case(
                f"{name}.n_dims={kind}",
                ((t.ndims_off, struct.pack("<I", n)),),
                f"{named}|{_STRUCTURAL}",
            )
        types = {"huge": 0xFFFFFFFF, "unknown": 99, "mismatched": _OTHER_TYPE[t.type]}
        if t.type != 0:
            types["zero"] = 0
        if t.type in _SAME_SIZE_UNREAD:
            types["same-size-unread"] = _SAME_SIZE_UNREAD[t.type]
        for kind, code in types.items():
            yield Case(f"{name}.type={kind}", ((t.type_off, struct.pack("<I", code)),), named)
        offsets = {
            "huge": 1 << 62,
            "negative": (1 << 64) - 1,
            "unaligned": t.offset + 1,
            "shifted": t.offset + alignment,
        }
        if t.offset:
            offsets["zero"] = 0
        for kind, value in offsets.items():
            yield Case(f"{name}.offset={kind}", ((t.offset_off, struct.pack("<Q", value)),), named)
        renamed = name.replace(".weight", ".weighs").replace(".bias", ".biaz")
        yield Case(f"{name}.name=renamed", ((t.name_off + 8, renamed.encode()),), named)
    # the context the caller asks for against the ceiling on memory
    f = lay.fields["llama.context_length"]
    yield Case(
        "llama.context_length=16M-used",
        _value(f, f.type, 1 << 24),
        "memory|llama.context_length|n_ctx",
        n_ctx=1 << 24,
    )


def _mutated(data: bytes, case: Case) -> bytes:
    out = bytearray(data)
    for at, raw in case.edits:
        out[at : at + len(raw)] = raw
    return bytes(out)


def _base_bytes() -> bytes:
    """The same file, made once at collection (to list the cases by name)."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        return write_tiny_model(Path(d) / "base.gguf", extra=_extras).read_bytes()


_BASE = _base_bytes()
CASES = list(cases(_BASE))
HUGE = {"llama.rope.dimension_count=rope20M", "llama.context_length=16M-used"}
"""Cases whose values, unchecked, would take gigabytes: run only in the bounded process below
(:func:`test_a_huge_dimension_is_refused_before_anything_is_allocated`)."""
IN_PROCESS = [c for c in CASES if c.id not in HUGE]


def test_the_base_file_loads_and_answers(tmp_path: Path) -> None:
    """The unmutated file is a model eoc runs: every refusal below is the mutation's."""
    path = tmp_path / "base.gguf"
    path.write_bytes(_BASE)
    model, tok = load(path, n_ctx=48)
    assert model.args.rope_dim == HEAD_DIM and model.args.head_dim == HEAD_DIM
    logits = model.forward(tok.encode("hello"))
    assert logits.shape == (1, len(tok.tokens))


def test_the_set_covers_every_kind_of_field() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
    assert len(CASES) > 400
    for kind in ("zero", "negative", "huge", "nan", "mismatched"):
        assert any(i.endswith("=" + kind) for i in ids), kind
    for part in (".dims[", ".n_dims=", ".type=", ".offset=", ".name=", "tensor-count", "key-count"):
        assert any(part in i for i in ids), part


@pytest.mark.parametrize("case", IN_PROCESS, ids=[c.id for c in IN_PROCESS])
def test_a_mutated_file_is_refused_naming_the_field(tmp_path: Path, case: Case) -> None:
    path = tmp_path / "mutated.gguf"
    path.write_bytes(_mutated(_BASE, case))
    try:
        model, _ = load(path, n_ctx=case.n_ctx)
    except EocError as exc:
        assert re.search(case.names, exc.reason), (case.id, exc.reason)
        assert str(path) in exc.reason, exc.reason  # which file, too
        return
    except Exception as exc:
        pytest.fail(f"{case.id}: a raw {type(exc).__name__}: {exc}")
    pytest.fail(f"{case.id}: the mutated file loaded (n_ctx {model.n_ctx}, args {model.args})")


# --- no allocation sized by a header value ------------------------------------------------------

_BOUNDED = """
import resource, sys
from eoc.errors import EocError
from eoc_native.llm.generate import load
from eoc_native.quant import load_kernels

load_kernels()  # built or found before the limit: the compiler is a process of its own
with open("/proc/self/status") as f:
    vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
limit = vm + (768 << 20)  # what the process holds now, and 768 MiB more at most
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for path, n_ctx in zip(sys.argv[1::2], sys.argv[2::2]):
    try:
        load(path, n_ctx=int(n_ctx))
    except EocError as exc:
        print(type(exc).__name__, exc.reason.replace(chr(10), " "))
    else:
        print("LOADED", path)
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print("GROWN_KIB", grown)
"""


def test_a_huge_dimension_is_refused_before_anything_is_allocated(tmp_path: Path) -> None:
    """The issue's files (a rope dimension count of 150,000 and 20 M, huge head counts, a 16 M
    context used whole) are refused in a process whose address space has 768 MiB to spare: any
    allocation their values would size fails there (a raw MemoryError), and the peak memory of
    the process grows by less than 64 MiB."""
    by_id = {c.id: c for c in CASES}
    picked = [
        "llama.rope.dimension_count=big",
        "llama.rope.dimension_count=rope20M",
        "llama.attention.head_count=huge",
        "llama.attention.head_count_kv=big",
        "llama.attention.key_length=big",
        "llama.context_length=16M-used",
        "blk.0.attn_k.weight.dims[1]=big",
    ]
    argv = []
    for i, name in enumerate(picked):
        path = tmp_path / f"m{i}.gguf"
        path.write_bytes(_mutated(_BASE, by_id[name]))
        argv += [str(path), str(by_id[name].n_ctx)]
    run = subprocess.run(
        [sys.executable, "-c", _BOUNDED, *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "EOC_THREADS": "1"},
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    assert len(lines) == len(picked) + 1, run.stdout
    for name, line in zip(picked, lines, strict=False):
        assert line.startswith("ModelFileError "), (name, line)
    grown = int(lines[-1].split()[1])
    assert grown < 64 << 10, f"peak memory grew {grown} KiB"
    assert set(picked) >= HUGE


def test_arrays_nested_past_the_limit_are_a_header_error_not_a_recursion() -> None:
    """An array of arrays of arrays ... (12 bytes a level) once recursed until Python's limit."""
    from eoc_native.llm.gguf_header import MAX_NESTING, HeaderError, parse

    levels = 5000
    key = struct.pack("<Q", 1) + b"k"
    data = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + key + struct.pack("<I", ARRAY)
    data += struct.pack("<IQ", ARRAY, 1) * levels + struct.pack("<IQ", U32, 0) + bytes(64)
    with pytest.raises(HeaderError, match=f"nested more than {MAX_NESTING} deep"):
        parse(data)


# --- the command line: a typed message, no traceback --------------------------------------------


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "EOC_EMBEDDER": "hashed",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "EOC_THREADS": "1",
    }
    return subprocess.run(
        [sys.executable, "-m", "eoc", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
        check=False,
    )


CLI_CASES = [
    "llama.attention.head_count=zero",
    "llama.attention.layer_norm_rms_epsilon=nan",
    "llama.rope.dimension_count=big",
]


@pytest.mark.parametrize("name", CLI_CASES)
def test_eoc_query_and_serve_refuse_a_damaged_model(tmp_path: Path, name: str) -> None:
    pytest.importorskip("uvicorn", reason="eoc serve needs the serve extra")
    case = next(c for c in CASES if c.id == name)
    path = tmp_path / "damaged.gguf"
    path.write_bytes(_mutated(_BASE, case))
    field_name = name.split("=")[0]
    query = _cli(
        tmp_path, "query", "--no-store", "--model", str(path), "what is a damaged model file?"
    )
    assert query.returncode == 2, (query.stdout, query.stderr)
    assert "Traceback" not in query.stderr
    assert "ModelFileError" in query.stderr and field_name in query.stderr, query.stderr
    assert query.stdout == ""
    serve = _cli(tmp_path, "serve", "--model", str(path), "--port", "0")
    assert serve.returncode == 2, (serve.stdout, serve.stderr)
    assert "Traceback" not in serve.stderr
    assert "ModelFileError" in serve.stderr and field_name in serve.stderr, serve.stderr
    assert "http://" not in serve.stderr  # it never said it was listening


def test_model_file_error_is_an_input_error() -> None:
    from eoc.errors import InputError

    assert issubclass(ModelFileError, InputError)
    assert ModelFileError("x").exit_code == 2
