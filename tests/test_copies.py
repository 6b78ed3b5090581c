"""The copies outside the book: the Colab copies and the student versions, made from the one source, and the
instructors page that links them."""

import re

import nbformat
import pytest
from markdown_it import MarkdownIt

from booktools.build.colab import colab_version, figure_names
from booktools.build.student import STUDENT_DIR, student_version
from booktools.settings import COLAB_DIR
from conftest import NOTEBOOKS, ROOT, colab_url, read_notebook, solution_count


def test_committed_student_versions_are_up_to_date(notebook_path):
    committed = STUDENT_DIR / notebook_path.name
    assert committed.exists(), "run `make student`"
    fresh = student_version(read_notebook(notebook_path), notebook_path.name)
    assert nbformat.writes(fresh).strip() == committed.read_text().strip(), (
        "stale student version: run `make student`"
    )


def test_committed_colab_copies_are_up_to_date(notebook_path):
    committed = COLAB_DIR / notebook_path.name
    assert committed.exists(), "run `make student`, which writes the Colab copies"
    fresh = colab_version(read_notebook(notebook_path), notebook_path)
    assert nbformat.writes(fresh).strip() == committed.read_text().strip(), (
        "stale Colab copy: run `make student`"
    )
    source = read_notebook(notebook_path)
    captions = [c for c in fresh.cells if c.get("id", "").endswith("-caption")]
    assert len(captions) == len(figure_names(source)), "a caption under every figure"
    fresh.cells = [c for c in fresh.cells if c not in captions]
    assert [(c.cell_type, c.get("outputs")) for c in fresh.cells] == [
        (c.cell_type, c.get("outputs")) for c in source.cells
    ] and [c.source for c in fresh.cells if c.cell_type == "code"] == [
        c.source for c in source.cells if c.cell_type == "code"
    ], "only the markdown differs from the chapter, and the figures' captions are added"


@pytest.mark.parametrize("copy", ["colab", "student"])
def test_copies_outside_the_book_render_as_plain_commonmark(notebook_path, copy):
    """What Colab, GitHub and the download open shows no MyST role, directive or relative link when a plain
    CommonMark renderer (markdown-it-py in commonmark mode) renders it."""
    renderer = MarkdownIt("commonmark")
    path = (COLAB_DIR if copy == "colab" else STUDENT_DIR) / notebook_path.name
    nb = read_notebook(path)
    roles = re.findall(r"\{(?:cite|term|numref)[\w:]*\}`", path.read_text())
    assert not roles, f"MyST roles anywhere in the file, metadata included: {roles[:3]}"
    leftovers = []
    for i, cell in enumerate(c for c in nb.cells if c.cell_type == "markdown"):
        html = renderer.render(cell.source)
        leftovers += [
            f"markdown cell {i}: role {m}"
            for m in re.findall(r"\{[\w:-]+\}<code>", html)
        ]
        leftovers += [
            f"markdown cell {i}: directive {m}"
            for m in re.findall(r"language-\{[\w-]+\}|<p>:{3,}\{", html)
        ]
        leftovers += [
            f"markdown cell {i}: relative link {href}"
            for href in re.findall(r'href="([^"]*)"', html)
            if not re.match(r"https?://|mailto:|#", href)
        ]
    assert not leftovers, leftovers


def test_student_version_hides_solutions_and_outputs(notebook_path):
    student = read_notebook(STUDENT_DIR / notebook_path.name)
    text = nbformat.writes(student)
    assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text
    assert all(not c.outputs for c in student.cells if c.cell_type == "code"), (
        "outputs are cleared"
    )
    assert "widgets" not in student.metadata, "the widgets' saved state is cleared"
    stubs = re.findall(
        r"raise NotImplementedError\(.Exercise \d+ \(",
        "\n".join(c.source for c in student.cells),
    )
    assert len(stubs) == solution_count(read_notebook(notebook_path))
    assert f"notebooks/student/{notebook_path.name})" in student.cells[0].source, (
        "the badge opens the student copy"
    )


def test_instructor_page_covers_every_chapter():
    page = (ROOT / "book" / "instructors.md").read_text()
    for path in NOTEBOOKS:
        assert f"`{path.stem}`" in page, (
            f"add {path.stem} to the learning objectives in book/instructors.md"
        )


def test_instructor_page_links_every_student_version():
    page = (ROOT / "book" / "instructors.md").read_text()
    for path in NOTEBOOKS:
        assert f"]({colab_url('student/' + path.name)})" in page, (
            f"link the student version of {path.stem}"
        )
