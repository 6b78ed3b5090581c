"""Every chapter runs top to bottom, copied alone into an empty folder, under papermill with a SEED other
than the committed one.

nbval (in `make test`) re-runs the committed notebooks; this test proves the asserts are not tuned to
the committed SEED. Set TEST_SEED to try another one.
"""
import shutil

import papermill

from conftest import TEST_SEED, read_notebook


def test_runs_with_another_seed(notebook_path, tmp_path):
    committed = next(c for c in read_notebook(notebook_path).cells if "parameters" in c.metadata.get("tags", []))
    assert f"SEED = {TEST_SEED}\n" not in committed.source + "\n", "TEST_SEED must differ from the committed SEED"
    out = tmp_path / notebook_path.name
    shutil.copy(notebook_path, out)  # alone in an empty folder, as Colab opens it
    papermill.execute_notebook(str(out), str(out), parameters={"SEED": TEST_SEED}, cwd=str(tmp_path),
                               kernel_name="python3", progress_bar=False, log_output=False,
                               execution_timeout=600)  # a hung cell fails the test instead of hanging CI
    injected = [c for c in read_notebook(out).cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and f"SEED = {TEST_SEED}" in injected[0].source
