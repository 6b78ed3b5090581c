"""Coursework: student versions generated from the one source, and grading with hidden tests."""

import re
import sys
from pathlib import Path

import nbformat
import pytest

from conftest import NOTEBOOKS, ROOT, colab_url, read_notebook

sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))
from grade import exercises, grade  # noqa: E402
from student import STUDENT_DIR, student_version  # noqa: E402


def solution_count(nb) -> int:
    return sum(c.source.count("### BEGIN SOLUTION") for c in nb.cells)


def test_committed_student_versions_are_up_to_date(notebook_path):
    committed = STUDENT_DIR / notebook_path.name
    assert committed.exists(), "run `make student`"
    fresh = student_version(read_notebook(notebook_path), notebook_path.name)
    assert nbformat.writes(fresh).strip() == committed.read_text().strip(), "stale student version: run `make student`"


def test_student_version_hides_solutions_and_hidden_tests(notebook_path):
    student = read_notebook(STUDENT_DIR / notebook_path.name)
    text = nbformat.writes(student)
    assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text
    assert not any("hidden-test" in c.metadata.get("tags", []) for c in student.cells)
    assert all(not c.outputs for c in student.cells if c.cell_type == "code"), "outputs are cleared"
    assert "widgets" not in student.metadata, "the widgets' saved state is cleared"
    stubs = re.findall(r"raise NotImplementedError\(.Exercise \d+ \(", "\n".join(c.source for c in student.cells))
    assert len(stubs) == solution_count(read_notebook(notebook_path))
    assert f"notebooks/student/{notebook_path.name})" in student.cells[0].source, "the badge opens the student copy"


def test_every_exercise_has_a_hidden_test(notebook_path):
    _, numbers = exercises(notebook_path.stem)
    assert numbers == list(range(1, solution_count(read_notebook(notebook_path)) + 1))


def test_hidden_tests_stay_out_of_notebooks():
    for path in NOTEBOOKS + sorted(STUDENT_DIR.glob("*.ipynb")):
        assert "def exercise_1():" not in path.read_text(), f"{path.name} contains hidden tests"


TOY_HIDDEN = """
def exercise_1():
    assert double(3) == 6, "double(3) must be 6"


def exercise_2():
    assert half(3) == 1.5, "half(3) must be 1.5"


def exercise_3():
    assert third(3) == 1, "third(3) must be 1"
"""


def toy_submission(*solutions) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in solutions])


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The grader's robustness, on a toy chapter of three exercises (every real chapter is graded above): a raising
    cell, a deleted exercise, an infinite loop and a file that is not a notebook each cost only what they must."""
    import settings

    hidden = tmp_path_factory.mktemp("hidden")
    (hidden / "99_toy.py").write_text(TOY_HIDDEN)
    folder = tmp_path_factory.mktemp("submissions")
    full = ["def double(x):\n    return 2 * x", "def half(x):\n    return x / 2", "def third(x):\n    return x / 3"]
    nbformat.write(toy_submission(*full), folder / "ada.ipynb")
    nbformat.write(toy_submission("raise RuntimeError('my first attempt')", full[1]), folder / "broken.ipynb")
    nbformat.write(toy_submission(full[0], "while True:\n    pass", full[2]), folder / "looping.ipynb")
    (folder / "garbled.ipynb").write_text('{"cells": [ this is not JSON')
    saved = settings.HIDDEN
    settings.HIDDEN = hidden
    try:
        return {row["student"]: row for row in grade(folder, "99_toy", timeout=5, jobs=2)}
    finally:
        settings.HIDDEN = saved


def test_a_complete_submission_scores_full_marks(graded):
    assert graded["ada"]["score"] == graded["ada"]["out_of"] == 3, graded["ada"]
    assert graded["ada"]["notes"] == ""


def test_a_raising_cell_and_a_deleted_exercise_cost_only_their_exercises(graded):
    row = graded["broken"]
    assert (row["exercise_1"], row["exercise_2"], row["exercise_3"]) == (0, 1, 0), row
    assert "NameError" in row["reasons"] and "my first attempt" in row["notes"]


def test_an_infinite_loop_times_out_and_grading_goes_on(graded):
    row = graded["looping"]
    assert (row["exercise_1"], row["exercise_2"], row["exercise_3"]) == (1, 0, 1), row
    assert "timed out" in row["notes"]


def test_an_invalid_notebook_is_a_row(graded):
    row = graded["garbled"]
    assert row["score"] == 0 and "not a valid notebook" in row["notes"]


def test_instructor_page_covers_every_chapter():
    page = (ROOT / "book" / "instructors.md").read_text()
    for path in NOTEBOOKS:
        assert f"`{path.stem}`" in page, f"add {path.stem} to the learning objectives in book/instructors.md"


def test_instructor_page_links_every_student_version():
    page = (ROOT / "book" / "instructors.md").read_text()
    for path in NOTEBOOKS:
        assert f"]({colab_url('student/' + path.name)})" in page, f"link the student version of {path.stem}"
