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
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
from nbclient.exceptions import CellExecutionError

from booktools.execute import inject_parameters, run_notebook
from booktools.measure import claims_table
from booktools.settings import REPRODUCIBILITY, ROOT, SEED_SPACING, headless

OUT = ROOT / "_build" / "seeds"
MARKERS = ("<!-- seeds:start -->", "<!-- seeds:end -->")

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


def code_hash(path: Path) -> str:
    """A fingerprint of what the notebook's code does: a record whose code has changed since is marked stale.
    It is the sequence of top-level statements' syntax trees, docstrings left out, so comments, docstrings,
    `ruff format` and where the code is split into cells leave the fingerprint alone; an IPython magic counts by
    its text."""
    nb = nbformat.read(path, as_version=4)
    parts = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            try:
                tree = ast.parse(cell.source)
            except SyntaxError:  # an IPython magic: the text itself
                parts.append(cell.source)
                continue
            for node in ast.walk(tree):
                if (
                    isinstance(
                        node,
                        (
                            ast.Module,
                            ast.ClassDef,
                            ast.FunctionDef,
                            ast.AsyncFunctionDef,
                        ),
                    )
                    and ast.get_docstring(node, clean=False) is not None
                ):
                    node.body = node.body[1:] or [ast.Pass()]
            parts.extend(ast.dump(statement) for statement in tree.body)
    return hashlib.sha1("\n".join(parts).encode()).hexdigest()[:12]


def summarise(record: dict) -> tuple[str, list]:
    """A line for the chapter and a row per assert: passes, and min / median slack over the seeds."""
    runs = record["runs"]
    labels = {}
    for run in runs:
        labels.update(run["labels"])
    passed = sum(1 for r in runs if not r["error"])
    rows = []
    for key, label in labels.items():
        reached = [r for r in runs if key in r["slack"]]
        slacks = [r["slack"][key] for r in reached if r["slack"][key] is not None]
        failed = [r for r in runs if r["error"] and _failed_here(r, key, labels)]
        stats = (
            (f"{min(slacks):.3g}", f"{statistics.median(slacks):.3g}")
            if slacks
            else ("–", "–")
        )
        rows.append((key, label, len(reached), len(failed), *stats))
    head = f"{record['chapter']}: {passed}/{len(runs)} seeds passed (commit {record['commit']}, {record['date']})"
    return head, rows


def condense(record: dict) -> dict:
    """The summary committed in book/sweeps/: per assert, its source, the seeds that reached and fired it, and its
    min and median slack (None for an assert of another shape)."""
    runs, labels = record["runs"], {}
    for run in runs:
        labels.update(run["labels"])
    asserts = []
    for key, label in labels.items():
        slacks = [r["slack"][key] for r in runs if r["slack"].get(key) is not None]
        asserts.append(
            {
                "key": key,
                "label": label,
                "reached": sum(1 for r in runs if key in r["slack"]),
                "fired": sum(
                    1 for r in runs if r["error"] and _failed_here(r, key, labels)
                ),
                "min": round(min(slacks), 6) if slacks else None,
                "median": round(statistics.median(slacks), 6) if slacks else None,
            }
        )
    return {
        "chapter": record["chapter"],
        "commit": record["commit"],
        "date": record["date"],
        "code": record["code"],
        "seeds": record["seeds"],
        "passed": sum(1 for r in runs if not r["error"]),
        "errors": {str(r["seed"]): r["error"] for r in runs if r["error"]},
        "asserts": asserts,
    }


def write_tables() -> None:
    """Fill the `min slack` column of every chapter's claims-and-controls table from its summary."""
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        i = claims_table.table_cell(nb)
        if i is None:
            continue
        sweep = claims_table.load_sweep(path.stem)
        current = sweep is not None and sweep.get("code") == code_hash(path)
        rows = claims_table.parse(nb.cells[i].source)
        source = claims_table.write_slack(
            nb.cells[i].source,
            [claims_table.slack_text(r, sweep, current) for r in rows],
        )
        if source != nb.cells[i].source:
            nb.cells[i].source = source
            nbformat.write(nb, path)
            print(f"{path.name}: its table's min slack column rewritten")


def _failed_here(run: dict, key: str, labels: dict) -> bool:
    """In a failing run, the assert that landed outside its threshold fired; failing that, the first assert the run
    did not reach (an assert of another shape, or one in a cell that raised)."""
    outside = [k for k, v in run["slack"].items() if v is not None and v < 0]
    if outside:
        return key in outside
    unreached = [k for k in labels if k not in run["slack"]]
    return bool(unreached) and unreached[0] == key


def table(summaries: list) -> str:
    lines = [
        "| chapter | seeds passed | asserts | tightest assert (min slack) | median slack of that assert | measured at |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for summary in summaries:
        rows = summary["asserts"]
        measured = [r for r in rows if r["min"] is not None]
        tight = min(measured, key=lambda r: r["min"]) if measured else None
        label = f"`{_short(tight['label'])}`" if tight else "–"
        path = ROOT / "notebooks" / f"{summary['chapter']}.ipynb"
        current = path.exists() and code_hash(path) == summary.get("code")
        measured_at = f"{summary['commit']}, {summary['date']}" + (
            "" if current else " (stale: the code has changed since)"
        )
        lo = f"{tight['min']:.3g}" if tight else "–"
        med = f"{tight['median']:.3g}" if tight else "–"
        lines.append(
            f"| {summary['chapter']} | {summary['passed']}/{len(summary['seeds'])} | {len(rows)} | "
            f"{label}: {lo} | {med} | {measured_at} |"
        )
    return "\n".join(lines)


def _short(text: str, width: int = 60) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= width else text[: width - 1] + "…"


def print_record(record: dict) -> None:
    head, rows = summarise(record)
    print("\n" + head)
    print(
        "| assert | reached | fired | min slack | median slack |\n| --- | --- | --- | --- | --- |"
    )
    for key, label, reached, fired, lo, med in rows:
        print(f"| {key}: `{_short(label)}` | {reached} | {fired} | {lo} | {med} |")
    for run in record["runs"]:
        if run["error"]:
            print(f"  SEED={run['seed']}: {run['error']}")


def report() -> int:
    records = [json.loads(p.read_text()) for p in sorted(OUT.glob("*.json"))]
    claims_table.SWEEPS.mkdir(exist_ok=True)
    for record in records:
        summary = claims_table.SWEEPS / f"{record['chapter']}.json"
        summary.write_text(json.dumps(condense(record), indent=1) + "\n")
    summaries = [
        json.loads(p.read_text()) for p in sorted(claims_table.SWEEPS.glob("*.json"))
    ]
    write_tables()
    if not summaries:
        print(
            f"No sweep records in {OUT} or {claims_table.SWEEPS}: the tables say 'not swept'."
        )
        return 0
    text = REPRODUCIBILITY.read_text()
    start, end = MARKERS
    if start not in text or end not in text:
        raise SystemExit(f"{REPRODUCIBILITY} has lost its {start} / {end} markers.")
    head, old, tail = (
        text.split(start)[0],
        text.split(start)[1].split(end)[0],
        text.split(end)[1],
    )
    # a chapter with no summary keeps the row it had
    new = table(summaries).splitlines()
    swept = {summary["chapter"] for summary in summaries}
    kept = [
        line
        for line in old.splitlines()
        if line.startswith("| ")
        and line.split(" | ")[0][2:] not in swept | {"chapter"}
        and not line.startswith("| ---")
    ]
    body = "\n".join(new[:2] + sorted(new[2:] + kept))
    REPRODUCIBILITY.write_text(f"{head}{start}\n{body}\n{end}{tail}")
    print(body)
    for record in records:
        print_record(record)
    return 0 if all(not s["errors"] for s in summaries) else 1


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
