"""Driving the demo page: one booted page, the requests it tried to make elsewhere, helpers."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
BOOT_TIMEOUT_MS = 60_000


class Session:
    """One booted page, the requests it tried to make elsewhere, and helpers."""

    def __init__(self, page, outside: list[str]) -> None:  # type: ignore[no-untyped-def]
        self.page = page
        self.outside = outside

    def ask(self, prompt: str, timeout_ms: int = 30_000) -> dict:
        """Type a prompt, press Enter, and return the newest answer card's data."""
        page = self.page
        done = "#answers > li:not(.pending)"  # a model's answer streams into a pending card first
        before = page.locator(done).count()
        page.fill("#prompt", prompt)
        page.press("#prompt", "Enter")
        page.wait_for_function(
            f"document.querySelectorAll('{done}').length > {before}", timeout=timeout_ms
        )
        card = page.locator(done).first
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


__all__ = ["ARTIFACTS", "BOOT_TIMEOUT_MS", "Session", "open_session"]
