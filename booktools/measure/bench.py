"""`make bench`: wall time of each notebook in its default mode, of a cold and a warm `make book`, and of
`make test` (also in passes: one pass is half the sum of the notebooks' times, every chapter once, two at a
time on two cores). `--ci` also times `.ci/run`, which runs `make test` and `make book` again.

Prints a table and writes it into book/reproducibility.md (between the bench markers), the one place the run times
live, and each notebook's time into its own title cell (and so its student copy), which a reader of one chapter
sees; every other page links to the reproducibility page. Timings are wall seconds on the machine it runs on;
run it on an otherwise idle machine.
"""

import argparse
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import torch

from booktools.build.student import write_student_versions
from booktools.execute import execute
from booktools.settings import (
    BOOK_BUDGETS,
    CI_BUDGET_PASSES,
    NOTEBOOK_BUDGET,
    NOTEBOOK_BUDGETS,
    REPRODUCIBILITY,
    ROOT,
    TEST_BUDGET_PASSES,
)

MARKERS = re.compile(r"(<!-- bench:start -->\n).*?(<!-- bench:end -->)", re.S)
TITLE_TIME = re.compile(r"(\*\*Time to run:\*\* about )\d+ s")


def time_make(target: str) -> float:
    start = time.perf_counter()
    command = ["bash", ".ci/run"] if target == ".ci/run" else ["make", target]
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def clear_build() -> None:
    """A cold start for `make book`: everything in _build goes except the seed sweep's records."""
    for child in (ROOT / "_build").glob("*"):
        if child.name != "seeds":
            shutil.rmtree(child) if child.is_dir() else child.unlink()


def whole_seconds(seconds: float) -> int:
    """A time as the front page and the title cells show it: the table's value (to 0.1 s) rounded half up, so
    that 54.5 in the table reads 55 s everywhere."""
    return math.floor(round(seconds, 1) + 0.5)


def row(name: str, seconds: float, budget: float) -> str:
    return f"| {name} | {seconds:.1f} | {budget} | {'ok' if seconds <= budget else 'OVER BUDGET'} |"


def write_table(table: str, stamp: str) -> None:
    """Replace the table between the markers on the reproducibility page."""
    text = REPRODUCIBILITY.read_text()
    if not MARKERS.search(text):
        raise SystemExit(
            f"{REPRODUCIBILITY} has lost its <!-- bench:start --> / <!-- bench:end --> markers."
        )
    REPRODUCIBILITY.write_text(
        MARKERS.sub(lambda m: f"{m[1]}{stamp}\n\n{table}\n{m[2]}", text)
    )


def table_of(rows: list) -> str:
    return "\n".join(
        ["| what | wall s | budget s | verdict |", "| --- | --- | --- | --- |", *rows]
    )


def write_title_times(seconds: dict, notebooks: list) -> None:
    """Set "**Time to run:** about N s" in each notebook's title cell (its outputs stay) and in its student copy."""
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        nb.cells[0].source = TITLE_TIME.sub(
            lambda m: f"{m[1]}{whole_seconds(seconds[path.stem])} s", nb.cells[0].source
        )
        nbformat.write(nb, path)
    write_student_versions(notebooks)


def main(notebooks: list, ci: bool = False) -> int:
    rows, seconds = [], {}
    for path in notebooks:
        _, seconds[path.stem] = execute(path)
        rows.append(
            row(
                path.name,
                seconds[path.stem],
                NOTEBOOK_BUDGETS.get(path.stem, NOTEBOOK_BUDGET),
            )
        )
        print(rows[-1], flush=True)
    one_pass = sum(seconds.values()) / 2
    rows.append(f"| one pass: every chapter once, two at a time | {one_pass:.1f} | | |")
    # the notebooks' rows go on the page before the book is built: the site's test asks for every chapter's row
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, torch {torch.__version__}"
    stamp = f"Measured by `make bench` ({time.strftime('%Y-%m-%d')}, {machine})."
    write_table(table_of(rows), stamp)
    write_title_times(seconds, notebooks)
    clear_build()
    for kind in ("cold", "warm"):
        rows.append(row(f"`make book`, {kind}", time_make("book"), BOOK_BUDGETS[kind]))
        print(rows[-1], flush=True)
    for target, passes in [("test", TEST_BUDGET_PASSES)] + (
        [(".ci/run", CI_BUDGET_PASSES)] if ci else []
    ):
        seconds_taken = time_make(target)
        name = f"`{target}`" if target.startswith(".") else f"`make {target}`"
        rows.append(
            row(
                f"{name} ({seconds_taken / one_pass:.1f} passes)",
                seconds_taken,
                round(passes * one_pass),
            )
        )
        print(rows[-1], flush=True)
    table = table_of(rows)
    write_table(table, stamp)
    print("\n" + table)
    return 0 if "OVER BUDGET" not in table else 1


def parse_args(argv: list) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench.py", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "notebooks", nargs="+", type=Path, help="the notebooks to time, in order"
    )
    parser.add_argument("--ci", action="store_true", help="also time .ci/run")
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.notebooks if not p.is_file()]
    if missing:
        parser.error(f"no such notebook: {', '.join(missing)}")
    return args


if __name__ == "__main__":
    args = parse_args(sys.argv[1:])
    sys.exit(main(args.notebooks, ci=args.ci))
