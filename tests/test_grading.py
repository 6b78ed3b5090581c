"""The grader end to end on toy chapters (every real chapter is graded in test_notebooks_run.py): the sandbox, bad
submissions, answers that tamper with the kernel or patch what a test observes, the LMS export, and the marks
recorded for every crafted submission."""

import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from booktools.grading.grade import grade
from booktools.grading.sandbox import sandbox_problem
from conftest import (
    IN_CI,
    same_marks_as_recorded,
    stub,
    toy_chapter,
    toy_notebook,
    unavailable,
)

TOY_HIDDEN = """
def exercise_1():
    import random

    _observe("double(3)", double(3), "double(3) must be 6")
    drawn = random.Random(_seed(1)).randint(1, 10**6)  # under a secret, a number no student can know
    _observe("double(drawn)", double(drawn), "double(x) must be 2 x")


def exercise_2():
    _observe("half(3)", half(3), "half(3) must be 1.5")


def exercise_3():
    _observe("third(3)", third(3), "third(3) must be 1", close=(1e-12, 0))
"""


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
        timeout=60,  # the reference's cells; a submission's may run 10 times theirs, at least 15 s (the loop)
        timeout_floor=15,
        jobs=2,
        sandbox=IN_CI or not sandbox_problem(),
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
    # nor the grader's own code, as an editable install of the book would put it on the path (the hidden tests too)
    import importlib.util
    if importlib.util.find_spec("booktools") is not None:
        return -1
    # nor the instructor's secret phrase, which `make grade SECRET=...` also puts in MAKEFLAGS
    if any("instructor's phrase" in value for value in os.environ.values()):
        return -1
    # nor the number the hidden tests make from it: the run has only the seeds the reference's drew
    import __main__
    if getattr(__main__, "_SECRET", 0) or not getattr(__main__, "_SEEDS", None):
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
        unavailable(f"this system cannot make the sandbox: {why}")
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
    (folder / "grades.csv").write_text(
        "student,score\nada,3\n"
    )  # an earlier run's grades
    secrets = [
        str(settings.ROOT / "notebooks" / settings.NOTEBOOKS[0].name),
        str(settings.HIDDEN),
        str(folder / "another_student.ipynb"),
        str(toy["reference"]),
        str(folder / "grades.csv"),
    ]
    from booktools.grading.sandbox import bwrap_problem

    elsewhere = None
    if (
        bwrap_problem() is None
    ):  # bubblewrap's sandbox shows no file of the instructor's, wherever it lies
        elsewhere = tempfile.NamedTemporaryFile(dir="/var/tmp", suffix=".csv")
        secrets.append(elsewhere.name)
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
            secret="the instructor's phrase",
            **toy,
        )
    finally:
        monkeypatch.undo()
        Path(sibling).rmdir()
        if elsewhere is not None:
            elsewhere.close()
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
    """Nor a way to the other runs' folders, where the other kernels' sockets are, nor to the grader's code and hidden
    tests, as an install of the book into the venv would give (exercise 1 answers wrong if it sees one)."""
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
    """A flagged answer does not run: its exercise's mark is blank (needs review, never a 0 a gradebook imports),
    so is the row's score, and the row says why; the others are graded as usual."""
    row = graded["sneaky"]
    assert scores(row) == ("", 1, ""), row
    assert row["score"] == "" and row["needs_review"] == "exercise 1; exercise 3", row
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
        timeout=60,
        jobs=2,
        sandbox=IN_CI or not sandbox_problem(),
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


# Attacks on an IPython kernel's own machinery. Answers ran in the notebook's kernel until issue #41; they now run
# in a process of their own that has no IPython (isolated.py), where these cannot even start.
KERNEL_ONLY = {"input-transformer", "post-run-cell-hook"}


@pytest.mark.parametrize("attack", ATTACKS)
def test_an_answer_that_tampers_with_the_kernel_scores_zero(attacks, attack):
    """Each attack works inside the process where the answer runs (a check made there passes, so the test can fail),
    or, for an attack on the kernel's machinery, finds no kernel there; it still scores 0 when it is run, because the
    answer is judged in the grader's process; and by default the scan holds it, so it does not run at all."""
    held, run, ran = attacks[attack]
    if attack in KERNEL_ONLY:
        errors = [r.get("error") or "" for r in run["records"].get(1, [])]
        assert any("get_ipython" in e for e in errors), (attack, run["records"])
    else:
        assert kernel_concluded_pass(run), (
            f"{attack}: no longer fools a check made where the answer runs, so this test shows nothing: "
            f"{run['records']}"
        )
    assert ran["exercise_1"] == 0, (
        f"{attack}: run, it got the mark from the judge outside the kernel: {ran}"
    )
    assert held["exercise_1"] == "" and "held for review" in held["reasons"], held
    assert held["flags"], held


def test_an_invalid_notebook_is_a_row(graded):
    row = graded["garbled"]
    assert row["score"] == 0 and "not a valid notebook" in row["notes"]


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
    assert [r["Chapter 99"] for r in canvas if r["SIS Login ID"] == "sneaky"] == [""], (
        "held: a blank score, which Canvas leaves alone, not a 0"
    )
    with open(tmp_path / "moodle.csv", newline="") as f:
        moodle = {r["Username"]: r for r in csv.DictReader(f)}
    assert moodle["ada"]["Chapter 99"] == "3"
    assert moodle["ada"]["Feedback"] == "all exercises passed"
    assert "timed out" in moodle["looping"]["Feedback"]
    assert moodle["sneaky"]["Chapter 99"] == ""
    assert "needs review" in moodle["sneaky"]["Feedback"]
    assert "RUN_FLAGGED" not in moodle["sneaky"]["Feedback"], (
        "instructor text stays in grades.csv"
    )
    assert "imports builtins" not in moodle["sneaky"]["Feedback"]


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
    options = dict(timeout=60, jobs=2, sandbox=False, **toy)
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
    assert held["exercise_1"] == "" and "held for review" in held["reasons"], held


def test_a_right_answer_leaves_the_watch_quiet(patches):
    held, ran = patches["right"]
    assert held["exercise_1"] == ran["exercise_1"] == 1, (held, ran)
    assert not held["flags"], held


def test_crafted_submissions_get_the_marks_recorded(graded, attacks, patches):
    """Every crafted submission above gets the marks, holds, reasons, notes and flags recorded (tests/marks/)."""
    fields = (
        "score",
        "needs_review",
        "reasons",
        "feedback",
        "notes",
        "flags",
        "self_checks",
    )

    def kept(row) -> dict:
        marks = {k: v for k, v in row.items() if k.startswith("exercise_")}
        return {"student": row["student"], **marks, **{k: row[k] for k in fields}}

    rows = [kept(graded[name]) for name in sorted(graded)]
    rows += [
        kept(row) for name in ATTACKS for row in (attacks[name][0], attacks[name][2])
    ]
    rows += [kept(row) for name in PATCHES for row in patches[name]]
    same_marks_as_recorded("crafted", rows)


def test_a_missing_folder_of_submissions_is_one_sentence(tmp_path):
    with pytest.raises(SystemExit, match="No folder .*: give SUBMISSIONS="):
        grade(tmp_path / "missing", "02_identity_and_zero_init")


def test_a_kernel_that_cannot_start_stops_the_grading(tmp_path, monkeypatch):
    """A sandbox that runs `true` but in which no kernel starts (issue #41: every row was 0 and the exit code 0)
    stops the grading, before any submission or the reference runs, with a message and a non-zero exit."""
    from booktools.grading import grade as grader

    toy = toy_chapter(
        tmp_path_factory_for(tmp_path), TOY_HIDDEN, TOY_TEMPLATE, ["import math", *FULL]
    )
    folder = tmp_path / "submissions"
    folder.mkdir()
    nbformat.write(toy_notebook("import math", *FULL), folder / "ada.ipynb")
    # `true` passes, anything else (the kernel's command line) exits 3 at once
    broken = ["sh", "-c", 'test "$1" = true || exit 3; exit 0', "sandbox"]
    monkeypatch.setattr(grader, "sandbox_problem", lambda command=None: None)
    monkeypatch.setattr(grader, "sandbox_command", lambda *a, **k: broken)
    monkeypatch.setattr(
        grader, "reference_records", lambda *a, **k: pytest.fail("the reference ran")
    )
    with pytest.raises(SystemExit) as stop:
        grade(folder, "99_toy", timeout=20, jobs=1, memory_gb=TOY_MEMORY_GB, **toy)
    assert "No kernel starts in the grading sandbox, so nothing was graded" in str(
        stop.value
    )
    assert not (folder / "grades.csv").exists()


def tmp_path_factory_for(tmp_path):
    """A stand-in for pytest's tmp_path_factory inside one test's tmp_path."""

    class Factory:
        n = 0

        def mktemp(self, name):
            Factory.n += 1
            made = tmp_path / f"{name}{Factory.n}"
            made.mkdir()
            return made

    return Factory()


def test_the_command_line_exits_non_zero_where_no_kernel_starts(tmp_path):
    """The same through `python -m booktools.grading` (behind `make grade`): a message on stderr, exit status 1."""
    import subprocess

    from booktools import settings

    folder = tmp_path / "submissions"
    folder.mkdir()
    nbformat.write(toy_notebook("x = 1"), folder / "ada.ipynb")
    # a kernel whose Python does not exist: the kernel spec names sys.executable, so hide it behind a wrong PATH
    # and a kernel spec folder of its own
    kernels = tmp_path / "kernels" / "python3"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(
        '{"argv": ["/no/such/python", "-m", "ipykernel_launcher", "-f", "{connection_file}"], '
        '"display_name": "Python 3", "language": "python"}'
    )
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "booktools.grading",
            str(folder),
            "--chapter",
            "02_identity_and_zero_init",
            "--no-sandbox",
        ],
        cwd=settings.ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**__import__("os").environ, "JUPYTER_PATH": str(tmp_path), "SECRET": "x"},
    )
    assert run.returncode == 1, (run.returncode, run.stdout[-500:], run.stderr[-500:])
    assert "No kernel starts, so nothing was graded" in run.stderr, run.stderr[-1000:]
    assert not (folder / "grades.csv").exists()


def test_the_sandbox_limits_cpu_time_and_processes_in_a_pid_namespace_of_its_own(
    tmp_path,
):
    """RLIMIT_CPU ends a process that spins past its CPU seconds; RLIMIT_NPROC is set inside the kernel's own user
    namespace (so it counts only the kernel's processes); the kernel sees only its own processes."""
    import subprocess

    from booktools.grading.sandbox import FOLDER, runs_folder, sandbox_command

    if why := sandbox_problem():
        unavailable(f"this system cannot make the sandbox: {why}")
    with tempfile.TemporaryDirectory(dir=runs_folder()) as folder:
        prefix = [folder if p == FOLDER else p for p in sandbox_command(2, (), 1, 50)]
        # and the same limits in unshare's sandbox, where bubblewrap makes the one above
        other = sandbox_command(2, (), 1, 50, bubblewrap=False)
        assert other[other.index("prlimit") :] == prefix[prefix.index("prlimit") :]
        looked = subprocess.run(
            [
                *prefix,
                sys.executable,
                "-c",
                "import os, resource\n"
                "print(resource.getrlimit(resource.RLIMIT_CPU)[0], resource.getrlimit(resource.RLIMIT_NPROC)[0],"
                " len([p for p in os.listdir('/proc') if p.isdigit()]))",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        spun = subprocess.run(
            [*prefix, sys.executable, "-c", "while True:\n    pass"],
            capture_output=True,
            timeout=60,
        )
    cpu, nproc, pids = map(int, looked.stdout.split())
    assert (cpu, nproc) == (1, 50) and pids <= 3, looked
    assert spun.returncode != 0, (
        "a process spinning past its CPU seconds was not stopped"
    )


# A toy chapter whose cells take a measurable time: the same submission graded on a quiet machine and under a
# CPU hog must get the same marks (issue #41: on a busy machine a fixed per-cell limit interrupted a correct run).
SLOW_TEMPLATE = [
    "import time\n\n\ndef work(seconds):\n    end = time.process_time() + seconds\n    while time.process_time() < end:\n        pass",
    "work(0.8)  # the chapter's own training, say",
    stub(1, "double"),
    stub(2, "half"),
    stub(3, "third"),
]


SLOW_FULL = [
    "def double(x):\n    work(0.8)\n    return 2 * x",
    FULL[1],
    FULL[2],
]


def hogs(n: int, cpus: set) -> list:
    import os
    import subprocess

    return [
        subprocess.Popen(
            [sys.executable, "-c", "while True:\n    pass"],
            preexec_fn=lambda: os.sched_setaffinity(0, cpus),
        )
        for _ in range(n)
    ]


def test_marks_under_load_equal_marks_at_rest(tmp_path_factory):
    """Each cell of a submission may run 10 times as long as the same cell of the reference took in the same grading
    run (at least a floor, here 2 s so that the toy's 0.8 s of CPU matters): a machine busy with other work slows
    both alike. With a fixed limit instead (3.5 s, timeout_multiple=0), the same toy scored 3/3 at rest and 0/3
    under the hog, the interrupt leaving torch half-initialised for the later tests (seen when this was written)."""
    import os

    toy = toy_chapter(
        tmp_path_factory,
        TOY_HIDDEN,
        SLOW_TEMPLATE,
        [*SLOW_TEMPLATE[:2], *SLOW_FULL],
    )
    folder = tmp_path_factory.mktemp("submissions")
    nbformat.write(toy_notebook(*SLOW_TEMPLATE[:2], *SLOW_FULL), folder / "ada.ipynb")
    options = dict(timeout=120, jobs=1, sandbox=False, timeout_floor=2, **toy)
    (quiet,) = grade(folder, "99_toy", **options)
    # Two hogs on one core, and the grading (which its kernels inherit) on the same core: the kernel gets a third of
    # it, and `make test`'s other worker keeps the other cores.
    mine = os.sched_getaffinity(0)
    core = {max(mine)}
    busy = hogs(2, core)
    os.sched_setaffinity(0, core)
    try:
        (loaded,) = grade(folder, "99_toy", **options)
    finally:
        os.sched_setaffinity(0, mine)
        for p in busy:
            p.kill()
            p.wait()
    assert quiet["score"] == 3, quiet
    assert scores(loaded) == scores(quiet) and loaded["reasons"] == quiet["reasons"], (
        quiet,
        loaded,
    )


def test_a_reference_that_runs_over_its_time_stops_the_grading(tmp_path_factory):
    toy = toy_chapter(
        tmp_path_factory,
        TOY_HIDDEN,
        TOY_TEMPLATE,
        ["import time\ntime.sleep(30)", *FULL],
    )
    folder = tmp_path_factory.mktemp("submissions")
    nbformat.write(toy_notebook("import math", *FULL), folder / "ada.ipynb")
    with pytest.raises(
        SystemExit, match="did not run through.*TIMEOUT= raises it.*timed out"
    ):
        grade(folder, "99_toy", timeout=2, jobs=1, sandbox=False, **toy)


def test_a_cell_is_given_ten_times_the_reference_s_time_for_it_and_at_least_the_floor():
    from booktools.grading.grade import cell_limits

    cell = nbformat.v4.new_code_cell("train()")
    other = nbformat.v4.new_code_cell("edited()")
    seconds = {("id", cell["id"]): 12.0, ("source", "x = 1"): 0.1}
    limit = cell_limits(seconds, floor=30, multiple=10)
    assert limit(cell) == 120
    assert limit(nbformat.v4.new_code_cell("x = 1")) == 30
    assert limit(other) == 120, "a cell the reference has not gets the longest's limit"
