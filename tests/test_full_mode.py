"""FULL mode, smoke-tested on the CPU: chapters 01 and 04 run their CIFAR-10 path end to end for two iterations,
on tiny fake CIFAR-10 batches that the test writes (CI has no GPU and no network). A typo in code that only a
FULL run reaches then fails here, not hours into someone's GPU run.

Fake data cannot meet FULL mode's scientific claims, so an AssertionError raised by an `assert` in a cell that
runs only `if FULL` is the one error allowed; any other error, anywhere, fails the test.
"""

import ast

import pytest

from conftest import ROOT, read_notebook, run_alone
from execute import inject_parameters
from test_cifar_loader import write_batches

# The chapters with a FULL path, and the line put after the last of their CIFAR_ knobs: two iterations, small nets.
SHORTEN = {
    "01_degradation": "CIFAR_ITERS, CIFAR_MILESTONES, CIFAR_EVAL_EVERY = 2, (1,), 1",
    "04_ensemble_of_paths": "CIFAR_ITERS, CIFAR_BLOCKS_PER_STAGE = 2, 2",
}


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


def test_full_only_asserts_are_recognised():
    assert full_only_asserts("if FULL:\n    x = 1\n    assert x > 2")
    assert not full_only_asserts("assert 1 > 2\nif FULL:\n    assert 2 > 3")
    assert not full_only_asserts("x = 1")


@pytest.mark.parametrize("chapter", sorted(SHORTEN))
def test_full_path_runs_on_fake_cifar(chapter, tmp_path):
    nb = read_notebook(ROOT / "notebooks" / f"{chapter}.ipynb")
    knobs = [
        c
        for c in nb.cells
        if c.cell_type == "code" and "CIFAR_ITERS" in c.source and "=" in c.source
    ]
    assert knobs, f"{chapter}: no cell sets CIFAR_ITERS; update SHORTEN in this test"
    lines = knobs[0].source.split("\n")
    last_knob = max(  # where the last top-level CIFAR_ assignment ends
        node.end_lineno
        for node in ast.parse(knobs[0].source).body
        if isinstance(node, ast.Assign) and "CIFAR_" in ast.unparse(node.targets[0])
    )
    lines.insert(last_knob, SHORTEN[chapter] + "  # the smoke test's override")
    knobs[0].source = "\n".join(lines)
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
