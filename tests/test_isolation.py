"""The attacks of issue #41 on an exercise's forbidden helper, each shown first where the answer shares its namespace
with the notebook, as it did when the hidden tests ran in the student's kernel: there the attack gets the helper's
result and the hidden test's check (`_refers_to`, which reads the names the answer's code uses) does not see it.
Then the same answer is graded as `make grade` grades it, in a process of its own where the helper does not exist
(booktools/grading/isolated.py): the attack scores 0, and the reason says the helper is not available.

The exercise attacked: chapter 04's exercise 2, kendall_distance, which must not call kendall_tau_distance.

Last, a wrong answer that rewrites what the hidden test records after it returns: it passes the test written to
observe in the answer's process, and scores 0 against the test that keeps arrays there and observes them in a
process no answer has run in (`observe_N`, isolated.observed_apart)."""

import sys
import types

import pytest

from booktools.grading import isolated
from booktools.grading.grade import with_parameters
from booktools.grading.judge import verdict
from booktools.grading.worker import Worker
from booktools.settings import HIDDEN, STUDENT_DIR, TEST_SECRET
from conftest import read_notebook

CHAPTER, EXERCISE, HELPER = "04_ensemble_of_paths", 2, "kendall_tau_distance"

ATTACKS = {
    "a generator's frame, and the helper's name in pieces": """
def kendall_distance(order):
    def pieces():
        yield
    space = getattr(getattr(pieces(), "gi_frame"), "f_globals")
    return space["kendall_tau" + "_distance"](order)
""",
    "a traceback's frames": """
import sys as _sys


def kendall_distance(order):
    try:
        raise ValueError
    except ValueError:
        frame = _sys.exc_info()[2].tb_frame
    while "kendall_tau" + "_distance" not in frame.f_globals:
        frame = frame.f_back
    return frame.f_globals["kendall_tau" + "_distance"](order)
""",
    "sys imported under an alias from torch": """
from torch import sys as s


def kendall_distance(order):
    return vars(s.modules["__main__"])["kendall_tau" + "_distance"](order)
""",
    "the garbage collector's list of objects": """
import gc
import types


def kendall_distance(order):
    helper = next(
        o
        for o in gc.get_objects()
        if isinstance(o, types.FunctionType) and o.__name__ == "kendall_tau" + "_distance"
    )
    return helper(order)
""",
}


@pytest.fixture(scope="module")
def template():
    return with_parameters(read_notebook(STUDENT_DIR / f"{CHAPTER}.ipynb"), {"SEED": 0})


@pytest.fixture(scope="module")
def refers_to():
    """The hidden tests' own check, as it ran in the student's kernel."""
    space = {}
    exec((HIDDEN / "_common.py").read_text(), space)
    return space["_refers_to"]


@pytest.mark.parametrize("attack", ATTACKS)
def test_the_attack_reaches_the_helper_in_a_shared_namespace(
    attack, template, refers_to
):
    """The notebook's cell that defines the helper and the answer run in one module, the kernel's __main__."""
    helper_cell = next(c.source for c in template.cells if f"def {HELPER}(" in c.source)
    main = types.ModuleType("__main__")
    was = sys.modules["__main__"]
    sys.modules["__main__"] = main
    try:
        exec("import numpy as np\n" + helper_cell, vars(main))
        exec(ATTACKS[attack], vars(main))
        order = [3, 0, 1, 2]
        answer, helper = main.kendall_distance, main.kendall_tau_distance
        assert answer(order) == helper(order) == 0.5
        assert not refers_to(answer, helper)
    finally:
        sys.modules["__main__"] = was


def test_each_attack_scores_0_in_isolation(template, tmp_path):
    hidden = isolated.tests_of(CHAPTER)
    solutions = isolated.solution_sources(
        read_notebook(STUDENT_DIR.parent / f"{CHAPTER}.ipynb"), template
    )
    with Worker(tmp_path) as worker:
        found = isolated.records(
            worker,
            template,
            {EXERCISE: [solutions[EXERCISE], *ATTACKS.values()]},
            hidden,
            TEST_SECRET,
            CHAPTER,
        )[EXERCISE]
    reference, attacks = found[0], found[1:]
    assert verdict([reference], [reference])[0], "the reference does not pass"
    for name, record in zip(ATTACKS, attacks):
        passed, reason = verdict([reference], [record])
        assert not passed, f"{name}: scored in isolation"
        assert f"{HELPER} is not available" in reason or "StopIteration" in reason, (
            f"{name}: {reason}"
        )


# An answer that behaves well only where it cannot see the number the hidden tests make from the instructor's secret.
PEEK = """

import __main__ as _main

_kendall = kendall_distance


def kendall_distance(order):
    return -1.0 if getattr(_main, "_SECRET", 0) else _kendall(order)
"""


def test_a_submission_draws_from_the_reference_seeds_never_the_secret(
    template, tmp_path
):
    """The reference's run draws its inputs from the secret and its record says which seeds it drew; a submission's
    run gets those seeds (`records(..., seeds=...)`, as `make grade` passes them) and draws the same inputs, and the
    number made from the secret is not in its process. The answer that peeks is right only where it is not."""
    hidden = isolated.tests_of(CHAPTER)
    solution = isolated.solution_sources(
        read_notebook(STUDENT_DIR.parent / f"{CHAPTER}.ipynb"), template
    )[EXERCISE]
    with Worker(tmp_path) as worker:
        reference, peeking = isolated.records(
            worker, template, {EXERCISE: [solution, solution + PEEK]}, hidden,
            TEST_SECRET, CHAPTER,
        )[EXERCISE]  # fmt: skip
        seeds = isolated.drawn_seeds({EXERCISE: [reference]})
        submitted = isolated.records(
            worker, template, {EXERCISE: [solution, solution + PEEK]}, hidden,
            None, CHAPTER, seeds=seeds,
        )[EXERCISE]  # fmt: skip
    assert seeds[EXERCISE] and all(k != v for k, v in seeds[EXERCISE].items())
    assert not verdict([reference], [peeking])[0], (
        "the peek sees no secret: it shows nothing"
    )
    for record in submitted:
        assert verdict([reference], [record]) == (True, "passed"), record


# Chapter 02's exercise 3, zero_init_last_bn: a wrong answer (a zeroed copy returned, the network passed in left as it
# was) that rewrites what the hidden test records after it returns, by replacing the test's `_observe`.
FORGER = """
import copy as _copy

import __main__ as _main


def zero_init_last_bn(net):
    observe = _main._observe

    def forged(key, value, *args, **kwargs):
        if key.startswith("returns the net"):
            value = True
        elif key.startswith("gammas of"):
            value = {name: torch.zeros_like(t) for name, t in value.items()}
        return observe(key, value, *args, **kwargs)

    _main._observe = forged
    net = _copy.deepcopy(net)
    for module in net.modules():
        if isinstance(module, BNResidualBlock):
            nn.init.zeros_(module.f[-1].weight)
    return net
"""

# The same exercise's test as it was written before it kept arrays for a process of its own to observe: it observed
# in the answer's process.
IN_PROCESS = """
def exercise_3():
    for k, net in enumerate(_bn_nets()):
        gammas = {
            f"{name}.f.{len(m.f) - 1}.weight"
            for name, m in net.named_modules()
            if isinstance(m, BNResidualBlock)
        }
        returned = zero_init_last_bn(net)
        _observe(f"returns the net {k}", returned is net, "change the network passed in, and return it")
        after = net.state_dict()
        _observe(f"gammas of net {k}", {name: after[name] for name in gammas}, "zero every last gamma")
"""


def test_records_forged_in_the_answers_process_reach_no_judge(tmp_path):
    """Where the hidden test observed in the answer's process, the answer that replaces `_observe` passes it. Where
    the test keeps arrays and a process in which no answer ran observes them (`observe_3`), the same answer scores 0
    for what it did: the network passed in was not changed."""
    chapter, number = "02_identity_and_zero_init", 3
    template = with_parameters(
        read_notebook(STUDENT_DIR / f"{chapter}.ipynb"), {"SEED": 0}
    )
    solution = isolated.solution_sources(
        read_notebook(STUDENT_DIR.parent / f"{chapter}.ipynb"), template
    )[number]
    apart = isolated.tests_of(chapter)
    assert "def observe_3(" in apart
    start, end = apart.index("def exercise_3():"), apart.index("def exercise_4():")
    in_process = apart[:start] + IN_PROCESS + "\n\n" + apart[end:]
    with Worker(tmp_path) as worker:
        found = {
            how: isolated.records(
                worker,
                template,
                {number: [solution, FORGER]},
                source,
                TEST_SECRET,
                chapter,
            )[number]
            for how, source in (("in process", in_process), ("apart", apart))
        }
    reference, forged = found["in process"]
    assert verdict([reference], [reference]) == (True, "passed")
    assert verdict([reference], [forged]) == (True, "passed"), (
        "the forgery did not work in process"
    )
    reference, forged = found["apart"]
    assert verdict([reference], [reference]) == (True, "passed")
    assert verdict([reference], [forged]) == (
        False,
        "change the network passed in, and return it",
    )
