"""Falsify breaks: the graph's repair of a fact question's slips (eoc/stages/factwords.py)."""

BREAKS: list[tuple[str, str, str, str]] = [
    (
        "a name is repaired into another",
        "eoc/stages/factwords.py",
        "        if is_word(word) or is_name(word):  # (read only now: the word lists load on first use)",
        "        if is_word(word):  # (read only now: the word lists load on first use)",
    ),
    (
        "a word is repaired into a name",
        "eoc/stages/factwords.py",
        "        if is_word(word) or is_name(word):  # (read only now: the word lists load on first use)",
        "        if is_name(word):  # (read only now: the word lists load on first use)",
    ),
    (
        "a slip one from two words is repaired to one of them",
        "eoc/stages/factwords.py",
        "        if len(found) != 1:\n            return None  # none, or no way to tell which was meant\n",
        "        if not found:\n            return None  # none, or no way to tell which was meant\n"
        "        found = {sorted(found)[0]}\n",
    ),
    (
        "a short word's neighbours two slips away are not read",
        "eoc/stages/factwords.py",
        "        if n == MIN_LETTERS:  # a short word: no other word of its first letter within two",
        "        if False:  # a short word: no other word of its first letter within two",
    ),
    (
        "a short word's neighbours of every first letter block it",
        "eoc/stages/factwords.py",
        "if other != right and other[0] == word[0] and distance(word, other, 2) <= 2:",
        "if other != right and distance(word, other, 2) <= 2:",
    ),
    (
        "a word's remembered correction is another word's",
        "eoc/stages/factwords.py",
        "        known = self._corrections.get(word, _UNKNOWN)",
        "        known = self._corrections.get(word[:4], _UNKNOWN)",
    ),
    (
        "the remembered corrections grow without bound",
        "eoc/stages/factwords.py",
        "        if len(self._corrections) >= REMEMBERED:",
        "        if False:",
    ),
    (
        "three-letter words are repaired",
        "eoc/stages/factwords.py",
        "MIN_LETTERS = 4\n",
        "MIN_LETTERS = 3\n",
    ),
    (
        "the graph does not repair a question it cannot read",
        "eoc/stages/graph.py",
        "        if not distinct and self._may_read_repaired(text):",
        "        if False:",
    ),
    (
        "the graph indexes every name for a question no pattern could read",
        "eoc/stages/graph.py",
        "        return matcher.could_ask(self._forms.repair(text)[0])",
        "        return True",
    ),
    (
        "a repaired answer does not say what it read",
        "eoc/stages/graph.py",
        '            return Answer(distinct[0], figure.with_basis(f"read {read}; {figure.basis}"))',
        "            return Answer(distinct[0], figure)",
    ),
]
