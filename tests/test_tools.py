"""The scripts behind `make badges`, `make execute` and `make bench`."""

import os
import re
import sys

import nbformat
import pytest

from booktools.build.badges import rewrite_badge
from booktools.execute import inject_parameters
from booktools.measure import bench
from conftest import NOTEBOOKS, ROOT, colab_url


def notebook(*sources, tags=None):
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell(sources[0])]
        + [nbformat.v4.new_code_cell(s) for s in sources[1:]]
    )
    if tags:
        nb.cells[1].metadata["tags"] = tags
    return nb


def test_badge_is_rewritten_from_the_config(tmp_path):
    path = tmp_path / "07_example.ipynb"
    nbformat.write(
        notebook(
            "# T\n[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
            "(https://colab.research.google.com/github/someone/old-repo/blob/main/notebooks/x.ipynb)"
        ),
        path,
    )
    assert rewrite_badge(path)
    assert (
        f"]({colab_url('colab/' + path.name)})"
        in nbformat.read(path, as_version=4).cells[0].source
    )
    assert not rewrite_badge(path), "a second run changes nothing"


def test_next_links_are_rewritten_from_the_config(tmp_path):
    path = tmp_path / "07_example.ipynb"
    nb = notebook("# T")
    nb.cells.append(
        nbformat.v4.new_markdown_cell(
            "**Next:** [08](08_x.ipynb) ([open in Colab](https://colab.research.google.com/github/a/b/blob/main/notebooks/08_x.ipynb))"
        )
    )
    nbformat.write(nb, path)
    assert rewrite_badge(path)
    assert (
        f"[open in Colab]({colab_url('colab/08_x.ipynb')})"
        in nbformat.read(path, as_version=4).cells[-1].source
    )


def test_parameters_are_injected_into_the_tagged_cell():
    nb = inject_parameters(
        notebook("# T", "SEED = 0\nFULL = False", "print(SEED)", tags=["parameters"]),
        {"SEED": 3},
    )
    namespace = {}
    exec(nb.cells[1].source, namespace)
    assert namespace["SEED"] == 3 and namespace["FULL"] is False


def test_missing_parameters_cell_is_a_clear_error():
    with pytest.raises(SystemExit, match="tagged 'parameters'"):
        inject_parameters(notebook("# T", "SEED = 0"), {"SEED": 3})


def test_links_in_pages_follow_the_config():
    from booktools.build.badges import rewrite_links

    old = "[x](https://colab.research.google.com/github/someone/old/blob/main/notebooks/student/03_gradient_flow.ipynb)"
    assert rewrite_links(old) == f"[x]({colab_url('student/03_gradient_flow.ipynb')})"


def test_bench_rewrites_the_table(tmp_path, monkeypatch):
    page = tmp_path / "reproducibility.md"
    page.write_text(
        "# R\n\n<!-- bench:start -->\nold table\n<!-- bench:end -->\n\nAfter.\n"
    )
    monkeypatch.setattr(bench, "REPRODUCIBILITY", page)
    bench.write_table(
        "| what | wall s |\n| --- | --- |\n| 01_one.ipynb | 12.4 |", "Measured today."
    )
    assert page.read_text() == (
        "# R\n\n<!-- bench:start -->\nMeasured today.\n\n| what | wall s |\n| --- | --- |\n"
        "| 01_one.ipynb | 12.4 |\n<!-- bench:end -->\n\nAfter.\n"
    )


def test_bench_refuses_a_page_without_markers(tmp_path, monkeypatch):
    page = tmp_path / "reproducibility.md"
    page.write_text("# R\n")
    monkeypatch.setattr(bench, "REPRODUCIBILITY", page)
    with pytest.raises(SystemExit, match="markers"):
        bench.write_table("| t |", "stamp")


def test_bench_says_how_it_is_called(capsys):
    with pytest.raises(SystemExit) as help_exit:
        bench.parse_args(["--help"])
    assert help_exit.value.code == 0 and "--ci" in capsys.readouterr().out
    with pytest.raises(SystemExit) as error_exit:
        bench.parse_args(["notebooks/00_missing.ipynb"])
    assert error_exit.value.code == 2
    assert "no such notebook: notebooks/00_missing.ipynb" in capsys.readouterr().err
    args = bench.parse_args([str(NOTEBOOKS[0]), "--ci"])
    assert args.notebooks == [NOTEBOOKS[0]] and args.ci


def test_times_shown_are_the_benchmarked_ones():
    """Each title cell's time is the last `make bench` run's, rounded to seconds (bench writes both)."""
    table = dict(
        re.findall(
            r"^\| (\d\d_\w+)\.ipynb \| ([\d.]+) \|",
            bench.REPRODUCIBILITY.read_text(),
            re.M,
        )
    )
    assert table.keys() == {p.stem for p in NOTEBOOKS}
    for name, seconds in table.items():
        title = (
            nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
            .cells[0]
            .source
        )
        shown = bench.TITLE_TIME.search(title)
        assert shown, f"{name}: the title cell says '**Time to run:** about N s'"
        assert bench.whole_seconds(float(seconds)) == int(shown[0].split()[-2]), (
            name,
            seconds,
            shown[0],
        )


def test_bench_writes_the_title_time(tmp_path, monkeypatch):
    # the table's 54.5 and the title's 55 agree: half up, from the value the table shows
    assert [bench.whole_seconds(s) for s in (54.44, 54.46, 54.5, 54.54)] == [
        54,
        55,
        55,
        55,
    ]
    path = tmp_path / "07_x.ipynb"
    nbformat.write(
        notebook("# T\n\n**Time to run:** about 30 s on a 2-core CPU."), path
    )
    monkeypatch.setattr(bench, "write_student_versions", lambda notebooks: None)
    bench.write_title_times({"07_x": 12.6}, [path])
    assert (
        "**Time to run:** about 13 s on a 2-core CPU."
        in nbformat.read(path, as_version=4).cells[0].source
    )


def test_seed_sweep_records_each_asserts_slack_and_the_seed_that_fails(
    tmp_path, monkeypatch
):
    from booktools.measure import seeds, sweep_report

    path = tmp_path / "99_toy.ipynb"
    nb = notebook(
        "# Toy",
        "SEED = 0",
        "x = SEED / 1000\nassert x < 1.25, 'x too big'\nassert all(v > 0 for v in [x, 1])\n"
        "def f():\n    assert 0 <= x <= 10\nf()\nassert isinstance(x, float)",
        tags=["parameters"],
    )
    nbformat.write(nb, path)
    monkeypatch.setattr(seeds, "OUT", tmp_path)
    record = seeds.sweep(path, n=2, jobs=2)
    errors = {run["seed"]: run["error"] for run in record["runs"]}
    assert record["seeds"] == [1000, 2000]
    assert errors[1000] is None and "x too big" in errors[2000]
    # x = 1: 1 < 1.25 lands 20 % inside; 1 > 0 lands 100 % inside
    first = record["runs"][0]["slack"]
    assert list(first.values())[:3] == pytest.approx([0.2, 1.0, 0.9])
    assert list(first.values())[3] is None  # isinstance: reached, no slack
    head, rows = sweep_report.summarise(record)
    assert head.startswith("99_toy: 1/2 seeds passed")
    assert rows[0][3] == 1 and rows[1][3] == 0, (
        "the first assert fired once (seed 2000), the second never"
    )
    # the summary committed in book/sweeps/, which the claims-and-controls tables read
    summary = sweep_report.condense(record)
    assert summary["passed"] == 1 and list(summary["errors"]) == ["2000"]
    first = summary["asserts"][0]
    assert (
        first["label"] == "x < 1.25" and first["reached"] == 2 and first["fired"] == 1
    )
    assert first["min"] == pytest.approx(-0.6)  # x = 2 lands 60 % outside 1.25


def test_seed_records_go_stale_when_the_code_changes_but_not_its_comments_docstrings_format_or_cells(
    tmp_path,
):
    from booktools.measure import seeds

    path = tmp_path / "99_toy.ipynb"

    def fingerprint(*cells):
        nbformat.write(notebook("# Toy", *cells), path)
        return seeds.code_hash(path)

    base = fingerprint("x = 1", "%matplotlib inline")
    assert fingerprint("x  =  1   # one", "%matplotlib inline") == base
    assert fingerprint("x = 1\ny = x", "%matplotlib inline") == fingerprint(
        "x = 1", "y = x", "%matplotlib inline"
    )
    assert fingerprint("x = 1\ny = x", "%matplotlib inline") != fingerprint(
        "y = x\nx = 1", "%matplotlib inline"
    )
    assert fingerprint("x = 2", "%matplotlib inline") != base
    documented = fingerprint(
        'def f(x):\n    """Twice x."""\n    return 2 * x', "%matplotlib inline"
    )
    assert (
        fingerprint(
            'def f(x):\n    """Twice x,\n    the double."""\n    return 2 * x',
            "%matplotlib inline",
        )
        == documented
    )
    assert (
        fingerprint(
            'def f(x):\n    """Twice x."""\n    return 3 * x', "%matplotlib inline"
        )
        != documented
    )
    assert fingerprint("x = 1", "%matplotlib widget") != base


def test_book_cache_keeps_what_ran_and_leaves_a_failure_to_the_build(tmp_path):
    from jupyter_cache import get_cache

    from booktools.build import book_cache

    good, bad = tmp_path / "01_good.ipynb", tmp_path / "02_bad.ipynb"
    nbformat.write(notebook("# Good", "x = 2 + 2\nprint(x)"), good)
    nbformat.write(
        notebook("# Bad", "assert 2 + 2 == 5, 'the claim no longer holds'"), bad
    )
    outcome = book_cache.fill(tmp_path / "cache", [good, bad], jobs=2)
    assert (
        outcome["01_good.ipynb"] is None
        and "the claim no longer holds" in outcome["02_bad.ipynb"]
    )
    cache = get_cache(str(tmp_path / "cache"))
    assert book_cache.missing(cache, [good, bad]) == [bad], (
        "the good notebook is cached, the failing one is not"
    )
    _, merged = cache.merge_match_into_notebook(nbformat.read(good, as_version=4))
    assert merged.cells[1].outputs[0]["text"] == "4\n", (
        "the build gets the executed outputs"
    )
    assert book_cache.fill(tmp_path / "cache", [good]) == {}, (
        "a cached notebook is not run again"
    )


def run_nbval_into_cache(tmp_path, *sources) -> tuple:
    """Run a small notebook under nbval with `--book-cache` in a pytest of its own, laid out as `make test` runs: the
    project's tests/conftest.py in tests/, the notebook outside it, two workers."""
    import shutil
    import subprocess

    nb = notebook("# A chapter", *sources)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path, cache = tmp_path / "notebooks" / "09_tiny.ipynb", tmp_path / "cache"
    path.parent.mkdir()
    nbformat.write(nb, path)
    (tmp_path / "tests").mkdir()
    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "tests" / "conftest.py")
    (tmp_path / "tests" / "test_nothing.py").write_text(
        "def test_nothing():\n    pass\n"
    )
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-n",
        "2",
        "--dist",
        "loadscope",
    ]
    run = subprocess.run(
        [
            *command,
            "--rootdir",
            str(tmp_path),
            "tests",
            str(path),
            "--nbval-lax",
            "--book-cache",
            str(cache),
        ],
        cwd=tmp_path,
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT),
        },  # booktools, from a folder outside the book
        capture_output=True,
        text=True,
    )
    return nb, cache, run


def test_a_notebook_that_passes_nbval_is_cached_for_the_book_with_its_outputs_and_widgets(
    tmp_path,
):
    from jupyter_cache import get_cache

    nb, cache, run = run_nbval_into_cache(
        tmp_path,
        "print('measured')",
        "import ipywidgets\nipywidgets.IntSlider(value=3)",
        "x = 1",
        "x + 1;  # the value is hidden, as Jupyter hides it",
        "x + 2",
    )
    assert run.returncode == 0, run.stdout[-2000:]
    # what myst-nb does with a cached notebook
    _, merged = get_cache(str(cache)).merge_match_into_notebook(nb)
    nbformat.validate(merged)
    assert merged.cells[1].outputs[0]["text"] == "measured\n"
    assert merged.cells[4].outputs == [], "a final ; hides the value on the page too"
    assert merged.cells[5].outputs[0]["data"]["text/plain"] == "3"
    view = merged.cells[2].outputs[0]["data"][
        "application/vnd.jupyter.widget-view+json"
    ]["model_id"]
    state = merged.metadata["widgets"]["application/vnd.jupyter.widget-state+json"][
        "state"
    ]
    assert (
        state[view]["model_name"] == "IntSliderModel"
        and state[view]["state"]["value"] == 3
    )


def test_a_notebook_that_fails_nbval_is_not_cached(tmp_path):
    from jupyter_cache import get_cache

    nb, cache, run = run_nbval_into_cache(
        tmp_path, "print('measured')", "assert False, 'a claim fails'"
    )
    assert run.returncode != 0
    with pytest.raises(KeyError):
        get_cache(str(cache)).match_cache_notebook(nb)


def test_colab_copy_rewrites_myst_as_commonmark():
    from booktools.build.colab import commonmark, site

    bib = f"{site()}book/bibliography.html#cite-"
    assert commonmark("{cite}`he2016deep, he2016identity`") == (
        f"([He et al., 2016a]({bib}he2016deep); [He et al., 2016b]({bib}he2016identity))"
    )
    assert commonmark("{cite:t}`ioffe2015batch` found") == (
        f"[Ioffe and Szegedy (2015)]({bib}ioffe2015batch) found"
    )
    assert commonmark("{term}`identity mappings <identity mapping>`") == (
        f"[identity mappings]({site()}book/glossary.html#term-identity-mapping)"
    )
    assert commonmark(
        "[next](03_gradient_flow.ipynb#sec) and [bib](../book/bibliography.md)"
    ) == (
        f"[next]({site()}notebooks/03_gradient_flow.html#sec) "
        f"and [bib]({site()}book/bibliography.html)"
    )
    fenced = "```{admonition} Predict first\n:class: tip\nWhich one?\n```"
    assert commonmark(fenced) == "> **Predict first**\n>\n> Which one?"
    dropdown = "```{dropdown} Answer\nThis one.\n```"
    assert (
        commonmark(dropdown)
        == "<details>\n<summary>Answer</summary>\n\nThis one.\n\n</details>"
    )
    with pytest.raises(SystemExit, match="no CommonMark form"):
        commonmark("{eq}`eq-1`")
    with pytest.raises(SystemExit, match="no figure named fig-1"):
        commonmark("{numref}`fig-1`")
    with pytest.raises(SystemExit, match="not in book/references.bib"):
        commonmark("{cite}`nobody2099`")


def test_colab_copy_captions_and_numbers_the_figures_as_the_book_does():
    """Figure captions live in cell metadata, which only the book reads: the copy shows each one in a markdown
    cell under its figure, numbered per chapter from 1 (book/_ext/figure_numbers.py), and {numref} becomes
    that number, linked to the figure on the published page."""
    from booktools.build.colab import colab_version, site

    def figure(name, caption):
        cell = nbformat.v4.new_code_cell("plt.show()", id=name)
        cell.metadata["mystnb"] = {"figure": {"name": name, "caption": caption}}
        return cell

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(
            "As {numref}`fig-b` shows, see {numref}`Panel %s <fig-a>`."
        ),
        figure("fig-a", "Loss against step {cite}`he2016deep`."),
        nbformat.v4.new_code_cell("x = 1"),
        figure("fig-b", "Gradient norm."),
    ]
    copy = colab_version(nb, ROOT / "notebooks" / "02_x.ipynb")
    page = f"{site()}notebooks/02_x.html"
    assert [c.source for c in copy.cells if c.cell_type == "markdown"] == [
        f"As [Figure 2]({page}#fig-b) shows, see [Panel 1]({page}#fig-a).",
        f"**Figure 1.** Loss against step ([He et al., 2016a]({site()}book/bibliography.html#cite-he2016deep)).",
        "**Figure 2.** Gradient norm.",
    ]
    assert [c.cell_type for c in copy.cells] == [
        "markdown",
        "code",
        "markdown",
        "code",
        "code",
        "markdown",
    ]
    assert copy.cells[2].id == "fig-a-caption" and nb.cells[1].id == "fig-a"
    assert "figure" not in copy.cells[1].metadata["mystnb"], (
        "the caption moved to its cell"
    )
    assert "figure" in nb.cells[1].metadata["mystnb"], "the chapter is left alone"


def test_pin_branch_sets_the_one_branch_line():
    from booktools.build import edition

    config = "repository:\n  url: https://github.com/o/r  # the repo\n  branch: main\n"
    assert edition.pin_branch(config, "v2026.12") == config.replace(
        "branch: main", "branch: v2026.12"
    )
    with pytest.raises(SystemExit, match="exactly one"):
        edition.pin_branch(config + "other:\n  branch: dev\n", "v2026.12")


def test_an_edition_tags_a_commit_whose_links_open_the_tag(tmp_path):
    """`make edition` in a clone of this repository (its current tools committed there): the tag's Colab badges
    and student versions point at the tag, and the branch the clone was on is untouched."""
    import shutil
    import subprocess

    def git(*args, cwd):
        return subprocess.run(
            ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
        ).stdout.strip()

    clone = tmp_path / "book"
    git("clone", "--quiet", "--local", str(ROOT), str(clone), cwd=tmp_path)
    shutil.copytree(
        ROOT / "booktools",
        clone / "booktools",
        ignore=shutil.ignore_patterns("__pycache__"),
        dirs_exist_ok=True,
    )
    # the tools rewrite the committed copies from the committed chapters: bring them in line first
    run = [sys.executable, "-m", "booktools.build.student"]
    subprocess.run(run, cwd=clone, check=True, capture_output=True)
    git("add", "--all", cwd=clone)
    commit = ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q"]
    git(*commit, "--allow-empty", "-m", "the current tools and copies", cwd=clone)
    head = git("rev-parse", "HEAD", cwd=clone)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(
        [sys.executable, "-m", "booktools.build.edition", "v2099.1"],
        cwd=clone,
        env=env,
        check=True,
        capture_output=True,
    )
    assert git("rev-parse", "HEAD", cwd=clone) == head, "the branch must not move"
    assert not git("status", "--porcelain", cwd=clone)
    assert git("rev-parse", "v2099.1^", cwd=clone) == head
    tagged = git(
        "show", "v2099.1:notebooks/student/02_identity_and_zero_init.ipynb", cwd=clone
    )
    assert "/blob/v2099.1/notebooks/student/02_identity_and_zero_init.ipynb" in tagged
    assert "/blob/main/" not in tagged
    assert "branch: v2099.1" in git("show", "v2099.1:_config.yml", cwd=clone)
    with pytest.raises(subprocess.CalledProcessError):
        subprocess.run(
            [sys.executable, "-m", "booktools.build.edition", "2099"],
            cwd=clone,
            check=True,
            capture_output=True,
        )
