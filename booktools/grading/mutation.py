"""Mutation tests for the hidden tests: answers that must lose the mark, and correct alternatives that must get it.

`booktools/grading/mutants/NN_topic.py` is a series of mutants, each a `# %% exercise N, mark M: what it is` line
and the code below it, which replaces the exercise's solution (it defines the same names); M is the mark it must
get. A hidden test that gives a wrong answer the mark, or a correct alternative none, is a failing test. A mutant
that tampers with the kernel (every exercise has one) is held by the scan, as `make grade` holds such an answer: it
never runs, and gets 0; a correct alternative that the scan holds is a failing test too.
tests/test_notebooks_run.py grades every mutant of a chapter as `make grade` grades an answer: in isolation
(isolated.py: a process of its own, where the helpers its exercise forbids do not exist; the mutants of one exercise
share the context's run, each in a process forked from it), and judged by judge.verdict: what its hidden test
observed against what the same test observed of the reference solutions, graded the same way.

Usage, for authors writing mutants: python -m booktools.grading.mutation NN_topic [SECRET ...]
(grades the reference solutions and every mutant, and prints each wrong mark; exit status 1 if there is one. With
secrets, again under each: they must tell right from wrong on whatever inputs an instructor's secret draws.)"""

import re
import sys
import tempfile
from pathlib import Path

import nbformat

from booktools.grading import isolated
from booktools.grading.cells import exercises
from booktools.grading.judge import reference_problems, verdict
from booktools.grading.scan import suspicions
from booktools.grading.worker import Worker
from booktools.settings import MUTANTS, NOTEBOOKS, STUDENT_DIR, headless

HELD = "held"  # a mutant the scan flags is held, as `make grade` holds such an answer: never run, mark 0


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


def mutant_records(chapter: str, worker, template, secret=None) -> list:
    """For each mutant of the chapter, in the file's order: ('held', reasons) where the scan holds it, as `make grade`
    holds such an answer (never run), else ('ran', the record its hidden test made of it), each graded in isolation
    (isolated.py) as a submission's answer is, the mutants of one exercise in one job. `template`: the student
    version (with any parameters set)."""
    source, numbers = exercises(chapter)  # what the scan reads
    tests = isolated.tests_of(chapter)
    found = mutants(chapter)
    results = [None] * len(found)
    for exercise in sorted({m[0] for m in found}):
        if exercise not in numbers:
            raise ValueError(
                f"{chapter}: a mutant of exercise {exercise}, which has no hidden test"
            )
        run = []
        for index, (n, _, _, code) in enumerate(found):
            if n != exercise:
                continue
            if reasons := suspicions({n: code}, template, source)[n]:
                results[index] = (HELD, reasons)
            else:
                run.append(index)
        # the mutant's code in place of its exercise's whole cell, as it replaces the solution
        sources = [found[i][3] for i in run]
        got = (
            isolated.records(
                worker, template, {exercise: sources}, tests, secret, chapter
            )[exercise]
            if run
            else []
        )
        for index, record in zip(run, got):
            results[index] = ("ran", record)
    return results


def marks(chapter: str, results: list, reference: dict) -> list:
    """What each mutant got (`mutant_records`' results), judged against `reference`, what the hidden tests recorded of
    the reference solutions (`judge.verdict`): [{'exercise', 'what', 'should', 'got', 'reason'}] by exercise, in the
    file's order within each; 'got' is None where the hidden test reported nothing."""
    got = []
    # by exercise, then in the file's order within each
    order = sorted(range(len(results)), key=lambda i: (mutants(chapter)[i][0], i))
    for (n, mark, what, _), (kind, found) in (
        (mutants(chapter)[i], results[i]) for i in order
    ):
        if kind == HELD:
            passed, why = False, f"held by the scan: {', '.join(found)}"
        elif found and found.get("observed") is not None:
            passed, why = verdict(reference[n], [found])
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


def wrong_marks(got: list) -> list:
    """A sentence for each mutant that got the wrong mark (or none), of `marks`' list."""
    return [
        f"exercise {m['exercise']}, {m['what']}: "
        + (
            m["reason"]
            if m["got"] is None
            else f"got {m['got']}, should get {m['should']} ({m['reason']})"
        )
        for m in got
        if m["got"] != m["should"]
    ]


def main(chapter: str, secrets: list) -> int:
    """The hidden tests on the reference solutions and on every mutant, each in isolation as `make grade` runs an
    answer, for no secret and for each of `secrets` (the hidden tests draw their inputs from it)."""
    path = next((p for p in NOTEBOOKS if p.stem == chapter), None)
    if path is None:
        raise SystemExit(
            f"No chapter {chapter!r}: give a name such as {NOTEBOOKS[0].stem}."
        )
    if not mutants(chapter):
        raise SystemExit(
            f"No mutants for {chapter}: write {MUTANTS / (chapter + '.py')}."
        )
    template = nbformat.read(STUDENT_DIR / f"{chapter}.ipynb", as_version=4)
    solutions = isolated.solution_sources(nbformat.read(path, as_version=4), template)
    tests, numbers = isolated.tests_of(chapter), exercises(chapter)[1]
    found, status = mutants(chapter), 0
    headless()
    with tempfile.TemporaryDirectory() as workdir, Worker(Path(workdir)) as worker:
        for secret in [None, *secrets]:
            reference = isolated.records(
                worker,
                template,
                {n: [solutions[n]] for n in numbers},
                tests,
                secret,
                chapter,
            )
            problems = reference_problems(reference, numbers)
            if not problems:
                results = mutant_records(chapter, worker, template, secret)
                problems = wrong_marks(marks(chapter, results, reference))
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
