"""Every chapter runs once more than nbval's run, and that one run serves four checks.

nbval (in `make test`) re-runs the committed notebooks at their committed SEED. This test runs each chapter's
*student* version, copied alone into an empty folder as Colab opens it, under another SEED (TEST_SEED), with one
exercise solved (the instructor's solution spliced in) and the others untouched. Then:
- every assert of the chapter holds under a seed other than the committed one (no tuned seed);
- no cell raises, except through an untouched exercise's `NotImplementedError` stub;
- with every reference solution then defined in the same kernel, the hidden tests' records of them pass their own
  rules (a reference inside its own band, one of its own right answers), and those records are what the rest is
  judged against, in this process, as `make grade` judges (judge.verdict);
- the solved exercise gets its mark and every untouched exercise zero;
- then each mutant answer of booktools/grading/mutants/ (wrong ones, and correct alternatives) gets its mark.
The hidden tests grade under a secret (TEST_SECRET, as `make grade SECRET=...` does), so they draw inputs other than
the seeds written in them, as in an instructor's private grading.
`make colab-check` runs this file again in Colab's package versions. Set TEST_SEED (or TEST_SECRET) to try others.
"""

import re

import nbformat
import papermill

from booktools.grading.cells import (
    cell_problems,
    exercises,
    graded,
    grading_cells,
    records,
)
from booktools.grading.judge import reference_problems, verdict
from booktools.grading.mutation import marks, mutant_cells, wrong_marks
from booktools.grading.splice import rebuild
from booktools.settings import STUDENT_DIR, TEST_SECRET
from conftest import TEST_SEED, read_notebook, run_alone, same_marks_as_recorded

STUB = re.compile(r"raise NotImplementedError\([\"']Exercise")


def solutions(path) -> list:
    return [c for c in read_notebook(path).cells if "### BEGIN SOLUTION" in c.source]


def solved_exercise(path) -> int:
    """The one exercise the student copy gets solved: a different one from chapter to chapter."""
    return 1 + int(path.stem[:2]) % len(solutions(path))


def test_student_copy_runs_alone_under_another_seed_and_grades_right(
    notebook_path, tmp_path
):
    reference = solutions(notebook_path)
    k = solved_exercise(notebook_path)
    student = read_notebook(STUDENT_DIR / notebook_path.name)
    committed = next(
        c for c in student.cells if "parameters" in c.metadata.get("tags", [])
    )
    assert f"SEED = {TEST_SEED}\n" not in committed.source + "\n", (
        "TEST_SEED must differ from the committed SEED"
    )
    stubs = [
        c for c in student.cells if c.cell_type == "code" and STUB.search(c.source)
    ]
    assert len(stubs) == len(reference), "one stub cell per solution cell"
    submission = nbformat.from_dict(student)
    [c for c in submission.cells if c.cell_type == "code" and STUB.search(c.source)][
        k - 1
    ].source = reference[k - 1].source
    # what `make grade` runs: the template, the answer spliced in
    rebuilt, _, flags = rebuild(student, submission)
    assert not flags, f"a clean submission is flagged: {flags}"
    source, numbers = exercises(notebook_path.stem, TEST_SECRET)
    nb, n_submitted = graded(rebuilt, source, numbers, student, {"SEED": TEST_SEED})
    first = nb.cells[n_submitted:]
    nb.cells += [nbformat.v4.new_code_cell(c.source) for c in reference]
    n_all_solved = len(nb.cells)
    nb.cells += grading_cells(source, numbers) + mutant_cells(
        notebook_path.stem, [c.source for c in reference]
    )
    run_alone(nb, tmp_path)

    problems = cell_problems(nb, len(nb.cells))
    assert all("raised NotImplementedError: Exercise" in p for p in problems), (
        f"cells that raised: {problems}"
    )
    solved_alone = records(
        nbformat.v4.new_notebook(
            cells=nb.cells[n_submitted : n_submitted + len(first)]
        ),
        0,
    )
    reference = records(
        nbformat.v4.new_notebook(
            cells=nb.cells[n_all_solved : n_all_solved + len(first)]
        ),
        0,
    )
    failed = reference_problems(reference, numbers)
    assert sorted(reference) == numbers and not failed, (
        f"the hidden tests do not pass the reference solutions at SEED = {TEST_SEED}: {failed}"
    )
    scores = {n: int(verdict(reference[n], solved_alone.get(n))[0]) for n in numbers}
    assert scores == {n: int(n == k) for n in numbers}, (
        f"with exercise {k} solved, expected only it to pass: {solved_alone}"
    )
    wrong = wrong_marks(notebook_path.stem, nb, reference)
    assert not wrong, (
        "hidden tests that mark a mutant answer wrongly (booktools/grading/mutants/):\n"
        + "\n".join(wrong)
    )
    same_marks_as_recorded(notebook_path.stem, marks(notebook_path.stem, nb, reference))


def test_papermill_sets_the_parameters(notebook_path, tmp_path):
    """The chapter's parameters cell, run under papermill with other values, takes them (a cheap run: the
    parameters cell and a cell that prints them)."""
    nb = read_notebook(notebook_path)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    nb.cells = [cell, nbformat.v4.new_code_cell("print(f'SEED={SEED} FULL={FULL}')")]
    path = tmp_path / notebook_path.name
    nbformat.write(nb, path)
    papermill.execute_notebook(
        str(path), str(path), parameters={"SEED": TEST_SEED}, cwd=str(tmp_path), kernel_name="python3",
        progress_bar=False, log_output=False, execution_timeout=60,
    )  # fmt: skip
    assert (
        read_notebook(path).cells[-1].outputs[0]["text"].strip()
        == f"SEED={TEST_SEED} FULL=False"
    )
