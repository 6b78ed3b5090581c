"""`make grade SUBMISSIONS=dir CHAPTER=NN_topic`: grade every submitted notebook of one chapter.

What runs is not the submitted notebook but the chapter's student version with the submission's answers spliced
in (the code that replaces each stub, and the cells tagged `answer`; see rebuild.py): a cell added or edited
elsewhere never runs, and is flagged. The answers are also scanned for code that tampers with the kernel, and
flagged for a person to review. Each submission runs in its own kernel, in an empty folder, headless, with a time
limit per cell; a cell that raises or loops forever is recorded and the run goes on. Then the chapter's hidden
tests (`tests/hidden/NN_topic.py`, one `exercise_N()` per exercise, never shipped to students or the site) run in
the same kernel. Bad submissions become rows, not crashes. Writes a CSV and prints a summary.
"""

import argparse
import csv
import json
import re
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
import settings  # noqa: E402  (settings.HIDDEN is read at call time: a test points it at a toy chapter)
from execute import inject_parameters  # noqa: E402
from rebuild import module_names, rebuild, scan  # noqa: E402
from settings import GRADE_CELL_TIMEOUT, headless  # noqa: E402

MARK = "GRADE "


# helpers every chapter's tests may use
COMMON = Path(__file__).resolve().parents[1] / "hidden" / "_common.py"


def exercises(chapter: str) -> tuple[str, list]:
    """The hidden tests' source (after the shared helpers of tests/hidden/_common.py) and the exercise numbers it
    covers."""
    path = settings.HIDDEN / f"{chapter}.py"
    if not path.exists():
        raise SystemExit(f"No hidden tests for chapter {chapter!r}: expected {path}.")
    source = path.read_text()
    numbers = sorted(int(n) for n in re.findall(r"^def exercise_(\d+)\(", source, re.M))
    return COMMON.read_text() + "\n\n" + source, numbers


def grading_cells(source: str, numbers: list) -> list:
    cells = [nbformat.v4.new_code_cell(source)]
    for n in numbers:
        cells.append(
            nbformat.v4.new_code_cell(
                "import json as _json\n"
                "try:\n"
                f"    exercise_{n}()\n"
                f"    print({MARK!r} + _json.dumps({{'exercise': {n}, 'passed': True}}))\n"
                "except BaseException as _err:  # KeyboardInterrupt too: a timed-out test is a failed test\n"
                "    _reason = 'timed out' if isinstance(_err, KeyboardInterrupt) else f'{type(_err).__name__}: {_err}'\n"
                f"    print({MARK!r} + _json.dumps({{'exercise': {n}, 'passed': False, 'reason': _reason[:300]}}))\n"
            )
        )
    return cells


def cell_problems(nb, n_submitted: int) -> list:
    """A sentence for each submitted cell that raised or timed out."""
    notes = []
    for i, cell in enumerate(nb.cells[:n_submitted]):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                what = (
                    "timed out and was interrupted"
                    if out["ename"] == "KeyboardInterrupt"
                    else f"raised {out['ename']}: {out['evalue'][:120]}"
                )
                notes.append(f"cell {i} {what}")
    return notes


def results(nb, n_submitted: int) -> dict:
    """{exercise number: (passed, reason)} from the grading cells' output of an executed notebook."""
    found = {}
    for cell in nb.cells[n_submitted:]:
        for out in cell.get("outputs", []):
            for line in out.get("text", "").splitlines():
                if line.startswith(MARK):
                    result = json.loads(line[len(MARK) :])
                    found[result["exercise"]] = (
                        result["passed"],
                        "passed" if result["passed"] else result["reason"],
                    )
    return found


def template_of(chapter: str, template: Path | None = None) -> nbformat.NotebookNode:
    path = template or settings.STUDENT_DIR / f"{chapter}.ipynb"
    if not path.exists():
        raise SystemExit(
            f"No student version of {chapter!r} to grade against: expected {path} (make student)."
        )
    return nbformat.read(path, as_version=4)


def grade_one(
    path: Path,
    chapter: str,
    timeout: int,
    parameters: dict | None = None,
    template: Path | None = None,
) -> dict:
    """One row: {'student', 'exercise_N': 0/1, 'score', 'out_of', 'reasons', 'notes', 'flags'}; never raises for a
    bad submission. What runs is the chapter's student version (`template`) with the submission's answers spliced
    in (rebuild.py). `parameters` (such as {"SEED": 7}) are set after the `parameters` cell, as papermill does."""
    source, numbers = exercises(chapter)
    row = {
        "student": path.stem,
        **{f"exercise_{n}": 0 for n in numbers},
        "score": 0,
        "out_of": len(numbers),
    }
    reasons, notes = {n: "no result" for n in numbers}, []
    try:
        submitted = nbformat.read(path, as_version=4)
    except Exception as err:  # not JSON, not a notebook
        row.update(
            reasons="; ".join(f"exercise {n}: not graded" for n in numbers),
            notes=f"not a valid notebook ({type(err).__name__}: {str(err)[:120]})",
            flags="",
        )
        return row
    pristine = template_of(chapter, template)
    nb, answers, flags = rebuild(pristine, submitted)
    modules = module_names(pristine)
    flags += [
        f"exercise {key}: {why}"
        for key, code in answers.items()
        for why in scan(code, modules)
    ]
    if parameters:
        nb = inject_parameters(nb, parameters)
    n_submitted = len(nb.cells)
    nb.cells += grading_cells(source, numbers)
    headless()
    with tempfile.TemporaryDirectory() as workdir:
        client = NotebookClient(
            nb,
            timeout=timeout,
            interrupt_on_timeout=True,
            allow_errors=True,
            kernel_name="python3",
            resources={"metadata": {"path": workdir}},
        )
        try:
            client.execute()
        except Exception as err:  # the kernel died, or could not start
            why = (
                str(err)[:120]
                or "the kernel died or stopped answering (out of memory?); grade this submission again alone"
            )
            notes.append(f"execution stopped: {type(err).__name__}: {why}")
    notes = cell_problems(nb, n_submitted) + notes
    for n, (passed, reason) in results(nb, n_submitted).items():
        row[f"exercise_{n}"], reasons[n] = int(passed), reason
    row["score"] = sum(row[f"exercise_{n}"] for n in numbers)
    row["reasons"] = "; ".join(
        f"exercise {n}: {r}" for n, r in reasons.items() if r != "passed"
    )
    row["notes"] = "; ".join(notes)
    row["flags"] = "; ".join(flags)
    return row


def grade(
    submissions: Path,
    chapter: str,
    timeout: int = GRADE_CELL_TIMEOUT,
    jobs: int = 2,
    template: Path | None = None,
) -> list:
    paths = sorted(p for p in submissions.iterdir() if p.suffix == ".ipynb")
    if not paths:
        raise SystemExit(f"No .ipynb files in {submissions}.")
    exercises(chapter)  # fail early on an unknown chapter
    template_of(chapter, template)
    n = len(paths)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(
            pool.map(
                grade_one,
                paths,
                [chapter] * n,
                [timeout] * n,
                [None] * n,
                [template] * n,
            )
        )


def write_csv(rows: list, out: Path) -> None:
    with open(out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "submissions",
        type=Path,
        help="folder of submitted .ipynb files, one per student",
    )
    ap.add_argument("--chapter", required=True, help="e.g. 02_identity_and_zero_init")
    ap.add_argument(
        "--timeout",
        type=int,
        default=GRADE_CELL_TIMEOUT,
        help="seconds allowed per cell",
    )
    ap.add_argument("--jobs", type=int, default=2, help="submissions graded at once")
    ap.add_argument(
        "--out", type=Path, help="CSV file (default: SUBMISSIONS/grades.csv)"
    )
    ap.add_argument(
        "--hidden",
        type=Path,
        help="folder of your own hidden tests, NN_topic.py (default: tests/hidden)",
    )
    args = ap.parse_args()
    if args.hidden:
        settings.HIDDEN = args.hidden.resolve()
    rows = grade(args.submissions, args.chapter, args.timeout, args.jobs)
    out = args.out or args.submissions / "grades.csv"
    write_csv(rows, out)
    width = max(len(r["student"]) for r in rows)
    for r in rows:
        print(
            f"{r['student']:{width}s}  {r['score']}/{r['out_of']}  {r['reasons'] or 'all passed'}"
            + (f"  [{r['notes']}]" if r["notes"] else "")
            + (f"  FLAGGED for review: {r['flags']}" if r["flags"] else "")
        )
    print(f"wrote {out}")


if __name__ == "__main__":
    sys.exit(main())
