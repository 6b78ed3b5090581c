"""grades.csv, and the same scores as a learning-management system's gradebook import reads them."""

import csv
from pathlib import Path


def write_csv(rows: list, out: Path) -> None:
    with open(out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


# What a learning-management system's gradebook import reads. Each row's student is the submission's file name,
# so name the files by the login the LMS knows (the instructors page has a recipe). A student reads what an LMS
# shows, so it carries only the row's `feedback` (which property failed, in the words written for students), never
# its `reasons`, `flags` or `notes` (the instructor's: the drawn inputs, what to re-run). A row with an exercise that
# needs review has a blank score, which both imports leave alone, never a 0.
# - Canvas (Grades > Import): Student, ID, SIS User ID, SIS Login ID and Section, then one column per assignment,
#   whose header is the assignment's name; a row is matched by ID, SIS User ID or SIS Login ID. Its import has no
#   comment column (any other column becomes an assignment), so "needs review" is in grades.csv and the summary the
#   grader prints.
# - Moodle (Grades > Import > CSV file): any header; at import you map the identifying column (here Username) to
#   the user, the score column to the grade item, and Feedback to its feedback.
LMS_FORMATS = {
    "canvas": lambda row, assignment: {
        "Student": row["student"],
        "ID": "",
        "SIS User ID": "",
        "SIS Login ID": row["student"],
        "Section": "",
        assignment: row["score"],
    },
    "moodle": lambda row, assignment: {
        "Username": row["student"],
        assignment: row["score"],
        "Feedback": row["feedback"] or "all exercises passed",
    },
}


def write_lms_csv(rows: list, out: Path, lms: str, assignment: str) -> None:
    """grades.csv's scores as `lms` imports them: one row per student, the score (out of the number of
    exercises) in a column named after the assignment."""
    write_csv([LMS_FORMATS[lms](row, assignment) for row in rows], out)
