"""A pytest plugin: `pytest --nbval-lax --book-cache FOLDER` stores the run nbval checked in the book's cache.

nbval runs every cell of a notebook in one kernel. A notebook whose every cell passed is stored in the
jupyter-cache at FOLDER with the outputs nbval saw and its widgets' state, exactly as booktools/build/book_cache.py
stores a run of its own; `make book` after `make test` then executes nothing that `make test` ran. On its own:
`pytest -p booktools.build.nbval_cache`; tests/conftest.py adds the option and registers RECORDER,
the two hooks, for the whole session (a conftest's own hooks would not see items outside tests/).
"""

import copy
import json
from pathlib import Path

import pytest
from IPython.core.displayhook import DisplayHook

WIDGET_STATE = (
    "import json as _rc_json, sys as _rc_sys\n"
    "print(_rc_json.dumps(_rc_sys.modules['ipywidgets'].Widget.get_manager_state(drop_defaults=False)"
    " if 'ipywidgets' in _rc_sys.modules else None))"
)


def pytest_addoption(parser):
    parser.addoption(
        "--book-cache",
        metavar="FOLDER",
        help="store each notebook that passes nbval, with its outputs, in the jupyter-cache at FOLDER",
    )


# on a notebook's nbval node: {cell number: (passed, outputs, seconds)}
_NBVAL_RUNS = pytest.StashKey[dict]()


def _is_nbval_cell(item) -> bool:
    return (
        type(item).__name__ == "IPyNbCell"
        and item.config.getoption("--book-cache") is not None
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if call.when == "call" and _is_nbval_cell(item):
        runs = item.parent.stash.setdefault(_NBVAL_RUNS, {})
        runs[item.cell_num] = (
            outcome.get_result().passed,
            item.test_outputs,
            call.duration,
        )


def _widget_state(kernel) -> dict | None:
    """The state of every widget alive in the notebook's kernel, as nbclient saves it in a notebook's metadata."""
    msg_id = kernel.execute_cell_input(WIDGET_STATE, allow_stdin=False)
    text = ""
    while True:
        msg = kernel.get_message("iopub", timeout=60)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            text += msg["content"]["text"]
        elif (
            msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle"
        ):
            return json.loads(text)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item, nextitem):
    """After a notebook's last cell, before nbval stops its kernel: cache the run if every cell passed."""
    if not _is_nbval_cell(item) or (
        nextitem is not None and nextitem.parent is item.parent
    ):
        return
    from booktools.build.book_cache import store

    notebook = item.parent
    runs = notebook.stash.get(_NBVAL_RUNS, {})
    nb = copy.deepcopy(notebook.nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    if (
        len(runs) != len(code)
        or not all(passed for passed, _, _ in runs.values())
        or not notebook.kernel.is_alive()
    ):
        return
    for i, cell in enumerate(code):
        cell.outputs, cell.execution_count = runs[i][1], i + 1
        if DisplayHook.semicolon_at_end_of_expression(cell.source):
            # nbval runs cells outside IPython's history, so a final `;` does not hide the value there
            cell.outputs = [
                o for o in cell.outputs if o["output_type"] != "execute_result"
            ]
    state = _widget_state(notebook.kernel)
    nb.metadata.pop("widgets", None)
    if state and state["state"]:
        nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": state}
    store(
        Path(item.config.getoption("--book-cache")),
        Path(str(notebook.fspath)),
        nb,
        sum(seconds for _, _, seconds in runs.values()),
    )


class Recorder:
    """The two hooks as one plugin object, which tests/conftest.py registers for the whole session."""

    pytest_runtest_makereport = staticmethod(pytest_runtest_makereport)
    pytest_runtest_teardown = staticmethod(pytest_runtest_teardown)


RECORDER = Recorder()
