"""BERT's uncased WordPiece tokenizer in pure Python (what all-MiniLM-L6-v2 was trained with).

Basic tokenization: clean control characters, split CJK ideographs apart, lowercase, strip
accents, split on whitespace and punctuation. Then greedy longest-match-first word pieces with
the ``##`` prefix; a word with no split, or longer than 100 characters, is ``[UNK]``.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from eoc.errors import InputError


def _is_punct(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B81F
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


class WordPiece:
    """Turns text into BERT token ids (``[CLS] ... [SEP]``)."""

    def __init__(self, vocab: dict[str, int], max_len: int = 256) -> None:
        self.vocab = vocab
        self.max_len = max_len
        for tok in ("[CLS]", "[SEP]", "[UNK]", "[PAD]"):
            if tok not in vocab:
                raise InputError(f"the vocabulary has no {tok} token")
        self.cls, self.sep, self.unk = vocab["[CLS]"], vocab["[SEP]"], vocab["[UNK]"]
        self._cache: dict[str, list[int]] = {}

    @classmethod
    def from_file(cls, path: str | Path, max_len: int = 256) -> WordPiece:
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read the vocabulary {path}: {exc}") from None
        return cls({tok: i for i, tok in enumerate(lines)}, max_len)

    def basic(self, text: str) -> list[str]:
        out: list[str] = []
        buf: list[str] = []

        def flush() -> None:
            if buf:
                out.append("".join(buf))
                buf.clear()

        text = unicodedata.normalize("NFD", text.lower())
        for ch in text:
            cp = ord(ch)
            if (
                cp == 0
                or cp == 0xFFFD
                or (unicodedata.category(ch).startswith("C") and ch not in "\t\n\r")
            ):
                continue
            if unicodedata.category(ch) == "Mn":  # strip accents
                continue
            if ch.isspace():
                flush()
            elif _is_punct(ch) or _is_cjk(cp):
                flush()
                out.append(ch)
            else:
                buf.append(ch)
        flush()
        return out

    def pieces(self, word: str) -> list[int]:
        hit = self._cache.get(word)
        if hit is not None:
            return hit
        if len(word) > 100:
            return [self.unk]
        ids: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    found = self.vocab[piece]
                    break
                end -= 1
            if found is None:
                ids = [self.unk]
                break
            ids.append(found)
            start = end
        if len(self._cache) < 100_000:
            self._cache[word] = ids
        return ids

    def encode(self, text: str) -> list[int]:
        ids = [self.cls]
        for word in self.basic(text):
            ids.extend(self.pieces(word))
        return [*ids[: self.max_len - 1], self.sep]


__all__ = ["WordPiece"]
