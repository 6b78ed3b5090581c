"""`make grade SUBMISSIONS=dir CHAPTER=NN_topic`: grade every submitted notebook of one chapter (the command line is
__main__.py).

What runs is not the submitted notebook but the chapter's student version with the submission's answers spliced
in (splice.py): a cell added or edited elsewhere never runs, and is flagged. The answers are also scanned for code
that tampers with the grader (scan.py): an answer the scan flags is held, it does not run, its exercise's mark and
the row's score are blank ("needs review", never a 0 that a gradebook imports), and the row says why, for a person
to read it (`run_flagged` grades such answers after review). First the reference solutions run (below), each cell
under the instructor's --timeout; then each submission runs in its own kernel, in an empty folder, headless, in the
sandbox (sandbox.py), each cell allowed 10 times what the same cell of the reference took in this run, at least 30 s
(`cell_limits`), so that a busy machine does not cost marks; a cell that raises or runs over is recorded and the run
goes on. That run gives the self-checks' verdicts and the cells that failed, not the marks. No kernel that starts
(in the sandbox or at all), or a reference that does not run through, stops the grading with a message.

The marks come from the chapter's hidden tests (`booktools/grading/hidden/NN_topic.py`, one `exercise_N()` per
exercise, never shipped to students or the site), each run with its exercise's answer alone, in a process of its
own in the sandbox (isolated.py, worker.py): there the exercise's context (imports, the classes and data it builds
on) exists, the helpers it forbids do not, and nothing of another exercise or of the grader does. Each test
records what the answer did, as JSON; the reference solutions are graded the same way, and judge.py compares each
answer's records with the reference's, in the grader's process, by the rules the reference's records state. Bad
submissions become rows, not crashes.
"""

import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime
from pathlib import Path

import nbformat

from booktools import settings
from booktools.execute import inject_parameters
from booktools.grading import isolated
from booktools.grading.cells import (
    cell_problems,
    exercises,
    self_check_outcomes,
    self_checks,
    with_preamble,
)
from booktools.grading.judge import reference_problems, score
from booktools.grading.published import published
from booktools.grading.sandbox import (
    FOLDER,
    GRADE_CPU_SECONDS,
    NO_SANDBOX_HELP,
    execute,
    kernel_problem,
    runs_folder,
    sandbox_command,
    sandbox_problem,
)
from booktools.grading.scan import suspicions
from booktools.grading.splice import fingerprint, rebuild
from booktools.grading.worker import Worker, WorkerError
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


def known_cells(chapter: str) -> frozenset:
    """Fingerprints of the cells that are not a student's edits besides the template's: every cell an earlier
    student version of the chapter held (published.py), and the chapter's own cells, solutions left out."""
    path = next((p for p in settings.NOTEBOOKS if p.stem == chapter), None)
    own = (
        nbformat.read(path, as_version=4).cells if path is not None else []
    )  # none for a chapter made for a test
    return published(chapter) | {
        fingerprint(cell.source)
        for cell in own
        if cell.cell_type == "code" and "solution" not in cell.metadata.get("tags", [])
    }


# A submission's cell may run TIMEOUT_MULTIPLE times as long as the same cell of the reference solutions took in the
# same grading run, and never less than TIMEOUT_FLOOR seconds: a limit that grows and shrinks with the machine's load,
# so that a busy machine does not cost a student the marks a quiet one gives (issue #41). The reference's own cells
# run under the fixed --timeout (TIMEOUT=), and one that runs over stops the grading.
TIMEOUT_FLOOR = 30
TIMEOUT_MULTIPLE = 10


def cell_keys(cell) -> list:
    """What a cell of a graded run is matched by with the reference's: its id (the student version keeps the
    chapter's cell ids), its source (the hidden tests' cells are the same in both)."""
    return [("id", cell.get("id")), ("source", cell.source)]


def cell_seconds(nb) -> dict:
    """{cell key: seconds it ran} of an executed notebook, from the timings nbclient records in each cell."""
    seconds = {}
    for cell in nb.cells:
        timing = cell.get("metadata", {}).get("execution", {})
        start, end = (
            timing.get("iopub.execute_input"),
            timing.get("shell.execute_reply"),
        )
        if cell.cell_type != "code" or not (start and end):
            continue
        ran = (
            datetime.fromisoformat(end) - datetime.fromisoformat(start)
        ).total_seconds()
        for key in cell_keys(cell):
            if key[1]:
                seconds[key] = max(seconds.get(key, 0.0), ran)
    return seconds


def cell_limits(
    seconds: dict, floor: float = TIMEOUT_FLOOR, multiple: float = TIMEOUT_MULTIPLE
):
    """The seconds a submission's cell may run: `multiple` times what the same cell took in the reference's run
    (`seconds`, from `cell_seconds`), at least `floor`; a cell the reference has not (an edited one, a grader's
    watch) may run as long as the reference's longest."""
    longest = max(seconds.values(), default=0.0)

    def limit(cell) -> float:
        took = next(
            (seconds[key] for key in cell_keys(cell) if key in seconds), longest
        )
        return max(floor, multiple * took)

    return limit


def reference_records(
    chapter: str,
    timeout: int = GRADE_CELL_TIMEOUT,
    parameters: dict | None = None,
    secret: str | None = None,
    reference: Path | None = None,
    hidden: Path = HIDDEN,
    timed: bool = False,
    template: Path | None = None,
):
    """What the hidden tests (in the folder `hidden`) observe of the reference solutions, each exercise's in a
    process of its own as a submission's answers are (isolated.py), with the same parameters and secret: the
    instructor notebook's solutions (`reference`, default notebooks/NN_topic.ipynb) in the student version's
    (`template`) places. First the instructor notebook runs through, each cell under `timeout` seconds, in a kernel
    of its own that no submission touches. Stops with a message if a cell of it runs over or raises, or a hidden
    test does not pass the reference. With `timed`: (the records, how long each cell and each exercise's job ran:
    `cell_seconds`, with ("exercise", N) keys for the jobs)."""
    _, numbers = exercises(chapter, secret, hidden)
    instructor = nbformat.read(reference or instructor_notebook(chapter), as_version=4)
    nb = with_preamble(instructor)
    if parameters:
        nb = inject_parameters(nb, parameters)
    headless()
    # its own kernel, over Unix sockets as the submissions' are, in a folder the sandboxed kernels cannot see
    with tempfile.TemporaryDirectory(dir=runs_folder()) as workdir:
        notes = execute(nb, timeout, Path(workdir), [])
    if problems := notes + cell_problems(nb, len(nb.cells)):
        raise SystemExit(
            f"The reference solutions of {chapter} did not run through, so nothing can be graded against them (each "
            f"cell may run {timeout} s: TIMEOUT= raises it on a slow or busy machine): "
            + "; ".join(problems)
        )
    seconds = cell_seconds(nb)
    pristine = with_parameters(template_of(chapter, template), parameters)
    solutions = isolated.solution_sources(instructor, pristine)
    found = {}
    with tempfile.TemporaryDirectory(dir=runs_folder()) as workdir:
        with Worker(Path(workdir)) as worker:
            for n in numbers:
                started = time.monotonic()
                found |= isolated.records(
                    worker,
                    pristine,
                    {n: [solutions[n]]},
                    isolated.tests_of(chapter, hidden),
                    secret,
                    chapter,
                    timeout,
                )
                seconds[("exercise", n)] = time.monotonic() - started
    if problems := reference_problems(found, numbers):
        raise SystemExit(
            f"The hidden tests of {chapter} do not pass the reference solutions, so nothing can be graded against "
            "them: " + "; ".join(problems)
        )
    return (found, seconds) if timed else found


def worker_problem(prefix: list) -> str | None:
    """None if a worker (worker.py) starts under `prefix` and runs a job, else what went wrong."""
    with tempfile.TemporaryDirectory(dir=runs_folder()) as folder:
        try:
            with Worker(Path(folder), list(prefix)) as worker:
                if worker.run("_result({'answer': 6 * 7})", timeout=60)["answer"] != 42:
                    return "a job gave a wrong result"
        except WorkerError as err:
            return str(err)
    return None


def job_limit(timeout, number: int) -> float:
    """The seconds exercise `number`'s job may run for a submission: `timeout` itself, or, given the reference's
    timings (`cell_limits`' arguments), `multiple` times what the reference's job took, at least `floor`."""
    if not isinstance(timeout, tuple):
        return timeout
    seconds, floor, multiple = timeout
    took = seconds.get(("exercise", number), max(seconds.values(), default=0.0))
    return max(floor, multiple * took)


def with_parameters(template, parameters: dict | None):
    """A copy of the student version with `parameters` set after its `parameters` cell, as papermill does."""
    template = nbformat.from_dict(template)
    return inject_parameters(template, parameters) if parameters else template


def run_submission(
    path: Path,
    chapter: str,
    timeout,
    parameters: dict | None = None,
    template: Path | None = None,
    prefix: list = (),
    secret: str | None = None,
    run_flagged: bool = False,
    hidden: Path = HIDDEN,
    seeds: dict | None = None,
) -> dict:
    """One submission run, not yet scored: {'student', 'records', 'held', 'notes', 'flags', 'self_checks'}; never
    raises for a bad submission. What runs is the chapter's student version (`template`) with the submission's
    answers spliced in (splice.py), then the hidden tests (in the folder `hidden`), whose records `score` judges.
    `parameters` (such as {"SEED": 7}) are set after the `parameters` cell, as papermill does. `prefix`: the command
    the kernel runs under (`sandbox_command()`), or () for none. `timeout`: seconds per cell, or how long the
    reference's cells took (`cell_seconds`, a dict), of which each cell gets `cell_limits`. `secret`: the instructor's secret phrase, from
    which the hidden tests draw their inputs (None: the seeds written in them); `seeds` instead, {exercise: {written
    seed: seed}} as the reference's runs drew them (isolated.drawn_seeds), so that the secret never reaches the
    process an answer runs in (`run_all` passes these). An answer the scan flags is held:
    the template's stub runs in its place, so the answer's code never runs and its mark needs review (judge.score);
    `run_flagged` runs it all the same (after a person has read it)."""
    source, numbers = exercises(chapter, secret, hidden)
    run = {
        "student": path.stem,
        "records": {},
        "held": {},
        "notes": "",
        "flags": "",
        "self_checks": "",
        "self_check_outcomes": {},
    }
    try:
        submitted = nbformat.read(path, as_version=4)
    except Exception as err:  # not JSON, not a notebook
        run["notes"] = f"not a valid notebook ({type(err).__name__}: {str(err)[:120]})"
        run["invalid"] = True
        return run
    pristine = template_of(chapter, template)
    nb, answers, flags = rebuild(pristine, submitted, known=known_cells(chapter))
    suspect = suspicions(answers, pristine, source)
    flags += [f"exercise {key}: {why}" for key, whys in suspect.items() for why in whys]
    if not run_flagged:
        run["held"] = {k: w for k, w in suspect.items() if w}
    if run["held"]:
        nb, _, _ = rebuild(pristine, submitted, frozenset(run["held"]))
    spliced = nb
    nb = with_preamble(nb, pristine)
    if parameters:
        nb = inject_parameters(nb, parameters)
    n_submitted = len(nb.cells)
    headless()
    limit = cell_limits(*timeout) if isinstance(timeout, tuple) else timeout
    with tempfile.TemporaryDirectory(dir=runs_folder()) as workdir:
        (Path(workdir) / "notebook").mkdir()
        (Path(workdir) / "answers").mkdir()
        notes = execute(nb, limit, Path(workdir) / "notebook", list(prefix))
        # each answer in a process of its own, where the helpers its exercise forbids do not exist (isolated.py)
        rebuilt = with_parameters(pristine, parameters)
        stubs = isolated.stub_indices(rebuilt)
        answers = {
            n: [spliced.cells[stubs[n]].source]
            for n in numbers
            if n in stubs and n not in run["held"]
        }
        try:
            with Worker(Path(workdir) / "answers", list(prefix)) as worker:
                for n, sources in answers.items():
                    run["records"] |= isolated.records(
                        worker,
                        rebuilt,
                        {n: sources},
                        isolated.tests_of(chapter, hidden),
                        secret,
                        chapter,
                        job_limit(timeout, n),
                        seeds,
                    )
        except WorkerError as err:
            notes.append(f"grading stopped: {err}")
    run["notes"] = "; ".join(cell_problems(nb, n_submitted) + notes)
    run["flags"] = "; ".join(flags)
    run["self_checks"] = self_checks(nb, n_submitted)
    run["self_check_outcomes"] = self_check_outcomes(nb, n_submitted)
    return run


KERNEL_HELP = """\
No kernel starts{where}, so nothing was graded:
  {why}
Check that `make venv` has built .venv{hint}."""


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
    timeout_floor: float = TIMEOUT_FLOOR,
    timeout_multiple: float = TIMEOUT_MULTIPLE,
) -> tuple:
    """(the run of every submission in the folder, what the hidden tests observed of the reference solutions),
    `jobs` at a time; each submission in the sandbox, with `memory_gb` of address space, unless `sandbox` is False.
    First the reference solutions run, in a kernel of their own (`reference`: the instructor notebook, by default
    notebooks/NN_topic.ipynb), each cell under `timeout` seconds; then each submission's cell may run
    `timeout_multiple` times as long as the same cell of the reference took, at least `timeout_floor` seconds
    (`cell_limits`). `hidden`: the folder of the hidden tests (an instructor's own, or the book's). Stops with a
    message, before grading anything, where no kernel starts (in the sandbox, or at all)."""
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
    # the book (the instructor notebooks hold the solutions), the submissions, the reference's folder
    hide = (settings.ROOT, submissions, reference.parent)
    prefix = []
    if sandbox:
        if why := sandbox_problem():
            raise SystemExit(NO_SANDBOX_HELP.format(why=why))
        prefix = sandbox_command(memory_gb, hide)
        # the whole sandbox once, mounts and all, so that a system that cannot make it stops here with a message,
        # not with every submission's kernel dying
        with tempfile.TemporaryDirectory(dir=runs_folder()) as probe:
            command = [probe if part == FOLDER else part for part in prefix]
            if why := sandbox_problem(command):
                raise SystemExit(NO_SANDBOX_HELP.format(why=why))
    # and a kernel in it: a sandbox that runs `true` may still leave Python, the venv or the sockets out of reach
    if why := kernel_problem(prefix, runs_folder()):
        raise SystemExit(
            KERNEL_HELP.format(
                where=" in the grading sandbox" if sandbox else "",
                why=why,
                hint=" and that `python -m booktools.grading.sandbox` passes; SANDBOX=0 grades without the sandbox, "
                "only inside a throwaway container without network"
                if sandbox
                else "",
            )
        )
    # and the process the answers run in (worker.py), in the same sandbox
    if why := worker_problem(prefix):
        raise SystemExit(
            f"The process that runs each answer does not start{' in the grading sandbox' if sandbox else ''}, so "
            f"nothing was graded: {why}"
        )
    expected, seconds = reference_records(
        chapter, timeout, None, secret, reference, hidden, timed=True, template=template
    )
    limits = (seconds, timeout_floor, timeout_multiple)
    if sandbox:  # CPU time: a busy machine stretches wall-clock time, never CPU time
        longest = sum(
            max(timeout_floor, timeout_multiple * took)
            for (kind, _), took in seconds.items()
            if kind in ("source", "exercise")
        )
        prefix = sandbox_command(memory_gb, hide, max(GRADE_CPU_SECONDS, longest))
    n = len(paths)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        runs = list(
            pool.map(
                run_submission,
                paths,
                [chapter] * n,
                [limits] * n,
                [None] * n,
                [template] * n,
                [prefix] * n,
                [None] * n,  # the seeds the reference drew, never the secret
                [run_flagged] * n,
                [hidden] * n,
                [isolated.drawn_seeds(expected)] * n,
            )
        )
    stopped = [
        r for r in runs if "execution stopped" in r["notes"] and not r["records"]
    ]
    if stopped and len(stopped) == len([r for r in runs if not r.get("invalid")]):
        raise SystemExit(
            KERNEL_HELP.format(
                where=" for any submission", why=stopped[0]["notes"], hint=""
            )
        )
    return runs, expected


def grade(submissions: Path, chapter: str, **options) -> list:
    """A row of grades.csv for every submission in the folder (options: those of `run_all`), each answer judged
    here, in the grader's process, against the reference solutions (`score`)."""
    runs, expected = run_all(submissions, chapter, **options)
    return [score(run, expected) for run in runs]
