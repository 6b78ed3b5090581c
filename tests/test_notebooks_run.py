"""Every chapter runs once more than nbval's run, and that one run (the `run` fixture) serves a test per check.

nbval (in `make test`) re-runs the committed notebooks at their committed SEED. This test runs each chapter's
*student* version, copied alone into an empty folder as Colab opens it, under another SEED (TEST_SEED), with one
exercise solved (the instructor's solution spliced in) and the others untouched. Then:
- every assert of the chapter holds under a seed other than the committed one (no tuned seed);
- no cell raises, except through an untouched exercise's `NotImplementedError` stub;
- with every reference solution then defined in the same kernel, the hidden tests' records of them pass their own
  rules (a reference inside its own band, one of its own right answers), and those records are what the rest is
  judged against, in this process, as `make grade` judges (judge.verdict);
- the solved exercise gets its mark and every untouched exercise zero;
- then each mutant answer of booktools/grading/mutants/ (wrong ones, and correct alternatives) gets its mark,
  and the marks, holds and reasons recorded in tests/marks/.
A chapter's tests here run on one worker (tests/conftest.py), so its run is made once.
The hidden tests grade under a secret (TEST_SECRET, as `make grade SECRET=...` does), so they draw inputs other than
the seeds written in them, as in an instructor's private grading.
`make colab-check` runs the student versions again in Colab's package versions, without the grading (COLAB_CHECK).
Set TEST_SEED (or TEST_SECRET) to try others.
"""

import os
import re

import nbformat
import papermill
import pytest

from booktools.execute import inject_parameters
from booktools.grading import isolated
from booktools.grading.cells import cell_problems, exercises, with_preamble
from booktools.grading.grade import with_parameters
from booktools.grading.judge import reference_problems, verdict
from booktools.grading.mutation import marks, mutant_records, wrong_marks
from booktools.grading.splice import rebuild
from booktools.grading.worker import Worker
from booktools.settings import STUDENT_DIR, TEST_SECRET
from conftest import TEST_SEED, read_notebook, run_alone, same_marks_as_recorded

STUB = re.compile(r"raise NotImplementedError\([\"']Exercise")


def solutions(path) -> list:
    return [c for c in read_notebook(path).cells if "### BEGIN SOLUTION" in c.source]


def solved_exercise(path) -> int:
    """The one exercise the student copy gets solved: a different one from chapter to chapter."""
    return 1 + int(path.stem[:2]) % len(solutions(path))


def committed_parameters(student) -> str:
    return next(
        c for c in student.cells if "parameters" in c.metadata.get("tags", [])
    ).source


def stub_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code" and STUB.search(c.source)]


def test_the_test_seed_is_not_the_committed_one(notebook_path):
    student = read_notebook(STUDENT_DIR / notebook_path.name)
    assert f"SEED = {TEST_SEED}\n" not in committed_parameters(student) + "\n", (
        "TEST_SEED must differ from the committed SEED"
    )


def test_the_student_copy_has_one_stub_per_solution(notebook_path):
    student = read_notebook(STUDENT_DIR / notebook_path.name)
    assert len(stub_cells(student)) == len(solutions(notebook_path))


def test_a_clean_submission_is_not_flagged(notebook_path):
    student = read_notebook(STUDENT_DIR / notebook_path.name)
    _, _, flags = rebuild(student, submission(notebook_path, student))
    assert not flags, f"a clean submission is flagged: {flags}"


def submission(path, student) -> nbformat.NotebookNode:
    """The student copy with one exercise (`solved_exercise`) solved by the instructor's solution."""
    k = solved_exercise(path)
    submitted = nbformat.from_dict(student)
    stub_cells(submitted)[k - 1].source = solutions(path)[k - 1].source
    return submitted


RUNS = {}  # chapter: its run, made once per worker (tests/conftest.py keeps a chapter's tests on one worker)

# `make colab-check` runs this file in Colab's package versions, where students run the chapters, and sets
# RC_COLAB_CHECK: there the student version runs and its asserts are checked, but nothing is graded. Grading (the
# hidden tests on the reference solutions, the solved exercise's mark, the mutants) happens where instructors grade,
# in .venv with the book's pins, which `make test` checks; the tests of it carry the `grading` mark.
COLAB_CHECK = bool(os.environ.get("RC_COLAB_CHECK"))
grading = pytest.mark.grading


@pytest.fixture
def run(notebook_path, tmp_path_factory) -> dict:
    """The chapter's student copy with one exercise solved, run alone in an empty folder under TEST_SEED as
    `make grade` runs it (the answer spliced into the template); then, as `make grade` grades, each exercise's answer
    in isolation (isolated.py), the reference solutions likewise, and every mutant. {'nb', 'numbers', 'k',
    'solved_alone', 'reference', 'marks'}."""
    name = notebook_path.stem
    if name not in RUNS:
        student = read_notebook(STUDENT_DIR / notebook_path.name)
        rebuilt, _, _ = rebuild(student, submission(notebook_path, student))
        _, numbers = exercises(name)
        parameters = {"SEED": TEST_SEED}
        if COLAB_CHECK:  # the student version alone, as Colab runs it: no grader's cell
            nb = inject_parameters(rebuilt, parameters)
            run_alone(nb, tmp_path_factory.mktemp(name))
            RUNS[name] = {"nb": nb}
            return RUNS[name]
        nb = inject_parameters(with_preamble(rebuilt, student), parameters)
        folder = tmp_path_factory.mktemp(name)
        run_alone(nb, folder)
        template = with_parameters(student, parameters)
        stubs = isolated.stub_indices(template)
        solved = {n: [rebuilt.cells[i].source] for n, i in stubs.items()}
        solutions = isolated.solution_sources(read_notebook(notebook_path), template)
        (folder / "worker").mkdir()
        # each exercise's context runs once, for the reference, the solved exercise and the mutants
        with Worker(folder / "worker") as worker:
            results, beside = mutant_records(
                name,
                worker,
                template,
                TEST_SECRET,
                alongside={n: [solutions[n], *solved[n]] for n in numbers},
            )
        reference = {n: got[:1] for n, got in beside.items()}
        solved_alone = {n: got[1:] for n, got in beside.items()}
        RUNS[name] = {
            "nb": nb,
            "numbers": numbers,
            "k": solved_exercise(notebook_path),
            "solved_alone": solved_alone,
            "reference": reference,
            "marks": marks(name, results, reference),
            "records": [r for kind, r in results if kind == "ran"]
            + [r for got in solved_alone.values() for r in got],
        }
    return RUNS[name]


def test_every_assert_holds_and_only_untouched_stubs_raise(run):
    """Under TEST_SEED, not the committed one: no tuned seed."""
    problems = cell_problems(run["nb"], len(run["nb"].cells))
    assert all("raised NotImplementedError: Exercise" in p for p in problems), (
        f"cells that raised: {problems}"
    )


@grading
def test_the_hidden_tests_pass_the_reference_solutions(run):
    failed = reference_problems(run["reference"], run["numbers"])
    assert sorted(run["reference"]) == run["numbers"] and not failed, (
        f"the hidden tests do not pass the reference solutions at SEED = {TEST_SEED}: {failed}"
    )


@grading
def test_the_solved_exercise_scores_and_the_untouched_ones_do_not(run):
    reference, alone, k = run["reference"], run["solved_alone"], run["k"]
    scores = {n: int(verdict(reference[n], alone.get(n))[0]) for n in run["numbers"]}
    assert scores == {n: int(n == k) for n in run["numbers"]}, (
        f"with exercise {k} solved, expected only it to pass: {alone}"
    )


@grading
def test_every_mutant_gets_its_mark(notebook_path, run):
    wrong = wrong_marks(run["marks"])
    assert not wrong, (
        "hidden tests that mark a mutant answer wrongly (booktools/grading/mutants/):\n"
        + "\n".join(wrong)
    )


@grading
def test_an_answer_draws_only_the_seeds_the_reference_drew(run):
    """A submission's run gets the seeds the reference's run of the same exercise drew, not the secret (isolated.py,
    `drawn_seeds`): so whatever an answer does, wrong or right, the hidden test must draw its inputs from the same
    seeds as for the reference, never from one that depends on the answer. Every mutant shows it."""
    from booktools.grading.isolated import drawn_seeds

    drew = drawn_seeds(run["reference"])
    other = [
        f"exercise {r['exercise']}: {k} -> {v}"
        for r in run["records"]
        for k, v in (r.get("seeds") or {}).items()
        if drew.get(r["exercise"], {}).get(int(k)) != v
    ]
    assert not other, f"seeds the reference's run did not draw: {other[:5]}"


@grading
def test_every_mutant_gets_the_marks_recorded(notebook_path, run):
    same_marks_as_recorded(notebook_path.stem, run["marks"])


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
