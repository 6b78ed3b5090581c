"""The notebook conventions of book/CONTRIBUTING.md, checked on every chapter."""

import ast
import base64
import re
import sys
import tomllib

import pytest
import yaml

from booktools.settings import (
    COLUMN_PX,
    FIGURE_BYTES,
    MIN_TEXT_PX,
    RETINA,
    SHARED,
    smallest_text_px,
)
from conftest import NOTEBOOKS, ROOT, colab_url, read_notebook, tags

SEEDING_CALLS = {"manual_seed", "seed", "default_rng", "Generator"}


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def test_title_cell_has_title_badge_overview_and_time(notebook_path):
    first = read_notebook(notebook_path).cells[0]
    assert first.cell_type == "markdown" and first.source.startswith("# "), (
        "the first cell must be a markdown title"
    )
    assert f"]({colab_url('colab/' + notebook_path.name)})" in first.source, (
        "the Colab badge must point to this notebook's Colab copy (run `make badges`)"
    )
    assert "colab-badge.svg" in first.source
    assert re.search(r"\*\*Time to run:\*\* about \d+ s", first.source), (
        "state the time to run"
    )
    assert "**Prerequisites:**" in first.source
    assert len(first.source.split()) > 80, (
        "the first cell needs a one-paragraph overview"
    )


def test_setup_cell_is_the_shared_setup(notebook_path):
    """The first code cell is the setup, the same in every chapter: a copy of notebooks/shared/setup.py
    (tests/test_shared.py checks that the copy has not drifted)."""
    setup = code_cells(read_notebook(notebook_path))[0]
    assert "shared:setup" in tags(setup), (
        "the first code cell is the setup: tag it shared:setup and run make sync"
    )
    needed = next(
        ast.literal_eval(node.value)
        for node in ast.parse((SHARED / "setup.py").read_text()).body
        if isinstance(node, ast.Assign) and node.targets[0].id == "NEEDED"
    )
    imported = {
        (alias.name if isinstance(node, ast.Import) else node.module).split(".")[0]
        for cell in code_cells(read_notebook(notebook_path))
        for node in ast.walk(parsed(cell))
        if isinstance(node, (ast.Import, ast.ImportFrom))
        and not getattr(node, "level", 0)
        for alias in node.names
    }
    # what comes with those packages (cycler, PIL: matplotlib's dependencies) or with the kernel itself
    come_with = {"cycler", "PIL", "IPython", "matplotlib_inline"}
    lacking = imported - set(sys.stdlib_module_names) - set(needed) - come_with
    assert not lacking, (
        f"the setup does not install what the chapter imports: {lacking}"
    )


def test_setup_installs_only_what_is_missing():
    setup = (SHARED / "setup.py").read_text()
    assert "find_spec" in setup, (
        "the setup must check for each package before installing it"
    )
    pip_lines = [
        i
        for i, line in enumerate(setup.splitlines())
        if "pip" in line and "install" in line
    ]
    spec_line = next(
        i for i, line in enumerate(setup.splitlines()) if "find_spec" in line
    )
    assert pip_lines and all(i > spec_line for i in pip_lines), (
        "install only after checking what is missing"
    )
    assert not re.search(r"^\s*[!%]pip", setup, re.M), "no unconditional !pip / %pip"
    assert "torch.set_num_threads(1)" in setup


def test_parameters_cell_defines_seed_and_full(notebook_path):
    cells = [c for c in read_notebook(notebook_path).cells if "parameters" in tags(c)]
    assert len(cells) == 1, "exactly one cell is tagged `parameters`"
    assigned = {
        t.id
        for node in ast.parse(cells[0].source).body
        if isinstance(node, ast.Assign)
        for t in node.targets
    }
    assert {"SEED", "FULL"} <= assigned


def test_randomness_is_seeded_from_parameters(notebook_path):
    """No seed is a bare literal: every manual_seed/Generator/default_rng takes an expression of SEED (or a variable)."""
    for cell in code_cells(read_notebook(notebook_path)):
        if "parameters" in tags(cell):
            continue
        source = "\n".join(
            line
            for line in cell.source.splitlines()
            if not line.lstrip().startswith(("%", "!"))
        )
        for node in ast.walk(ast.parse(source)):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", getattr(node.func, "id", None))
                in SEEDING_CALLS
            ):
                for arg in node.args:
                    assert not isinstance(arg, ast.Constant), (
                        f"seed from SEED, not a literal: {ast.unparse(node)}"
                    )
    assert "manual_seed(SEED" in "".join(
        c.source for c in code_cells(read_notebook(notebook_path))
    )


def test_committed_with_outputs_and_no_errors(notebook_path):
    cells = code_cells(read_notebook(notebook_path))
    assert all(c.execution_count is not None for c in cells), (
        "commit the notebook executed (make execute NB=...)"
    )
    errors = [o for c in cells for o in c.outputs if o.output_type == "error"]
    assert not errors, f"committed error output: {errors[0].ename if errors else ''}"
    streams = " ".join(
        o.get("text", "") for c in cells for o in c.outputs if o.output_type == "stream"
    )
    assert "Traceback" not in streams


# an absolute path on the machine that ran the notebook: /home/..., /tmp/..., C:\\...
LOCAL_PATH = re.compile(
    r"(?<![\w.:/])/(home|root|tmp|work|Users|usr|opt|var|private)/|\b[A-Z]:\\\\"
)
COPIES = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")) + sorted(
    (ROOT / "notebooks").glob("*/[0-9][0-9]_*.ipynb")
)


def output_problems(nb) -> list:
    """Each output a reader should not see: a warning on stderr, an absolute path of the machine that ran it."""
    problems = []
    for i, cell in enumerate(code_cells(nb)):
        for output in cell.get("outputs", []):
            texts = [output.get("text", "")] + [
                v if isinstance(v, str) else str(v)
                for k, v in output.get("data", {}).items()
                if k.startswith("text/")
            ]
            text = "\n".join(texts)
            if output.get("name") == "stderr" and "Warning" in text:
                problems.append(
                    f"code cell {i}: a warning on stderr: {text.strip()[:120]}"
                )
            if LOCAL_PATH.search(text):
                problems.append(
                    f"code cell {i}: an absolute local path: {text.strip()[:120]}"
                )
    return problems


@pytest.mark.parametrize(
    "path", COPIES, ids=[str(p.relative_to(ROOT / "notebooks")) for p in COPIES]
)
def test_no_output_holds_a_warning_or_a_local_path(path):
    problems = output_problems(read_notebook(path))
    assert not problems, (
        f"{path.relative_to(ROOT)}: fix the cause, then re-execute:\n  "
        + "\n  ".join(problems)
    )


def test_the_output_check_can_fail():
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x")]
    nb.cells[0].outputs = [
        nbformat.v4.new_output(
            "stream", name="stderr", text="/home/ann/x.py:3: RuntimeWarning: overflow"
        ),
        nbformat.v4.new_output(
            "execute_result", data={"text/plain": "'C:\\\\Users\\\\ann'"}
        ),
    ]
    problems = output_problems(nb)
    assert len(problems) == 3, problems


def test_code_lines_fit_the_code_box(notebook_path):
    """The site shows `line-length` characters of code per line (book/_static/custom.css); a longer line hides
    its end behind a sideways scroll. `ruff format` wraps code; comments and strings are wrapped by hand."""
    limit = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"][
        "line-length"
    ]
    long = [
        line
        for cell in code_cells(read_notebook(notebook_path))
        for line in cell.source.splitlines()
        if len(line) > limit
    ]
    assert not long, (
        f"{len(long)} code lines longer than {limit} characters, the first: {long[0]!r}"
    )


def test_scaffolding_is_collapsed_on_the_site(notebook_path):
    """The code a chapter teaches stays in view; its scaffolding is one click away (`hide-input`, with a prompt
    that says what it hides): the setup cell, the self_check helper, FULL-mode code (the sections whose heading
    names FULL mode, and cells that start `if FULL:`), and cells that only draw (they call plt, fig, ax or axes
    and neither assert nor print)."""
    nb = read_notebook(notebook_path)
    first_code = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    section, shown = "", []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            section = next(
                (h for h in reversed(cell.source.splitlines()) if h.startswith("## ")),
                section,
            )
            continue
        if {"solution", "remove-cell", "parameters"} & set(tags(cell)):
            continue
        scaffolding = (
            i == first_code
            or "shared:self_check" in tags(cell)
            or "FULL mode" in section
            or cell.source.startswith("if FULL:")
            or (
                re.search(r"\b(plt|ax|axes|fig)\.", cell.source)
                and not re.search(r"^\s*assert\b|\bprint\(", cell.source, re.M)
            )
        )
        if scaffolding:
            prompt = cell.metadata.get("mystnb", {}).get("code_prompt_show", "")
            if "hide-input" not in tags(cell) or not re.fullmatch(
                r"Show [\w -]+ code", prompt
            ):
                shown.append(f"cell {i}: {cell.source.splitlines()[0][:60]}")
    assert not shown, (
        f"tag these hide-input, with a code_prompt_show such as 'Show plotting code': {shown}"
    )


def parsed(cell) -> ast.Module:
    """A code cell's syntax tree, its IPython magics and shell lines left out."""
    return ast.parse(
        "\n".join(
            line
            for line in cell.source.splitlines()
            if not line.lstrip().startswith(("%", "!"))
        )
    )


def test_figures_take_their_style_from_the_shared_cell(notebook_path):
    """Width, resolution, font sizes and colours come from the cell tagged shared:style (notebooks/shared/style.py),
    and nowhere else: every figure is FIG_WIDTH wide (panels stack rather than shrink), no call sets a font size of
    its own, a dpi or a layout engine, and no cell but that one changes rcParams."""
    found = []
    for cell in code_cells(read_notebook(notebook_path)):
        if any(t.startswith("shared:") for t in tags(cell)):  # tested in test_shared.py
            continue
        for node in ast.walk(parsed(cell)):
            if isinstance(node, ast.keyword) and node.arg == "figsize":
                width = (
                    node.value.elts[0] if isinstance(node.value, ast.Tuple) else None
                )
                if not (isinstance(width, ast.Name) and width.id == "FIG_WIDTH"):
                    found.append(f"figsize={ast.unparse(node.value)} (use FIG_WIDTH)")
            elif isinstance(node, ast.keyword) and node.arg in {
                "fontsize",
                "size",
                "dpi",
                "layout",
            }:
                if node.arg != "size" or isinstance(node.value, ast.Constant):
                    found.append(
                        f"{node.arg}={ast.unparse(node.value)} (the style sets it)"
                    )
            elif isinstance(node, ast.Attribute) and node.attr in {
                "rcParams",
                "tight_layout",
                "style",
            }:
                found.append(f"{ast.unparse(node)} (the style sets it)")
    assert not found, f"{notebook_path.name}: {found}"


def png_outputs(nb) -> list:
    """(cell index, PNG bytes, the width the notebook shows it at) of every PNG output."""
    return [
        (
            i,
            base64.b64decode(output["data"]["image/png"]),
            output.get("metadata", {}).get("image/png", {}).get("width"),
        )
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code"
        for output in cell.outputs
        if "image/png" in output.get("data", {})
    ]


def test_figures_are_sharp_legible_and_within_their_byte_budget(notebook_path):
    """Every PNG is drawn at RETINA times the size it is shown at, and is narrow enough that the site's column
    shows its smallest text at MIN_TEXT_PX or more (tests/test_browser.py measures the same on the page); a
    chapter's PNGs together stay under FIGURE_BYTES."""
    pngs = png_outputs(read_notebook(notebook_path))
    for i, png, shown in pngs:
        width = int.from_bytes(png[16:20], "big")  # the IHDR chunk
        assert shown and abs(width - RETINA * shown) <= RETINA, (
            f"cell {i}: a {width} px PNG shown at {shown} px is not a retina figure (run the shared:style cell)"
        )
        text = smallest_text_px(min(shown, COLUMN_PX), width)
        assert text >= MIN_TEXT_PX, (
            f"cell {i}: a figure {shown} px wide shows its smallest text at {text:.1f} px in the "
            f"{COLUMN_PX} px column; draw it FIG_WIDTH wide, and keep legends and labels inside"
        )
    total = sum(len(png) for _, png, _ in pngs)
    assert total <= FIGURE_BYTES, (
        f"{notebook_path.name}: its figures weigh {total:,} bytes, over the budget of {FIGURE_BYTES:,}"
    )


def test_nbval_markers_are_tags_not_comments(notebook_path):
    """A cell nbval compares carries the tag `nbval-check-output`; a `# NBVAL_...` comment would be shown to every
    reader, on the site, in Colab and in the student versions (and after code nbval ignores it silently)."""
    nb = read_notebook(notebook_path)
    comments = [
        i
        for i, cell in enumerate(code_cells(nb))
        if any("NBVAL_" in line for line in cell.source.splitlines())
    ]
    assert not comments, (
        f"code cells {comments} carry an NBVAL_ comment: tag them instead"
    )
    assert any("nbval-check-output" in tags(cell) for cell in code_cells(nb)) or (
        notebook_path.stem in UNCHECKED_OUTPUTS
    ), "no cell's output is compared: tag a rounded summary line nbval-check-output"


# Chapters that compare no printed output under nbval: every claim of theirs is checked by an assert.
UNCHECKED_OUTPUTS = {
    "03_gradient_flow",
    "05_pre_vs_post_norm",
    "07_loss_landscape",
    "11_residual_stream",
}


def shown_figures(nb) -> list:
    """The code cells whose image the site shows."""
    return [
        cell
        for cell in code_cells(nb)
        if any("image/png" in o.get("data", {}) for o in cell.outputs)
        and not {"remove-output", "remove-cell"} & set(tags(cell))
    ]


def test_every_figure_has_alt_text(notebook_path):
    for cell in shown_figures(read_notebook(notebook_path)):
        alt = cell.metadata.get("mystnb", {}).get("image", {}).get("alt", "")
        assert len(alt) > 20, f"figure without alt text in cell: {cell.source[:80]!r}"


def test_every_figure_is_numbered_captioned_and_cited_in_the_text(notebook_path):
    """A figure carries `mystnb.figure` metadata: a name, fig-NN-..., for {numref}, and a caption of a sentence
    or more. The book numbers a chapter's figures 1, 2, ... (book/_ext/figure_numbers.py), and the text refers
    to each by number. One image per captioned cell, so that the name stays unique."""
    nb = read_notebook(notebook_path)
    chapter = notebook_path.name[:2]
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for cell in shown_figures(nb):
        figure = cell.metadata.get("mystnb", {}).get("figure", {})
        name, caption = figure.get("name", ""), figure.get("caption", "")
        where = f"figure in cell {cell.source[:60]!r}"
        assert re.fullmatch(rf"fig-{chapter}-[a-z0-9-]+", name), (
            f"{where}: name it fig-{chapter}-<what it shows> in mystnb.figure.name"
        )
        assert len(caption) > 20 and caption.rstrip().endswith("."), (
            f"{where}: a caption of a sentence or more in mystnb.figure.caption"
        )
        images = sum("image/png" in o.get("data", {}) for o in cell.outputs)
        assert images == 1, f"{where}: {images} images under one caption"
        assert re.search(rf"\{{numref\}}`(?:[^`<]*<)?{name}>?`", text), (
            f"{where}: the text never refers to {name} ({{numref}}`{name}`)"
        )
    names = re.findall(r"\{numref\}`(?:[^`<]*<)?([^`>]+)>?`", text)
    shown = {
        c.metadata["mystnb"]["figure"]["name"]
        for c in shown_figures(nb)
        if "figure" in c.metadata.get("mystnb", {})
    }
    assert set(names) <= shown, (
        f"{{numref}} to a figure not in this chapter: {set(names) - shown}"
    )


def test_exercises_have_marked_solutions_and_self_checks(notebook_path):
    cells = read_notebook(notebook_path).cells
    solutions = [i for i, c in enumerate(cells) if "### BEGIN SOLUTION" in c.source]
    assert len(solutions) >= 3, "at least three exercises"
    for i in solutions:
        cell = cells[i]
        assert cell.source.count("### BEGIN SOLUTION") == cell.source.count(
            "### END SOLUTION"
        )
        assert {"solution", "hide-input"} <= set(tags(cell)), (
            "solution cells are tagged `solution` and `hide-input`"
        )
        prompts = cell.metadata.get("mystnb", {})
        assert (
            prompts.get("code_prompt_show") == "Show solution"
            and prompts.get("code_prompt_hide") == "Hide solution"
        )
        assert i + 1 < len(cells) and "self-check" in tags(cells[i + 1]), (
            "a self-check cell follows each solution"
        )


def test_citations_and_terms_exist(notebook_path):
    text = "\n".join(
        c.source
        for c in read_notebook(notebook_path).cells
        if c.cell_type == "markdown"
    )
    bib = (ROOT / "book" / "references.bib").read_text()
    keys = {
        k.strip()
        for group in re.findall(r"\{cite(?::\w+)?\}`([^`]+)`", text)
        for k in group.split(",")
    }
    assert keys, "cite the primary papers"
    for key in keys:
        assert re.search(r"@\w+\{" + re.escape(key) + ",", bib), (
            f"{key} is not in book/references.bib"
        )
    glossary = (ROOT / "book" / "glossary.md").read_text()
    # {term}`residual stream` and {term}`streams <residual stream>` both name an entry
    terms = re.findall(
        r"\{term\}`(?:[^`<]*<(?P<target>[^>`]+)>|(?P<plain>[^`<]+))`", text
    )
    assert terms or "{term}" not in text
    for target, plain in terms:
        term = (target or plain).strip()
        assert re.search(rf"^{re.escape(term)}$", glossary, re.M), (
            f"{term!r} is not in the glossary"
        )


def test_toc_lists_exactly_the_chapters():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [ch["file"] for part in toc["parts"] for ch in part["chapters"]]
    for f in files:
        assert any((ROOT / f).with_suffix(s).exists() for s in (".md", ".ipynb")), (
            f"{f} in _toc.yml does not exist"
        )
    assert sorted(f for f in files if f.startswith("notebooks/")) == [
        f"notebooks/{p.stem}" for p in NOTEBOOKS
    ]


def test_glossary_terms_in_the_prose_link_to_the_glossary(notebook_path):
    """A glossary term the chapter's prose uses is linked with {term} at least once (the closing **Next:**
    cell, which names the next chapter, does not count)."""
    glossary = (ROOT / "book" / "glossary.md").read_text().split("```{glossary}")[1]
    terms = re.findall(r"^([a-z][a-z -]+)$", glossary, re.M)
    cells = [c for c in read_notebook(notebook_path).cells if c.cell_type == "markdown"]
    prose = "\n".join(c.source for c in cells if not c.source.startswith("**Next:**"))
    linked = {
        t.lower() for t in re.findall(r"\{term\}`(?:[^`<]*<)?([^`<>]+)>?`", prose)
    }
    unlinked = re.sub(r"\{term\}`[^`]*`", "", prose).lower()
    missing = [
        t
        for t in terms
        if re.search(rf"\b{re.escape(t)}s?\b", unlinked) and t not in linked
    ]
    assert terms and not missing, f"link the first use of {missing} with {{term}}`...`"


def test_chapter_ends_with_a_next_link(notebook_path):
    """The last cell sends the reader on: to the next chapter (on the site and in Colab), after the last to the
    reproducibility page."""
    last = read_notebook(notebook_path).cells[-1]
    assert last.cell_type == "markdown" and last.source.startswith("**Next:**"), (
        "end the chapter with a **Next:** cell"
    )
    following = NOTEBOOKS[NOTEBOOKS.index(notebook_path) + 1 :]
    if following:
        assert f"]({following[0].name})" in last.source, (
            f"link the next chapter, {following[0].name}"
        )
        assert f"]({colab_url('colab/' + following[0].name)})" in last.source, (
            "and its Colab link (`make badges`)"
        )
    else:
        assert "](../book/reproducibility.md)" in last.source, (
            "after the last chapter, link the reproducibility page"
        )


def test_live_controls_stay_off_the_site_behind_a_kernel_free_figure(notebook_path):
    """The site has no kernel, so a live ipywidgets control there would do nothing. Each one is a cell tagged
    remove-cell (Colab and Jupyter run it; colab-check builds it under ipywidgets 7.7), built with interact_manual on
    every run, right after the figure the site shows instead: a slider over frames computed as the notebook runs
    (`slider_figure`, notebooks/shared/slider.py). A hidden cell after it calls its function at an extreme setting
    when a machine runs the notebook. No text asks the reader to press Run Interact."""
    nb = read_notebook(notebook_path)
    cells = nb.cells
    code = [c for c in cells if c.cell_type == "code"]
    for i, cell in enumerate(cells):
        if cell.cell_type == "markdown":
            assert "Run Interact" not in cell.source, (
                "the site has no Run Interact button: point to the slider figure"
            )
        if cell.cell_type == "code" and re.search(r"\binteract\w*\(", cell.source):
            call = re.search(r"\binteract_manual\(\s*(\w+),", cell.source)
            assert call, "build the widget with interact_manual(function, ...)"
            assert not re.search(r"^\s*if (not )?HEADLESS:", cell.source, re.M), (
                "build the widget on every run"
            )
            assert "remove-cell" in tags(cell), (
                "a live control does nothing on the site: tag its cell remove-cell"
            )
            before = code[code.index(cell) - 1]
            assert "slider_figure(" in before.source and "remove-cell" not in tags(
                before
            ), (
                "put the kernel-free slider_figure(...) the site shows right before the live control"
            )
            check = cells[i + 1] if i + 1 < len(cells) else None
            assert (
                check is not None
                and check.cell_type == "code"
                and "remove-cell" in tags(check)
            ), (
                "follow the widget with a cell tagged remove-cell that tries an extreme setting"
            )
            assert (
                check.source.startswith("if HEADLESS:")
                and f"{call.group(1)}(" in check.source
            ), (
                f"the cell after the widget should call {call.group(1)}(...) at an extreme setting `if HEADLESS:`"
            )
    setup = code_cells(nb)[0].source
    assert 'HEADLESS = os.environ.get("RC_HEADLESS") == "1"' in setup


def test_exercises_open_the_student_version_in_colab(notebook_path):
    """Under the Exercises heading, a badge opens the student version: every other way in has the solutions."""
    heading = [
        c.source
        for c in read_notebook(notebook_path).cells
        if "## Exercises" in c.source
    ]
    assert heading, "an Exercises section"
    assert "[![Do the exercises in Colab]" in heading[0], (
        "a badge whose alt text says what it does"
    )
    assert f"]({colab_url('student/' + notebook_path.name)})" in heading[0], (
        "it opens the student version"
    )


def test_the_erratum_form_asks_for_the_page_the_sentence_and_the_evidence():
    """Each page's "Report an error on this page" opens this form (book/_ext/errata.py fills in `page`)."""
    form = yaml.safe_load(
        (ROOT / ".github" / "ISSUE_TEMPLATE" / "erratum.yml").read_text()
    )
    fields = {f["id"]: f for f in form["body"]}
    assert {"page", "sentence", "evidence"} <= set(fields)
    assert all(fields[f]["validations"]["required"] for f in fields)
    assert "erratum" in form["labels"]


def test_the_citation_names_the_book_where_the_config_does():
    """CITATION.cff repeats the two addresses of _config.yml; they must agree."""
    from booktools.settings import load_config

    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    config = load_config()
    assert citation["repository-code"] == config["repository"]["url"]
    assert citation["url"] == config["html"]["baseurl"]
    assert citation["cff-version"] == "1.2.0" and citation["authors"]
    assert (ROOT / "LICENSE").exists()


def test_slider_figures_stay_within_their_byte_budget(notebook_path):
    """What an interactive figure adds to the notebook (its HTML with every frame, and the PNG of the first) stays
    under SLIDER_BYTES, set in notebooks/shared/slider.py."""
    budget = int(
        re.search(
            r"^SLIDER_BYTES = ([\d_]+)", (SHARED / "slider.py").read_text(), re.M
        )[1]
    )
    for cell in code_cells(read_notebook(notebook_path)):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if 'class="rc-slider"' in data.get("text/html", ""):
                size = len(data["text/html"].encode()) + len(data.get("image/png", ""))
                assert size <= budget, (
                    f"a slider figure of {size:,} bytes, over {budget:,}: {cell.source[:80]!r}"
                )


# The top level the design card fixes, what tools expect there, and the one package of tooling (README, "Layout").
TOP_LEVEL = {
    *("book", "notebooks", "_config.yml", "_toc.yml", "requirements.txt", "tests"),
    *("README.md", "Makefile", ".ci", "pyproject.toml", ".github", ".gitignore"),
    *("LICENSE", "CITATION.cff", "booktools"),
}


def tracked(*paths) -> list:
    import subprocess

    out = subprocess.run(
        ["git", "ls-files", *paths], cwd=ROOT, capture_output=True, text=True
    )
    return out.stdout.split()


def test_the_top_level_is_the_design_cards():
    extra = {path.split("/")[0] for path in tracked()} - TOP_LEVEL
    assert not extra, (
        f"new at the top level: {sorted(extra)}; put it under one of {sorted(TOP_LEVEL)}"
    )


def test_tests_hold_tests_their_fixtures_and_the_pins_they_read():
    """Tooling lives in booktools/; tests/ holds pytest files, the marks, earlier editions and pins they read."""
    allowed = re.compile(
        r"tests/(test_\w+\.py|conftest\.py|marks/\w+\.json|editions/\w+\.ipynb|\w+-requirements\.txt"
        r"|nbval_sanitize\.cfg"
        r"|browser/(requirements\.txt|package(-lock)?\.json))$"
    )
    others = [path for path in tracked("tests") if not allowed.match(path)]
    assert not others, f"not a test, fixture or pin, in tests/: {others}"


def test_nothing_edits_the_import_path():
    """booktools is found from the top level, where every make target runs: no module edits sys.path."""
    edits = [
        path
        for path in tracked("*.py")
        if (ROOT / path).exists()
        and re.search(r"sys\.path\.(insert|append)", (ROOT / path).read_text())
    ]
    assert not edits, f"these edit sys.path: {edits}"


# A self-check tests behaviour: known values, properties, the chapter's own helpers. It must not contain the
# reference solution (a student reads the check cell), nor any piece of it of this many syntax-tree nodes or more
# (Load and Store not counted): `return x` has 2, `run["train"][-1]` 7, `x.pow(2).mean().sqrt()` 8.
SOLUTION_LEAK_NODES = 8
SOLUTION_REGION = re.compile(
    r"^[ \t]*### BEGIN SOLUTION[^\n]*\n(.*?)^[ \t]*### END SOLUTION", re.M | re.S
)


def top_level_names(nb) -> set:
    """Every name a notebook binds at its top level (in any code cell), and the builtins: the names a solution
    and its self-check share. Any other name is local, and is compared by where it first appears, not by its
    spelling."""
    import builtins

    names = set(dir(builtins))
    scopes = (
        ast.FunctionDef,
        ast.AsyncFunctionDef,
        ast.ClassDef,
        ast.Lambda,
        ast.comprehension,
    )

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(child.name)
            elif isinstance(child, ast.alias):
                names.add((child.asname or child.name).split(".")[0])
            elif isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                names.add(child.id)
            if not isinstance(child, scopes):
                visit(child)

    for cell in code_cells(nb):
        try:
            visit(ast.parse(cell.source))
        except SyntaxError:
            pass
    return names


def tree_size(node) -> int:
    return sum(1 for n in ast.walk(node) if not isinstance(n, ast.expr_context))


def tree_shape(node, shared: set) -> str:
    """`node` as ast.dump writes it, without positions and without Load/Store, its local names numbered in the
    order they first appear in it: `gap = r["test"][-1]` and `g = run["test"][-1]` have one shape."""
    import copy

    local = {}

    def rename(name):
        return name if name in shared else local.setdefault(name, f"_{len(local)}")

    class Canonical(ast.NodeTransformer):
        def visit_Name(self, n):
            return ast.Name(id=rename(n.id), ctx=ast.Load())

        def visit_arg(self, n):
            return ast.arg(arg=rename(n.arg))

    dumped = ast.dump(Canonical().visit(copy.deepcopy(node)), annotate_fields=False)
    return re.sub(r"\b(Store|Del)\(\)", "Load()", dumped)


def pieces(tree) -> list:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.stmt, ast.expr))]


def solution_leaks(solution_cell, check_cell, shared: set) -> list:
    """The largest pieces of the solution regions of `solution_cell`, of at least SOLUTION_LEAK_NODES nodes, that
    `check_cell` contains (the same shape), as source text."""
    import textwrap

    in_check = {tree_shape(n, shared) for n in pieces(ast.parse(check_cell.source))}
    found = []
    for region in SOLUTION_REGION.findall(solution_cell.source):
        solution = ast.parse(textwrap.dedent(region))
        found += [
            n
            for n in pieces(solution)
            if tree_size(n) >= SOLUTION_LEAK_NODES and tree_shape(n, shared) in in_check
        ]
    inner = {id(m) for n in found for m in ast.walk(n) if m is not n}
    return list(dict.fromkeys(ast.unparse(n) for n in found if id(n) not in inner))


def test_self_checks_do_not_contain_the_solution(notebook_path):
    """A self-check checks behaviour (known values, properties), without spelling out the reference solution
    or any non-trivial piece of it (compared as syntax trees, local names canonicalised)."""
    nb = read_notebook(notebook_path)
    shared = top_level_names(nb)
    cells = nb.cells
    for i, cell in enumerate(cells):
        if "solution" in tags(cell) and "self-check" in tags(cells[i + 1]):
            leaks = solution_leaks(cell, cells[i + 1], shared)
            assert not leaks, (
                f"cell {i + 1}: the self-check contains the solution of the cell above it: "
                f"{leaks}; check known values or properties instead"
            )


MARKDOWN = re.compile(r"`|\*\*|(?<![\w*])\*[^\s*][^*]*\*(?![\w*])|\$[^$\s][^$]*\$")


def message_strings(source: str) -> list:
    """The literal text of every string in `source` (f-strings' literal parts), docstrings and comments aside."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def test_self_check_messages_are_plain_text(notebook_path):
    """What a self-check prints or raises is read in a traceback or a printed line, where markdown stays raw:
    no backticks, no *emphasis*, no $math$."""
    sources = [
        c.source
        for c in code_cells(read_notebook(notebook_path))
        if {"self-check", "shared:self_check"} & set(tags(c))
    ]
    marked = [t for s in sources for t in message_strings(s) if MARKDOWN.search(t)]
    assert not marked, f"markdown in self-check messages: {marked}"
