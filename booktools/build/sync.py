"""`make sync`: copy the code a notebook carries but does not own into it, from its one source.

A notebook must run alone (Colab opens one file, with no repository around it), so code that it shares with
other notebooks is copied into it rather than imported. Two kinds of source:
- a shared snippet, notebooks/shared/NAME.py, copied into every cell tagged `shared:NAME`: code every chapter
  needs the same, such as `self_check` or the figure style, unit-tested in tests/test_shared.py;
- a chapter's own cell tagged `teaches:NAME`, copied into every cell tagged `taught:NAME` of a later chapter: a
  model (or task) is written once, in the chapter that teaches it, and a chapter that builds on it gets the same
  code, folded on the site (`hide-input`), under one comment line that says where it was taught.
`tests/test_shared.py` fails when a copy has drifted from its source. Edit the source (the .py file, or the
teaching cell), then `make sync` (which also rewrites the student versions), then re-execute the notebooks it
names.
Usage: python -m booktools.build.sync [notebooks/NN_topic.ipynb ...]   (default: every chapter)
"""

import os
import re
import sys
import tempfile
from pathlib import Path

import nbformat

from booktools.settings import NOTEBOOKS, ROOT, SHARED

TAG = "shared:"
TEACHES = "teaches:"
TAUGHT = "taught:"
# How a copied chapter cell is folded on the site (a prompt the conventions test accepts: "Show ... code").
FOLD = "hide-input"


def snippet(name: str) -> str:
    path = SHARED / f"{name}.py"
    if not path.exists():
        raise SystemExit(
            f"A cell is tagged {TAG}{name}, but {path.relative_to(ROOT)} does not exist."
        )
    return path.read_text().rstrip("\n")


def tagged(nb: nbformat.NotebookNode, prefix: str) -> list:
    """[(index, cell, NAME)] for every code cell tagged PREFIX + NAME."""
    return [
        (i, cell, tag[len(prefix) :])
        for i, cell in enumerate(nb.cells)
        for tag in cell.metadata.get("tags", [])
        if cell.cell_type == "code" and tag.startswith(prefix)
    ]


def shared_cells(nb: nbformat.NotebookNode) -> list:
    """[(cell, snippet name)] for every cell tagged shared:NAME."""
    return [(cell, name) for _, cell, name in tagged(nb, TAG)]


def chapter_number(path: Path) -> int:
    return int(path.name[:2])


def section_of(nb: nbformat.NotebookNode, index: int) -> str:
    """The number of the section ("## 2. Title") that holds cell `index`; "" in a section without a number
    (or before the first)."""
    for cell in reversed(nb.cells[:index]):
        if cell.cell_type == "markdown":
            for line in reversed(cell.source.splitlines()):
                if line.startswith("## "):
                    match = re.match(r"## (\d+)\.", line)
                    return match[1] if match else ""
    return ""


def header(path: Path, section: str) -> str:
    """The comment line a copied cell starts with: where its code is taught, and that it is a copy."""
    where = f"chapter {chapter_number(path)}" + (f", §{section}" if section else "")
    return f"# Taught in {where}; copied by make sync from {path.name}"


def teaching_cells(notebooks: list = None) -> dict:
    """{NAME: (the source a taught:NAME cell must hold, the teaching notebook)} over the given notebooks."""
    sources = {}
    for path in notebooks if notebooks is not None else NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        for index, cell, name in tagged(nb, TEACHES):
            if name in sources:
                raise SystemExit(
                    f"{TEACHES}{name} is on a cell of {sources[name][1].name} and of "
                    f"{path.name}: a piece of code is taught in one place"
                )
            if any(t.startswith((TAUGHT, TAG)) for t in cell.metadata.get("tags", [])):
                raise SystemExit(
                    f"{path.name}, cell {index}: a teaching cell is not itself a copy"
                )
            text = header(path, section_of(nb, index)) + "\n" + cell.source
            sources[name] = (text.rstrip("\n"), path)
    return sources


def expected(cell, name: str, taught: dict, path: Path = None) -> str:
    if name not in taught:
        raise SystemExit(
            f"{path.name if path else 'A notebook'}: a cell is tagged {TAUGHT}{name}, "
            f"but no chapter has a cell tagged {TEACHES}{name}"
        )
    return taught[name][0]


def folded(cell, number: int) -> bool:
    """Whether a copied cell is folded on the site, with a prompt naming the chapter it comes from."""
    prompts = cell.metadata.get("mystnb", {})
    return (
        FOLD in cell.metadata.get("tags", [])
        and prompts.get("code_prompt_show") == f"Show the chapter {number} code"
        and prompts.get("code_prompt_hide") == f"Hide the chapter {number} code"
    )


def drifted(nb: nbformat.NotebookNode, taught: dict = None) -> list:
    """Names of the snippets and taught cells whose copy differs from its source (or, for a taught cell, is not
    folded as sync folds it)."""
    names = [name for cell, name in shared_cells(nb) if cell.source != snippet(name)]
    copies = tagged(nb, TAUGHT)
    if copies:
        taught = teaching_cells() if taught is None else taught
        for _, cell, name in copies:
            source = expected(cell, name, taught)
            if cell.source != source or not folded(
                cell, chapter_number(taught[name][1])
            ):
                names.append(name)
    return names


def write_atomically(nb: nbformat.NotebookNode, path: Path) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".ipynb.tmp")
    os.close(handle)
    try:
        nbformat.write(nb, temporary)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def sync(path: Path, taught: dict = None) -> list:
    """Rewrite the drifted shared and taught cells of one notebook; return their names."""
    nb = nbformat.read(path, as_version=4)
    taught = teaching_cells() if taught is None and tagged(nb, TAUGHT) else taught
    names = drifted(nb, taught)
    if names:
        for cell, name in shared_cells(nb):
            cell.source = snippet(name)
        for _, cell, name in tagged(nb, TAUGHT):
            source_path = taught[name][1]
            if source_path.resolve() == Path(path).resolve():
                raise SystemExit(
                    f"{path.name}: {TAUGHT}{name} copies a cell of the same chapter"
                )
            number = chapter_number(source_path)
            cell.source = expected(cell, name, taught, path)
            tags = cell.metadata.setdefault("tags", [])
            if FOLD not in tags:
                tags.append(FOLD)
            cell.metadata.setdefault("mystnb", {}).update(
                code_prompt_show=f"Show the chapter {number} code",
                code_prompt_hide=f"Hide the chapter {number} code",
            )
        write_atomically(nb, path)
    return names


def main() -> None:
    paths = [Path(p) for p in sys.argv[1:]] or NOTEBOOKS
    taught = teaching_cells()
    for path in paths:
        names = sync(path, taught)
        if names:
            print(
                f"{path.name}: synced {', '.join(names)}; run it again (make execute NB={path})"
            )


if __name__ == "__main__":
    main()
