"""Coursework: student versions generated from the one source, and grading with hidden tests."""

import json
import re
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest
from markdown_it import MarkdownIt

from booktools.build.colab import colab_version, figure_names
from booktools.build.student import STUDENT_DIR, student_version
from booktools.grading.cells import COMMON, exercises, secret_number
from booktools.grading.forbidden import HIDDEN_NAMES
from booktools.grading.grade import grade
from booktools.grading.sandbox import sandbox_problem
from booktools.grading.scan import suspicions
from booktools.settings import COLAB_DIR, HIDDEN
from conftest import NOTEBOOKS, ROOT, colab_url, read_notebook, same_marks_as_recorded


def solution_count(nb) -> int:
    return sum(c.source.count("### BEGIN SOLUTION") for c in nb.cells)


def test_committed_student_versions_are_up_to_date(notebook_path):
    committed = STUDENT_DIR / notebook_path.name
    assert committed.exists(), "run `make student`"
    fresh = student_version(read_notebook(notebook_path), notebook_path.name)
    assert nbformat.writes(fresh).strip() == committed.read_text().strip(), (
        "stale student version: run `make student`"
    )


def test_committed_colab_copies_are_up_to_date(notebook_path):
    committed = COLAB_DIR / notebook_path.name
    assert committed.exists(), "run `make student`, which writes the Colab copies"
    fresh = colab_version(read_notebook(notebook_path), notebook_path)
    assert nbformat.writes(fresh).strip() == committed.read_text().strip(), (
        "stale Colab copy: run `make student`"
    )
    source = read_notebook(notebook_path)
    captions = [c for c in fresh.cells if c.get("id", "").endswith("-caption")]
    assert len(captions) == len(figure_names(source)), "a caption under every figure"
    fresh.cells = [c for c in fresh.cells if c not in captions]
    assert [(c.cell_type, c.get("outputs")) for c in fresh.cells] == [
        (c.cell_type, c.get("outputs")) for c in source.cells
    ] and [c.source for c in fresh.cells if c.cell_type == "code"] == [
        c.source for c in source.cells if c.cell_type == "code"
    ], "only the markdown differs from the chapter, and the figures' captions are added"


@pytest.mark.parametrize("copy", ["colab", "student"])
def test_copies_outside_the_book_render_as_plain_commonmark(notebook_path, copy):
    """What Colab, GitHub and the download open shows no MyST role, directive or relative link when a plain
    CommonMark renderer (markdown-it-py in commonmark mode) renders it."""
    renderer = MarkdownIt("commonmark")
    path = (COLAB_DIR if copy == "colab" else STUDENT_DIR) / notebook_path.name
    nb = read_notebook(path)
    roles = re.findall(r"\{(?:cite|term|numref)[\w:]*\}`", path.read_text())
    assert not roles, f"MyST roles anywhere in the file, metadata included: {roles[:3]}"
    leftovers = []
    for i, cell in enumerate(c for c in nb.cells if c.cell_type == "markdown"):
        html = renderer.render(cell.source)
        leftovers += [
            f"markdown cell {i}: role {m}"
            for m in re.findall(r"\{[\w:-]+\}<code>", html)
        ]
        leftovers += [
            f"markdown cell {i}: directive {m}"
            for m in re.findall(r"language-\{[\w-]+\}|<p>:{3,}\{", html)
        ]
        leftovers += [
            f"markdown cell {i}: relative link {href}"
            for href in re.findall(r'href="([^"]*)"', html)
            if not re.match(r"https?://|mailto:|#", href)
        ]
    assert not leftovers, leftovers


def test_student_version_hides_solutions_and_hidden_tests(notebook_path):
    student = read_notebook(STUDENT_DIR / notebook_path.name)
    text = nbformat.writes(student)
    assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text
    assert not any("hidden-test" in c.metadata.get("tags", []) for c in student.cells)
    assert all(not c.outputs for c in student.cells if c.cell_type == "code"), (
        "outputs are cleared"
    )
    assert "widgets" not in student.metadata, "the widgets' saved state is cleared"
    stubs = re.findall(
        r"raise NotImplementedError\(.Exercise \d+ \(",
        "\n".join(c.source for c in student.cells),
    )
    assert len(stubs) == solution_count(read_notebook(notebook_path))
    assert f"notebooks/student/{notebook_path.name})" in student.cells[0].source, (
        "the badge opens the student copy"
    )


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


TOY_HIDDEN = """
def exercise_1():
    _observe("double(3)", double(3), "double(3) must be 6")


def exercise_2():
    _observe("half(3)", half(3), "half(3) must be 1.5")


def exercise_3():
    _observe("third(3)", third(3), "third(3) must be 1", close=(1e-12, 0))
"""


def toy_notebook(*codes) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in codes])


def toy_chapter(
    tmp_path_factory, hidden_source: str, template: list, reference: list
) -> dict:
    """A toy chapter's hidden tests, student version and instructor notebook, as `grade`'s options."""
    hidden = tmp_path_factory.mktemp("hidden")
    (hidden / "99_toy.py").write_text(hidden_source)
    folder = tmp_path_factory.mktemp("toy")
    nbformat.write(toy_notebook(*template), folder / "template.ipynb")
    nbformat.write(toy_notebook(*reference), folder / "reference.ipynb")
    return {
        "hidden": hidden,
        "template": folder / "template.ipynb",
        "reference": folder / "reference.ipynb",
    }


def stub(number: int, name: str) -> str:
    return f"def {name}(x):\n    raise NotImplementedError('Exercise {number} ({name}): replace this line.')"


TOY_TEMPLATE = ["import math", stub(1, "double"), stub(2, "half"), stub(3, "third")]
FULL = [
    "def double(x):\n    return 2 * x",
    "def half(x):\n    return x / 2",
    "def third(x):\n    return x / 3",
]
TAMPER = (
    "import json\njson.dumps = lambda *a, **k: 'passed'  # every test reports a pass"
)
SUBMISSIONS = {
    "ada": ["import math", *FULL],
    "broken": [
        "raise RuntimeError('my first attempt')",
        FULL[1],
    ],  # exercise 1 rewritten, exercise 3 deleted
    "looping": [FULL[0], "def half(x):\n    while True:\n        pass", FULL[2]],
    "tamperer": [TAMPER, "def double(x):\n    return 0", FULL[1], FULL[2]],
    "sneaky": [
        "def double(x):\n    import builtins\n    return 2 * x",
        FULL[1],
        "def third(x):\n    math.floor = round\n    return x / 3",
    ],
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The grader on a toy chapter of three exercises (every real chapter is graded in test_notebooks_run.py): a
    rewritten or deleted exercise, an infinite loop, a file that is not a notebook, a cell that tampers with the
    grader and answers that reach into the interpreter each cost only what they must, and are flagged."""
    toy = toy_chapter(
        tmp_path_factory, TOY_HIDDEN, TOY_TEMPLATE, ["import math", *FULL]
    )
    folder = tmp_path_factory.mktemp("submissions")
    for student, codes in SUBMISSIONS.items():
        nbformat.write(toy_notebook(*codes), folder / f"{student}.ipynb")
    (folder / "garbled.ipynb").write_text('{"cells": [ this is not JSON')
    rows = grade(
        folder,
        "99_toy",
        timeout=5,
        jobs=2,
        sandbox=not sandbox_problem(),
        memory_gb=TOY_MEMORY_GB,
        **toy,
    )
    return {row["student"]: row for row in rows}


TOY_MEMORY_GB = 2
PROWLER = [
    "import math",
    # exercise 1 is right, and tries the network, the instructor's home and the other runs' folders on the way (where
    # the other kernels' sockets are); it answers wrong if it sees one
    """def double(x):
    import os, socket
    with open(os.path.expanduser("~/rc-sandbox-probe"), "w") as f:
        f.write("the grader's home")
    for target in {outside!r}:  # the venv, the submissions (earlier grades), temporary folders
        try:
            with open(target, "w") as f:
                f.write("written from the sandbox")
        except OSError:
            pass
    try:
        socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
    except OSError:
        pass
    if os.path.exists({sibling!r}):
        return -1
    # the book (whose instructor notebooks hold the solutions), the other submissions, the reference notebook
    for secret in {secrets!r}:
        if os.path.exists(secret):
            return -1
    # nor the instructor's secret phrase, which `make grade SECRET=...` also puts in MAKEFLAGS
    if any("instructor's phrase" in value for value in os.environ.values()):
        return -1
    # and no other process: not the grader's, not the other kernels' (same user: it could signal them)
    if len([p for p in os.listdir("/proc") if p.isdigit()]) > 10:
        return -1
    return 2 * x""",
    # exercise 2 asks for more memory than the sandbox allows
    f"def half(x):\n    hoard = bytearray({TOY_MEMORY_GB + 1} * 2**30)\n    return x / 2",
    FULL[2],
]


@pytest.fixture(scope="module")
def prowler(tmp_path_factory):
    """A submission graded in the sandbox, with a server listening on the grader's loopback."""
    import socket

    from booktools import settings

    if why := sandbox_problem():
        pytest.skip(f"this system cannot make the sandbox: {why}")
    toy = toy_chapter(
        tmp_path_factory, TOY_HIDDEN, TOY_TEMPLATE, ["import math", *FULL]
    )
    folder = tmp_path_factory.mktemp("submissions")
    server = socket.create_server(("127.0.0.1", 0))
    server.setblocking(False)
    port = server.getsockname()[1]
    from booktools.grading.sandbox import runs_folder

    # beside the kernel's own folder, as the reference's and the other submissions' are
    sibling = tempfile.mkdtemp(dir=runs_folder())
    nbformat.write(toy_notebook(*FULL), folder / "another_student.ipynb")
    secrets = [
        str(settings.ROOT / "notebooks" / settings.NOTEBOOKS[0].name),
        str(folder / "another_student.ipynb"),
        str(toy["reference"]),
    ]
    assert all(Path(s).exists() for s in secrets)
    outside = [
        str(Path(sys.prefix) / "rc-sandbox-probe.pth"),
        str(folder / "grades-forged.csv"),
        str(Path(tempfile.gettempdir()) / "rc-sandbox-probe"),
        "/var/tmp/rc-sandbox-probe",  # neither emptied nor put back: read-only like the rest
    ]
    nbformat.write(
        toy_notebook(
            PROWLER[0],
            PROWLER[1].format(
                port=port, sibling=sibling, secrets=secrets, outside=outside
            ),
            *PROWLER[2:],
        ),
        folder / "prowler.ipynb",
    )
    monkeypatch = pytest.MonkeyPatch()
    for name in ("SECRET", "MAKEFLAGS"):
        monkeypatch.setenv(name, " -- SECRET=the instructor's phrase")
    try:
        rows = grade(
            folder,
            "99_toy",
            timeout=30,
            jobs=1,
            memory_gb=TOY_MEMORY_GB,
            # the scan would hold exercise 1 (it imports os): the sandbox is for what runs anyway
            run_flagged=True,
            **toy,
        )
    finally:
        monkeypatch.undo()
        Path(sibling).rmdir()
    (row,) = [r for r in rows if r["student"] == "prowler"]
    written = [path for path in outside if Path(path).exists()]
    for path in written:
        Path(path).unlink()
    try:
        server.accept()
        reached = True
    except BlockingIOError:
        reached = False
    finally:
        server.close()
    return row, reached, written


def test_the_sandbox_has_no_network_its_own_home_and_a_memory_limit(prowler):
    """Nor a way to the other runs' folders, where the other kernels' sockets are (exercise 1 answers wrong if it
    sees one)."""
    row, reached_the_grader, written = prowler
    assert not written, f"a submission wrote outside its own folder: {written}"
    assert not reached_the_grader, "a submission connected to the grader's loopback"
    assert not (Path.home() / "rc-sandbox-probe").exists(), (
        "a submission wrote into the home folder of the user who grades"
    )
    assert (row["exercise_1"], row["exercise_2"], row["exercise_3"]) == (1, 0, 1), row
    assert "MemoryError" in row["reasons"], row["reasons"]


def test_grading_stops_with_a_way_out_where_the_sandbox_cannot_be_made(
    tmp_path, monkeypatch
):
    """Inside many containers user namespaces are blocked: grading says what to do instead of grading
    unprotected, and the probe reports a command that fails or is missing."""
    from booktools.grading import grade as grader

    assert grader.sandbox_problem(["false", "--"]) == "exit 1"
    assert "FileNotFoundError" in grader.sandbox_problem(["no-such-unshare", "--"])
    nbformat.write(toy_notebook("x = 1"), tmp_path / "ada.ipynb")
    monkeypatch.setattr(
        grader,
        "sandbox_problem",
        lambda: "unshare: write failed: Operation not permitted",
    )
    with pytest.raises(SystemExit) as stop:
        grader.grade(tmp_path, "02_identity_and_zero_init")
    message = str(stop.value)
    assert "Operation not permitted" in message
    assert "SANDBOX=0" in message and "--network none" in message


def scores(row) -> tuple:
    return row["exercise_1"], row["exercise_2"], row["exercise_3"]


def test_a_complete_submission_scores_full_marks(graded):
    assert graded["ada"]["score"] == graded["ada"]["out_of"] == 3, graded["ada"]
    assert graded["ada"]["notes"] == "" and graded["ada"]["flags"] == ""


def test_a_rewritten_or_deleted_exercise_costs_only_itself_and_is_flagged(graded):
    row = graded["broken"]
    assert scores(row) == (0, 1, 0), row
    assert "NotImplementedError" in row["reasons"], (
        "the template's stub ran in place of the rewritten cell"
    )
    assert (
        "exercise 1: its cell was changed" in row["flags"]
        and "exercise 3: its cell was changed" in row["flags"]
    )
    assert "my first attempt" not in row["notes"], (
        "a cell outside the exercises never runs"
    )


def test_an_infinite_loop_times_out_and_grading_goes_on(graded):
    row = graded["looping"]
    assert scores(row) == (1, 0, 1), row
    assert "timed out" in row["reasons"]


def test_a_cell_that_patches_the_grader_never_runs(graded):
    row = graded["tamperer"]
    assert scores(row) == (0, 1, 1), row
    assert "1 code cell(s) edited or added outside the exercises" in row["flags"]


def test_answers_that_reach_into_the_interpreter_are_held_for_review(graded):
    """A flagged answer does not run: its exercise scores 0 and says why, the others are graded as usual."""
    row = graded["sneaky"]
    assert scores(row) == (0, 1, 0), row
    assert (
        "exercise 1: imports builtins" in row["flags"]
        and "exercise 3: assigns to math.floor" in row["flags"]
    )
    assert (
        "exercise 1: held for review, not run: the answer imports builtins"
        in row["reasons"]
    )


# Each class of attack on a grader that runs its tests in the student's kernel (issue: kernel tampering), written
# in the answer itself, where the rebuilt notebook cannot drop it: a wrong answer (0) with code that makes a check
# inside the kernel pass. The template's self-check calls the answer before the hidden tests run, as every chapter's
# does.
ATTACK_TEMPLATE = [
    "import json\nimport math",
    "def twice(x):\n    return 2 * x",
    stub(1, "double"),
    "double(1)  # the self-check",
]
ATTACK_HIDDEN = """
def exercise_1():
    for x in (3, 5):
        _observe(f"double({x})", double(x), "double(x) must be 2 x")
    # What a test that judges inside the kernel would conclude, recorded so that the test below can see each attack
    # work there; the reference records "pass" as well, so a right answer loses nothing by it.
    try:
        for x in (3, 5):
            got = double(x)
            assert got == twice(x) or math.isclose(got, twice(x))
        concluded = "pass"
    except AssertionError:
        concluded = "fail"
    # reported as a grader that trusts the kernel would report it: through json.dumps
    _observe("in-kernel verdict", json.loads(json.dumps(concluded)), "double(x) must be 2 x")
"""
FAKE_RECORD = '\'GRADE {"exercise": 1, "observed": [{"key": "in-kernel verdict", "value": "pass"}], "error": null}\''
ATTACKS = {
    "json-dumps": (
        "    import json\n    dumps = json.dumps\n"
        "    json.dumps = lambda o, *a, **k: dumps('pass' if o == 'fail' else o, *a, **k)\n    return 0"
    ),
    "input-transformer": (
        "    get_ipython().input_transformers_post.append(\n"
        "        lambda lines: [line.replace('assert ', 'assert True or ') for line in lines]\n"
        "    )\n    return 0"
    ),
    "post-run-cell-hook": (
        f"    get_ipython().events.register('post_run_cell', lambda result: print({FAKE_RECORD}))\n    return 0"
    ),
    "patched-library": "    math.isclose = lambda *a, **k: True\n    return 0",
    "redefined-helper": "    import __main__\n    __main__.twice = lambda x: 0\n    return 0",
    "object-that-equals-anything": (
        "    class Six:\n        def __eq__(self, other):\n            return True\n\n"
        "        def __float__(self):\n            return 6.0\n\n    return Six()"
    ),
}


@pytest.fixture(scope="module")
def attacks(tmp_path_factory):
    """{attack: (row graded as usual, the run with the flagged answers run, its row)}."""
    from booktools.grading.grade import run_all
    from booktools.grading.judge import score

    toy = toy_chapter(
        tmp_path_factory,
        ATTACK_HIDDEN,
        ATTACK_TEMPLATE,
        [*ATTACK_TEMPLATE[:2], "def double(x):\n    return 2 * x", ATTACK_TEMPLATE[3]],
    )
    folder = tmp_path_factory.mktemp("submissions")
    for name, body in ATTACKS.items():
        answer = "def double(x):\n" + body
        nbformat.write(
            toy_notebook(*ATTACK_TEMPLATE[:2], answer, ATTACK_TEMPLATE[3]),
            folder / f"{name}.ipynb",
        )
    options = dict(
        timeout=10,
        jobs=2,
        sandbox=not sandbox_problem(),
        memory_gb=TOY_MEMORY_GB,
        **toy,
    )
    held = {row["student"]: row for row in grade(folder, "99_toy", **options)}
    runs, expected = run_all(folder, "99_toy", run_flagged=True, **options)
    ran = {run["student"]: (run, score(run, expected)) for run in runs}
    return {name: (held[name], *ran[name]) for name in ATTACKS}


def kernel_concluded_pass(run: dict) -> bool:
    """Whether the kernel reported that the check made inside it passed (in any record it printed)."""
    return any(
        o.get("key") == "in-kernel verdict" and o.get("value") == "pass"
        for record in run["records"].get(1, [])
        for o in record.get("observed", [])
    )


@pytest.mark.parametrize("attack", ATTACKS)
def test_an_answer_that_tampers_with_the_kernel_scores_zero(attacks, attack):
    """Each attack works inside the kernel where the answer runs (a check made there passes, so the test can fail),
    and still scores 0 when it is run, because the answer is judged in the grader's process; and by default the
    scan holds it, so it does not run at all."""
    held, run, ran = attacks[attack]
    assert kernel_concluded_pass(run), (
        f"{attack}: no longer fools a check made inside the kernel, so this test shows nothing: {run['records']}"
    )
    assert ran["exercise_1"] == 0, (
        f"{attack}: run, it got the mark from the judge outside the kernel: {ran}"
    )
    assert held["exercise_1"] == 0 and "held for review" in held["reasons"], held
    assert held["flags"], held


def test_an_invalid_notebook_is_a_row(graded):
    row = graded["garbled"]
    assert row["score"] == 0 and "not a valid notebook" in row["notes"]


def test_grades_record_what_each_self_check_said():
    """The self-checks never change a score, but grades.csv shows what each one told the student."""
    from booktools.grading.cells import self_checks

    def checked(*outputs):
        cell = nbformat.v4.new_code_cell("self_check(1, check_exercise_1)")
        cell.metadata["tags"] = ["self-check"]
        cell.outputs = [nbformat.from_dict(o) for o in outputs]
        return cell

    nb = toy_notebook("x = 1")
    nb.cells += [
        checked(
            {
                "output_type": "stream",
                "name": "stdout",
                "text": "Exercise 1: correct.\n",
            }
        ),
        checked(
            {
                "output_type": "error",
                "ename": "AssertionError",
                "evalue": "Exercise 2: not yet right: alpha must start at 0",
                "traceback": [],
            }
        ),
        checked(),
    ]
    assert self_checks(nb, len(nb.cells)) == (
        "Exercise 1: correct.; Exercise 2: not yet right: alpha must start at 0; no output"
    )
    assert self_checks(nb, 1) == "", "only the submitted cells count, not the grader's"


def test_grades_export_as_canvas_and_moodle_read_them(graded, tmp_path):
    """Canvas matches a row by SIS Login ID and takes each extra column as an assignment; Moodle maps a username
    column, a score column and a feedback column at import. One row per student, the score out of the
    exercises, in a column named after the assignment."""
    import csv

    from booktools.grading.lms import write_lms_csv

    rows = [graded[s] for s in sorted(graded)]
    for lms in ("canvas", "moodle"):
        write_lms_csv(rows, tmp_path / f"{lms}.csv", lms, "Chapter 99")
    with open(tmp_path / "canvas.csv", newline="") as f:
        canvas = list(csv.DictReader(f))
    assert list(canvas[0]) == [
        "Student",
        "ID",
        "SIS User ID",
        "SIS Login ID",
        "Section",
        "Chapter 99",
    ]
    assert [(r["SIS Login ID"], r["Chapter 99"]) for r in canvas] == [
        (r["student"], str(r["score"])) for r in rows
    ]
    with open(tmp_path / "moodle.csv", newline="") as f:
        moodle = {r["Username"]: r for r in csv.DictReader(f)}
    assert moodle["ada"]["Chapter 99"] == "3"
    assert moodle["ada"]["Feedback"] == "all exercises passed"
    assert "timed out" in moodle["looping"]["Feedback"]
    assert "flagged for review" in moodle["sneaky"]["Feedback"]


def test_instructor_page_covers_every_chapter():
    page = (ROOT / "book" / "instructors.md").read_text()
    for path in NOTEBOOKS:
        assert f"`{path.stem}`" in page, (
            f"add {path.stem} to the learning objectives in book/instructors.md"
        )


def test_instructor_page_links_every_student_version():
    page = (ROOT / "book" / "instructors.md").read_text()
    for path in NOTEBOOKS:
        assert f"]({colab_url('student/' + path.name)})" in page, (
            f"link the student version of {path.stem}"
        )


@pytest.mark.parametrize(
    "code, reason",
    [
        ("    return 2 * x", None),
        ("    f = eval\n    return f('2 * x')", "uses eval"),
        (
            "    t = torch\n    n = t.nn\n    n.functional = None\n    return x",
            "assigns to n.functional",
        ),
        (
            "    def inner():\n        torch.allclose = lambda *a, **k: True\n    inner()",
            "assigns to torch.allclose",
        ),
        ("    return getattr(torch, 'allclose')", "calls getattr on torch"),
        ("    import sys\n    return x", "imports sys"),
        (
            "    return x.__class__.__bases__",
            ["reaches __bases__", "reaches __class__"],
        ),
        ("    print.__self__.print = str\n    return x", "reaches __self__"),
        ("    return vars(x)", "calls vars on x"),
        (
            "    return logging.currentframe().f_back",
            [
                "reaches the stack's frames (currentframe)",
                "reaches the stack's frames (f_back)",
            ],
        ),
        (
            "    class Six:\n        __eq__ = lambda self, other: True\n\n    return Six()",
            "defines __eq__",
        ),
        ("def print(*args):\n    pass", "rebinds the builtin print"),
        (
            "    return getattr(f, '__glob' + 'als__')['Helper']",
            ["calls getattr on f", "has a string with a double underscore"],
        ),
        ("    return getattr(block, 'alpha')", None),
        (
            "    return type(net.blocks[0].shortcut)(8, 16)(x)",
            "calls type() on an object",
        ),
        ("    return [m for m in net.modules() if type(m) is Block]", None),
        (
            "    return sys.modules['__main__'].Helper",
            ["has a string with a double underscore", "uses sys"],
        ),
        ("    return pickle.loads(b'c__main__\\nHelper\\n.')", "uses pickle"),
        (
            "    return _ch04_lesion_errors(a, b, c, True)[i]",
            "reaches the hidden tests' _ch04_lesion_errors",
        ),
        (
            "    print('GRADE {}')\n    return x",
            "writes what looks like the grader's result line",
        ),
        ("PREDICTION = {1}\nlen = str", "rebinds the builtin len"),
        (  # a region that leaves the function's body: valid once spliced into its cell, unreadable alone
            "    return 2 * x\n\nimport json\njson.dumps = str",
            "cannot be read on its own (a syntax error, or code outside the part to complete)",
        ),
        ("    get_ipython().input_transformers_post.append(str)", "uses get_ipython"),
        ("    return 2 * x if _SECRET else x", "reaches the hidden tests' _SECRET"),
        # a fourth red-team round: the standard library's other ways in, and a library's own way to sys and os
        (
            "    import operator\n    return operator.attrgetter('Helper')(m)(x)",
            "imports operator",
        ),
        (
            "    import timeit\n    return timeit.timeit('x', number=1)",
            "imports timeit",
        ),
        ("    import csv\n    return x", "imports csv"),
        ("    from itertools import accumulate\n    return x", None),
        ("    return torch.sys.modules", "reaches torch.sys"),
        (
            "    return torch.os.environ['MAKEFLAGS']",
            ["reaches torch.os", "reaches torch.os.environ"],
        ),
        ("    object.__setattr__(m, '_observe', print)", "reaches __setattr__"),
        (
            "    return torch.load('answer.pt', weights_only=False)",
            "unpickles (weights_only=False)",
        ),
        # a fifth: reflection passed on, modules that evaluate strings, a library's private parts
        ("    look = getattr\n    return look(f, 'x')", "passes getattr on"),
        ("    return list(map(getattr, [f], ['x']))", "passes getattr on"),
        ("    import typing\n    return typing.get_type_hints(f)", "imports typing"),
        ("    return np._core", "reaches np._core"),
        ("    return torch.hub.load('.', 'x', source='local')", "reaches torch.hub"),
    ],
)
def test_the_scan_sees_through_aliases_and_nested_functions(code, reason):
    from booktools.grading.scan import scan

    found = scan(code, {"torch", "np"})
    expected = reason if isinstance(reason, list) else [reason] if reason else []
    assert found == expected, found


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
    from booktools.grading.splice import rebuild

    source, numbers = exercises(notebook_path.stem)
    template = read_notebook(STUDENT_DIR / notebook_path.name)
    _, answers, flags = rebuild(template, read_notebook(notebook_path))
    assert not flags and set(numbers) <= set(answers), (flags, sorted(answers, key=str))
    held = {k: r for k, r in suspicions(answers, template, source).items() if r}
    assert not held, held


def test_an_answer_that_names_a_forbidden_helper_is_held_wherever_it_names_it():
    """Read in the grader's process, through the template's own definitions: a default argument, a class attribute,
    functools.partial, a wrapper that rebinds the helper's name, and a template class that builds the helper."""
    hidden = "def exercise_1():\n    _observe('uses', _refers_to(answer, Helper), 'by hand')\n"
    template = toy_notebook(
        "class Helper:\n    pass",
        "def builds(x):\n    return Helper()",
        "def unrelated(x):\n    return x",
        "tool = Helper",
        stub(1, "answer"),
    )
    for code in (
        "    def answer(x, h=Helper):\n        return h(x)",
        "    class Box:\n        make = staticmethod(Helper)\n    return Box.make()",
        "    import functools\n    return functools.partial(Helper)()",
        "    _real = Helper\n    return _real()",
        "    return builds(x)",
        "    return tool()",  # a name the template binds to it
        "    return lookup('Helper')(x)",  # a name in a string
    ):
        assert suspicions({1: code}, template, hidden)[1], code
    assert not suspicions({1: "    return unrelated(x)"}, template, hidden)[1]
    # handed over by another answer, or by an answer cell: exercise 1 is held, the other answer is not
    for key in (2, "answer PREDICTION"):
        found = suspicions(
            {1: "    return x.kit()", key: "    x.kit = Helper"}, template, hidden
        )
        assert not found[key] and found[1], found
        assert (
            "uses Helper, which the exercise asks you to do without (in the answer"
            in found[1][0]
        )


def test_a_mutant_with_the_wrong_mark_is_reported(tmp_path, monkeypatch):
    """wrong_marks reads each mutant's grading cell: a wrong answer that passed, a right one that failed, and a hidden
    test that printed nothing are all reported; a wrong answer that failed is not."""
    from booktools.grading import mutation as mutants
    from booktools.grading.cells import MARK, grading_cells

    (tmp_path / "99_toy.py").write_text(
        "# %% exercise 1, mark 0: a constant\ndef f(x):\n    return 2\n\n\n"
        "# %% exercise 1, mark 0: off by one\ndef f(x):\n    return x + 1\n\n\n"
        "# %% exercise 1, mark 1: another way\ndef f(x):\n    return x + x\n\n\n"
        "# %% exercise 2, mark 0: silent\ndef g():\n    pass\n"
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
    printed = [4, 3, 5, None]  # what each mutant's hidden test observed of f(2)
    cells = []
    for index, value in enumerate(printed):
        text = (
            ""
            if value is None
            else MARK + json.dumps(record(1 + index // 3, value)) + "\n"
        )
        cells.append(grading_cells("", [1 + index // 3])[1])
        cells[-1].metadata[mutants.TAG] = index
        cells[-1].outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
    wrong = mutants.wrong_marks(
        "99_toy", nbformat.v4.new_notebook(cells=cells), reference
    )
    assert len(wrong) == 3 and "a constant: got 1, should get 0" in wrong[0], wrong
    assert (
        "another way: got 0, should get 1 (f(2) must be 4)" in wrong[1]
        and "silent: got 0, should get 0" not in wrong[2]
        and "the hidden test reported nothing" in wrong[2]
    )


def test_only_a_whole_line_of_its_own_cell_counts_as_a_result():
    """records(): a grading cell's result is the one whole line its exercise's record fills. A forged record that
    an answer prints with the real line glued to its end (so the real one no longer starts a line), one printed
    to stderr, or one for another exercise counts as a second result, which verdict fails."""
    from booktools.grading.cells import MARK, grading_cells, records
    from booktools.grading.judge import verdict

    def result(value, exercise=1):
        observed = [{"key": "f(2)", "value": value, "why": "f(2) must be 4"}]
        return MARK + json.dumps(
            {"exercise": exercise, "observed": observed, "error": None}
        )

    def judged(*streams):
        cell = grading_cells("", [1])[1]
        cell.outputs = [
            nbformat.v4.new_output("stream", name=name, text=text)
            for name, text in streams
        ]
        found = records(nbformat.v4.new_notebook(cells=[cell]), 0)
        return verdict([json.loads(result(4)[len(MARK) :])], found.get(1))[0]

    assert judged(("stdout", "what the answer printed\n" + result(4) + "\n"))
    assert not judged(("stdout", result(3) + "\n"))
    # the grading cell starts its line on a new line, so a forger must leave text after its own record
    assert not judged(("stdout", result(4) + "\nglued" + result(3) + "\n"))
    assert not judged(("stdout", result(3) + "\n"), ("stderr", result(4) + "\n"))
    assert not judged(("stdout", result(4, exercise=2) + "\n" + result(4) + "\n"))
    assert not judged(("stdout", "nothing\n"))


def observed(*pairs, error=None) -> list:
    """The records a kernel printed for one exercise: (key, value) pairs, or (key, value, rule) for a reference."""
    return [
        {
            "exercise": 1,
            "observed": [
                {
                    "key": p[0],
                    "value": p[1],
                    "why": f"wrong {p[0]}",
                    **(p[2] if len(p) > 2 else {}),
                }
                for p in pairs
            ],
            "error": error,
        }
    ]


@pytest.mark.parametrize(
    "rule, reference, answer, passes",
    [
        ({}, 6, 6, True),
        ({}, 6, 6.0, True),
        ({}, 6, 7, False),
        ({}, True, 1, False),  # a bool agrees only with a bool
        ({}, [1.0, [2.0]], [1.0, [2.0]], True),
        ({}, [1.0, 2.0], [1.0, 2.0, 3.0], False),
        ({}, "Tensor", "<Six>", False),
        ({}, float("nan"), float("nan"), True),
        ({}, 1.0, float("nan"), False),
        ({"close": [1e-6, 0]}, 2.0, 2.000001, True),
        ({"close": [1e-6, 0]}, 2.0, 2.00001, False),
        ({"close": [0, 1e-3]}, [0.0, 1.0], [0.0005, 1.0], True),
        ({"within": [1.0, 2.0]}, 1.5, 1.99, True),
        ({"within": [1.0, 2.0]}, 1.5, 2.0, False),
        ({"within": [1.0, 2.0]}, 1.5, "1.5", False),
        ({"one_of": [1.7, 1.8]}, 1.7, 1.8000000004, True),
        ({"one_of": [1.7, 1.8]}, 1.7, 1.9, False),
    ],
)
def test_an_answer_is_judged_by_the_reference_rule(rule, reference, answer, passes):
    from booktools.grading.judge import verdict

    passed, why = verdict(observed(("x", reference, rule)), observed(("x", answer)))
    assert passed is passes and why == ("passed" if passes else "wrong x")


def test_only_the_reference_says_how_an_answer_is_judged():
    """An answer's kernel cannot loosen the rule (its own `close`/`within` are ignored), skip an observation, report
    twice, hide an error, or send something that is not a record."""
    from booktools.grading.judge import verdict

    reference = observed(("a", 1.0), ("b", 2.0))
    assert verdict(reference, observed(("a", 1.0), ("b", 2.0))) == (True, "passed")
    assert (
        verdict(reference, observed(("a", 1.0), ("b", 3.0, {"close": [1, 1]})))[0]
        is False
    )
    assert verdict(reference, observed(("a", 1.0))) == (False, "wrong b")
    assert verdict(
        reference, observed(("a", 1.0), error="NotImplementedError: Exercise 1")
    ) == (
        False,
        "NotImplementedError: Exercise 1",
    )
    assert (
        verdict(reference, observed(("a", 1.0), ("b", 2.0), error="ValueError: late"))[
            0
        ]
        is False
    )
    assert verdict(reference, observed(("a", 1.0), ("a", 1.0), ("b", 2.0)))[0] is False
    assert verdict(reference, observed(("a", 1.0), ("b", 2.0)) * 2)[0] is False
    assert verdict(reference, None) == (False, "the hidden test reported nothing")
    assert verdict(reference, [{"observed": "everything passed"}])[0] is False
    assert verdict(reference, [["not", "a", "record"]])[0] is False


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
    from booktools.grading.cells import COMMON

    namespace = {"__name__": "__main__"}
    exec(COMMON.read_text() + "\ndef helper(x):\n    return x\n" + code, namespace)
    assert namespace["_refers_to"](namespace["answer"], namespace["helper"]) is uses


def test_the_scan_knows_every_private_helper_of_the_hidden_tests():
    """Every name the hidden tests' helpers and the grader's preamble bind is one an answer may not name."""
    import ast

    from booktools.grading.cells import PREAMBLE

    defined = {
        name
        for source in (COMMON.read_text(), PREAMBLE)
        for node in ast.parse(source).body
        for name in (
            [node.name]
            if isinstance(node, ast.FunctionDef)
            else [a.asname for a in node.names]
            if isinstance(node, ast.Import)
            else [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
        )
    }
    assert defined == HIDDEN_NAMES


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
    "said, flag",
    [
        (  # an answer that may have talked its way past the hidden test, or a self-check too strict
            "Exercise 1: not yet right: wrong shape; Exercise 2: not yet right: wrong value",
            "exercise 1: passed, but its self-check said it is not yet right",
        ),
        (  # a right answer the hidden test is too strict for (a list for a tuple), or one right only on the
            # notebook's own inputs
            "Exercise 1: correct.; Exercise 2: correct.",
            "exercise 2: its self-check said it is correct, but the hidden test did not pass it",
        ),
    ],
)
def test_a_grade_that_its_own_self_check_contradicts_is_flagged(said, flag):
    from booktools.grading.judge import score

    reference = {1: observed(("x", 1.0)), 2: observed(("y", 2.0))}
    run = {
        "student": "ada",
        "records": {1: observed(("x", 1.0)), 2: observed(("y", 3.0))},
        "held": {},
        "notes": "",
        "flags": "",
        "self_checks": said,
    }
    row = score(run, reference)
    assert (row["exercise_1"], row["exercise_2"]) == (1, 0)
    assert row["flags"] == flag
    run["held"] = {2: ["uses gains"]}
    assert "exercise 2" not in score(run, reference)["flags"], (
        "a held answer is flagged as held, not as a disagreement"
    )


# The red team's second round: an answer the scan did not hold changed what the hidden test observes through, a
# class of the notebook's or a library reached through a list. The watch the grader starts before each answer's
# cell (grade._GRADER_WATCH) reports the change as data, so the exercise scores 0 even when such an answer runs.
PATCH_TEMPLATE = [
    "import math\n\n\nclass Meter:\n    def read(self, value):\n        return value",
    stub(1, "double"),
]
PATCH_HIDDEN = """
def exercise_1():
    # observed only through the notebook's class and a library, as ch01's block test once did
    three, five = double(3), double(5)
    _observe("read", Meter().read(three), "double(3) must be 6")
    _observe("close", math.isclose(five, 10), "double(5) must be 10")
"""
PATCHES = {
    "patched-class": "    Meter.read = lambda self, value: 6\n    return 10 if x == 5 else 0",
    "patched-class-through-a-list": (
        "    m = [Meter][0]\n    m.read = lambda self, value: 6\n    return 10 if x == 5 else 0"
    ),
    "patched-library-through-a-list": (
        "    m = [math][0]\n    m.isclose = lambda *a, **k: True\n    return 6 if x == 3 else 0"
    ),
    "right": "    return x + x",
}


@pytest.fixture(scope="module")
def patches(tmp_path_factory):
    """{submission: (row graded as usual, row with the flagged answers run)}."""
    from booktools.grading.grade import run_all
    from booktools.grading.judge import score

    toy = toy_chapter(
        tmp_path_factory,
        PATCH_HIDDEN,
        PATCH_TEMPLATE,
        [
            PATCH_TEMPLATE[0],
            "def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION",
        ],
    )
    folder = tmp_path_factory.mktemp("patches")
    for name, body in PATCHES.items():
        nbformat.write(
            toy_notebook(PATCH_TEMPLATE[0], "def double(x):\n" + body),
            folder / f"{name}.ipynb",
        )
    options = dict(timeout=10, jobs=2, sandbox=False, **toy)
    held = {row["student"]: row for row in grade(folder, "99_toy", **options)}
    runs, expected = run_all(folder, "99_toy", run_flagged=True, **options)
    return {
        run["student"]: (held[run["student"]], score(run, expected)) for run in runs
    }


@pytest.mark.parametrize("patch", [p for p in PATCHES if p != "right"])
def test_an_answer_that_patches_what_the_test_observes_through_scores_zero(
    patches, patch
):
    held, ran = patches[patch]
    # the patch works (every observation but the watch's is the reference's), and the watch gives it away
    assert ran["exercise_1"] == 0, ran
    assert ran["reasons"].startswith("exercise 1: an answer changed a class"), ran
    assert held["exercise_1"] == 0 and "held for review" in held["reasons"], held


def test_a_right_answer_leaves_the_watch_quiet(patches):
    held, ran = patches["right"]
    assert held["exercise_1"] == ran["exercise_1"] == 1, (held, ran)
    assert not held["flags"], held


@pytest.mark.parametrize(
    "code, reason",
    [
        (
            "    Block.forward = lambda self, x: x",
            "assigns to Block.forward, a part of the notebook's code",
        ),
        (
            "    T, = (torch.Tensor,)\n    T.tolist = list",
            "assigns to T.tolist, a part of the notebook's code",
        ),
        (
            "    for T in (torch.Tensor,):\n        T.equal = torch.ne",
            "assigns to T.equal, a part of the notebook's code",
        ),
        ("    M = Block.mro()[1]", "reaches mro"),
        (
            "    Block = Block\n    Block.forward = print",
            "assigns to Block.forward, a part of the notebook's code",
        ),
        ("    net.forward = lambda x: x", "puts a function in place of net.forward"),
        ("    lib = [torch][0]", "puts a module in a container ([torch])"),
        # what the answer is given, what it makes, and the notebook's data stay its to change
        (
            "    net.blocks[0].scale = 0.5\n    for m in net.modules():\n        m.eps = 0",
            None,
        ),
        ("    h = torch.zeros(3)\n    h.requires_grad = True", None),
        ("    resnet.blocks[i].f = Zero()", None),
    ],
)
def test_the_scan_holds_an_answer_that_patches_the_notebook(code, reason):
    from booktools.grading.scan import scan

    found = scan(code + "\n    return net", {"torch"}, {"net", "i"}, {"Block", "Zero"})
    assert found == ([reason] if reason else []), found


def test_refers_to_sees_a_forbidden_class_through_the_notebooks_objects():
    """An instance, a network holding one, a partial, a dict or a subclass: each hands the class over."""
    from booktools.grading.cells import COMMON

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


def test_forbidden_helpers_are_read_through_a_loop_and_an_answers_own_names_are_its_own():
    from booktools.grading.names import forbidden_helpers, uses_forbidden

    hidden = (
        "def exercise_1():\n"
        "    for helper, name in ((maps, 'maps'), (gains, 'gains')):\n"
        "        _observe(name, _refers_to(answer, helper), 'by hand')\n"
    )
    assert forbidden_helpers(hidden) == {1: {"maps", "gains"}}
    assert uses_forbidden("    helper = 1\n    return helper", {"helper"}) == []
    assert uses_forbidden('    """No gains here."""\n    return x', {"gains"}) == []
    assert uses_forbidden("    return gains(x)", {"gains"}) == [
        "uses gains, which the exercise asks you to do without"
    ]
    assert uses_forbidden("    return getattr(m, 'gains')(x)", {"gains"}) == [
        "uses gains, which the exercise asks you to do without"
    ]


def test_an_answer_that_names_any_private_helper_of_its_hidden_tests_is_held():
    """Not only the `_chNN_` names: whatever the chapter's hidden tests define at their top level."""
    from booktools.grading.scan import suspicions

    template = read_notebook(STUDENT_DIR / "02_identity_and_zero_init.ipynb")
    hidden = (HIDDEN / "02_identity_and_zero_init.py").read_text()
    assert suspicions({1: "    return _bn_nets()"}, template, hidden) == {
        1: ["reaches the hidden tests' _bn_nets"]
    }
    assert suspicions(
        {1: "    _bn_nets = 3\n    return _bn_nets"}, template, hidden
    ) == {1: []}, "a local of the answer's own is its own"


def test_crafted_submissions_get_the_marks_recorded(graded, attacks, patches):
    """Every crafted submission above gets the marks, holds, reasons, notes and flags recorded (tests/marks/)."""
    fields = ("score", "reasons", "notes", "flags", "self_checks")

    def kept(row) -> dict:
        marks = {k: v for k, v in row.items() if k.startswith("exercise_")}
        return {"student": row["student"], **marks, **{k: row[k] for k in fields}}

    rows = [kept(graded[name]) for name in sorted(graded)]
    rows += [
        kept(row) for name in ATTACKS for row in (attacks[name][0], attacks[name][2])
    ]
    rows += [kept(row) for name in PATCHES for row in patches[name]]
    same_marks_as_recorded("crafted", rows)
