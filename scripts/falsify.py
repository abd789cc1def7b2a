"""Falsify the guards: break each refusal once on purpose and check that a test goes red.

    .venv/bin/python scripts/falsify.py     # about two minutes; restores every file it touches

Each entry is (what the break does, file, original text, broken text). A line saying
"still green" means the tests cannot see that break: add a test before trusting the guard.
"""

import pathlib
import subprocess
import sys

M = [
    (
        "marginal clamps to zero",
        "eoc/meter/marginal.py",
        "    if result <= 0:\n        raise NotMetering(",
        "    if result <= 0:\n        return 0.0\n        raise NotMetering(",
    ),
    (
        "idle window that did not advance accepted",
        "eoc/meter/marginal.py",
        "    if delta <= 0:\n        raise CounterFrozen(",
        "    if delta < 0:\n        raise CounterFrozen(",
    ),
    (
        "per-op rounds to 0",
        "eoc/meter/marginal.py",
        "    if figure < 1:\n        raise",
        "    if figure < 0:\n        raise",
    ),
    (
        "span records a zero",
        "eoc/meter/span.py",
        "    if delta <= 0:\n        raise CounterFrozen(",
        "    if delta < 0:\n        raise CounterFrozen(",
    ),
    ("measured zero cost allowed", "eoc/cost.py", "        if uj < 1:", "        if uj < 0:"),
    (
        "non-live counter treated as live",
        "eoc/cascade.py",
        "self.live = self.meter_status.is_live and not isinstance(meter, StubCounter)",
        "self.live = not isinstance(meter, StubCounter)",
    ),
    (
        "cheap tier keeps MEASURED",
        "eoc/cascade.py",
        '        if base.provenance is _MEASURED:\n            base = self._demote(base, "")',
        '        if False:\n            base = self._demote(base, "")',
    ),
    (
        "browser accepts a live counter",
        "eoc/cascade.py",
        "        if IN_PYODIDE and not isinstance(meter, StubCounter):",
        "        if False:",
    ),
    (
        "liveness ignores 4-of-5",
        "eoc/meter/liveness.py",
        "    elif advancing * rule.advancing_den < counted * rule.advancing_num:",
        "    elif False:",
    ),
    (
        "liveness counts held intervals",
        "eoc/meter/liveness.py",
        "        if dt <= 0 or dt > max_ns:\n            continue",
        "        if dt <= 0:\n            continue",
    ),
    (
        "no remainder carried",
        "eoc/calibration.py",
        "            uj, self._carry_nj = divmod(carry, 1000)",
        "            uj = carry // 1000",
    ),
    (
        "receipt omits payload",
        "eoc/receipt.py",
        "    return _sha256(_PREFIX + head + body).hexdigest()",
        "    return _sha256(_PREFIX + head).hexdigest()",
    ),
    (
        "calibration ignores 50x ratio",
        "eoc/calibration.py",
        "            if e1 - e0 >= target or t1 - t0 >= budget_ns:",
        "            if True:",
    ),
    (
        "calibration ignores budget",
        "eoc/calibration.py",
        "            if e1 - e0 >= target or t1 - t0 >= budget_ns:",
        "            if e1 - e0 >= target or n > 10**5:",
    ),
    (
        "kv guard off",
        "eoc/stages/kv.py",
        "            return candidate is not None and candidate.signature == sig",
        "            return candidate is not None",
    ),
    (
        "no prompt size limit",
        "eoc/query.py",
        "    if len(data) > MAX_PROMPT_BYTES:\n        raise",
        "    if False:\n        raise",
    ),
    (
        "estimated backend + span becomes measured",
        "eoc/cascade.py",
        "            max(own.uj, span),\n            _ESTIMATED,",
        "            max(own.uj, span),\n            _MEASURED,",
    ),
    (
        "window shorter than min accepted",
        "eoc/meter/span.py",
        "    if elapsed < counter.min_window_ns:",
        "    if False:",
    ),
    (
        "bracket opens before the misses",
        "eoc/cascade.py",
        "        live = self.live\n        for stage, kind, plain in self._plan:",
        "        live = self.live\n        if live:\n            self.meter.read_uj()\n        for stage, kind, plain in self._plan:",
    ),
    (
        "verify ignores outer fields",
        "eoc/cli/main.py",
        "            if value != getattr(receipt, name):",
        "            if False:",
    ),
    (
        "cache ignores byte bound",
        "eoc/stages/cache.py",
        "            while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:",
        "            while len(self._entries) > self.max_entries:",
    ),
    (
        "rapl wrap not corrected",
        "native/counters/rapl.py",
        "                    delta += zone.max_range_uj  # one wrap",
        "                    pass",
    ),
    (
        "rapl second-wrap window accepted",
        "native/counters/rapl.py",
        "                if zone.max_range_uj and elapsed_s * zone.max_power_w * 1e6 >= zone.max_range_uj:",
        "                if False:",
    ),
    (
        "ioreport frozen CPU rail accepted",
        "native/counters/ioreport.py",
        "            if not cpu or not any(cpu.values()):",
        "            if False:",
    ),
    (
        "nvml counter faster than the board accepted",
        "native/counters/nvml.py",
        "            if watts > self.power_limit_w * RATE_SLACK:",
        "            if False:",
    ),
    (
        "telemetry handed to the cascade",
        "eoc/cascade.py",
        '        if getattr(meter, "telemetry_only", False):',
        "        if False:",
    ),
    (
        "unmeasured candidate does not void the comparison",
        "native/autotune/tune.py",
        "    if unmeasured:",
        "    if False:",
    ),
    (
        "profile written although not measured",
        "native/autotune/profile.py",
        "        if not self.measured or self.provenance is None:",
        "        if self.provenance is None:",
    ),
    (
        "profile not demoted when its counter is not live",
        "native/autotune/profile.py",
        "    if not status.is_live:",
        "    if False:",
    ),
    (
        "zero-joule profile entry allowed",
        "native/autotune/profile.py",
        "                or v <= 0",
        "                or v < 0",
    ),
    (
        "noise-level marginal accepted",
        "native/autotune/tune.py",
        "min_fraction=NOISE_FRACTION)",
        "min_fraction=0.0)",
    ),
    (
        "guard ignores numbers",
        "eoc/stages/guard.py",
        "        elif q_num != s_num or set(q_wh) != set(s_wh):",
        "        elif set(q_wh) != set(s_wh):",
    ),
    (
        "guard ignores answer-type words",
        "eoc/stages/guard.py",
        "        elif q_num != s_num or set(q_wh) != set(s_wh):",
        "        elif q_num != s_num:",
    ),
    (
        "guard ignores content coverage",
        "eoc/stages/guard.py",
        "        if not set(_content(stored)) <= set(_content(query)):",
        "        if False:",
    ),
    (
        "guard ignores swapped sides",
        "eoc/stages/guard.py",
        "        return not swapped & _directions(query)",
        "        return True",
    ),
    (
        "kv write not persisted",
        "eoc/persist.py",
        "        key = self.checked_key(prompt, payload)  # nothing reaches the file unless it is valid\n        vec = embedding if embedding is not None else self.embedder.embed(prompt)\n        self.db.write(",
        "        key = self.checked_key(prompt, payload)  # nothing reaches the file unless it is valid\n        vec = embedding if embedding is not None else self.embedder.embed(prompt)\n        (lambda *a: None)(",
    ),
    (
        "cache evictions not persisted",
        "eoc/persist.py",
        '                c.executemany("DELETE FROM cache WHERE qid = ?", [(q,) for q in evicted])',
        "                pass",
    ),
    (
        "two-tier search stops at the fast tier",
        "eoc/stages/index.py",
        "            if len(hits) >= limit:\n                return hits",
        "            return hits",
    ),
]
results = []
for name, path, old, new in M:
    p = pathlib.Path(path)
    src = p.read_text()
    if old not in src:
        results.append((name, "PATTERN MISSING"))
        continue
    p.write_text(src.replace(old, new, 1))
    try:
        r = subprocess.run(
            [".venv/bin/python", "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"],
            capture_output=True,
            text=True,
        )
        failed = [line for line in r.stdout.splitlines() if line.startswith("FAILED")]
        results.append(
            (name, "RED " + (failed[0][7:90] if failed else "") if r.returncode else "still green")
        )
    finally:
        p.write_text(src)
for n, r in results:
    print(f"{n:45s} {r}")
sys.exit(any(r == "still green" or r == "PATTERN MISSING" for _, r in results))
