"""Open every page of the built docs site in Chromium, served from 127.0.0.1, and list each
request a page tried to make anywhere else (a script, a stylesheet, a font from a CDN): the
site must work on a machine with no network, as the demo page does.

    python scripts/site_offline.py [build/site]     # make docs runs it after the build

Exit 0 when no page asked for anything off its origin, 1 (listing them) otherwise, 2 when the
site or the browser is missing. Links a reader may follow elsewhere (``<a href>``) are not
requests and are not counted.
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "web"))

from chromium import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from serve import make_server  # noqa: E402


def page_paths(site: Path) -> list[str]:
    """The site's pages as paths under its root: each folder's index.html, and 404.html."""
    paths = []
    for index in sorted(site.rglob("index.html")):
        rel = index.parent.relative_to(site).as_posix()
        paths.append("" if rel == "." else f"{rel}/")
    if (site / "404.html").is_file():
        paths.append("404.html")
    return paths


def off_origin_requests(site: Path, browser=None) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    """Each page of ``site`` (a built folder with an index.html) that asked for something off
    127.0.0.1, with what it asked for (every such request is aborted, never sent). ``browser``:
    a Playwright browser to open the pages in (a test's); by default one is launched here."""
    if browser is None:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            own = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                return off_origin_requests(site, own)
            finally:
                own.close()
    server = make_server(site, port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    origin = f"http://127.0.0.1:{server.server_address[1]}/"
    found: dict[str, list[str]] = {}
    page = browser.new_page()
    current = [""]

    def route(r) -> None:  # type: ignore[no-untyped-def]
        url = r.request.url
        if url.startswith(origin) or url.startswith("data:"):
            r.continue_()
        else:
            found.setdefault(current[0], []).append(url)
            r.abort()

    try:
        page.route("**/*", route)
        for path in page_paths(site):
            current[0] = path or "/"
            page.goto(origin + path, wait_until="load", timeout=30_000)
    finally:
        page.close()
        server.shutdown()
        server.server_close()
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("site", nargs="?", type=Path, default=ROOT / "build" / "site")
    args = ap.parse_args(argv)
    if not (args.site / "index.html").is_file():
        print(f"site_offline: no built site at {args.site}: run make docs", file=sys.stderr)
        return 2
    if not Path(CHROMIUM).is_file():
        print(f"site_offline: no Chromium at {CHROMIUM}: run make chromium", file=sys.stderr)
        return 2
    found = off_origin_requests(args.site)
    pages = len(page_paths(args.site))
    if not found:
        print(f"site_offline: {pages} pages, 0 requests off 127.0.0.1")
        return 0
    for path, urls in sorted(found.items()):
        for url in sorted(set(urls)):
            print(f"{path}: asked for {url}")
    print(f"site_offline: {len(found)} of {pages} pages asked for something off 127.0.0.1")
    return 1


if __name__ == "__main__":
    sys.exit(main())
