"""Falsify breaks: the kv's word gate (eoc/stages/kv_words.py) and the keys it indexes
(eoc/stages/guard/wordkeys.py)."""

BREAKS: list[tuple[str, str, str, str]] = [
    (
        "word keys: no keys for a slip of the keys",
        "eoc/stages/guard/wordkeys.py",
        "    if n < 4 or not word.isalpha():\n        return\n",
        "    if True:\n        return\n",
    ),
    (
        "word keys: a long word's slip in its first letters has no key",
        "eoc/stages/guard/wordkeys.py",
        '            out.add(f">{k}:" + word[-k:])\n',
        "            pass\n",
    ),
    (
        "word keys: no keys for an ending",
        "eoc/stages/guard/wordkeys.py",
        '            out.add("i:" + base + "e")\n',
        "            pass\n",
    ),
    (
        "word keys: no key for a clipped word",
        "eoc/stages/guard/wordkeys.py",
        '            out.add("p:" + form[:3])\n',
        "            pass\n",
    ),
    (
        "word keys: no initials of the stored words",
        "eoc/stages/guard/wordkeys.py",
        '    out.update("a:" + initials for _, _, initials in _spans(s.seq))\n',
        "    pass\n",
    ),
    (
        "word keys: a query's words its spelt-out acronym covers are not keyed",
        "eoc/stages/guard/wordkeys.py",
        "        out.update(spelt.get(u, ()))  # spelt out: a stored acronym of a run holding the word\n",
        "        pass\n",
    ),
    (
        "word keys: no key for a price word",
        "eoc/stages/guard/wordkeys.py",
        '    if "much" in s.words:\n        out.add("$much")\n',
        '    if "much" in s.words:\n        pass\n',
    ),
    (
        "word keys: a query that corrects itself is gated",
        "eoc/stages/guard/wordkeys.py",
        "    if q.corrected:\n        return None\n",
        "    if False:\n        return None\n",
    ),
    (
        "word keys: a guard that serves rewordings is gated",
        "eoc/stages/guard/entity.py",
        "        if self.rewordings:\n            return None\n        return asked_keys(",
        "        if False:\n            return None\n        return asked_keys(",
    ),
    (
        "word gate: a judge of meaning does not stand the gate aside",
        "eoc/stages/kv.py",
        '        return judging is None or judging.mode == "off"',
        "        return True",
    ),
    (
        "word gate: the kv never asks it",
        "eoc/stages/kv.py",
        "            if words is not None and not judged:\n",
        "            if False:\n",
    ),
    (
        "guard first: a miss is ruled out before embedding where a judge may serve a rewording",
        "eoc/stages/kv.py",
        "            if words is not None and not judged:\n",
        "            if words is not None:\n",
    ),
    (
        "guard first: any number of candidates is checked before embedding",
        "eoc/stages/kv.py",
        "                if len(words) <= GUARD_FIRST and not any(",
        "                if not any(",
    ),
    (
        "guard first: a question is ruled out where the guard allows a candidate",
        "eoc/stages/kv.py",
        "                if len(words) <= GUARD_FIRST and not any(\n"
        "                    (c := servable(k)) is not None and allowed(c) for k in words",
        "                if len(words) <= GUARD_FIRST and any(\n"
        "                    (c := servable(k)) is not None and allowed(c) for k in words",
    ),
    (
        "guard first: the guard's refusal is not read",
        "eoc/stages/kv.py",
        "                    (c := servable(k)) is not None and allowed(c) for k in words",
        "                    (c := servable(k)) is not None for k in words",
    ),
    (
        "guard first: the search asks the guard again for a pair it decided",
        "eoc/stages/kv.py",
        "            verdict = verdicts.get(candidate.key)",
        "            verdict = None",
    ),
    (
        "word gate: a question removed stays a candidate",
        "eoc/stages/kv_words.py",
        "            found = {key for key in these if key in held} if found is None else found & these",
        "            found = these if found is None else found & these",
    ),
    (
        "word gate: keys past its limit",
        "eoc/stages/kv_words.py",
        "        if key not in self.held and len(self.held) >= self.limit:",
        "        if False:",
    ),
    (
        "word gate: no limit on a query's reads",
        "eoc/stages/kv_words.py",
        "            if reads > MAX_WORD_READS:",
        "            if False:",
    ),
    (
        "word gate: a gate still keying answers",
        "eoc/stages/kv_words.py",
        "        if not self.on or not self.ready:\n            return None\n        lists, held",
        "        if not self.on:\n            return None\n        lists, held",
    ),
    (
        "word gate: a question stored after it was built is not keyed",
        "eoc/stages/kv.py",
        "                self._words.add(key, prompt, keys if self._words is gate else None)\n"
        "            self._deferred.pop(key, None)",
        "                pass\n            self._deferred.pop(key, None)",
    ),
    (
        "word gate: a question forgotten stays keyed",
        "eoc/stages/kv.py",
        "            if self._words is not None:\n                self._words.remove(key)",
        "            if False:\n                self._words.remove(key)",
    ),
    (
        "word gate: with a judge, the guard checks stored questions that cannot pass",
        "eoc/stages/kv.py",
        "        if words is not None:\n            similar = _both(lambda k: str(k) in words, matches)",
        "        if False:\n            similar = _both(lambda k: str(k) in words, matches)",
    ),
    (
        "word gate: with a judge, the first lookup keys every stored question itself",
        "eoc/stages/kv.py",
        '            threading.Thread(target=self._word_gate, name="eoc-kv-words", daemon=True).start()',
        "            self._word_gate()",
    ),
    (
        "word gate: with a judge, a question stored is not analysed as it is keyed",
        "eoc/stages/kv.py",
        "                entry.analysis = self._prepare(prompt)\n                keys = gate.keys(entry.analysis)",
        "                keys = gate.keys(prompt)",
    ),
    (
        "word gate: a question stored again in other words grows the lists without bound",
        "eoc/stages/kv_words.py",
        "                self._dead += 1  # (more, never fewer) until the lists are rebuilt",
        "                pass",
    ),
    (
        "word gate: removed questions are never dropped from the lists",
        "eoc/stages/kv_words.py",
        "            self._dead += 1\n            if self._dead > 64 and self._dead > len(self.held):",
        "            self._dead += 1\n            if False:",
    ),
]

_WORDS = "tests/test_wordkeys.py::"
FOCUS: dict[str, list[str]] = {
    "guard first: a miss is ruled out before embedding where a judge may serve a rewording": [
        _WORDS + "test_guard_first_stands_aside_past_its_candidates_and_for_a_judge"
    ],
    "guard first: any number of candidates is checked before embedding": [
        _WORDS + "test_guard_first_stands_aside_past_its_candidates_and_for_a_judge"
    ],
    "guard first: a question is ruled out where the guard allows a candidate": [
        _WORDS + "test_a_question_the_guard_refuses_beside_every_candidate_is_not_embedded"
    ],
    "guard first: the guard's refusal is not read": [
        _WORDS + "test_a_question_the_guard_refuses_beside_every_candidate_is_not_embedded"
    ],
    "guard first: the search asks the guard again for a pair it decided": [
        _WORDS + "test_a_question_the_guard_refuses_beside_every_candidate_is_not_embedded"
    ],
    "word keys: a guard that serves rewordings is gated": [
        _WORDS + "test_a_query_that_corrects_itself_and_rewordings_are_never_gated"
    ],
    "word gate: with a judge, the guard checks stored questions that cannot pass": [
        _WORDS + "test_with_a_judge_the_gate_spares_the_guard_and_serves_the_same"
    ],
    "word gate: with a judge, the first lookup keys every stored question itself": [
        _WORDS + "test_with_a_judge_the_gate_is_built_on_a_thread"
    ],
    "word gate: with a judge, a question stored is not analysed as it is keyed": [
        _WORDS + "test_with_a_judge_a_question_stored_after_the_gate_is_analysed_as_it_is_keyed"
    ],
    "word gate: a judge of meaning does not stand the gate aside": [
        _WORDS + "test_with_a_judge_every_question_is_embedded"
    ],
    "word gate: a question stored after it was built is not keyed": [
        _WORDS + "test_the_gate_is_built_at_the_first_lookup_that_may_use_it"
    ],
    "word gate: a question forgotten stays keyed": [
        _WORDS + "test_the_gate_is_built_at_the_first_lookup_that_may_use_it"
    ],
}
