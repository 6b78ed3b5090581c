"""Execute notebooks in place with the pinned kernel, so committed outputs come from `.venv`.

Each notebook runs in an empty temporary folder, as it would in Colab, headless (RC_HEADLESS=1).
Usage: python -m booktools.execute notebooks/02_identity_and_zero_init.ipynb [...]

`run_notebook` is the one place a notebook is executed: this script, the grader, the mutants, the seed sweep and
the tests all call it.
"""

import argparse
import contextlib
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from jupyter_client import AsyncKernelManager
from nbclient import NotebookClient
from traitlets import List, Unicode
from traitlets.config import Config

from booktools.settings import CELL_TIMEOUT, headless


class KernelUnder(AsyncKernelManager):
    """A kernel manager whose kernel's command line runs under `prefix` (the grader's sandbox; empty: none)."""

    prefix = List(Unicode(), config=True, help="the command the kernel runs under")

    def format_kernel_cmd(self, extra_arguments=None) -> list:
        return [*self.prefix, *super().format_kernel_cmd(extra_arguments)]


def run_notebook(
    nb: nbformat.NotebookNode,
    folder: Path,
    *,
    timeout=CELL_TIMEOUT,
    allow_errors: bool = False,
    interrupt_on_timeout: bool = False,
    env: dict | None = None,
    prefix: list = (),
    sockets: Path | None = None,
) -> None:
    """Execute `nb` in place with the pinned kernel, working in `folder`. `timeout`: the seconds each cell may run,
    a number or a function of the cell. `allow_errors`: a cell that raises leaves
    its error as an output and the run goes on (otherwise nbclient's CellExecutionError). `env`: the kernel's whole
    environment (default: this process's). `prefix`: the command the kernel runs under. The kernel talks over Unix
    sockets, files in `sockets` (default: a temporary folder of their own), never TCP ports: kernels started side by
    side (two test workers, a seed sweep) cannot race for one port, and a sandbox without a network can hold one."""
    with contextlib.ExitStack() as stack:
        if sockets is None:
            sockets = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        per_cell = timeout if callable(timeout) else None
        client = NotebookClient(
            nb,
            timeout=None if per_cell else timeout,
            timeout_func=per_cell,
            allow_errors=allow_errors,
            interrupt_on_timeout=interrupt_on_timeout,
            kernel_name="python3",
            resources={"metadata": {"path": str(folder)}},
            kernel_manager_class=KernelUnder,
            config=Config(
                KernelUnder={
                    "prefix": list(prefix),
                    "transport": "ipc",
                    "ip": str(sockets / "kernel"),
                    "connection_file": str(sockets / "connection.json"),
                }
            ),
        )
        client.execute(**({} if env is None else {"env": env}))


def execute(
    path: Path, parameters: dict | None = None, timeout: int = CELL_TIMEOUT
) -> tuple[nbformat.NotebookNode, float]:
    """Run the notebook at `path` and return it with outputs, and the wall seconds it took."""
    nb = nbformat.read(path, as_version=4)
    if parameters:
        nb = inject_parameters(nb, parameters)
    headless()
    with tempfile.TemporaryDirectory() as workdir:
        start = time.perf_counter()
        run_notebook(nb, Path(workdir), timeout=timeout)
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
