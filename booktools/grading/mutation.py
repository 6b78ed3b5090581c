"""Mutation tests for the hidden tests: answers that must lose the mark, and correct alternatives that must get it.

`booktools/grading/mutants/NN_topic.py` is a series of mutants, each a `# %% exercise N, mark M: what it is` line
and the code below it, which replaces the exercise's solution (it defines the same names); M is the mark it must
get. A hidden test that gives a wrong answer the mark, or a correct alternative none, is a failing test. A mutant
that tampers with the kernel (every exercise has one) is held by the scan, as `make grade` holds such an answer: it
never runs, and gets 0; a correct alternative that the scan holds is a failing test too.
tests/test_notebooks_run.py grades every mutant of a chapter at the end of the chapter's graded run, in the same
kernel (no notebook runs again), and restores the reference solution after each exercise's mutants. Each mutant is
judged as `make grade` judges an answer (judge.verdict): what its hidden test observed against what the same test
observed of the reference solutions, which ran in that kernel before the mutants.

Usage, for authors writing mutants: python -m booktools.grading.mutation NN_topic [SECRET ...]
(runs the instructor notebook once, then every mutant, and prints each wrong mark; exit status 1 if there is one.
With secrets, the hidden tests and the mutants again under each, in the same kernel: they must tell right from wrong
on whatever inputs an instructor's secret draws. About a minute a chapter, plus a few seconds a secret.)"""

import re
import sys
import tempfile
from pathlib import Path

import nbformat

from booktools.execute import run_notebook
from booktools.grading.cells import (
    exercises,
    grading_cells,
    records,
    secret_number,
    with_preamble,
)
from booktools.grading.judge import reference_problems, verdict
from booktools.grading.scan import suspicions
from booktools.settings import MUTANTS, NOTEBOOKS, STUDENT_DIR, headless

TAG = "mutant"  # the metadata tag of a mutant's grading cell: {"mutant": index}
HELD = "held"  # a mutant the scan flags is held, as `make grade` holds such an answer: {"held": reasons}, mark 0


HEADER = re.compile(r"^# %% exercise (\d+), mark ([01]): (.+)$", re.M)


def mutants(chapter: str) -> list:
    """[(exercise, mark, what, code)] of a chapter; [] when it has none yet."""
    path = MUTANTS / f"{chapter}.py"
    if not path.exists():
        return []
    # exercise, mark, what, code, exercise, ...
    parts = HEADER.split(path.read_text())[1:]
    return [
        (int(n), int(m), what, code.strip() + "\n")
        for n, m, what, code in zip(*[iter(parts)] * 4)
    ]


def mutant_cells(chapter: str, reference: list) -> list:
    """Cells to append to a kernel in which the chapter and the hidden tests have run: for each mutant, its code and
    its exercise's hidden test; after each exercise's mutants, that exercise's reference solution again."""
    source, numbers = exercises(
        chapter
    )  # the source only for the call cell ([1]) below
    cells = []
    found = mutants(chapter)
    template = nbformat.read(STUDENT_DIR / f"{chapter}.ipynb", as_version=4)
    for exercise in sorted({m[0] for m in found}):
        if exercise not in numbers:
            raise ValueError(
                f"{chapter}: a mutant of exercise {exercise}, which has no hidden test"
            )
        for index, (n, _, _, code) in enumerate(found):
            if n != exercise:
                continue
            # held as `make grade` holds it: never run (it could tamper with the kernel)
            if reasons := suspicions({n: code}, template, source)[n]:
                cells.append(
                    nbformat.v4.new_code_cell("", metadata={TAG: index, HELD: reasons})
                )
                continue
            # the test call alone: the hidden source has already run
            grading = grading_cells(source, [n])[1]
            grading.metadata[TAG] = index
            cells += [nbformat.v4.new_code_cell(code), grading]
        cells.append(nbformat.v4.new_code_cell(reference[exercise - 1]))
    return cells


def marks(chapter: str, nb: nbformat.NotebookNode, reference: dict) -> list:
    """What each mutant got in an executed notebook with mutant_cells, judged against `reference`, what the hidden
    tests recorded of the reference solutions (`judge.verdict`): [{'exercise', 'what', 'should', 'got', 'reason'}]
    in the file's order; 'got' is None where the hidden test reported nothing."""
    found, got = mutants(chapter), []
    for cell in nb.cells:
        if TAG not in cell.metadata:
            continue
        n, mark, what, _ = found[cell.metadata[TAG]]
        if HELD in cell.metadata:
            passed, why = False, f"held by the scan: {', '.join(cell.metadata[HELD])}"
        elif printed := records(nbformat.v4.new_notebook(cells=[cell]), 0).get(n):
            passed, why = verdict(reference[n], printed)
        else:
            passed, why = None, "the hidden test reported nothing"
        got.append(
            {
                "exercise": n,
                "what": what,
                "should": mark,
                "got": None if passed is None else int(passed),
                "reason": why,
            }
        )
    return got


def wrong_marks(chapter: str, nb: nbformat.NotebookNode, reference: dict) -> list:
    """A sentence for each mutant that got the wrong mark (or none) in an executed notebook with mutant_cells."""
    return [
        f"exercise {m['exercise']}, {m['what']}: "
        + (
            m["reason"]
            if m["got"] is None
            else f"got {m['got']}, should get {m['should']} ({m['reason']})"
        )
        for m in marks(chapter, nb, reference)
        if m["got"] != m["should"]
    ]


def main(chapter: str, secrets: list) -> int:
    """Run the instructor notebook once; then, for no secret and for each of `secrets`, the hidden tests on the
    reference solutions and on every mutant, in the same kernel (the hidden tests read _SECRET when they run)."""
    path = next((p for p in NOTEBOOKS if p.stem == chapter), None)
    if path is None:
        raise SystemExit(
            f"No chapter {chapter!r}: give a name such as {NOTEBOOKS[0].stem}."
        )
    if not mutants(chapter):
        raise SystemExit(
            f"No mutants for {chapter}: write {MUTANTS / (chapter + '.py')}."
        )
    nb = with_preamble(nbformat.read(path, as_version=4))
    reference = [c.source for c in nb.cells if "### BEGIN SOLUTION" in c.source]
    source, numbers = exercises(chapter)
    nb.cells += grading_cells(source, numbers)[:1]  # the hidden tests' definitions
    segments = []
    for secret in [None, *secrets]:
        start = len(nb.cells)
        number = secret_number(secret, chapter) if secret else 0
        nb.cells.append(nbformat.v4.new_code_cell(f"_SECRET = {number}"))
        nb.cells += grading_cells(source, numbers)[1:]
        solved = len(nb.cells)
        nb.cells += mutant_cells(chapter, reference)
        segments.append((secret, start, solved, len(nb.cells)))
    headless()
    with tempfile.TemporaryDirectory() as workdir:
        run_notebook(nb, Path(workdir), allow_errors=True)
    found, status = mutants(chapter), 0
    for secret, start, solved, end in segments:
        reference = records(nbformat.v4.new_notebook(cells=nb.cells[start:solved]), 0)
        problems = reference_problems(reference, numbers)
        if not problems:
            problems = wrong_marks(
                chapter, nbformat.v4.new_notebook(cells=nb.cells[solved:end]), reference
            )
        print(
            f"{chapter}, {f'secret {secret!r}' if secret else 'no secret'}: "
            f"{len(found) - len(problems)} of {len(found)} mutants got the right mark"
        )
        for line in problems:
            print("  WRONG:", line)
        status |= bool(problems)
    return status


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(
            "usage: python -m booktools.grading.mutation NN_topic [SECRET ...]   (for example 02_identity_and_zero_init)"
        )
    sys.exit(main(sys.argv[1], sys.argv[2:]))
