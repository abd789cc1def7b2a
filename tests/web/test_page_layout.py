"""The demo page fits a phone: at 360, 390 and 430 px wide (and at a desktop's 1280) nothing is
wider than the screen, and every control is on it, whole, with answer cards (a receipt's
64-character digest, a long prompt) shown. A screenshot of each width is kept in
test-artifacts/."""

from __future__ import annotations

import pytest

from tests.web.browser import ARTIFACTS, BOOT_TIMEOUT_MS

CONTROLS = ["#prompt", "#ask-button", ".chip", "#llm-url", "#llm-button"]

# Every control's box, and how wide the document is against the window.
MEASURE = """sel => {
  const boxes = [];
  for (const s of sel) for (const el of document.querySelectorAll(s)) {
    const r = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    boxes.push({ sel: s, text: el.textContent.trim().slice(0, 30), left: r.left, right: r.right,
      width: r.width, height: r.height, hidden: style.visibility === "hidden" || style.display === "none" });
  }
  return { inner: window.innerWidth, scroll: document.documentElement.scrollWidth,
    body: document.body.scrollWidth, boxes };
}"""


@pytest.mark.parametrize("width", [360, 390, 430, 1280])
def test_every_control_is_on_the_screen_and_nothing_scrolls_sideways(
    browser,  # type: ignore[no-untyped-def]
    site: str,
    width: int,
) -> None:
    page = browser.new_page(viewport={"width": width, "height": 860})
    outside: list[str] = []

    def route(r) -> None:  # type: ignore[no-untyped-def]
        if r.request.url.startswith("http://127.0.0.1:"):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.goto(f"{site}?llm=none")
    page.wait_for_selector("body[data-state=ready]", timeout=BOOT_TIMEOUT_MS)
    for prompt in ("what is 2+2", "why is the sky blue " + "and why " * 30):
        before = page.locator("#answers > li").count()
        page.fill("#prompt", prompt)
        page.press("#prompt", "Enter")
        page.wait_for_function(f"document.querySelectorAll('#answers > li').length > {before}")
    assert page.locator("#answers .digest").first.inner_text().__len__() == 64
    seen = page.evaluate(MEASURE, CONTROLS)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"page-{width}px.png"), full_page=True)
    assert seen["scroll"] <= seen["inner"] and seen["body"] <= seen["inner"], seen
    assert len(seen["boxes"]) == 2 + 5 + 2  # every control was found
    for box in seen["boxes"]:
        assert not box["hidden"] and box["width"] > 0 and box["height"] > 0, box
        assert box["left"] >= 0 and box["right"] <= seen["inner"] + 0.5, box
    assert outside == []
    page.close()
