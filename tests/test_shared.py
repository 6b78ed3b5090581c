"""Code every notebook must carry the same lives once, in notebooks/shared/*.py, and `make sync` copies it into the
cells tagged `shared:NAME`. These tests fail when a copy drifts, and test the shared code itself."""

import io
from contextlib import redirect_stdout

import nbformat
import pytest

import sync
from conftest import NOTEBOOKS, read_notebook
from settings import SHARED

# Snippets every chapter must carry; the others (the CIFAR-10 loader) only where a chapter needs them.
EVERY_CHAPTER = {"self_check"}


def test_shared_cells_match_their_source(notebook_path):
    nb = read_notebook(notebook_path)
    assert not sync.drifted(nb), (
        f"{notebook_path.name}: shared cells drifted from notebooks/shared/: run make sync"
    )
    names = [name for _, name in sync.shared_cells(nb)]
    assert EVERY_CHAPTER <= set(names), (
        f"{notebook_path.name} lacks a cell tagged shared:{EVERY_CHAPTER - set(names)}"
    )
    assert len(names) == len(set(names)), (
        f"{notebook_path.name}: a snippet is copied twice"
    )


def test_every_snippet_is_used():
    used = {
        name for path in NOTEBOOKS for _, name in sync.shared_cells(read_notebook(path))
    }
    files = {p.stem for p in SHARED.glob("*.py")}
    assert files == used, (
        f"unused snippets: {files - used}; tagged cells without a file: {used - files}"
    )


def test_sync_rewrites_a_drifted_cell_and_leaves_the_rest(tmp_path):
    cell = nbformat.v4.new_code_cell(
        "def self_check(number, check):\n    pass  # an old copy"
    )
    cell.metadata["tags"] = ["shared:self_check"]
    other = nbformat.v4.new_code_cell("x = 1")
    path = tmp_path / "99_toy.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell, other]), path)
    assert sync.sync(path) == ["self_check"]
    nb = nbformat.read(path, as_version=4)
    assert nb.cells[0].source == (SHARED / "self_check.py").read_text().rstrip("\n")
    assert nb.cells[1].source == "x = 1"
    assert sync.sync(path) == [], "a synced notebook has nothing left to sync"


@pytest.fixture
def self_check():
    namespace = {}
    exec((SHARED / "self_check.py").read_text(), namespace)
    return namespace["self_check"]


def run(self_check, check):
    out = io.StringIO()
    with redirect_stdout(out):
        self_check(3, check)
    return out.getvalue().strip()


def test_self_check_says_correct(self_check):
    assert run(self_check, lambda: None) == "Exercise 3: correct."


def test_self_check_turns_a_stub_into_a_sentence(self_check):
    def stub():
        raise NotImplementedError(
            "Exercise 3 (x): replace this line with your solution."
        )

    assert run(self_check, stub).startswith("Exercise 3: not done yet.")


def test_self_check_says_what_is_wrong(self_check):
    def wrong():
        # what a failed assert in a check raises
        raise AssertionError("the norm should be 1")

    with pytest.raises(
        AssertionError, match=r"^Exercise 3: not yet right: the norm should be 1$"
    ):
        run(self_check, wrong)


def test_self_check_reports_a_crash_in_one_sentence(self_check):
    def crash():
        raise RuntimeError("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)")

    with pytest.raises(
        AssertionError, match=r"^Exercise 3: your code raised RuntimeError: mat1"
    ):
        run(self_check, crash)
