"""`make student`: write notebooks/colab/NN_topic.ipynb, the Colab copy of every chapter (booktools/build/colab.py),
and notebooks/student/NN_topic.ipynb, its student version, made from that copy.

In each student version every `### BEGIN SOLUTION` ... `### END SOLUTION` region becomes
`raise NotImplementedError("Exercise N (<its title>): replace this line with your solution.")`, in plain
text, and its cell opens unfolded; every output is cleared, the self-checks stay, and the Colab badge and the
"Next" link point at the student copies; booktools/grading/published/ keeps a fingerprint of every code cell,
so that grading knows the cells of earlier student versions. A first cell says how to work: Run all, edit only the stubs, keep the
self-checks, what done looks like, and how to hand in.
Usage: python -m booktools.build.student [notebooks/NN_topic.ipynb ...]   (default: every chapter)
"""

import re
import sys
from pathlib import Path

import nbformat

from booktools.build.badges import BADGE, COLAB_LINK
from booktools.build.colab import colab_version, unfold, write_colab_versions
from booktools.grading import published, splice
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
# Markdown that a message printed in a traceback would show raw: emphasis, code and math marks.
MARKUP = re.compile(r"\*\*(.+?)\*\*|\*(.+?)\*|`(.+?)`|\$(.+?)\$")
TIME_TO_RUN = re.compile(
    r"\*\*Time to run:\*\* about (?P<time>[^(.]+?) on a 2-core CPU"
)


HOW_TO_WORK = """\
**This is the student version of "{title}".** Its {n} exercises are at the end; their solutions are \
removed, and no cell has an output until you run it.

1. **Run all first:** Runtime → Run all in Colab (Run → Run All Cells in Jupyter). The chapter's experiments \
take {time} on a 2-core CPU. An exercise you have not done yet says so in its self-check; the notebook goes on.
2. **Edit only the exercise cells:** in each, replace the line `raise NotImplementedError("Exercise N ...")` \
with your code.{answer_cells} Leave the rest of that cell, and every other cell, as it is: grading takes only \
your code from those places and runs everything else from its own copy of this notebook.
3. **Keep the self-checks:** run the cell under each exercise after yours. It says that your answer is \
correct, or what is wrong with it. It is a first check, not the grade: the grader tries your code on inputs \
you have not seen.
4. **Done** means: every self-check says correct, and Run all runs from top to bottom without an error.
5. **Hand in the notebook:** File → Download → Download .ipynb, and hand in that file as your course asks. \
The outputs may stay: the grader runs the notebook again."""


def plain(text: str) -> str:
    """Markdown inline text as plain text: "the deeper network *can* do as well" loses its asterisks."""
    return MARKUP.sub(lambda m: next(g for g in m.groups() if g is not None), text)


def stub(indent: str, number: str, title: str) -> str:
    message = f"Exercise {number} ({plain(title.strip().rstrip('.'))}): replace this line with your solution."
    return f"{indent}raise NotImplementedError({message!r})\n"


def how_to_work(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The student version's first cell, in plain CommonMark: how to work on it, what done is, how to hand in."""
    title = nb.cells[0].source.split("\n", 1)[0].lstrip("# ").strip()
    numbers = [
        n
        for cell in nb.cells
        if cell.cell_type == "markdown"
        for n, _ in EXERCISE.findall(cell.source)
    ]
    time = TIME_TO_RUN.search(nb.cells[0].source)
    answers = [
        splice.answer_name(cell.source)
        for cell in nb.cells
        if splice.ANSWER_TAG in cell.metadata.get("tags", [])
    ]
    answer_cells = "".join(f" Fill in the `{name} = ...` cell too." for name in answers)
    run_time = "about " + time["time"].strip() if time else "a minute or so"
    text = HOW_TO_WORK.format(
        title=title, n=len(numbers), time=run_time, answer_cells=answer_cells
    )
    return nbformat.v4.new_markdown_cell(
        text,
        id="how-to-work",
    )


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
                unfold(cell)
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
    nb.cells.insert(0, how_to_work(nb))
    return nb


def write_student_versions(
    notebooks: list, out_dir: Path = STUDENT_DIR, colab_dir: Path = COLAB_DIR
) -> list:
    """Write the Colab copies, then the student versions; return the paths written."""
    written = write_colab_versions(notebooks, colab_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for path in notebooks:
        target = out_dir / path.name
        student = student_version(nbformat.read(path, as_version=4), path.name)
        nbformat.write(student, target)
        written.append(target)
        if out_dir == STUDENT_DIR and published.record(path.stem, [student]):
            written.append(published.path_of(path.stem))
    return written


if __name__ == "__main__":
    paths = [Path(p) for p in sys.argv[1:]] or NOTEBOOKS
    for target in write_student_versions(paths):
        print(f"wrote {target.relative_to(ROOT)}")
