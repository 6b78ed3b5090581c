"""Shared helpers for the book's tests; paths and settings come from booktools/settings.py."""

import json
import os
import re
from pathlib import Path

import nbformat
import pytest

from booktools.build.nbval_cache import pytest_addoption  # noqa: F401  (--book-cache)
from booktools.settings import (  # noqa: F401
    NOTEBOOKS,
    ROOT,
    TEST_SEED,
    colab_url,
    headless,
    load_config,
)

headless()  # kernels the tests start run headless: no bars, widgets' far corners checked

# Earlier student versions, which tests/test_hidden_tests.py grades: data, not notebooks for nbval to run
collect_ignore = ["editions"]


def read_notebook(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def run_alone(nb: nbformat.NotebookNode, folder: Path) -> nbformat.NotebookNode:
    """Execute `nb` in place, headless, in `folder` (as Colab opens a single file); a cell that raises leaves its
    error as an output and the run goes on."""
    from booktools.execute import run_notebook

    headless()
    run_notebook(nb, folder, allow_errors=True)
    return nb


MARKS = Path(__file__).parent / "marks"


def same_marks_as_recorded(name: str, got) -> None:
    """The grader gives every mutant and crafted submission the marks, holds and reasons recorded in
    tests/marks/NAME.json, which are what it gave before its parts were moved (issue #38): a change to the grader
    that changes one is on purpose, and records them again (RC_RECORD_MARKS=1) saying which. Under another torch
    than the pinned one (`make newest`), a reason that quotes one of torch's error messages may be worded otherwise:
    there the marks and holds are compared, not the reasons."""
    path = MARKS / f"{name}.json"
    if os.environ.get("RC_RECORD_MARKS"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
    recorded = json.loads(path.read_text())
    if not pinned_torch():
        recorded, got = ([without_reasons(r) for r in rows] for rows in (recorded, got))
    changed = [f"{was} -> {now}" for was, now in zip(recorded, got) if was != now]
    assert len(recorded) == len(got) and not changed, (
        f"{name}: the grader's marks differ from those recorded in {path.name}:\n"
        + "\n".join(changed or [f"{len(recorded)} recorded, {len(got)} now"])
    )


def pinned_torch() -> bool:
    """Whether this environment has the torch that requirements.txt pins."""
    from importlib.metadata import version

    pins = (ROOT / "requirements.txt").read_text().splitlines()
    pin = next(
        line.split("==")[1].split()[0] for line in pins if line.startswith("torch==")
    )
    return version("torch").split("+")[0] == pin


def without_reasons(row: dict) -> dict:
    """A recorded mark without its reason, but with whether it was held (a hold's reason is the scan's, not torch's)."""
    reason = row.get("reason", "")
    return {k: v for k, v in row.items() if k != "reason"} | {
        "held": reason.startswith("held")
    }


def pytest_configure(config):
    """The --book-cache hooks must see the notebooks' nbval items, which lie outside tests/ and so outside this
    conftest's hooks: register them as a plugin of the whole session."""
    from booktools.build import nbval_cache

    config.pluginmanager.register(nbval_cache.RECORDER, "nbval_cache")
    config.addinivalue_line(
        "markers",
        "grading: checks grading, which runs in .venv, so `make colab-check` leaves it out (tests/test_notebooks_run.py)",
    )


# .ci/run (and GitHub Actions) set CI: there, what a test needs and cannot find fails it instead of skipping it
IN_CI = bool(os.environ.get("CI"))


def unavailable(why: str):
    """Skip a test whose machine lacks what it needs, with `why`; under CI, fail it."""
    if IN_CI:
        pytest.fail(f"{why}, and CI requires it")
    pytest.skip(why)


# `make test NB=notebooks/05_pre_vs_post_norm.ipynb`: the chapters to test (all when empty)
CHAPTERS = {Path(p).stem for p in os.environ.get("RC_CHAPTERS", "").split()}
CHAPTER_ID = re.compile(r"(?<![\w])(\d\d_[a-z0-9_]+)")


def pytest_collection_modifyitems(config, items):
    """With RC_CHAPTERS (make test NB=...), a test parametrised by chapter runs for those chapters only; the
    whole-book tests run as always."""
    if not CHAPTERS:
        return
    keep, drop = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        found = CHAPTER_ID.findall(callspec.id) if callspec else []
        (drop if found and not set(found) & CHAPTERS else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def tags(cell) -> list:
    return cell.metadata.get("tags", [])


@pytest.fixture(params=NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def notebook_path(request) -> Path:
    return request.param


# the themes the browser test's ids may carry beside a page's name (tests/test_browser.py)
BROWSER_THEMES = {"light", "dark", "phone"}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`make test` and `make browser` run on two workers with --dist loadscope. A notebook's nbval cells share one
    kernel, so each notebook stays one unit of work. In the browser test a page is the unit: every check of one page
    runs on the worker that opened it (each worker keeps the pages it opened), light, dark and phone alike. A test
    parametrised by chapter (one chapter's papermill run) is a unit per chapter, so that the runs of one test
    function spread over both workers instead of queueing on one; the checks of one chapter's graded run
    (tests/test_notebooks_run.py) are one unit, on the worker that made the run. Every other parametrised
    test is one unit, so that a module fixture its cases share (a grading of toy submissions) is made once, not on
    each worker."""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class NotebookScopes(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if ".ipynb::" in nodeid:
                return nodeid.split("::", 1)[0]
            if "test_browser.py::" in nodeid and nodeid.endswith("]"):
                params = nodeid[nodeid.index("[") + 1 : -1].split("-")
                return "page " + next(p for p in params if p not in BROWSER_THEMES)
            if nodeid.endswith("]") and "[" in nodeid:
                test, params = nodeid[:-1].split("[", 1)
                if (
                    "test_notebooks_run.py::" in test
                ):  # the checks of one chapter's run: where it was made
                    return f"{test.split('::')[0]}[{params}]"
                if re.match(r"\d\d_", params):  # one chapter's run
                    return nodeid
                return test
            return super()._split_scope(nodeid)

    return NotebookScopes(config, log)


def solution_count(nb) -> int:
    return sum(c.source.count("### BEGIN SOLUTION") for c in nb.cells)


# --- toy chapters for the grader's tests ---


def toy_notebook(*codes) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in codes])


def toy_chapter(
    tmp_path_factory, hidden_source: str, template: list, reference: list
) -> dict:
    """A toy chapter's hidden tests, student version and instructor notebook, as `grade`'s options."""
    hidden = tmp_path_factory.mktemp("hidden")
    (hidden / "99_toy.py").write_text(hidden_source)
    folder = tmp_path_factory.mktemp("toy")
    nbformat.write(toy_notebook(*template), folder / "template.ipynb")
    nbformat.write(toy_notebook(*reference), folder / "reference.ipynb")
    return {
        "hidden": hidden,
        "template": folder / "template.ipynb",
        "reference": folder / "reference.ipynb",
    }


def stub(number: int, name: str) -> str:
    return f"def {name}(x):\n    raise NotImplementedError('Exercise {number} ({name}): replace this line.')"


def built_site(sources: list) -> Path:
    """_build/html, as `make book` left it: a failure under RC_REQUIRE_SITE (or a skip) where there is none, and
    `unavailable` where a page is older than its source."""
    html = ROOT / "_build" / "html"
    if not (html / "index.html").exists():
        if os.environ.get("RC_REQUIRE_SITE"):
            pytest.fail("no built site in _build/html: run `make book`")
        pytest.skip("no built site yet (make book builds it)")
    for source in sources:
        page = html / source.relative_to(ROOT).with_suffix(".html")
        if page.exists() and page.stat().st_mtime < source.stat().st_mtime:
            unavailable(
                f"{page.relative_to(ROOT)} is older than {source.relative_to(ROOT)}: run `make book`"
            )
    return html
