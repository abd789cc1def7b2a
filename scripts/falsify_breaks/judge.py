"""Falsify breaks: issue 36, the kv's judge of meaning. A decisive difference is never sent to
the judge, the energy rule runs it only where the expected saving exceeds its joules, a judged
answer carries the judge's joules, and a judged pair is not judged again
(tests/test_judging.py, ``FOCUS``)."""

_KV = "eoc/stages/kv.py"
_JUDGING = "eoc/stages/judging.py"
_CASCADE = "eoc/cascade.py"
_STUDENT = "native/eoc_native/judge/student.py"
_T = "tests/test_judging.py"
_DECISIVE = f"{_T}::test_a_decisive_difference_is_never_sent_to_the_judge"
_RULE = f"{_T}::test_the_energy_rule"
_CASCADE_RULE = f"{_T}::test_the_cascade_weighs_the_judge_against_what_the_model_would_spend"

BREAKS: list[tuple[str, str, str, str]] = [
    (
        "a decisive difference is sent to the judge",
        _KV,
        "            if reason and not judgeable(reason):\n",
        "            if False:\n",
    ),
    (
        "every refusal of the guard is judgeable",
        "eoc/stages/guard/case.py",
        "    return isinstance(reason, Wording) and bool(reason)\n",
        "    return bool(reason)\n",
    ),
    (
        "the energy rule runs the judge whatever it costs",
        _JUDGING,
        "    return d(expected > judge_uj, said)\n",
        "    return d(True, said)\n",
    ),
    (
        "the energy rule runs the judge with nothing to save",
        _JUDGING,
        '        return d(False, "no figure for what the model would spend: nothing to save")\n',
        '        return d(True, "no figure for what the model would spend: nothing to save")\n',
    ),
    (
        "the cascade does not tell the kv's judge what the model would spend",
        _CASCADE,
        "            wiring.judged.saving = self._saving\n",
        "            pass\n",
    ),
    (
        "a judged answer is not charged the judge's joules",
        _KV,
        "            spent = 0 if verdict.cost is None else verdict.cost.uj\n",
        "            spent = 0\n",
    ),
    (
        "a judged pair is judged again",
        _JUDGING,
        "        known = self.remembered(pair)\n",
        "        known = None\n",
    ),
    (
        "the student serves below its own threshold",
        _STUDENT,
        "            raise ConfigError(\n                f\"the student's refuse_at",
        "            print(\n                f\"the student's refuse_at",
    ),
    (
        "a name in place of another is sent to the judge",
        "eoc/stages/guard/decisive.py",
        "    if lacking[0] and lacking[1]:  # a name in place of another: Niger / Nigeria\n",
        "    if False:  # a name in place of another: Niger / Nigeria\n",
    ),
    (
        "another time is sent to the judge",
        "eoc/stages/guard/decisive.py",
        "        if q.when and s.when:\n",
        "        if False:\n",
    ),
    (
        "a difference only meaning tells apart hides a decisive one",
        "eoc/stages/guard/rules.py",
        "        if reason and not judgeable(reason):\n            return reason, rule.name",
        "        if False:\n            return reason, rule.name",
    ),
    (
        "EOC_JUDGE=on without a judge model runs the student alone",
        "native/eoc_native/judge/__init__.py",
        '    if mode == "on" and not judge_installed():',
        "    if False:",
    ),
    (
        "EOC_JUDGE=on without a judge model falls back to the hashed embedder",
        "eoc/assemble.py",
        "            except ConfigError:  # a setting that asks for what is not there (EOC_JUDGE=on\n"
        "                raise  #",
        "            except ConfigError as exc:  # a setting that asks for what is not there (EOC_JUDGE=on\n"
        "                reason = exc.reason  #",
    ),
    (
        "eoc's runner reads the judge's shared prompt again for every pair",
        "native/eoc_native/judge/model.py",
        "        kept += 1\n    return kept",
        "        kept += 0\n    return kept",
    ),
    (
        "eoc's runner keeps cached tokens the next prompt does not share",
        "native/eoc_native/judge/model.py",
        "        self._model.rewind(min(kept, self._model.pos))\n",
        "        self._model.rewind(self._model.pos)\n",
    ),
    (
        "the judge on llama.cpp ignores EOC_THREADS",
        "native/eoc_native/judge/model.py",
        '    if requested is None and not os.environ.get(ENV, "").strip():\n        return min(4, cores())',
        "    if requested is None:\n        return min(4, cores())",
    ),
    (
        "the judge's mix does not read the judge",
        _STUDENT,
        "        x = [math.log(p / (1 - p)), *features(query, stored, reason=reason, cosine=cosine)]\n",
        "        x = [0.0, *features(query, stored, reason=reason, cosine=cosine)]\n",
    ),
    (
        "the judge says it cannot serve where a student serves alone",
        _JUDGING,
        "        if self.student is not None and self.student.serve_at < 1.0:",
        "        if False:",
    ),
    (
        "the judge says it cannot serve a question whose verdict served",
        _JUDGING,
        "            if asked in self._served_for:",
        "            if False:",
    ),
    (
        "a verdict overwritten by a refusal still counts as served",
        _JUDGING,
        "            if before is not None and before.same:",
        "            if False:",
    ),
    (
        "a judge with no judge model asks for its joules",
        _JUDGING,
        '        if self.mode != "auto" or self.judge is None:',
        '        if self.mode != "auto":',
    ),
    (
        "the saving bound forgets the longest stored answer",
        _KV,
        "        self._longest = max(self._longest, len(entry.payload))",
        "        self._longest = 0",
    ),
    (
        "the saving bound forgets the dearest recorded making",
        _KV,
        "            self._most_made = max(self._most_made, made.uj)",
        "            self._most_made = 0",
    ),
    (
        "the saving bound forgets the ledger's records",
        "eoc/ledger.py",
        "            self.most_uj = max(self.most_uj, cost.uj)",
        "            self.most_uj = 0",
    ),
    (
        "the saving bound keeps the first answer length it was asked for",
        _CASCADE,
        "            if len(answer) != longest:",
        "            if not answer:",
    ),
    (
        "the saving bound forgets what the model would spend",
        _CASCADE,
        "            found = self._would_cost(q, answer)",
        "            found = None",
    ),
    (
        "the kv embeds for a judge no stored answer could pay for",
        _KV,
        "        judged = not self._unjudged() and not self._judge_moot(query)",
        "        judged = not self._unjudged()",
    ),
    (
        "the kv asks a judge that could serve nothing after a miss",
        _KV,
        "            if not judged:\n                return None",
        "            if self.judging is None:\n                return None",
    ),
]

_MOOT = f"{_T}::test_the_judge_says_when_it_could_serve_nothing_whatever_it_is_shown"
_BOUND = f"{_T}::test_the_saving_bound_is_at_least_each_stored_answer_s_saving"

FOCUS: dict[str, list[str]] = {
    "the judge says it cannot serve where a student serves alone": [_MOOT],
    "the judge says it cannot serve a question whose verdict served": [_MOOT],
    "a verdict overwritten by a refusal still counts as served": [_MOOT],
    "a judge with no judge model asks for its joules": [_MOOT],
    "the saving bound forgets the longest stored answer": [_BOUND],
    "the saving bound forgets the dearest recorded making": [_BOUND],
    "the saving bound forgets the ledger's records": [_BOUND],
    "the saving bound forgets what the model would spend": [_BOUND],
    "the saving bound keeps the first answer length it was asked for": [_BOUND],
    "the kv embeds for a judge no stored answer could pay for": [
        f"{_T}::test_a_kv_does_not_embed_for_a_judge_no_stored_answer_could_pay_for"
    ],
    "the kv asks a judge that could serve nothing after a miss": [_CASCADE_RULE],
    "a decisive difference is sent to the judge": [_DECISIVE],
    "every refusal of the guard is judgeable": [_DECISIVE],
    "the energy rule runs the judge whatever it costs": [_RULE, _CASCADE_RULE],
    "the energy rule runs the judge with nothing to save": [_RULE],
    "the cascade does not tell the kv's judge what the model would spend": [_CASCADE_RULE],
    "a judged answer is not charged the judge's joules": [
        f"{_T}::test_a_rewording_goes_to_the_judge_and_its_answer_says_so"
    ],
    "a judged pair is judged again": [f"{_T}::test_a_judged_pair_is_not_judged_again"],
    "the student serves below its own threshold": [
        "tests/native/test_judge.py::test_the_shipped_student_and_its_checks"
    ],
    "a name in place of another is sent to the judge": [_DECISIVE],
    "another time is sent to the judge": [_DECISIVE],
    "a difference only meaning tells apart hides a decisive one": [_DECISIVE],
    "EOC_JUDGE=on without a judge model runs the student alone": [
        "tests/native/test_judge.py::"
        "test_on_without_a_judge_model_is_an_error_and_auto_keeps_the_student"
    ],
    "EOC_JUDGE=on without a judge model falls back to the hashed embedder": [
        "tests/native/test_judge.py::"
        "test_on_without_a_judge_model_is_an_error_and_auto_keeps_the_student"
    ],
    "eoc's runner reads the judge's shared prompt again for every pair": [
        "tests/native/test_judge.py::test_eoc_s_runner_reads_only_what_follows_the_shared_start"
    ],
    "eoc's runner keeps cached tokens the next prompt does not share": [
        "tests/native/test_judge.py::test_eoc_s_runner_reads_only_what_follows_the_shared_start"
    ],
    "the judge on llama.cpp ignores EOC_THREADS": [
        "tests/native/test_judge.py::test_llama_cpp_judges_on_the_threads_eoc_is_given"
    ],
    "the judge's mix does not read the judge": [
        "tests/native/test_judge.py::test_the_shipped_mix_and_its_checks"
    ],
}
