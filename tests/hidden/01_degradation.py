"""Hidden tests for notebooks/01_degradation.ipynb, run by `make grade` in each submission's kernel."""


def exercise_1():
    gap = generalization_gap({"train": [50.0, 5.0], "test": [60.0, 7.5]})
    assert abs(gap - 2.5) < 1e-9, f"final test minus final training error should be 2.5 pp here, got {gap}"


def exercise_2():
    block = make_identity(Block(16, residual=False))
    block.eval()
    x = torch.rand(32, 16) * 3  # non-negative, like a ReLU output
    with torch.no_grad():
        assert torch.allclose(block(x), x, atol=1e-5), "the block must return non-negative inputs unchanged"


def exercise_3():
    x = torch.randn(3, 8, 6, 6)
    mine = shortcut_a(x, 16)
    assert torch.equal(mine, ShortcutA(8, 16, stride=2)(x)), "must match ShortcutA(8, 16, stride=2)"
