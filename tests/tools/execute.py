"""Execute notebooks in place with the pinned kernel, so committed outputs come from `.venv`.

Each notebook runs in an empty temporary folder, as it would in Colab, headless (RC_HEADLESS=1).
Usage: python tests/tools/execute.py notebooks/02_identity_and_zero_init.ipynb [...]
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from settings import CELL_TIMEOUT, headless  # noqa: E402


def execute(
    path: Path, parameters: dict | None = None, timeout: int = CELL_TIMEOUT
) -> tuple[nbformat.NotebookNode, float]:
    """Run the notebook at `path` and return it with outputs, and the wall seconds it took."""
    nb = nbformat.read(path, as_version=4)
    if parameters:
        nb = inject_parameters(nb, parameters)
    headless()
    with tempfile.TemporaryDirectory() as workdir:
        client = NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            resources={"metadata": {"path": workdir}},
        )
        start = time.perf_counter()
        client.execute()
        return nb, time.perf_counter() - start


def inject_parameters(
    nb: nbformat.NotebookNode, parameters: dict
) -> nbformat.NotebookNode:
    """Append assignments to the cell tagged `parameters`, as papermill does, without papermill's metadata."""
    cell = next(
        (c for c in nb.cells if "parameters" in c.metadata.get("tags", [])), None
    )
    if cell is None:
        raise SystemExit(
            "No cell is tagged 'parameters': tag the cell that defines SEED and FULL."
        )
    cell.source += "\n" + "\n".join(f"{k} = {v!r}" for k, v in parameters.items())
    return nb


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("notebooks", nargs="+", type=Path)
    args = ap.parse_args()
    for path in args.notebooks:
        nb, seconds = execute(path)
        for cell in nb.cells:
            cell.metadata.pop("execution", None)
        nbformat.write(nb, path)
        print(f"{path}: executed in {seconds:.1f} s")


if __name__ == "__main__":
    sys.exit(main())
