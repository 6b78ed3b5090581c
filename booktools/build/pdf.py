"""`make pdf`: the whole book as one PDF, made offline from the built site, _build/html.

Debian's Chromium, driven by Playwright as in the browser test, prints every page of the table of contents
(served from 127.0.0.1, MathJax from the site's own files) with the light theme and every answer dropdown open,
without the code the site folds away (setup, plotting, solutions);
pypdf joins the pages and bookmarks each one. Written to _build/html/residual-connections.pdf, so the site's
links to it work once `make pdf` has run, and to _build/pdf/pages/ one PDF per page.

Why this route: Jupyter Book's pdfhtml builder launches a Chromium that Playwright downloads (no network here),
and its LaTeX route needs TeX Live and drops the notebooks' HTML outputs. Printing the pages keeps what a reader
of the site sees: the figures at their size, the captions, the typeset math, the bibliography and the glossary.
Usage: python -m booktools.build.pdf
"""

import functools
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from pypdf import PdfReader, PdfWriter

from booktools.settings import ROOT, book_pages

HTML = ROOT / "_build" / "html"
PDF = HTML / "residual-connections.pdf"
PAGES_DIR = ROOT / "_build" / "pdf" / "pages"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# A4 with the margins of a printed course book; the theme's print style drops the navigation and the buttons.
PAGE = {
    "format": "A4",
    "print_background": True,
    "margin": {"top": "18mm", "bottom": "18mm", "left": "16mm", "right": "16mm"},
}
# Before printing: open the answer dropdowns; leave out the code the site folds away (setup, plotting code and
# the exercises' solutions, behind "Show ..." buttons that paper cannot press) and the live widgets.
PREPARE = """() => {
  document.querySelectorAll('details.sd-dropdown').forEach(d => { d.open = true; });
  document.querySelectorAll('details.hide').forEach(d => d.remove());
  document.querySelectorAll('.jupyter-widgets, .widget-subarea').forEach(w => w.remove());
}"""


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(directory: Path) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(directory))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def print_pages(files: list, base: str) -> list:
    """[(title, pdf path)] for every page, printed by Chromium."""
    from playwright.sync_api import sync_playwright

    PAGES_DIR.mkdir(parents=True, exist_ok=True)
    printed = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        page = browser.new_page(color_scheme="light")
        # nothing leaves the machine: a request off the local server (a widget's CDN script) is refused
        page.route(
            "**/*",
            lambda route: (
                route.continue_()
                if route.request.url.startswith(base)
                else route.abort()
            ),
        )
        for file in files:
            page.goto(f"{base}{file}.html", wait_until="load")
            page.evaluate("() => window.MathJax?.startup?.promise")
            untypeset = page.evaluate(
                "() => document.querySelectorAll('.math:not(:has(mjx-container))').length"
            )
            if untypeset:
                raise SystemExit(
                    f"{file}: {untypeset} formulas left untypeset by MathJax"
                )
            page.evaluate(PREPARE)
            out = PAGES_DIR / f"{file.replace('/', '__')}.pdf"
            page.pdf(path=str(out), **PAGE)
            title = page.evaluate("() => document.querySelector('main h1')?.innerText")
            printed.append(((title or file).replace("#", "").strip(), out))
        browser.close()
    return printed


def join(printed: list, out: Path) -> int:
    """One PDF with a bookmark per page; returns its number of pages."""
    writer = PdfWriter()
    for title, path in printed:
        start = len(writer.pages)
        writer.append(str(path), import_outline=False)
        writer.add_outline_item(title=title, page_number=start)
    writer.add_metadata(
        {"/Title": "Residual Connections", "/Subject": "An executable course book"}
    )
    with open(out, "wb") as f:
        writer.write(f)
    return len(PdfReader(out).pages)


def main() -> int:
    if not (HTML / "index.html").exists():
        raise SystemExit("No built site in _build/html: run `make book` first.")
    start = time.perf_counter()
    server = serve(HTML)
    try:
        printed = print_pages(book_pages(), f"http://127.0.0.1:{server.server_port}/")
    finally:
        server.shutdown()
        server.server_close()
    pages = join(printed, PDF)
    print(
        f"{PDF.relative_to(ROOT)}: {len(printed)} chapters and pages of the book, {pages} PDF pages, "
        f"{PDF.stat().st_size / 1e6:.1f} MB, in {time.perf_counter() - start:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
