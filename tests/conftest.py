"""Shared helpers for the book's tests; paths and settings come from tests/tools/settings.py."""

import sys
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))
from settings import NOTEBOOKS, ROOT, TEST_SEED, colab_url, headless, load_config  # noqa: E402, F401

headless()  # kernels the tests start run headless: no bars, widgets' far corners checked


def read_notebook(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def tags(cell) -> list:
    return cell.metadata.get("tags", [])


@pytest.fixture(params=NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def notebook_path(request) -> Path:
    return request.param
