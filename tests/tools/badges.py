"""Rewrite each notebook's Open-in-Colab badge from `repository.url` in _config.yml (the one place it is written).

Usage: python tests/tools/badges.py notebooks/*.ipynb
"""
import re
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import colab_url  # noqa: E402

BADGE = re.compile(r"\]\(https://colab\.research\.google\.com/github/[^)]*\)")


def rewrite_badge(path: Path) -> bool:
    """Point the badge in the first cell at this notebook; return whether the file changed."""
    nb = nbformat.read(path, as_version=4)
    first = nb.cells[0]
    new = BADGE.sub(f"]({colab_url(path.name)})", first.source)
    if new == first.source:
        return False
    first.source = new
    nbformat.write(nb, path)
    return True


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(f"{arg}: {'rewritten' if rewrite_badge(Path(arg)) else 'up to date'}")
