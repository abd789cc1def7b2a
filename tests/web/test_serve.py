"""The demo's file server on its own: a real server on 127.0.0.1, plain HTTP, no browser."""

from __future__ import annotations

import http.client
import os
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

WEB = str(Path(__file__).resolve().parents[2] / "web")
if WEB not in sys.path:
    sys.path.insert(0, WEB)
from serve import make_server  # noqa: E402

Reply = tuple[int, dict[str, str], bytes]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A site folder with files, folders and symlinks in and out of it; (port, folder)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret", encoding="utf-8")
    (outside / "index.html").write_text("secret index", encoding="utf-8")
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<p>hi</p>", encoding="utf-8")
    (site / "app.mjs").write_text("export {}", encoding="utf-8")
    (site / "mod.wasm").write_bytes(b"\x00asm\x01\x00\x00\x00")
    (site / "bare").mkdir()
    (site / "bare" / "a.txt").write_text("a", encoding="utf-8")
    (site / "sub").mkdir()
    (site / "sub" / "index.html").write_text("sub", encoding="utf-8")
    (site / "link_out.txt").symlink_to(outside / "secret.txt")
    (site / "dir_out").symlink_to(outside, target_is_directory=True)
    (site / "link_in.js").symlink_to(site / "app.mjs")
    (site / "index_out").mkdir()
    (site / "index_out" / "index.html").symlink_to(outside / "index.html")
    server = make_server(site, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], site
    server.shutdown()
    server.server_close()
    thread.join(5)


def _get(port: int, path: str, method: str = "GET") -> Reply:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request(method, path)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def _raw(port: int, request: bytes) -> bytes:
    """Send bytes http.client refuses to send (a raw NUL) and read the reply to its end."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(request)
        parts = []
        while chunk := s.recv(65536):
            parts.append(chunk)
    return b"".join(parts)


@pytest.mark.parametrize(
    "path,kind",
    [
        ("/", "text/html; charset=utf-8"),
        ("/index.html", "text/html; charset=utf-8"),
        ("/app.mjs", "text/javascript"),
        ("/mod.wasm", "application/wasm"),
        ("/link_in.js?v=1", "text/javascript"),  # a symlink that stays inside is served
        ("/sub/", "text/html; charset=utf-8"),
    ],
)
def test_files_are_served_with_their_type_and_isolation_headers(
    served: tuple[int, Path], path: str, kind: str
) -> None:
    status, headers, body = _get(served[0], path)
    assert status == 200 and headers["content-type"] == kind
    assert headers["cross-origin-opener-policy"] == "same-origin"
    assert headers["cross-origin-embedder-policy"] == "require-corp"
    assert int(headers["content-length"]) == len(body) > 0


def test_head_sends_headers_only(served: tuple[int, Path]) -> None:
    status, headers, body = _get(served[0], "/mod.wasm", "HEAD")
    assert status == 200 and headers["content-type"] == "application/wasm" and body == b""


@pytest.mark.parametrize(
    "path", ["/link_out.txt", "/dir_out/secret.txt", "/dir_out/", "/index_out/", "/index_out"]
)
def test_a_symlink_out_of_the_folder_is_not_followed(served: tuple[int, Path], path: str) -> None:
    status, _, body = _get(served[0], path)
    assert status == 404 and b"secret" not in body


@pytest.mark.parametrize("path", ["/../outside/secret.txt", "/%2e%2e/outside/secret.txt"])
def test_dot_dot_does_not_leave_the_folder(served: tuple[int, Path], path: str) -> None:
    status, _, body = _get(served[0], path)
    assert status == 404 and b"secret" not in body


@pytest.mark.parametrize("path", ["/bare/", "/bare"])
def test_a_folder_without_an_index_is_not_listed(served: tuple[int, Path], path: str) -> None:
    status, _, body = _get(served[0], path)
    assert status == 404 and b"a.txt" not in body


def test_a_folder_with_an_index_asked_without_its_slash_redirects(
    served: tuple[int, Path],
) -> None:
    status, headers, _ = _get(served[0], "/sub?x=1")
    assert status == 301 and headers["location"] == "/sub/?x=1"


@pytest.mark.parametrize("path", ["/%00", "/index.html%00.txt", "/sub/%00/"])
def test_an_encoded_nul_is_a_400_with_a_body(served: tuple[int, Path], path: str) -> None:
    status, _, body = _get(served[0], path)
    assert status == 400 and b"NUL" in body


@pytest.mark.parametrize("target", [b"/\x00", b"/index.html\x00", b"/\x00/x"])
def test_a_raw_nul_is_a_400_not_a_dropped_connection(
    served: tuple[int, Path], target: bytes
) -> None:
    reply = _raw(served[0], b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0].split(b" ")[1] == b"400" and b"NUL" in body


@pytest.mark.parametrize("path", ["/%ED%A0%80", "/%ff%fe", "/" + "a" * 300])
def test_a_path_no_file_can_have_is_a_404_not_a_dropped_connection(
    served: tuple[int, Path], path: str
) -> None:
    assert _get(served[0], path)[0] == 404


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_not_opened(served: tuple[int, Path]) -> None:
    port, site = served
    os.mkfifo(site / "pipe.js")
    assert _get(port, "/pipe.js")[0] == 404  # opening it would block the request forever


def test_make_demo_on_a_port_in_use_says_so_and_names_another(tmp_path: Path) -> None:
    import subprocess

    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<p>hi</p>", encoding="utf-8")
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    try:
        done = subprocess.run(
            [
                sys.executable,
                os.path.join(WEB, "serve.py"),
                "--port",
                str(port),
                "--dir",
                str(site),
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
    finally:
        busy.close()
    assert done.returncode == 1
    assert f"port {port} on 127.0.0.1 is already in use" in done.stderr
    assert f"make demo PORT={port + 1}" in done.stderr


def test_the_served_folder_is_named_relative_to_the_checkout(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from serve import shown

    monkeypatch.chdir(tmp_path)
    assert shown(tmp_path / "web" / "dist") == os.path.join("web", "dist")
    assert shown(Path("/elsewhere/dist")) == "/elsewhere/dist"


def test_isolation_headers_are_sent_unless_turned_off(tmp_path: Path) -> None:
    """The page's model runs on several threads only in a cross-origin isolated page."""
    (tmp_path / "index.html").write_text("<p>hi</p>", encoding="utf-8")
    for isolation, want in ((True, ("same-origin", "require-corp")), (False, (None, None))):
        server = make_server(tmp_path, port=0, isolation=isolation)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            status, headers, _ = _get(server.server_address[1], "/")
        finally:
            server.shutdown()
            server.server_close()
            thread.join(5)
        assert status == 200
        got = (
            headers.get("cross-origin-opener-policy"),
            headers.get("cross-origin-embedder-policy"),
        )
        assert got == want, isolation
