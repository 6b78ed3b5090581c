"""The book as one PDF (`make pdf`, booktools/build/pdf.py), read back: every page of the table of contents is in it,
bookmarked with its sections, with its figures and their captions, and the math typeset (no raw LaTeX or MyST role
leaked into the text, every formula's TeX kept as its alt text); a title page and a printed table of contents that
gives every page of the book its page number; a number on every page; every link works offline or online (a link
within the book lands on the PDF page that holds its target, any other goes to a public address, never to the print
server on the loopback address); no broken-image placeholder; a tagged PDF with an outline.
`make pdf` runs it (RC_PDF=1) after printing the PDF; everywhere else it is skipped. RC_PDF_FILE=path reads back
another PDF instead (an older print, say, to see a check fail)."""

import functools
import html
import ipaddress
import os
import re
import unicodedata
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from booktools.settings import book_pages

if os.environ.get("RC_PDF") != "1":
    pytest.skip("the PDF test runs under `make pdf`", allow_module_level=True)

from bs4 import BeautifulSoup  # noqa: E402
from pypdf import PdfReader  # noqa: E402

from booktools.build import pdf  # noqa: E402

PDF = Path(os.environ.get("RC_PDF_FILE") or pdf.PDF)
# What must never reach a reader's page: TeX that MathJax left alone, and MyST that Sphinx did not turn into links.
RAW = [
    r"\(",
    r"\)",
    r"\[",
    "$$",
    r"\frac",
    r"\begin",
    r"\mathrm",
    "{numref}",
    "{cite",
    "{term}",
    "{dropdown}",
]
# The front matter's bookmarks, before the first page of the book.
FRONT = ["Residual Connections", "Contents"]
# Chromium's broken-image icon is 14 x 16 pixels; no figure of the book is smaller than 32 pixels on a side.
PLACEHOLDER = 32


def squeeze(text: str) -> str:
    """Text without whitespace, and ligatures (the PDF's "ﬂ") spelled out: PDF text extraction breaks lines and
    words where the page did."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def before_math(text: str) -> str:
    """Text up to its first formula (TeX as the site's source has it, or a MathJax box)."""
    return re.split(r"\\\(|\\\[|\$", text)[0]


@pytest.fixture(scope="module")
def reader():
    if not PDF.exists():
        pytest.fail(f"no {PDF}: run `make pdf`")
    return PdfReader(PDF)


@pytest.fixture(scope="module")
def texts(reader):
    return [page.extract_text() for page in reader.pages]


@pytest.fixture(scope="module")
def book(reader):
    """The reader, and [(bookmark title, its PDF pages)] for every top-level bookmark after the front matter."""
    top = [item for item in reader.outline if not isinstance(item, list)]
    starts = [reader.get_destination_page_number(item) for item in top]
    ends = starts[1:] + [len(reader.pages)]
    sections = [(item.title, range(s, e)) for item, s, e in zip(top, starts, ends)]
    return reader, sections[len(FRONT) :]


@functools.cache
def page_html(file: str) -> str:
    return (pdf.HTML / f"{file}.html").read_text(encoding="utf-8")


@functools.cache
def soup(file: str) -> BeautifulSoup:
    return BeautifulSoup(page_html(file), "html.parser")


@functools.cache
def article(file: str):
    """A page's article as the PDF prints it: without the code the site folds away."""
    main = soup(file).select_one("main article.bd-article")
    for hidden in main.select("details.hide"):
        hidden.decompose()
    return main


def title(file: str) -> str:
    h1 = re.search(r"<h1[^>]*>(.*?)</h1>", page_html(file), re.S).group(1)
    return html.unescape(re.sub(r"<[^>]+>", "", h1)).replace("#", "").strip()


def links(reader) -> list:
    """[(PDF page index, the link's annotation)] for every link in the PDF."""
    found = []
    for index, page in enumerate(reader.pages):
        for annotation in page.get("/Annots") or []:
            annotation = annotation.get_object()
            if annotation.get("/Subtype") == "/Link":
                found.append((index, annotation))
    return found


def is_local(url: str) -> bool:
    """A loopback, private or link-local address, a local file or a bare path: dead in a reader's copy."""
    parts = urlsplit(url)
    if parts.scheme == "mailto":
        return False
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return True
    host = parts.hostname
    if host == "localhost" or host.endswith((".local", ".localhost")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return (
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_unspecified
    )


def test_the_title_page_says_edition_date_and_how_to_cite(texts):
    first = texts[0]
    for needed in ["Residual Connections", "Edition", "How to cite", pdf.site_url()]:
        assert squeeze(needed) in squeeze(first), f"the title page lacks {needed!r}"
    assert re.search(r"\d{4}-\d{2}-\d{2}", first), "the title page has no date"


def test_every_page_of_the_book_is_bookmarked_in_reading_order(reader, book):
    top = [item.title for item in reader.outline if not isinstance(item, list)]
    assert top[: len(FRONT)] == FRONT, (
        f"the bookmarks do not open with the front matter: {top[:3]}"
    )
    _, sections = book
    assert [name for name, _ in sections] == [title(f) for f in book_pages()]
    assert all(len(pages) > 0 for _, pages in sections)


def test_every_chapter_has_a_bookmark_per_section(reader):
    outline = reader.outline
    for file in book_pages():
        if not file.startswith("notebooks/"):
            continue
        index = next(
            i
            for i, item in enumerate(outline)
            if not isinstance(item, list) and item.title == title(file)
        )
        children = outline[index + 1] if isinstance(outline[index + 1], list) else []
        names = {
            squeeze(before_math(item.title))
            for item in children
            if not isinstance(item, list)
        }
        for h2 in article(file).find_all("h2"):
            heading = squeeze(before_math(h2.get_text().replace("#", "")))
            assert any(
                name.startswith(heading) or heading.startswith(name) for name in names
            ), f"{file}: no bookmark for its section {h2.get_text().strip()!r}"


@pytest.mark.parametrize("index", range(len(book_pages())), ids=book_pages())
def test_a_page_has_its_figures_captions_and_typeset_math(book, texts, index):
    reader, sections = book
    file = book_pages()[index]
    name, pages = sections[index]
    text = "".join(texts[p] for p in pages)
    assert squeeze(name) in squeeze(text), f"{file}: its title is not in its pages"
    source = page_html(file)
    main = source[source.find("<main") :]
    figures = len(re.findall(r'<img[^>]+src="[^"]*_images/[^"]*\.png"', main))
    images = sum(len(reader.pages[p].images) for p in pages)
    assert images >= figures, (
        f"{file}: {figures} figures on the site, {images} in the PDF"
    )
    for caption in re.findall(
        r'<span class="caption-text">(.*?)</span>\s*<a', main, re.S
    ):
        plain = html.unescape(re.sub(r"<[^>]+>", "", caption))
        start = squeeze(before_math(plain))[:40]  # the caption up to its first formula
        assert start in squeeze(text), f"{file}: caption not in the PDF: {plain[:80]!r}"
    # a page that teaches the syntax (CONTRIBUTING) shows it as code
    shown = "".join(re.findall(r"<code[^>]*>(.*?)</code>", main, re.S))
    leaked = [raw for raw in RAW if raw in text and html.escape(raw) not in shown]
    assert not leaked, f"{file}: raw LaTeX or MyST in the PDF text: {leaked}"


def test_every_page_has_its_number(texts):
    unnumbered = [
        n
        for n, text in enumerate(texts, start=1)
        if not re.search(rf"(?m)^\s*{n}\s*$", text)
    ]
    assert not unnumbered, (
        f"{len(unnumbered)} of {len(texts)} pages have no page number, e.g. {unnumbered[:5]}"
    )


def test_the_contents_list_every_page_with_its_page_number(book, texts):
    _, sections = book
    contents = next((n for n, text in enumerate(texts[:5]) if "Contents" in text), None)
    assert contents is not None, "no printed table of contents in the first five pages"
    listed = squeeze(texts[contents] + texts[contents + 1])
    for file, (name, pages) in zip(book_pages(), sections):
        entry = squeeze(title(file)) + str(pages.start + 1)
        assert entry in listed, (
            f"the contents do not list {title(file)!r} at page {pages.start + 1}"
        )


def test_no_link_goes_to_a_loopback_or_local_address_or_to_an_image(reader):
    uris = [
        a["/A"]["/URI"] for _, a in links(reader) if "/A" in a and "/URI" in a["/A"]
    ]
    local = sorted({u for u in uris if is_local(u)})
    assert not local, f"{len(local)} links to a local address, e.g. {local[:3]}"
    images = sorted(
        {u for u in uris if re.search(r"\.(png|jpe?g|gif|svg)$", urlsplit(u).path)}
    )
    assert not images, f"links to image files (the figures are embedded): {images[:3]}"
    # a page of the book is linked within the PDF, not on the site
    site = pdf.site_url()
    outside = sorted(
        {u for u in uris if any(u.startswith(f"{site}{f}.html") for f in book_pages())}
    )
    assert not outside, f"links to the site for a page the PDF holds: {outside[:3]}"


def target_text(name: str) -> str:
    """The start of the text a destination of the PDF points at (`page--id`, or `page` for a whole page), as the
    site shows it: a heading, a glossary term, a bibliography entry's label, a figure's caption. Only the first
    run of text: PDF text extraction reads a bibliography's labels as one column, the entries as another."""
    names = {pdf.page_name(f): f for f in book_pages()}
    page, _, anchor = name.partition(pdf.SEPARATOR)
    assert page in names, f"a link to {name!r}, which is not a part of the book"
    if not anchor:
        return squeeze(title(names[page]))[:25]
    element = soup(names[page]).find(id=anchor)
    assert element is not None, f"a link to {name!r}: its page has no id {anchor!r}"
    element = element.select_one(".caption-text") or element
    first = next((s for s in element.stripped_strings if s.strip("#").strip()), "")
    return squeeze(before_math(first))[:25]


def test_internal_links_land_on_the_page_that_holds_their_target(reader, texts):
    dests = {n.lstrip("/"): d for n, d in reader.named_destinations.items()}
    internal = [(i, a["/Dest"]) for i, a in links(reader) if "/Dest" in a]
    assert len(internal) > 500, f"only {len(internal)} links within the book"
    wrong = []
    for index, dest in internal:
        name = str(dest).lstrip("/")
        assert name in dests, (
            f"page {index + 1}: a link to {name!r}, which the PDF does not define"
        )
        page = reader.get_destination_page_number(dests[name])
        expected = target_text(name)
        if expected and expected not in squeeze(texts[page]):
            wrong.append(
                f"page {index + 1} -> {name} (page {page + 1}, without {expected!r})"
            )
    assert not wrong, (
        f"{len(wrong)} links land on a page without their target: {wrong[:5]}"
    )


def test_no_broken_image_placeholder(reader):
    small = []
    for index, page in enumerate(reader.pages):
        for image in page.images:
            width, height = image.image.size
            if width <= PLACEHOLDER and height <= PLACEHOLDER:
                small.append(f"page {index + 1}: {width} x {height}")
    assert not small, f"{len(small)} broken-image placeholders, e.g. {small[:5]}"


def test_tagged_with_an_outline_and_a_language(reader):
    root = reader.trailer["/Root"]
    assert root.get("/MarkInfo", {}).get("/Marked"), "the PDF is not tagged"
    assert "/StructTreeRoot" in root, "the PDF has no tag tree"
    assert "/Outlines" in root and reader.outline, "the PDF has no outline"
    assert root.get("/Lang") == "en", "the PDF does not give its language"


def alt_texts(node, found: list) -> list:
    """Every /Alt in the tag tree under node."""
    node = node.get_object()
    if isinstance(node, dict):
        if "/Alt" in node:
            found.append(str(node["/Alt"]))
        kids = node.get("/K")
        if kids is not None:
            alt_texts(kids, found)
    elif isinstance(node, list):
        for kid in node:
            alt_texts(kid, found)
    return found


def test_every_formula_keeps_its_tex_as_alt_text(reader):
    tree = reader.trailer["/Root"].get("/StructTreeRoot")
    assert tree is not None, "the PDF has no tag tree to hold the formulas' alt text"
    alts = {squeeze(a) for a in alt_texts(tree, [])}
    missing = []
    for file in book_pages():
        for math in article(file).select(".math"):
            tex = re.sub(
                r"^\s*(\\\(|\\\[|\$\$?)|(\\\)|\\\]|\$\$?)\s*$", "", math.get_text()
            )
            if squeeze(tex) not in alts:
                missing.append(f"{file}: {tex.strip()[:60]}")
    assert not missing, (
        f"{len(missing)} formulas without their TeX as alt text, e.g. {missing[:3]}"
    )
