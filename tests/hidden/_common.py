"""Run before every chapter's hidden tests, in the same kernel (tests/tools/grade.py): private helpers they share.
Names start with an underscore, so that they do not clash with the notebook's.

The tests draw their inputs from seeds written into them, which anyone can read here. `make grade SECRET=...` sets
_SECRET (a number made from the instructor's secret; tests/tools/grade.py) right after this file, and `_seed`
then turns each written seed into one that only the instructor's secret gives: a student who reads these tests
still does not know the inputs a submission is graded on."""

_SECRET = 0  # none: the tests' own seeds


def _seed(written: int) -> int:
    """The seed to draw a test's inputs from: `written` itself without a secret, else one made from both."""
    if not _SECRET:
        return written
    import hashlib

    digest = hashlib.sha256(f"{_SECRET}:{written}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % 2**31


def _refers_to(fn, target) -> bool:
    """Whether `fn`, a function it defines inside, or a function of the notebook it names, refers to `target` by
    any name (an alias too)."""
    import types

    seen, todo = set(), [fn]
    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        codes = [f.__code__] if hasattr(f, "__code__") else []
        while codes:
            code = codes.pop()
            codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
            for name in code.co_names:
                value = f.__globals__.get(name)
                if value is target:
                    return True
                if (
                    isinstance(value, types.FunctionType)
                    and value.__module__ == f.__module__
                ):
                    todo.append(value)
    return False
