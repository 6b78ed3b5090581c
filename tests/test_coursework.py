"""Coursework: student versions generated from the one source, and grading with hidden tests."""
import re
import shutil
import sys
from pathlib import Path

import nbformat
import papermill
import pytest

from conftest import NOTEBOOKS, ROOT, TEST_SEED, colab_url, read_notebook

sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))
from grade import exercises, grade  # noqa: E402
from student import STUDENT_DIR, student_version  # noqa: E402

GRADED_CHAPTER = "02_identity_and_zero_init"


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
    stubs = re.findall(r'raise NotImplementedError\(.Exercise \d+ \(', "\n".join(c.source for c in student.cells))
    assert len(stubs) == solution_count(read_notebook(notebook_path))
    assert f"notebooks/student/{notebook_path.name})" in student.cells[0].source, "the badge opens the student copy"


def test_student_version_runs_alone_up_to_its_first_unfilled_exercise(notebook_path, tmp_path):
    """Copied alone into an empty folder and run with papermill under another SEED, every cell runs;
    the only error allowed is an exercise's own NotImplementedError."""
    alone = tmp_path / notebook_path.name
    shutil.copy(STUDENT_DIR / notebook_path.name, alone)
    try:
        papermill.execute_notebook(str(alone), str(alone), parameters={"SEED": TEST_SEED}, cwd=str(tmp_path),
                                   kernel_name="python3", progress_bar=False, execution_timeout=600)
    except papermill.PapermillExecutionError as err:
        assert err.ename == "NotImplementedError" and "Exercise" in err.evalue, f"{err.ename}: {err.evalue}"


def test_every_exercise_has_a_hidden_test(notebook_path):
    _, numbers = exercises(notebook_path.stem)
    assert numbers == list(range(1, solution_count(read_notebook(notebook_path)) + 1))


def test_hidden_tests_stay_out_of_notebooks_and_site():
    for path in NOTEBOOKS + sorted(STUDENT_DIR.glob("*.ipynb")):
        assert "def exercise_1():" not in path.read_text(), f"{path.name} contains hidden tests"
    site = ROOT / "_build" / "html"
    for page in site.rglob("*") if site.exists() else []:
        if page.suffix in {".html", ".ipynb", ".txt"}:
            assert "def exercise_1():" not in page.read_text(errors="ignore"), page


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Grade five submissions of chapter 02 (four exercises): full marks, untouched, broken, looping, not a notebook."""
    folder = tmp_path_factory.mktemp("submissions")
    instructor = read_notebook(ROOT / "notebooks" / f"{GRADED_CHAPTER}.ipynb")
    nbformat.write(instructor, folder / "ada.ipynb")
    nbformat.write(read_notebook(STUDENT_DIR / f"{GRADED_CHAPTER}.ipynb"), folder / "untouched.ipynb")
    solutions = [i for i, c in enumerate(instructor.cells) if "### BEGIN SOLUTION" in c.source]
    broken = read_notebook(ROOT / "notebooks" / f"{GRADED_CHAPTER}.ipynb")
    broken.cells[solutions[0]].source = "raise RuntimeError('my first attempt')"
    del broken.cells[solutions[2]]  # an exercise cell deleted
    nbformat.write(broken, folder / "broken.ipynb")
    looping = read_notebook(ROOT / "notebooks" / f"{GRADED_CHAPTER}.ipynb")
    looping.cells[solutions[1]].source = "while True:\n    pass"
    nbformat.write(looping, folder / "looping.ipynb")
    (folder / "garbled.ipynb").write_text('{"cells": [ this is not JSON')
    return {row["student"]: row for row in grade(folder, GRADED_CHAPTER, timeout=60, jobs=2)}


def test_instructor_version_scores_full_marks(graded):
    assert graded["ada"]["score"] == graded["ada"]["out_of"] == 4, graded["ada"]
    assert graded["ada"]["notes"] == ""


def test_untouched_student_version_scores_zero(graded):
    row = graded["untouched"]
    assert row["score"] == 0, row
    assert row["reasons"].count("NotImplementedError") == row["out_of"]


def test_a_raising_cell_and_a_deleted_exercise_cost_only_their_exercises(graded):
    row = graded["broken"]
    assert (row["exercise_1"], row["exercise_2"], row["exercise_3"], row["exercise_4"]) == (0, 1, 0, 1), row
    assert "NameError" in row["reasons"] and "my first attempt" in row["notes"]


def test_an_infinite_loop_times_out_and_grading_goes_on(graded):
    row = graded["looping"]
    assert (row["exercise_1"], row["exercise_2"], row["exercise_3"], row["exercise_4"]) == (1, 0, 1, 1), row
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
