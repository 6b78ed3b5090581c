"""Checks on the built site, _build/html. `make book` runs them right after building (RC_REQUIRE_SITE=1);
under `make test` they are skipped when no site has been built yet."""

import re
from html.parser import HTMLParser

import pytest

from booktools.settings import COLAB_DIR, load_config
from conftest import NOTEBOOKS, ROOT, built_site, colab_url, read_notebook, tags

HTML = ROOT / "_build" / "html"


@pytest.fixture(scope="module")
def site():
    return built_site([*NOTEBOOKS, *(ROOT / "book").glob("*.md")])


class Links(HTMLParser):
    """Collects every <a href>, every <img> and every <details> of a page."""

    def __init__(self):
        super().__init__()
        self.hrefs, self.images, self.details = [], [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "a" and "href" in attrs:
            self.hrefs.append(attrs["href"])
        elif tag == "img":
            self.images.append(attrs)
        elif tag == "details":
            self.details.append(attrs)


def parse(path) -> Links:
    links = Links()
    links.feed(path.read_text(encoding="utf-8"))
    return links


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_page_has_correct_colab_and_download_links(site, notebook):
    page = site / "notebooks" / f"{notebook.stem}.html"
    assert page.exists(), f"{page} was not built"
    hrefs = parse(page).hrefs
    colab = [h for h in hrefs if h.startswith("https://colab.research.google.com/")]
    following = NOTEBOOKS[NOTEBOOKS.index(notebook) + 1 : 2 + NOTEBOOKS.index(notebook)]
    assert colab.count(colab_url(f"colab/{notebook.name}")) >= 2, (
        "the launch button and the badge open this notebook's Colab copy"
    )
    assert set(colab) == {
        colab_url(f"colab/{p.name}") for p in [notebook, *following]
    } | {colab_url(f"student/{notebook.name}")}, (
        "and the Next link the next one's, and the Exercises badge the student version"
    )
    assert any(h.endswith(f"_sources/notebooks/{notebook.name}") for h in hrefs), (
        "download link to the .ipynb"
    )
    downloaded = (site / "_sources" / "notebooks" / notebook.name).read_text()
    assert downloaded == (COLAB_DIR / notebook.name).read_text(), (
        "the download is the chapter's CommonMark copy"
    )


def test_every_page_reports_errors_through_the_erratum_form(site):
    """The theme's issue button opens .github/ISSUE_TEMPLATE/erratum.yml with the page's address filled in."""
    from urllib.parse import parse_qs, urlparse

    base = load_config()["html"]["baseurl"].rstrip("/") + "/"
    repository = load_config()["repository"]["url"].rstrip("/")
    pages = sorted(site.glob("notebooks/*.html")) + sorted(site.glob("book/*.html"))
    checked = 0
    for page in pages:
        buttons = [h for h in parse(page).hrefs if "/issues/new?" in h]
        assert len(buttons) == 1, f"{page.relative_to(site)}: {buttons}"
        url = urlparse(buttons[0].replace("&amp;", "&"))
        query = parse_qs(url.query)
        assert f"{url.scheme}://{url.netloc}{url.path}" == f"{repository}/issues/new"
        assert query["template"] == ["erratum.yml"]
        assert query["page"] == [base + page.relative_to(site).as_posix()]
        checked += 1
    assert checked >= len(NOTEBOOKS) + 5, "the chapters and the reference pages"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_figures_are_numbered_from_1_on_each_page_and_the_text_links_to_them(
    site, notebook
):
    """Captions read "Figure 1", "Figure 2", ... in page order (book/_ext/figure_numbers.py), as in the Colab
    copy, and each "Figure k" in the text links to the figure captioned "Figure k" on the same page."""
    html = (site / "notebooks" / f"{notebook.stem}.html").read_text(encoding="utf-8")
    figures = re.findall(
        r'<figure[^>]*id="(fig-[\w-]+)".*?<span class="caption-number">Figure (\d+) </span>',
        html,
        re.S,
    )
    expected = len(
        [
            c
            for c in read_notebook(notebook).cells
            if "figure" in c.metadata.get("mystnb", {})
        ]
    )
    assert [int(k) for _, k in figures] == list(range(1, expected + 1)), figures
    numbers = dict(figures)
    references = re.findall(
        r'<a class="reference internal" href="#(fig-[\w-]+)"><span class="std std-numref">([^<]*)</span>',
        html,
    )
    assert references or not figures, "the text refers to its figures by number"
    for target, text in references:
        assert target in numbers and text.endswith(numbers[target]), (
            f"{text!r} links to #{target}, Figure {numbers.get(target)}"
        )


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_page_has_figures_citations_and_collapsed_solutions(site, notebook):
    page = parse(site / "notebooks" / f"{notebook.stem}.html")
    figures = [
        img for img in page.images if img.get("src", "").startswith("../_images/")
    ]
    assert figures, "the executed notebook's figures are on the page"
    assert all(len(img.get("alt", "")) > 20 for img in figures), (
        "every figure has alt text"
    )
    assert any("bibliography.html#" in h for h in page.hrefs), (
        "citations link to the bibliography"
    )
    solutions = sum("solution" in tags(c) for c in read_notebook(notebook).cells)
    collapsed = [d for d in page.details if "open" not in d]
    assert len(collapsed) >= solutions, "each solution is a collapsed dropdown"
    html = (site / "notebooks" / f"{notebook.stem}.html").read_text(encoding="utf-8")
    # myst-nb's summary line
    toggles = html.count('<p class="collapsed admonition-title">Show solution</p>')
    assert toggles == solutions, "each solution's toggle says Show solution"


def test_reference_pages(site):
    bibliography = (site / "book" / "bibliography.html").read_text(encoding="utf-8")
    assert "deep residual learning for image recognition" in bibliography.lower()
    glossary = (site / "book" / "glossary.html").read_text(encoding="utf-8")
    for term in [
        "residual branch",
        "shortcut",
        "identity mapping",
        "pre-norm",
        "residual stream",
        "rank collapse",
    ]:
        assert re.search(rf'<dt id="term-{term.replace(" ", "-")}"', glossary, re.I), (
            term
        )
    intro = parse(site / "book" / "intro.html")
    for notebook in NOTEBOOKS:
        assert any(
            h.endswith(f"notebooks/{notebook.stem}.html") for h in intro.hrefs
        ), f"the map links {notebook.stem}"


def test_every_image_on_every_page_has_alt_text(site):
    """Alt text for every <img> in the built HTML; a figure's alt text states its finding, so it is a sentence."""
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > len(NOTEBOOKS)
    for page in pages:
        for img in parse(page).images:
            assert img.get("alt", "").strip(), (
                f"{page.relative_to(site)}: <img src={img.get('src')}> has no alt text"
            )
            if "_images/" in img.get("src", ""):
                assert len(img["alt"]) > 20, (
                    f"{page.relative_to(site)}: figure {img['src']} needs alt text that says what it shows"
                )


def test_front_page_teaches_in_one_screen(site):
    intro = parse(site / "book" / "intro.html")
    assert [img for img in intro.images if "_images/" in img.get("src", "")], (
        "the one-figure summary"
    )
    assert any(h.endswith("notebooks/01_degradation.html") for h in intro.hrefs), (
        "a button to start reading"
    )
    assert colab_url(f"colab/{NOTEBOOKS[0].name}") in intro.hrefs, (
        "a button that opens the first chapter in Colab"
    )
    assert any(h.endswith("reproducibility.html") for h in intro.hrefs)


def test_reproducibility_page(site):
    text = (site / "book" / "reproducibility.html").read_text(encoding="utf-8")
    pins = [
        line.split("#")[0].strip()
        for path in ("requirements.txt", "tests/colab-requirements.txt")
        for line in (ROOT / path).read_text().splitlines()
        if line.startswith(("torch==", "ipywidgets=="))
    ]
    assert len(pins) == 4 and all(pin in text for pin in pins), (
        f"the pinned environments: {pins}"
    )
    for notebook in NOTEBOOKS:
        assert notebook.name in text, f"the run time of {notebook.name}"
    assert "any seed" in text.lower() and "FULL = True" in re.sub(
        r"<[^>]+>", "", text
    ), "seed policy and FULL mode"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_chapter_page_ends_with_a_next_link(site, notebook):
    text = (site / "notebooks" / f"{notebook.stem}.html").read_text(encoding="utf-8")
    link = re.search(r"<strong>Next:</strong>.*?href=\"([^\"#]+)", text, re.S)
    following = NOTEBOOKS[NOTEBOOKS.index(notebook) + 1 :]
    assert link and link[1] == (
        f"{following[0].stem}.html" if following else "../book/reproducibility.html"
    )


def test_hidden_tests_stay_out_of_the_site(site):
    pages = [p for p in site.rglob("*") if p.suffix in {".html", ".ipynb", ".txt"}]
    assert len(pages) > len(NOTEBOOKS), "the built site has fewer pages than chapters"
    for page in pages:
        assert "def exercise_1():" not in page.read_text(errors="ignore"), (
            f"{page} contains hidden tests"
        )


def test_citations_link_to_stable_key_based_anchors_with_author_year_labels(site):
    """Every link into the bibliography lands on an entry whose anchor is its BibTeX key (stable when other citations
    change), and each entry's label reads as the text cites it, with a and b for the same authors and year."""
    bibliography = (site / "book" / "bibliography.html").read_text(encoding="utf-8")
    entries = dict(
        re.findall(
            r'<div class="citation" id="cite-([^"]+)"[^>]*>\s*<span class="label">(.*?)</span>\s*<p',
            bibliography,
            re.S,
        )
    )
    labels = {
        key: re.sub(r"<[^>]+>|\[|\]", "", label).strip()
        for key, label in entries.items()
    }
    assert (
        labels["he2016deep"] == "He et al., 2016a"
        and labels["he2016identity"] == "He et al., 2016b"
    ), labels
    assert len(set(labels.values())) == len(labels), "two entries share a label"
    linked = set()
    for page in site.rglob("*.html"):
        linked |= set(
            re.findall(
                r'href="[^"]*bibliography\.html#([^"]+)"',
                page.read_text(encoding="utf-8"),
            )
        )
    assert linked, "no page links into the bibliography"
    missing = {
        anchor for anchor in linked if anchor.removeprefix("cite-") not in entries
    }
    assert not missing, (
        f"citation links to anchors the bibliography does not have: {sorted(missing)}"
    )


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_object_reprs_on_the_page(site, notebook):
    """A plotting cell's last value (a Legend, a Text) is hidden by its final `;` on the page too."""
    html = (site / "notebooks" / f"{notebook.stem}.html").read_text(encoding="utf-8")
    reprs = re.findall(r"(?:&lt;|<)matplotlib\.[\w.]+ (?:object )?at 0x[0-9a-f]+", html)
    assert not reprs, f"object reprs shown as output: {reprs[:3]}"


def test_every_page_offers_the_whole_book_as_a_pdf_if_built_and_serves_math_itself(
    site,
):
    """The download menu offers the whole book where the site has the PDF (`make pdf` publishes it), and nowhere
    links a PDF the build did not make."""
    pages = sorted(site.glob("notebooks/*.html")) + sorted(site.glob("book/*.html"))
    has_pdf = (site / "residual-connections.pdf").exists()
    for page in pages:
        # pages one folder down: the PDF that `make pdf` writes to the site's root
        linked = "../residual-connections.pdf" in parse(page).hrefs
        assert linked == has_pdf, f"{page.relative_to(site)}: " + (
            "no link to the book's PDF"
            if has_pdf
            else "links a PDF this build did not make"
        )
        text = page.read_text(encoding="utf-8")
        assert ("btn-download-book-pdf-button" in text) == has_pdf, (
            f"{page.relative_to(site)}: the download menu and the PDF disagree"
        )
        mathjax = re.findall(r'<script[^>]+src="([^"]*mathjax[^"]*)"', text, re.I)
        has_math = 'class="math' in text
        assert bool(mathjax) == has_math and all(
            "_static/mathjax/" in src for src in mathjax
        ), (
            f"{page.relative_to(site)}: MathJax must come from the site's own files, not {mathjax}"
        )
    assert (site / "_static" / "mathjax" / "tex-mml-chtml.js").exists()
    assert list(
        (site / "_static" / "mathjax" / "output" / "chtml" / "fonts").rglob("*.woff")
    )


def test_every_arxiv_id_in_the_bibliography_is_a_link(site):
    """A reader can open each preprint the bibliography names: every arXiv id it prints links to its abstract, and every DOI to doi.org."""
    text = (site / "book" / "bibliography.html").read_text(encoding="utf-8")
    ids = set(re.findall(r"arXiv:(\d{4}\.\d{4,5})", text))
    linked = set(re.findall(r'href="https://arxiv\.org/abs/(\d{4}\.\d{4,5})"', text))
    assert ids and not ids - linked, f"arXiv ids without a link: {sorted(ids - linked)}"
    dois = set(re.findall(r"doi:(10\.\d{4,9}/[^\s<]+)", text))
    linked = set(re.findall(r'href="https://doi\.org/(10\.\d{4,9}/[^"]+)"', text))
    assert not dois - linked, f"DOIs without a link: {sorted(dois - linked)}"
