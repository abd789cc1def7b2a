"""Falsify breaks: the savings ledger (eoc/ledger.py) and where it is shown."""

BREAKS: list[tuple[str, str, str, str]] = [
    (
        "avoided work is labelled measured",
        "eoc/ledger.py",
        '    MEASURED_WHEN_MADE = "measured-when-made"',
        '    MEASURED_WHEN_MADE = "measured"',
    ),
    (
        "a replay of an estimate is labelled measured-when-made",
        "eoc/ledger.py",
        "        when_made = made.provenance is Provenance.MEASURED",
        "        when_made = made.counter is not None",
    ),
    (
        "a neural answer avoided itself",
        "eoc/ledger.py",
        "    if stage is Stage.NEURAL:\n        return None\n    if made is not None:",
        "    if made is not None:",
    ),
    (
        "the avoided net ignores the answer's own cost",
        "eoc/ledger.py",
        "            made.uj - cost.uj,",
        "            made.uj,",
    ),
    (
        "an avoided figure of 0 is allowed",
        "eoc/ledger.py",
        "        if isinstance(uj, bool) or not isinstance(uj, int) or uj < 1:\n"
        '            raise ConfigError(f"an avoided figure',
        "        if isinstance(uj, bool) or not isinstance(uj, int) or uj < 0:\n"
        '            raise ConfigError(f"an avoided figure',
    ),
    (
        "the made ledger ignores which model made an answer",
        "eoc/ledger.py",
        '        return hashlib.sha256(f"{origin}\\0{payload}".encode()).digest()',
        "        return hashlib.sha256(payload.encode()).digest()",
    ),
    (
        "a replay forgets what this process recorded it cost when made",
        "eoc/cascade.py",
        '        return self.made.cost_of(answer.origin, answer.payload), ""',
        '        return None, ""',
    ),
    (
        "what a model answer cost is never recorded",
        "eoc/cascade.py",
        '            if stored in ("yes", PENDING):  # what a replay of it will have avoided',
        "            if False:",
    ),
    (
        "no model configured still gets an avoided estimate",
        "eoc/stages/neural.py",
        '        if not getattr(self.backend, "runs_model", True):\n            return None\n'
        "        if self._flat:\n            return self.figure\n        return work_estimate(",
        "        if self._flat:\n            return self.figure\n        return work_estimate(",
    ),
    (
        "the avoided header says 0 when there is no figure",
        "eoc/response.py",
        "        if self.avoided is not None:\n"
        '            out.append(("x-eoc-avoided-microjoules", str(self.avoided.uj)))',
        '        out.append(("x-eoc-avoided-microjoules", str(self.avoided.uj if self.avoided else 0)))\n'
        "        if self.avoided is not None:",
    ),
    (
        "eoc verify takes avoided work said to be measured",
        "eoc/answerdoc.py",
        '    if avoided["provenance"] not in AVOIDED_PROVENANCES:',
        "    if False:",
    ),
    (
        "eoc verify takes a neural answer that avoided the model",
        "eoc/answerdoc.py",
        '    if stage == "neural":\n        raise BadReceipt("a neural answer avoided nothing',
        '    if False:\n        raise BadReceipt("a neural answer avoided nothing',
    ),
    (
        "eoc query prints 0 for no avoided figure",
        "eoc/cli/query.py",
        "    if a is None:\n        return NO_AVOIDED_FIGURE",
        '    if a is None:\n        return "0 µJ"',
    ),
    (
        "eoc bench run totals no avoided figure as 0 J",
        "eoc/cli/benchrun.py",
        '            "j": sum(r.avoided_uj or 0 for r in figured) / 1e6 if figured else None,',
        '            "j": sum(r.avoided_uj or 0 for r in figured) / 1e6,',
    ),
    (
        "metrics count every avoided figure as estimated",
        "native/eoc_native/serve/metrics.py",
        "                self.avoided_uj[(stage, avoided.provenance.value)] += avoided.uj",
        '                self.avoided_uj[(stage, "estimated")] += avoided.uj',
    ),
    (
        "metrics add an answer without an avoided figure as 0 J",
        "native/eoc_native/serve/metrics.py",
        "            if avoided is None:\n                self.without_avoided[stage] += 1",
        '            if avoided is None:\n                self.avoided_uj[(stage, "estimated")] += 0',
    ),
    (
        "a replay ignores the cost recorded with its entry",
        "eoc/cascade.py",
        "        if isinstance(made, MadeCost):\n            live = self.live",
        "        if False:\n            live = self.live",
    ),
    (
        "what a model answer cost is not stored with its entry",
        "eoc/cascade.py",
        "                    made=made if made is not None else answer.generation.made,",
        "                    made=answer.generation.made,",
    ),
    (
        "a recorded measurement counts as measured on any host",
        "eoc/ledger.py",
        "    if not made.host or made.host != host:",
        "    if False:",
    ),
    (
        "a recorded measurement counts as measured without its counter live",
        "eoc/ledger.py",
        "    elif counter is None or counter != made.counter:",
        "    elif False:",
    ),
    (
        "a recorded estimate is replayed as measured",
        "eoc/ledger.py",
        "    if made.provenance != Provenance.MEASURED.value:",
        '    if made.provenance not in ("measured", "estimated"):',
    ),
    (
        "a negative, zero or huge made cost is read",
        "eoc/store/entry.py",
        "    if type(uj) is not int or not 1 <= uj <= MAX_MADE_UJ:",
        "    if type(uj) is not int:",
    ),
    (
        "a non-integer made cost is read",
        "eoc/store/entry.py",
        "    if type(uj) is not int or not 1 <= uj <= MAX_MADE_UJ:",
        "    if isinstance(uj, str) or not 1 <= uj <= MAX_MADE_UJ:",
    ),
    (
        "a made cost's provenance may be any word",
        "eoc/store/entry.py",
        '    if prov not in ("measured", "estimated"):',
        "    if not isinstance(prov, str):",
    ),
    (
        "a measured made cost need not name its counter",
        "eoc/store/entry.py",
        '    if prov == "measured" and (value.counter is None or kind not in _METERING):',
        "    if False:",
    ),
    (
        "a made cost record may carry other fields",
        "eoc/store/entry.py",
        "    if not isinstance(doc, dict) or set(doc) != _MADE_KEYS:",
        "    if not isinstance(doc, dict) or not set(doc) >= _MADE_KEYS:",
    ),
    (
        "a made cost without a generation is read",
        "eoc/store/entry.py",
        '    if ("made" in doc or "receipt" in doc) and "finish" not in doc:',
        "    if False:",
    ),
]
