"""The tokenizer and chat template stored in a GGUF file's metadata.

For ``tokenizer.ggml.model == "gpt2"`` (byte-level BPE: GPT-2, SmolLM2, StarCoder, Llama 3,
Qwen2, ...) the vocabulary and merges are loaded into a HuggingFace ``tokenizers`` BPE model with
the model's pre-tokenizer and the byte-level decoder; for ``"llama"`` (SentencePiece BPE: Llama 2,
TinyLlama) merges are ranked by the scores and bytes fall back to ``<0xNN>`` tokens. Encoding
matches llama.cpp's reference ids (tests/native/test_llm_vocab.py). The chat template
(``tokenizer.chat_template``) is rendered with jinja2's sandbox, as transformers and
llama-cpp-python do, because it is text from the model file, not trusted code, and under bounds
on the text it builds, its loop work, its nesting and its time (:mod:`eoc_native.llm.template`):
it is compiled and tried on a sample conversation when the tokenizer is built, so a hostile
template fails the model's load.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from eoc.errors import InputError
from eoc_native import require
from eoc_native.llm.template import ChatTemplate

# llama.cpp's token types (llama_token_type in llama.h).
TOKEN_NORMAL = 1
TOKEN_CONTROL = 3
TOKEN_USER_DEFINED = 4
TOKEN_BYTE = 6
SPM_SPACE = "\u2581"  # SentencePiece's "▁", which stands for a space

# tokenizer.ggml.pre values whose split llama.cpp does as "each digit alone, then the GPT-2
# regex" (llama-vocab.cpp groups these together), and those that use the GPT-2 regex alone.
_DIGITS_THEN_GPT2 = frozenset({"smollm", "starcoder", "refact", "command-r", "codeshell"})
_GPT2_ONLY = frozenset({"gpt-2", "default"})
#: Pre-tokenizers that split by their own regex before the byte-level BPE (llama.cpp's
#: llama-vocab.cpp has the same patterns): Llama 3's and Qwen2's (digits one at a time).
_REGEX_SPLITS = {
    "llama-bpe": (
        r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+"
        r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    ),
    "qwen2": (
        r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+"
        r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    ),
}


@lru_cache(maxsize=1)
def _byte_decoder() -> dict[str, int]:
    """GPT-2's printable-character -> byte table, the inverse of ``bytes_to_unicode``."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    printable += range(ord("®"), ord("ÿ") + 1)
    byte_values = list(printable)
    chars = list(printable)
    n = 0
    for b in range(256):
        if b not in byte_values:
            byte_values.append(b)
            chars.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(byte_values, chars, strict=True)}


class GGUFTokenizer:
    """Encode/decode text with the vocabulary of a GGUF file.

    Attributes:
        bos_id: begin-of-sequence token id (or None).
        eos_id: end-of-sequence token id; generation stops there.
        add_bos: whether llama.cpp would put ``bos_id`` in front of an encoded prompt.
    """

    def __init__(self, metadata: Mapping[str, Any]) -> None:
        """Build the tokenizer from GGUF metadata; raise :class:`InputError` if unsupported."""
        self._encoding = threading.Lock()
        model = metadata.get("tokenizer.ggml.model")
        if model not in ("gpt2", "llama"):
            raise InputError(
                f"tokenizer model {model!r} is not supported (only 'gpt2', byte-level BPE, and "
                "'llama', SentencePiece BPE, are)"
            )
        self.spm = model == "llama"
        pre = str(metadata.get("tokenizer.ggml.pre", "default"))
        if pre not in _DIGITS_THEN_GPT2 | _GPT2_ONLY | set(_REGEX_SPLITS):
            supported = sorted(_DIGITS_THEN_GPT2 | _GPT2_ONLY | set(_REGEX_SPLITS))
            raise InputError(
                f"pre-tokenizer {pre!r} is not supported (supported: {', '.join(supported)})"
            )
        self.tokens: list[str] = list(metadata["tokenizer.ggml.tokens"])
        self.token_types: list[int] = list(
            metadata.get("tokenizer.ggml.token_type", [TOKEN_NORMAL] * len(self.tokens))
        )
        merges: list[str] = list(metadata.get("tokenizer.ggml.merges", []))
        self.bos_id: int | None = _opt_int(metadata.get("tokenizer.ggml.bos_token_id"))
        eos = _opt_int(metadata.get("tokenizer.ggml.eos_token_id"))
        if eos is None:
            raise InputError("GGUF tokenizer has no tokenizer.ggml.eos_token_id")
        self.eos_id: int = eos
        self.add_bos = bool(metadata.get("tokenizer.ggml.add_bos_token", False))
        self.chat_template: str | None = metadata.get("tokenizer.chat_template")
        if self.spm:
            scores = list(metadata.get("tokenizer.ggml.scores", []))
            if len(scores) != len(self.tokens) or len(self.token_types) != len(self.tokens):
                raise InputError("a SentencePiece vocabulary needs a score and type per token")
            unk = _opt_int(metadata.get("tokenizer.ggml.unknown_token_id")) or 0
            self._hf = self._build_spm(scores, unk)
        else:
            self._hf = self._build(
                merges,
                digits=pre in _DIGITS_THEN_GPT2,
                regex=_REGEX_SPLITS.get(pre),
                # Llama 3 takes a whole pre-token that is in the vocabulary as it is, before any
                # merge (its tokenizer.json says ignore_merges; llama.cpp does the same)
                ignore_merges=pre == "llama-bpe",
            )
        # the chat template is compiled and tried on a sample now, so that a hostile one fails
        # the model's load (before its weights are read), not a request
        self._template = self._compile_template()

    def _build_spm(self, scores: Sequence[float], unk: int) -> Any:
        """SentencePiece BPE (Llama 2, TinyLlama): merges ranked by the merged piece's score,
        bytes for what the vocabulary lacks, a space before the text and "▁" for spaces (as
        llama.cpp and Hugging Face's Llama tokenizer do)."""
        tk = require("tokenizers", package="tokenizers", why="the GGUF tokenizer")
        vocab = {tok: i for i, tok in enumerate(self.tokens)}
        normal = {t for t, kind in zip(self.tokens, self.token_types, strict=True) if kind == 1}
        ranked = []
        for i, piece in enumerate(self.tokens):
            if self.token_types[i] != TOKEN_NORMAL:
                continue
            for cut in range(1, len(piece)):
                left, right = piece[:cut], piece[cut:]
                if left in normal and right in normal:
                    ranked.append((-float(scores[i]), i, left, right))
        ranked.sort()
        model = tk.models.BPE(
            vocab=vocab,
            merges=[(a, b) for _, _, a, b in ranked],
            unk_token=self.tokens[unk],
            fuse_unk=True,
            byte_fallback=True,
        )
        hf = tk.Tokenizer(model)
        hf.normalizer = tk.normalizers.Sequence(
            [tk.normalizers.Prepend(SPM_SPACE), tk.normalizers.Replace(" ", SPM_SPACE)]
        )
        hf.add_tokens(
            [
                tk.AddedToken(tok, special=(kind == TOKEN_CONTROL), normalized=False)
                for tok, kind in zip(self.tokens, self.token_types, strict=True)
                if kind in (TOKEN_CONTROL, TOKEN_USER_DEFINED)
            ]
        )
        return hf

    def _build(
        self,
        merges: Sequence[str],
        *,
        digits: bool,
        regex: str | None = None,
        ignore_merges: bool = False,
    ) -> Any:
        tk = require("tokenizers", package="tokenizers", why="the GGUF tokenizer")
        vocab = {tok: i for i, tok in enumerate(self.tokens)}
        pairs = [tuple(m.split(" ", 1)) for m in merges]
        # Byte-level BPE covers every byte, so there is no unknown token and no byte fallback.
        hf = tk.Tokenizer(
            tk.models.BPE(vocab=vocab, merges=pairs, fuse_unk=False, ignore_merges=ignore_merges)
        )
        splits: list[Any] = [tk.pre_tokenizers.Digits(individual_digits=True)] if digits else []
        if regex is not None:  # the model's own split, then bytes without GPT-2's regex
            splits.append(tk.pre_tokenizers.Split(tk.Regex(regex), behavior="isolated"))
        splits.append(tk.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=regex is None))
        hf.pre_tokenizer = tk.pre_tokenizers.Sequence(splits)
        hf.decoder = tk.decoders.ByteLevel()
        # Control tokens (<|im_start|>, ...) are only recognised when the caller asks for
        # special-token parsing; user-defined ones always are, as in llama.cpp.
        added = [
            tk.AddedToken(tok, special=(kind == TOKEN_CONTROL), normalized=False)
            for tok, kind in zip(self.tokens, self.token_types, strict=True)
            if kind in (TOKEN_CONTROL, TOKEN_USER_DEFINED)
        ]
        hf.add_tokens(added)
        return hf

    @property
    def vocab_size(self) -> int:
        """Number of tokens in the vocabulary."""
        return len(self.tokens)

    def encode(self, text: str, *, special: bool = False, add_bos: bool | None = None) -> list[int]:
        """Token ids of ``text``.

        Args:
            text: the text to encode.
            special: parse control-token text such as ``<|im_start|>`` as those tokens (wanted
                for a rendered chat template, not for user text).
            add_bos: prepend ``bos_id``; defaults to the file's ``tokenizer.ggml.add_bos_token``.
        """
        # encode_special_tokens=True makes the tokenizer treat special-token text as plain text;
        # the flag is the tokenizer's own, so it is set and used under one lock (a server
        # counts an answer's tokens while another thread encodes a chat template)
        with self._encoding:
            self._hf.encode_special_tokens = not special
            ids: list[int] = self._hf.encode(text, add_special_tokens=False).ids
        if (self.add_bos if add_bos is None else add_bos) and self.bos_id is not None:
            ids.insert(0, self.bos_id)
        return ids

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes token ``token_id`` stands for; control tokens render as nothing."""
        kind = self.token_types[token_id]
        text = self.tokens[token_id]
        if kind == TOKEN_CONTROL:
            return b""
        if kind == TOKEN_USER_DEFINED:
            return text.encode("utf-8")
        if self.spm:
            if kind == TOKEN_BYTE:  # "<0x0A>"
                return bytes([int(text[3:-1], 16)])
            return text.replace(SPM_SPACE, " ").encode("utf-8")
        table = _byte_decoder()
        return bytes(table[c] for c in text)

    def decode(self, ids: Sequence[int]) -> str:
        """Text of ``ids`` (control tokens dropped, invalid UTF-8 replaced)."""
        text = b"".join(self.token_bytes(i) for i in ids).decode("utf-8", errors="replace")
        return text[1:] if self.spm and text.startswith(" ") else text  # the prepended space

    def _compile_template(self) -> ChatTemplate | None:
        if not self.chat_template:
            return None
        return ChatTemplate(
            str(self.chat_template),
            bos_token=self.tokens[self.bos_id] if self.bos_id is not None else "",
            eos_token=self.tokens[self.eos_id],
        )

    def apply_chat_template(
        self, messages: Sequence[Mapping[str, str]], *, add_generation_prompt: bool = True
    ) -> str:
        """Render ``messages`` (dicts with ``role`` and ``content``) with the file's template.

        Raises :class:`~eoc.errors.ChatTemplateError` where the template passes a bound on this
        conversation (:mod:`eoc_native.llm.template`), and :class:`InputError` where the
        template itself refuses the messages (its ``raise_exception``).
        """
        if self._template is None:
            raise InputError("this GGUF file has no tokenizer.chat_template")
        return self._template.render(messages, add_generation_prompt=add_generation_prompt)


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)
