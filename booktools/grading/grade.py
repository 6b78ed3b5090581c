"""`make grade SUBMISSIONS=dir CHAPTER=NN_topic`: grade every submitted notebook of one chapter.

What runs is not the submitted notebook but the chapter's student version with the submission's answers spliced
in (the code that replaces each stub, and the cells tagged `answer`; see rebuild.py): a cell added or edited
elsewhere never runs, and is flagged. The answers are also scanned for code that tampers with the kernel: an answer
the scan flags (code that reaches into the interpreter: rebuild.scan) is held, it does not run, its exercise scores
0, and the row says why, for a person to read it (`--run-flagged` grades such answers after review). Each submission
runs in its own kernel, in an empty folder, headless, with a time limit per cell; a cell that raises or loops
forever is recorded and the run goes on. Then the chapter's hidden tests (`booktools/grading/hidden/NN_topic.py`, one
`exercise_N()` per exercise, never shipped to students or the site) run in the same kernel and record what each
answer did, as JSON.

Nothing in that kernel decides a mark, since the answer's code could have patched anything there. The reference
solutions run once more, in a kernel of their own (the instructor notebook, with the same hidden tests), and
`verdict` compares each answer's records with the reference's, here, in the grader's process, by the rules the
reference's records state. Bad submissions become rows, not crashes. Writes a CSV and prints a summary.

The kernel runs in a sandbox made with util-linux's `unshare` and `prlimit`: a user and network namespace of its
own, so it has no network, not even the grader's loopback (kernel and grader talk over Unix sockets instead of
TCP); a mount namespace in which everything is read-only but its own folder, and the book, the submissions, the
reference notebook's folder, the temporary folder (with the other kernels' folders, and so their sockets) and the
home are empty (HIDE_OTHERS); a PID namespace; a throwaway home and working folder; an environment without the
instructor's variables (KERNEL_ENVIRONMENT: no SECRET, no MAKEFLAGS); an address-space limit. It can still read the
other files the instructor's user can: run the grader on a machine or in a container that holds nothing else of
value. Where user
namespaces are blocked (many containers), grading stops with a message that says what to do, and `--no-sandbox`
grades without it.
"""

import argparse
import csv
import hashlib
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat

from booktools import settings
from booktools.execute import inject_parameters, run_notebook
from booktools.grading.rebuild import (
    ANSWER_TAG,
    STUB,
    answer_params,
    definitions,
    forbidden_helpers,
    module_names,
    reaches_hidden,
    reaching,
    rebuild,
    scan,
    top_level_names,
    uses_forbidden,
)
from booktools.settings import GRADE_CELL_TIMEOUT, GRADE_MEMORY_GB, headless

MARK = "GRADE "


# helpers every chapter's tests may use
COMMON = Path(__file__).resolve().parent / "hidden" / "_common.py"


def secret_number(secret: str, chapter: str = "") -> int:
    """The instructor's secret phrase as the number the hidden tests' `_seed` mixes into every seed they draw
    inputs from (booktools/grading/hidden/_common.py): 128 bits, too many to search for from the seeds it gives, and one number
    per chapter, so that a number a kernel leaks tells nothing of the other chapters' inputs; never 0, which means
    no secret."""
    digest = hashlib.sha256(f"{chapter}:{secret}".encode()).digest()
    return int.from_bytes(digest[:16], "big") or 1


def exercises(chapter: str, secret: str | None = None) -> tuple[str, list]:
    """The hidden tests' source (after the shared helpers of booktools/grading/hidden/_common.py and, with a secret, the
    number made from it) and the exercise numbers it covers."""
    path = settings.HIDDEN / f"{chapter}.py"
    if not path.exists():
        raise SystemExit(f"No hidden tests for chapter {chapter!r}: expected {path}.")
    source = path.read_text()
    numbers = sorted(int(n) for n in re.findall(r"^def exercise_(\d+)\(", source, re.M))
    keyed = f"\n_SECRET = {secret_number(secret, chapter)}\n" if secret else ""
    return COMMON.read_text() + keyed + "\n\n" + source, numbers


# The first cell of every graded run, before any answer: what the results are printed with, taken while nothing has
# been patched yet (a bound method keeps its function when its class is patched later), and the watch on what the
# hidden tests observe through. An answer that names these is flagged (rebuild.HIDDEN_NAMES).
PREAMBLE = """\
import json as _grader_json
import sys as _grader_sys

_GRADER_DUMPS = _grader_json.dumps
_GRADER_WRITE = _grader_sys.stdout.write
_GRADER_FLUSH = _grader_sys.stdout.flush


def _GRADER_NAMESPACES(
    _modules=_grader_sys.modules, _vars=vars, _type=type, _isinstance=isinstance, _list=list
):
    \"\"\"[(label, namespace, is a class)]: the libraries' modules and their classes, the builtins, the
    notebook's namespace and the classes it defines.\"\"\"
    found, main = [], _modules["__main__"]
    for name in _GRADER_LIBRARIES:
        module = _modules.get(name)
        if module is None:
            continue
        found.append((name, _vars(module), False))
        for attr, value in _list(_vars(module).items()):
            if _isinstance(value, _type) and _vars(value) is not None:
                found.append((f"{name}.{attr}", _vars(value), True))
    for attr, value in _list(_vars(main).items()):
        if _isinstance(value, _type) and getattr(value, "__module__", None) == "__main__":
            found.append((f"{attr}", _vars(value), True))
    found.append(("__main__", _vars(main), False))
    return found


def _GRADER_WATCH(
    answers,
    _callable=callable,
    _dict=dict,
    _list=list,
    _isinstance=isinstance,
    _hasattr=hasattr,
    _module=type(_grader_sys),
):
    \"\"\"Start watching (keep what each attribute is now) whatever is not watched yet; the names the answers'
    cells bind (`answers`) are theirs to bind.\"\"\"
    for label, namespace, is_class in _GRADER_NAMESPACES():
        kept = _GRADER_WATCHED.setdefault(label, (namespace, is_class, _dict()))[2]
        for attr, value in _list(namespace.items()):
            if attr in kept or f"{label}.{attr}" in _GRADER_VOLATILE:
                continue
            if label == "__main__" and (attr in answers or attr.startswith("_")):
                continue
            # code, not data: a function, a class, a method or property (a descriptor), a module; a counter
            # such as RemovableHandle.next_id changes as the notebook runs
            if _callable(value) or _hasattr(value, "__get__") or _isinstance(value, _module):
                kept[attr] = value


def _GRADER_CHANGED(_sorted=sorted, _callable=callable, _list=list, _hasattr=hasattr):
    \"\"\"What an answer changed in what it should leave alone: an attribute of a library, of a class, or of
    the notebook that now holds another object or none, and a function a class gained.\"\"\"
    changed = []
    for label, (namespace, is_class, kept) in _list(_GRADER_WATCHED.items()):
        for attr, value in _list(kept.items()):
            if namespace.get(attr, _GRADER_MISSING) is not value:
                changed.append(f"{label}.{attr}")
        if is_class:
            changed += [
                f"{label}.{attr}"
                for attr, value in _list(namespace.items())
                if attr not in kept and (_callable(value) or _hasattr(value, "__get__"))
            ]
    return _sorted(changed)[:20]


_GRADER_LIBRARIES = (
    "builtins", "math", "copy", "functools", "itertools", "random", "collections", "numpy", "torch",
    "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.modules.module", "torch.linalg", "torch.func",
    "torch.autograd", "torch.optim", "torch.nn.utils", "torch.utils.checkpoint",
)
# what the kernel itself sets for each cell it runs
_GRADER_VOLATILE = {"builtins.input", "builtins._", "builtins.__", "builtins.___"}
_GRADER_WATCHED = {}
_GRADER_MISSING = object()
"""
WATCH = "_GRADER_WATCH({names!r})\n"
UNCHANGED = (
    "an answer changed a class, a function or a library that the notebook and its tests rely on (such as "
    "assigning to Block.forward or torch.equal): an answer may change only the objects it is given"
)


def answer_cells(nb) -> list:
    """The indices of the code cells that hold a student's answer: a solution region (or its stub), or a cell
    tagged `answer`."""
    return [
        i
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code"
        and (
            ANSWER_TAG in cell.metadata.get("tags", [])
            or "solution" in cell.metadata.get("tags", [])
            or STUB.search(cell.source)
            or "### BEGIN SOLUTION" in cell.source
        )
    ]


def with_preamble(nb, template=None) -> nbformat.NotebookNode:
    """`nb` with PREAMBLE as its first cell, and before each answer's cell a cell that starts watching what the
    template's code has defined by then (`_GRADER_WATCH`): the grading cells report what has changed since.
    `template`: the student version `nb` was rebuilt from, whose stubs say where the answers are (the default:
    `nb`'s own solution markers and tags)."""
    nb = nbformat.from_dict(nb)
    template = nb if template is None else template
    cells = answer_cells(template)
    names = set().union(*(top_level_names(template.cells[i].source) for i in cells))
    for i in reversed(cells):
        nb.cells.insert(i, nbformat.v4.new_code_cell(WATCH.format(names=sorted(names))))
    nb.cells.insert(0, nbformat.v4.new_code_cell(PREAMBLE))
    return nb


def graders_cell(cell) -> bool:
    """Whether a cell is one the grader added before the hidden tests (PREAMBLE, a watch)."""
    return cell.source == PREAMBLE or cell.source.startswith("_GRADER_WATCH(")


def grading_cells(source: str, numbers: list) -> list:
    """The hidden tests' definitions, then a cell per exercise that runs its test and prints what it observed (or
    the error that stopped it) as one JSON line, with what PREAMBLE took before any answer ran."""
    cells = [nbformat.v4.new_code_cell(source)]
    for n in numbers:
        cells.append(
            nbformat.v4.new_code_cell(
                "_OBSERVED.clear()\n"
                "try:\n"
                f"    exercise_{n}()\n"
                "    _error = None\n"
                "except BaseException as _err:  # KeyboardInterrupt too: a timed-out test is a failed test\n"
                "    _error = 'timed out' if isinstance(_err, KeyboardInterrupt) else f'{type(_err).__name__}: {_err}'\n"
                "_OBSERVED.append({'key': 'unchanged', 'value': _GRADER_CHANGED(), "
                f"'why': {UNCHANGED!r}}})\n"
                f"_GRADER_WRITE({chr(10) + MARK!r} + _GRADER_DUMPS({{'exercise': {n}, 'observed': _OBSERVED, "
                "'error': _error and _error[:300]}) + '\\n')\n"
                "_GRADER_FLUSH()\n"
            )
        )
    return cells


def cell_problems(nb, n_submitted: int) -> list:
    """A sentence for each submitted cell that raised or timed out."""
    notes = []
    cells = [c for c in nb.cells[:n_submitted] if not graders_cell(c)]
    for i, cell in enumerate(cells):  # numbered as in the student's notebook
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                what = (
                    "timed out and was interrupted"
                    if out["ename"] == "KeyboardInterrupt"
                    else f"raised {out['ename']}: {out['evalue'][:120]}"
                )
                notes.append(f"cell {i} {what}")
    return notes


def self_checks(nb, n_submitted: int) -> str:
    """What each self-check cell said in the graded run, as the student saw it: "Exercise 1: correct.",
    "Exercise 2: not yet right: ...". They never change the score (the hidden tests do), but they tell an
    instructor where a student's own check and the grade disagree."""
    said = []
    for cell in nb.cells[:n_submitted]:
        if "self-check" not in cell.metadata.get("tags", []):
            continue
        outputs = cell.get("outputs", [])
        text = "".join(o.get("text", "") for o in outputs).strip()
        errors = [o for o in outputs if o.get("output_type") == "error"]
        if errors:
            text = errors[0]["evalue"] or errors[0]["ename"]
        said.append((text.splitlines() or ["no output"])[0][:200])
    return "; ".join(said)


def records(nb, n_submitted: int) -> dict:
    """{exercise number: [what each grading cell printed for it]} from the cells after the first `n_submitted` of an
    executed notebook: JSON as the kernel wrote it, not yet trusted (`verdict` reads it). A grading cell's result
    counts only as one whole line that its own exercise's record fills; any other text in that cell that holds the
    mark (a forged line glued to the start of the real one, a line on stderr) counts as a second result, which
    fails the exercise."""
    found = {}
    for cell in nb.cells[n_submitted:]:
        m = re.search(r"^    exercise_(\d+)\(\)$", cell.source, re.M)
        if not m:
            continue  # the hidden tests' definitions
        n = int(m[1])
        text = "".join(out.get("text", "") for out in cell.get("outputs", []))
        results = []
        for line in text.splitlines():
            try:  # a kernel can print anything: a line that is not a record is no result
                record = (
                    json.loads(line[len(MARK) :]) if line.startswith(MARK) else None
                )
                if int(record["exercise"]) == n:
                    results.append(record)
            except Exception:
                continue
        if text.count(MARK) > len(results):
            results.append(
                {"exercise": n, "observed": [], "error": "more than one result"}
            )
        if results:
            found[n] = results
    return found


def _same(got, expected, rtol: float = 0.0, atol: float = 0.0) -> bool:
    """Whether two JSON values agree: numbers to within atol + rtol |expected| (NaN agrees with NaN; a bool only with
    a bool), lists element by element, anything else exactly."""
    if isinstance(expected, bool) or isinstance(got, bool):
        return type(got) is type(expected) and got == expected
    if isinstance(expected, (int, float)) and isinstance(got, (int, float)):
        if math.isnan(expected) or math.isnan(got):
            return math.isnan(expected) and math.isnan(got)
        if math.isinf(expected) or math.isinf(got):
            return got == expected
        return abs(got - expected) <= atol + rtol * abs(expected)
    if isinstance(expected, list) and isinstance(got, list):
        return len(got) == len(expected) and all(
            _same(g, e, rtol, atol) for g, e in zip(got, expected)
        )
    if isinstance(expected, dict) and isinstance(got, dict):
        return got.keys() == expected.keys() and all(
            _same(got[k], expected[k], rtol, atol) for k in expected
        )
    return type(got) is type(expected) and got == expected


def judged(observation: dict, got) -> bool:
    """Whether the answer's value `got` passes the reference's `observation`, by the rule written there."""
    if "close" in observation:
        rtol, atol = observation["close"]
        return _same(got, observation["value"], rtol, atol)
    if "within" in observation:
        low, high = observation["within"]
        return (
            isinstance(got, (int, float))
            and not isinstance(got, bool)
            and low < got < high
        )
    if "one_of" in observation:
        return any(_same(got, v, 0, 1e-6) for v in observation["one_of"])
    return _same(got, observation["value"])


def verdict(reference: list, answer: list | None) -> tuple:
    """(passed, reason) for one exercise: what the hidden test observed of the answer (`answer`, the records its
    kernel printed) against what it observed of the reference solution (`reference`), in the grader's process.
    Each of the reference's observations in turn, by the reference's own rule: a kernel can say what it saw, never
    how it is judged. An error in the answer's run fails it; a kernel that prints two results for an exercise fails
    it too (something else printed one)."""
    if not answer:
        return False, "the hidden test reported nothing"
    if len(answer) > 1:
        return (
            False,
            "the hidden test's result was printed more than once (something in the kernel printed one)",
        )
    record = answer[0]
    observed = record.get("observed") if isinstance(record, dict) else None
    if not isinstance(observed, list) or not all(
        isinstance(o, dict) and isinstance(o.get("key"), str) for o in observed
    ):
        return False, "the hidden test's result is malformed"
    values = {}
    for o in observed:
        if o["key"] in values:
            return False, f"the hidden test's result is malformed ({o['key']} twice)"
        values[o["key"]] = o.get("value")
    error = record.get("error")
    # the watch first: an answer that changed the notebook's code is told so before anything it got wrong
    for expected in sorted(
        reference[0]["observed"], key=lambda e: e["key"] != "unchanged"
    ):
        if expected["key"] not in values:
            return False, str(error)[:300] if error else expected["why"]
        if not judged(expected, values[expected["key"]]):
            return False, expected["why"]
    if error:
        return False, str(error)[:300]
    return True, "passed"


def reference_problems(reference: dict, numbers: list) -> list:
    """A sentence for each exercise whose hidden test does not pass the reference solution by its own rules."""
    problems = []
    for n in numbers:
        found = reference.get(n)
        if not found or len(found) > 1 or found[0].get("error"):
            problems.append(
                f"exercise {n}: {found[0].get('error') if found else 'no result'}"
            )
            continue
        passed, why = verdict(found, found)
        if not passed:
            problems.append(f"exercise {n}: the reference fails its own test ({why})")
    return problems


def template_of(chapter: str, template: Path | None = None) -> nbformat.NotebookNode:
    path = template or settings.STUDENT_DIR / f"{chapter}.ipynb"
    if not path.exists():
        raise SystemExit(
            f"No student version of {chapter!r} to grade against: expected {path} (make student)."
        )
    return nbformat.read(path, as_version=4)


# A user namespace (to be allowed the rest, as an unprivileged user) with a network namespace (no interface but a
# loopback of its own, which is down) and a mount namespace (HIDE_OTHERS).
NAMESPACES = ["unshare", "--user", "--net", "--map-root-user", "--mount", "--"]
# In the kernel's mount namespace (`sandbox()` passes: the kernel's folder, the folders to keep, --, the folders to
# empty, --, then the kernel's command):
# - every mount is read-only, but the kernel's own folder (its home and TMPDIR are in it): an answer cannot change
#   the venv (a .pth file there would run in the grader), the book, or an earlier run's grades;
# - the folders to empty (`hidden_folders`: the book, with the instructor notebooks' solutions; the submissions; the
#   reference's folder; the temporary folder, with every run's folder, so the other kernels' sockets, through which
#   what they print could be read; the grader's home) are replaced by empty ones, and the kernel's own folder and
#   the folders to keep (the venv and the Python it is made from) are put back where they lie inside one.
# The mounts are made in an outer namespace and the kernel runs in an inner one, where they are locked: it cannot
# unmount them or make them writable. The inner one also has a PID namespace of its own, so the kernel can see and
# signal only its own processes, not the grader's or the other kernels' (which run as the same user);
# --kill-child ends it, and all it started, with the process the grader started.
HIDE_OTHERS = r"""
W="$1"; shift
mount -t tmpfs tmpfs /mnt && mkdir /mnt/own && mount --bind "$W" /mnt/own || exit 1
i=0
while [ "$1" != -- ]; do
  i=$((i + 1)); mkdir /mnt/$i && mount --bind "$1" /mnt/$i && printf '%s' "$1" > /mnt/$i.path || exit 1; shift
done; shift
for m in $(awk '{print $5}' /proc/self/mountinfo); do
  case "$m" in /mnt|/mnt/*|/proc|/proc/*|/sys|/sys/*|/dev/pts) continue ;; esac
  mount -o remount,bind,ro "$m" || exit 1
done
while [ "$1" != -- ]; do mount -t tmpfs tmpfs "$1" || exit 1; shift; done; shift
mkdir -p "$W" && mount --bind /mnt/own "$W" || exit 1
while [ $i -gt 0 ]; do
  k=$(cat /mnt/$i.path); mkdir -p "$k" 2>/dev/null
  mount --bind /mnt/$i "$k" && mount -o remount,bind,ro "$k" || exit 1; i=$((i - 1))
done
umount -l /mnt
exec unshare --user --map-root-user --mount --pid --fork --kill-child --mount-proc -- "$@"
"""
FOLDER = "{folder}"  # in `sandbox()`'s command: the kernel's own folder


def runs_folder() -> Path:
    """The folder that holds every graded run's folder (the reference's too), and nothing else: what HIDE_OTHERS
    hides from each sandboxed kernel, so it must not hold the venv or the book."""
    folder = Path(tempfile.gettempdir()) / f"rc-grading-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


NO_SANDBOX_HELP = """\
make grade runs each submission in a sandbox: no network, a throwaway home and working folder, and a memory
limit, made with `unshare` (user and network namespaces). This system does not allow it:
  {why}
Inside a container this is common: Docker's default seccomp profile blocks user namespaces, and some
hosts switch them off (on Debian, `sysctl kernel.unprivileged_userns_clone`). Either allow them, or grade
inside a throwaway container that has no network, with the sandbox off:
  docker run --rm -v "$PWD":/book -w /book python:3.11 make venv          # once, with network
  docker run --rm --network none --memory 8g -v "$PWD":/book -w /book python:3.11 \\
    make grade SUBMISSIONS=folder CHAPTER=NN_topic SANDBOX=0"""


NO_SECRET = """\
No SECRET: the hidden tests draw their inputs from the seeds written in booktools/grading/hidden, which are public. For a
grade that counts, pass a phrase only you know: make grade SUBMISSIONS=... CHAPTER=... SECRET='...'"""


def sandbox_problem(command: list = NAMESPACES) -> str | None:
    """None if this system lets an unprivileged user make the sandbox's namespaces, else what went wrong."""
    try:
        run = subprocess.run(
            [*command, "true"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"{type(err).__name__}: {err}"
    return (
        None
        if run.returncode == 0
        else (run.stderr.strip() or f"exit {run.returncode}")
    )


def sandbox(memory_gb: float = GRADE_MEMORY_GB, hide: tuple = ()) -> list:
    """The command that a sandboxed kernel's command line is run under (FOLDER becomes the kernel's folder): a
    read-only system in which the folders in `hide` and the temporary folder are empty (HIDE_OTHERS)."""
    keep = sorted({Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()})
    return [
        *NAMESPACES,
        "sh",
        "-c",
        HIDE_OTHERS,
        "sandbox",
        FOLDER,
        *map(str, keep),
        "--",
        *map(str, hidden_folders([*hide, tempfile.gettempdir(), Path.home()])),
        "--",
        "prlimit",
        f"--as={int(memory_gb * 2**30)}",
        "--",
    ]


def hidden_folders(folders) -> list:
    """The folders to empty in the sandbox: each of `folders` that is a folder, is not the root, and is not inside
    another one (the kernel's own folder and the venv are put back)."""
    found = {Path(f).resolve() for f in folders}
    found = sorted(f for f in found if f.is_dir() and f != Path("/"))
    return [f for f in found if not any(g in f.parents for g in found)]


def execute(nb, timeout: int, workdir: Path, prefix: list) -> list:
    """Run `nb` in place, in `workdir` with a home of its own there and its sockets there too, under `prefix` (the
    sandbox's command with FOLDER in it, or [] for none); notes on a kernel that died or never started."""
    home = workdir / "home"
    home.mkdir()
    try:
        run_notebook(
            nb,
            workdir,
            timeout=timeout,
            allow_errors=True,
            interrupt_on_timeout=True,
            env=kernel_environment(home),
            prefix=[str(workdir) if part == FOLDER else part for part in prefix],
            sockets=workdir,
        )
    except Exception as err:  # the kernel died, or could not start
        why = (
            str(err)[:120]
            or "the kernel died or stopped answering (out of memory?); grade this submission again alone"
        )
        return [f"execution stopped: {type(err).__name__}: {why}"]
    return []


# What a kernel's environment keeps of the grader's: what programs need to run and the book's own settings. Not
# SECRET (the kernel gets only the number made from it), nor MAKEFLAGS (where `make grade SECRET=...` puts it too),
# nor anything else of the instructor's.
KERNEL_ENVIRONMENT = re.compile(
    r"PATH|LANG|TZ|LC_\w+|RC_\w+|MPLBACKEND|OMP_NUM_THREADS|MKL_NUM_THREADS|PYTHONHASHSEED|LD_LIBRARY_PATH"
)


def kernel_environment(home: Path) -> dict:
    """The environment a graded kernel starts with: KERNEL_ENVIRONMENT's variables, a home and a TMPDIR of its own."""
    (home / "tmp").mkdir(exist_ok=True)
    kept = {k: v for k, v in os.environ.items() if KERNEL_ENVIRONMENT.fullmatch(k)}
    return {**kept, "HOME": str(home), "TMPDIR": str(home / "tmp")}


def instructor_notebook(chapter: str) -> Path:
    path = next((p for p in settings.NOTEBOOKS if p.stem == chapter), None)
    if path is None:
        raise SystemExit(
            f"No instructor notebook for chapter {chapter!r} in notebooks/."
        )
    return path


def reference_records(
    chapter: str,
    timeout: int = GRADE_CELL_TIMEOUT,
    parameters: dict | None = None,
    secret: str | None = None,
    reference: Path | None = None,
) -> dict:
    """What the hidden tests observe of the reference solutions: the instructor notebook (`reference`, default
    notebooks/NN_topic.ipynb), run with the same parameters and secret as the submissions, in a kernel of its own
    that no submission touches. Stops with a message if a hidden test does not pass the reference."""
    source, numbers = exercises(chapter, secret)
    nb = with_preamble(
        nbformat.read(reference or instructor_notebook(chapter), as_version=4)
    )
    if parameters:
        nb = inject_parameters(nb, parameters)
    n_notebook = len(nb.cells)
    nb.cells += grading_cells(source, numbers)
    headless()
    # its own kernel, over Unix sockets as the submissions' are, in a folder the sandboxed kernels cannot see
    with tempfile.TemporaryDirectory(dir=runs_folder()) as workdir:
        notes = execute(nb, timeout, Path(workdir), [])
    found = records(nb, n_notebook)
    if problems := notes + reference_problems(found, numbers):
        raise SystemExit(
            f"The hidden tests of {chapter} do not pass the reference solutions, so nothing can be graded against "
            "them: " + "; ".join(problems)
        )
    return found


def run_submission(
    path: Path,
    chapter: str,
    timeout: int,
    parameters: dict | None = None,
    template: Path | None = None,
    sandboxed: list | None = None,
    secret: str | None = None,
    run_flagged: bool = False,
) -> dict:
    """One submission run, not yet scored: {'student', 'records', 'held', 'notes', 'flags', 'self_checks'}; never
    raises for a bad submission. What runs is the chapter's student version (`template`) with the submission's
    answers spliced in (rebuild.py), then the hidden tests, whose records `score` judges. `parameters` (such as
    {"SEED": 7}) are set after the `parameters` cell, as papermill does. `sandboxed`: the command the kernel runs
    under (`sandbox()`), or None for none. `secret`: the instructor's secret phrase, from which the hidden tests draw
    their inputs (None: the seeds written in them). An answer the scan flags is held: the template's stub runs in its
    place, so the exercise scores 0 and the answer's code never runs; `run_flagged` runs it all the same (after a
    person has read it)."""
    source, numbers = exercises(chapter, secret)
    run = {
        "student": path.stem,
        "records": {},
        "held": {},
        "notes": "",
        "flags": "",
        "self_checks": "",
    }
    try:
        submitted = nbformat.read(path, as_version=4)
    except Exception as err:  # not JSON, not a notebook
        run["notes"] = f"not a valid notebook ({type(err).__name__}: {str(err)[:120]})"
        run["invalid"] = True
        return run
    pristine = template_of(chapter, template)
    nb, answers, flags = rebuild(pristine, submitted)
    suspect = suspicions(answers, pristine, source)
    flags += [f"exercise {key}: {why}" for key, whys in suspect.items() for why in whys]
    if not run_flagged:
        run["held"] = {k: w for k, w in suspect.items() if w}
    if run["held"]:
        nb, _, _ = rebuild(pristine, submitted, frozenset(run["held"]))
    nb = with_preamble(nb, pristine)
    if parameters:
        nb = inject_parameters(nb, parameters)
    n_submitted = len(nb.cells)
    nb.cells += grading_cells(source, numbers)
    headless()
    with tempfile.TemporaryDirectory(dir=runs_folder()) as workdir:
        notes = execute(nb, timeout, Path(workdir), sandboxed or [])
    run["records"] = records(nb, n_submitted)
    run["notes"] = "; ".join(cell_problems(nb, n_submitted) + notes)
    run["flags"] = "; ".join(flags)
    run["self_checks"] = self_checks(nb, n_submitted)
    return run


def suspicions(answers: dict, template, hidden_source: str) -> dict:
    """{answer key: reasons to hold it}: what the scan flags, and a helper its exercise forbids named anywhere in
    the submission's answers (rebuild.uses_forbidden: read here, since the hidden test's own check runs in the
    student's kernel). Anywhere, because one answer can hand a helper to another: `net.tool = path_length_share` in
    one exercise, `net.tool(...)` in the one that forbids it."""
    modules = module_names(template)
    forbidden = {
        n: reaching(template, names)
        for n, names in forbidden_helpers(hidden_source).items()
    }
    params, defined = answer_params(template), definitions(template)
    private = top_level_names(hidden_source)
    found = {
        key: scan(code, modules, params.get(key, set()), defined)
        + reaches_hidden(code, private, params.get(key, set()))
        for key, code in answers.items()
    }
    for n, names in forbidden.items():
        for key, code in answers.items():
            where = "" if key == n else f" (in {_called(key)})"
            found.setdefault(n, []).extend(
                why + where
                for why in uses_forbidden(code, names, params.get(key, set()))
            )
    return {key: whys for key, whys in found.items() if key in answers}


def _called(key) -> str:
    """An answer's key as a student reads it: `3`, or `answer PREDICTION` (an answer cell)."""
    if isinstance(key, str):
        return f"the answer cell {key.removeprefix('answer ')}"
    return f"the answer to exercise {key}"


def score(run: dict, reference: dict) -> dict:
    """A submission's row of grades.csv: {'student', 'exercise_N': 0/1, 'score', 'out_of', 'reasons', 'notes',
    'flags', 'self_checks'}, each exercise judged against the reference's records (`verdict`), in this process."""
    numbers = sorted(reference)
    row = {
        "student": run["student"],
        **{f"exercise_{n}": 0 for n in numbers},
        "score": 0,
        "out_of": len(numbers),
    }
    reasons = {}
    for n in numbers:
        if run.get("invalid"):
            reasons[n] = "not graded"
        elif n in run["held"]:
            reasons[n] = (
                f"held for review, not run: the answer {', '.join(run['held'][n])} (read it; if it is harmless, "
                "grade again with RUN_FLAGGED=1)"
            )
        else:
            passed, reasons[n] = verdict(reference[n], run["records"].get(n))
            row[f"exercise_{n}"] = int(passed)
    row["score"] = sum(row[f"exercise_{n}"] for n in numbers)
    row["reasons"] = "; ".join(
        f"exercise {n}: {r}" for n, r in reasons.items() if r != "passed"
    )
    # a passed exercise whose own self-check said it is wrong: an answer that may have talked its way past the
    # hidden test, or a self-check that is too strict; either way a person should read it
    # (or not done: an answer that behaves one way while the notebook runs and another in the hidden test)
    disagreements = [
        f"exercise {n}: passed, but its self-check said it is {said}"
        for n in numbers
        for said in ("not yet right", "not done yet")
        if row[f"exercise_{n}"] and f"Exercise {n}: {said}" in run["self_checks"]
    ]
    # and the other way round: a right answer the hidden test is too strict for (a list where the reference returns
    # a tuple, a float32 tensor where it stores a float), or an answer right only on the notebook's own inputs
    disagreements += [
        f"exercise {n}: its self-check said it is correct, but the hidden test did not pass it"
        for n in numbers
        if not row[f"exercise_{n}"]
        and n not in run["held"]
        and not run.get("invalid")
        and f"Exercise {n}: correct" in run["self_checks"]
    ]
    flags = "; ".join(part for part in [run["flags"], *disagreements] if part)
    row.update(notes=run["notes"], flags=flags, self_checks=run["self_checks"])
    return row


def run_all(
    submissions: Path,
    chapter: str,
    timeout: int = GRADE_CELL_TIMEOUT,
    jobs: int = 2,
    template: Path | None = None,
    memory_gb: float | None = GRADE_MEMORY_GB,
    secret: str | None = None,
    run_flagged: bool = False,
    reference: Path | None = None,
) -> tuple:
    """(the run of every submission in the folder, what the hidden tests observed of the reference solutions),
    `jobs` at a time; each submission in the sandbox unless `memory_gb` is None. The reference solutions run
    alongside, in a kernel of their own (`reference`: the instructor notebook, by default notebooks/NN_topic.ipynb)."""
    paths = sorted(p for p in submissions.iterdir() if p.suffix == ".ipynb")
    if not paths:
        raise SystemExit(f"No .ipynb files in {submissions}.")
    exercises(chapter)  # fail early on an unknown chapter
    template_of(chapter, template)
    reference = reference or instructor_notebook(chapter)
    sandboxed = None
    if memory_gb is not None:
        if why := sandbox_problem():
            raise SystemExit(NO_SANDBOX_HELP.format(why=why))
        # the book (the instructor notebooks hold the solutions), the submissions, the reference's folder
        sandboxed = sandbox(memory_gb, (settings.ROOT, submissions, reference.parent))
        # the whole sandbox once, mounts and all, so that a system that cannot make it stops here with a message,
        # not with every submission's kernel dying
        with tempfile.TemporaryDirectory(dir=runs_folder()) as probe:
            command = [probe if part == FOLDER else part for part in sandboxed]
            if why := sandbox_problem(command):
                raise SystemExit(NO_SANDBOX_HELP.format(why=why))
    n = len(paths)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        expected = pool.submit(
            reference_records, chapter, timeout, None, secret, reference
        )
        runs = list(
            pool.map(
                run_submission,
                paths,
                [chapter] * n,
                [timeout] * n,
                [None] * n,
                [template] * n,
                [sandboxed] * n,
                [secret] * n,
                [run_flagged] * n,
            )
        )
        return runs, expected.result()


def grade(submissions: Path, chapter: str, **options) -> list:
    """A row of grades.csv for every submission in the folder (options: those of `run_all`), each answer judged
    here, in the grader's process, against the reference solutions (`score`)."""
    runs, expected = run_all(submissions, chapter, **options)
    return [score(run, expected) for run in runs]


def write_csv(rows: list, out: Path) -> None:
    with open(out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


# What a learning-management system's gradebook import reads. Each row's student is the submission's file name,
# so name the files by the login the LMS knows (the instructors page has a recipe).
# - Canvas (Grades > Import): Student, ID, SIS User ID, SIS Login ID and Section, then one column per assignment,
#   whose header is the assignment's name; a row is matched by ID, SIS User ID or SIS Login ID.
# - Moodle (Grades > Import > CSV file): any header; at import you map the identifying column (here Username) to
#   the user, the score column to the grade item, and Feedback to its feedback.
LMS_FORMATS = {
    "canvas": lambda row, assignment: {
        "Student": row["student"],
        "ID": "",
        "SIS User ID": "",
        "SIS Login ID": row["student"],
        "Section": "",
        assignment: row["score"],
    },
    "moodle": lambda row, assignment: {
        "Username": row["student"],
        assignment: row["score"],
        "Feedback": "; ".join(
            part
            for part in (row["reasons"], row["flags"] and "flagged for review")
            if part
        )
        or "all exercises passed",
    },
}


def write_lms_csv(rows: list, out: Path, lms: str, assignment: str) -> None:
    """grades.csv's scores as `lms` imports them: one row per student, the score (out of the number of
    exercises) in a column named after the assignment."""
    write_csv([LMS_FORMATS[lms](row, assignment) for row in rows], out)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "submissions",
        type=Path,
        help="folder of submitted .ipynb files, one per student",
    )
    ap.add_argument("--chapter", required=True, help="e.g. 02_identity_and_zero_init")
    ap.add_argument(
        "--timeout",
        type=int,
        default=GRADE_CELL_TIMEOUT,
        help="seconds allowed per cell",
    )
    ap.add_argument("--jobs", type=int, default=2, help="submissions graded at once")
    ap.add_argument(
        "--out", type=Path, help="CSV file (default: SUBMISSIONS/grades.csv)"
    )
    ap.add_argument(
        "--memory-gb",
        type=float,
        default=GRADE_MEMORY_GB,
        help="address space each submission's kernel may use",
    )
    ap.add_argument(
        "--no-sandbox",
        action="store_true",
        help="grade without the sandbox (only inside a throwaway container without network)",
    )
    ap.add_argument(
        "--lms",
        choices=sorted(LMS_FORMATS),
        help="also write SUBMISSIONS/grades-<lms>.csv, for the gradebook import of Canvas or Moodle",
    )
    ap.add_argument(
        "--assignment",
        help="the assignment's name in the LMS, the score column's header (default: the chapter)",
    )
    ap.add_argument(
        "--secret",
        default=os.environ.get("SECRET") or None,
        help="a phrase only you know (default: $SECRET): the hidden tests draw their inputs from it, so a student "
        "who reads the public tests cannot know them",
    )
    ap.add_argument(
        "--run-flagged",
        action="store_true",
        help="run the answers the scan flags instead of holding them (score 0, not run); only once you have read them",
    )
    ap.add_argument(
        "--hidden",
        type=Path,
        help="folder of your own hidden tests, NN_topic.py (default: booktools/grading/hidden)",
    )
    ap.add_argument(
        "--reference",
        type=Path,
        help="the notebook with the reference solutions the answers are judged against (default: "
        "notebooks/NN_topic.ipynb); with --hidden, for tests of your own",
    )
    args = ap.parse_args()
    if args.hidden:
        settings.HIDDEN = args.hidden.resolve()
    if not args.secret:
        print(NO_SECRET, file=sys.stderr)
    rows = grade(
        args.submissions,
        args.chapter,
        timeout=args.timeout,
        jobs=args.jobs,
        memory_gb=None if args.no_sandbox else args.memory_gb,
        secret=args.secret,
        run_flagged=args.run_flagged,
        reference=args.reference,
    )
    out = args.out or args.submissions / "grades.csv"
    write_csv(rows, out)
    if args.lms:
        lms_out = out.with_name(f"{out.stem}-{args.lms}.csv")
        write_lms_csv(rows, lms_out, args.lms, args.assignment or args.chapter)
        print(f"wrote {lms_out}, for {args.lms.capitalize()}'s gradebook import")
    width = max(len(r["student"]) for r in rows)
    for r in rows:
        print(
            f"{r['student']:{width}s}  {r['score']}/{r['out_of']}  {r['reasons'] or 'all passed'}"
            + (f"  [{r['notes']}]" if r["notes"] else "")
            + (f"  FLAGGED for review: {r['flags']}" if r["flags"] else "")
        )
    print(f"wrote {out}")


if __name__ == "__main__":
    sys.exit(main())
