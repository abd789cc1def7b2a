"""Falsify breaks: issue 34, right in context. Decisive characters (the kv's fold and exact path),
honest finish reasons and token counts, facts after earlier turns only where eoc can read them,
the look-alike classes (names, comparisons, times of day, swaps, spelling), and the levers over
remembered model answers (no cut answer to a paraphrase, forgetting one answer by its name, the
reuse policy). Each runs the test that catches it (``FOCUS``)."""

_KV = "eoc/stages/kv.py"
_SPELLING = "eoc/stages/spelling.py"
_FOLLOWUP = "eoc/chat/followup.py"
_CASCADE = "eoc/cascade.py"
_DECISIVE = "tests/test_decisive.py"
_CONTEXT = "tests/test_context.py"
_NEAR = "tests/test_nearmiss.py"
_REUSE = "tests/test_reuse.py"
_SERVE = "tests/native/test_serve_incontext.py"

BREAKS: list[tuple[str, str, str, str]] = [
    # item 1: decisive characters
    (
        "the kv's fold folds every script's case (ß is ss)",
        "eoc/text/forms.py",
        '        t = unicodedata.normalize("NFC", text).translate(_FOLD).lower()',
        '        t = unicodedata.normalize("NFC", text).translate(_FOLD).casefold()',
    ),
    (
        "the kv's fold drops a trailing !",
        "eoc/text/forms.py",
        """_FOLD_EDGE = re.compile(r"^[\\s\\"'¿¡]+|[\\s?.,;:\\"']+$")""",
        """_FOLD_EDGE = re.compile(r"^[\\s\\"'¿¡]+|[\\s?!.,;:\\"']+$")""",
    ),
    (
        "the kv's fold reads compatibility forms (² is 2)",
        "eoc/text/forms.py",
        '        t = unicodedata.normalize("NFC", text).translate(_FOLD).lower()',
        '        t = unicodedata.normalize("NFKC", text).translate(_FOLD).lower()',
    ),
    (
        "the exact path serves whatever its key finds",
        _KV,
        "        return query.prompt == entry.prompt or not decisive_difference(query.prompt, entry.prompt)",
        "        return True",
    ),
    (
        "superscripts and fractions are no symbols",
        "eoc/stages/guard/reading.py",
        '_SIGN_CATEGORIES = frozenset({"Sm", "Sc", "Sk", "So", "No"})',
        '_SIGN_CATEGORIES = frozenset({"Sm", "Sc"})',
    ),
    (
        "a plain key opening with a bracket reads as a partition's",
        "eoc/store/partition.py",
        '    return f" {folded}" if folded.startswith("(") else folded',
        "    return folded",
    ),
    (
        "a store keyed by an older fold keeps its keys",
        "eoc/store/sqlite.py",
        "        _rekey(self.db, groups)\n",
        "",
    ),
    # items 2 and 5: finish reasons and token counts
    (
        "the upstream's finish reason is dropped",
        "native/eoc_native/remote.py",
        "        return finish_reason_of(first_choice(doc, self._fail), self._fail)",
        "        return None",
    ),
    (
        "a streamed finish reason is dropped",
        "native/eoc_native/remote.py",
        "                    finished, reason = True, said",
        "                    finished, reason = True, None",
    ),
    (
        "the page's upstream finish reason is dropped",
        "eoc/stages/browser_remote.py",
        "        return reply._replace(\n",
        "        return reply or reply._replace(\n",
    ),
    (
        "an answer that may have been cut is said to have stopped",
        "eoc/stages/neural.py",
        "            elif token_bound(reply.text) < limit:",
        "            elif True:",
    ),
    (
        "a fact's tokens are guessed at 4 characters each",
        _FOLLOWUP,
        "    n = token_bound(payload) if tokens is None else tokens",
        "    n = len(payload) // 4 if tokens is None else tokens",
    ),
    (
        "the model's tokenizer is not asked",
        _CASCADE,
        "        counted = self._count_tokens(answer.payload) if self._count_tokens is not None else None",
        "        counted = None",
    ),
    # item 3: earlier turns
    (
        "earlier turns are not read",
        _CASCADE,
        "        facts = q.facts_ok and not self.earlier_turns_change(q)",
        "        facts = q.facts_ok",
    ),
    (
        "an assistant message may say anything after a greeting",
        _FOLLOWUP,
        "                if not only_pleasantries(text, COURTESIES):",
        "                if False:",
    ),
    (
        "an earlier answer may say more than its fact",
        _FOLLOWUP,
        '    return all(w in known or w.rstrip("s") in known for w in rest)',
        "    return True",
    ),
    (
        "a name of several senses after a fact is served",
        _FOLLOWUP,
        "        name = several_senses(last)",
        '        name = ""',
    ),
    (
        "an assistant message that answers nothing is read",
        _FOLLOWUP,
        "            if expected is None:\n                return",
        "            if False:\n                return",
    ),
    (
        "any number of earlier turns is read",
        _FOLLOWUP,
        '    if sum(role == "user" for role, _ in turns) > MAX_EARLIER_TURNS:',
        "    if False:",
    ),
    (
        "an opener before no question stands alone",
        _FOLLOWUP,
        "    if words[0] in OPENERS and (len(words) < 2 or words[1] not in QUESTION_WORDS):",
        "    if False:",
    ),
    # item 4: look-alikes
    (
        "two words one slip apart are one word",
        _SPELLING,
        "    return not (is_word(wa) and is_word(wb)) and not (is_name(wa) and is_name(wb))",
        "    return True",
    ),
    (
        "British and American spellings are two words",
        _SPELLING,
        "    if variants(wa, wb):\n        return True\n",
        "",
    ),
    (
        "a word is a clipping of a longer one",
        _SPELLING,
        "    return not is_word(short) and not is_name(short)",
        "    return True",
    ),
    (
        "a name is a clipping of a longer name",
        "eoc/stages/guard/frame.py",
        "    return _stem(long) in when_words()[1] or not (is_word(short) or is_name(short))",
        "    return True",
    ),
    (
        "a word is repaired into a stored neighbour",
        "eoc/stages/repair.py",
        "        if is_word(word) or (written and written[:1].isupper() and is_name(word)):",
        "        if False:",
    ),
    (
        "two words that trade places are the same question",
        "eoc/stages/guard/roles.py",
        "    swap = traded_words(q.keys, s.keys)",
        "    swap = None",
    ),
    (
        "two sides of a linking word that trade places are the same question",
        "eoc/stages/guard/roles.py",
        "    around = traded_around(q.keys, s.keys)",
        "    around = None",
    ),
    (
        "two names that trade places are the same question",
        "eoc/stages/guard/roles.py",
        "    names = _swapped_names(q, s)",
        "    names = None",
    ),
    (
        "am and pm are not read",
        "eoc/stages/guard/analysis.py",
        "        clock = clock_times(text)",
        "        clock: frozenset[str] = frozenset()",
    ),
    (
        "over and under are no opposites",
        "eoc/stages/data/polarity.tsv",
        "bound\tover|above|upwards of|in excess of\tunder|below|beneath|underneath\n",
        "",
    ),
    (
        "two runs of words that trade places are the same question",
        "eoc/stages/guard/roles.py",
        "    blocks = traded_blocks(q.keys, s.keys)",
        "    blocks = None",
    ),
    (
        "a word left out inside a kept phrase is a question in fewer words",
        "eoc/stages/guard/frame.py",
        "            if 0 < i < len(seq) - 1 and (seq[i - 1], seq[i + 1]) in follows:",
        "            if False:",
    ),
    (
        "a name in the plural is the name",
        "eoc/stages/guard/frame.py",
        "        if _stem(word) in a.content and (_stem(word) in when_words()[0] or word in a.content):",
        "        if _stem(word) in a.content:",
    ),
    # item 6: levers
    (
        "a cut answer is served to a paraphrase",
        _KV,
        "            if candidate.origin and not finished(candidate.meta):\n                return None",
        "            if False:\n                return None",
    ),
    (
        "a model answer is not named by its receipt",
        _CASCADE,
        "                    receipt=receipt.digest,",
        "                    receipt=None,",
    ),
    (
        "a replay's receipt names nothing",
        _CASCADE,
        "            self._remember_replay(receipt.digest, made)",
        "            pass",
    ),
    (
        "forgetting an answer forgets every answer",
        "eoc/store/forget.py",
        "                if gen is None or gen.receipt is None or not gen.receipt.startswith(named):",
        "                if False:",
    ),
    (
        "a response id does not name its answer",
        "native/eoc_native/serve/wire.py",
        "    return id_naming(unique, made_receipt)",
        "    return unique",
    ),
    (
        "a streamed response's id names nothing",
        "native/eoc_native/serve/app.py",
        "        self._name_stream(chunks.id, response)\n",
        "",
    ),
    (
        "eoc store forget drops the receipt",
        "eoc/cli/forget.py",
        "answer=named)  # before opening",
        "answer=None)  # before opening",
    ),
    (
        "the reuse policy is not applied",
        _CASCADE,
        "            if answer is not None and answer.origin and not _reuses(policy, kind):",
        "            if False:",
    ),
    (
        "a store that never reuses keeps model answers",
        _CASCADE,
        '        if not q.cacheable or (origin and self.reuse == "never"):',
        "        if not q.cacheable:",
    ),
    (
        "a store that reuses exactly offers answers to kv",
        _CASCADE,
        '            and self.reuse == "paraphrase"\n',
        "",
    ),
    (
        "the x-eoc-reuse header is not read",
        "native/eoc_native/serve/app.py",
        "            reuse = _reuse_of(scope)",
        "            reuse = None",
    ),
    (
        "a replica's forget of kv pairs is not announced",
        "native/eoc_native/store/postgres.py",
        '            self.store.announce_forget("kv", _dropping(self._stage, {*gone, *served}))\n',
        "",
    ),
    (
        "a replica's forget of cached answers is not announced",
        "native/eoc_native/store/postgres.py",
        '            self.store.announce_forget("cache", _dropping(self._stage, set(gone)))\n',
        "",
    ),
]

_PG = "tests/native/test_store_postgres.py::test_a_thumbs_down_on_one_replica_forgets_the_answer_on_every_replica"

FOCUS: dict[str, list[str]] = {
    "the kv's fold folds every script's case (ß is ss)": [_DECISIVE],
    "the kv's fold drops a trailing !": [_DECISIVE],
    "the kv's fold reads compatibility forms (² is 2)": [_DECISIVE],
    "the exact path serves whatever its key finds": [_DECISIVE],
    "superscripts and fractions are no symbols": [_DECISIVE],
    "a plain key opening with a bracket reads as a partition's": [_DECISIVE],
    "a store keyed by an older fold keeps its keys": [_DECISIVE],
    "the upstream's finish reason is dropped": [_SERVE],
    "a streamed finish reason is dropped": [_SERVE],
    "the page's upstream finish reason is dropped": ["tests/test_browser_remote.py"],
    "an answer that may have been cut is said to have stopped": ["tests/test_partitions.py"],
    "a fact's tokens are guessed at 4 characters each": ["tests/test_followups.py"],
    "the model's tokenizer is not asked": ["tests/test_followups.py"],
    "earlier turns are not read": [_CONTEXT],
    "an assistant message may say anything after a greeting": [_CONTEXT],
    "an earlier answer may say more than its fact": [_CONTEXT],
    "a name of several senses after a fact is served": [_CONTEXT],
    "an assistant message that answers nothing is read": [_CONTEXT],
    "any number of earlier turns is read": [_CONTEXT],
    "an opener before no question stands alone": [_CONTEXT],
    "two words one slip apart are one word": [_NEAR],
    "British and American spellings are two words": [_NEAR],
    "a word is a clipping of a longer one": [_NEAR],
    "a name is a clipping of a longer name": [_NEAR],
    "a word is repaired into a stored neighbour": [_NEAR],
    "two words that trade places are the same question": [_NEAR],
    "two sides of a linking word that trade places are the same question": [_NEAR],
    "two names that trade places are the same question": [_NEAR],
    "am and pm are not read": [_NEAR],
    "over and under are no opposites": [_NEAR],
    "two runs of words that trade places are the same question": [_NEAR],
    "a word left out inside a kept phrase is a question in fewer words": [_NEAR],
    "a name in the plural is the name": [_NEAR],
    "a cut answer is served to a paraphrase": [_REUSE],
    "a model answer is not named by its receipt": [_REUSE],
    "a replay's receipt names nothing": [_REUSE],
    "forgetting an answer forgets every answer": [_REUSE],
    "a response id does not name its answer": [_SERVE],
    "a streamed response's id names nothing": [_SERVE],
    "eoc store forget drops the receipt": [_REUSE],
    "the reuse policy is not applied": [_REUSE],
    "a store that never reuses keeps model answers": [_REUSE],
    "a store that reuses exactly offers answers to kv": [_REUSE],
    "the x-eoc-reuse header is not read": [_SERVE],
    "a replica's forget of kv pairs is not announced": [_PG],
    "a replica's forget of cached answers is not announced": [_PG],
}
