"""`make pdf`: the whole book as one PDF, made offline from the built site, _build/html.

Debian's Chromium, driven by Playwright as in the browser test, opens every page of the table of contents (served
from 127.0.0.1, MathJax from the site's own files) with the light theme and every answer dropdown open, without the
code the site folds away (setup, plotting, solutions), and takes its article. The articles, behind a title page
(edition, date, how to cite: CITATION.cff and _config.yml) and a table of contents, become one document, which
Chromium prints as one: tagged, with an outline (a bookmark per heading: chapters and their sections), a page number
in every page's footer, and each formula a figure in the tag tree with its TeX as alt text (MathJax's assistive
MathML is clipped to nothing, so it never reaches the PDF; see print.css). Written to
_build/pdf/residual-connections.pdf; `--publish` (after the read-back test, tests/test_pdf.py) copies it into the
site and adds it to every page's download menu, so that no page links a PDF the build did not make.

Why one combined print, not a print per page joined afterwards: in one document Chromium itself turns every link to
another part of the book into a link to the PDF page that holds its target, and numbers the pages, makes the outline
and the tag tree. Joined files would need all four rebuilt by hand: pypdf does not merge tag trees (a joined PDF is
untagged), each file's footer counts from 1, and a link's target page is only known once everything is paginated.
For that, every id in a page's article is prefixed with the page's name (two pages both have a "summary" section),
and every link is rewritten: to a page of the book, to `#page--id`; to anything else on the site, to its public
address (html.baseurl in _config.yml); a link around a figure (to the figure's own file) is dropped, as the figure
is embedded. The printed contents' page numbers come from a first, untagged print: Chromium cannot number a link
target (no CSS target-counter), so the book is printed again, tagged, with the numbers the first print gave, and
again if they moved. Chromium garbles some bookmark titles (retitle_outline), so they are set from the headings.

Why this route at all: Jupyter Book's pdfhtml builder launches a Chromium that Playwright downloads (no network
here), and its LaTeX route needs TeX Live and drops the notebooks' HTML outputs. Printing the pages keeps what a
reader of the site sees: the figures at their size, the captions, the typeset math, the bibliography and the
glossary.
Usage: python -m booktools.build.pdf [--publish]
"""

import functools
import html
import io
import logging
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from datetime import date
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml
from pypdf import PdfReader
from pypdf.generic import NameObject, TextStringObject

from booktools.settings import ROOT, book_pages, load_config

HTML = ROOT / "_build" / "html"
BUILD = ROOT / "_build" / "pdf"
NAME = "residual-connections.pdf"
PDF = BUILD / NAME  # made and read back here
PUBLISHED = HTML / NAME  # copied into the site by --publish
PRINT_CSS = Path(__file__).with_name("print.css")
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# A4 with the margins of a printed course book, a page number centred in every page's footer.
FOOTER = (
    '<div style="width:100%; text-align:center; font-size:8pt; color:#444; '
    'font-family:system-ui, sans-serif;"><span class="pageNumber"></span></div>'
)
PAGE = {
    "format": "A4",
    "print_background": True,
    "margin": {"top": "18mm", "bottom": "20mm", "left": "16mm", "right": "16mm"},
    "display_header_footer": True,
    "header_template": "<span></span>",
    "footer_template": FOOTER,
    "tagged": True,
    "outline": True,
}
COMBINED = "__book__.html"  # the address the combined document is served at (never a file of the site)
# How a page's id is made unique in the book: the page's name, two dashes, the id.
SEPARATOR = "--"

# Before taking a page's article: open the answer dropdowns; leave out the code the site folds away (setup, plotting
# code and the exercises' solutions, behind "Show ..." buttons that paper cannot press), the live widgets, every
# button and heading anchor, and the scripts (the combined document runs none); a Colab badge (an image from the
# internet) becomes its text, still a link to Colab.
PREPARE = """() => {
  const article = document.querySelector('main article.bd-article');
  // the answer dropdowns: sphinx-design's, and the admonitions sphinx-togglebutton folds (the model answers)
  article.querySelectorAll('details.sd-dropdown, details.toggle-details').forEach(d => { d.open = true; });
  article.querySelectorAll('.admonition.toggle-hidden').forEach(a => a.classList.remove('toggle-hidden'));
  article.querySelectorAll('details.hide').forEach(d => d.remove());
  article.querySelectorAll('.jupyter-widgets, .widget-subarea').forEach(w => w.remove());
  article.querySelectorAll('button, a.headerlink, script, noscript').forEach(e => e.remove());
  article.querySelectorAll('img[src*="colab-badge"]').forEach(img => {
    img.replaceWith(document.createTextNode(img.alt || 'Open in Colab'));
  });
  // every formula's text form, its TeX, as the alt text of a figure in the tag tree
  for (const item of window.MathJax?.startup?.document?.math ?? []) {
    const box = item.typesetRoot;
    if (box && article.contains(box)) {
      box.setAttribute('role', 'img');
      box.setAttribute('aria-label', item.math.trim());
    }
  }
}"""

# Every id prefixed with the page's name, and every link made to work in the book (see the module docstring).
# pages: {site path without ".html": the page's name in the book}; site: the public address, ending in "/".
REWRITE = """({name, pages, site, separator}) => {
  const article = document.querySelector('main article.bd-article');
  const local = id => name + separator + id;
  article.querySelectorAll('[id]').forEach(e => { e.id = local(e.id); });
  for (const attr of ['for', 'aria-labelledby', 'aria-describedby', 'aria-controls', 'headers']) {
    article.querySelectorAll(`[${attr}]`).forEach(e => {
      e.setAttribute(attr, e.getAttribute(attr).split(/\\s+/).filter(Boolean).map(local).join(' '));
    });
  }
  // a figure links its own file: the figure is in the PDF, so the link goes
  article.querySelectorAll('a[href]').forEach(a => {
    if (a.querySelector('img') && /\\.(png|jpe?g|gif|svg|webp)$/i.test(new URL(a.href).pathname)) {
      a.replaceWith(...a.childNodes);
    }
  });
  article.querySelectorAll('a[href]').forEach(a => {
    const url = new URL(a.getAttribute('href'), location.href);
    if (url.origin !== location.origin) return;
    const path = decodeURIComponent(url.pathname.slice(1));
    const page = pages[path.replace(/\\.html$/, '')];
    const id = decodeURIComponent(url.hash.slice(1));
    if (page === undefined) a.setAttribute('href', site + path + url.search + url.hash);
    else a.setAttribute('href', '#' + (id ? page + separator + id : page));
  });
  article.querySelectorAll('img[src]').forEach(img => {
    img.setAttribute('src', img.src);
    img.removeAttribute('loading');  // a lazy image below the fold would not load before the print
  });
  return article.outerHTML;
}"""

# The site's style sheets (absolute addresses) and inline styles, MathJax's left out: each page's holds only the
# characters that page typesets, so the combined document takes every page's.
STYLES = """() => [...document.querySelectorAll('head link[rel=stylesheet], head style:not(#MJX-CHTML-styles)')]
  .map(e => e.tagName === 'LINK' ? `<link rel="stylesheet" href="${e.href}">` : e.outerHTML)"""
MATH_STYLES = (
    "() => window.MathJax?.chtmlStylesheet ? MathJax.chtmlStylesheet().textContent : ''"
)
LOADED = """() => Promise.all([document.fonts.ready, ...[...document.images].map(i => i.decode().catch(() => null))])
  .then(() => true)"""
# The text of every heading that prints, in order, a formula in it as its TeX: the outline's titles.
HEADINGS = """() => [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')]
  .filter(h => h.getClientRects().length > 0)
  .map(h => {
    const copy = h.cloneNode(true);
    copy.querySelectorAll('mjx-container').forEach(m => m.replaceWith(m.getAttribute('aria-label') ?? ''));
    return copy.textContent.replace(/\\s+/g, ' ').trim();
  })"""
BROKEN_IMAGES = """() => [...document.images].filter(i => !i.complete || i.naturalWidth === 0)
  .map(i => i.alt || i.src.slice(0, 80))"""


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(directory: Path) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(directory))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def page_name(file: str) -> str:
    """A page's name in the book, the id of its part of the combined document: notebooks/01_x -> notebooks-01_x."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", file)


def site_url() -> str:
    return load_config()["html"]["baseurl"].rstrip("/") + "/"


# ---- the front matter --------------------------------------------------------------------------------------------


def git(*args: str) -> str:
    result = subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )
    return result.stdout.strip() if result.returncode == 0 else ""


def edition() -> tuple:
    """(edition, date): a tagged edition (`make edition`, CI on a tag) by its tag, else the commit it was built
    from; the date of that commit, so that printing the same commit twice gives the same title page."""
    ref = os.environ.get("GITHUB_REF", "")
    tag = git("describe", "--tags", "--exact-match", "HEAD") or (
        ref.removeprefix("refs/tags/") if ref.startswith("refs/tags/") else ""
    )
    commit = git("rev-parse", "--short", "HEAD")
    day = git("log", "-1", "--format=%cs") or date.today().isoformat()
    if tag:
        return f"Edition {tag}", day
    if not commit:
        return "Unreleased edition", day
    changed = (
        " with uncommitted changes"
        if git("status", "--porcelain", "--untracked-files=no")
        else ""
    )
    return f"Development edition, commit {commit}{changed}", day


def title_page() -> str:
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    config = load_config()
    title, _, subtitle = cff["title"].partition(": ")
    authors = ", ".join(
        a.get("name") or f"{a['given-names']} {a['family-names']}"
        for a in cff["authors"]
    )
    name, day = edition()
    site = cff.get("url") or site_url()
    repo = cff.get("repository-code") or config["repository"]["url"]
    cite = f"{authors} ({day[:4]}). {cff['title']}. {name}. {site}"
    esc = html.escape
    return f"""<section class="rc-title">
<h1>{esc(title)}</h1>
<p class="rc-subtitle">{esc(subtitle.capitalize())}</p>
<dl>
<dt>Authors</dt><dd>{esc(authors)}</dd>
<dt>Edition</dt><dd>{esc(name)}</dd>
<dt>Date</dt><dd>{esc(day)}</dd>
<dt>Read online</dt><dd><a href="{esc(site)}">{esc(site)}</a></dd>
<dt>Source</dt><dd><a href="{esc(repo)}">{esc(repo)}</a></dd>
<dt>How to cite</dt><dd>{esc(cite)}</dd>
<dt>Licence</dt><dd>The text and figures under CC BY 4.0, the code under MIT (LICENSE, CITATION.cff).</dd>
</dl>
</section>"""


def toc_parts() -> list:
    """[(caption, [file, ...])] as _toc.yml groups the pages; the root page first, under no caption."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    parts = [("", [toc["root"]])]
    for part in toc.get("parts", []):
        parts.append((part.get("caption", ""), [c["file"] for c in part["chapters"]]))
    listed = [f for _, files in parts for f in files]
    assert listed == book_pages(), (
        "_toc.yml nests pages: the printed contents lists only the top level"
    )
    return parts


def contents(titles: dict, numbers: dict) -> str:
    """The printed table of contents: every page of the book, a link to it, and its page number (from the previous
    print; "000" before the first, the widest a number gets, so that the layout does not move)."""
    esc = html.escape
    lines = ['<section class="rc-contents"><h1>Contents</h1>']
    for caption, files in toc_parts():
        if caption:
            lines.append(f'<p class="rc-part">{esc(caption)}</p>')
        lines.append("<ol>")
        for file in files:
            name = page_name(file)
            lines.append(
                f'<li><a href="#{name}"><span class="rc-entry">{esc(titles.get(file, file))}</span>'
                f'<span class="rc-leader"></span><span class="rc-number">{numbers.get(name, "000")}</span></a></li>'
            )
        lines.append("</ol>")
    lines.append("</section>")
    return "\n".join(lines)


# ---- the pages ---------------------------------------------------------------------------------------------------


def collect(page, files: list, base: str) -> dict:
    """Every page's article, ready for the book; the site's styles; MathJax's styles for every formula."""
    pages = {file: page_name(file) for file in files}
    articles, titles, math_css, styles = [], {}, [], []
    for file in files:
        page.goto(f"{base}{file}.html", wait_until="load")
        page.evaluate("() => window.MathJax?.startup?.promise")
        untypeset = page.evaluate(
            "() => document.querySelectorAll('.math:not(:has(mjx-container))').length"
        )
        if untypeset:
            raise SystemExit(f"{file}: {untypeset} formulas left untypeset by MathJax")
        titles[file] = (
            page.evaluate(
                "() => document.querySelector('main h1')?.innerText.replace('#', '').trim()"
            )
            or file
        )
        page.evaluate(PREPARE)
        article = page.evaluate(
            REWRITE,
            {
                "name": pages[file],
                "pages": pages,
                "site": site_url(),
                "separator": SEPARATOR,
            },
        )
        articles.append(
            f'<section class="rc-page" id="{pages[file]}">\n{article}\n</section>'
        )
        math_css.append(page.evaluate(MATH_STYLES))
        styles += [s for s in page.evaluate(STYLES) if s not in styles]
    return {"articles": articles, "titles": titles, "styles": styles, "math": math_css}


def combine(parts: dict, numbers: dict) -> str:
    """The book as one HTML document: the site's styles, the print style, the front matter, every article."""
    head = "\n".join(parts["styles"])
    math = "\n".join(dict.fromkeys(parts["math"]))  # unique, in order
    body = "\n".join(parts["articles"])
    return f"""<!DOCTYPE html>
<html lang="en" data-theme="light" data-mode="light">
<head>
<meta charset="utf-8">
<title>Residual Connections</title>
{head}
<style>{math}</style>
<style>{PRINT_CSS.read_text()}</style>
</head>
<body>
<div class="bd-container"><div class="bd-container__inner bd-page-width"><main class="bd-main" id="main-content">
<div class="bd-content"><div class="bd-article-container"><article class="bd-article">
{title_page()}
{contents(parts["titles"], numbers)}
</article>
{body}
</div></div></main></div></div>
</body>
</html>"""


def print_book(page, document: str, base: str, out: Path, tagged: bool = True) -> list:
    """Chromium prints the combined document; no image may be missing from it. Returns the headings that print.
    Untagged (no tag tree, no outline: the same pages, in half the time), for a first print that only counts them."""
    url = base + COMBINED
    page.route(
        url,
        lambda route: route.fulfill(
            body=document, content_type="text/html; charset=utf-8"
        ),
    )
    page.goto(url, wait_until="load")
    page.evaluate(LOADED)
    broken = page.evaluate(BROKEN_IMAGES)
    if broken:
        raise SystemExit(f"{len(broken)} images did not load: {broken[:5]}")
    page.emulate_media(media="print")
    headings = page.evaluate(HEADINGS)
    page.emulate_media(media="screen")
    page.pdf(path=str(out), **{**PAGE, "tagged": tagged, "outline": tagged})
    page.unroute(url)
    return headings


def outline_items(node) -> list:
    """Every item of a PDF outline (bookmarks), in reading order."""
    items, item = [], node.get("/First")
    while item is not None:
        item = item.get_object()
        items += [item, *outline_items(item)]
        item = item.get("/Next")
    return items


def retitle_outline(path: Path, headings: list) -> None:
    """The outline's titles as the headings read. Chromium 156 builds the outline of a tagged print from the tag
    tree, and its titles lose the space at every line break ("atinitialisation") and repeat the text of some
    headings ("SummarySummary"); where each heading is and how they nest it gets right, so only the titles are
    replaced, item by item (one bookmark per heading that prints, in the same order), in an incremental update
    appended to Chromium's file: rewriting all of its 25 MB with pypdf takes a minute, this a second."""
    reader = PdfReader(path)
    items = outline_items(reader.trailer["/Root"]["/Outlines"])
    if len(items) != len(headings):
        raise SystemExit(f"{path}: {len(items)} bookmarks for {len(headings)} headings")
    changed = {}
    for item, heading in zip(items, headings):
        if item["/Title"] != heading:
            item[NameObject("/Title")] = TextStringObject(heading)
            changed[item.indirect_reference.idnum] = item
    append_update(path, reader, changed)


def append_update(path: Path, reader: PdfReader, objects: dict) -> None:
    """Append new versions of some objects ({number: object}) to a PDF as an incremental update (PDF 1.7, 7.5.6):
    the objects, a cross-reference section for them, and a trailer that points back at the previous one."""
    if not objects:
        return
    with open(path, "rb") as f:
        f.seek(0, 2)
        offset = f.tell()
        f.seek(max(0, offset - 64))
        previous = int(re.search(rb"startxref\s+(\d+)\s+%%EOF\s*$", f.read()).group(1))
    body, xref = io.BytesIO(), [b"xref\n"]
    for number in sorted(objects):
        xref.append(f"{number} 1\n{offset + body.tell():010d} 00000 n \n".encode())
        body.write(f"{number} 0 obj\n".encode())
        objects[number].write_to_stream(body)
        body.write(b"\nendobj\n")
    trailer = reader.trailer
    size = max(int(trailer["/Size"]), max(objects) + 1)
    info = f" /Info {trailer.raw_get('/Info').idnum} 0 R" if "/Info" in trailer else ""
    start = offset + body.tell()
    with open(path, "ab") as f:
        f.write(body.getvalue() + b"".join(xref))
        f.write(
            f"trailer\n<< /Size {size} /Root {trailer.raw_get('/Root').idnum} 0 R{info} "
            f"/Prev {previous} >>\nstartxref\n{start}\n%%EOF\n".encode()
        )


def start_pages(path: Path, names: list) -> dict:
    """{part of the book: its first page, counted from 1 as the footers count}, from the PDF's destinations."""
    reader = PdfReader(path)
    dests = {name.lstrip("/"): dest for name, dest in reader.named_destinations.items()}
    missing = [name for name in names if name not in dests]
    if missing:
        raise SystemExit(f"{path}: no destination for {missing}")
    return {name: reader.get_destination_page_number(dests[name]) + 1 for name in names}


def make(files: list, base: str, out: Path) -> int:
    """Print the book until its contents list the pages it prints them on; returns its number of pages."""
    from playwright.sync_api import sync_playwright

    names = [page_name(file) for file in files]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        page = browser.new_page(color_scheme="light")
        # nothing leaves the machine: a request off the local server (a Colab badge, a CDN script) is refused
        page.route(
            "**/*",
            lambda route: (
                route.continue_()
                if route.request.url.startswith(base)
                else route.abort()
            ),
        )
        clock = time.perf_counter()
        parts = collect(page, files, base)
        print(
            f"{len(files)} pages of the site taken in {time.perf_counter() - clock:.0f} s",
            flush=True,
        )
        numbers = {}
        for attempt in range(1, 4):
            clock = time.perf_counter()
            headings = print_book(
                page, combine(parts, numbers), base, out, tagged=attempt > 1
            )
            found = start_pages(out, names)
            print(f"print {attempt}: {time.perf_counter() - clock:.0f} s", flush=True)
            if found == numbers and attempt > 1:
                break
            numbers = found
        else:
            raise SystemExit(
                "the contents' page numbers did not settle in three prints"
            )
        browser.close()
    retitle_outline(out, headings)
    return len(PdfReader(out).pages)


# ---- publishing --------------------------------------------------------------------------------------------------

# The entry the site's download menu gets for the book, as the theme writes its own link entries.
MENU_ENTRY = """<li><a href="{url}" target="_blank"
   class="btn btn-sm btn-download-book-pdf-button dropdown-item"
   title="Download the whole book as one PDF"
   data-bs-placement="left" data-bs-toggle="tooltip"
>
<span class="btn__icon-container">
  <i class="fas fa-book"></i>
  </span>
<span class="btn__text-container">whole book (.pdf)</span>
</a>
</li>"""
# The theme's own ".pdf" entry (print this page), after which the book's goes.
PRINT_ENTRY = re.compile(
    r'<li>\s*<button onclick="window\.print\(\)".*?</button>\s*</li>', re.S
)


def publish() -> int:
    """Copy the read-back PDF into the site, and add it to the download menu of every page that lacks it."""
    if not PDF.exists():
        raise SystemExit(f"No {PDF.relative_to(ROOT)}: run `make pdf`.")
    shutil.copyfile(PDF, PUBLISHED)
    added = 0
    for file in book_pages():
        path = HTML / f"{file}.html"
        text = path.read_text(encoding="utf-8")
        if "btn-download-book-pdf-button" in text:
            continue
        url = "../" * file.count("/") + NAME
        text, count = PRINT_ENTRY.subn(
            lambda m: m[0] + "\n" + MENU_ENTRY.format(url=url), text, count=1
        )
        if count != 1:
            raise SystemExit(
                f"{path.relative_to(ROOT)}: no download menu to add the book to"
            )
        path.write_text(text, encoding="utf-8")
        added += 1
    print(
        f"{PUBLISHED.relative_to(ROOT)}: published; the download menu of {added} pages now offers it"
    )
    return 0


def main() -> int:
    logging.getLogger("pypdf").setLevel(
        logging.ERROR
    )  # Chromium's trailer undercounts its objects: harmless
    if sys.argv[1:] == ["--publish"]:
        return publish()
    if not (HTML / "index.html").exists():
        raise SystemExit("No built site in _build/html: run `make book` first.")
    start = time.perf_counter()
    BUILD.mkdir(parents=True, exist_ok=True)
    server = serve(HTML)
    try:
        pages = make(book_pages(), f"http://127.0.0.1:{server.server_port}/", PDF)
    finally:
        server.shutdown()
        server.server_close()
    print(
        f"{PDF.relative_to(ROOT)}: {len(book_pages())} chapters and pages of the book, {pages} PDF pages, "
        f"{PDF.stat().st_size / 1e6:.1f} MB, in {time.perf_counter() - start:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
