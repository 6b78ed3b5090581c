"""`make bench`: wall time of each notebook in its default mode, and of a cold and a warm `make book`.

Prints a table and writes it to book/benchmarks.md. Timings are wall seconds on the machine it runs on;
run it on an otherwise idle machine.
"""
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from execute import execute  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BUDGETS = {"05_pre_vs_post_norm": 90}  # seconds; every other notebook: DEFAULT_BUDGET
DEFAULT_BUDGET = 60
BOOK_BUDGETS = {"cold": 600, "warm": 30}


def time_make_book() -> float:
    start = time.perf_counter()
    subprocess.run(["make", "book"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def row(name: str, seconds: float, budget: float) -> str:
    return f"| {name} | {seconds:.1f} | {budget} | {'ok' if seconds <= budget else 'OVER BUDGET'} |"


def main(notebooks: list) -> int:
    rows = []
    for path in notebooks:
        _, seconds = execute(path)
        rows.append(row(path.name, seconds, BUDGETS.get(path.stem, DEFAULT_BUDGET)))
        print(rows[-1], flush=True)
    shutil.rmtree(ROOT / "_build", ignore_errors=True)
    for kind in ("cold", "warm"):
        rows.append(row(f"`make book`, {kind}", time_make_book(), BOOK_BUDGETS[kind]))
        print(rows[-1], flush=True)
    table = "\n".join(["| what | wall s | budget s | verdict |", "| --- | --- | --- | --- |", *rows])
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, torch {torch.__version__}"
    (ROOT / "book" / "benchmarks.md").write_text(
        "# Benchmarks\n\nWall time of each notebook in its default mode and of building the book, measured by "
        f"`make bench` ({time.strftime('%Y-%m-%d')}, {machine}).\n\n{table}\n")
    print("\n" + table)
    return 0 if "OVER BUDGET" not in table else 1


if __name__ == "__main__":
    sys.exit(main([Path(p) for p in sys.argv[1:]]))
