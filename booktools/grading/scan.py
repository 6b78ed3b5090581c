"""A static scan of a student's answers for code that tampers with the kernel, as a table of named rules.

The scan flags imports of modules that reach into the interpreter, the functions that run or fetch code by name,
assignments to the attributes of modules, global hooks, the stack's frames, builtins rebound at the top level,
objects that decide for themselves what they equal, and answers that cannot be read on their own (a region that
leaves its function's body runs once spliced in, but cannot be cleared). `names.uses_forbidden` holds an answer that
names a helper its exercise forbids, or a template definition that does. A flagged answer is held: `make grade`
runs the template's stub in its place (its code never runs, so it cannot touch the other exercises' tests; its mark
is left blank, "needs review", never a 0) and lists it for a person to read. The scan is a filter, not a wall: code
can be written that it does not recognise; and it is for reading, so an honest idiom (`typing`, a docstring, a boolean
index, `setattr` on the answer's own objects) must not fire a rule (tests/test_scan.py).

Each rule is a function with a one-line docstring (why the rule exists). TREE_RULES read the whole answer;
NODE_RULES read one syntax node each, in order, and the first that applies to a node speaks for it (it returns its
reasons, perhaps none; None where it does not apply).
"""

import ast
import re

from booktools.grading.forbidden import (
    ALLOWED_IMPORTS,
    BUILTINS,
    DUNDERS,
    FORBIDDEN_MODULES,
    FORBIDDEN_NAMES,
    FRAMES,
    GATEWAYS,
    GLOBAL_HOOKS,
    HIDDEN_NAMES,
    LYING_METHODS,
    REFLECTION,
)
from booktools.grading.names import (
    DEFINES,
    Answer,
    _constant,
    answer_params,
    bound_names,
    definitions,
    forbidden_helpers,
    module_names,
    reaches_hidden,
    reaching,
    read_answer,
    root_name,
    top_level_names,
    uses_forbidden,
)

UNREADABLE = (
    "cannot be read on its own (a syntax error, or code outside the part to complete)"
)


# --- rules on the whole answer ------------------------------------------------------------------------------------


def rebinds_builtins(answer: Answer) -> list:
    """The grader's own code looks builtins up in the answer's namespace: a top-level answer must not rebind one."""
    if not answer.top_level:
        return []
    reasons = []
    for node in answer.tree.body:
        if isinstance(node, DEFINES):
            bound = [node.name]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound = [a.asname or a.name.split(".")[0] for a in node.names]
        else:
            targets = getattr(node, "targets", [getattr(node, "target", None)])
            bound = [name for target in targets for name in bound_names(target)]
        reasons += [f"rebinds the builtin {name}" for name in bound if name in BUILTINS]
    return reasons


def module_in_a_container(answer: Answer) -> list:
    """A module handed over inside a list, tuple or dict (`[torch][0]`) is out of the alias tracking's sight."""
    return [
        f"puts a module in a container ({ast.unparse(node)})"
        for node in ast.walk(answer.tree)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict))
        and any(
            isinstance(element, ast.Name) and element.id in answer.modules
            for element in (node.values if isinstance(node, ast.Dict) else node.elts)
        )
    ]


TREE_RULES = [rebinds_builtins, module_in_a_container]


# --- rules on one node --------------------------------------------------------------------------------------------


def unlisted_import(node, answer: Answer) -> list | None:
    """Only the numerical libraries and plain standard modules may be imported; the rest has ways to run code."""
    if not isinstance(node, (ast.Import, ast.ImportFrom)):
        return None
    mods = (
        [a.name for a in node.names]
        if isinstance(node, ast.Import)
        else [node.module or ""]
    )
    reasons = [f"imports {m}" for m in mods if m.split(".")[0] not in ALLOWED_IMPORTS]
    # `from torch import sys as s`: the names imported, not only the path
    if isinstance(node, ast.ImportFrom):
        reasons += [
            f"imports {node.module}.{a.name}"
            for a in node.names
            if a.name in GATEWAYS or a.name in FORBIDDEN_NAMES or a.name == "*"
        ]
    return reasons


def code_by_name(node, answer: Answer) -> list | None:
    """exec, eval, __import__, globals() and their kind run or fetch code by a string."""
    if isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
        return [f"uses {node.id}"]
    return None


def type_of_an_object(node, answer: Answer) -> list | None:
    """`type(net.blocks[0].shortcut)(...)` reaches a class through an object, not by its name."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "type"
        and len(node.args) == 1
        and id(node) not in answer.inspected
    ):
        return ["calls type() on an object"]
    return None


def interpreter_module(node, answer: Answer) -> list | None:
    """The template's own `sys` or `os` needs no import to reach into the interpreter."""
    if isinstance(node, ast.Name) and node.id in FORBIDDEN_MODULES:
        return [f"uses {node.id}"]
    return None


def hidden_helper(node, answer: Answer) -> list | None:
    """The hidden tests' private helpers (the chapters' are named _chNN_...) and _SECRET are not an answer's."""
    if isinstance(node, ast.Name) and (
        node.id in HIDDEN_NAMES or re.match(r"_ch\d\d_", node.id, re.I)
    ):
        return [f"reaches the hidden tests' {node.id}"]
    return None


def forged_result(node, answer: Answer) -> list | None:
    """A string with the grader's mark in it is a result line written by hand."""
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and "GRADE " in node.value
    ):
        return ["writes what looks like the grader's result line"]
    return None


def dunder_string(node, answer: Answer) -> list | None:
    """`"__glo" + "bals__"`, `"0.__globals__[...]"`: a walk through dunders by string (a docstring talks, not walks)."""
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and "__" in node.value
        and id(node) not in answer.docstrings
    ):
        return ["has a string with a double underscore"]
    return None


def library_private(node, answer: Answer) -> list | None:
    """A library's private parts (torch._dynamo, np._core) hold its hooks."""
    if (
        isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and root_name(node) in answer.modules
    ):
        return [f"reaches {ast.unparse(node)}"]
    return None


def gateway(node, answer: Answer) -> list | None:
    """`torch.sys`, `os.environ`, `cpp_extension`: attributes that hand over the interpreter or build code."""
    if isinstance(node, ast.Attribute) and node.attr in GATEWAYS:
        return [f"reaches {ast.unparse(node)}"]
    return None


def unpickles(node, answer: Answer) -> list | None:
    """Unpickling runs code the file names."""
    if isinstance(node, ast.keyword) and (node.arg, _constant(node.value)) in {
        ("weights_only", False),
        ("allow_pickle", True),
    }:
        return [f"unpickles ({node.arg}={_constant(node.value)})"]
    return None


def dunder_attribute(node, answer: Answer) -> list | None:
    """`__dict__`, `__globals__`, `__class__`, `mro()`: the ways from an object to everything else."""
    if isinstance(node, ast.Attribute) and node.attr in DUNDERS:
        return [f"reaches {node.attr}"]
    return None


def stack_frames(node, answer: Answer) -> list | None:
    """A hidden test's own variables live in the stack's frames while the answer runs."""
    if isinstance(node, ast.Attribute) and node.attr in FRAMES:
        return [f"reaches the stack's frames ({node.attr})"]
    return None


def global_hook(node, answer: Answer) -> list | None:
    """A library's global hooks and operator overrides change what every later call computes."""
    if (
        isinstance(node, ast.Attribute)
        and GLOBAL_HOOKS.match(node.attr)
        and root_name(node) in answer.modules
    ):
        return [f"reaches {ast.unparse(node)}"]
    return None


def lying_method(node, answer: Answer) -> list | None:
    """An object that decides for itself what it equals (`__eq__`) passes any `==` test."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
        node.name in LYING_METHODS
    ):
        return [f"defines {node.name}"]
    return None


def reflection_passed_on(node, answer: Answer) -> list | None:
    """`look = getattr`, `map(getattr, ...)`: reflection passed on is out of the scan's sight."""
    if (
        isinstance(node, ast.Name)
        and node.id in REFLECTION
        and id(node) not in answer.called
    ):
        return [f"passes {node.id} on"]
    return None


def reflection_call(node, answer: Answer) -> list | None:
    """getattr and its kind on a module, or by a name not constant and public, reach anything (setattr: assigns)."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in REFLECTION
    ):
        return None
    first = node.args[0] if node.args else None
    name = node.args[1] if len(node.args) > 1 else None
    plain = (  # getattr(block, "alpha"): a constant, public name
        isinstance(name, ast.Constant)
        and isinstance(name.value, str)
        and not name.value.startswith("_")
    )
    if node.func.id == "setattr" and plain and len(node.args) == 3:
        # `setattr(block, "scale", s)` on an object of the answer's own is `block.scale = s`: judged as that is
        target = ast.Attribute(value=first, attr=name.value, ctx=ast.Store())
        reason = assigned(target, target, node.args[2], answer)
        return [reason] if reason else []
    if node.func.id != "getattr" or root_name(first) in answer.modules or not plain:
        return [f"calls {node.func.id} on {ast.unparse(first) if first else 'nothing'}"]
    return []


def assignment(node, answer: Answer) -> list | None:
    """Setting an attribute of a library or of the notebook's code patches what the tests run."""
    if not isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
        return None
    targets = (
        node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
    )
    value = getattr(node, "value", None)
    return [
        reason
        for target in targets
        for t in stored(target)
        if (reason := assigned(t, target, value, answer))
    ]


def stored(target) -> list:
    """The nodes of an assignment's target that name what is changed: `a.b[i]`, `a.b` and `a`, but not the index
    `i` (`a[np.isfinite(a)] = 0` changes `a`, not numpy; the index's own nodes are read by the other rules)."""
    found = [target]
    if isinstance(target, (ast.Attribute, ast.Subscript, ast.Starred)):
        found += stored(target.value)
    elif isinstance(target, (ast.Tuple, ast.List)):
        found += [n for element in target.elts for n in stored(element)]
    return found


def assigned(t, target, value, answer: Answer) -> str | None:
    """The reason to hold an assignment to `t`, a node of the assignment's `target`; None if it is harmless."""
    if isinstance(t, ast.Attribute) and root_name(t) in answer.modules:
        return f"assigns to {ast.unparse(t)}"
    if isinstance(t, ast.Attribute) and root_name(t) is None:
        # `[torch][0].allclose = ...`, `type(x).__eq__ = ...`: not an object of the answer's own
        return f"assigns to {ast.unparse(t)}"
    if t is not target:
        return None  # `a.b.c = ...` is judged by its whole target, not by `a.b`
    if (
        isinstance(t, ast.Attribute)
        and (root_name(t) in answer.foreign or root_name(t) in answer.notebook)
    ):  # `Block.forward = ...`: a class or function of the notebook's, not one the answer was given
        return f"assigns to {ast.unparse(t)}, a part of the notebook's code"
    if isinstance(t, ast.Attribute) and (
        t.attr.startswith("__")
        or isinstance(value, ast.Lambda)
        or (isinstance(value, ast.Name) and value.id in answer.made)
    ):  # `net.forward = lambda x: x`, `m.__call__ = f`: a method replaced
        return f"puts a function in place of {ast.unparse(t)}"
    if isinstance(t, ast.Name) and t.id in LYING_METHODS:
        return f"defines {t.id}"  # `__eq__ = lambda self, other: True`
    return None


def global_statement(node, answer: Answer) -> list | None:
    """A `global` statement lets a function's body rebind the notebook's names."""
    if isinstance(node, ast.Global):
        return [f"declares global {', '.join(node.names)}"]
    return None


NODE_RULES = [
    unlisted_import,
    code_by_name,
    type_of_an_object,
    interpreter_module,
    hidden_helper,
    forged_result,
    dunder_string,
    library_private,
    gateway,
    unpickles,
    dunder_attribute,
    stack_frames,
    global_hook,
    lying_method,
    reflection_passed_on,
    reflection_call,
    assignment,
    global_statement,
]


def findings(
    code: str, modules: set, params: set = frozenset(), defined: set = frozenset()
) -> list:
    """[(rule name, reason)] for an answer: what `scan` reports, with the rule that found each reason."""
    answer = read_answer(code, modules, params, defined)
    if answer is None:
        # Spliced into its cell it may still run (a region that leaves the function's body at column 0): what cannot
        # be read cannot be cleared.
        return [("unreadable", UNREADABLE)]
    found = [(rule.__name__, r) for rule in TREE_RULES for r in rule(answer)]
    for node in ast.walk(answer.tree):
        for rule in NODE_RULES:
            reasons = rule(node, answer)
            if reasons is not None:
                found += [(rule.__name__, r) for r in reasons]
                break
    return found


def scan(
    code: str, modules: set, params: set = frozenset(), defined: set = frozenset()
) -> list:
    """Reasons to look at this answer by hand (empty if none). `params`: the parameters and locals of the function
    the answer is the body of, which hold what it is given; `defined`: the template's classes and functions."""
    return sorted({reason for _, reason in findings(code, modules, params, defined)})


def suspicions(answers: dict, template, hidden_source: str) -> dict:
    """{answer key: reasons to hold it}: what the scan flags, and a helper its exercise forbids named anywhere in
    the submission's answers (names.uses_forbidden: read here, since the hidden test's own check runs in the
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
