"""The copies outside the book: the Colab copies and the student versions, made from the one source, and the
instructors page that links them."""

import re

import nbformat
import pytest
from markdown_it import MarkdownIt

from booktools.build import exercise_table
from booktools.build.colab import (
    SYNC_HEADER,
    colab_version,
    figure_names,
    foldable,
    machine_only,
)
from booktools.build.student import STUDENT_DIR, student_version
from booktools.grading.splice import FORM_TITLE
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
    kept = [c for c in source.cells if not machine_only(c)]
    assert [(c.id, c.cell_type, c.get("outputs")) for c in fresh.cells] == [
        (c.id, c.cell_type, c.get("outputs")) for c in kept
    ], (
        "the chapter's cells and outputs, less the machines' own, and a caption under every figure"
    )
    assert [
        "\n".join(line for line in c.source.split("\n") if not FORM_TITLE.match(line))
        for c in fresh.cells
        if c.cell_type == "code"
    ] == [
        SYNC_HEADER.sub(r"\g<taught>.", c.source) for c in kept if c.cell_type == "code"
    ], (
        "the code is the chapter's, but for a form's title line and a shorter header on copied cells"
    )


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
    assert f"notebooks/student/{notebook_path.name})" in student.cells[1].source, (
        "the badge opens the student copy"
    )


def test_every_cell_of_the_student_version_is_published(notebook_path):
    """`make student` records a fingerprint of each code cell it writes (booktools/grading/published/), so that
    grading knows it when a later edition changes it; the file only grows."""
    from booktools.grading.published import fingerprint, published

    student = read_notebook(STUDENT_DIR / notebook_path.name)
    missing = [
        c.id
        for c in student.cells
        if c.cell_type == "code"
        and c.source.strip()
        and fingerprint(c.source) not in published(notebook_path.stem)
    ]
    assert not missing, (
        f"cells not in booktools/grading/published (make student): {missing}"
    )


def copies(notebook_path) -> list:
    return [COLAB_DIR / notebook_path.name, STUDENT_DIR / notebook_path.name]


def test_copies_fold_what_the_book_folds_as_colab_forms(notebook_path):
    """Colab's form behaviour: a code cell whose metadata has `cellView: "form"` shows the title of its first
    line, `# @title ...` (as Colab and ruff write it), and its output, and hides its code behind "Show code". Every cell the book folds
    (`hide-input`) and every live-controls cell is such a form in both copies, titled with what it holds;
    JupyterLab folds it too (`jupyter.source_hidden`). In the student version the exercise cells are the
    exception: they open unfolded, and nothing else is a form."""
    chapter = {c.id: c for c in read_notebook(notebook_path).cells}
    for path in copies(notebook_path):
        nb = read_notebook(path)
        nbformat.validate(nb)
        for cell in nb.cells:
            origin = chapter.get(cell.id)
            solution = origin is not None and "solution" in origin.metadata.get(
                "tags", []
            )
            should = (
                origin is not None
                and foldable(origin)
                and not (path.parent == STUDENT_DIR and solution)
            )
            is_form = cell.metadata.get("cellView") == "form"
            where = f"{path.relative_to(ROOT)}, cell {cell.id}"
            assert is_form == should, (
                f"{where}: {'not ' if should else ''}a form, "
                f"unlike what the book {'folds' if should else 'shows'}"
            )
            if is_form:
                title = re.fullmatch(
                    r"# @title Show code: (?P<what>\S.{2,110})",
                    cell.source.split("\n")[0],
                )
                assert title, f"{where}: its first line names what it holds"
                assert cell.cell_type == "code"
                assert cell.metadata["jupyter"]["source_hidden"] is True
                assert "@title" not in cell.source.split("\n", 1)[1], where
            else:
                assert not FORM_TITLE.search(cell.source), f"{where}: a title, no form"


def test_copies_hold_no_cell_or_comment_only_the_machines_need(notebook_path):
    """No `if HEADLESS:` cell (it tries a slider's far corner where no one is there to move it), no nbval marker
    and no note on how the tooling copies a cell reach a student."""
    for path in copies(notebook_path):
        nb = read_notebook(path)
        for cell in nb.cells:
            where = f"{path.relative_to(ROOT)}, cell {cell.id}"
            assert not cell.source.lstrip().startswith("if HEADLESS"), where
            assert not re.search(r"NBVAL|make sync", cell.source), where


def test_copies_open_on_the_lesson(notebook_path):
    """The setup, the figure style and the slider helper come first, before the parameters cell, and folded; before
    section 1 a student scrolls past titles, the parameters and at most the chapter's knobs, 20 lines of open
    code (a loader another chapter teaches is folded)."""
    for path in copies(notebook_path):
        nb = read_notebook(path)
        where = path.relative_to(ROOT)
        tags = [c.metadata.get("tags", []) for c in nb.cells]
        parameters = next(i for i, t in enumerate(tags) if "parameters" in t)
        for name in ("shared:setup", "shared:style", "shared:slider"):
            at = [i for i, t in enumerate(tags) if name in t]
            assert all(i < parameters for i in at), (
                f"{where}: {name} after the parameters"
            )
            assert all(nb.cells[i].metadata.get("cellView") == "form" for i in at), (
                f"{where}: {name} is not folded"
            )
        first_section = next(
            i
            for i, c in enumerate(nb.cells)
            if c.cell_type == "markdown" and c.source.startswith("## ")
        )
        open_lines = [
            line
            for c in nb.cells[:first_section]
            if c.cell_type == "code"
            and c.metadata.get("cellView") != "form"
            and "parameters" not in c.metadata.get("tags", [])
            for line in c.source.splitlines()
        ]
        assert len(open_lines) <= 20, (
            f"{where}: open code before section 1: {open_lines}"
        )


def test_student_version_says_how_to_work_in_its_first_cell(notebook_path):
    """The first cell: Run all, edit only the stubs, keep the self-checks, what done is, how to hand in; in
    CommonMark that Colab and GitHub render (no MyST, no HTML)."""
    first = read_notebook(STUDENT_DIR / notebook_path.name).cells[0]
    assert first.cell_type == "markdown"
    for needed in (
        "Run all",
        "raise NotImplementedError",
        "self-check",
        "**Done**",
        "Download .ipynb",
    ):
        assert needed in first.source, f"the first cell does not say: {needed}"
    assert not re.search(r"[{<]|:::", first.source), "plain CommonMark"
    html = MarkdownIt("commonmark").render(first.source)
    assert html.count("<li>") == 5 and "<ol>" in html


def test_stub_messages_are_plain_text(notebook_path):
    """A stub's message shows in a traceback, where markdown is raw: no emphasis, code or math marks."""
    student = read_notebook(STUDENT_DIR / notebook_path.name)
    messages = re.findall(
        r"raise NotImplementedError\((['\"])(.*?)\1\)",
        "\n".join(c.source for c in student.cells if c.cell_type == "code"),
    )
    assert messages
    marked = [m for _, m in messages if re.search(r"[*`$]|\b_\w+_\b", m)]
    assert not marked, marked


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


def test_instructor_page_exercise_table_is_up_to_date():
    """The table of every chapter's exercises, points and written parts is the one the notebooks, the hidden tests
    and the grader give (booktools/build/exercise_table.py)."""
    assert exercise_table.committed() == exercise_table.table(), (
        "stale exercise table in book/instructors.md: run python -m booktools.build.exercise_table"
    )


def test_exercise_table_stops_when_a_chapter_and_its_tests_disagree(tmp_path):
    path = NOTEBOOKS[0]
    nb = read_notebook(path)
    nb.cells.append(nbformat.v4.new_markdown_cell("### Exercise 99: one more"))
    nbformat.write(nb, tmp_path / path.name)
    with pytest.raises(SystemExit, match="the hidden tests"):
        exercise_table.rows([tmp_path / path.name])
