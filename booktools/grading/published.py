"""Every code cell a chapter's student version has held, as fingerprints: booktools/grading/published/NN_topic.txt.

A student works in the student version of the day they opened it. When a later edition changes a cell they did not
touch (a self-check made clearer, a Colab form's title, a cell dropped), their copy of that cell is not an edit of
theirs, and grading must not flag it. `make student` adds the fingerprints of the cells it writes to the chapter's
file, and never removes one, so every cell of every student version published since the file began is known. The
fingerprint is of the cell's text as splice.py compares it (trailing spaces and a form's title line left out).
Usage: python -m booktools.grading.published --backfill   (the student versions in the git history, once)
"""

import subprocess
import sys

import nbformat

from booktools.grading.splice import fingerprint
from booktools.settings import NOTEBOOKS, PUBLISHED, ROOT


def path_of(chapter: str):
    return PUBLISHED / f"{chapter}.txt"


def published(chapter: str) -> frozenset:
    """The fingerprints of every code cell the chapter's student versions have held (none for a test's chapter)."""
    path = path_of(chapter)
    return frozenset(path.read_text().split()) if path.exists() else frozenset()


def record(chapter: str, notebooks: list) -> bool:
    """Add the code cells of `notebooks` (student versions of `chapter`) to its file; True if it changed."""
    known = published(chapter)
    cells = {
        fingerprint(cell.source)
        for nb in notebooks
        for cell in nb.cells
        if cell.cell_type == "code" and cell.source.strip()
    }
    if cells <= known:
        return False
    PUBLISHED.mkdir(parents=True, exist_ok=True)
    path_of(chapter).write_text("\n".join(sorted(known | cells)) + "\n")
    return True


def backfill() -> None:
    """Record every version of every student version in the git history."""
    for chapter in (p.stem for p in NOTEBOOKS):
        path = f"notebooks/student/{chapter}.ipynb"
        commits = subprocess.run(
            ["git", "log", "--format=%H", "--", path],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        versions = []
        for commit in commits:
            text = subprocess.run(
                ["git", "show", f"{commit}:{path}"],
                cwd=ROOT,
                capture_output=True,
                text=True,
            ).stdout
            if text:
                versions.append(nbformat.reads(text, as_version=4))
        record(chapter, versions)
        print(f"{chapter}: {len(versions)} versions, {len(published(chapter))} cells")


if __name__ == "__main__":
    if sys.argv[1:] != ["--backfill"]:
        raise SystemExit(__doc__.rsplit("Usage: ", 1)[1])
    backfill()
