"""The book as one PDF (`make pdf`, booktools/build/pdf.py): every page of the table of contents is in it, bookmarked,
with its figures and their captions, and the math typeset: no raw LaTeX or MyST role leaked into the text.
`make pdf` runs it (RC_PDF=1) after writing the PDF; everywhere else it is skipped."""

import html
import os
import re
import unicodedata

import pytest

from booktools.settings import book_pages
from conftest import ROOT

if os.environ.get("RC_PDF") != "1":
    pytest.skip("the PDF test runs under `make pdf`", allow_module_level=True)

from pypdf import PdfReader  # noqa: E402

from booktools.build import pdf

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


def squeeze(text: str) -> str:
    """Text without whitespace, and ligatures (the PDF's "ﬂ") spelled out: PDF text extraction breaks lines and
    words where the page did."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


@pytest.fixture(scope="module")
def book():
    if not pdf.PDF.exists():
        pytest.fail(f"no {pdf.PDF.relative_to(ROOT)}: run `make pdf`")
    reader = PdfReader(pdf.PDF)
    starts = [reader.get_destination_page_number(item) for item in reader.outline]
    ends = starts[1:] + [len(reader.pages)]
    return reader, [
        (item.title, range(start, end))
        for item, start, end in zip(reader.outline, starts, ends)
    ]


def page_html(file: str) -> str:
    return (pdf.HTML / f"{file}.html").read_text()


def title(file: str) -> str:
    h1 = re.search(r"<h1[^>]*>(.*?)</h1>", page_html(file), re.S).group(1)
    return html.unescape(re.sub(r"<[^>]+>", "", h1)).replace("#", "").strip()


def test_every_page_of_the_book_is_bookmarked_in_reading_order(book):
    _, sections = book
    assert [name for name, _ in sections] == [title(f) for f in book_pages()]
    assert all(len(pages) > 0 for _, pages in sections)


@pytest.mark.parametrize("index", range(len(book_pages())), ids=book_pages())
def test_a_page_has_its_figures_captions_and_typeset_math(book, index):
    reader, sections = book
    file = book_pages()[index]
    name, pages = sections[index]
    text = "".join(reader.pages[p].extract_text() for p in pages)
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
        start = squeeze(re.split(r"\\\(|\$", plain)[0])[
            :40
        ]  # the caption up to its first formula
        assert start in squeeze(text), f"{file}: caption not in the PDF: {plain[:80]!r}"
    # a page that teaches the syntax (CONTRIBUTING) shows it as code
    shown = "".join(re.findall(r"<code[^>]*>(.*?)</code>", main, re.S))
    leaked = [raw for raw in RAW if raw in text and html.escape(raw) not in shown]
    assert not leaked, f"{file}: raw LaTeX or MyST in the PDF text: {leaked}"
