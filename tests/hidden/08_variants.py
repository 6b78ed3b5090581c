"""Hidden tests for notebooks/08_variants.ipynb, run by `make grade` in each submission's kernel."""


def exercise_1():
    x, f = torch.randn(3, 5), torch.randn(3, 5)
    logits = torch.randn(3, 5)
    expected = torch.relu((1 - torch.sigmoid(logits)) * x + f)
    assert torch.allclose(shortcut_only_gating(x, f, logits), expected, atol=1e-6)


def exercise_2():
    for width, growth, depth in [(16, 4, 7), (3, 2, 2)]:
        expected = sum(p.numel() for p in DenseStack(width, growth, depth).parameters())
        assert dense_stack_parameters(width, growth, depth) == expected, (
            f"width {width}, growth {growth}, depth {depth}"
        )


def exercise_3():
    x = train_x[:64]
    fine = heun_flow(ode_net, x, 256)
    e4, e8 = [((heun_flow(ode_net, x, n) - fine).norm() / fine.norm()).item() for n in (4, 8)]
    assert e4 / e8 > 3, f"halving the step should cut the error by about 4, got {e4 / e8:.2f}"
