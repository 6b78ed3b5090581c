"""The grader's command line: `python -m booktools.grading SUBMISSIONS --chapter NN_topic [...]`, behind `make grade`.
Writes grades.csv (and an LMS's import file) and prints a line per student. How grading works: grade.py."""

import argparse
import os
import sys
from pathlib import Path

from booktools.grading import grade as grading
from booktools.grading.lms import LMS_FORMATS, write_csv, write_lms_csv
from booktools.settings import GRADE_CELL_TIMEOUT, GRADE_MEMORY_GB, HIDDEN

NO_SECRET = """\
No SECRET: the hidden tests draw their inputs from the seeds written in booktools/grading/hidden, which are public.
For a grade that counts, pass a phrase only you know: make grade SUBMISSIONS=... CHAPTER=... SECRET='...'"""


def main() -> None:
    ap = argparse.ArgumentParser(
        prog="python -m booktools.grading",
        description=grading.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
        help="seconds each cell of the reference solutions may run (a reference that runs over stops the grading); "
        f"each cell of a submission may run {grading.TIMEOUT_MULTIPLE} times as long as the same cell of the "
        f"reference took in the same run, at least {grading.TIMEOUT_FLOOR} s",
    )
    ap.add_argument("--jobs", type=int, default=2, help="submissions graded at once")
    ap.add_argument(
        "--out", type=Path, help="CSV file (default: SUBMISSIONS/grades.csv)"
    )
    ap.add_argument(
        "--memory-gb",
        type=float,
        default=GRADE_MEMORY_GB,
        help="address space each submission's kernel may use",
    )
    ap.add_argument(
        "--no-sandbox",
        action="store_true",
        help="grade without the sandbox (only inside a throwaway container without network)",
    )
    ap.add_argument(
        "--lms",
        choices=sorted(LMS_FORMATS),
        help="also write SUBMISSIONS/grades-<lms>.csv, for the gradebook import of Canvas or Moodle",
    )
    ap.add_argument(
        "--assignment",
        help="the assignment's name in the LMS, the score column's header (default: the chapter)",
    )
    ap.add_argument(
        "--secret",
        default=os.environ.get("SECRET") or None,
        help="a phrase only you know (default: $SECRET): the hidden tests draw their inputs from it, so a student "
        "who reads the public tests cannot know them",
    )
    ap.add_argument(
        "--run-flagged",
        action="store_true",
        help="run the answers the scan flags instead of holding them (held: not run, a blank score that needs review); "
        "only once you have read them",
    )
    ap.add_argument(
        "--hidden",
        type=Path,
        help="folder of your own hidden tests, NN_topic.py (default: booktools/grading/hidden)",
    )
    ap.add_argument(
        "--reference",
        type=Path,
        help="the notebook with the reference solutions the answers are judged against (default: "
        "notebooks/NN_topic.ipynb); with --hidden, for tests of your own",
    )
    args = ap.parse_args()
    if not args.secret:
        print(NO_SECRET, file=sys.stderr)
    rows = grading.grade(
        args.submissions,
        args.chapter,
        timeout=args.timeout,
        jobs=args.jobs,
        sandbox=not args.no_sandbox,
        memory_gb=args.memory_gb,
        secret=args.secret,
        run_flagged=args.run_flagged,
        reference=args.reference,
        hidden=args.hidden.resolve() if args.hidden else HIDDEN,
    )
    out = args.out or args.submissions / "grades.csv"
    write_csv(rows, out)
    if args.lms:
        lms_out = out.with_name(f"{out.stem}-{args.lms}.csv")
        write_lms_csv(rows, lms_out, args.lms, args.assignment or args.chapter)
        print(f"wrote {lms_out}, for {args.lms.capitalize()}'s gradebook import")
    width = max(len(r["student"]) for r in rows)
    for r in rows:
        mark = f"{r['score']}/{r['out_of']}" if r["score"] != "" else "NEEDS REVIEW"
        print(
            f"{r['student']:{width}s}  {mark}  {r['reasons'] or 'all passed'}"
            + (f"  [{r['notes']}]" if r["notes"] else "")
            + (f"  FLAGGED for review: {r['flags']}" if r["flags"] else "")
        )
    print(f"wrote {out}")
    if review := [r["student"] for r in rows if r["needs_review"]]:
        print(
            f"needs review ({len(review)}): {', '.join(review)}: their score is blank in every file written, read the "
            "held answers (grades.csv, reasons), then grade again with RUN_FLAGGED=1 or enter the mark by hand"
        )


if __name__ == "__main__":
    sys.exit(main())
