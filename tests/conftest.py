from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile

import pytest


def _session_folder(prefix: str) -> str:
    """A throwaway folder for this test session, removed when the session's process ends (a
    judge test alone assembles a 1 GB model in the cache: sessions must not pile them up)."""
    path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(functools.partial(shutil.rmtree, path, ignore_errors=True))
    return path


# The core tests exercise the core's embedder (the one the browser runs); tests of the semantic
# kv build it explicitly. Embedding caches go to a throwaway folder, never the user's.
os.environ.setdefault("EOC_EMBEDDER", "hashed")
if not os.environ.get("EOC_CACHE_DIR"):
    os.environ["EOC_CACHE_DIR"] = _session_folder("eoc-test-cache-")
# Likewise the default neural stage: the model's own tests (tests/native/test_llm*.py,
# test_model_backend.py) load it explicitly; elsewhere the default cascade says that no model is
# connected, as it does on a host without one, instead of spending seconds of CPU per answer.
os.environ.setdefault("EOC_MODEL", "none")
# `eoc query` remembers in a per-user store by default (eoc/cli/userstore.py): every test gets
# its own data folder (made only when a test's command opens it), never the user's, and no
# store named by the caller's environment
os.environ["XDG_DATA_HOME"] = os.path.join(_session_folder("eoc-test-data-"), "session")
os.environ.pop("EOC_STORE", None)
# the key that signs store rows (eoc/userkey.py): the session's own, never the user's
os.environ["EOC_KEY_FILE"] = os.path.join(_session_folder("eoc-test-key-"), "key")

from eoc import Cascade  # noqa: E402  (after the environment above is set)
from eoc.testing import FakeClock, FakeCounter  # noqa: E402
from tests.helpers import small_stages  # noqa: E402

_DATA_ROOT = os.path.dirname(os.environ["XDG_DATA_HOME"])
_TESTS_RUN = [0]


@pytest.fixture(autouse=True)
def _own_data_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's per-user store is its own: one test's remembered answers never answer
    another's questions."""
    _TESTS_RUN[0] += 1
    monkeypatch.setenv("XDG_DATA_HOME", os.path.join(_DATA_ROOT, str(_TESTS_RUN[0])))


@pytest.fixture
def stages() -> list:
    return small_stages()


@pytest.fixture
def plain(stages: list) -> Cascade:
    """A cascade on a host with no live counter."""
    return Cascade(stages)


@pytest.fixture
def clock() -> FakeClock:
    """Each call advances 5 ms, so a hit calibration ends on its 40 ms budget after 8 rounds."""
    return FakeClock(step_ns=5_000_000)


@pytest.fixture
def live_counter() -> FakeCounter:
    """A live counter that advances 10 µJ per read."""
    return FakeCounter(step_uj=10, name="fake-rapl")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """For scripts/falsify.py: the node id of the first test that failed, written to
    ``$EOC_FALSIFY_RED`` (so the next run of that break can run this test first)."""
    path = os.environ.get("EOC_FALSIFY_RED")
    if path and report.failed and not os.path.exists(path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(report.nodeid)
