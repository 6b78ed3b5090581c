"""The names an answer and its template bind and mention, read from their syntax trees: what the scan (scan.py)
judges with, and the helpers an exercise forbids (`forbidden_helpers`, `reaching`, `uses_forbidden`)."""

import ast
import re
import textwrap
from dataclasses import dataclass, field

from booktools.grading.splice import stub_cells

DEFINES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def code_trees(template) -> list:
    """The syntax tree of every code cell of the template that parses."""
    trees = []
    for cell in template.cells:
        if cell.cell_type == "code":
            try:
                trees.append(ast.parse(cell.source))
            except SyntaxError:
                pass
    return trees


def module_names(template) -> set:
    """Names the template binds by import: assigning to their attributes patches a library."""
    names = set()
    for tree in code_trees(template):
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def root_name(node) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def bound_names(target) -> list:
    """The names an assignment target binds: `a`, `a, b`, `[a, *b]`; not `a.b` or `a[0]`, which bind nothing."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for t in target.elts for n in bound_names(t)]
    if isinstance(target, ast.Starred):
        return bound_names(target.value)
    return []


def parse_answer(code: str) -> tuple:
    """(syntax tree, whether it parsed as top-level code) of an answer region; a region inside a function body, with
    a `return`, parses as the body of one. (None, False) if it cannot be read on its own."""
    body = textwrap.dedent(code)
    try:
        return ast.parse(body), True
    except SyntaxError:
        try:
            return ast.parse("def _answer():\n" + textwrap.indent(body, "    ")), False
        except SyntaxError:
            return None, False


def answer_params(template) -> dict:
    """{exercise number: the functions its stub's cell defines, with their parameters and local names}: names an
    answer's code may change the attributes of, since they hold what the answer is given, what the template's code
    around it made, or the answer's own function (`drop_path.calls = ...`)."""
    found = {}
    for i, number, _, _ in stub_cells(template):
        try:
            tree = ast.parse(template.cells[i].source)
        except SyntaxError:
            continue
        found[number] = {
            name
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            for name in local_names(ast.Module(body=[node], type_ignores=[]))
        }
    return found


def local_names(tree) -> set:
    """The names an answer binds itself: assigned, looped over, imported, defined, or its own functions'
    parameters."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names - {"_answer"}


def _hidden_roots(node, visible: set) -> bool:
    """Whether an expression hands over, inside a list, tuple, set or dict display, a name of `visible` (a module or
    an object of the notebook's): `[torch][0]`, `(Block,)`, `{"t": torch}`."""
    return any(
        isinstance(display, (ast.List, ast.Tuple, ast.Set, ast.Dict))
        and any(
            root_name(element) in visible
            for element in (
                display.values if isinstance(display, ast.Dict) else display.elts
            )
            if element is not None
        )
        for display in ast.walk(node)
    )


def definitions(template) -> set:
    """The classes and functions the template defines at its top level: patching one of them changes what the
    notebook and the hidden tests run."""
    return {
        node.name
        for tree in code_trees(template)
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }


def _constant(node):
    return node.value if isinstance(node, ast.Constant) else None


def top_level_names(source: str) -> set:
    """The names a piece of code binds at its top level (defined, assigned); none if it does not parse. Of a
    chapter's hidden tests: their private helpers and the tests themselves, which no answer may name; of an
    answer's cell: the names that are the answer's to bind."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        for target in getattr(node, "targets", [getattr(node, "target", None)]):
            names.update(bound_names(target) if target is not None else [])
    return names


def reaching(template, targets: set) -> set:
    """`targets`, and every function, class or top-level alias the template defines whose code names one of them,
    directly or through another such definition: what an answer may not name where `targets` are forbidden."""
    uses = {}
    for tree in code_trees(template):
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                uses[node.name] = names_in(node) - {node.name}
            elif (
                isinstance(node, ast.Assign)
                and isinstance(node.value, (ast.Name, ast.Attribute))
            ):  # an alias (`tool = Helper`); not data computed with it, whose names are a student's words too
                for name in (n for t in node.targets for n in bound_names(t)):
                    uses[name] = uses.get(name, set()) | names_in(node.value) - {name}
    reach, grown = set(targets), True
    while grown:
        grown = False
        for name, used in uses.items():
            if name not in reach and used & reach:
                reach.add(name)
                grown = True
    return reach


def names_in(tree, strings: bool = False) -> set:
    """Every name and attribute name a syntax tree mentions (a default argument, a class attribute, a
    `functools.partial(...)` and an alias all mention the name they use); with `strings`, every word of its strings
    too (an answer can look a name up by a string; a template's docstrings only talk about names)."""
    return {
        node.id if isinstance(node, ast.Name) else node.attr
        for node in ast.walk(tree)
        if isinstance(node, (ast.Name, ast.Attribute))
    } | {
        word
        for node in ast.walk(tree)
        if strings and isinstance(node, ast.Constant) and isinstance(node.value, str)
        for word in re.findall(r"[A-Za-z_]\w*", node.value)
    }


def forbidden_helpers(hidden_source: str) -> dict:
    """{exercise number: the names of the helpers its hidden test forbids}, read from each `_refers_to(answer,
    Helper)` in `exercise_N`."""
    found = {}
    for node in ast.parse(hidden_source).body:
        m = re.fullmatch(r"exercise_(\d+)", getattr(node, "name", ""))
        if not m:
            continue
        # `for helper, name in ((composite_maps, "composite_maps"), ...)`: each helper the loop goes over
        looped = {}
        for loop in ast.walk(node):
            if isinstance(loop, ast.For) and isinstance(
                loop.iter, (ast.Tuple, ast.List)
            ):
                for item in loop.iter.elts:
                    pairs = (
                        zip(loop.target.elts, item.elts)
                        if isinstance(loop.target, ast.Tuple)
                        and isinstance(item, (ast.Tuple, ast.List))
                        else [(loop.target, item)]
                    )
                    for target, value in pairs:
                        if isinstance(target, ast.Name) and isinstance(value, ast.Name):
                            looped.setdefault(target.id, set()).add(value.id)
        for call in ast.walk(node):
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Name)
                and call.func.id == "_refers_to"
                and len(call.args) == 2
                and isinstance(call.args[1], ast.Name)
            ):
                name = call.args[1].id
                found.setdefault(int(m[1]), set()).update(looped.get(name, {name}))
    return found


def uses_forbidden(code: str, forbidden: set, params: set = frozenset()) -> list:
    """Reasons to hold an answer that names a helper its exercise forbids (`reaching`), read in the grader's process:
    the hidden test's own check (`_refers_to`) runs in the student's kernel, which the answer may have changed. A
    name the answer binds itself (a local variable, or a parameter of its function, `params`) is its own, not the
    helper; a word in a string other than a docstring still counts (`getattr(net, "helper")` looks it up)."""
    tree, _ = parse_answer(code)
    if tree is None:
        return []  # `scan` holds what cannot be read
    own = local_names(tree) | set(params)
    for node in ast.walk(tree):  # a docstring talks about names; it looks nothing up
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            node.value = ast.Constant(None)
    strings = names_in(tree, strings=True) - names_in(tree)
    return [
        f"uses {name}, which the exercise asks you to do without"
        for name in sorted(((names_in(tree) - own) | strings) & forbidden)
    ]


def reaches_hidden(code: str, private: set, params: set = frozenset()) -> list:
    """Reasons to hold an answer that names what its chapter's hidden tests define (`top_level_names` of them),
    other than a name it binds itself or its function was given."""
    tree, _ = parse_answer(code)
    if tree is None:
        return []  # `scan` holds what cannot be read
    return [
        f"reaches the hidden tests' {name}"
        for name in sorted(names_in(tree) & private - local_names(tree) - set(params))
    ]


@dataclass
class Answer:
    """An answer's syntax tree and what the rules need to know of the names in it."""

    tree: ast.AST
    top_level: bool  # parsed as top-level code, not as a function's body
    params: set  # the parameters and locals of the function the answer is the body of
    modules: set = field(
        default_factory=set
    )  # names of modules: imported, or aliases of one
    notebook: set = field(
        default_factory=set
    )  # the template's modules, classes and functions, not given
    foreign: set = field(
        default_factory=set
    )  # locals that hold one of `notebook`'s objects
    inspected: set = field(
        default_factory=set
    )  # ids of the nodes only looked at (`type(m) is Block`)
    made: set = field(
        default_factory=set
    )  # the functions and classes the answer defines
    called: set = field(default_factory=set)  # ids of the names that are called
    docstrings: set = field(
        default_factory=set
    )  # ids of the strings that are statements of their own (docstrings): they run nothing


def read_answer(code: str, modules: set, params: set, defined: set) -> Answer | None:
    """The answer `code` as the rules read it; None if it cannot be read on its own."""
    tree, top_level = parse_answer(code)
    if tree is None:
        return None
    answer = Answer(tree, top_level, set(params), set(modules))
    for node in ast.walk(tree):  # what the answer imports itself is a module too
        if isinstance(node, ast.Import):
            answer.modules |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            answer.modules |= {a.asname or a.name for a in node.names}
    for _ in range(3):  # aliases of modules (`t = torch`, `n = t.nn`) are modules too
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and root_name(node.value) in answer.modules:
                answer.modules |= {
                    t.id for t in node.targets if isinstance(t, ast.Name)
                }
    answer.made = {node.name for node in ast.walk(tree) if isinstance(node, DEFINES)}
    # Whose attributes an answer may not set: the notebook's classes and functions and the modules
    # (`Block.forward = ...`), unless the answer's function was given one of that name (`params`) or the answer
    # defines one itself (`Block = Block` at the top level still names the notebook's); and a local that holds one
    # of them taken out of a list, tuple or dict (`lib = [nn][0]`, `T, = (torch.Tensor,)`) or looped over.
    answer.notebook = (answer.modules | set(defined)) - answer.params - answer.made
    answer.foreign = holders(tree, answer.notebook, answer.params)
    # `type(m) is BNResidualBlock`, `type(x).__name__`: a type looked at, not used to make anything
    answer.inspected = {
        id(operand)
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare)
        for operand in [node.left, *node.comparators]
    } | {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in {"__name__", "__qualname__"}
    }
    answer.docstrings = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    answer.called = {
        id(node.func)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    return answer


def holders(tree, notebook: set, params: set) -> set:
    """The locals that hold one of `notebook`'s objects: assigned from one, taken out of a display, looped over."""
    foreign = set()
    for _ in range(3):
        visible = notebook | foreign
        for node in ast.walk(tree):
            value = (
                node.value
                if isinstance(node, (ast.Assign, ast.AnnAssign))
                else node.iter
                if isinstance(node, (ast.For, ast.comprehension))
                else None
            )
            if value is None or not (
                _hidden_roots(value, visible) or root_name(value) in visible
            ):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            foreign |= {n for t in targets for n in bound_names(t)} - set(params)
    return foreign
