"""The one place for the project's paths, budgets, timeouts and seeds: the tools in this folder and the tests
import it (tools never import the tests' conftest)."""

import ast
import os
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
STUDENT_DIR = ROOT / "notebooks" / "student"
# the chapters in plain CommonMark, for Colab, GitHub and the download button (`make student` writes them)
COLAB_DIR = ROOT / "notebooks" / "colab"
# code every notebook must carry the same: `make sync` copies it in
SHARED = ROOT / "notebooks" / "shared"
HIDDEN = ROOT / "booktools" / "grading" / "hidden"
# answers each hidden test must mark right (booktools/grading/mutation.py)
MUTANTS = ROOT / "booktools" / "grading" / "mutants"
# every code cell each chapter's student versions have held (booktools/grading/published.py)
PUBLISHED = ROOT / "booktools" / "grading" / "published"
REPRODUCIBILITY = ROOT / "book" / "reproducibility.md"
# `make seeds`' raw records, one per chapter (booktools/measure/seeds.py); summaries go to book/sweeps/
SWEEP_RECORDS = ROOT / "_build" / "seeds"
INTRO = ROOT / "book" / "intro.md"

# The SEED the tests run notebooks with: not the committed one.
TEST_SEED = int(os.environ.get("TEST_SEED", "12345"))
# The secret the tests grade under (`make grade SECRET=...`): the hidden tests then draw inputs other than the seeds
# written in them, as in an instructor's private grading, and must still tell right answers from wrong ones.
TEST_SECRET = os.environ.get("TEST_SECRET", f"test secret {TEST_SEED}")
# `make seeds`: the sweep's seeds are 1000, 2000, ...; chapters seed their models as SEED + k.
SEED_SPACING = 1000

# Run-time budgets on a 2-core machine, in wall seconds (`make bench` checks them).
NOTEBOOK_BUDGET = 60
NOTEBOOK_BUDGETS = {"05_pre_vs_post_norm": 90}
BOOK_BUDGETS = {"cold": 600, "warm": 30}
# `make test` and `.ci/run` in "passes": one pass is the wall time of executing every chapter once, two at a time
# on the two cores (half the sum of the chapters' times).
TEST_BUDGET_PASSES = 3.5
CI_BUDGET_PASSES = 7

# Seconds a notebook cell may run before a machine run (tests, tools, the sweep) stops it; grading allows less
# per cell by default, since a student's loop should not hold up a class's grades.
CELL_TIMEOUT = 600
GRADE_CELL_TIMEOUT = 120
# The address space each submission's kernel may use (`prlimit --as`). Measured on 2026-12-01: chapter 05's
# instructor version, the heaviest chapter, graded whole under 4 GB; under 2 GB its training cells could not
# allocate their tensors.
GRADE_MEMORY_GB = 4

# Figures. Their style (width, resolution, font sizes, palette) is set once, in notebooks/shared/style.py. At 1,280 px
# the site's text column is COLUMN_PX wide; there a figure's smallest text must read at MIN_TEXT_PX or more. PNGs
# are drawn at RETINA times the resolution they are shown at. A chapter's PNGs together stay under FIGURE_BYTES.
COLUMN_PX = 688
MIN_TEXT_PX = 9
RETINA = 2
FIGURE_BYTES = 2_000_000  # the heaviest chapters, 03 and 07, draw about 1.4 MB


def figure_style() -> dict:
    """FIG_WIDTH, FIG_DPI and SMALLEST_FONT as notebooks/shared/style.py sets them (read, not run: no matplotlib)."""
    wanted = {"FIG_WIDTH", "FIG_DPI", "SMALLEST_FONT"}
    return {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in ast.parse((SHARED / "style.py").read_text()).body
        if isinstance(node, ast.Assign)
        and getattr(node.targets[0], "id", None) in wanted
    }


def smallest_text_px(shown_px: float, png_px: float) -> float:
    """The size on screen, in CSS px, of a figure's smallest text when its PNG (png_px wide, drawn at RETINA times
    FIG_DPI) is shown shown_px wide."""
    style = figure_style()
    return style["SMALLEST_FONT"] / 72 * style["FIG_DPI"] * RETINA * shown_px / png_px


def headless() -> None:
    """Kernels started from here on run headless (the notebooks read RC_HEADLESS): no progress bars, and a hidden
    cell tries each widget's function at an extreme setting."""
    os.environ["RC_HEADLESS"] = "1"


def toc_files(entry) -> list:
    """The root and every `file:` of a _toc.yml entry, in reading order."""
    if isinstance(entry, list):
        return [file for item in entry for file in toc_files(item)]
    if isinstance(entry, dict):
        own = [entry[key] for key in ("root", "file") if key in entry]
        return own + [file for value in entry.values() for file in toc_files(value)]
    return []


def book_pages() -> list:
    """Every page of the book, as _toc.yml orders them (paths without suffix, from the repository root)."""
    return toc_files(yaml.safe_load((ROOT / "_toc.yml").read_text()))


def load_config() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text())


def colab_url(notebook_name: str) -> str:
    """The Colab address of a notebook, built from the one repository URL in _config.yml."""
    repo = load_config()["repository"]
    owner_repo = re.sub(r"^https://github\.com/", "", repo["url"].rstrip("/"))
    return f"https://colab.research.google.com/github/{owner_repo}/blob/{repo['branch']}/notebooks/{notebook_name}"
