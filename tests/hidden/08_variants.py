"""Hidden tests for notebooks/08_variants.ipynb, run by `make grade` in each submission's kernel.

Each test computes what it expects itself, on inputs the notebook never shows (its own seeded draws, other shapes,
a network of its own), and checks behaviour: values, gradients where they should flow, inputs left unchanged, and
the module the exercise asks to count by hand not built (`_refers_to`, from tests/hidden/_common.py).
tests/mutants/08_variants.py holds the wrong answers these tests must reject and the right ones they must accept.
"""


def exercise_1():
    gen = torch.Generator().manual_seed(_seed(808))
    for shape in [(5, 7), (2, 3, 4), (1, 16)]:
        x, f, logits = (
            torch.randn(shape, generator=gen, dtype=torch.float64) * 2 for _ in range(3)
        )
        copies = [t.clone() for t in (x, f, logits)]
        leaves = [t.clone().requires_grad_(True) for t in (x, f, logits)]
        got = shortcut_only_gating(*leaves)
        assert all(torch.equal(a.detach(), b) for a, b in zip(leaves, copies)), (
            "leave the inputs x, f and gate_logits unchanged: compute a new tensor"
        )
        expected_leaves = [t.clone().requires_grad_(True) for t in (x, f, logits)]
        ex, ef, eg = expected_leaves
        expected = torch.relu((1 - torch.sigmoid(eg)) * ex + ef)
        assert (
            isinstance(got, torch.Tensor)
            and got.shape == x.shape
            and torch.allclose(got.detach(), expected.detach(), rtol=1e-12, atol=1e-12)
        ), (
            f"wrong values for inputs of shape {shape}: relu((1 - sigmoid(gate_logits)) * x + f), element by element"
        )
        weights = torch.randn(shape, generator=gen, dtype=torch.float64)
        assert got.requires_grad, (
            "the gradient must flow back to x, f and the gate logits: no detach, no .item()"
        )
        grads = torch.autograd.grad((got * weights).sum(), leaves, allow_unused=True)
        expected_grads = torch.autograd.grad(
            (expected * weights).sum(), expected_leaves
        )
        for name, g, e in zip(["x", "f", "gate_logits"], grads, expected_grads):
            assert g is not None and torch.allclose(g, e, rtol=1e-10, atol=1e-12), (
                f"the gradient with respect to {name} is wrong: let it flow through the gate and both terms"
            )


def exercise_2():
    import random as _random

    assert not _refers_to(dense_stack_parameters, DenseStack), (
        "count by hand: dense_stack_parameters must not build a DenseStack"
    )
    gen = _random.Random(_seed(8080))
    cases = [(7, 5, 1), (1, 1, 6), (20, 3, 11), (50, 12, 60)] + [
        (gen.randint(1, 40), gen.randint(1, 12), gen.randint(1, 25)) for _ in range(10)
    ]
    with (
        torch.random.fork_rng()
    ):  # building the modules draws their weights: leave the notebook's stream alone
        for width, growth, depth in cases:
            expected = sum(
                p.numel() for p in DenseStack(width, growth, depth).parameters()
            )
            got = dense_stack_parameters(width, growth, depth)
            assert got == expected, (
                f"width {width}, growth {growth}, depth {depth}: you count {got}, the module has {expected}"
            )


def exercise_3():
    import copy as _copy

    width = 20
    with (
        torch.random.fork_rng()
    ):  # a network of the test's own, with a strongly nonlinear F
        torch.manual_seed(_seed(8081))
        net = TiedEulerNet(width, 8)
        with torch.no_grad():
            net.f[0].weight.mul_(3.0)
            net.f[2].weight.mul_(3.0)
        x = torch.rand(40, 64)
    exact = _copy.deepcopy(net).double()
    for steps in (1, 3, 8):
        with torch.no_grad():
            h, dt = exact.stem(x.double()), 1.0 / steps
            for _ in range(steps):
                k1 = exact.f(h)
                k2 = exact.f(h + dt * k1)
                h = h + dt / 2 * (k1 + k2)
        got = heun_flow(net, x, steps)
        assert isinstance(got, torch.Tensor) and got.shape == h.shape, (
            f"return the final hidden state of the net passed in, of shape {tuple(h.shape)} here (not the logits)"
        )
        assert ((got.detach().double() - h).norm() / h.norm()).item() < 1e-5, (
            f"wrong hidden state for steps = {steps}: one Heun step is k1 = F(x), k2 = F(x + h k1),"
            " x <- x + h/2 (k1 + k2), with h = 1/steps, starting from net.stem(x), using the net passed in"
        )
