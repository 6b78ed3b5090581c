"""The book without its solutions (`make book SOLUTIONS=0`, booktools/build/no_solutions.py): no solution's code and no
model answer in what it builds, while the normal book has them all, so that each check can fail.

The whole book, built from the chapters' committed outputs with execution off, takes about 20-30 s on the 2-core
machine, so `test_built_site_without_solutions` builds it in a temporary folder; after `make book SOLUTIONS=0`
(RC_NO_SOLUTIONS_SITE=1) it checks _build/html-no-solutions instead."""

import os
import re

import nbformat
import pytest

from booktools.build import no_solutions
from booktools.build.exercise_table import rows
from booktools.settings import STUDENT_DIR
from conftest import (
    NOTEBOOKS,
    ROOT,
    built_site,
    read_notebook,
    solution_count,
)

INSTRUCTORS = ROOT / "book" / "instructors.md"
SITE = ROOT / "_build" / "html"
SHOW_SOLUTION = '<p class="collapsed admonition-title">Show solution</p>'


def text_of(nb) -> str:
    return no_solutions.squeeze(
        "\n".join(c.source + no_solutions._outputs(c) for c in nb.cells)
    )


def test_stripped_chapter_shows_no_solution(notebook_path):
    nb = read_notebook(notebook_path)
    regions = no_solutions.secret_regions([notebook_path])[notebook_path.stem]
    assert regions, "a chapter has solutions the rest of it does not show"
    before, stripped = text_of(nb), no_solutions.strip_notebook(nb)
    after = text_of(stripped)
    for region, squeezed in regions:
        assert squeezed in before, f"the chapter shows its solution {region!r}"
        assert squeezed not in after, f"the stripped chapter still shows {region!r}"
    assert "BEGIN SOLUTION" not in after
    stubs = [c for c in stripped.cells if no_solutions.is_solution(c)]
    assert sum(c.source.count("raise NotImplementedError(") for c in stubs) == (
        solution_count(nb)
    ), "each solution region becomes the student version's stub"
    for cell in stubs:
        assert not cell.outputs, "a stub has no outputs"
        assert "hide-input" not in cell.metadata.get("tags", []), (
            "the stub is shown, not folded under a Show solution toggle"
        )
        assert "code_prompt_show" not in cell.metadata.get("mystnb", {})
    checks = [c for c in stripped.cells if "self-check" in c.metadata.get("tags", [])]
    assert checks and not [c for c in checks if c.outputs], (
        "no self-check shows what the reference solution made it print"
    )
    links = re.findall(r"https://colab\.research\.google\.com/\S+", after)
    assert links and not [u for u in links if "/notebooks/colab/" in u], (
        "the chapter's Colab links open the student versions"
    )
    assert nbformat.writes(nb) == nbformat.writes(read_notebook(notebook_path)), (
        "stripping leaves the chapter it was given alone"
    )


def test_dropdowns_go_only_from_the_exercises():
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell(
                "## 1. A section\n\n```{dropdown} Answer\nin the lesson\n```\n"
            ),
            nbformat.v4.new_markdown_cell("## Exercises\n\nDo them."),
            nbformat.v4.new_markdown_cell(
                "### Exercise 1: a guess\n\n```{dropdown} Answer\na model answer\n```\nAfter."
            ),
            nbformat.v4.new_code_cell(
                "def f():\n    ### BEGIN SOLUTION\n    return 42\n    ### END SOLUTION\n",
                metadata={"tags": ["solution", "hide-input"]},
            ),
            nbformat.v4.new_markdown_cell(
                "## References\n\n```{dropdown} Kept\nx\n```"
            ),
        ]
    )
    stripped = no_solutions.strip_notebook(nb)
    text = "\n".join(c.source for c in stripped.cells)
    assert "in the lesson" in text and "Kept" in text
    assert "a model answer" not in text and "After." in text
    assert "return 42" not in text
    assert "raise NotImplementedError(" in text and "Exercise 1" in text


def test_instructors_page_marks_its_model_answers():
    page = INSTRUCTORS.read_text()
    blocks = no_solutions.MODEL_ANSWERS.findall(page)
    assert len(no_solutions.MODEL_ANSWERS.findall(page)) == 1, (
        "one block of model answers, between % BEGIN MODEL ANSWERS and % END MODEL ANSWERS"
    )
    block = no_solutions.MODEL_ANSWERS.search(page)[0]
    assert f":class: dropdown {no_solutions.MODEL_ANSWERS_CLASS}" in block, blocks
    written = [(c, n) for c, n, _, _, part, _, _ in rows() if part]
    assert written, "some exercises have a written part"
    for chapter, n in written:
        assert f"**`{chapter}`, exercise {n}.**" in block, (
            f"a model answer for the written part of {chapter}'s exercise {n}"
        )
    stripped = no_solutions.strip_page(page)
    assert not no_solutions.MODEL_ANSWERS.search(stripped)
    assert no_solutions.MODEL_ANSWERS_CLASS not in stripped
    assert no_solutions.LEFT_OUT in stripped
    for chapter, n in written:
        assert f"**`{chapter}`, exercise {n}.**" not in stripped


def test_leak_check_finds_every_solution_and_no_false_one(tmp_path):
    """`leaks` on a folder of the chapters as they are finds every solution the rest of its chapter does not
    show; on the same chapters stripped, none."""
    shown, stripped = tmp_path / "shown", tmp_path / "stripped"
    for folder in (shown, stripped):
        (folder / "notebooks").mkdir(parents=True)
    for path in NOTEBOOKS:
        nb = read_notebook(path)
        nbformat.write(nb, shown / "notebooks" / path.name)
        nbformat.write(
            no_solutions.strip_notebook(nb), stripped / "notebooks" / path.name
        )
    regions = sum(len(r) for r in no_solutions.secret_regions(NOTEBOOKS).values())
    assert len(no_solutions.leaks(shown)) == regions
    assert no_solutions.leaks(stripped) == []


@pytest.fixture(scope="module")
def site_without_solutions(tmp_path_factory):
    """_build/html-no-solutions after `make book SOLUTIONS=0`; else the book without solutions built here from the
    chapters' committed outputs (the build's own -W -n --keep-going)."""
    if os.environ.get("RC_NO_SOLUTIONS_SITE"):
        if not (no_solutions.HTML / "index.html").exists():
            pytest.fail(
                "no site in _build/html-no-solutions: run `make book SOLUTIONS=0`"
            )
        return no_solutions.HTML
    folder = tmp_path_factory.mktemp("no-solutions")
    tree = no_solutions.write_tree(
        folder / "tree", load=lambda path: nbformat.read(path, as_version=4)
    )
    no_solutions.build(tree, folder / "html")
    return folder / "html"


def test_built_site_without_solutions(site_without_solutions):
    site = site_without_solutions
    assert no_solutions.leaks(site) == [], "no solution and no model answer"
    for path in NOTEBOOKS:
        page = (site / "notebooks" / f"{path.stem}.html").read_text(encoding="utf-8")
        assert SHOW_SOLUTION not in page, "no Show solution toggle"
        shown = no_solutions.page_text(site / "notebooks" / f"{path.stem}.html")
        assert shown.count("raiseNotImplementedError(") == solution_count(
            read_notebook(path)
        ), "the stubs are shown"
        colab = re.findall(r'https://colab\.research\.google\.com/[^"\s]+', page)
        assert colab and not [u for u in colab if "/notebooks/colab/" in u], (
            "every Colab link and button opens a student version"
        )
        download = site / "_sources" / "notebooks" / path.name
        assert download.read_bytes() == (STUDENT_DIR / path.name).read_bytes(), (
            "the download is the student version"
        )
    instructors = (site / "book" / "instructors.html").read_text(encoding="utf-8")
    assert "The model answers are left out of this copy" in instructors


@pytest.fixture(scope="module")
def site():
    """The normal site, _build/html, as tests/test_site.py takes it."""
    return built_site([*NOTEBOOKS, INSTRUCTORS])


def test_normal_site_shows_what_the_build_without_solutions_removes(site):
    """So that the checks above can fail: the same check finds every solution, and the model answers, in the
    normal site."""
    found = no_solutions.leaks(site)
    for chapter, regions in no_solutions.secret_regions(NOTEBOOKS).items():
        shown = [line for line in found if line.startswith(f"{chapter}: ")]
        assert len(shown) == len(regions), f"{chapter}: the normal site shows {shown}"
    assert "book/instructors.html: the model answers' block" in found
    for path in NOTEBOOKS:
        page = (site / "notebooks" / f"{path.stem}.html").read_text(encoding="utf-8")
        assert page.count(SHOW_SOLUTION) == solution_count(read_notebook(path))
