"""Run before every chapter's hidden tests, in each exercise's process of its own (booktools/grading/isolated.py):
private helpers they share. Names start with an underscore, so that they do not clash with the notebook's.

A hidden test does not judge the answer where the answer ran: code in a student's kernel can patch anything there,
from `torch.allclose` to the `__eq__` of what it returns. It observes: `_observe` records what the answer did (its
outputs, gradients, types, whether it left its inputs alone) as plain data (numbers, lists, strings). The grader
prints those records as JSON, and in its own process, where no student code has run, compares each one with what the
same test recorded about the reference solution, run in a kernel of its own, by the rule the reference's record
states (exact, close, within a band, one of some values). A submission's kernel says what it saw, never how it is
judged, and to be judged right it must produce what the reference produces on inputs it cannot know in advance.
A test that observes apart goes further: there the answer's process only keeps arrays (`_keep`), and the test's
`observe_N` makes every observation in a process no answer has run in (isolated.py, `observed_apart`).

The tests draw their inputs from seeds written into them, which anyone can read here. `make grade SECRET=...` sets
_SECRET (a number made from the instructor's secret; booktools/grading/cells.py) right after this file in the
reference solutions' runs, and `_seed` then turns each written seed into one that only the instructor's secret gives:
a student who reads these tests still does not know the inputs a submission is graded on. A submission's run never
gets that number: it gets _SEEDS, the seeds the reference's run of the same exercise drew (`_DRAWN`, which its
record carries to the grader), and draws the same inputs from them."""

_SECRET = 0  # none: the tests' own seeds
# in a submission's run: {written seed: seed} as the reference's run of the exercise drew them
_SEEDS = None
_DRAWN = {}  # {written seed: seed} this run has drawn (the reference's reach the grader)
_OBSERVED = []  # what the current test has observed, in order; the grading cell prints it and starts it again
_KEPT = {}  # arrays the current test keeps for its observe_N (`_keep`), which runs in a process of its own


def _seed(written: int) -> int:
    """The seed to draw a test's inputs from: `written` itself without a secret, else one made from both; in a
    submission's run, the one the reference's run drew for it."""
    if _SEEDS is not None:
        if written not in _SEEDS:
            raise RuntimeError(
                f"the hidden test drew from seed {written}, which the reference's run of it did not: report this "
                "to the instructor"
            )
        seed = _SEEDS[written]
    elif not _SECRET:
        seed = written
    else:
        import hashlib

        digest = hashlib.sha256(f"{_SECRET}:{written}".encode()).digest()
        seed = int.from_bytes(digest[:4], "big") % 2**31
    _DRAWN[written] = seed
    return seed


def _plain(value):
    """`value` as JSON data: a tensor as (nested) lists of floats, any other integer or real number (numpy's too) as
    an int or a float, sets sorted, anything else by its type's name."""
    import numbers

    import torch as _torch

    if isinstance(value, _torch.Tensor):
        return value.detach().cpu().double().tolist()
    if value is None or type(value) in (bool, int, float, str):
        return value
    if isinstance(value, numbers.Integral) and not isinstance(
        value, bool
    ):  # numpy's int64 too
        return int(value)
    if isinstance(value, numbers.Real) and not isinstance(
        value, bool
    ):  # numpy's float64 too
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(v) for v in value), key=repr)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return f"<{type(value).__name__}>"


def _raw(key, value):
    """Record raw values (what the answer returned, its inputs after the call, gradients) under `key`, judged by no
    rule of their own: the judge computes what observations name them as `of` from them (booktools/grading/
    measures.py), in its own process, with the reference's raw values under the same key beside them."""
    _OBSERVED.append({"key": str(key), "value": _plain(value), "why": "", "raw": True})


def _keep(key, value):
    """Keep what the answer made, as arrays, for the exercise's `observe_N(kept)`: a test that defines one only runs
    the answer here and keeps what it returned (an output, a gradient, a network's state as `_tensors_of` reads it,
    never a `state_dict()` the answer could hook: a dict's entries go under "key/name"). observe_N then runs in a process of its own that no answer has run in (isolated.py): it
    gets these arrays back as tensors (`_kept_state`), loads them into its own networks, runs and measures them
    there, and only there `_observe`s. Numbers, bools and lists of them are kept as arrays too; anything else by its
    type's name."""
    if "/" in str(key):
        raise ValueError(
            f"a kept key has no '/' in it (a dict's entries go under 'key/name'): {key!r}"
        )
    if isinstance(value, dict):
        for name, v in value.items():
            _KEPT[f"{key}/{name}"] = _kept_array(v)
        return
    _KEPT[str(key)] = _kept_array(value)


def _kept_array(value):
    """A value kept (`_keep`) as a numpy array, a copy; anything that is not numbers by its type's name."""
    import numpy as np
    import torch as _torch

    if isinstance(value, _torch.Tensor):
        value = value.detach().cpu()
        value = (value.float() if value.dtype == _torch.bfloat16 else value).numpy()
    try:  # a copy: what the test does to the tensor later does not change what was kept
        kept = np.array(value)
    except Exception:
        kept = None
    if kept is None or kept.dtype == object:
        kept = np.asarray(f"<{type(value).__name__}>")
    return kept


def _kept_state(kept: dict, key: str) -> dict:
    """In observe_N: the tensors kept under `key` (`_keep(key, a_dict)`), by their names in the dict; {} if none."""
    import torch as _torch

    prefix = f"{key}/"
    return {
        k[len(prefix) :]: _torch.from_numpy(v.copy())
        for k, v in kept.items()
        if k.startswith(prefix) and v.dtype.kind in "biuf"
    }


def _modules_of(module, prefix=""):
    """{state-dict prefix: module} of `module` and every module inside it, read from the modules' own dictionaries:
    no method an answer could replace or hook (`state_dict`, `named_modules`, a state-dict hook) is called."""
    found = {prefix: module}
    for name, child in object.__getattribute__(module, "__dict__")["_modules"].items():
        if child is not None:
            found.update(_modules_of(child, f"{prefix}{name}."))
    return found


def _tensors_of(module):
    """{state-dict name: tensor} of every parameter and buffer inside `module`, as `_modules_of` reads them: the
    network's state as it is, whatever its `state_dict()` would say."""
    found = {}
    for prefix, m in _modules_of(module).items():
        own = object.__getattribute__(m, "__dict__")
        for name, t in (*own["_parameters"].items(), *own["_buffers"].items()):
            if t is not None:
                found[prefix + name] = t
    return found


def _mark(tensors) -> None:
    """After keeping the state of a network the answer was passed: add 1 to each of its float tensors (`tensors`),
    in place, then keep the state of what the answer returned, which shows the mark only if it is that network."""
    import torch as _torch

    with _torch.no_grad():
        for t in tensors:
            if t.is_floating_point():
                t.add_(1.0)


def _shows_mark(state: dict, returned: dict) -> bool:
    """In observe_N: whether `returned` (kept after `_mark`) is `state` (kept before it) with the mark."""
    import torch as _torch

    marked = {n: t + 1.0 if t.is_floating_point() else t for n, t in state.items()}
    return returned.keys() == marked.keys() and all(
        _torch.equal(returned[n], t) for n, t in marked.items()
    )


def _observe(
    key,
    value,
    why,
    close=None,
    within=None,
    one_of=None,
    student=None,
    measure=None,
    of=None,
):
    """Record one thing the answer did, under a `key` (a repeated one is numbered). The grader compares `value`
    with the reference solution's value under the same key, by the reference's rule: equal (the default),
    `close=(rtol, atol)`, `within=(low, high)` (bounds computed by the reference's run), or `one_of=[...]` (to
    within 1e-6). When they differ, `why` is what the instructor reads (grades.csv: it may name the drawn inputs)
    and `student` what the student reads (the LMS's feedback: the property, never the inputs; a constant string,
    which tests/test_hidden_tests.py checks; default: `why`, where `why` is one). `measure`: the name of what the
    judge computes from the raw `value` and the reference's before it applies the rule (booktools/grading/
    measures.py), or from the raw values recorded under the key `of` (`_raw`; `value` is then None): a property
    measured from values is measured where no answer has run."""
    rule = (
        {"close": [float(close[0]), float(close[1])]}
        if close is not None
        else {"within": [float(within[0]), float(within[1])]}
        if within is not None
        else {"one_of": _plain(list(one_of))}
        if one_of is not None
        else {}
    )
    key = str(key)
    repeats = sum(1 for o in _OBSERVED if o["key"].split(" #")[0] == key)
    if repeats:  # the same case drawn twice: a key of its own, the same in the reference's record
        key = f"{key} #{repeats + 1}"
    told = {"student": str(student)} if student is not None else {}
    measured = {"measure": str(measure)} if measure is not None else {}
    if of is not None:
        measured["of"] = str(of)
    _OBSERVED.append(
        {
            "key": key,
            "value": _plain(value),
            "why": str(why),
            **told,
            **rule,
            **measured,
        }
    )


def _holds(value, target, module: str, todo: list, depth: int = 0) -> bool:
    """Whether `value`, a global an answer names, is or holds `target` (`_refers_to`); a function of the notebook's
    (of `module`) goes on the to-do list."""
    import functools
    import types

    if value is target:
        return True
    if depth > 3:
        return False
    inside = None
    if isinstance(value, types.FunctionType) and value.__module__ == module:
        todo.append(value)
    elif isinstance(value, functools.partial):
        inside = [value.func, *value.args, *value.keywords.values()]
    elif isinstance(value, (list, tuple, set, frozenset)):
        inside = list(value)[:1000]
    elif isinstance(value, dict):
        inside = list(value.values())[:1000]
    elif isinstance(target, type):
        return _is_a(value, target)
    return any(_holds(v, target, module, todo, depth + 1) for v in inside or [])


def _is_a(value, target: type) -> bool:
    """Whether `value` is a subclass or an instance of `target`, or a torch.nn.Module with one inside."""
    if isinstance(value, type):
        return issubclass(value, target)
    if isinstance(value, target):
        return True
    modules = getattr(value, "modules", None)
    if hasattr(value, "_modules") and callable(modules):  # a torch.nn.Module
        return any(isinstance(m, target) for m in modules())
    return False


def _code_objects(todo: list):
    """Each (function, code object) of the functions in `todo`: a function's own code, the code of every function
    it defines inside, and for one made with functools.wraps (torch.no_grad(), lru_cache, ...) the function it
    wraps. The caller may add functions to `todo` as it goes; each is walked once."""
    import types

    seen = set()
    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        if callable(getattr(f, "__wrapped__", None)):
            todo.append(f.__wrapped__)
        codes = [f.__code__] if hasattr(f, "__code__") else []
        while codes:
            code = codes.pop()
            codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
            yield f, code


def _refers_to(fn, target) -> bool:
    """Whether `fn`, a function it defines inside, a function it wraps, or a function of the notebook it names,
    refers to `target` by any name (an alias too), or names an object of the notebook's that holds it: an instance
    of it (a network with such a block inside too), a `functools.partial` of it, a list, tuple or dict with it."""
    todo = [fn]
    for f, code in _code_objects(todo):
        for name in code.co_names:
            if name in f.__globals__ and _holds(
                f.__globals__[name], target, fn.__module__, todo
            ):
                return True
    return False
