"""Run an ASGI app under uvicorn on 127.0.0.1 for a test (a real server on a real socket)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

START_TIMEOUT_S = 20.0


@contextlib.contextmanager
def serving(app: Any) -> Iterator[str]:
    """Serve ``app`` on a free port of 127.0.0.1 in a thread; yields ``http://127.0.0.1:PORT``."""
    uvicorn = pytest.importorskip("uvicorn")
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
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
