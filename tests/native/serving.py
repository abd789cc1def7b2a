"""Run an ASGI app under uvicorn on 127.0.0.1 for a test (a real server on a real socket)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

START_S = 90.0

START_TIMEOUT_S = 20.0


@contextlib.contextmanager
def serving(app: Any, *, keep_alive: int = 5, **guards: Any) -> Iterator[str]:
    """Serve ``app`` on a free port of 127.0.0.1 in a thread, with the connection guards
    ``eoc serve`` runs (``guards`` are :func:`guarded_protocol`'s); yields
    ``http://127.0.0.1:PORT``."""
    uvicorn = pytest.importorskip("uvicorn")
    from eoc_native.serve.connections import guarded_protocol

    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        log_level="warning",
        lifespan="on",
        http=guarded_protocol(**guards),
        timeout_keep_alive=keep_alive,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail("the test server did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


_HANDED: set[int] = set()  # ports _free_port gave out in this process


def _free_port() -> int:
    """A port of 127.0.0.1 free now and never given out before in this process: a server still
    loading has not bound the port it was given, and the kernel may hand it out again."""
    for _ in range(100):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port not in _HANDED:
            _HANDED.add(port)
            return port
    raise RuntimeError("no free port of 127.0.0.1 that was not given out before")


class EocServe:
    """``eoc serve ARGS`` in its own process (a process group, so kill() is a real SIGKILL)."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, model: str = "tiny") -> None:
        self.model = model
        env = {**os.environ, "EOC_EMBEDDER": "hashed", **(env or {})}
        for attempt in range(3):  # another process may take the port first: a new one then
            self.port = _free_port()
            self.base = f"http://127.0.0.1:{self.port}"
            self.log = tempfile.TemporaryFile()
            cmd = [sys.executable, "-m", "eoc", "serve", "--port", str(self.port), *args]
            self.proc = subprocess.Popen(
                cmd, stdout=self.log, stderr=self.log, env=env, start_new_session=True
            )
            if self._started() or attempt == 2 or "address already in use" not in self.output():
                break
            self.log.close()
        if self.proc.poll() is not None or not self._up():
            pytest.fail(f"eoc serve did not start:\n{self.output()}")

    def _up(self) -> bool:
        try:
            return httpx.get(self.base + "/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    def _started(self) -> bool:
        """Wait until it answers (True), exits or takes too long (False)."""
        deadline = time.monotonic() + START_S
        while not self._up():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                return False
            time.sleep(0.1)
        return True

    def output(self, whole: bool = False) -> str:
        """What the server wrote (its last 3,000 characters unless ``whole``)."""
        self.log.seek(0)
        text = self.log.read().decode(errors="replace")
        return text if whole else text[-3000:]

    def ask(self, text: str, timeout: float = 30) -> httpx.Response:
        doc = {"model": self.model, "messages": [{"role": "user", "content": text}]}
        return httpx.post(self.base + "/v1/chat/completions", json=doc, timeout=timeout)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()
