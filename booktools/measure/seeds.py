"""`make seeds N=30`: run every chapter under N seeds and record how far inside its threshold each assert landed.

A pass/fail count says little: 30 passes out of 30 bound the failure rate only at about 10 %. So each
`assert a < b` (also <=, >, >=, and `assert all(a < b for ...)`) is instrumented before the run: both sides
are recorded, and the table shows each assert's *slack*, how far inside its threshold it landed, relative to
the threshold (|b|), as the minimum and the median over seeds. Asserts of another shape (`torch.equal`,
`isfinite`, ...) are counted as passed or failed only.

The chapters seed their models internally as SEED + k, so the sweep's seeds are spaced 1,000 apart
(1000, 2000, ...): no two runs share a network. Two notebooks run at a time (each uses one thread).
The raw records go to _build/seeds/<chapter>.json. `--report` condenses each into a summary that is committed,
book/sweeps/<chapter>.json (each assert's source, how many seeds reached it, fired it, and its min and median
slack), then writes from the summaries the table on book/reproducibility.md (between the seeds markers), with the
commit each chapter was measured at, and the `min slack` column of every chapter's claims-and-controls table
(booktools/measure/claims_table.py); a chapter with no summary keeps its row.

Usage: python -m booktools.measure.seeds [-n 30] [--jobs 2] notebooks/03_gradient_flow.ipynb ...
       python -m booktools.measure.seeds --report
Runs outside CI: how long 30 seeds of every chapter take is on the reproducibility page.
"""

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
from nbclient.exceptions import CellExecutionError

from booktools.execute import inject_parameters, run_notebook
from booktools.measure.sweep_report import code_hash, print_record, report
from booktools.settings import ROOT, SEED_SPACING, SWEEP_RECORDS, headless

OUT = SWEEP_RECORDS


# Prepended to the notebook: `_rc_cmp` does a comparison as Python would and appends its slack to RC_SLACK_FILE.
RECORDER = """
def _rc_cmp(key, ops, *values):
    import json, math, operator, os
    fns = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
    result, slack = True, None
    for op, a, b in zip(ops, values, values[1:]):
        result = result and fns[op](a, b)
        try:
            a, b = float(a), float(b)
        except (TypeError, ValueError, RuntimeError):
            continue
        gap = (b - a) if op in ("<", "<=") else (a - b)
        gap = gap / abs(b) if b != 0 and math.isfinite(b) else gap
        slack = gap if slack is None else min(slack, gap)
    with open(os.environ["RC_SLACK_FILE"], "a") as f:
        f.write(json.dumps({"key": key, "slack": slack}) + "\\n")
    return result
"""


OPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


class _Instrument(ast.NodeTransformer):
    """Route each ordered comparison that decides an assert (the test itself, a side of `and`/`or`/`not`, or the
    element of `all(...)`/`any(...)`) through `_rc_cmp`, which records its slack; keep the assert as it is."""

    def __init__(self, cell: int, source: str):
        self.cell, self.source, self.labels = cell, source, {}

    def visit_Assert(self, node: ast.Assert):
        key = f"cell {self.cell}, line {node.lineno}"
        self.labels[key] = ast.get_source_segment(
            self.source, node.test
        ) or ast.unparse(node.test)
        node.test = self._route(node.test, key)
        # an assert of another shape still counts as reached
        record = ast.parse(f"_rc_cmp({key!r}, [])").body[0]
        return [node, ast.copy_location(record, node)]

    def _route(self, test: ast.expr, key: str) -> ast.expr:
        if isinstance(test, ast.Compare) and all(type(op) in OPS for op in test.ops):
            ops = [OPS[type(op)] for op in test.ops]
            return ast.Call(
                ast.Name("_rc_cmp", ast.Load()),
                [ast.Constant(key), ast.Constant(ops), test.left, *test.comparators],
                [],
            )
        if isinstance(test, ast.BoolOp):
            test.values = [self._route(v, key) for v in test.values]
        elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test.operand = self._route(test.operand, key)
        elif (
            isinstance(test, ast.Call)
            and isinstance(test.func, ast.Name)
            and test.func.id in ("all", "any")
            and len(test.args) == 1
            and isinstance(test.args[0], (ast.GeneratorExp, ast.ListComp))
        ):
            test.args[0].elt = self._route(test.args[0].elt, key)
        return test


def instrument(nb: nbformat.NotebookNode) -> dict:
    """Instrument the notebook's asserts in place; return {key: the assert's source} for each one."""
    labels = {}
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or "assert" not in cell.source:
            continue
        try:
            tree = ast.parse(cell.source)
        except (
            SyntaxError
        ):  # a cell with IPython magics: left as it is, its asserts unrecorded
            continue
        visitor = _Instrument(i, cell.source)
        tree = ast.fix_missing_locations(visitor.visit(tree))
        cell.source = ast.unparse(tree)
        labels.update(visitor.labels)
    nb.cells.insert(0, nbformat.v4.new_code_cell(RECORDER))
    return labels


def run_one(path: Path, seed: int) -> dict:
    """Run one notebook at one seed; return the slack of every assert it reached, and the error if one fired."""
    nb = nbformat.read(path, as_version=4)
    labels = instrument(nb)
    nb = inject_parameters(nb, {"SEED": seed})
    with tempfile.TemporaryDirectory() as workdir:
        slack_file = Path(workdir) / "slack.jsonl"
        headless()
        os.environ["RC_SLACK_FILE"] = str(slack_file)
        start, error = time.perf_counter(), None
        try:
            run_notebook(nb, Path(workdir))
        except CellExecutionError as e:
            # without colour codes
            error = re.sub(r"\x1b\[[0-9;]*m", "", str(e).strip().splitlines()[-1])[:300]
        except (
            Exception
        ) as e:  # a timeout or a dead kernel: recorded as this seed's failure
            error = f"{type(e).__name__}: {e}"[:300]
        seconds = time.perf_counter() - start
        records = (
            [json.loads(line) for line in slack_file.read_text().splitlines()]
            if slack_file.exists()
            else []
        )
    slack = {}  # an assert inside a function runs once per call: keep its tightest landing
    for r in records:
        landed = [v for v in (slack.get(r["key"]), r["slack"]) if v is not None]
        slack[r["key"]] = min(landed) if landed else None
    return {
        "seed": seed,
        "seconds": round(seconds, 1),
        "error": error,
        "labels": labels,
        "slack": slack,
    }


def sweep(path: Path, n: int, jobs: int) -> dict:
    seeds = [SEED_SPACING * (k + 1) for k in range(n)]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        runs = list(pool.map(run_one, [path] * n, seeds))
    for run in runs:
        print(
            f"{path.stem} SEED={run['seed']}: {'ok' if not run['error'] else run['error']} ({run['seconds']} s)",
            flush=True,
        )
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return {
        "chapter": path.stem,
        "commit": commit + ("+changes" if dirty else ""),
        "date": time.strftime("%Y-%m-%d"),
        "code": code_hash(path),
        "seeds": seeds,
        "runs": runs,
    }


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("notebooks", nargs="*", type=Path)
    ap.add_argument("-n", type=int, default=30, help="number of seeds (default 30)")
    ap.add_argument(
        "--jobs", type=int, default=2, help="notebooks run at a time (default 2)"
    )
    ap.add_argument(
        "--report",
        action="store_true",
        help="write the table of all records to the reproducibility page",
    )
    args = ap.parse_args()
    if args.report:
        return report()
    if not args.notebooks:
        ap.error("name the notebooks to sweep, or --report")
    OUT.mkdir(parents=True, exist_ok=True)
    failed = False
    for path in args.notebooks:
        record = sweep(path, args.n, args.jobs)
        (OUT / f"{path.stem}.json").write_text(json.dumps(record, indent=1))
        print_record(record)
        failed |= any(r["error"] for r in record["runs"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
