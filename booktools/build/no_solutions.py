"""`make book SOLUTIONS=0`: the book without its solutions, for a course that publishes a copy of its own.

The published book shows every exercise's reference solution under **Show solution**, and the instructors' page
gives model answers to the exercises' written and "Predict first" parts. This builds the same book without them,
from the same executed notebooks (the book's execution cache, _build/.jupyter_cache, which `make book` fills;
nothing is executed again), into a site of its own, so that the normal build is untouched:

- the stripped sources: _build/no-solutions/ (a copy of the book's tree: _config.yml with execution off, _toc.yml,
  book/, the chapters with their cached outputs);
- the site: _build/html-no-solutions/, built by the same `jupyter-book build -W -n --keep-going`.

In each chapter, every solution region (`### BEGIN SOLUTION` ... `### END SOLUTION`, in the cells tagged `solution`)
becomes the student version's stub, `raise NotImplementedError(...)`, the cell loses its outputs and its fold (so no
"Show solution" block is left: the page shows the stub, as the student version does), and a `{dropdown}` in the
Exercises section (an answer to an exercise, which counts as a model answer; the chapters' in-text dropdowns
answer the lesson's own questions, whose measurement is on the page anyway, and stay) is removed. On the book's
pages, every block between `% BEGIN MODEL ANSWERS` and `% END MODEL ANSWERS` is replaced by a sentence that says
it was left out. Every Colab link, and each chapter's Colab button, opens the student version instead of the
Colab copy (which holds the solutions), and each chapter's download is its student version. The self-checks
lose their outputs too: what the reference solution made them print is the measurement that an exercise's
"Predict first" part is compared with. A solution region that the built site still shows, in a page, the search
index or a download, stops the build (`leaks`).

What it does not stop (the instructors' page says so): the public site, the repository, its history and its
Colab copies stay where they are, one click from the student versions that the copy links; the whole-book PDF
that the download menu offers is printed from _build/html only (`make pdf`), so the copy's link to it is dead;
and where a chapter itself shows the code an exercise asks for (in a helper the exercise forbids), so does
the copy.
Usage: python -m booktools.build.no_solutions [--tree DIR] [--html DIR] [--baseurl URL] [--no-build]
       [--committed-outputs]
"""

import argparse
import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import yaml
from jupyter_cache import get_cache

from booktools.build.book_cache import CACHE
from booktools.build.student import EXERCISE, SOLUTION, stub
from booktools.settings import NOTEBOOKS, ROOT, STUDENT_DIR, load_config

TREE = ROOT / "_build" / "no-solutions"
EXTENSION = "booktools.build.no_solutions"  # this module, as the stripped tree's Sphinx loads it
HTML = ROOT / "_build" / "html-no-solutions"
JUPYTER_BOOK = Path(sys.executable).parent / "jupyter-book"

# The instructors' page (and any page of book/) marks its model answers so; the block goes, a sentence stays.
MODEL_ANSWERS = re.compile(
    r"^% BEGIN MODEL ANSWERS[^\n]*\n.*?^% END MODEL ANSWERS[^\n]*(\n|$)", re.M | re.S
)
# The class of the admonition that holds them, which `leaks` looks for in the built pages.
MODEL_ANSWERS_CLASS = "model-answers"
MODEL_ANSWERS_HTML = re.compile(rf'class="[^"]*\b{MODEL_ANSWERS_CLASS}\b')
LEFT_OUT = (
    "*The model answers are left out of this copy of the book, which was built without solutions "
    "(`make book SOLUTIONS=0`).*\n"
)
INCLUDE = re.compile(r"^(?:`{3,}|:{3,})\{(?:literal)?include\}[ \t]+(\S+)", re.M)
EXERCISES_HEADING = re.compile(r"^##\s+Exercises\b", re.M)
SECTION_HEADING = re.compile(r"^##\s+(?!#)", re.M)
DROPDOWN = re.compile(
    r"^(?P<fence>`{3,}|:{3,})\{dropdown\}[^\n]*\n.*?^(?P=fence)[ \t]*(\n|$)",
    re.M | re.S,
)
# A Colab address of a chapter's Colab copy (which holds the solutions): it opens the student version instead.
COLAB_COPY = re.compile(
    r"(https://colab\.research\.google\.com/github/[^\s)\"'<>]*?/notebooks/)colab/"
)
CHAPTER_COPY_ON_GITHUB = re.compile(
    r"(/blob/[^/]+/notebooks/)colab/(?=\d\d_[^/]+\.ipynb$)"
)
# What the chapters and the front page say about the folded solutions, and what this copy says instead.
SENTENCES = [
    (
        re.compile(
            r"On this page each\s+solution is folded away under \*\*Show solution\*\*; try the exercise\s+"
            r"before you open it\."
        ),
        "This copy of the book shows no solutions.",
    ),
    (
        re.compile(
            r";\s+on these pages each solution is\s+folded away under \*\*Show solution\*\*\."
        ),
        "; this copy of the book shows no solutions.",
    ),
]


def to_student_links(text: str) -> str:
    """`text` with every Colab address of a chapter's Colab copy turned into its student version's."""
    return COLAB_COPY.sub(r"\1student/", text)


def strip_page(text: str) -> str:
    """A page of book/ without its model answers, its Colab links opening the student versions."""
    text = MODEL_ANSWERS.sub(LEFT_OUT, text)
    for pattern, instead in SENTENCES:
        text = pattern.sub(instead, text)
    return to_student_links(text)


def is_solution(cell) -> bool:
    return cell.cell_type == "code" and (
        "solution" in cell.metadata.get("tags", [])
        or "### BEGIN SOLUTION" in cell.source
    )


def strip_notebook(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """An executed chapter without its solutions (a new object; `nb` is left alone): each solution region becomes
    the student version's stub, the cell shown unfolded without outputs; the self-checks lose what the reference
    solution made them print; dropdowns in the Exercises section go; the Colab links open the student versions."""
    nb = nbformat.from_dict(nb)
    exercise, in_exercises = ("?", "complete this exercise."), False
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            heading = SECTION_HEADING.search(cell.source)
            if heading:
                in_exercises = bool(EXERCISES_HEADING.search(cell.source))
            if headings := EXERCISE.findall(cell.source):
                exercise = headings[-1]
            if in_exercises:
                cell.source = DROPDOWN.sub("", cell.source)
            for pattern, instead in SENTENCES:
                cell.source = pattern.sub(instead, cell.source)
            cell.source = to_student_links(cell.source)
        elif is_solution(cell):
            cell.source = SOLUTION.sub(
                lambda m: stub(m["indent"], *exercise), cell.source
            )
            cell.outputs, cell.execution_count = [], None
            cell.metadata["tags"] = [
                t for t in cell.metadata.get("tags", []) if t != "hide-input"
            ]
            prompts = cell.metadata.get("mystnb", {})
            for key in ("code_prompt_show", "code_prompt_hide"):
                prompts.pop(key, None)
            if not prompts:
                cell.metadata.pop("mystnb", None)
        elif "self-check" in cell.metadata.get("tags", []):
            # what the reference solution made it print ("correct", and the measurement a prediction is
            # compared with): the student's own run prints it
            cell.outputs, cell.execution_count = [], None
    return nb


def executed(path: Path, cache_path: Path = CACHE) -> nbformat.NotebookNode:
    """The chapter at `path` with the outputs the book's execution cache holds for it, as myst-nb merges them."""
    nb = nbformat.read(path, as_version=4)
    try:
        _, merged = get_cache(str(cache_path)).merge_match_into_notebook(nb)
    except KeyError:
        raise SystemExit(
            f"{path.name} is not in the book's execution cache ({cache_path}): run `make book` first, which fills it "
            "(this build executes nothing)."
        ) from None
    return merged


def solution_regions(nb: nbformat.NotebookNode) -> list:
    """The code of every solution region of a chapter, without its markers."""
    regions = []
    for cell in nb.cells:
        if is_solution(cell):
            for m in SOLUTION.finditer(cell.source):
                body = m[0].splitlines()[1:-1]
                regions.append("\n".join(body))
    return regions


def squeeze(text: str) -> str:
    """Text without its whitespace, for finding code however a page wraps and indents it."""
    return re.sub(r"\s+", "", text)


def page_text(path: Path) -> str:
    """What a built file says, whitespace removed: for HTML its text, tags removed and entities decoded; for a
    notebook its cells' sources and text outputs."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".html":
        text = html.unescape(re.sub(r"<[^>]+>", "", text))
    elif path.suffix == ".ipynb":
        try:
            nb = nbformat.reads(text, as_version=4)
        except Exception:  # not a notebook: its text as it is
            return squeeze(text)
        text = "\n".join(c.source + _outputs(c) for c in nb.cells)
    return squeeze(text)


def _outputs(cell) -> str:
    return "".join(
        str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", ""))
        for o in cell.get("outputs", [])
    )


def secret_regions(chapters: list) -> dict:
    """{chapter name: [(region, squeezed)]}: each chapter's solution regions that nothing else in the chapter shows
    (a region that another cell or an output shows anyway is no secret of the solution's)."""
    found = {}
    for path in chapters:
        nb = nbformat.read(path, as_version=4)
        rest = squeeze(
            "\n".join(c.source + _outputs(c) for c in nb.cells if not is_solution(c))
        )
        found[path.stem] = [
            (region, squeeze(region))
            for region in solution_regions(nb)
            if squeeze(region) and squeeze(region) not in rest
        ]
    return found


def leaks(site: Path, chapters: list = NOTEBOOKS) -> list:
    """A line for each solution region of `chapters` that a file of the built `site` shows (its pages, its search
    index, its downloads), and for each page with the model answers' block."""
    files = [
        p
        for p in site.rglob("*")
        if p.is_file()
        and p.suffix in (".html", ".js", ".ipynb", ".txt", ".md")
        and "_static" not in p.relative_to(site).parts
    ]
    texts = {p: page_text(p) for p in files}
    found = []
    for chapter, regions in secret_regions(chapters).items():
        for region, squeezed in regions:
            where = [
                str(p.relative_to(site)) for p, t in texts.items() if squeezed in t
            ]
            if where:
                first = region.strip().splitlines()[0]
                found.append(
                    f"{chapter}: the solution that starts {first!r} is in {', '.join(where)}"
                )
    for p in files:
        if p.suffix == ".html" and MODEL_ANSWERS_HTML.search(
            p.read_text(encoding="utf-8", errors="replace")
        ):
            found.append(f"{p.relative_to(site)}: the model answers' block")
    return found


def _write(path: Path, data: bytes, written: set) -> None:
    """Write `data` to `path` only if it differs, so that Sphinx rebuilds only what changed."""
    written.add(path)
    if path.exists() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def write_tree(
    tree: Path = TREE,
    chapters: list = NOTEBOOKS,
    baseurl: str = "",
    load=executed,
    root: Path = ROOT,
) -> Path:
    """The book's sources without solutions in `tree`: the chapters executed (from the cache) and stripped, the
    pages of book/ without model answers, _config.yml with execution off, and each chapter's student version
    where the download button and the Colab links look for its Colab copy. `load(path)` gives a chapter executed
    (default: from the book's execution cache). Files of an earlier tree that the book no longer has are
    removed."""
    written = set()
    config = load_config()
    config["execute"]["execute_notebooks"] = "off"
    config["html"]["baseurl"] = baseurl
    sphinx = config.setdefault("sphinx", {})
    sphinx["extra_extensions"] = [*sphinx.get("extra_extensions", []), EXTENSION]
    header = "# Written by booktools/build/no_solutions.py from the book's _config.yml: do not edit.\n"
    _write(
        tree / "_config.yml",
        (header + yaml.safe_dump(config, sort_keys=False)).encode(),
        written,
    )
    _write(tree / "_toc.yml", (root / "_toc.yml").read_bytes(), written)
    for source in sorted((root / "book").rglob("*")):
        if not source.is_file() or "__pycache__" in source.parts:
            continue
        data = source.read_bytes()
        if source.suffix == ".md":
            data = strip_page(data.decode()).encode()
            # a file a page includes from outside book/ (the requirements the reproducibility page shows)
            for included in INCLUDE.findall(data.decode()):
                outside = (source.parent / included).resolve()
                if outside.is_file() and root in outside.parents:
                    _write(
                        tree / outside.relative_to(root), outside.read_bytes(), written
                    )
        _write(tree / source.relative_to(root), data, written)
    for path in chapters:
        nb = strip_notebook(load(path))
        _write(tree / "notebooks" / path.name, nbformat.writes(nb).encode(), written)
        # the download button and book/_ext/colab_copies.py take the Colab copy from here: the student version
        student = STUDENT_DIR / path.name
        _write(tree / "notebooks" / "colab" / path.name, student.read_bytes(), written)
    for stale in [p for p in tree.rglob("*") if p.is_file()]:
        if stale not in written and "_build" not in stale.relative_to(tree).parts:
            stale.unlink()
    return tree


def build(tree: Path = TREE, site: Path = HTML) -> None:
    """`jupyter-book build` of the stripped tree, with the book's own -W -n --keep-going, copied to `site`."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    command = [str(JUPYTER_BOOK), "build", str(tree), "-W", "-n", "--keep-going"]
    if subprocess.run(command, env=env, cwd=ROOT).returncode:
        raise SystemExit("The book without solutions did not build (see above).")
    if site.exists():
        shutil.rmtree(site)
    shutil.copytree(tree / "_build" / "html", site)


# --- the Sphinx extension the stripped tree's _config.yml loads (sphinx.extra_extensions) ---


def _student_buttons(buttons: list) -> None:
    for button in buttons:
        if "url" in button:
            button["url"] = CHAPTER_COPY_ON_GITHUB.sub(r"\1student/", button["url"])
        _student_buttons(button.get("buttons", []))


def _on_page(app, pagename, templatename, context, doctree):
    """Each chapter's Colab button opens its student version (after book/_ext/colab_copies.py, at 600)."""
    _student_buttons(context.get("header_buttons", []))


def setup(app):
    app.connect("html-page-context", _on_page, priority=700)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--tree", type=Path, default=TREE, help="where the stripped sources go"
    )
    ap.add_argument("--html", type=Path, default=HTML, help="where the site goes")
    ap.add_argument(
        "--baseurl",
        default="",
        help="the address the course publishes this copy at (html.baseurl; default: none)",
    )
    ap.add_argument("--no-build", action="store_true", help="write the sources only")
    ap.add_argument(
        "--committed-outputs",
        action="store_true",
        help="take each chapter's outputs from the notebook as committed, not from the execution cache (for a "
        "check of this tool; the site shows the cache's)",
    )
    args = ap.parse_args()
    load = (
        (lambda path: nbformat.read(path, as_version=4))
        if args.committed_outputs
        else executed
    )
    tree = write_tree(args.tree.resolve(), baseurl=args.baseurl, load=load)
    print(f"wrote the book without solutions to {tree}")
    if args.no_build:
        return
    build(tree, args.html.resolve())
    if found := leaks(args.html.resolve()):
        raise SystemExit(
            "The site built without solutions still shows some:\n  "
            + "\n  ".join(found)
        )
    print(f"built {args.html}: no solution region and no model answer in it")


if __name__ == "__main__":
    main()
