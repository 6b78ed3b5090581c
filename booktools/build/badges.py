"""Rewrite every Open-in-Colab link from `repository.url` in _config.yml (the one place it is written):
each notebook's badge (pointing at that notebook), its other Colab links, and the links in book/*.md.

Usage: python -m booktools.build.badges notebooks/*.ipynb
"""

import re
import sys
from pathlib import Path

import nbformat

from booktools.settings import ROOT, colab_url

COLAB_LINK = re.compile(
    r"https://colab\.research\.google\.com/github/[^/\s)]+/[^/\s)]+/blob/[^/\s)]+/notebooks/(?P<path>[^)\s]+\.ipynb)"
)
BADGE = re.compile(r"\]\(https://colab\.research\.google\.com/github/[^)]*\)")


def in_colab(path: str) -> str:
    """What Colab opens for a notebook under notebooks/: a chapter's CommonMark copy in notebooks/colab/ (Colab
    cannot render the chapter's MyST; `make student` writes the copies), any other notebook itself."""
    return path if "/" in path else f"colab/{path}"


def rewrite_links(text: str) -> str:
    """Point every Colab link at the configured repository, keeping the notebook it names."""
    return COLAB_LINK.sub(lambda m: colab_url(in_colab(m["path"])), text)


def rewrite_badge(path: Path) -> bool:
    """Point the badge in the notebook's first cell at this notebook (a chapter's at its Colab copy), and its
    other Colab links (the "Next" link) at the configured repository; return whether the file changed."""
    nb = nbformat.read(path, as_version=4)
    relative = (
        path.relative_to(ROOT / "notebooks").as_posix()
        if path.is_relative_to(ROOT / "notebooks")
        else path.name
    )
    changed = False
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            new = (
                BADGE.sub(f"]({colab_url(in_colab(relative))})", cell.source)
                if i == 0
                else rewrite_links(cell.source)
            )
            changed |= new != cell.source
            cell.source = new
    if changed:
        nbformat.write(nb, path)
    return changed


def rewrite_pages(pages) -> list:
    changed = []
    for page in pages:
        text = page.read_text()
        if rewrite_links(text) != text:
            page.write_text(rewrite_links(text))
            changed.append(page)
    return changed


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(
            f"{arg}: {'rewritten' if rewrite_badge(Path(arg).resolve()) else 'up to date'}"
        )
    for page in rewrite_pages(sorted((ROOT / "book").glob("*.md"))):
        print(f"{page.relative_to(ROOT)}: links rewritten")
