"""The built site, _build/html, in a real browser: Debian's Chromium driven by Playwright, on every page of the
table of contents and the search page. `make browser` runs it (RC_BROWSER=1); everywhere else it is skipped.

MathJax is the site's own (book/_static/mathjax), so math is typeset offline: the test fails any page that asks a CDN
for it. A file a page asks of jsDelivr is served from an npm mirror of the same package at the version the URL asks
for (tests/browser/package.json, installed in .venv/cdn-mirror), so the test runs offline on the files a reader's
browser gets; no page asks for one since the live widgets left the site. Every other request off the local server is
refused, and fails the test unless UNSERVED names it."""

import functools
import html
import json
import os
import re
import threading
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import nbformat
import pytest

from booktools.settings import MIN_TEXT_PX, book_pages, smallest_text_px
from conftest import ROOT, colab_url, read_notebook, tags

if os.environ.get("RC_BROWSER") != "1":
    pytest.skip("the browser test runs under `make browser`", allow_module_level=True)

from playwright.sync_api import expect, sync_playwright  # noqa: E402

HTML = ROOT / "_build" / "html"
SCREENSHOTS = ROOT / "_build" / "screenshots"
MIRROR = ROOT / ".venv" / "cdn-mirror" / "node_modules"
CHROMIUM = "/usr/bin/chromium"
# As root, on a closed network: without the background-networking flags Chromium keeps calling Google's hosts.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 900}
# a phone held upright (the theme's narrow layout)
PHONE = {"width": 390, "height": 844}
# jsDelivr serves npm packages file for file: /npm/<package>@<version>/<path>.
JSDELIVR = re.compile(
    r"https://cdn\.jsdelivr\.net/npm/(?P<package>(@[^/@]+/)?[^/@]+)@(?P<version>[^/]+)/(?P<path>[^?#]+)"
)
COLAB_BADGE = "https://colab.research.google.com/assets/colab-badge.svg"
# External requests the test may leave unserved, each with why. Any other one fails the page.
UNSERVED = {
    COLAB_BADGE: "the Open-in-Colab badge image: Colab hosts it and no package registry has it",
}
# axe-core (pinned in tests/browser/package.json) checks every page, light and dark (AXE_VIEWS), against
# WCAG 2.1 A and AA and axe's best practices; a violation of any impact fails the page. axe's experimental rule
# label-content-name-mismatch (a control's visible text must be part of its accessible name) is switched on on purpose:
# it is what made the solution toggles say "Show solution".
AXE = MIRROR / "axe-core" / "axe.min.js"
AXE_OPTIONS = {
    "runOnly": {
        "type": "tag",
        "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"],
    },
    "rules": {"label-content-name-mismatch": {"enabled": True}},
}
# Violations that come from the theme and that the book's own CSS and JS cannot fix yet, each with why.
KNOWN_A11Y = {}
# Console errors of the theme and Sphinx that the site cannot fix by itself yet, each with why; any other one fails.
# (Sphinx 7.4.7's doubled sphinx-thebe configuration, "Identifier 'THEBE_JS_URL' has already been declared", was one:
# book/_ext/single_scripts.py now writes each script once.)
KNOWN_ERRORS = {}
# what a live ipywidgets control leaves on a page: its views, or the text of its button
LIVE_CONTROL = ".jupyter-widgets, .widget-subarea, .widget-button"
SEARCH_TERM = "shortcut"  # a glossary term
# the four readers of the `contexts` fixture: laptop (1,280 px) and phone (390 px), light and dark
THEMES = ["light", "dark", "phone", "phone-dark"]
# A dark page is laid out exactly as the light one (the theme changes colours only), so checks of size and place run
# at the two widths in light; axe-core, which checks colours too, runs at both widths in light and in dark at 1,280 px
# (phone-dark has dark's colours and the phone's layout, each checked). Every view still loads and is photographed.
LAYOUTS = ["light", "phone"]
AXE_VIEWS = ["light", "dark", "phone"]
# WCAG 2.2, 2.5.8: a control is at least 24 x 24 CSS px
MIN_TARGET_PX = 24


TOC = book_pages()
PAGES = [f"{file}.html" for file in TOC] + ["search.html"]
CHAPTERS = [file for file in TOC if (ROOT / f"{file}.ipynb").exists()]


def page_name(path: str) -> str:
    return Path(path).stem


@dataclass
class Visit:
    """A page as a reader's browser left it once it settled, and what went wrong on the way."""

    page: object
    errors: list = field(default_factory=list)  # console errors and uncaught exceptions
    unserved: list = field(default_factory=list)  # external requests refused, with why


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def site_url():
    """_build/html on a free port of 127.0.0.1."""
    if not (HTML / "index.html").exists():
        pytest.fail("no built site in _build/html: run `make book`")
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(HTML))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def contexts(browser):
    """A light and a dark reader on a laptop, and the same two on a phone: the theme reads the reader's choice from
    localStorage `mode`."""
    made = {
        "light": browser.new_context(viewport=VIEWPORT),
        "dark": browser.new_context(viewport=VIEWPORT),
        "phone": browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True),
        "phone-dark": browser.new_context(
            viewport=PHONE, is_mobile=True, has_touch=True
        ),
    }
    for theme in ("dark", "phone-dark"):
        made[theme].add_init_script(
            "localStorage.setItem('mode', 'dark'); localStorage.setItem('theme', 'dark');"
        )
    yield made
    for context in made.values():
        context.close()


@pytest.fixture(scope="module")
def open_page(site_url, contexts):
    """open_page(path, theme) visits a page once, keeps its tab for every later check, and brings it to the front
    (Chromium throttles a background tab's animation frames, which Playwright's clicks wait for)."""
    visited = functools.cache(
        lambda path, theme: visit(contexts[theme], site_url, path)
    )

    def open_(path: str, theme: str = "light") -> Visit:
        seen = visited(path, theme)
        seen.page.bring_to_front()
        return seen

    return open_


def mirror_file(url: str) -> Path:
    """The npm mirror's copy of a CDN file; LookupError says why there is none."""
    match = JSDELIVR.fullmatch(url)
    if not match:
        raise LookupError(
            "not a jsDelivr npm address, so no registry package is the same file"
        )
    package = MIRROR / match["package"]
    if not (package / "package.json").exists():
        raise LookupError(
            f"{match['package']} is not in the mirror (tests/browser/package.json; `make browser`)"
        )
    installed, wanted = (
        json.loads((package / "package.json").read_text())["version"],
        match["version"],
    )
    if not (installed == wanted or installed.startswith(f"{wanted}.")):
        raise LookupError(
            f"the page asks for {match['package']}@{wanted}, the mirror has {installed}"
        )
    file = (package / match["path"]).resolve()
    if not (file.is_relative_to(package.resolve()) and file.is_file()):
        raise LookupError(f"{match['package']}@{installed} has no {match['path']}")
    return file


def serve_external(route, unserved: list):
    """Answer a request off the local server from the mirror, or refuse it and note it."""
    try:
        file = mirror_file(route.request.url)
    except LookupError as why:
        unserved.append(
            route.request.url
            if route.request.url in UNSERVED
            else f"{route.request.url} ({why})"
        )
        route.abort()
        return
    # the CDNs allow any origin
    route.fulfill(path=file, headers={"access-control-allow-origin": "*"})


def visit(context, site: str, path: str) -> Visit:
    """Open a page, record its errors and external requests, and wait until it has rendered."""
    page = context.new_page()
    seen = Visit(page)
    page.on("console", lambda message: record_console_error(message, seen.errors))
    page.on("pageerror", lambda error: seen.errors.append(f"uncaught: {error}"))
    page.route(
        lambda url: not url.startswith(site),
        lambda route: serve_external(route, seen.unserved),
    )
    page.goto(site + path, wait_until="networkidle")
    page.evaluate("() => window.MathJax?.startup?.promise")  # typesetting done
    return seen


def record_console_error(message, errors: list):
    """Console errors, less the failed load of an image UNSERVED lets go (Chromium logs each refused request)."""
    url = message.location.get("url")
    if message.type == "error" and url not in UNSERVED:
        errors.append(
            f"{message.text}: {url}"
            if message.text.startswith("Failed to load resource")
            else message.text
        )


def notebook(chapter: str) -> nbformat.NotebookNode:
    return read_notebook(ROOT / f"{chapter}.ipynb")


def shown_cells(nb) -> list:
    """The code cells whose output the book shows."""
    return [
        c
        for c in nb.cells
        if c.cell_type == "code" and not {"remove-output", "remove-cell"} & set(tags(c))
    ]


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("path", PAGES, ids=map(page_name, PAGES))
def test_page_loads_without_errors_or_unexpected_requests(open_page, path, theme):
    """No console error, no uncaught exception, no request off the site, all math typeset: on a laptop and a phone,
    light and dark (the page's scripts run by width: the figure view, the theme's narrow layout)."""
    seen = open_page(path, theme)
    unexpected = [url for url in seen.unserved if url not in UNSERVED]
    assert not unexpected, (
        f"external requests neither mirrored (tests/browser/package.json) nor in UNSERVED: {unexpected}"
    )
    errors = [error for error in seen.errors if error not in KNOWN_ERRORS]
    assert not errors, f"console errors or uncaught exceptions: {errors}"
    untypeset = seen.page.locator(".math:not(:has(mjx-container))").count()
    assert untypeset == 0, f"{untypeset} formulas left untypeset by MathJax"


@pytest.mark.parametrize("path", PAGES, ids=map(page_name, PAGES))
def test_images_load_and_have_alt_text(open_page, path):
    images = open_page(path).page.eval_on_selector_all(
        "img",
        """images => images.map(i => ({
        src: i.src, alt: i.alt.trim(), loaded: i.complete && i.naturalWidth > 0}))""",
    )
    badges = [i["src"] for i in images if i["alt"] == "Open In Colab"]
    assert set(badges) <= {COLAB_BADGE}, "the Colab badge is Colab's own image"
    broken = [i["src"] for i in images if not i["loaded"] and i["src"] != COLAB_BADGE]
    assert not broken, f"images that did not load: {broken}"
    unlabelled = [i["src"][:120] for i in images if not i["alt"]]
    assert not unlabelled, f"images without alt text: {unlabelled}"


@pytest.mark.parametrize("path", PAGES, ids=map(page_name, PAGES))
def test_light_screenshot(open_page, path):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot = SCREENSHOTS / f"{page_name(path)}.png"
    shot.unlink(missing_ok=True)
    open_page(path).page.screenshot(path=shot, full_page=True)
    png = shot.read_bytes()
    width, height = (
        int.from_bytes(png[16:20], "big"),
        int.from_bytes(png[20:24], "big"),
    )  # the IHDR chunk
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and width == VIEWPORT["width"], (
        f"{shot} is not a {VIEWPORT['width']} px screenshot"
    )
    assert height >= VIEWPORT["height"] // 2, (
        f"{shot} is {height} px tall: the page rendered (almost) nothing"
    )


@pytest.mark.parametrize("path", PAGES, ids=map(page_name, PAGES))
def test_dark_mode_and_readable_figures(open_page, path):
    """The theme's dark mode takes effect, and each figure keeps the opaque white background it was drawn on."""
    seen = open_page(path, "dark")
    assert seen.page.evaluate("document.documentElement.dataset.theme") == "dark"
    (SCREENSHOTS / "dark").mkdir(parents=True, exist_ok=True)
    seen.page.screenshot(
        path=SCREENSHOTS / "dark" / f"{page_name(path)}.png", full_page=True
    )
    corners = seen.page.eval_on_selector_all(
        ".cell_output img[src$='.png']",
        """images => images.map(i => {
        const canvas = document.createElement('canvas');
        const context = canvas.getContext('2d');
        context.drawImage(i, 0, 0, 1, 1, 0, 0, 1, 1);
        return [i.src, Array.from(context.getImageData(0, 0, 1, 1).data)];
    })""",
    )
    dim = [src for src, rgba in corners if min(rgba[:3]) < 250 or rgba[3] != 255]
    assert not dim, (
        f"figures whose top-left pixel is not opaque white, unreadable on the dark page: {dim}"
    )


@pytest.mark.parametrize("theme", ["phone", "phone-dark"])
@pytest.mark.parametrize("path", PAGES, ids=map(page_name, PAGES))
def test_phone_screenshot_and_no_sideways_scrolling(open_page, path, theme):
    """At 390 px the page fits the screen: only code, tables and wide equations scroll, inside their own boxes.
    Screenshots in _build/screenshots/phone (and phone/dark)."""
    page = open_page(path, theme).page
    folder = SCREENSHOTS / "phone" / ("dark" if theme == "phone-dark" else "")
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=folder / f"{page_name(path)}.png", full_page=True)
    overflow = page.evaluate(
        """() => {
        const width = document.documentElement.clientWidth;
        const wide = [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > width + 1
            && getComputedStyle(e).position !== 'fixed' && !e.closest('.bd-sidebar-primary, .bd-sidebar-secondary'));
        const outermost = wide.filter(e => !wide.includes(e.parentElement));
        return {scroll: document.documentElement.scrollWidth - width,
                wide: outermost.slice(0, 5).map(e => e.tagName.toLowerCase() + '.' + [...e.classList].join('.'))};
    }"""
    )
    assert overflow["scroll"] <= 1, (
        f"the page scrolls sideways by {overflow['scroll']} px at 390 px: {overflow['wide']}"
    )


@pytest.mark.parametrize("theme", AXE_VIEWS)
@pytest.mark.parametrize("path", PAGES, ids=map(page_name, PAGES))
def test_accessibility_with_axe(open_page, path, theme):
    """No axe-core violation of any impact (WCAG 2.1 A and AA, best practices), except KNOWN_A11Y, in AXE_VIEWS: at
    1,280 and 390 px, light and dark. (The last two it found, `region`, the book's title outside every landmark at 1,280 px,
    and chapter 08's `empty-table-header`, were moderate and minor: book/_static/a11y.js names the sidebar a landmark,
    the chapter's table has a header.)"""
    page = open_page(path, theme).page
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    violations = page.evaluate(
        """async options => (await axe.run(document, options)).violations.map(v => ({
            id: v.id, impact: v.impact, count: v.nodes.length,
            where: v.nodes.slice(0, 3).map(n => n.target.join(' ') + ': ' + (n.failureSummary || '').split('\\n')[1])}))""",
        AXE_OPTIONS,
    )
    found = [v for v in violations if v["id"] not in KNOWN_A11Y]
    assert not found, "accessibility violations:\n" + "\n".join(
        f"{v['id']} ({v['impact']}, {v['count']} elements): {v['where']}" for v in found
    )


@pytest.mark.parametrize("chapter", CHAPTERS, ids=map(page_name, CHAPTERS))
def test_every_notebook_figure_is_on_the_page(open_page, chapter):
    figures = sum(
        "image/png" in output.get("data", {})
        for cell in shown_cells(notebook(chapter))
        for output in cell.outputs
    )
    shown = open_page(f"{chapter}.html").page.locator(".cell_output img").count()
    assert shown >= figures, (
        f"the notebook has {figures} figures in shown outputs, the page {shown}"
    )


@pytest.mark.parametrize("chapter", CHAPTERS, ids=map(page_name, CHAPTERS))
def test_figure_text_is_legible_at_laptop_width(open_page, chapter):
    """At 1,280 px each figure's smallest text reads at MIN_TEXT_PX or more. A browser cannot read the text inside a
    PNG, so it is computed from what the notebooks' style sets (the smallest font, drawn at RETINA x FIG_DPI:
    booktools/settings.py) and the image's width on the page against its width in pixels. That no figure
    overflows a phone screen sideways is part of the phone test above."""
    shown = open_page(f"{chapter}.html").page.eval_on_selector_all(
        ".cell_output img[src$='.png']",
        "images => images.map(i => [i.src.split('/').pop(), i.getBoundingClientRect().width, i.naturalWidth])",
    )
    assert shown and all(natural for _, _, natural in shown), (
        "no figure on the page has loaded"
    )
    small = {
        src: round(smallest_text_px(width, natural), 1)
        for src, width, natural in shown
        if smallest_text_px(width, natural) < MIN_TEXT_PX
    }
    assert not small, (
        f"figures whose smallest text is under {MIN_TEXT_PX} px at 1,280 px (draw them FIG_WIDTH wide): {small}"
    )


@pytest.mark.parametrize("theme", ["light", "phone"])
@pytest.mark.parametrize("chapter", CHAPTERS, ids=map(page_name, CHAPTERS))
def test_figures_keep_their_shape(open_page, chapter, theme):
    """On a laptop and on a phone every figure keeps its width-to-height ratio: a retina PNG carries its shown size
    as an inline width and height, and without `height: auto` (custom.css) a narrow screen squashes it sideways."""
    shapes = open_page(f"{chapter}.html", theme).page.eval_on_selector_all(
        ".cell_output img[src$='.png']",
        """images => images.map(i => [i.src.split('/').pop(), i.getBoundingClientRect().width,
            i.getBoundingClientRect().height, i.naturalWidth, i.naturalHeight])""",
    )
    assert shapes, "no figure on the page"
    squashed = [
        src
        for src, width, height, natural_width, natural_height in shapes
        if abs(width / height - natural_width / natural_height)
        > 0.02 * natural_width / natural_height
    ]
    assert not squashed, f"figures drawn out of shape: {squashed}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=map(page_name, CHAPTERS))
def test_colab_and_download_buttons(open_page, chapter):
    page = open_page(f"{chapter}.html").page
    expected = colab_url(f"colab/{Path(chapter).name}.ipynb")
    launch = page.eval_on_selector_all(
        ".dropdown-launch-buttons a[href*='colab']", "links => links.map(a => a.href)"
    )
    badge = page.eval_on_selector_all(
        f"a:has(img[src='{COLAB_BADGE}'])", "links => links.map(a => a.href)"
    )
    assert launch == [expected], "the header's Launch-on-Colab button"
    student = colab_url(f"student/{Path(chapter).name}.ipynb")
    assert badge == [expected, student], (
        "the title cell's badge opens the chapter's Colab copy, the Exercises badge its student copy"
    )
    download = page.get_attribute(".btn-download-source-button", "href")
    assert download.endswith(f"{Path(chapter).name}.ipynb"), download
    response = page.request.get(page.url.rsplit("/", 1)[0] + "/" + download)
    assert response.status == 200, download
    nbformat.validate(nbformat.reads(response.text(), as_version=4))
    assert "{cite" not in response.text(), (
        "the download is the CommonMark copy, not the MyST source"
    )


@pytest.mark.parametrize("path", PAGES, ids=map(page_name, PAGES))
def test_no_page_shows_a_control_that_does_nothing(open_page, path):
    """The site has no kernel: a live widget there would be a slider and a Run Interact button that do nothing."""
    page = open_page(path).page
    assert page.locator(LIVE_CONTROL).count() == 0, "a live widget is on the page"
    assert page.get_by_role("button", name="Run Interact").count() == 0


def slider_frames(chapter: str) -> list:
    """[(values, texts)] of each kernel-free slider a chapter's notebook shows, in order, as the notebook asserted on
    them (the texts are the frames' captions, numbers included)."""
    found = []
    for cell in shown_cells(notebook(chapter)):
        for out in cell.get("outputs", []):
            page = out.get("data", {}).get("text/html", "")
            if 'class="rc-slider"' in page:
                found.append(slider_data(page))
    return found


def slider_data(page: str) -> tuple:
    """(values, texts) of the first slider in a piece of HTML."""
    texts = json.loads(re.search(r"texts = (\[.*?\]);", page)[1])
    values = json.loads(
        html.unescape(
            re.search(r'class="rc-slider"[^>]*data-values=\'(.*?)\'', page)[1]
        )
    )
    return values, texts


def page_sliders(chapter: str) -> list:
    """[(values, texts)] of each slider in the built page, as the run the page was built from computed them. The
    book executes each notebook (or takes it from its cache), so its numbers are this machine's, which can differ
    in the last digits from the committed outputs'."""
    page = (HTML / f"{chapter}.html").read_text()
    marker = '<div class="rc-slider"'  # in a code listing it would be escaped
    return [slider_data(marker + part) for part in page.split(marker)[1:]]


SLIDER_CHAPTERS = [c for c in CHAPTERS if slider_frames(c)]


@pytest.mark.parametrize(
    "chapter", SLIDER_CHAPTERS, ids=map(page_name, SLIDER_CHAPTERS)
)
def test_every_slider_works_from_the_keyboard(open_page, chapter):
    """Each kernel-free slider has a label, takes the keyboard's focus, and at each step shows the value, the frame
    and the caption (also the image's alt text) that the notebook computed for that value."""
    page = open_page(f"{chapter}.html").page
    sliders = page.locator(".rc-slider")
    expected = page_sliders(chapter)
    committed = slider_frames(chapter)
    assert sliders.count() == len(expected) == len(committed), (
        "every slider the notebook shows is on the page"
    )
    assert [values for values, _ in expected] == [values for values, _ in committed], (
        "the page's sliders step through the values the notebook's do"
    )
    for k, (values, texts) in enumerate(expected):
        slider = sliders.nth(k)
        control = slider.locator("input[type=range]")
        assert control.count() == 1, "the script made no control"
        label = slider.locator("label").text_content()
        assert label and texts[0].startswith(f"{label} = "), (label, texts[0])
        control.focus()
        page.keyboard.press("Home")
        frames = []
        for i, (value, text) in enumerate(zip(values, texts)):
            if i:
                page.keyboard.press("ArrowRight")
            assert slider.locator("output").text_content() == value
            assert slider.locator("p").text_content() == text
            image = slider.locator("img")
            assert image.get_attribute("alt") == text
            frames.append(image.get_attribute("src"))
        assert len(set(frames)) == len(frames), "each value shows a frame of its own"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=map(page_name, CHAPTERS))
def test_code_fits_its_box_at_laptop_width(open_page, chapter):
    """At 1,280 px no line of a chapter's code, collapsed cells included, scrolls its box sideways."""
    wide = open_page(f"{chapter}.html").page.evaluate(
        """() => {
        const closed = [...document.querySelectorAll('details:not([open])')];
        closed.forEach(d => d.open = true);
        const wide = [...document.querySelectorAll('.cell_input pre')]
            .filter(pre => pre.scrollWidth > pre.clientWidth + 1)
            .map(pre => pre.textContent.split('\\n').reduce((a, b) => b.length > a.length ? b : a));
        closed.forEach(d => d.open = false);
        return wide;
    }"""
    )
    assert not wide, (
        f"code boxes that scroll sideways at 1,280 px, longest line of each: {wide}"
    )


# Each output's widest part, in the page's order, where it is wider than the output's box (the text column) or
# scrolls sideways inside it. (MathJax draws a formula in a box a few pixels narrower than what it holds, which
# overflows nothing on screen: formulas count by their place on the page only. A caption's hidden "#" link, which
# the theme shows beside it on hover, does not count.)
WIDE_OUTPUTS = """() => [...document.querySelectorAll('.bd-article .cell_output')].flatMap((output, k) => {
    const right = output.getBoundingClientRect().right;
    const over = [output, ...output.querySelectorAll('*')].filter(e => getComputedStyle(e).visibility !== 'hidden'
        && (e.getBoundingClientRect().right > right + 1
            || (e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1 && !e.closest('.math, mjx-container'))));
    if (!over.length) return [];
    const width = Math.max(...over.map(e => Math.max(e.scrollWidth, e.getBoundingClientRect().width)));
    return [`output ${k + 1}, ${Math.round(width)} px in ${output.clientWidth}: `
        + output.innerText.trim().split('\\n')[0].slice(0, 80)];
})"""


@pytest.mark.parametrize("theme", LAYOUTS)
@pytest.mark.parametrize("chapter", CHAPTERS, ids=map(page_name, CHAPTERS))
def test_outputs_fit_the_column(open_page, chapter, theme):
    """No cell's output is wider than the text column or scrolls sideways inside its box, at 1,280 and 390 px
    (LAYOUTS): printed lines wrap at the column (custom.css), so every number the prose discusses is on screen."""
    wide = open_page(f"{chapter}.html", theme).page.evaluate(WIDE_OUTPUTS)
    assert not wide, "outputs wider than the text column:\n" + "\n".join(wide)


# The controls the book adds to the theme's, where a reader taps: the sliders' tracks, the figures that open full size
# (a figure's link, measured by its image, or the button around a slider's frame), the bars of folded code and of
# solutions, and the Colab badges (a Colab link in a sentence is exempt, as WCAG exempts inline links). The figure view's Close button is measured where it opens (test_figures_are_legible_on_a_phone...).
BOOK_CONTROLS = (
    ".rc-slider input[type=range], a.rc-figure-link > img, button.rc-figure-open, .bd-article details > summary,"
    " .bd-article a[href^='https://colab.research.google.com/']:has(> img)"
)


def target_sizes(page, selector: str) -> list:
    """[(what, width, height)] of each element `selector` finds that is on screen (a bar inside a closed run is not)."""
    return page.eval_on_selector_all(
        selector,
        """controls => controls.map(e => [e, e.getBoundingClientRect()]).filter(([, r]) => r.width && r.height)
            .map(([e, r]) => [e.tagName.toLowerCase() + '.' + [...e.classList].join('.') + ' '
                + (e.innerText || e.alt || e.querySelector('img')?.alt || '').trim().split('\\n')[0].slice(0, 50), r.width, r.height])""",
    )


@pytest.mark.parametrize("theme", LAYOUTS)
@pytest.mark.parametrize("path", PAGES, ids=map(page_name, PAGES))
def test_touch_targets_are_at_least_24_px(open_page, path, theme):
    """Each control the book adds (BOOK_CONTROLS) is at least MIN_TARGET_PX x MIN_TARGET_PX CSS px (WCAG 2.2, 2.5.8),
    at 1,280 and 390 px (LAYOUTS); a chapter has them all but sliders (not every chapter has one)."""
    page = open_page(path, theme).page
    sizes = target_sizes(page, BOOK_CONTROLS)
    small = [
        f"{what}: {width:.0f} x {height:.0f} px"
        for what, width, height in sizes
        if min(width, height) < MIN_TARGET_PX
    ]
    assert not small, f"controls under {MIN_TARGET_PX} x {MIN_TARGET_PX} px: {small}"
    if path.removesuffix(".html") in CHAPTERS:
        for kind in ("a.rc-figure-link", "details.hide > summary"):
            assert page.locator(kind).count(), f"the chapter has no {kind}"


@pytest.mark.parametrize("theme", ["phone"])
@pytest.mark.parametrize("chapter", CHAPTERS, ids=map(page_name, CHAPTERS))
def test_figures_are_legible_on_a_phone_or_open_full_size(open_page, chapter, theme):
    """At 390 px each figure's smallest text (computed as in test_figure_text_is_legible_at_laptop_width) reads at
    MIN_TEXT_PX or more, or a tap on the figure, or Enter on it, opens a view where it does: figures.js shows the figure
    at the size it was drawn for, scrolling sideways. The view closes with Escape or its Close button (a touch target
    of MIN_TARGET_PX or more) and hands the keyboard's focus back to the figure, which shows a focus ring."""
    page = open_page(f"{chapter}.html", theme).page
    figures = page.locator(".cell_output img")
    assert figures.count(), "no figure on the page"
    view = page.locator("dialog.rc-figure-view")
    unreadable, keyboard_tried = [], False
    for k in range(figures.count()):
        image = figures.nth(k)
        name, width, natural = image.evaluate(
            """i => [i.src.startsWith('data:') ? 'the slider frame "' + i.alt.slice(0, 40) + '..."'
                : i.src.split('/').pop(), i.getBoundingClientRect().width, i.naturalWidth]"""
        )
        if smallest_text_px(width, natural) >= MIN_TEXT_PX:
            continue
        opener = image.locator("xpath=ancestor::*[self::a or self::button][1]")
        if not opener.count():
            unreadable.append(
                f"{name}: {smallest_text_px(width, natural):.1f} px, and it opens no view"
            )
            continue
        by_keyboard, keyboard_tried = not keyboard_tried, True
        if by_keyboard:
            opener.focus()
            page.keyboard.press("Enter")
        else:
            opener.tap()
        expect(view).to_be_visible()
        shown = view.locator("img")
        assert shown.evaluate("i => i.src") == image.evaluate("i => i.src"), (
            f"{name}: the view shows another image"
        )
        view_width, view_natural = shown.evaluate(
            "async i => { await i.decode(); return [i.getBoundingClientRect().width, i.naturalWidth]; }"
        )
        if smallest_text_px(view_width, view_natural) < MIN_TEXT_PX:
            unreadable.append(
                f"{name}: {smallest_text_px(view_width, view_natural):.1f} px in its full-size view"
            )
        close = view.get_by_role("button", name="Close")
        ((_, close_width, close_height),) = target_sizes(
            page, "dialog.rc-figure-view .rc-figure-close"
        )
        assert min(close_width, close_height) >= MIN_TARGET_PX, (
            "the view's Close button is a small target"
        )
        if by_keyboard:
            page.keyboard.press("Escape")
        else:
            close.tap()
        expect(view).to_be_hidden()
        assert opener.evaluate("e => e === document.activeElement"), (
            f"{name}: focus did not come back to the figure"
        )
        if by_keyboard:
            ring = opener.evaluate(
                """e => { const s = getComputedStyle(e.matches('a') ? e.querySelector('img') : e);
                    return s.outlineStyle === 'none' ? 0 : parseFloat(s.outlineWidth); }"""
            )
            assert ring >= 2, f"{name}: no focus ring on the figure the keyboard is on"
    assert not unreadable, (
        f"figures whose smallest text is under {MIN_TEXT_PX} px at 390 px: {unreadable}"
    )


@pytest.mark.parametrize("chapter", CHAPTERS, ids=map(page_name, CHAPTERS))
def test_solutions_are_collapsed_until_clicked(open_page, chapter):
    hidden = sum("hide-input" in tags(cell) for cell in shown_cells(notebook(chapter)))
    dropdowns = open_page(f"{chapter}.html").page.locator(
        ".cell.tag_hide-input > details"
    )
    assert hidden > 0 and dropdowns.count() == hidden, (
        "one dropdown per hide-input cell"
    )
    for dropdown in dropdowns.all():
        source = dropdown.locator(".cell_input")
        # a cell in a run of adjacent folded cells opens with its run's one bar, and then shows its code (folds.js)
        run = dropdown.locator("xpath=ancestor::details[1]")
        bar = (run if run.count() else dropdown).locator(":scope > summary")
        if not run.count():
            assert not dropdown.evaluate("details => details.open")
        expect(source).to_be_hidden()
        bar.click()
        expect(source).to_be_visible()
        bar.click()  # closed again, as the reader found it
        expect(source).to_be_hidden()


@pytest.mark.parametrize("chapter", CHAPTERS, ids=map(page_name, CHAPTERS))
def test_adjacent_folded_cells_share_one_bar(open_page, chapter):
    """A run of adjacent folded cells without output (setup, imports, figure style, ...) reads as one bar, "Show
    setup, import, ... code (N cells)" (folds.js), not a stack of identical ones; from the keyboard, Enter opens it
    onto every cell of the run and Space folds it again."""
    page = open_page(f"{chapter}.html").page
    stacked = page.evaluate(
        """() => {
        const folded = c => c?.matches('div.cell.tag_hide-input') && !c.querySelector('.cell_output > *');
        return [...document.querySelectorAll('.bd-article div.cell.tag_hide-input')]
            .filter(c => folded(c) && folded(c.nextElementSibling) && !c.closest('.rc-fold-run'))
            .map(c => c.querySelector('summary').innerText.trim());
    }"""
    )
    assert not stacked, (
        f"folded cells stacked bar on bar, each with a bar of its own: {stacked}"
    )
    runs = page.locator(".rc-fold-run > details")
    assert runs.count(), (
        "the chapter opens with a run of folded cells (setup, imports, style): one bar"
    )
    for run in runs.all():
        bar = run.locator(":scope > summary")
        cells = run.locator(":scope > div.cell.tag_hide-input")
        label = bar.inner_text().strip()
        assert re.fullmatch(rf"Show .+ code \({cells.count()} cells\)", label), label
        sources = run.locator(".cell_input")
        bar.focus()
        page.keyboard.press("Enter")
        for k in range(cells.count()):
            expect(sources.nth(k)).to_be_visible()
        assert bar.inner_text().strip().startswith("Hide ")
        page.keyboard.press(" ")  # folded again, as the reader found it
        for k in range(cells.count()):
            expect(sources.nth(k)).to_be_hidden()


@pytest.fixture(scope="module")
def bibliography_ids(open_page):
    return set(
        open_page("book/bibliography.html").page.eval_on_selector_all(
            "[id]", "es => es.map(e => e.id)"
        )
    )


@pytest.mark.parametrize("chapter", CHAPTERS, ids=map(page_name, CHAPTERS))
def test_citations_link_to_bibliography_entries(
    open_page, site_url, bibliography_ids, chapter
):
    links = open_page(f"{chapter}.html").page.eval_on_selector_all(
        ".bibtex-citation a", "as => as.map(a => a.href)"
    )
    assert links, "the chapter cites its sources"
    bibliography = f"{site_url}book/bibliography.html#"
    elsewhere = [link for link in links if not link.startswith(bibliography)]
    assert not elsewhere, (
        f"citations that do not link to the bibliography page: {elsewhere}"
    )
    missing = [
        link
        for link in links
        if link.removeprefix(bibliography) not in bibliography_ids
    ]
    assert not missing, f"citations of entries the bibliography page lacks: {missing}"


def test_search_finds_the_glossary(open_page):
    seen = open_page(f"search.html?q={SEARCH_TERM}")
    expect(
        seen.page.locator(
            "#search-results ul.search li a[href*='book/glossary.html']"
        ).first
    ).to_be_attached()
    assert not [error for error in seen.errors if error not in KNOWN_ERRORS], (
        seen.errors
    )
