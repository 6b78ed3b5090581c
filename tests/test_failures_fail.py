"""A notebook whose assert fails must fail both `make test` (nbval) and `make book` (Jupyter Book with -W)."""

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import yaml

from conftest import ROOT

BIN = Path(sys.executable).parent


def write_failing_notebook(path: Path) -> None:
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# A chapter whose claim no longer holds"),
            nbformat.v4.new_code_cell(
                "measured_gap = 1.0\nassert measured_gap > 10, 'the claimed gap did not appear'"
            ),
        ]
    )
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, path)


def test_nbval_fails_on_a_failing_assert(tmp_path):
    notebook = tmp_path / "99_broken.ipynb"
    write_failing_notebook(notebook)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--nbval-lax",
            str(notebook),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "the claimed gap did not appear" in result.stdout


def test_book_build_fails_on_a_failing_assert(tmp_path):
    """Build a one-page book with the project's own _config.yml; a failing cell must fail the build."""
    (tmp_path / "book").mkdir()
    shutil.copy(ROOT / "book" / "references.bib", tmp_path / "book" / "references.bib")
    for folder in (
        "_ext",
        "_static",
    ):  # the local Sphinx extension, the CSS and the JS that _config.yml names
        shutil.copytree(ROOT / "book" / folder, tmp_path / "book" / folder)
    shutil.copy(ROOT / "_config.yml", tmp_path / "_config.yml")
    write_failing_notebook(tmp_path / "broken.ipynb")
    (tmp_path / "_toc.yml").write_text(
        yaml.safe_dump({"format": "jb-book", "root": "broken"})
    )
    result = subprocess.run(
        [str(BIN / "jupyter-book"), "build", str(tmp_path), "-W", "-n", "--keep-going"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0, result.stdout[-2000:]
    assert "the claimed gap did not appear" in result.stdout + result.stderr
