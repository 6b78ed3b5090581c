"""Hidden tests for notebooks/10_hyper_connections.ipynb, run by `make grade`, each with its exercise's answer alone in
a process of its own (booktools/grading/isolated.py); they use the notebook's names (torch, composite_gains,
log_sinkhorn, sinkhorn_until, ...).

Each test runs the answer on inputs the notebook never shows and observes what it did (`_observe`, from
booktools/grading/hidden/_common.py): the gains it returns for stacks whose order matters and whose row sums can be negative,
the matrices and iteration counts of Sinkhorn-Knopp on logits of other sizes, scales and tolerances, whether the
input was left alone, and whether a helper the exercise asks to replace by hand is used (`_refers_to`). The grader
compares every observation with the reference solution's, in a process of its own.
booktools/grading/mutants/10_hyper_connections.py holds the wrong answers these tests must reject and the right ones they must
accept.
"""


def exercise_1():
    for helper, name in ((composite_maps, "composite_maps"), (gains, "gains")):
        _observe(
            f"uses {name}",
            _refers_to(composite_gains, helper),
            f"compute the product and its gains by hand: composite_gains must not use {name}",
            student="compute the product and its gains by hand: composite_gains must not use the helpers the exercise names",
        )
    gen = torch.Generator().manual_seed(_seed(101))
    cases = []
    for depth, n, scale, dtype in (
        (2, 2, 0.8, torch.float64),
        (5, 3, 0.6, torch.float64),
        (9, 4, 0.4, torch.float32),
        (4, 5, 1.0, torch.float64),
    ):
        noise = torch.randn(depth, n, n, generator=gen, dtype=torch.float64)
        cases.append(
            (
                (torch.eye(n, dtype=torch.float64) + scale * noise).to(dtype),
                f"depth {depth}, n = {n}",
            )
        )
    # every layer negated, an odd number of them: the composite's sums are mostly negative
    flipped = -(
        torch.eye(3, dtype=torch.float64)
        + 0.3 * torch.randn(3, 3, 3, generator=gen, dtype=torch.float64)
    )
    cases.append((flipped, "three negated layers, n = 3"))
    for stack, where in cases:
        got = composite_gains(stack)
        _observe(f"a dictionary, {where}", isinstance(got, dict), "return a dictionary")
        keys = sorted(got) if isinstance(got, dict) else []
        _observe(
            f"keys, {where}",
            [k for k in keys if k in ("forward", "backward")],
            'the dictionary needs the keys "forward" and "backward"',
        )
        for key in ("forward", "backward"):
            value = got.get(key) if isinstance(got, dict) else None
            try:
                value = float(value)
            except (TypeError, ValueError):
                value = None
            _observe(
                f"{key} gain, {where}",
                value,
                f"for a stack of {where}, the {key} gain of the composite is wrong: multiply each later layer from "
                "the left, and take the largest absolute "
                + ("row" if key == "forward" else "column")
                + " sum",
                close=(1e-4, 1e-6),
                student="a gain of the composite is wrong: multiply each later layer from the left, and take the largest absolute row sum (forward) or column sum (backward)",
            )
        _observe(
            f"input left alone, {where}",
            stack,
            "leave the stack passed in unchanged",
        )


def exercise_2():
    _observe(
        "uses sinkhorn",
        _refers_to(log_sinkhorn, sinkhorn),
        "work in the log domain by hand: log_sinkhorn must not call sinkhorn",
    )
    gen = torch.Generator().manual_seed(_seed(202))
    # the last: every logit above 709, where exp overflows even in float64 (an exp-first answer in float64 passes
    # every other case); the shift leaves Sinkhorn's matrix as it is, so only an answer in logs keeps it finite
    for shape, scale, iters, shift in (
        ((3, 3), 1.0, 1, 0.0),
        ((5, 4, 4), 1.0, 2, 0.0),
        ((2, 5, 5), 2.0, 7, 0.0),
        ((4, 4), 1.0, 20, 0.0),
        ((3, 4, 4), 40.0, 20, 0.0),
        ((2, 3, 3), 120.0, 5, 0.0),
        ((3, 4, 4), 3.0, 20, 750.0),
    ):
        logits = scale * torch.randn(*shape, generator=gen) + shift
        out = log_sinkhorn(logits, iters)
        where = f"logits of shape {shape} and scale {scale:g}, {iters} iterations" + (
            f", shifted by {shift:g}" if shift else ""
        )
        _observe(
            f"finite, {where}",
            bool(torch.isfinite(torch.as_tensor(out)).all()),
            f"for {where}, the result must be finite: stay in logs and take exp only at the end",
            student="the result must be finite: stay in logs and take exp only at the end",
        )
        _observe(
            f"values, {where}",
            torch.nan_to_num(
                torch.as_tensor(out).double(), nan=-1.0, posinf=-1.0, neginf=-1.0
            ),
            f"for {where}, the result should equal Sinkhorn-Knopp's: start from the logits, each iteration "
            "normalises the columns, then the rows, and exp comes last",
            close=(1e-4, 1e-5),
            student="the result should equal Sinkhorn-Knopp's: start from the logits, each iteration normalises the columns, then the rows, and exp comes last",
        )
        _observe(
            f"input left alone, {where}",
            logits,
            "leave the logits passed in unchanged",
        )


def _ch10_until_cases(gen):
    cases = []
    for n, near, tol, cap in (
        (3, True, 1e-2, 1000),
        (4, True, 1e-4, 1000),
        (5, False, 1e-6, 1000),
        (4, False, 1e-9, 1000),
        (4, True, 1e-8, 6),
        (3, False, 0.5, 1000),
    ):
        noise = torch.randn(n, n, generator=gen, dtype=torch.float64)
        logits = (
            4 * torch.eye(n, dtype=torch.float64) + 0.2 * noise if near else 1.5 * noise
        )
        cases.append(
            (
                logits,
                tol,
                cap,
                f"n = {n}, {'near-identity' if near else 'random'} logits, tol {tol:g}, max_iters {cap}",
            )
        )
    return cases


def exercise_3():
    gen = torch.Generator().manual_seed(_seed(303))
    for logits, tol, cap, where in _ch10_until_cases(gen):
        result = sinkhorn_until(logits, tol, max_iters=cap)
        # a list [m, t] is a pair too: the self-check unpacks it as it unpacks a tuple
        pair = isinstance(result, (tuple, list)) and len(result) == 2
        _observe(
            f"a pair, {where}",
            pair,
            "return a pair, (m, t): the matrix and the number of iterations",
        )
        m, t = result if pair else (None, None)
        try:
            t = int(t)
        except (TypeError, ValueError):
            t = None
        _observe(
            f"iterations, {where}",
            t,
            f"for {where}, the iteration count is wrong: stop after the first iteration at which every column "
            "sum is within tol of 1, and return max_iters if that never happens",
            student="the iteration count is wrong: stop after the first iteration at which every column sum is within tol of 1, and return max_iters if that never happens",
        )
        _observe(
            f"matrix, {where}",
            torch.as_tensor(m).double() if m is not None else None,
            f"for {where}, return the matrix after the iterations you count: columns first, then rows, "
            "from exp(logits)",
            close=(1e-7, 1e-9),
            student="return the matrix after the iterations you count: columns first, then rows, from exp(logits)",
        )
