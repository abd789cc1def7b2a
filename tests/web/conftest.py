"""End-to-end fixtures: web/dist served on 127.0.0.1, Debian's Chromium driven by Playwright.

Never `playwright install`: the browser is Debian's package (make chromium installs it), found at
$EOC_CHROMIUM or /usr/lib/chromium/chromium. Every request the page makes that is not to
127.0.0.1 is aborted and recorded in `outside`, so a test can assert there were none.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DIST = ROOT / "web" / "dist"

sys.path.insert(0, str(ROOT / "web"))
from chromium import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from serve import make_server  # noqa: E402

from tests.web.browser import Session, open_session  # noqa: E402


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"no Chromium at {CHROMIUM}: run `make chromium` (apt-get install chromium)")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def site() -> Iterator[str]:
    """The demo served from web/dist on a free port of 127.0.0.1."""
    if not (DIST / "index.html").is_file():
        pytest.fail("web/dist is not built: run `make web`")
    server = make_server(DIST, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def session(browser, site: str) -> Iterator[Session]:  # type: ignore[no-untyped-def]
    """The page with no model (``?llm=none``): the cheap tiers, the notice, the honesty checks.
    tests/web/test_page_model.py opens it with the model that runs in the page."""
    s = open_session(browser, f"{site}?llm=none")
    yield s
    s.page.close()
