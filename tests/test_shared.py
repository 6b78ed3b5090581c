"""Code every notebook must carry the same lives once, in notebooks/shared/*.py, and `make sync` copies it into the
cells tagged `shared:NAME`. These tests fail when a copy drifts, and test the shared code itself."""

import base64
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

# The book's palette, colour for colour (Okabe–Ito): one colour per model family, the same in every chapter.
PALETTE = {
    "plain": "#D55E00",
    "residual": "#0072B2",
    "pre-LN": "#009E73",
    "post-LN": "#E69F00",
}
# Snippets every chapter must carry; the others (the digits split, the CIFAR-10 loader) only where a chapter needs them.
EVERY_CHAPTER = {"self_check", "style"}


def test_shared_cells_match_their_source(notebook_path):
    nb = read_notebook(notebook_path)
    assert not sync.drifted(nb), (
        f"{notebook_path.name}: shared cells drifted from notebooks/shared/: run make sync"
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
        assert namespace["COLORS"] == PALETTE
        assert set(namespace["OKABE_ITO"].values()).isdisjoint(PALETTE.values())
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
