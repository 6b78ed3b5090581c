"""`make student`: write notebooks/colab/NN_topic.ipynb, the Colab copy of every chapter (booktools/build/colab.py),
and notebooks/student/NN_topic.ipynb, its student version, made from that copy.

In each student version every `### BEGIN SOLUTION` ... `### END SOLUTION` region becomes
`raise NotImplementedError("Exercise N: <what to do>")`, every output is cleared, the
self-checks stay, and the Colab badge and the "Next" link point at the
student copies.
Usage: python -m booktools.build.student [notebooks/NN_topic.ipynb ...]   (default: every chapter)
"""

import re
import sys
from pathlib import Path

import nbformat

from booktools.build.badges import BADGE, COLAB_LINK
from booktools.build.colab import colab_version, write_colab_versions
from booktools.settings import COLAB_DIR, NOTEBOOKS, ROOT, STUDENT_DIR, colab_url

SOLUTION = re.compile(
    r"^(?P<indent>[ \t]*)### BEGIN SOLUTION[^\n]*\n.*?^[ \t]*### END SOLUTION[^\n]*(\n|$)",
    re.M | re.S,
)
EXERCISE = re.compile(r"^#+\s*Exercise\s+(?P<number>\d+)\s*:\s*(?P<title>.+)$", re.M)
# The paragraph under each chapter's Exercises heading that opens the student version (dropped from it).
EXERCISES_BADGE = re.compile(
    r"\n\n\[!\[Do the exercises in Colab\]\(.*?before you open it\.", re.S
)
NOTE = (
    "\n\n> **Student version.** The solutions are removed. Replace each `raise NotImplementedError(...)` "
    "line with your code, run the cell, then run the self-check below it."
)


def stub(indent: str, number: str, title: str) -> str:
    message = f"Exercise {number} ({title.strip().rstrip('.')}): replace this line with your solution."
    return f"{indent}raise NotImplementedError({message!r})\n"


def student_version(nb: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    """The student version of an instructor notebook (a new object; `nb` is left alone), made from its Colab
    copy, so that its markdown is CommonMark too."""
    nb = colab_version(nb, ROOT / "notebooks" / name)
    nb.metadata.pop("widgets", None)  # the widgets' saved state is output too
    cells, exercise = [], ("?", "complete this exercise.")
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if cell.cell_type == "markdown":
            headings = EXERCISE.findall(cell.source)
            if headings:
                exercise = headings[-1]
        elif cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("execution", None)
            if "### BEGIN SOLUTION" in cell.source:
                cell.source = SOLUTION.sub(
                    lambda m: stub(m["indent"], *exercise), cell.source
                )
                cell.metadata["tags"] = [t for t in tags if t != "hide-input"]
        cells.append(cell)
    nb.cells = cells
    for cell in nb.cells[1:]:
        if cell.cell_type == "markdown":
            # the reader is in the student version already
            cell.source = EXERCISES_BADGE.sub("", cell.source)
            cell.source = COLAB_LINK.sub(
                lambda m: colab_url("student/" + m["path"].split("/")[-1]),
                cell.source,
            )
    title = nb.cells[0]
    title.source = BADGE.sub(f"]({colab_url('student/' + name)})", title.source)
    if NOTE.strip() not in title.source:
        title.source += NOTE
    return nb


def write_student_versions(
    notebooks: list, out_dir: Path = STUDENT_DIR, colab_dir: Path = COLAB_DIR
) -> list:
    """Write the Colab copies, then the student versions; return the paths written."""
    written = write_colab_versions(notebooks, colab_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for path in notebooks:
        target = out_dir / path.name
        nbformat.write(
            student_version(nbformat.read(path, as_version=4), path.name), target
        )
        written.append(target)
    return written


if __name__ == "__main__":
    paths = [Path(p) for p in sys.argv[1:]] or NOTEBOOKS
    for target in write_student_versions(paths):
        print(f"wrote {target.relative_to(ROOT)}")
