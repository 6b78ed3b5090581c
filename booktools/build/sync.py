"""`make sync`: copy each shared snippet, notebooks/shared/NAME.py, into every notebook cell tagged `shared:NAME`.

A notebook must run alone (Colab opens one file, with no repository around it), so code that every chapter needs
the same, such as `self_check` or the CIFAR-10 loader, is copied into the notebooks rather than imported. The
.py file is the one source: it is unit-tested, and `tests/test_shared.py` fails when a tagged cell has drifted
from it. Edit the .py file, then `make sync` (which also rewrites the student versions).
Usage: python -m booktools.build.sync [notebooks/NN_topic.ipynb ...]   (default: every chapter)
"""

import sys
from pathlib import Path

import nbformat

from booktools.settings import NOTEBOOKS, ROOT, SHARED

TAG = "shared:"


def snippet(name: str) -> str:
    path = SHARED / f"{name}.py"
    if not path.exists():
        raise SystemExit(
            f"A cell is tagged {TAG}{name}, but {path.relative_to(ROOT)} does not exist."
        )
    return path.read_text().rstrip("\n")


def shared_cells(nb: nbformat.NotebookNode) -> list:
    """[(cell, snippet name)] for every cell tagged shared:NAME."""
    return [
        (cell, tag[len(TAG) :])
        for cell in nb.cells
        for tag in cell.metadata.get("tags", [])
        if cell.cell_type == "code" and tag.startswith(TAG)
    ]


def drifted(nb: nbformat.NotebookNode) -> list:
    """Names of the snippets whose tagged cell differs from its source."""
    return [name for cell, name in shared_cells(nb) if cell.source != snippet(name)]


def sync(path: Path) -> list:
    """Rewrite the drifted shared cells of one notebook; return their names."""
    nb = nbformat.read(path, as_version=4)
    names = drifted(nb)
    if names:
        for cell, name in shared_cells(nb):
            cell.source = snippet(name)
        nbformat.write(nb, path)
    return names


def main() -> None:
    paths = [Path(p) for p in sys.argv[1:]] or NOTEBOOKS
    for path in paths:
        names = sync(path)
        if names:
            print(
                f"{path.name}: synced {', '.join(names)}; run it again (make execute NB={path})"
            )


if __name__ == "__main__":
    main()
