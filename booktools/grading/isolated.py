"""Each exercise's answer in a process of its own, where the helpers it forbids do not exist (issue #41, item 1).

The job a worker (worker.py) runs for exercise N of a chapter, once for any number of answers (`records`). Its context,
run once:
1. the exercise's context: the template's cells, in the notebook's order, that bind a name the answer, the exercise's
   hidden test or a cell already taken names (`context_cells`): its imports, and the classes and data it builds on,
   never a cell after the answer's;
2. the forbidden helpers (`forbidden_helpers`, and whatever of the template's code reaches one: names.reaching) taken
   out of the namespace, with every global that holds one (an instance, a subclass, a network or a list with one),
   then a check that no function or class of that name is still alive anywhere in the process;
   each name then stands for a placeholder that fails when used (so an answer that calls one fails, and
   `_refers_to` in the hidden test sees it named).
Then, for each answer, in a process forked from the context:
3. the answer's cell, as the student wrote it inside the template's;
4. the hidden tests' shared helpers (hidden/_common.py), what the tests draw their inputs from (for the reference
   solution, the number made from the instructor's secret; for a submission, only the seeds the reference's run of
   the exercise drew: `drawn_seeds`), the hidden tests, then exercise N's, whose observations go back to the grader
   as one JSON record, with the seeds it drew;
5. where that test observes apart (`observe_N`), only the arrays the answer's run kept (`_keep`): the test's
   `observe_N` loads, runs and observes them in a process forked from the exercise's context as the hidden test needs
   it (step 1, without what only the answers name), in which no answer has run (`observed_apart`); the record is
   that process's, with the answer's error and the watch.
No other exercise's answer, no other exercise's test, no secret and nothing of the grader is in a submission's
process: a frame walk, a string lookup or an import finds only what the job brought.
"""

import ast
import json
import symtable
from pathlib import Path

import numpy as np

from booktools.grading.cells import COMMON, PREAMBLE, UNCHANGED, WATCH, secret_number
from booktools.grading.judge import OBSERVING
from booktools.grading.names import forbidden_helpers, reaching, top_level_names
from booktools.grading.splice import rebuild, stub_cells
from booktools.grading.worker import Worker, WorkerError
from booktools.settings import HIDDEN


def _statements(source: str) -> list:
    """Every node of a cell's code that runs when the cell runs: not the bodies of its functions and classes."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found, todo = [], list(tree.body)
    while todo:
        node = todo.pop()
        found.append(node)
        if not isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
        ):
            todo += list(ast.iter_child_nodes(node))
    return found


def imports(source: str) -> set:
    """The names a cell binds by importing them (under an `if` or a `try` too)."""
    return {
        (a.asname or a.name).split(".")[0]
        for node in _statements(source)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for a in node.names
    }


def binds(source: str) -> set:
    """The names a cell binds when it runs: definitions, assignments, loop targets, imports."""
    return imports(source) | {
        node.name
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        else node.id
        for node in _statements(source)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        or (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store))
    }


def mentions(source: str, top_only: bool = False) -> set:
    """The global names a piece of code reads and does not bind itself (symtable's view: a function's local
    variables, parameters and comprehension variables are not global; attributes are not names). `top_only`: only
    what runs when the code is defined (decorators, default values), not what its functions read when called."""
    try:
        top = symtable.symtable(source, "<cell>", "exec")
    except SyntaxError:
        return set()
    found, tables = set(), [top]
    while tables:
        table = tables.pop()
        tables += [] if top_only else table.get_children()
        for symbol in table.get_symbols():
            if not symbol.is_referenced():
                continue
            if table is top:
                if not (symbol.is_assigned() or symbol.is_imported()):
                    found.add(symbol.get_name())
            elif symbol.is_global():
                found.add(symbol.get_name())
    return found - binds(source)


def context_cells(
    template, upto: int, wanted: set, forbidden: set = frozenset()
) -> list:
    """The indices of the template's code cells before cell `upto` that the names in `wanted` need: for each name, the
    first cell that imports it, else the last cell before `upto` that binds it; then the cells the names those cells
    read need, in the notebook's order. A forbidden name takes no cell in by itself."""
    where, imported = {}, {}
    for i, cell in enumerate(template.cells[:upto]):
        if cell.cell_type != "code":
            continue
        for name in binds(cell.source):
            where[name] = i  # the last binding before the answer
        for name in imports(cell.source):
            imported.setdefault(
                name, i
            )  # an import is the same wherever it is repeated
    where |= imported
    taken, todo, seen = set(), set(wanted) - set(forbidden), set()
    while todo:
        name = todo.pop()
        seen.add(name)
        if name in where and where[name] not in taken:
            taken.add(where[name])
            todo |= mentions(template.cells[where[name]].source) - seen - set(forbidden)
    return sorted(taken)


# In the job, before the answer: what takes the forbidden helpers out, and what their names stand for after.
ABSENT = """
class _Absent:
    def __init__(self, name, why="write it yourself"):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_why", why)
    def _fail(self, *args, **kwargs):
        raise NameError(f"{self._name} is not available to this exercise: {self._why}")
    __call__ = __getattr__ = __getitem__ = __iter__ = __bool__ = _fail


def _take_out(names):
    import functools as _functools
    import gc as _gc
    import types as _types

    space = globals()
    targets = {n: space[n] for n in names if n in space}

    def held(value, depth=0, seen=None):  # the helper the value is, or holds: as a subclass, an instance, a
        # module, in a container (nested up to 6 deep), a partial, a bound method or a closure
        seen = set() if seen is None else seen
        if id(value) in seen:
            return None
        seen.add(id(value))
        for n, t in targets.items():
            if value is t or isinstance(t, type) and (
                isinstance(value, t) or isinstance(value, type) and issubclass(value, t)
            ):
                return n
        if depth > 6:
            return None
        inside = []
        if hasattr(value, "_modules") and callable(getattr(value, "modules", None)):
            inside = [m for m in value.modules() if m is not value]
        elif isinstance(value, (list, tuple, set, frozenset)):
            inside = list(value)[:1000]
        elif isinstance(value, dict):
            inside = list(value.values())[:1000]
        elif isinstance(value, _functools.partial):
            inside = [value.func, *value.args, *value.keywords.values()]
        elif isinstance(value, _types.MethodType):
            inside = [value.__func__, value.__self__]
        elif isinstance(value, _types.FunctionType):
            inside = [c.cell_contents for c in value.__closure__ or () if c.cell_contents is not c]
            inside += list(value.__defaults__ or ()) + list((value.__kwdefaults__ or {}).values())
        return next((n for n in (held(v, depth + 1, seen) for v in inside) if n), None)

    holders = {}
    for name, value in list(space.items()):
        helper = None if name.startswith("__") else held(value)
        if helper:
            holders[name] = helper
            space.pop(name)
    targets = held = value = None
    _gc.collect()
    alive = sorted({o.__name__ for o in _gc.get_objects()
                    if isinstance(o, (_types.FunctionType, type)) and getattr(o, "__name__", None) in names
                    and getattr(getattr(o, "__code__", None), "co_filename", "<job>") == "<job>"})
    if alive:
        raise RuntimeError(f"the context still holds {alive}: it cannot be graded in isolation")
    for name, helper in holders.items():
        space[name] = _Absent(name) if name == helper else _Absent(
            name, f"it holds {helper}, which this exercise asks you to write yourself"
        )
    for name in names:
        space.setdefault(name, _Absent(name))
"""

DRIVER = """
_OBSERVED.clear()
_KEPT.clear()
try:
    exercise_{n}()
    _error = None
except BaseException as _err:
    _error = f"{{type(_err).__name__}}: {{_err}}"[:300]
_OBSERVED.append({{"key": "unchanged", "value": _GRADER_CHANGED(), "why": {unchanged!r}}})
_drawn = {{str(k): v for k, v in _DRAWN.items()}}
_record = _GRADER_DUMPS({{"exercise": {n}, "observed": _OBSERVED, "error": _error, "seeds": _drawn}})
_result({{"record": _record, **{{"kept/" + _k: _v for _k, _v in _KEPT.items()}}}})
"""

# Where exercise N's hidden test defines `observe_N(kept)`: what runs, in a process forked from the context that no
# answer has run in, for answer {i} of the job: the arrays its run kept (sent as the job's `cases`, "{i}/key"), given
# back to observe_N, which loads, runs and measures them there, and observes.
OBSERVER = """
_OBSERVED.clear()
_kept = {{_k.split("/", 1)[1]: _v for _k, _v in _CASES.items() if _k.split("/", 1)[0] == "{i}"}}
try:
    observe_{n}(_kept)
    _error = None
except BaseException as _err:
    _error = f"{OBSERVING}{{type(_err).__name__}}: {{_err}}"[:300]
_drawn = {{str(k): v for k, v in _DRAWN.items()}}
_result({{"record": _GRADER_DUMPS({{"exercise": {n}, "observed": _OBSERVED, "error": _error, "seeds": _drawn}})}})
"""

# After the shared helpers in a run: the seeds `_prepare_N` drew (in the context's process) join the run's own.
PREPARED = """
if "_PREPARED" in globals():
    _PREPARED, _DRAWN = _PREPARED[0], dict(_PREPARED[1])
"""


def read_by_test(hidden_source: str, number: int) -> set:
    """The global names exercise `number`'s hidden test reads, with the private helpers it calls and what they read,
    and what the hidden tests' definitions read when they are defined (decorators) and their shared helpers read."""
    helpers = {
        node.name: ast.get_source_segment(hidden_source, node)
        for node in ast.parse(hidden_source).body
        if isinstance(node, ast.FunctionDef)
    }
    wanted, todo, read = set(), [f"exercise_{number}"], set()
    todo += [h for h in (f"_prepare_{number}", f"observe_{number}") if h in helpers]
    while todo:
        name = todo.pop()
        read.add(name)
        used = mentions(helpers[name])
        wanted |= used
        todo += [h for h in used if h in helpers and h not in read]
    return (
        wanted | mentions(COMMON.read_text()) | mentions(hidden_source, top_only=True)
    )


def context_source(template, cells: tuple, forbidden: set, answer_cell: int) -> str:
    """The job's context: the template's `cells`, then the forbidden helpers taken out, then the watch on what the
    answer must leave alone (kernel_preamble.py; the names the answer's cell binds are the answer's)."""
    return "\n\n".join(
        [
            *(template.cells[i].source for i in cells),
            ABSENT,
            f"_take_out({sorted(forbidden)!r})",
            PREAMBLE,
            WATCH.format(
                names=sorted(top_level_names(template.cells[answer_cell].source))
            ),
        ]
    )


def keyed(secret, chapter, seeds: dict | None = None) -> str:
    """The line that gives the hidden tests what they draw their inputs from: with `seeds` ({written seed: seed}, as
    the reference's run of the exercise drew them: a submission's run), those seeds and not the secret's number;
    else the secret's number, or nothing without a secret."""
    if seeds is not None:
        return f"_SEEDS = {dict(sorted(seeds.items()))!r}\n"
    return f"_SECRET = {secret_number(secret, chapter)}\n" if secret else ""


def run_source(
    answer: str, hidden_source: str, number: int, secret, chapter, seeds=None
) -> str:
    """What runs after the context for one answer: the answer, then the hidden tests (after it, so that the answer
    cannot define what they use in advance) and exercise `number`'s driver."""
    return "\n\n".join(
        [
            answer,
            COMMON.read_text(),
            keyed(secret, chapter, seeds),
            PREPARED,
            hidden_source,
            DRIVER.format(n=number, unchanged=UNCHANGED),
        ]
    )


def prepare_source(
    hidden_source: str, number: int, secret, chapter, seeds=None
) -> str | None:
    """Where exercise `number`'s hidden test defines `_prepare_N()`, the work it does before any answer, once for
    all the answers of a job (zygote.prepared): its result reaches each run as `_PREPARED`, which the test reads
    when it is defined, with the seeds it drew. It may hold only what the answer is given anyway (the seeds of the
    networks chosen): an answer runs first and can read it."""
    if f"def _prepare_{number}(" not in hidden_source:
        return None
    return "\n\n".join(
        [
            COMMON.read_text(),
            keyed(secret, chapter, seeds),
            hidden_source,
            f"_PREPARED = (_prepare_{number}(), dict(_DRAWN))",
        ]
    )


def observe_source(
    hidden_source: str, number: int, secret, chapter, seeds, index: int
) -> str:
    """What runs after the context to observe the job's answer `index` apart (`OBSERVER`): the hidden tests' shared
    helpers, what they draw from (the same as the answers' runs), the hidden tests, and the observer. No answer."""
    return "\n\n".join(
        [
            COMMON.read_text(),
            keyed(secret, chapter, seeds),
            hidden_source,
            OBSERVER.format(n=number, i=index, OBSERVING=OBSERVING),
        ]
    )


def observed_apart(
    worker: Worker,
    context: str,
    results: list,
    made: list,
    hidden_source: str,
    number: int,
    secret,
    chapter,
    seeds,
    timeout: float,
) -> list:
    """Where exercise `number`'s hidden test defines `observe_N(kept)`: each answer's record made again from the
    arrays its run kept (`_keep`), observed in a process forked from `context` (the exercise's, as the hidden test
    needs it) in which no answer has run, one job for all the answers. A record keeps, of its answer's run, only the
    error and the watch (`unchanged`); its seeds are both runs' (a submission's observer draws what the reference's
    did)."""
    cases, runs, which = {}, [], []
    for i, result in enumerate(results):
        if isinstance(result, WorkerError):
            continue
        cases |= {
            f"{len(runs)}/{k[len('kept/') :]}": v
            for k, v in result.items()
            if k.startswith("kept/")
        }
        runs.append(
            observe_source(hidden_source, number, secret, chapter, seeds, len(runs))
        )
        which.append(i)
    if not runs:
        return made
    seen = worker.run_batch(
        context, runs, cases=cases, timeout=timeout, context_timeout=max(120, timeout)
    )
    merged = list(made)
    for i, result in zip(which, seen):
        observed, answer = record_of(result, number), made[i]
        watch = [o for o in answer.get("observed", []) if o.get("key") == "unchanged"]
        merged[i] = {
            "exercise": number,
            "observed": observed["observed"] + watch,
            "error": answer.get("error") or observed.get("error"),
            "seeds": observed.get("seeds", {}) | answer.get("seeds", {}),
        }
    return merged


def drawn_seeds(reference: dict) -> dict:
    """{exercise: {written seed: seed}}: what the reference's run of each exercise drew (its record's `seeds`), for
    the submissions' runs of it, which get these and never the secret's number."""
    return {
        n: {int(k): int(v) for k, v in found[0].get("seeds", {}).items()}
        for n, found in reference.items()
    }


def tests_of(chapter: str, hidden: Path = HIDDEN) -> str:
    """A chapter's hidden tests as written (booktools/grading/hidden/NN_topic.py), without the shared helpers and
    the secret, which each run adds (`run_source`)."""
    return (Path(hidden) / f"{chapter}.py").read_text()


def stub_indices(template) -> dict:
    """{exercise number: index of its stub's cell} in the student version."""
    return {number: i for i, number, _, _ in stub_cells(template)}


def record_of(result, number: int) -> dict:
    """The record a run's driver handed over, or one of its error."""
    try:
        if isinstance(result, WorkerError):
            raise result
        return json.loads(str(np.asarray(result["record"]).item()))
    except (WorkerError, KeyError, ValueError) as err:
        return {"exercise": number, "observed": [], "error": str(err)[:300]}


def records(
    worker: Worker,
    template,
    answers: dict,
    hidden_source: str,
    secret: str | None,
    chapter: str,
    timeout: float = 120,
    seeds: dict | None = None,
) -> dict:
    """{exercise number: [a record for each answer]} for `answers` ({number: [whole cells' sources]}). The answers
    of an exercise share one job: its context is what the hidden test and any of the answers name, run once, and
    each answer runs in a process of its own forked from it; an answer whose run gave no record has a record of its
    error. `seeds` ({exercise: {written seed: seed}}, `drawn_seeds` of the reference's records): what the runs draw
    their inputs from instead of the secret, which then never reaches their process. Where the exercise's test
    observes apart (`observe_N`), its records are made again by `observed_apart`."""
    found = {}
    cells = stub_indices(template)
    for number, sources in sorted(answers.items()):
        forbidden = reaching(
            template, forbidden_helpers(hidden_source).get(number, set())
        )
        tests_read = read_by_test(hidden_source, number)
        names = tests_read.union(*map(mentions, sources))
        needed = context_cells(template, cells[number], names, forbidden)
        table = None if seeds is None else seeds.get(number, {})
        runs = [
            run_source(source, hidden_source, number, secret, chapter, table)
            for source in sources
        ]
        context = context_source(template, needed, forbidden, cells[number])
        results = worker.run_batch(
            context,
            runs,
            timeout=timeout,
            context_timeout=max(120, timeout),
            prepare=prepare_source(hidden_source, number, secret, chapter, table),
        )
        found[number] = [record_of(result, number) for result in results]
        if f"def observe_{number}(" in hidden_source:
            # its own context: what the hidden test names, not what the answers name (a heavy cell one of them names)
            tests_need = context_cells(template, cells[number], tests_read, forbidden)
            found[number] = observed_apart(
                worker,
                context_source(template, tests_need, forbidden, cells[number]),
                results,
                found[number],
                hidden_source,
                number,
                secret,
                chapter,
                table,
                timeout,
            )
    return found


def solution_sources(instructor, template) -> dict:
    """{exercise number: its cell with the instructor notebook's answer in it}: the instructor notebook read as a
    submission (splice.rebuild), so that the reference's answers run where a student's would."""
    spliced, answers, _ = rebuild(template, instructor)
    stubs = stub_indices(template)
    missing = sorted(set(stubs) - set(answers))
    if missing:
        raise SystemExit(
            f"The instructor notebook has no answer for exercise(s) {missing} of the student version: run `make student`."
        )
    return {number: spliced.cells[i].source for number, i in stubs.items()}
