"""eoc serve under abuse, over real sockets: slow headers, too many connections, long keep-alive,
a Host it does not answer to, duplicate JSON keys. Bounded in count and time."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("httptools")

from eoc import Cascade
from eoc.chat.request import ChatDefaults
from eoc_native.serve.app import ServeConfig, create_app
from tests.helpers import small_stages
from tests.native.serving import serving

MODEL = "tiny"


def app(**config: Any) -> Any:
    return create_app(Cascade(small_stages()), ServeConfig(MODEL, ChatDefaults(MODEL), **config))


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _open(url: str) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", _port(url)), timeout=5)
    return s


def _read_all(s: socket.socket, seconds: float = 5.0) -> bytes:
    s.settimeout(seconds)
    out = b""
    try:
        while chunk := s.recv(65536):
            out += chunk
    except TimeoutError:
        pass
    return out


@pytest.fixture
def guarded() -> Iterator[str]:
    with serving(app(), header_timeout_s=0.5, max_connections=20, max_requests=3) as url:
        yield url


def test_headers_that_do_not_arrive_in_time_get_a_408_and_the_connection_closes(
    guarded: str,
) -> None:
    s = _open(guarded)
    try:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never ends its headers
        time.sleep(0.2)
        s.sendall(b"X-Trickle: a\r\n")  # trickling does not extend the deadline
        reply = _read_all(s)
    finally:
        s.close()
    assert reply.startswith(b"HTTP/1.1 408 ") and b'"header_timeout"' in reply
    assert b"connection: close" in reply


def test_slowloris_sockets_never_keep_healthz_from_answering(guarded: str) -> None:
    """~1,000 sockets sending a byte every 2 s kept /healthz from answering for a minute. Here
    60 slow sockets against a cap of 20: the slowest are closed to make room, and a real
    request is answered at once, every time."""
    slow: list[socket.socket] = []
    try:
        for _ in range(60):
            s = _open(guarded)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0")
            slow.append(s)
        for _ in range(5):
            t0 = time.monotonic()
            r = httpx.get(guarded + "/healthz", timeout=5)
            assert r.status_code == 200 and time.monotonic() - t0 < 1.0
            for s in slow[:10]:
                try:
                    s.sendall(b".")
                except OSError:
                    pass  # closed by the server to make room: what should happen
        shed = 0
        for s in slow:
            s.setblocking(False)
            try:
                data = s.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                shed += 1
                continue
            shed += data.startswith(b"HTTP/1.1 408 ")
        assert shed >= 40  # over the cap, the slowest made room
    finally:
        for s in slow:
            s.close()


def test_a_full_server_refuses_a_new_connection_with_a_clear_503() -> None:
    with serving(app(), header_timeout_s=30, max_connections=3) as url:
        busy = [_open(url) for _ in range(3)]
        try:
            for s in busy:  # each mid-request, its headers whole: none is waiting for headers
                s.sendall(
                    b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    b"content-type: application/json\r\ncontent-length: 100\r\n\r\n"
                )
            time.sleep(0.2)
            extra = _open(url)
            reply = _read_all(extra, 3)
            extra.close()
            assert reply.startswith(b"HTTP/1.1 503 ") and b'"too_many_connections"' in reply
            assert b"retry-after: 1" in reply
        finally:
            for s in busy:
                s.close()


def test_one_connection_is_kept_alive_for_a_bounded_number_of_requests(guarded: str) -> None:
    with httpx.Client() as c:
        replies = [c.get(guarded + "/healthz") for _ in range(3)]
    assert [r.status_code for r in replies] == [200, 200, 200]
    assert "connection" not in replies[0].headers or replies[0].headers["connection"] != "close"
    assert replies[2].headers["connection"] == "close"  # the third of max_requests=3


def test_a_host_the_server_does_not_answer_to_is_refused() -> None:
    """A keyless local server was open to DNS rebinding: any Host was accepted."""
    with serving(app(allowed_hosts=("eoc.internal",))) as url:
        ok = [
            httpx.get(url + "/healthz", headers={"host": h})
            for h in ("127.0.0.1:1", "localhost:8080", "[::1]:80", "eoc.internal", "EOC.internal:1")
        ]
        assert [r.status_code for r in ok] == [200] * 5
        for path, method in (("/healthz", "GET"), ("/v1/chat/completions", "POST")):
            bad = httpx.request(
                method, url + path, headers={"host": "attacker.example:8080"}, json={}
            )
            assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_host"
            assert "--allow-host" in bad.json()["error"]["message"]


def test_eoc_serve_under_a_file_limit_keeps_answering_through_a_socket_flood(
    tmp_path: Any,
) -> None:
    """The real failure: with 256 file descriptors, 300 slow sockets used them all and nothing
    was answered. `eoc serve --max-connections 100` sheds the slowest and answers at once."""
    import os
    import resource
    import subprocess
    import sys

    from tests.native.serving import _free_port

    port = _free_port()
    env = {**os.environ, "EOC_MODEL": "none", "EOC_EMBEDDER": "hashed"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "eoc", "serve", "--port", str(port), "--max-connections", "100"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256)),
    )
    url = f"http://127.0.0.1:{port}"
    slow: list[socket.socket] = []
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "eoc serve did not start"
            time.sleep(0.1)
        for _ in range(300):
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=2)
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127")
                slow.append(s)
            except OSError:
                pass
        t0 = time.monotonic()
        r = httpx.get(url + "/healthz", timeout=5)
        assert r.status_code == 200 and time.monotonic() - t0 < 2.0
    finally:
        for s in slow:
            s.close()
        proc.terminate()
        proc.wait(10)
