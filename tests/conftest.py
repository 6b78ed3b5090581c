"""Shared paths and helpers for the book's tests."""
import os
import re
from pathlib import Path

import nbformat
import pytest
import yaml

os.environ.setdefault("RC_HEADLESS", "1")  # kernels the tests start run headless: no bars, widgets' far corners checked
ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
TEST_SEED = int(os.environ.get("TEST_SEED", "12345"))  # the SEED the tests run notebooks with: not the committed one


def load_config() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text())


def colab_url(notebook_name: str) -> str:
    """The Colab address of a notebook, built from the one repository URL in _config.yml."""
    repo = load_config()["repository"]
    owner_repo = re.sub(r"^https://github\.com/", "", repo["url"].rstrip("/"))
    return f"https://colab.research.google.com/github/{owner_repo}/blob/{repo['branch']}/notebooks/{notebook_name}"


def read_notebook(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def tags(cell) -> list:
    return cell.metadata.get("tags", [])


@pytest.fixture(params=NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def notebook_path(request) -> Path:
    return request.param
