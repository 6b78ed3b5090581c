"""`make grade SUBMISSIONS=dir CHAPTER=NN_topic`: grade every submitted notebook of one chapter (the command line is
__main__.py).

What runs is not the submitted notebook but the chapter's student version with the submission's answers spliced
in (splice.py): a cell added or edited elsewhere never runs, and is flagged. The answers are also scanned for code
that tampers with the kernel (scan.py): an answer the scan flags is held, it does not run, its exercise scores 0,
and the row says why, for a person to read it (`run_flagged` grades such answers after review). Each submission
runs in its own kernel, in an empty folder, headless, in the sandbox (sandbox.py), with a time limit per cell; a
cell that raises or loops forever is recorded and the run goes on. Then the chapter's hidden tests
(`booktools/grading/hidden/NN_topic.py`, one `exercise_N()` per exercise, never shipped to students or the site) run
in the same kernel and record what each answer did, as JSON (cells.py).

Nothing in that kernel decides a mark, since the answer's code could have patched anything there. The reference
solutions run once more, in a kernel of their own (the instructor notebook, with the same hidden tests), and
judge.py compares each answer's records with the reference's, in the grader's process, by the rules the reference's
records state. Bad submissions become rows, not crashes.
"""

import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat

from booktools import settings
from booktools.grading.cells import (
    cell_problems,
    exercises,
    graded,
    records,
    self_checks,
)
from booktools.grading.judge import reference_problems, score
from booktools.grading.sandbox import (
    FOLDER,
    NO_SANDBOX_HELP,
    execute,
    runs_folder,
    sandbox_command,
    sandbox_problem,
)
from booktools.grading.scan import suspicions
from booktools.grading.splice import rebuild
from booktools.settings import GRADE_CELL_TIMEOUT, GRADE_MEMORY_GB, HIDDEN, headless


def template_of(chapter: str, template: Path | None = None) -> nbformat.NotebookNode:
    path = template or settings.STUDENT_DIR / f"{chapter}.ipynb"
    if not path.exists():
        raise SystemExit(
            f"No student version of {chapter!r} to grade against: expected {path} (make student)."
        )
    return nbformat.read(path, as_version=4)


def instructor_notebook(chapter: str) -> Path:
    path = next((p for p in settings.NOTEBOOKS if p.stem == chapter), None)
    if path is None:
        raise SystemExit(
            f"No instructor notebook for chapter {chapter!r} in notebooks/."
        )
    return path


def chapter_cells(chapter: str) -> tuple:
    """The chapter's own code cells, solutions left out: what earlier student versions held verbatim (a cell
    that a later edition folds as a Colab form, or drops as the machines' own), so not an edit (splice.rebuild)."""
    path = next((p for p in settings.NOTEBOOKS if p.stem == chapter), None)
    if path is None:  # a chapter made for a test
        return ()
    return tuple(
        cell.source
        for cell in nbformat.read(path, as_version=4).cells
        if cell.cell_type == "code" and "solution" not in cell.metadata.get("tags", [])
    )


def reference_records(
    chapter: str,
    timeout: int = GRADE_CELL_TIMEOUT,
    parameters: dict | None = None,
    secret: str | None = None,
    reference: Path | None = None,
    hidden: Path = HIDDEN,
) -> dict:
    """What the hidden tests (in the folder `hidden`) observe of the reference solutions: the instructor notebook
    (`reference`, default notebooks/NN_topic.ipynb), run with the same parameters and secret as the submissions, in a
    kernel of its own that no submission touches. Stops with a message if a hidden test does not pass the
    reference."""
    source, numbers = exercises(chapter, secret, hidden)
    instructor = nbformat.read(reference or instructor_notebook(chapter), as_version=4)
    nb, n_notebook = graded(instructor, source, numbers, parameters=parameters)
    headless()
    # its own kernel, over Unix sockets as the submissions' are, in a folder the sandboxed kernels cannot see
    with tempfile.TemporaryDirectory(dir=runs_folder()) as workdir:
        notes = execute(nb, timeout, Path(workdir), [])
    found = records(nb, n_notebook)
    if problems := notes + reference_problems(found, numbers):
        raise SystemExit(
            f"The hidden tests of {chapter} do not pass the reference solutions, so nothing can be graded against "
            "them: " + "; ".join(problems)
        )
    return found


def run_submission(
    path: Path,
    chapter: str,
    timeout: int,
    parameters: dict | None = None,
    template: Path | None = None,
    prefix: list = (),
    secret: str | None = None,
    run_flagged: bool = False,
    hidden: Path = HIDDEN,
) -> dict:
    """One submission run, not yet scored: {'student', 'records', 'held', 'notes', 'flags', 'self_checks'}; never
    raises for a bad submission. What runs is the chapter's student version (`template`) with the submission's
    answers spliced in (splice.py), then the hidden tests (in the folder `hidden`), whose records `score` judges.
    `parameters` (such as {"SEED": 7}) are set after the `parameters` cell, as papermill does. `prefix`: the command
    the kernel runs under (`sandbox_command()`), or () for none. `secret`: the instructor's secret phrase, from
    which the hidden tests draw their inputs (None: the seeds written in them). An answer the scan flags is held:
    the template's stub runs in its place, so the exercise scores 0 and the answer's code never runs; `run_flagged`
    runs it all the same (after a person has read it)."""
    source, numbers = exercises(chapter, secret, hidden)
    run = {
        "student": path.stem,
        "records": {},
        "held": {},
        "notes": "",
        "flags": "",
        "self_checks": "",
    }
    try:
        submitted = nbformat.read(path, as_version=4)
    except Exception as err:  # not JSON, not a notebook
        run["notes"] = f"not a valid notebook ({type(err).__name__}: {str(err)[:120]})"
        run["invalid"] = True
        return run
    pristine = template_of(chapter, template)
    nb, answers, flags = rebuild(pristine, submitted, known=chapter_cells(chapter))
    suspect = suspicions(answers, pristine, source)
    flags += [f"exercise {key}: {why}" for key, whys in suspect.items() for why in whys]
    if not run_flagged:
        run["held"] = {k: w for k, w in suspect.items() if w}
    if run["held"]:
        nb, _, _ = rebuild(pristine, submitted, frozenset(run["held"]))
    nb, n_submitted = graded(nb, source, numbers, pristine, parameters)
    headless()
    with tempfile.TemporaryDirectory(dir=runs_folder()) as workdir:
        notes = execute(nb, timeout, Path(workdir), list(prefix))
    run["records"] = records(nb, n_submitted)
    run["notes"] = "; ".join(cell_problems(nb, n_submitted) + notes)
    run["flags"] = "; ".join(flags)
    run["self_checks"] = self_checks(nb, n_submitted)
    return run


def run_all(
    submissions: Path,
    chapter: str,
    timeout: int = GRADE_CELL_TIMEOUT,
    jobs: int = 2,
    template: Path | None = None,
    sandbox: bool = True,
    memory_gb: float = GRADE_MEMORY_GB,
    secret: str | None = None,
    run_flagged: bool = False,
    reference: Path | None = None,
    hidden: Path = HIDDEN,
) -> tuple:
    """(the run of every submission in the folder, what the hidden tests observed of the reference solutions),
    `jobs` at a time; each submission in the sandbox, with `memory_gb` of address space, unless `sandbox` is False.
    The reference solutions run alongside, in a kernel of their own (`reference`: the instructor notebook, by
    default notebooks/NN_topic.ipynb). `hidden`: the folder of the hidden tests (an instructor's own, or the
    book's)."""
    if not submissions.is_dir():
        raise SystemExit(
            f"No folder {submissions}: give SUBMISSIONS=folder of the submitted .ipynb files."
        )
    paths = sorted(p for p in submissions.iterdir() if p.suffix == ".ipynb")
    if not paths:
        raise SystemExit(f"No .ipynb files in {submissions}.")
    exercises(chapter, hidden=hidden)  # fail early on an unknown chapter
    template_of(chapter, template)
    reference = reference or instructor_notebook(chapter)
    prefix = []
    if sandbox:
        if why := sandbox_problem():
            raise SystemExit(NO_SANDBOX_HELP.format(why=why))
        # the book (the instructor notebooks hold the solutions), the submissions, the reference's folder
        prefix = sandbox_command(
            memory_gb, (settings.ROOT, submissions, reference.parent)
        )
        # the whole sandbox once, mounts and all, so that a system that cannot make it stops here with a message,
        # not with every submission's kernel dying
        with tempfile.TemporaryDirectory(dir=runs_folder()) as probe:
            command = [probe if part == FOLDER else part for part in prefix]
            if why := sandbox_problem(command):
                raise SystemExit(NO_SANDBOX_HELP.format(why=why))
    n = len(paths)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        expected = pool.submit(
            reference_records, chapter, timeout, None, secret, reference, hidden
        )
        runs = list(
            pool.map(
                run_submission,
                paths,
                [chapter] * n,
                [timeout] * n,
                [None] * n,
                [template] * n,
                [prefix] * n,
                [secret] * n,
                [run_flagged] * n,
                [hidden] * n,
            )
        )
        return runs, expected.result()


def grade(submissions: Path, chapter: str, **options) -> list:
    """A row of grades.csv for every submission in the folder (options: those of `run_all`), each answer judged
    here, in the grader's process, against the reference solutions (`score`)."""
    runs, expected = run_all(submissions, chapter, **options)
    return [score(run, expected) for run in runs]
