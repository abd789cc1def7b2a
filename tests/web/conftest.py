"""End-to-end fixtures: web/dist served on 127.0.0.1, Debian's Chromium driven by Playwright.

Never `playwright install`: the browser is Debian's package (make chromium installs it), found at
$EOC_CHROMIUM or /usr/lib/chromium/chromium. Every request the page makes that is not to
127.0.0.1 is aborted and recorded in `outside`, so a test can assert there were none.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DIST = ROOT / "web" / "dist"
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = os.environ.get("EOC_CHROMIUM", "/usr/lib/chromium/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
BOOT_TIMEOUT_MS = 60_000

sys.path.insert(0, str(ROOT / "web"))
from serve import make_server  # noqa: E402


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


class Session:
    """One booted page, the requests it tried to make elsewhere, and helpers."""

    def __init__(self, page, outside: list[str]) -> None:  # type: ignore[no-untyped-def]
        self.page = page
        self.outside = outside

    def ask(self, prompt: str) -> dict:
        """Type a prompt, press Enter, and return the newest answer card's data."""
        page = self.page
        before = page.locator("#answers > li").count()
        page.fill("#prompt", prompt)
        page.press("#prompt", "Enter")
        page.wait_for_function(f"document.querySelectorAll('#answers > li').length > {before}")
        card = page.locator("#answers > li").first
        return {
            "stage": card.get_attribute("data-stage"),
            "error": card.get_attribute("data-error"),
            "json": card.get_attribute("data-json"),
            "payload": card.locator(".payload").inner_text(),
            "prov": card.locator(".prov").all_inner_texts(),
        }

    def python(self, code: str) -> object:
        """Run Python in the page's Pyodide, as any page script could; returns its JSON result."""
        return self.page.evaluate("code => JSON.parse(window.eoc.pyodide.runPython(code))", code)


def open_session(browser, site: str) -> Session:  # type: ignore[no-untyped-def]
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    outside: list[str] = []

    def route(route) -> None:  # type: ignore[no-untyped-def]
        url = route.request.url
        if url.startswith("http://127.0.0.1:"):
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    page.route("**/*", route)
    page.goto(site)
    page.wait_for_selector("body[data-state=ready]", timeout=BOOT_TIMEOUT_MS)
    return Session(page, outside)


@pytest.fixture(scope="module")
def session(browser, site: str) -> Iterator[Session]:  # type: ignore[no-untyped-def]
    s = open_session(browser, site)
    yield s
    s.page.close()
