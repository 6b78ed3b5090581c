"""Every chapter runs top to bottom, copied alone into an empty folder, under papermill with a SEED other
than the committed one, and its reference solutions then earn full marks from the hidden tests.

nbval (in `make test`) re-runs the committed notebooks; this test proves the asserts are not tuned to
the committed SEED, and that an instructor's grading works for every chapter. The hidden tests run in the
same kernel right after the notebook, so the chapter runs once for both. Set TEST_SEED to try another seed.
"""

import sys
from pathlib import Path

import nbformat
import papermill

from conftest import TEST_SEED, read_notebook
from settings import CELL_TIMEOUT

sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))
from grade import exercises, grading_cells, results  # noqa: E402


def test_runs_with_another_seed_and_earns_full_marks(notebook_path, tmp_path):
    nb = read_notebook(notebook_path)
    committed = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assert f"SEED = {TEST_SEED}\n" not in committed.source + "\n", "TEST_SEED must differ from the committed SEED"
    source, numbers = exercises(notebook_path.stem)
    n_cells = len(nb.cells)
    nb.cells += grading_cells(source, numbers)
    out = tmp_path / notebook_path.name  # alone in an empty folder, as Colab opens it
    nbformat.write(nb, out)
    papermill.execute_notebook(
        str(out),
        str(out),
        parameters={"SEED": TEST_SEED},
        cwd=str(tmp_path),
        kernel_name="python3",
        progress_bar=False,
        log_output=False,
        execution_timeout=CELL_TIMEOUT,
    )  # a hung cell fails the test instead of hanging CI
    ran = read_notebook(out)
    injected = [c for c in ran.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and f"SEED = {TEST_SEED}" in injected[0].source
    graded = results(ran, n_cells + len(injected))
    assert sorted(graded) == numbers, f"hidden tests that reported nothing: {set(numbers) - set(graded)}"
    failed = {n: reason for n, (passed, reason) in graded.items() if not passed}
    assert not failed, f"the reference solutions lose marks at SEED = {TEST_SEED}: {failed}"
