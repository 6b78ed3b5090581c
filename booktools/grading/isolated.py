"""Each exercise's answer in a process of its own, where the helpers it forbids do not exist (issue #41, item 1).

The job a worker (worker.py) runs for exercise N of a chapter:
1. the hidden tests' shared helpers (hidden/_common.py) and the number made from the instructor's secret;
2. the exercise's context: the template's cells, in the notebook's order, that bind a name the answer, the exercise's
   hidden test or a cell already taken names (`context_cells`): its imports, and the classes and data it builds on,
   never a cell after the answer's;
3. the forbidden helpers (`forbidden_helpers`, and whatever of the template's code reaches one: names.reaching) taken
   out of the namespace, then a check that no function or class of that name is still alive anywhere in the process;
   each name then stands for a placeholder that fails when used (so an answer that calls one fails, and
   `_refers_to` in the hidden test sees it named);
4. the answer's cell, as the student wrote it inside the template's;
5. the hidden tests, then exercise N's, whose observations go back to the grader as one JSON record.
No other exercise's answer, no other exercise's test and nothing of the grader is in the process: a frame walk, a
string lookup or an import finds only what the job brought.
"""

import ast
import json
import symtable
import numpy as np

from booktools.grading.cells import COMMON, secret_number
from booktools.grading.names import forbidden_helpers, reaching
from booktools.grading.splice import stub_cells
from booktools.grading.worker import Worker, WorkerError


def binds(source: str) -> set:
    """The names a cell binds at its top level: definitions, assignments, imports, loop targets."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    found = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found |= {(a.asname or a.name).split(".")[0] for a in node.names}
        else:
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    found.add(sub.id)
    return found


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
            elif symbol.is_global() and not symbol.is_declared_global():
                found.add(symbol.get_name())
            elif symbol.is_declared_global():
                found.add(symbol.get_name())
    return found - (binds(source))


def imports(source: str) -> set:
    """The names a cell binds by importing them."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {
        (a.asname or a.name).split(".")[0]
        for node in tree.body
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for a in node.names
    }


def context_cells(template, upto: int, wanted: set, forbidden: set = frozenset()) -> list:
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
            imported.setdefault(name, i)  # an import is the same wherever it is repeated
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
ABSENT = '''
class _Absent:
    def __init__(self, name):
        object.__setattr__(self, "_name", name)
    def _fail(self, *args, **kwargs):
        raise NameError(f"{self._name} is not available to this exercise: write it yourself")
    __call__ = __getattr__ = __getitem__ = __iter__ = __bool__ = _fail


def _take_out(names):
    import gc as _gc
    import types as _types

    for _name in names:
        globals().pop(_name, None)
    _gc.collect()
    alive = sorted({o.__name__ for o in _gc.get_objects()
                    if isinstance(o, (_types.FunctionType, type)) and getattr(o, "__name__", None) in names
                    and getattr(getattr(o, "__code__", None), "co_filename", "<job>") == "<job>"})
    if alive:
        raise RuntimeError(f"the context still holds {alive}: it cannot be graded in isolation")
    for _name in names:
        globals()[_name] = _Absent(_name)
'''

DRIVER = """
_OBSERVED.clear()
try:
    exercise_{n}()
    _error = None
except BaseException as _err:
    _error = f"{{type(_err).__name__}}: {{_err}}"[:300]
import json as _json
_result({{"record": _json.dumps({{"exercise": {n}, "observed": _OBSERVED, "error": _error}})}})
"""


def job_source(
    template,
    cell: int,
    answer: str,
    number: int,
    hidden_source: str,
    secret: str | None,
    chapter: str,
) -> str:
    """The code a worker runs to grade exercise `number`, whose answer, `answer`, takes the place of template cell
    `cell`."""
    forbidden = reaching(template, forbidden_helpers(hidden_source).get(number, set()))
    tree = ast.parse(hidden_source)
    helpers = {
        node.name: ast.get_source_segment(hidden_source, node)
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
    }
    wanted, todo = set(), [f"exercise_{number}"]
    while todo:  # the test and the private helpers it calls, and what they name
        name = todo.pop()
        used = mentions(helpers[name])
        wanted |= used
        todo += [h for h in used if h in helpers and h not in wanted]
    wanted |= mentions(answer) | mentions(COMMON.read_text())
    wanted |= mentions(hidden_source, top_only=True)  # the other tests' decorators
    cells = context_cells(template, cell, wanted, forbidden)
    keyed = f"_SECRET = {secret_number(secret, chapter)}\n" if secret else ""
    parts = [COMMON.read_text(), keyed]
    parts += [template.cells[i].source for i in cells]
    parts += [ABSENT, f"_take_out({sorted(forbidden)!r})"]
    parts += [answer, hidden_source, DRIVER.format(n=number)]
    return "\n\n".join(parts)


def answer_cells(template) -> dict:
    """{exercise number: index of its stub's cell} in the student version."""
    return {number: i for i, number, _, _ in stub_cells(template)}


def records(
    worker: Worker,
    template,
    answers: dict,
    hidden_source: str,
    secret: str | None,
    chapter: str,
    timeout: float = 120,
) -> dict:
    """{exercise number: [record]} for each exercise of `answers` ({number: the whole cell's source}), each in a job of
    its own; an exercise whose job gave no record has a record of the error."""
    found = {}
    cells = answer_cells(template)
    for number, answer in sorted(answers.items()):
        source = job_source(
            template, cells[number], answer, number, hidden_source, secret, chapter
        )
        try:
            arrays = worker.run(source, timeout=timeout)
            record = json.loads(str(np.asarray(arrays["record"]).item()))
        except (WorkerError, KeyError, ValueError) as err:
            record = {"exercise": number, "observed": [], "error": str(err)[:300]}
        found[number] = [record]
    return found


def solution_sources(instructor, template) -> dict:
    """{exercise number: the instructor notebook's cell for it}, matched to the student version's stubs by cell id."""
    by_id = {c.get("id"): c.source for c in instructor.cells}
    return {
        number: by_id[template.cells[i].get("id")]
        for number, i in answer_cells(template).items()
    }
