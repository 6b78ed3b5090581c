"""The hidden tests and their mutants (booktools/grading/hidden, booktools/grading/mutants): every exercise has one,
they stay out of the notebooks, they draw their inputs from the secret, and the in-kernel helper `_refers_to` sees
what it must."""

from pathlib import Path

import nbformat
import pytest

from booktools.build.student import STUDENT_DIR
from booktools.grading.cells import COMMON, exercises, secret_number
from booktools.grading.scan import suspicions
from booktools.settings import COLAB_DIR, HIDDEN
from conftest import NOTEBOOKS, ROOT, read_notebook, solution_count


def test_every_exercise_has_a_hidden_test(notebook_path):
    _, numbers = exercises(notebook_path.stem)
    assert numbers == list(range(1, solution_count(read_notebook(notebook_path)) + 1))


def test_hidden_tests_stay_out_of_notebooks():
    for path in (
        NOTEBOOKS
        + sorted(STUDENT_DIR.glob("*.ipynb"))
        + sorted(COLAB_DIR.glob("*.ipynb"))
    ):
        assert "def exercise_1():" not in path.read_text(), (
            f"{path.name} contains hidden tests"
        )


def test_mutant_files_parse_and_cover_every_exercise_they_name(notebook_path):
    """Every chapter has mutants; each names an exercise with a hidden test and is valid Python; every exercise has at
    least three wrong answers, one of which tampers with the kernel (the scan holds it), and one correct alternative,
    which the scan lets through."""
    import ast

    from booktools.grading.mutation import mutants
    from booktools.grading.names import module_names
    from booktools.grading.scan import scan

    modules = module_names(read_notebook(notebook_path))

    found = mutants(notebook_path.stem)
    assert found, (
        f"write booktools/grading/mutants/{notebook_path.stem}.py: every chapter's hidden tests have mutants"
    )
    _, numbers = exercises(notebook_path.stem)
    for n, mark, what, code in found:
        assert n in numbers, (
            f"mutant {what!r} names exercise {n}, which has no hidden test"
        )
        ast.parse(code)
    for n in numbers:
        marks = [mark for m, mark, _, _ in found if m == n]
        assert marks.count(0) >= 3 and marks.count(1) >= 1, (
            f"exercise {n}: {marks.count(0)} wrong, {marks.count(1)} right"
        )
        held = [mark for m, mark, _, code in found if m == n and scan(code, modules)]
        assert held and set(held) == {0}, (
            f"exercise {n}: needs a tampering mutant the scan holds, and no held correct answer ({held})"
        )
    source, _ = exercises(notebook_path.stem)
    template = read_notebook(STUDENT_DIR / notebook_path.name)
    for n, mark, what, code in found:
        if mark == 1:
            assert not suspicions({n: code}, template, source)[n], (
                f"exercise {n}, {what}: a correct answer is held"
            )


def test_the_reference_solutions_submitted_are_neither_flagged_nor_held(
    notebook_path,
):
    """The instructor notebook graded as a submission: every answer is spliced in, none flagged or held (the scan,
    and the helpers each exercise forbids, named anywhere in the answer)."""
    from booktools.grading.grade import known_cells
    from booktools.grading.splice import rebuild

    source, numbers = exercises(notebook_path.stem)
    template = read_notebook(STUDENT_DIR / notebook_path.name)
    known = known_cells(notebook_path.stem)
    _, answers, flags = rebuild(template, read_notebook(notebook_path), known=known)
    assert not flags and set(numbers) <= set(answers), (flags, sorted(answers, key=str))
    held = {k: r for k, r in suspicions(answers, template, source).items() if r}
    assert not held, held


EDITIONS = Path(__file__).parent / "editions"


def test_a_submission_made_from_an_earlier_student_version_still_grades():
    """tests/editions/ holds the code cells of chapter 02's student version as it was before the Colab forms (no
    `# @title` lines, the machines' `if HEADLESS:` cells, the longer header on copied cells, the self-checks since
    rewritten). Answered there with the reference solutions, it is graded against today's student version: every
    answer is found and nothing is flagged, since booktools/grading/published/ knows every cell a student version
    has held; answered nowhere, nothing is found. A cell edited outside the answers is still flagged."""
    from booktools.grading.grade import known_cells
    from booktools.grading.splice import STUB, rebuild

    chapter = "02_identity_and_zero_init"
    old = read_notebook(EDITIONS / f"{chapter}.ipynb")
    template = read_notebook(STUDENT_DIR / f"{chapter}.ipynb")
    _, numbers = exercises(chapter)
    known = known_cells(chapter)
    assert any(c.source.startswith("if HEADLESS:") for c in old.cells)
    assert not any("@title" in c.source for c in old.cells)
    _, answers, flags = rebuild(template, old, known=known)
    assert not flags, flags
    assert all(STUB.search(answers[n]) for n in numbers), "the stubs, untouched"
    reference = [
        c.source
        for c in read_notebook(ROOT / "notebooks" / f"{chapter}.ipynb").cells
        if "### BEGIN SOLUTION" in c.source
    ]
    solved = nbformat.from_dict(old)
    stubs = [c for c in solved.cells if STUB.search(c.source)]
    assert len(stubs) == len(reference) == len(numbers)
    for cell, solution in zip(stubs, reference, strict=True):
        cell.source = solution
    _, answers, flags = rebuild(template, solved, known=known)
    assert not flags, flags
    assert not any(STUB.search(answers[n]) for n in numbers), answers
    solved.cells[3].source += "\nFIG_WIDTH = 1"  # the figure style, edited
    assert rebuild(template, solved, known=known)[2], "an edit is still flagged"


def test_a_colab_form_title_is_not_code():
    """Colab and ruff write `# @title`, older Colab `#@title`; a student may delete the line."""
    from booktools.grading.splice import lines

    body = "def f(x):\n    return x"
    assert lines(f"#@title Show code: f()\n{body}") == lines(body)
    assert lines(
        f"# @title Show code: f() {{ display-mode: 'form' }}\n{body}\n"
    ) == lines(body)


def test_a_mutant_with_the_wrong_mark_is_reported(tmp_path, monkeypatch):
    """wrong_marks reads each mutant's record: a wrong answer that passed, a right one that failed, and a hidden test
    that reported nothing are all reported; a wrong answer that failed, or that the scan held, is not."""
    from booktools.grading import mutation as mutants

    (tmp_path / "99_toy.py").write_text(
        "# %% exercise 1, mark 0: a constant\ndef f(x):\n    return 2\n\n\n"
        "# %% exercise 1, mark 0: off by one\ndef f(x):\n    return x + 1\n\n\n"
        "# %% exercise 1, mark 1: another way\ndef f(x):\n    return x + x\n\n\n"
        "# %% exercise 2, mark 0: silent\ndef g():\n    pass\n\n\n"
        "# %% exercise 2, mark 0: a tamperer\ndef g():\n    pass\n"
    )
    monkeypatch.setattr(mutants, "MUTANTS", tmp_path)
    assert [m[:3] for m in mutants.mutants("99_toy")][:2] == [
        (1, 0, "a constant"),
        (1, 0, "off by one"),
    ]

    def record(exercise, value):
        observed = [{"key": "f(2)", "value": value, "why": "f(2) must be 4"}]
        return {"exercise": exercise, "observed": observed, "error": None}

    reference = {1: [record(1, 4)], 2: [record(2, 4)]}
    results = [
        ("ran", record(1, 4)),
        ("ran", record(1, 3)),
        ("ran", record(1, 5)),
        ("ran", None),
        (mutants.HELD, ["patches a library"]),
    ]
    wrong = mutants.wrong_marks(mutants.marks("99_toy", results, reference))
    assert len(wrong) == 3 and "a constant: got 1, should get 0" in wrong[0], wrong
    assert (
        "another way: got 0, should get 1 (f(2) must be 4)" in wrong[1]
        and "silent: got 0, should get 0" not in wrong[2]
        and "the hidden test reported nothing" in wrong[2]
    )


def test_hidden_tests_draw_every_input_from_a_seed_the_secret_changes():
    """No seeding call in booktools/grading/hidden takes a literal: each goes through `_seed`, which a secret changes."""
    import ast

    literal = []
    for path in sorted(HIDDEN.glob("[0-9][0-9]_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", getattr(node.func, "id", None))
                in {"manual_seed", "Random", "seed", "default_rng"}
                and any(isinstance(arg, ast.Constant) for arg in node.args)
            ):
                literal.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    assert not literal, f"seed through _seed(...): {literal}"


def test_a_secret_gives_other_seeds_and_stays_out_of_the_kernel():
    def seeds(secret):
        namespace = {}
        exec(
            exercises("02_identity_and_zero_init", secret)[0].split("def exercise_1")[
                0
            ],
            namespace,
        )
        return [namespace["_seed"](k) for k in (7, 31, 404)]

    assert seeds(None) == [7, 31, 404], (
        "without a secret, the seeds written in the tests"
    )
    keyed = seeds("a phrase only I know")
    assert keyed == seeds("a phrase only I know"), "the same secret, the same inputs"
    assert len(set(keyed) | {7, 31, 404}) == 6 and keyed != seeds("another phrase")
    assert secret_number("a phrase only I know") > 0
    source, _ = exercises("02_identity_and_zero_init", "a phrase only I know")
    assert "a phrase only I know" not in source, (
        "the kernel gets a number, not the phrase"
    )


@pytest.mark.parametrize(
    "code, uses",
    [
        ("def answer(x):\n    return x + 1", False),
        ("def answer(x):\n    return helper(x)", True),
        ("alias = helper\ndef answer(x):\n    return alias(x)", True),
        (
            "def inner(x):\n    return helper(x)\ndef answer(x):\n    return inner(x)",
            True,
        ),
        (
            "def answer(x):\n    def nested(y):\n        return helper(y)\n    return nested(x)",
            True,
        ),
        (
            "import functools\n@functools.lru_cache\ndef answer(x):\n    return helper(x)",
            True,
        ),
        (
            "import torch\n@torch.no_grad()\ndef answer(x):\n    return helper(x)",
            True,
        ),
        ("import torch\n@torch.no_grad()\ndef answer(x):\n    return x", False),
    ],
)
def test_refers_to_sees_a_forbidden_helper_through_aliases_nested_functions_and_decorators(
    code, uses
):

    namespace = {"__name__": "__main__"}
    exec(COMMON.read_text() + "\ndef helper(x):\n    return x\n" + code, namespace)
    assert namespace["_refers_to"](namespace["answer"], namespace["helper"]) is uses


def test_refers_to_sees_a_forbidden_class_through_the_notebooks_objects():
    """An instance, a network holding one, a partial, a dict or a subclass: each hands the class over."""

    namespace = {"__name__": "__main__"}
    exec(
        COMMON.read_text()
        + "import functools\nimport torch.nn as nn\n"
        + "class Helper(nn.Module):\n    pass\n"
        + "class Sub(Helper):\n    pass\n"
        + "block = nn.Sequential(nn.Linear(2, 2), Helper())\n"
        + "make = functools.partial(Helper)\n"
        + "table = {'a': (1, Helper)}\n"
        + "plain = nn.Sequential(nn.Linear(2, 2))\n"
        + "def via_block(x):\n    return block[1]\n"
        + "def via_partial(x):\n    return make()\n"
        + "def via_table(x):\n    return table['a'][1]\n"
        + "def via_subclass(x):\n    return Sub()\n"
        + "def clean(x):\n    return plain(x)\n",
        namespace,
    )
    refers = namespace["_refers_to"]
    for name in ("via_block", "via_partial", "via_table", "via_subclass"):
        assert refers(namespace[name], namespace["Helper"]), name
    assert not refers(namespace["clean"], namespace["Helper"])


def _constant_text(node) -> bool:
    import ast

    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _constant_text(node.left) and _constant_text(node.right)
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def test_every_property_has_a_student_text_that_names_no_drawn_input():
    """What an LMS shows a student is the property's `student` text (or its `why` where that is a constant): a
    string written in the test, never one formatted from the inputs drawn from the secret (issue #41)."""
    import ast

    missing = []
    for path in sorted(HIDDEN.glob("[0-9][0-9]_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", None) == "_observe"
            ):
                continue
            keywords = {k.arg: k.value for k in node.keywords}
            why = node.args[2] if len(node.args) > 2 else keywords.get("why")
            told = keywords.get("student", why)
            if not _constant_text(told):
                missing.append(f"{path.name}:{node.lineno}: {ast.unparse(told)[:80]}")
    assert not missing, f"give these a constant student= text: {missing}"
