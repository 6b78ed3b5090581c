"""The scripts behind `make badges` and `make execute`."""
import sys
from pathlib import Path

import nbformat
import pytest

from conftest import colab_url

sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))
from badges import rewrite_badge  # noqa: E402
from execute import inject_parameters  # noqa: E402


def notebook(*sources, tags=None):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(sources[0])]
                                  + [nbformat.v4.new_code_cell(s) for s in sources[1:]])
    if tags:
        nb.cells[1].metadata["tags"] = tags
    return nb


def test_badge_is_rewritten_from_the_config(tmp_path):
    path = tmp_path / "07_example.ipynb"
    nbformat.write(notebook("# T\n[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
                            "(https://colab.research.google.com/github/someone/old-repo/blob/main/notebooks/x.ipynb)"), path)
    assert rewrite_badge(path)
    assert f"]({colab_url(path.name)})" in nbformat.read(path, as_version=4).cells[0].source
    assert not rewrite_badge(path), "a second run changes nothing"


def test_parameters_are_injected_into_the_tagged_cell():
    nb = inject_parameters(notebook("# T", "SEED = 0\nFULL = False", "print(SEED)", tags=["parameters"]), {"SEED": 3})
    namespace = {}
    exec(nb.cells[1].source, namespace)
    assert namespace["SEED"] == 3 and namespace["FULL"] is False


def test_missing_parameters_cell_is_a_clear_error():
    with pytest.raises(SystemExit, match="tagged 'parameters'"):
        inject_parameters(notebook("# T", "SEED = 0"), {"SEED": 3})


def test_links_in_pages_follow_the_config():
    from badges import rewrite_links
    old = "[x](https://colab.research.google.com/github/someone/old/blob/main/notebooks/student/03_gradient_flow.ipynb)"
    assert rewrite_links(old) == f"[x]({colab_url('student/03_gradient_flow.ipynb')})"
