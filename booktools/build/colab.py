"""Write notebooks/colab/NN_topic.ipynb, the copy of every chapter that Colab, GitHub and the
book's download button open.

The chapters are written in MyST for the book: {cite} and {term} roles, admonition fences, and links to the
book's pages relative to the notebook. Colab and GitHub render plain CommonMark, where these show as raw text
and dead links. The copy is the same notebook, outputs included, with its markdown rewritten:
- a citation becomes "(He et al., 2016a)" or, for {cite:t}, "He et al. (2016a)", linked to its entry on the
  published site's bibliography page (labels from book/_ext/author_year_labels.py, as in the book);
- a glossary term becomes a link to the site's glossary;
- a figure's caption (cell metadata `mystnb.figure`, which only the book reads) becomes a markdown cell after
  the figure, "**Figure 2.** ...", numbered as the book numbers it (book/_ext/figure_numbers.py), and a
  {numref} to it becomes "Figure 2", linked to the figure on the published page;
- an admonition becomes a blockquote with its title in bold, and a dropdown an HTML <details> element;
- a relative link becomes an absolute link to the page on the published site (`html.baseurl` in _config.yml).
Its code cells are rewritten for a student who opens it in Colab:
- every cell the book folds (`hide-input`), and every live-controls cell the book leaves out, becomes a Colab
  form: `cellView: "form"` and a first line `# @title Show code: <what it holds>`, so that Colab (and JupyterLab,
  through `source_hidden`) shows its title and its output, and the code a click away;
- a cell that only the machines run (tagged `remove-cell`, one `if HEADLESS:` block that tries a slider's far
  corner) is dropped;
- the header of a cell that `make sync` copies from the chapter that teaches it keeps only where it is taught.
A MyST construct this file does not know stops it with a message, rather than reaching a student raw.
The student versions (`make student`) are made from these copies.
Usage: python -m booktools.build.colab [notebooks/NN_topic.ipynb ...]   (default: every chapter)
"""

import ast
import copy
import functools
import importlib.util
import re
import sys
from pathlib import Path

import nbformat
from docutils.nodes import make_id
from pybtex.database import parse_file

from booktools.grading.splice import FORM_TITLE
from booktools.settings import COLAB_DIR, NOTEBOOKS, ROOT, load_config


def _sphinx_extension(name: str):
    """One of the book's Sphinx extensions (book/_ext), which Sphinx loads by file path, loaded the same way."""
    path = ROOT / "book" / "_ext" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"book_ext_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


author_year_labels = _sphinx_extension("author_year_labels").author_year_labels

ROLE = re.compile(r"\{(?P<role>[\w:-]+)\}`(?P<body>[^`]+)`")
FENCE = re.compile(
    r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[\w-]+)\}[ \t]*(?P<argument>[^\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$",
    re.M | re.S,
)
RELATIVE_LINK = re.compile(r"\]\((?P<target>(?!https?://|#|mailto:)[^)\s]+)\)")
ADMONITIONS = {
    "admonition",
    "note",
    "tip",
    "hint",
    "important",
    "warning",
    "caution",
    "seealso",
}


def site() -> str:
    return load_config()["html"]["baseurl"].rstrip("/") + "/"


@functools.cache
def labels() -> dict:
    """Each bibliography key's label as the book prints it: "He et al., 2016a"."""
    bibliography = parse_file(str(ROOT / "book" / "references.bib"))
    return author_year_labels(bibliography.entries)


def cite(role: str, keys: str) -> str:
    links = []
    for key in (k.strip() for k in keys.split(",")):
        if key not in labels():
            raise SystemExit(f"{{{role}}}`{keys}`: {key} is not in book/references.bib")
        names, year = labels()[key].rsplit(", ", 1)
        text = f"{names} ({year})" if role == "cite:t" else f"{names}, {year}"
        links.append(f"[{text}]({site()}book/bibliography.html#cite-{key})")
    return ", ".join(links) if role == "cite:t" else f"({'; '.join(links)})"


def term(body: str) -> str:
    match = re.fullmatch(r"(?P<text>.+?)\s*<(?P<target>[^>]+)>", body)
    text, target = (match["text"], match["target"]) if match else (body, body)
    return f"[{text}]({site()}book/glossary.html#{make_id('term-' + target)})"


def figure_names(nb: nbformat.NotebookNode) -> list:
    """The names of a chapter's captioned figures, in the order the book numbers them."""
    return [
        figure["name"]
        for cell in nb.cells
        if cell.cell_type == "code"
        and (figure := cell.metadata.get("mystnb", {}).get("figure"))
    ]


def numref(body: str, figures: list, page: str) -> str:
    match = re.fullmatch(r"(?P<text>.+?)\s*<(?P<target>[^>]+)>", body)
    text, target = (match["text"], match["target"]) if match else ("Figure %s", body)
    if target not in figures:
        raise SystemExit(
            f"{{numref}}`{body}`: no figure named {target} in this chapter "
            "(a figure's name is in its cell's metadata, mystnb.figure.name)"
        )
    number = figures.index(target) + 1
    return f"[{text.replace('%s', str(number))}]({site()}{page}#{target})"


def role(match: re.Match, figures: list = (), page: str = "") -> str:
    name, body = match["role"], match["body"]
    if name in ("cite", "cite:p", "cite:t"):
        return cite(name, body)
    if name == "term":
        return term(body)
    if name == "numref":
        return numref(body, figures, page)
    raise SystemExit(
        f"{{{name}}}`{body}`: no CommonMark form for this role yet; add one to booktools/build/colab.py"
    )


def fence(match: re.Match) -> str:
    name, argument = match["name"], match["argument"].strip()
    if (
        name == "dropdown"
    ):  # HTML that CommonMark passes through, and Colab and GitHub fold
        body = [
            line
            for line in match["body"].rstrip("\n").split("\n")
            if not re.match(r"^:\w[\w-]*:", line)
        ]
        return "\n".join(
            [f"<details>\n<summary>{argument}</summary>", "", *body, "", "</details>"]
        )
    if name not in ADMONITIONS:
        raise SystemExit(
            f"```{{{name}}}: no CommonMark form for this directive yet; add one to booktools/build/colab.py"
        )
    title = argument if name == "admonition" else name.capitalize()
    body = [
        line
        for line in match["body"].rstrip("\n").split("\n")
        if not re.match(r"^:\w[\w-]*:", line)
    ]
    return "\n".join([f"> **{title}**", ">", *(f"> {line}".rstrip() for line in body)])


def link(match: re.Match, folder: Path) -> str:
    path, _, anchor = match["target"].partition("#")
    page = (folder / path).resolve().relative_to(ROOT)
    url = (
        site() + page.with_suffix(".html").as_posix() + (f"#{anchor}" if anchor else "")
    )
    return f"]({url})"


def commonmark(
    markdown: str,
    folder: Path = ROOT / "notebooks",
    figures: list = (),
    page: str = "",
) -> str:
    """MyST markdown written in `folder` -> CommonMark that reads the same outside the book.
    `figures`: the names of the chapter's figures in order, for {numref}; `page`: its path on the site."""
    markdown = FENCE.sub(fence, markdown)
    markdown = ROLE.sub(lambda m: role(m, figures, page), markdown)
    return RELATIVE_LINK.sub(lambda m: link(m, folder), markdown)


def caption_cell(
    cell: nbformat.NotebookNode, number: int, convert
) -> nbformat.NotebookNode:
    """The markdown cell that shows a figure's caption under it outside the book."""
    caption = convert(cell.metadata["mystnb"]["figure"]["caption"])
    return nbformat.v4.new_markdown_cell(
        f"**Figure {number}.** {caption}", id=f"{cell.id}-caption"
    )


def site_page(path: Path) -> str:
    """A chapter's path on the published site: notebooks/02_identity_and_zero_init.html."""
    return path.resolve().relative_to(ROOT).with_suffix(".html").as_posix()


# A live-controls cell: the book leaves it out (a slider that needs no kernel stands in for it).
LIVE = "# In Colab or Jupyter, with a kernel:"
# The header `make sync` writes on a cell it copies (booktools/build/sync.py); the copy keeps its first part.
SYNC_HEADER = re.compile(
    r"^(?P<taught># Taught in [^;\n]+); copied by make sync from \S+$", re.M
)


def tags(cell: nbformat.NotebookNode) -> list:
    return cell.metadata.get("tags", [])


def machine_only(cell: nbformat.NotebookNode) -> bool:
    """A cell that only a machine runs: left out of the book, and one `if HEADLESS:` block."""
    return (
        cell.cell_type == "code"
        and "remove-cell" in tags(cell)
        and cell.source.lstrip().startswith("if HEADLESS:")
    )


def foldable(cell: nbformat.NotebookNode) -> bool:
    """A code cell that opens folded outside the book: what the book folds, and the live controls."""
    return cell.cell_type == "code" and (
        "hide-input" in tags(cell) or cell.source.startswith(LIVE)
    )


def defined_names(source: str) -> list:
    """The names a cell defines at its top level, functions and classes first: ["plot_cifar()", "CIFAR_RUNS"]."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return []
    defs = [
        node.name + ("()" if not isinstance(node, ast.ClassDef) else "")
        for node in body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]
    assigned = [
        target.id
        for node in body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    ]
    return defs or assigned


def first_clause(comment: str) -> str:
    """The first clause of a comment block: "Setup, the same in every chapter: in Colab..." gives its first part."""
    text = " ".join(line.lstrip("# ").strip() for line in comment.split("\n"))
    return re.split(r"\s\(|[:.;]\s", text + " ", maxsplit=1)[0].strip()


def form_title(source: str, figure: int | None = None, solution: bool = False) -> str:
    """What a folded cell holds, in a few words: its Colab form's title, after "Show code: "."""
    comment = "\n".join(re.match(r"(#[^\n]*\n?)*", source)[0].splitlines())
    names = defined_names(source)
    listed = ", ".join(names[:3]) + (", …" if len(names) > 3 else "")
    taught = re.match(r"# Taught in (?P<where>[^;.\n]+)", source)
    if figure:
        return f"Figure {figure}"
    if solution:
        return f"the solution, {listed}"
    if comment.startswith(LIVE):
        return "live controls, " + first_clause(comment.removeprefix(LIVE))
    if taught:
        return f"{listed}, taught in {taught['where']}"
    if comment:  # the cell says what it holds: its first clause
        return first_clause(comment)
    if names:
        return listed
    if source.startswith("if FULL"):
        return "FULL mode only"
    return source.split("\n", 1)[0].strip()


def as_form(cell: nbformat.NotebookNode, figure: int | None = None) -> None:
    """Make `cell` a Colab form with a title that names what it holds, folded in Colab and in JupyterLab."""
    title = form_title(cell.source, figure, "solution" in tags(cell))
    cell.source = f"# @title Show code: {title}\n{cell.source}"
    cell.metadata["cellView"] = "form"
    cell.metadata.setdefault("jupyter", {})["source_hidden"] = True


def unfold(cell: nbformat.NotebookNode) -> None:
    """Undo `as_form`: the cell opens with its code shown."""
    cell.source = "\n".join(
        line for line in cell.source.split("\n") if not FORM_TITLE.match(line)
    )
    cell.metadata.pop("cellView", None)
    cell.metadata.get("jupyter", {}).pop("source_hidden", None)
    if cell.metadata.get("jupyter") == {}:
        del cell.metadata["jupyter"]


def colab_version(nb: nbformat.NotebookNode, path: Path) -> nbformat.NotebookNode:
    """The Colab copy of the chapter `nb` read from `path` (a new object; `nb` is left alone)."""
    figures = figure_names(nb)
    convert = functools.partial(commonmark, figures=figures, page=site_page(path))
    nb = copy.deepcopy(nb)
    cells = []
    for cell in nb.cells:
        if machine_only(cell):
            continue
        cells.append(cell)
        if cell.cell_type == "markdown":
            cell.source = convert(cell.source)
            continue
        number = None
        if cell.metadata.get("mystnb", {}).get("figure"):
            number = figures.index(cell.metadata["mystnb"]["figure"]["name"]) + 1
            cells.append(caption_cell(cell, number, convert))
            del cell.metadata["mystnb"]["figure"]  # MyST that only the book reads
        cell.source = SYNC_HEADER.sub(r"\g<taught>.", cell.source)
        if foldable(cell):
            as_form(cell, number)
    nb.cells = cells
    return nb


def write_colab_versions(notebooks: list, out_dir: Path = COLAB_DIR) -> list:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for path in notebooks:
        target = out_dir / path.name
        nbformat.write(colab_version(nbformat.read(path, as_version=4), path), target)
        written.append(target)
    return written


def main() -> None:
    notebooks = [Path(p) for p in sys.argv[1:]] or NOTEBOOKS
    for target in write_colab_versions(notebooks):
        print(f"wrote {target.relative_to(ROOT)}")


if __name__ == "__main__":
    sys.exit(main())
