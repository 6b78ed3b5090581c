"""FULL mode, smoke-tested on the CPU: chapters 01 and 04 run their CIFAR-10 path end to end for two iterations,
on tiny fake CIFAR-10 batches that the test writes (CI has no GPU and no network). A typo in code that only a
FULL run reaches then fails here, not hours into someone's GPU run.

Fake data cannot meet FULL mode's scientific claims, so an AssertionError raised by an `assert` in a cell that
runs only `if FULL` is the one error allowed; any other error, anywhere, fails the test.
"""

import ast

import nbformat
import pytest

from booktools.execute import inject_parameters
from conftest import ROOT, read_notebook, run_alone
from test_cifar_loader import write_batches

# The chapters with a FULL path, and the knobs the smoke test overrides right after the statement that sets each:
# two iterations, small nets, and one extra training of each kind (its spread prints as nan).
SHORTEN = {
    "01_degradation": {
        "CIFAR_ITERS": 2,
        "CIFAR_MILESTONES": (1,),
        "CIFAR_EVAL_EVERY": 1,
    },
    "04_ensemble_of_paths": {
        "CIFAR_ITERS": 2,
        "CIFAR_BLOCKS_PER_STAGE": 2,
        "SD_FULL_PAIRS": 1,
    },
}


def shorten(nb, knobs: dict) -> None:
    """Put `NAME = value  # the smoke test's override` after the top-level statement of a code cell that sets each
    knob. A knob that no cell sets fails: the chapter renamed it, and SHORTEN must follow."""
    unset = set(knobs)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        lines = cell.source.split("\n")
        # from the bottom up, so that the line numbers of the statements above stay right
        for node in reversed(tree.body):
            if not isinstance(node, ast.Assign):
                continue
            names = {
                n.id
                for t in node.targets
                for n in ast.walk(t)
                if isinstance(n, ast.Name)
            }
            lines[node.end_lineno : node.end_lineno] = [
                f"{name} = {knobs[name]!r}  # the smoke test's override"
                for name in sorted(names & set(knobs))
            ]
            unset -= names
        cell.source = "\n".join(lines)
    assert not unset, f"no cell sets {sorted(unset)}: update SHORTEN in this test"


def full_only_asserts(source: str) -> bool:
    """Whether the cell's asserts all sit under an `if FULL:`."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    guarded = {
        id(n)
        for top in tree.body
        if isinstance(top, ast.If) and "FULL" in ast.unparse(top.test)
        for n in ast.walk(top)
    }
    asserts = [n for n in ast.walk(tree) if isinstance(n, ast.Assert)]
    return bool(asserts) and all(id(a) in guarded for a in asserts)


def test_the_smoke_test_overrides_each_knob_where_it_is_set():
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("A, B = (\n    1,\n    2,\n)\nprint(A)"),
            nbformat.v4.new_code_cell("if FULL:\n    C = 5\nC = 3"),
        ]
    )
    shorten(nb, {"A": 0, "C": (1,)})
    assert nb.cells[0].source == (
        "A, B = (\n    1,\n    2,\n)\nA = 0  # the smoke test's override\nprint(A)"
    )
    assert nb.cells[1].source.endswith("C = 3\nC = (1,)  # the smoke test's override")
    with pytest.raises(AssertionError, match="no cell sets"):
        shorten(nb, {"D": 1})


def test_full_only_asserts_are_recognised():
    assert full_only_asserts("if FULL:\n    x = 1\n    assert x > 2")
    assert not full_only_asserts("assert 1 > 2\nif FULL:\n    assert 2 > 3")
    assert not full_only_asserts("x = 1")


@pytest.mark.parametrize("chapter", sorted(SHORTEN))
def test_full_path_runs_on_fake_cifar(chapter, tmp_path):
    nb = read_notebook(ROOT / "notebooks" / f"{chapter}.ipynb")
    shorten(nb, SHORTEN[chapter])
    data = tmp_path / "data"
    write_batches(data / "cifar-10-batches-py")
    nb = inject_parameters(nb, {"FULL": True, "DATA_DIR": str(data)})
    run_alone(nb, tmp_path)
    ran = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in ran), "every cell ran"
    for cell in ran:
        for out in cell.outputs:
            if out.output_type == "error":
                allowed = out.ename == "AssertionError" and full_only_asserts(
                    cell.source
                )
                assert allowed, (
                    f"{chapter}, FULL mode: {out.ename}: {out.evalue}\nin the cell:\n{cell.source[:600]}"
                )
