"""The cells the grader adds to a notebook, the code it adds to each exercise's isolated run, and what it reads back.

Before the notebook: PREAMBLE (kernel_preamble.py), what the results are printed with, and before each answer a
watch on what the template's code defined (`with_preamble`); `cell_problems` and `self_checks` read the executed
notebook. The hidden tests (`exercises`) and the same PREAMBLE and watch also go into each exercise's isolated run
(isolated.py), whose record the watch's verdict (`UNCHANGED`) closes.
"""

import hashlib
import re
from pathlib import Path

import nbformat

from booktools.grading.names import top_level_names
from booktools.grading.splice import ANSWER_TAG, STUB
from booktools.settings import HIDDEN

# helpers every chapter's tests may use
COMMON = Path(__file__).resolve().parent / "hidden" / "_common.py"


def secret_number(secret: str, chapter: str = "") -> int:
    """The instructor's secret phrase as the number the hidden tests' `_seed` mixes into every seed they draw
    inputs from (booktools/grading/hidden/_common.py): 128 bits, too many to search for from the seeds it gives, and
    one number per chapter, so that a number a kernel leaks tells nothing of the other chapters' inputs; never 0,
    which means no secret."""
    digest = hashlib.sha256(f"{chapter}:{secret}".encode()).digest()
    return int.from_bytes(digest[:16], "big") or 1


def exercises(
    chapter: str, secret: str | None = None, hidden: Path = HIDDEN
) -> tuple[str, list]:
    """The hidden tests' source (after the shared helpers of booktools/grading/hidden/_common.py and, with a secret, the
    number made from it) and the exercise numbers it covers."""
    path = hidden / f"{chapter}.py"
    if not path.exists():
        raise SystemExit(f"No hidden tests for chapter {chapter!r}: expected {path}.")
    source = path.read_text()
    numbers = sorted(int(n) for n in re.findall(r"^def exercise_(\d+)\(", source, re.M))
    keyed = f"\n_SECRET = {secret_number(secret, chapter)}\n" if secret else ""
    return COMMON.read_text() + keyed + "\n\n" + source, numbers


# The first cell of every graded run, before any answer (kernel_preamble.py: ruff reads it as the code it is).
PREAMBLE = (Path(__file__).parent / "kernel_preamble.py").read_text()
WATCH = "_GRADER_WATCH({names!r})\n"


UNCHANGED = (
    "an answer changed a class, a function or a library that the notebook and its tests rely on (such as "
    "assigning to Block.forward or torch.equal): an answer may change only the objects it is given"
)


def answer_cells(nb) -> list:
    """The indices of the code cells that hold a student's answer: a solution region (or its stub), or a cell
    tagged `answer`."""
    return [
        i
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code"
        and (
            ANSWER_TAG in cell.metadata.get("tags", [])
            or "solution" in cell.metadata.get("tags", [])
            or STUB.search(cell.source)
            or "### BEGIN SOLUTION" in cell.source
        )
    ]


def with_preamble(nb, template=None) -> nbformat.NotebookNode:
    """`nb` with PREAMBLE as its first cell, and before each answer's cell a cell that starts watching what the
    template's code has defined by then (`_GRADER_WATCH`): the grading cells report what has changed since.
    `template`: the student version `nb` was rebuilt from, whose stubs say where the answers are (the default:
    `nb`'s own solution markers and tags)."""
    nb = nbformat.from_dict(nb)
    template = nb if template is None else template
    cells = answer_cells(template)
    names = set().union(*(top_level_names(template.cells[i].source) for i in cells))
    for i in reversed(cells):
        nb.cells.insert(i, nbformat.v4.new_code_cell(WATCH.format(names=sorted(names))))
    nb.cells.insert(0, nbformat.v4.new_code_cell(PREAMBLE))
    return nb


def graders_cell(cell) -> bool:
    """Whether a cell is one the grader added before the hidden tests (PREAMBLE, a watch)."""
    return cell.source == PREAMBLE or cell.source.startswith("_GRADER_WATCH(")


def cell_problems(nb, n_submitted: int) -> list:
    """A sentence for each submitted cell that raised or timed out."""
    notes = []
    cells = [c for c in nb.cells[:n_submitted] if not graders_cell(c)]
    for i, cell in enumerate(cells):  # numbered as in the student's notebook
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                what = (
                    "timed out and was interrupted"
                    if out["ename"] == "KeyboardInterrupt"
                    else f"raised {out['ename']}: {out['evalue'][:120]}"
                )
                notes.append(f"cell {i} {what}")
    return notes


def _self_check_cells(nb, n_submitted: int) -> list:
    """[(exercise number or None, every line it printed, its error or None)] for each self-check cell, in order."""
    found = []
    for cell in nb.cells[:n_submitted]:
        if "self-check" not in cell.metadata.get("tags", []):
            continue
        outputs = cell.get("outputs", [])
        lines = [
            line.strip()
            for o in outputs
            for line in o.get("text", "").splitlines()
            if line.strip()
        ]
        errors = [o for o in outputs if o.get("output_type") == "error"]
        error = None
        if errors:  # any error: an AssertionError the check raised, a GeneratorExit, a KeyboardInterrupt (timed out)
            e = errors[0]
            error = (
                "timed out"
                if e.get("ename") == "KeyboardInterrupt"
                else f"{e.get('ename')}: {e.get('evalue')}"
                if not (e.get("evalue") or "").startswith("Exercise ")
                else e["evalue"]
            )
        m = re.search(r"\bself_check\(\s*(\d+)", cell.source) or re.search(
            r"^Exercise (\d+):", "\n".join(lines + [error or ""]), re.M
        )
        found.append((int(m[1]) if m else None, lines, error))
    return found


def self_checks(nb, n_submitted: int) -> str:
    """What each self-check cell said in the graded run, as the student saw it, every line of it and its error:
    "Exercise 1: correct.", "Exercise 2: not yet right: ...". They never change the score (the hidden tests do), but
    they tell an instructor where a student's own check and the grade disagree (`self_check_outcomes`)."""
    said = []
    for _, lines, error in _self_check_cells(nb, n_submitted):
        text = " / ".join(lines + ([error] if error else []))
        said.append(text[:400] or "no output")
    return "; ".join(said)


def self_check_outcomes(nb, n_submitted: int) -> dict:
    """{exercise: {'correct': whether its self-check said "Exercise N: correct." and nothing against it, 'said': what
    it said otherwise}}: every line a self-check printed and any error it raised, not only the first line."""
    outcomes = {}
    for n, lines, error in _self_check_cells(nb, n_submitted):
        if n is None:
            continue
        verdicts = [line for line in lines if line.startswith(f"Exercise {n}:")]
        against = [line for line in verdicts if line != f"Exercise {n}: correct."]
        correct = not error and not against and f"Exercise {n}: correct." in verdicts
        said = (
            error
            or (against[0] if against else None)
            or ("no verdict" if not correct else "correct")
        )
        if (
            n in outcomes
        ):  # two self-check cells for one exercise: both must say correct
            correct = correct and outcomes[n]["correct"]
            said = outcomes[n]["said"] if not outcomes[n]["correct"] else said
        outcomes[n] = {"correct": correct, "said": said[:200]}
    return outcomes
