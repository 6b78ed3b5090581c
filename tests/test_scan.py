"""The scan (booktools/grading/scan.py): what it holds an answer for, rule by rule, and what it lets through."""

import pytest

from booktools.build.student import STUDENT_DIR
from booktools.grading.cells import COMMON
from booktools.grading.forbidden import HIDDEN_NAMES
from booktools.grading.scan import suspicions
from booktools.settings import HIDDEN
from conftest import read_notebook, stub, toy_notebook


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
        (
            "    import typing\n    return typing.get_type_hints(f)",
            "reaches typing.get_type_hints",
        ),
        (  # a module reached through a library's `from` import (issue #41)
            "    from torch import sys as s\n    return s.modules",
            "imports torch.sys",
        ),
        ("    from typing import get_type_hints", "imports typing.get_type_hints"),
        ("    return np._core", "reaches np._core"),
        ("    return torch.hub.load('.', 'x', source='local')", "reaches torch.hub"),
    ],
)
def test_the_scan_sees_through_aliases_and_nested_functions(code, reason):
    from booktools.grading.scan import scan

    found = scan(code, {"torch", "np"})
    expected = reason if isinstance(reason, list) else [reason] if reason else []
    assert found == expected, found


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


# One answer per rule of the scan that the rule, and no rule before it, holds (`scan.findings` names the rule).
RULE_EXAMPLES = {
    "unreadable": "return x\n  def broken(:",
    "rebinds_builtins": "len = 3",
    "module_in_a_container": "lib = [torch][0]",
    "unlisted_import": "import shutil",
    "code_by_name": "eval('1 + 1')",
    "type_of_an_object": "cls = type(net.blocks[0])",
    "interpreter_module": "sys.stdout",
    "hidden_helper": "_observe('x', 1, 'why')",
    "forged_result": "text = 'GRADE {}'",
    "dunder_string": "name = '__glo' + 'bals__'",
    "library_private": "torch._dynamo.reset()",
    "gateway": "torch.hub.load('a', 'b')",
    "unpickles": "torch.load('f.pt', weights_only=False)",
    "dunder_attribute": "net.__dict__",
    "stack_frames": "err.__traceback__.tb_frame",
    "global_hook": "torch.overrides.has_torch_function",
    "lying_method": "class Always:\n    def __eq__(self, other):\n        return True",
    "reflection_passed_on": "look = getattr",
    "reflection_call": "setattr(torch, 'allclose', f)",
    "assignment": "torch.allclose = lambda *a, **k: True",
    "global_statement": "def f():\n    global SEED\n    SEED = 1",
}


@pytest.mark.parametrize("rule", sorted(RULE_EXAMPLES))
def test_each_scan_rule_holds_its_example(rule):
    from booktools.grading.scan import findings

    rules = [name for name, _ in findings(RULE_EXAMPLES[rule], {"torch"})]
    assert rule in rules, f"{rule} did not fire on its example; what fired: {rules}"


def test_every_scan_rule_has_an_example_and_a_one_line_why():
    from booktools.grading.scan import NODE_RULES, TREE_RULES

    rules = [*TREE_RULES, *NODE_RULES]
    assert {r.__name__ for r in rules} | {"unreadable"} == set(RULE_EXAMPLES)
    for rule in rules:
        assert rule.__doc__ and "\n" not in rule.__doc__.strip(), (
            f"{rule.__name__}: its why, in one line"
        )


def test_a_plain_answer_fires_no_rule():
    from booktools.grading.scan import findings

    plain = "h = torch.relu(x @ w)\nreturn h + x if residual else h"
    assert findings(plain, {"torch"}) == []


# Idioms of honest answers that an earlier scan held (issue #41): flags are for reading, so none of these is one.
HONEST_IDIOMS = {
    "typing": "    from typing import Dict, List\n    out: Dict[str, List[float]] = {}\n    return out",
    "import typing": "    import typing\n    return typing.cast(float, x)",
    "a docstring that names a dunder": (
        '    """Call the block (its __call__ runs the hooks), not block.forward."""\n    return block(x)'
    ),
    "a boolean index built with numpy": "    a = x.copy()\n    a[np.isfinite(a)] = 0\n    return a",
    "a boolean index built with torch": (
        "    mask = torch.ones(n)\n    mask[torch.rand(n) < r] = 0\n    return mask"
    ),
    "setattr on the block given": '    setattr(block, "scale", s)\n    return block',
    "setattr on an object the answer made": (
        '    net = torch.nn.Linear(2, 2)\n    setattr(net, "weight", torch.nn.Parameter(w))\n    return net'
    ),
}


@pytest.mark.parametrize("idiom", sorted(HONEST_IDIOMS))
def test_honest_idioms_are_not_flagged(idiom):
    from booktools.grading.scan import findings

    found = findings(
        HONEST_IDIOMS[idiom],
        {"torch", "np"},
        {"block", "x", "n", "r", "s", "w"},
        {"Block"},
    )
    assert found == [], found


@pytest.mark.parametrize(
    "code, reason",
    [
        (
            '    setattr(Block, "forward", f)',
            "assigns to Block.forward, a part of the notebook's code",
        ),
        (
            '    setattr(block, "forward", lambda x: x)',
            "puts a function in place of block.forward",
        ),
        ('    setattr(torch, "allclose", f)', "assigns to torch.allclose"),
        ('    setattr(block, "_hooks", f)', "calls setattr on block"),
        ("    setattr(block, name, f)", "calls setattr on block"),
        ("    x[torch.rand(3) < 1] = 0\n    torch.x[0] = 1", "assigns to torch.x"),
        (
            '    """Reads __globals__."""\n    return getattr(f, "__glo" + "bals__")',
            None,
        ),
    ],
)
def test_what_the_idioms_look_like_when_they_patch_is_still_flagged(code, reason):
    from booktools.grading.scan import scan

    found = scan(code, {"torch", "np"}, {"block", "x", "f", "name"}, {"Block"})
    if (
        reason is None
    ):  # the docstring is let through, the string built from pieces is not
        assert "has a string with a double underscore" in found, found
    else:
        assert reason in found, found


def test_an_answer_may_set_attributes_of_its_own_function_only():
    """An answer that counts its calls in an attribute of its own function (`drop_path.calls`) changes nothing of
    the notebook's (issue #41: the red team's third round found it held as if it did); the same assignment to
    another exercise's function is still held."""
    from booktools.grading.cells import exercises

    chapter = "04_ensemble_of_paths"
    template = read_notebook(STUDENT_DIR / f"{chapter}.ipynb")
    source, _ = exercises(chapter)
    cell = "def drop_path(branch, rate, training):\n    {}.calls = 1\n    return branch"
    assert suspicions({5: cell.format("drop_path")}, template, source)[5] == []
    assert suspicions({5: cell.format("kendall_distance")}, template, source)[5] == [
        "assigns to kendall_distance.calls, a part of the notebook's code"
    ]
