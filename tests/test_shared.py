"""Code is written once. Code every notebook must carry the same lives in notebooks/shared/*.py, and `make sync`
copies it into the cells tagged `shared:NAME`; a model or task is written in the chapter that teaches it, in a
cell tagged `teaches:NAME`, and `make sync` copies it into the cells tagged `taught:NAME` of the chapters that
build on it. These tests fail when a copy drifts, when one name is defined with two bodies in the book or one
body under two names, and test the shared code itself."""

import ast
import base64
import collections
import functools
import io
import re
from contextlib import redirect_stdout

import nbformat
import pytest
import torch

from booktools.build import sync
from booktools.settings import SHARED
from conftest import NOTEBOOKS, read_notebook

# Okabe and Ito's eight colours, which readers with any common colour-vision deficiency tell apart (Okabe & Ito,
# "Color Universal Design", 2008); the style may add a neutral grey.
OKABE_ITO_SET = {
    *("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7"),
    *("#000000", "#7F7F7F"),
}
# Snippets every chapter must carry; the others (the digits split, the CIFAR-10 loader) only where a chapter needs them.
EVERY_CHAPTER = {"setup", "self_check", "style"}


def test_shared_cells_match_their_source(notebook_path):
    nb = read_notebook(notebook_path)
    assert not sync.drifted(nb), (
        f"{notebook_path.name}: {sync.drifted(nb)} drifted from their source "
        "(notebooks/shared/, or the chapter cell tagged teaches:NAME): run make sync"
    )
    names = [name for _, name in sync.shared_cells(nb)]
    assert EVERY_CHAPTER <= set(names), (
        f"{notebook_path.name} lacks a cell tagged shared:{EVERY_CHAPTER - set(names)}"
    )
    assert len(names) == len(set(names)), (
        f"{notebook_path.name}: a snippet is copied twice"
    )


def test_every_snippet_is_used():
    used = {
        name for path in NOTEBOOKS for _, name in sync.shared_cells(read_notebook(path))
    }
    files = {p.stem for p in SHARED.glob("*.py")}
    assert files == used, (
        f"unused snippets: {files - used}; tagged cells without a file: {used - files}"
    )


def test_sync_rewrites_a_drifted_cell_and_leaves_the_rest(tmp_path):
    cell = nbformat.v4.new_code_cell(
        "def self_check(number, check):\n    pass  # an old copy"
    )
    cell.metadata["tags"] = ["shared:self_check"]
    other = nbformat.v4.new_code_cell("x = 1")
    path = tmp_path / "99_toy.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell, other]), path)
    assert sync.sync(path) == ["self_check"]
    nb = nbformat.read(path, as_version=4)
    assert nb.cells[0].source == (SHARED / "self_check.py").read_text().rstrip("\n")
    assert nb.cells[1].source == "x = 1"
    assert sync.sync(path) == [], "a synced notebook has nothing left to sync"


def test_every_taught_cell_copies_a_teaching_cell_of_an_earlier_chapter():
    taught = sync.teaching_cells()
    copied = collections.defaultdict(list)
    for path in NOTEBOOKS:
        for _, _, name in sync.tagged(read_notebook(path), sync.TAUGHT):
            copied[name].append(path.name)
            assert name in taught, (
                f"{path.name}: taught:{name}, but no chapter teaches:{name}"
            )
            source = taught[name][1]
            assert source.name < path.name, (
                f"{path.name} copies {name} from {source.name}: a chapter builds on "
                "earlier chapters only"
            )
    assert set(taught) == set(copied), (
        f"teaching cells no chapter copies: {set(taught) - set(copied)}"
    )


def toy_chapters(tmp_path, teaching: str, copy: str = "") -> list:
    """A chapter 3 that teaches `Toy` in its section 2, and a chapter 7 that carries a copy."""
    heading = nbformat.v4.new_markdown_cell("## 2. A toy")
    teacher = nbformat.v4.new_code_cell(teaching)
    teacher.metadata["tags"] = ["teaches:toy"]
    learner = nbformat.v4.new_code_cell(copy)
    learner.metadata["tags"] = ["taught:toy"]
    paths = [tmp_path / "03_teach.ipynb", tmp_path / "07_learn.ipynb"]
    cells = [[heading, teacher], [nbformat.v4.new_code_cell("x = 1"), learner]]
    for path, these in zip(paths, cells):
        nbformat.write(nbformat.v4.new_notebook(cells=these), path)
    return paths


def test_sync_copies_a_teaching_cell_says_where_it_was_taught_and_folds_it(tmp_path):
    toy = "class Toy:\n    size = 1"
    paths = toy_chapters(tmp_path, toy, "class Toy:\n    size = 2  # retyped")
    taught = sync.teaching_cells(paths)
    assert sync.drifted(read_notebook(paths[1]), taught) == ["toy"]
    assert sync.sync(paths[1], taught) == ["toy"]
    copy = read_notebook(paths[1]).cells[1]
    assert copy.source == (
        "# Taught in chapter 3, §2; copied by make sync from 03_teach.ipynb\n" + toy
    )
    assert "hide-input" in copy.metadata["tags"]
    assert copy.metadata["mystnb"]["code_prompt_show"] == "Show the chapter 3 code"
    assert read_notebook(paths[1]).cells[0].source == "x = 1"
    assert sync.sync(paths[1], taught) == [], "a synced notebook has nothing left"
    # the copy drifts when its source changes, and when its fold is taken off
    changed = sync.teaching_cells(toy_chapters(tmp_path, toy + "\n    rate = 3"))
    assert sync.drifted(read_notebook(paths[1]), changed) == ["toy"]
    nb = read_notebook(paths[1])
    nb.cells[1].metadata["tags"] = ["taught:toy"]
    assert sync.drifted(nb, taught) == ["toy"]


def test_a_copy_without_a_teaching_cell_stops_sync_with_a_sentence(tmp_path):
    paths = toy_chapters(tmp_path, "class Toy:\n    pass")
    with pytest.raises(SystemExit, match="no chapter has a cell tagged teaches:other"):
        nb = read_notebook(paths[1])
        nb.cells[1].metadata["tags"] = ["taught:other"]
        sync.drifted(nb, sync.teaching_cells(paths))


# One name, one body; one body, one name. The top-level functions and classes of every chapter's code cells,
# compared by their syntax trees (ast.dump, the name and the docstring left out). A copy made by `make sync`
# is the same code under the same name, so it never counts.
# - Names every chapter defines for itself by the book's convention: each exercise's self-check.
CHAPTER_OWN = re.compile(r"check_exercise_\d+")


def definitions(notebooks: list) -> list:
    """[(name, body, where, solution)] for every top-level def and class of the notebooks' code cells."""
    found = []
    for path in notebooks:
        for i, cell in enumerate(read_notebook(path).cells):
            if cell.cell_type != "code":
                continue
            tree = ast.parse(
                "\n".join(
                    line
                    for line in cell.source.splitlines()
                    if not line.lstrip().startswith(("%", "!"))
                )
            )
            for node in tree.body:
                if not isinstance(
                    node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
                ):
                    continue
                name, node.name = node.name, "_"
                if ast.get_docstring(node) is not None:
                    node.body = node.body[1:] or [ast.Pass()]
                found.append(
                    (
                        name,
                        ast.dump(node),
                        f"{path.name[:2]}:{i}",
                        "solution" in cell.metadata.get("tags", []),
                    )
                )
    return found


def clashes(notebooks: list) -> tuple:
    """({name: [where, ...]} for a name defined with two bodies, [[name, ...]] for a body defined under two
    names). An exercise's solution may restate a function of its chapter under its own name (the exercise
    asks for it), so solutions count for the first only."""
    bodies, names, places = (
        collections.defaultdict(set),
        collections.defaultdict(set),
        collections.defaultdict(list),
    )
    for name, body, where, solution in definitions(notebooks):
        if CHAPTER_OWN.fullmatch(name):
            continue
        bodies[name].add(body)
        places[name].append(where)
        if not solution:
            names[body].add(name)
    two_bodies = {name: places[name] for name, b in bodies.items() if len(b) > 1}
    two_names = [sorted(n) for n in names.values() if len(n) > 1]
    return two_bodies, two_names


def test_one_name_means_one_body_and_one_body_has_one_name():
    two_bodies, two_names = clashes(NOTEBOOKS)
    assert not two_bodies, (
        "one name, two bodies (chapter:cell): rename one, or copy the first with "
        f"teaches:NAME / taught:NAME: {two_bodies}"
    )
    assert not two_names, (
        f"one body under two names: {two_names}; copy it (teaches:NAME / taught:NAME)"
    )


def test_the_name_and_body_check_fires_on_a_toy_pair(tmp_path):
    first = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                "def rms(t):\n    return t.pow(2).mean().sqrt().item()\n\n\n"
                "def scale(x):\n    return 2 * x"
            )
        ]
    )
    second = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                'def rms(t):\n    """Per sample."""\n    return t.pow(2).flatten(1).mean(1).sqrt()'
            ),
            nbformat.v4.new_code_cell(
                'def double(y):\n    """Twice."""\n    return 2 * y'
            ),
            nbformat.v4.new_code_cell("def check_exercise_1():\n    assert True"),
        ]
    )
    third = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("def check_exercise_1():\n    assert False")]
    )
    paths = [tmp_path / f"0{n}_toy.ipynb" for n in (1, 2, 3)]
    for nb, path in zip([first, second, third], paths):
        nbformat.write(nb, path)
    two_bodies, two_names = clashes(paths)
    assert two_bodies == {"rms": ["01:0", "02:0"]}
    # the names of arguments are part of a body: `double(y)` is not `scale(x)`
    assert two_names == []
    second.cells[1].source = "def double(x):\n    return 2 * x"
    nbformat.write(second, paths[1])
    assert clashes(paths)[1] == [["double", "scale"]]
    second.cells[0].source = "def rms(t):\n    return t.pow(2).mean().sqrt().item()"
    nbformat.write(second, paths[1])
    assert clashes(paths)[0] == {}, "the same body, docstring or not, is no clash"


@pytest.fixture
def self_check():
    namespace = {}
    exec((SHARED / "self_check.py").read_text(), namespace)
    return namespace["self_check"]


def run(self_check, check):
    out = io.StringIO()
    with redirect_stdout(out):
        self_check(3, check)
    return out.getvalue().strip()


def test_self_check_says_correct(self_check):
    assert run(self_check, lambda: None) == "Exercise 3: correct."


def test_self_check_turns_a_stub_into_a_sentence(self_check):
    def stub():
        raise NotImplementedError(
            "Exercise 3 (x): replace this line with your solution."
        )

    assert run(self_check, stub).startswith("Exercise 3: not done yet.")


def test_self_check_says_what_is_wrong(self_check):
    def wrong():
        # what a failed assert in a check raises
        raise AssertionError("the norm should be 1")

    with pytest.raises(
        AssertionError, match=r"^Exercise 3: not yet right: the norm should be 1$"
    ):
        run(self_check, wrong)


def test_self_check_reports_a_crash_in_one_sentence(self_check):
    def crash():
        raise RuntimeError("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)")

    with pytest.raises(
        AssertionError, match=r"^Exercise 3: your code raised RuntimeError: mat1"
    ):
        run(self_check, crash)


@pytest.fixture(scope="module")
def load_digits_split():
    namespace = {}
    exec((SHARED / "digits.py").read_text(), namespace)
    return namespace["load_digits_split"]


def test_digits_split_is_stratified_scaled_and_drawn_by_the_seed(load_digits_split):
    x_train, y_train, x_test, y_test = load_digits_split(0)
    assert x_train.shape == (1400, 64) and x_test.shape == (397, 64)
    assert x_train.dtype == torch.float32 and y_train.dtype == torch.int64
    # every class in both parts, in proportion (each class is 9.9-10.2 % of the digits)
    for y, n in ((y_train, 1400), (y_test, 397)):
        counts = torch.bincount(y, minlength=10)
        assert (counts - n / 10).abs().max() <= 0.03 * n, counts
    # pixels 0..16 mapped to [-1, 1], the same map everywhere: blank is -1, full ink is 1
    for x in (x_train, x_test):
        assert x.min() == -1 and x.max() == 1
        assert torch.equal((x + 1) * 8, ((x + 1) * 8).round())
    again, other = load_digits_split(0), load_digits_split(1)
    assert torch.equal(again[0], x_train) and torch.equal(again[3], y_test)
    assert not torch.equal(other[0], x_train), "another seed draws another split"


def test_digits_split_keeps_test_images_out_of_training(load_digits_split):
    x_train, _, x_test, _ = load_digits_split(3)
    train_rows = {tuple(row.tolist()) for row in x_train}
    test_rows = [tuple(row.tolist()) for row in x_test]
    # no two of the 1,797 images are the same, so no test image may appear in training
    assert not any(row in train_rows for row in test_rows)


def test_the_style_sets_width_fonts_palette_and_retina_pngs():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    namespace = {}
    with matplotlib.rc_context():
        exec((SHARED / "style.py").read_text(), namespace)
        families, rest = namespace["COLORS"], namespace["OKABE_ITO"]
        colours = [*families.values(), *rest.values()]
        assert len(set(colours)) == len(colours), "every colour once"
        assert set(colours) <= OKABE_ITO_SET, "colour-blind safe"
        cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        assert cycle[: len(families)] == list(families.values()), (
            "a chapter that draws the families in order gets their colours"
        )
        fig = plt.figure()
        assert tuple(fig.get_size_inches())[0] == namespace["FIG_WIDTH"]
        assert fig.dpi == namespace["FIG_DPI"]
        plt.close(fig)
        sizes = [
            matplotlib.font_manager.FontProperties(
                size=plt.rcParams[key]
            ).get_size_in_points()
            for key in (
                "font.size",
                "axes.titlesize",
                "axes.labelsize",
                "xtick.labelsize",
                "ytick.labelsize",
                "legend.fontsize",
            )
        ]
        assert min(sizes) == namespace["SMALLEST_FONT"], sizes


@pytest.fixture
def slider():
    """The slider snippet after the style cell, as in a notebook; display() records what it would show."""
    import matplotlib

    matplotlib.use("Agg")
    namespace, shown = {}, []
    with matplotlib.rc_context():
        exec((SHARED / "style.py").read_text(), namespace)
        exec((SHARED / "slider.py").read_text(), namespace)
        namespace["display"] = lambda data, raw, metadata: shown.append(
            (data, metadata)
        )
        yield namespace, shown


def line_figure(namespace, slope):
    fig, ax = namespace["plt"].subplots(figsize=(namespace["FIG_WIDTH"], 2.5))
    ax.plot([0, 1], [0, slope])
    ax.set_title(f"slope {slope}")
    return fig


def test_a_slider_figure_is_self_contained_deterministic_and_has_a_static_frame(slider):
    """One output: HTML with every frame inline and a script that builds the control (so that where scripts do not
    run, no dead control shows), the first frame as a retina PNG for what cannot show HTML; the same bytes twice."""
    namespace, shown = slider
    draw = functools.partial(line_figure, namespace)
    for _ in range(2):
        result = namespace["slider_figure"](
            draw, [1, 2, 3], "slope", lambda s: f"a line of slope {s}", start=2
        )
    (first, meta), (second, _) = shown
    assert first == second, "the same frames must give the same bytes"
    page = first["text/html"]
    assert page.count("data:image/png;base64,") == 4, (
        "three frames, and the one shown first"
    )
    assert "<input" not in page.split("<script>")[0], (
        "the control is made by the script"
    )
    assert not re.search(r"src=\"(https?:)?//", page) and "require" not in page
    assert 'alt="slope = 2: a line of slope 2"' in page
    png = base64.b64decode(first["image/png"])
    assert int.from_bytes(png[16:20], "big") == 2 * meta["image/png"]["width"]
    assert result["texts"][1] == "slope = 2: a line of slope 2"
    assert result["bytes"] <= namespace["SLIDER_BYTES"]


def test_a_slider_figure_over_budget_says_what_to_do(slider):
    namespace, _ = slider
    namespace["SLIDER_BYTES"] = 1000
    with pytest.raises(ValueError, match="show fewer values"):
        namespace["slider_figure"](
            functools.partial(line_figure, namespace), [1, 2], "slope", str
        )


def test_colours_are_named_only_in_the_style(notebook_path):
    """A model family has one colour in every chapter: chapters use COLORS[...] and OKABE_ITO[...], never a hex
    code of their own."""
    nb = read_notebook(notebook_path)
    literal = re.compile(r"[\'\"]#[0-9A-Fa-f]{6}[\'\"]")
    found = [
        i
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code"
        and "shared:style" not in cell.metadata.get("tags", [])
        and literal.search(cell.source)
    ]
    assert not found, (
        f"cells {found} name a colour by its hex code: use COLORS or OKABE_ITO"
    )
