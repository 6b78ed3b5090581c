"""Hidden tests for notebooks/01_degradation.ipynb, run by `make grade`, each with its exercise's answer alone in a
process of its own (booktools/grading/isolated.py).

Each test runs the answer on inputs the notebook never shows and observes what it did (`_observe`, from
booktools/grading/hidden/_common.py, which runs before every chapter's hidden tests): its values, whether the object passed in
is the one changed, whether a function that the exercise asks to write by hand is used (`_refers_to`). The grader
compares every observation with the reference solution's, in a process of its own. Exercise 2's answer is a block's
weights: its test keeps them as arrays, and `observe_2` observes them in a process no answer has run in.
booktools/grading/mutants/01_degradation.py holds the wrong answers these tests must reject and the right ones they must accept.
"""


def _ch01_gap_runs(gen):
    """Four runs drawn from `gen`, as (what, train, test): error rates in percent, multiples of 0.25 (exact in any
    float type), each run drawn again until it is the case it stands for: a gap that changes from epoch to epoch, a
    last epoch that is not the best one, a test error that ends below the training error, and a run of two epochs.
    Every case has a final gap that differs from the first epoch's (and from the second epoch's where there is a
    third)."""

    def run(epochs, gaps, falling):
        n = epochs or int(torch.randint(3, 8, (), generator=gen))
        train = (
            torch.randint(40, 240, (n,), generator=gen) / 4
        ).tolist()  # 10 % to 60 %
        if falling:
            train.sort(reverse=True)
        gap = torch.randint(int(gaps[0] * 4), int(gaps[1] * 4), (n,), generator=gen) / 4
        return train, [t + g for t, g in zip(train, gap.tolist())]

    def final_gap_differs(train, test):
        last = test[-1] - train[-1]
        return test[0] - train[0] != last and (
            len(train) == 2 or test[1] - train[1] != last
        )

    cases = (
        ("a gap that changes from epoch to epoch", None, (0.25, 20), True, None),
        (
            "a last epoch that is not the best one",
            None,
            (0.25, 20),
            False,
            lambda tr, te: (
                tr[-1] > min(tr)
                and te[-1] > min(te)
                and min(te) - min(tr) != te[-1] - tr[-1]
            ),
        ),
        (
            "a test error below the training error (a negative gap)",
            None,
            (-8, -0.25),
            True,
            None,
        ),
        ("a run of two epochs", 2, (0.25, 20), True, None),
    )
    runs = []
    for what, epochs, gaps, falling, also in cases:
        train, test = run(epochs, gaps, falling)
        while not (
            final_gap_differs(train, test) and (also is None or also(train, test))
        ):
            train, test = run(epochs, gaps, falling)
        runs.append((what, train, test))
    return runs


def exercise_1():
    gen = torch.Generator().manual_seed(_seed(101))
    for what, train, test in _ch01_gap_runs(gen):
        key, why = (
            f"gap {train} {test}",
            "the gap is the final test error minus the final training error, in percentage points (wrong for "
            f"{what}: training errors {train}, test errors {test})",
        )
        gap = generalization_gap({"train": list(train), "test": list(test)})
        _observe(
            key,
            float(gap),
            why,
            close=(0, 1e-9),
            student="the gap is the final test error minus the final training error, in percentage points",
        )


def _ch01_plain_block(state, x, eps):
    """What a BNPlainBlock computes in evaluation mode, written out here from its weights and statistics, in float64:
    relu(BN(W2 relu(BN(W1 x)))), BatchNorm's eps the test's own. The test observes nothing that the notebook's BNPlainBlock,
    which an answer could patch, computes. None where a weight or statistic is missing or has the wrong shape."""
    h = x.double()
    try:
        for linear, norm in (("f.0.", "f.1."), ("f.3.", "f.4.")):
            h = h @ state[linear + "weight"].detach().double().T
            mean, var, gamma, beta = (
                state[norm + name].detach().double()
                for name in ("running_mean", "running_var", "weight", "bias")
            )
            h = ((h - mean) / torch.sqrt(var + eps) * gamma + beta).clamp(min=0)
    except (KeyError, RuntimeError):
        return None
    return h if h.shape == x.shape else None


def _ch01_drawn_block(gen):
    """A BNPlainBlock as training leaves it, drawn here: every weight, BatchNorm parameter and statistic set by the
    test, however the block was built, and BatchNorm's eps set to the test's own."""
    block = BNPlainBlock(16)
    with torch.no_grad():
        for name, t in sorted(_tensors_of(block).items()):
            if name in ("f.0.weight", "f.3.weight"):
                t.copy_(torch.randn(t.shape, generator=gen) / 4)
            elif name.endswith(("bias", "running_mean")):
                t.copy_(torch.rand(t.shape, generator=gen) * 2 - 1)
            elif name.endswith(("weight", "running_var")):  # a BatchNorm's
                t.copy_(torch.rand(t.shape, generator=gen) * 1.5 + 0.5)
        for m in block.f:
            if isinstance(m, nn.BatchNorm1d):
                m.eps = _CH01_EPS
    return block


# far from PyTorch's 1e-5, so that an answer that leaves eps out is off by far more than the tolerance (with eps = 1e-5
# it is off by 5e-6, which one block hides)
_CH01_EPS = 0.25


def _ch01_eps(block) -> list:
    """The eps of the block's two BatchNorms, read from their own dictionaries (NaN where there is none)."""
    modules = _modules_of(block)
    found = []
    for name in ("f.1.", "f.4."):
        eps = (
            object.__getattribute__(modules[name], "__dict__").get("eps")
            if name in modules
            else None
        )
        found.append(float(eps) if isinstance(eps, (int, float)) else float("nan"))
    return found


def _ch01_non_negative(gen):
    """The inputs exercise 2 runs the block on: non-negative, like a ReLU output, in float64."""
    return torch.rand(32, 16, generator=gen, dtype=torch.float64) * 3


def exercise_2():
    """Runs make_identity on a block drawn here and keeps, as arrays, the block passed in (its weights, statistics and
    eps) and what it returned; the judge's process observes them (`observe_2`)."""
    gen = torch.Generator().manual_seed(_seed(2024))
    block = _ch01_drawn_block(gen)
    x = _ch01_non_negative(gen)
    returned = make_identity(block)
    _keep("eps", _ch01_eps(block))
    _keep("block", _tensors_of(block))
    # the block run by its own forward, hooks and all, in evaluation mode: it must compute what its weights say
    with torch.no_grad():
        _keep("forward", block.eval()(x.float()))
    _mark(_tensors_of(block).values())
    _keep(
        "returned",
        _tensors_of(returned) if isinstance(returned, nn.Module) else {},
    )


def observe_2(kept):
    """In a process no answer has run in: the block's weights and statistics, as the answer left them, run here by
    the test's own arithmetic (`_ch01_plain_block`) with the eps the block came with."""
    gen = torch.Generator().manual_seed(_seed(2024))
    _ch01_drawn_block(gen)  # the same draws as the answer's run, then the same inputs
    x = _ch01_non_negative(gen)
    state, returned = _kept_state(kept, "block"), _kept_state(kept, "returned")
    if not state:  # the answer's run stopped before it, and the judge reports its error
        return
    _observe(
        "returns the block",
        _shows_mark(state, returned),
        "change the block passed in, and return it",
    )
    _observe(
        "eps left alone",
        kept["eps"].tolist(),
        f"leave BatchNorm's eps as it is (here {_CH01_EPS}): eps is not part of what is graded, the block is run "
        "with the eps it came with, so set the running statistics and the weights so that they absorb it",
        student="leave BatchNorm's eps as it is: eps is not part of what is graded, so set the running statistics and the weights so that they absorb it",
    )
    _observe(
        "the block's weights and statistics",
        sorted(state),
        "keep the block's layers and set their weights and statistics: do not add, remove or replace layers",
    )
    out = _ch01_plain_block(state, x, _CH01_EPS)
    _observe(
        "identity on non-negative inputs",
        out,
        "set the weights and the batch-norm statistics of the block so that it returns non-negative inputs "
        f"unchanged; it is run with BatchNorm's eps = {_CH01_EPS}, the eps it came with (eps is not part of what is "
        "graded: running_var and the weights must absorb it)",
        close=(1e-5, 1e-6),
        student="set the weights and the batch-norm statistics of the block so that it returns non-negative inputs unchanged, with the eps it came with",
    )
    forward = kept.get("forward")
    _observe(
        "the block's own forward",
        torch.from_numpy(forward.copy())
        if forward is not None and forward.dtype.kind == "f"
        else None,
        "the block, run in evaluation mode, must return non-negative inputs unchanged: no hook or other code may "
        "change what its weights compute",
        close=(1e-4, 1e-5),  # float32, as the block computes
    )


def exercise_3():
    _observe(
        "uses ShortcutA",
        _refers_to(shortcut_a, ShortcutA),
        "write the shortcut by hand: shortcut_a must not use ShortcutA",
    )
    gen = torch.Generator().manual_seed(_seed(2025))
    # the last: c_out = C, which the exercise allows (pad with nothing, still subsample)
    for shape, c_out in (
        ((3, 8, 6, 6), 16),
        ((2, 16, 7, 7), 32),
        ((1, 8, 4, 4), 13),
        ((2, 8, 5, 5), 8),
    ):
        x = torch.randn(*shape, generator=gen)
        mine = shortcut_a(x, c_out)
        where = f"an input of shape {shape} and c_out = {c_out}"
        _observe(
            f"a tensor {shape}",
            isinstance(mine, torch.Tensor),
            f"for {where}, return a tensor",
            student="return a tensor",
        )
        _observe(
            f"shape {shape}",
            list(getattr(mine, "shape", ())),
            f"wrong shape for {where}",
            student="the shape is wrong for some of the inputs graded",
        )
        _observe(
            f"values {shape}",
            mine,
            f"wrong values for {where}",
            student="the values are wrong for some of the inputs graded",
        )
