"""Hidden tests for notebooks/01_degradation.ipynb, run by `make grade` in each submission's kernel.

Each test computes what it expects itself, on inputs the notebook never shows, and checks behaviour: the object
passed in is the one changed, and a function that the exercise asks to write by hand is not called (`_refers_to`,
from tests/hidden/_common.py, which runs before every chapter's hidden tests).
tests/mutants/01_degradation.py holds the wrong answers these tests must reject and the right ones they must accept.
"""


def exercise_1():
    for train, test, expected in (
        ([50.0, 20.0, 5.0], [60.0, 30.0, 7.5], 2.5),
        ([40.0, 1.0], [45.0, 9.0], 8.0),
    ):
        gap = generalization_gap({"train": train, "test": test})
        assert abs(gap - expected) < 1e-9, (
            f"final test minus final training error should be {expected} pp, got {gap}"
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
    returned = make_identity(block)
    assert returned is block, "change the block passed in, and return it"
    block.eval()
    x = torch.rand(32, 16) * 3  # non-negative, like a ReLU output
    with torch.no_grad():
        out = block(x)
    assert torch.allclose(out, x, rtol=1e-5, atol=1e-6), (
        f"the block must return non-negative inputs unchanged (largest error {(out - x).abs().max():.2g})"
    )


def exercise_3():
    assert not _refers_to(shortcut_a, ShortcutA), (
        "write the shortcut by hand: shortcut_a must not use ShortcutA"
    )
    for shape, c_out in (((3, 8, 6, 6), 16), ((2, 16, 7, 7), 32), ((1, 8, 4, 4), 13)):
        x = torch.randn(*shape)
        mine = shortcut_a(x, c_out)
        pad = c_out - shape[1]
        expected = torch.cat(
            [torch.zeros(shape[0], pad // 2, *x[:, :, ::2, ::2].shape[2:]), x[:, :, ::2, ::2],
             torch.zeros(shape[0], pad - pad // 2, *x[:, :, ::2, ::2].shape[2:])], dim=1,
        )  # fmt: skip
        assert isinstance(mine, torch.Tensor) and mine.shape == expected.shape, (
            f"for an input of shape {shape} and c_out = {c_out}, expected shape {tuple(expected.shape)}"
        )
        assert torch.equal(mine, expected), (
            f"wrong values for an input of shape {shape} and c_out = {c_out}"
        )
