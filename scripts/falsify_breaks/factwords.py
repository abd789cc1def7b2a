"""Falsify breaks: the graph's repair of a fact question's slips (eoc/stages/factwords.py)."""

BREAKS: list[tuple[str, str, str, str]] = [
    (
        "a name is repaired into another",
        "eoc/stages/factwords.py",
        "        if not word.isascii() or is_word(word) or is_name(word):",
        "        if not word.isascii() or is_word(word):",
    ),
    (
        "a word is repaired into a name",
        "eoc/stages/factwords.py",
        "        if not word.isascii() or is_word(word) or is_name(word):",
        "        if not word.isascii() or is_name(word):",
    ),
    (
        "a slip one from two words is repaired to one of them",
        "eoc/stages/factwords.py",
        "        if len(found) != 1:\n            return None  # none, or no way to tell which was meant\n"
        "        (right,) = found\n",
        "        if not found:\n            return None\n        right = sorted(found)[0]\n",
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
        "three-letter words are repaired",
        "eoc/stages/factwords.py",
        "MIN_LETTERS = 4\n",
        "MIN_LETTERS = 3\n",
    ),
    (
        "the graph does not repair a question it cannot read",
        "eoc/stages/graph.py",
        "        if not distinct:  # nothing found as written: the question's slips repaired, if any",
        "        if False:  # nothing found as written: the question's slips repaired, if any",
    ),
    (
        "a repaired answer does not say what it read",
        "eoc/stages/graph.py",
        '            return Answer(distinct[0], figure.with_basis(f"read {read}; {figure.basis}"))',
        "            return Answer(distinct[0], figure)",
    ),
]
