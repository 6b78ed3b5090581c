"""Hidden tests for notebooks/01_degradation.ipynb, run by `make grade` after the notebook, in its kernel.

Each test runs the answer on inputs the notebook never shows and observes what it did (`_observe`, from
tests/hidden/_common.py, which runs before every chapter's hidden tests): its values, whether the object passed in
is the one changed, whether a function that the exercise asks to write by hand is used (`_refers_to`). The grader
compares every observation with the reference solution's, in a process of its own.
tests/mutants/01_degradation.py holds the wrong answers these tests must reject and the right ones they must accept.
"""


def exercise_1():
    for train, test in (
        ([50.0, 20.0, 5.0], [60.0, 30.0, 7.5]),
        ([40.0, 1.0], [45.0, 9.0]),
        ([30.0, 3.0, 4.0], [35.0, 6.0, 8.5]),  # the last epoch is not the best one
        ([20.0, 12.0], [18.0, 10.5]),  # test below train: a negative gap
    ):
        gap = generalization_gap({"train": train, "test": test})
        _observe(
            f"gap {train} {test}",
            float(gap),
            "the gap is the final test error minus the final training error, in percentage points",
            close=(0, 1e-9),
        )


def exercise_2():
    torch.manual_seed(_seed(2024))
    block = Block(16, residual=False)
    with torch.no_grad():  # a block as training leaves it: no BatchNorm parameter or statistic at its default
        for m in block.f:
            if isinstance(m, nn.BatchNorm1d):
                m.weight.uniform_(0.5, 2.0)
                m.bias.uniform_(-1.0, 1.0)
                m.running_mean.uniform_(-1.0, 1.0)
                m.running_var.uniform_(0.5, 2.0)
                # an eps far from PyTorch's 1e-5, so that an answer that leaves eps out is off by far more than the
                # tolerance (with eps = 1e-5 it is off by 5e-6, which one block hides)
                m.eps = 0.25
    returned = make_identity(block)
    _observe(
        "returns the block",
        returned is block,
        "change the block passed in, and return it",
    )
    block.eval()
    # non-negative, like a ReLU output
    x = torch.rand(32, 16, generator=torch.Generator().manual_seed(_seed(2026))) * 3
    # what was set is the weights and statistics, not the block's code: they are loaded into a Block of the
    # notebook's, so an answer that replaces the block's forward (or its modules) does not pass
    fresh = Block(16, residual=False)
    for m in fresh.f:
        if isinstance(m, nn.BatchNorm1d):
            m.eps = 0.25  # not in the state: the block's own
    fresh.load_state_dict(block.state_dict())
    fresh.eval()
    with torch.no_grad():
        out = fresh(x)
    _observe(
        "identity on non-negative inputs",
        out,
        "set the weights and the batch-norm statistics of the block so that it returns non-negative inputs "
        "unchanged",
        close=(1e-5, 1e-6),
    )


def exercise_3():
    _observe(
        "uses ShortcutA",
        _refers_to(shortcut_a, ShortcutA),
        "write the shortcut by hand: shortcut_a must not use ShortcutA",
    )
    gen = torch.Generator().manual_seed(_seed(2025))
    for shape, c_out in (((3, 8, 6, 6), 16), ((2, 16, 7, 7), 32), ((1, 8, 4, 4), 13)):
        x = torch.randn(*shape, generator=gen)
        mine = shortcut_a(x, c_out)
        where = f"an input of shape {shape} and c_out = {c_out}"
        _observe(
            f"a tensor {shape}",
            isinstance(mine, torch.Tensor),
            f"for {where}, return a tensor",
        )
        _observe(
            f"shape {shape}",
            list(getattr(mine, "shape", ())),
            f"wrong shape for {where}",
        )
        _observe(f"values {shape}", mine, f"wrong values for {where}")
