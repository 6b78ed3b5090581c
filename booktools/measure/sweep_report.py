"""`make seeds`' report (`python -m booktools.measure.seeds --report`): each chapter's raw sweep record in
_build/seeds condensed into the summary committed in book/sweeps/, and from the summaries the table on
book/reproducibility.md (between the seeds markers) and the `min slack` column of every chapter's
claims-and-controls table (claims_table.py)."""

import ast
import hashlib
import json
import statistics
from pathlib import Path

import nbformat

from booktools.measure import claims_table
from booktools.settings import REPRODUCIBILITY, ROOT, SWEEP_RECORDS

OUT = SWEEP_RECORDS  # the raw records, one per chapter, that `make seeds` writes


MARKERS = ("<!-- seeds:start -->", "<!-- seeds:end -->")


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
