"""What `make grade` runs: the pristine student version with the student's answers spliced in, never the submitted
notebook itself; and a static scan of those answers for code that tampers with the kernel.

A student's answers are the code that replaces each `raise NotImplementedError("Exercise N ...")` stub (the cell's
text before and after the stub must be unchanged), and the cells tagged `answer` (such as chapter 02's
`PREDICTION`). Every other cell comes from the template, so a cell that patches `json.dumps`, installs an IPython
input transformer or redefines a helper is never run. An edit outside the answers becomes a flag in grades.csv.

The scan flags imports of modules that reach into the interpreter, the functions that run or fetch code by name,
assignments to the attributes of modules, global hooks, the stack's frames, builtins rebound at the top level,
objects that decide for themselves what they equal, and answers that cannot be read on their own (a region that
leaves its function's body runs once spliced in, but cannot be cleared). `uses_forbidden` holds an answer that names
a helper its exercise forbids, or a template definition that does. A flagged answer is held: `make grade` runs the template's stub in its place (the exercise scores 0, and its code
never runs, so it cannot touch the other exercises' tests) and lists it for a person to read. The scan is a filter,
not a wall: code can be written that it does not recognise.
"""

import ast
import builtins
import re
import textwrap

import nbformat

STUB = re.compile(
    r"^[ \t]*raise NotImplementedError\((?P<q>['\"])Exercise (?P<number>\d+)\b.*\n?",
    re.M,
)
ANSWER_TAG = "answer"

# Modules and names that let a few lines rewrite the grader's world; importing or using one is flagged.
FORBIDDEN_MODULES = {
    "builtins",
    "sys",
    "os",
    "IPython",
    "json",
    "importlib",
    "ctypes",
    "subprocess",
    "inspect",
    "gc",
    "__main__",  # the notebook's namespace, where the helpers the tests could call live
    "types",
    "ipykernel",
    "traitlets",
    "atexit",
    "runpy",
    "marshal",
    "traceback",
    # what fetches or runs code by a string, or reroutes what the kernel prints
    "pickle",
    "pkgutil",
    "code",
    "codeop",
    "contextlib",
    "io",
}
# What an answer may import: the numerical libraries and the plain standard modules an exercise needs. Anything
# else is held for a person to read: the standard library has many more ways to run code from a string or to reach
# the interpreter (timeit, operator.attrgetter, pdb, threading, ...) than a list of forbidden ones would keep up with.
ALLOWED_IMPORTS = {
    "math",
    "cmath",
    "numpy",
    "torch",
    "fractions",
    "decimal",
    "numbers",
    "itertools",
    "functools",
    "collections",
    "statistics",
    "random",
    "copy",
    "heapq",
    "bisect",
    "time",
    "re",
    "matplotlib",
    "sklearn",
    "scipy",
}
# Attributes through which a library hands over the interpreter's own modules (`torch.sys`, `np.os`), the
# environment, or code built from a string.
GATEWAYS = FORBIDDEN_MODULES | {
    "environ",
    "cpp_extension",
    "load_inline",
    "load_library",
    "package",
    "hub",
    "ctypeslib",
    "f2py",
    "fx",
    "multiprocessing",
    "rcParams",
    "use",  # matplotlib.use('module://...') imports a module by name
}
FORBIDDEN_NAMES = {
    "__import__",
    "get_ipython",
    "exec",
    "eval",
    "compile",
    "globals",
    "locals",
    "__builtins__",
}
# The hidden tests' private helpers (booktools/grading/hidden/_common.py): an answer has no business with them, and _SECRET would
# tell it the inputs it is graded on.
HIDDEN_NAMES = {
    "_SECRET",
    "_OBSERVED",
    "_seed",
    "_plain",
    "_observe",
    "_refers_to",
    # what the grader prints results with (grade.PREAMBLE)
    "_grader_json",
    "_grader_sys",
    "_GRADER_DUMPS",
    "_GRADER_WRITE",
    "_GRADER_FLUSH",
    "_GRADER_NAMESPACES",
    "_GRADER_WATCH",
    "_GRADER_CHANGED",
    "_GRADER_LIBRARIES",
    "_GRADER_WATCHED",
    "_GRADER_MISSING",
    "_GRADER_VOLATILE",
}
REFLECTION = {"getattr", "setattr", "delattr", "vars"}
DUNDERS = {
    "__dict__",
    "__globals__",
    "__builtins__",
    "__code__",
    "__class__",
    "__subclasses__",
    "__closure__",
    "__self__",  # `print.__self__` is the builtins module
    "__traceback__",
    "__mro__",
    "mro",  # `Block.mro()[1]` is nn.Module
    "__bases__",
    "__base__",
    # `object.__setattr__(module, ...)`, pickling hooks
    "__setattr__",
    "__delattr__",
    "__getattribute__",
    "__reduce__",
    "__reduce_ex__",
    "__loader__",
    "__spec__",
}
# Ways into the stack's frames, where a hidden test's own variables live while the answer runs.
FRAMES = {
    "tb_frame",
    "tb_next",
    "f_back",
    "f_locals",
    "f_globals",
    "f_builtins",
    "gi_frame",
    "cr_frame",
    "ag_frame",
    "currentframe",
    "_getframe",
    "walk_stack",
    "walk_tb",
    "extract_stack",
}
# Names an answer's top level must not rebind: the grader's own code looks them up in the same namespace.
BUILTINS = set(dir(builtins)) - {
    "_",
    "__doc__",
    "__name__",
    "__spec__",
    "__loader__",
    "__package__",
}
# Methods through which a returned object decides how it compares, converts or answers an attribute lookup: an
# object that equals anything passes any `==` test. An answer has no need to define them.
LYING_METHODS = {
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__bool__",
    "__float__",
    "__int__",
    "__index__",
    "__hash__",
    "__getattr__",
    "__getattribute__",
    "__instancecheck__",
    "__torch_function__",
    "__torch_dispatch__",
}
# Library attributes that change what every later call computes (global module hooks, operator overrides).
GLOBAL_HOOKS = re.compile(r"^(register_module_\w+|library|overrides|_C)$")


def lines(text: str) -> str:
    """Text compared line by line without trailing spaces (editors and Colab differ there)."""
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def stub_cells(template) -> list:
    """[(cell index, exercise number, text before the stub, text after it)] for every stub cell of the template."""
    found = []
    for i, cell in enumerate(template.cells):
        if cell.cell_type == "code":
            for m in STUB.finditer(cell.source):
                found.append(
                    (
                        i,
                        int(m["number"]),
                        cell.source[: m.start()],
                        cell.source[m.end() :],
                    )
                )
    return found


def answer_name(source: str) -> str | None:
    """The name an answer cell assigns first (`PREDICTION = ...` gives PREDICTION)."""
    m = re.search(r"^([A-Za-z_]\w*)\s*=", source, re.M)
    return m[1] if m else None


def rebuild(template, submission, held: frozenset = frozenset()) -> tuple:
    """(notebook to run, {exercise number: the student's code}, flags): the template with the answers spliced in,
    except those of the exercises (and `answer NAME` cells) in `held`, whose template cells stay: a held answer
    never runs."""
    nb = nbformat.from_dict(template)  # a copy
    submitted = [c.source for c in submission.cells if c.cell_type == "code"]
    normalised = [lines(s) for s in submitted]
    used, regions, flags = set(), {}, []
    for i, number, before, after in stub_cells(template):
        head, tail = lines(before), lines(after)
        match = None
        for j in reversed(
            range(len(submitted))
        ):  # the last matching cell: students re-run variants
            text = normalised[j]
            if (
                text.startswith(head)
                and text.endswith(tail)
                and len(text) >= len(head) + len(tail)
            ):
                match = j
                break
        if match is None:
            flags.append(
                f"exercise {number}: its cell was changed outside the part to complete (or deleted), so it was "
                "graded as not done"
            )
            continue
        used.add(match)
        text = normalised[match]
        region = text[len(head) : len(text) - len(tail)] if tail else text[len(head) :]
        regions[number] = region.strip("\n")
        if number not in held:
            nb.cells[i].source = before + region.strip("\n") + "\n" + after
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and ANSWER_TAG in cell.metadata.get("tags", []):
            name = answer_name(cell.source)
            candidates = [
                j
                for j, s in enumerate(submitted)
                if answer_name(s) == name and j not in used
            ]
            if candidates:
                used.add(candidates[-1])
                regions.setdefault(f"answer {name}", submitted[candidates[-1]])
                if f"answer {name}" not in held:
                    cell.source = submitted[candidates[-1]]
    template_code = {lines(c.source) for c in template.cells if c.cell_type == "code"}
    edited = [
        j
        for j, s in enumerate(normalised)
        if j not in used and s and s not in template_code
    ]
    if edited:
        flags.append(
            f"{len(edited)} code cell(s) edited or added outside the exercises; the template's were run instead"
        )
    return nb, regions, flags


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
    """{exercise number: the parameters and local names of the functions its stub's cell defines}: names an
    answer's code may change the attributes of, since they hold what the answer is given or what the template's
    code around it made."""
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
            - {node.name}
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


def scan(
    code: str, modules: set, params: set = frozenset(), defined: set = frozenset()
) -> list:
    """Reasons to look at this answer by hand (empty if none). `params`: the parameters and locals of the function
    the answer is the body of, which hold what it is given; `defined`: the template's classes and functions."""
    tree, top_level = parse_answer(code)
    if tree is None:
        # Spliced into its cell it may still run (a region that leaves the function's body at column 0): what cannot
        # be read cannot be cleared.
        return [
            "cannot be read on its own (a syntax error, or code outside the part to complete)"
        ]
    reasons, modules = [], set(modules)
    if top_level:
        for node in tree.body:
            bound = (
                [node.name]
                if isinstance(
                    node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
                )
                else [a.asname or a.name.split(".")[0] for a in node.names]
                if isinstance(node, (ast.Import, ast.ImportFrom))
                else [
                    name
                    for target in getattr(
                        node, "targets", [getattr(node, "target", None)]
                    )
                    for name in bound_names(target)
                ]
            )
            reasons += [
                f"rebinds the builtin {name}" for name in bound if name in BUILTINS
            ]
    for node in ast.walk(tree):  # what the answer imports itself is a module too
        if isinstance(node, ast.Import):
            modules |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            modules |= {a.asname or a.name for a in node.names}
    for _ in range(3):  # aliases of modules (`t = torch`, `n = t.nn`) are modules too
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and root_name(node.value) in modules:
                modules |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    # Whose attributes an answer may not set: the notebook's classes and functions and the modules
    # (`Block.forward = ...`), unless the answer's function was given one of that name (`params`) or the answer
    # defines one itself (`Block = Block` at the top level still names the notebook's); and a local that holds one
    # of them taken out of a list, tuple or dict (`lib = [nn][0]`, `T, = (torch.Tensor,)`) or looped over.
    notebook = (
        (set(modules) | set(defined))
        - set(params)
        - {
            node.name
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        }
    )
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
    # `type(m) is BNResidualBlock`, `type(x).__name__`: a type looked at, not used to make anything
    inspected = {
        id(operand)
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare)
        for operand in [node.left, *node.comparators]
    } | {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in {"__name__", "__qualname__"}
    }
    made = {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    # a module handed over inside a list, tuple or dict, out of the alias tracking's sight: `[torch][0]`
    hidden_modules = [
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict))
        and any(
            isinstance(element, ast.Name) and element.id in modules
            for element in (node.values if isinstance(node, ast.Dict) else node.elts)
        )
    ]
    reasons += [f"puts a module in a container ({text})" for text in hidden_modules]
    called = {
        id(node.func)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
            reasons += [
                f"imports {m}" for m in mods if m.split(".")[0] not in ALLOWED_IMPORTS
            ]
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            reasons.append(f"uses {node.id}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "type"
            and len(node.args) == 1
            and id(node) not in inspected
        ):  # `type(net.blocks[0].shortcut)(...)`: a class reached through an object, not by its name
            reasons.append("calls type() on an object")
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_MODULES:
            reasons.append(
                f"uses {node.id}"
            )  # the template's own `sys` or `os`, no import needed
        elif isinstance(node, ast.Name) and (
            node.id in HIDDEN_NAMES or re.match(r"_ch\d\d_", node.id, re.I)
        ):  # the chapters' own hidden helpers are named _chNN_...
            reasons.append(f"reaches the hidden tests' {node.id}")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and "GRADE " in node.value
        ):
            reasons.append("writes what looks like the grader's result line")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and "__" in node.value
        ):  # "__glo" + "bals__", "0.__globals__[...]": the first step of a walk through dunders by string
            reasons.append("has a string with a double underscore")
        elif (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and root_name(node) in modules
        ):  # a library's private parts (torch._dynamo, np._core)
            reasons.append(f"reaches {ast.unparse(node)}")
        elif isinstance(node, ast.Attribute) and node.attr in GATEWAYS:
            reasons.append(f"reaches {ast.unparse(node)}")
        elif isinstance(node, ast.keyword) and (node.arg, _constant(node.value)) in {
            ("weights_only", False),
            ("allow_pickle", True),
        }:  # unpickling runs code the file names
            reasons.append(f"unpickles ({node.arg}={_constant(node.value)})")
        elif isinstance(node, ast.Attribute) and node.attr in DUNDERS:
            reasons.append(f"reaches {node.attr}")
        elif isinstance(node, ast.Attribute) and node.attr in FRAMES:
            reasons.append(f"reaches the stack's frames ({node.attr})")
        elif (
            isinstance(node, ast.Attribute)
            and GLOBAL_HOOKS.match(node.attr)
            and root_name(node) in modules
        ):
            reasons.append(f"reaches {ast.unparse(node)}")
        elif (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.name in LYING_METHODS
        ):
            reasons.append(f"defines {node.name}")
        elif (
            isinstance(node, ast.Name)
            and node.id in REFLECTION
            and id(node) not in called
        ):  # `look = getattr`, `map(getattr, ...)`, `partial(getattr, f)`: passed on, out of the scan's sight
            reasons.append(f"passes {node.id} on")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in REFLECTION
        ):
            first = node.args[0] if node.args else None
            name = node.args[1] if len(node.args) > 1 else None
            plain = (  # getattr(block, "alpha"): a constant, public name
                isinstance(name, ast.Constant)
                and isinstance(name.value, str)
                and not name.value.startswith("_")
            )
            if node.func.id != "getattr" or root_name(first) in modules or not plain:
                reasons.append(
                    f"calls {node.func.id} on {ast.unparse(first) if first else 'nothing'}"
                )
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = (
                node.targets
                if isinstance(node, (ast.Assign, ast.Delete))
                else [node.target]
            )
            value = getattr(node, "value", None)
            for target in targets:
                for t in ast.walk(target):
                    if isinstance(t, ast.Attribute) and root_name(t) in modules:
                        reasons.append(f"assigns to {ast.unparse(t)}")
                    elif isinstance(t, ast.Attribute) and root_name(t) is None:
                        # `[torch][0].allclose = ...`, `type(x).__eq__ = ...`: not an object of the answer's own
                        reasons.append(f"assigns to {ast.unparse(t)}")
                    elif t is not target:
                        continue  # `a.b.c = ...` is judged by its whole target, not by `a.b`
                    elif (
                        isinstance(t, ast.Attribute)
                        and (root_name(t) in foreign or root_name(t) in notebook)
                    ):  # `Block.forward = ...`: a class or function of the notebook's, not one the answer was given
                        reasons.append(
                            f"assigns to {ast.unparse(t)}, a part of the notebook's code"
                        )
                    elif (
                        isinstance(t, ast.Attribute)
                        and (
                            t.attr.startswith("__")
                            or isinstance(value, ast.Lambda)
                            or (isinstance(value, ast.Name) and value.id in made)
                        )
                    ):  # `net.forward = lambda x: x`, `m.__call__ = f`: a method replaced
                        reasons.append(f"puts a function in place of {ast.unparse(t)}")
                    elif isinstance(t, ast.Name) and t.id in LYING_METHODS:
                        reasons.append(
                            f"defines {t.id}"
                        )  # `__eq__ = lambda self, other: True`
        elif isinstance(node, ast.Global):
            reasons.append(f"declares global {', '.join(node.names)}")
    return sorted(set(reasons))


def _constant(node):
    return node.value if isinstance(node, ast.Constant) else None


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
