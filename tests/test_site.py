"""Checks on the built site, _build/html. `make book` runs them right after building (RC_REQUIRE_SITE=1);
under `make test` they are skipped when no site has been built yet."""
import os
import re
from html.parser import HTMLParser

import pytest

from conftest import NOTEBOOKS, ROOT, colab_url, read_notebook, tags

HTML = ROOT / "_build" / "html"


@pytest.fixture(scope="module")
def site():
    if not (HTML / "index.html").exists():
        if os.environ.get("RC_REQUIRE_SITE"):
            pytest.fail("no built site in _build/html: run `make book`")
        pytest.skip("no built site yet (make book builds it)")
    return HTML


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
    assert colab and set(colab) == {colab_url(notebook.name)}, colab
    assert any(h.endswith(f"_sources/notebooks/{notebook.name}") for h in hrefs), "download link to the .ipynb"
    assert (site / "_sources" / "notebooks" / notebook.name).exists()


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_page_has_figures_citations_and_collapsed_solutions(site, notebook):
    page = parse(site / "notebooks" / f"{notebook.stem}.html")
    figures = [img for img in page.images if img.get("src", "").startswith("../_images/")]
    assert figures, "the executed notebook's figures are on the page"
    assert all(len(img.get("alt", "")) > 20 for img in figures), "every figure has alt text"
    assert any("bibliography.html#" in h for h in page.hrefs), "citations link to the bibliography"
    solutions = sum("solution" in tags(c) for c in read_notebook(notebook).cells)
    collapsed = [d for d in page.details if "open" not in d]
    assert len(collapsed) >= solutions, "each solution is a collapsed dropdown"


def test_reference_pages(site):
    bibliography = (site / "book" / "bibliography.html").read_text(encoding="utf-8")
    assert "deep residual learning for image recognition" in bibliography.lower()
    glossary = (site / "book" / "glossary.html").read_text(encoding="utf-8")
    for term in ["residual branch", "shortcut", "identity mapping", "pre-norm", "residual stream", "rank collapse"]:
        assert re.search(rf'<dt id="term-{term.replace(" ", "-")}"', glossary, re.I), term
    intro = parse(site / "book" / "intro.html")
    for notebook in NOTEBOOKS:
        assert any(h.endswith(f"notebooks/{notebook.stem}.html") for h in intro.hrefs), f"the map links {notebook.stem}"
