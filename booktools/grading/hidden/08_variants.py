"""Hidden tests for notebooks/08_variants.ipynb, run by `make grade`, each with its exercise's answer alone in a
process of its own (booktools/grading/isolated.py).

Each test runs the answer on inputs the notebook never shows (its own seeded draws, other shapes, a network of its
own) and observes what it did (`_observe`, from booktools/grading/hidden/_common.py): values, gradients where they should flow,
whether the inputs are left unchanged and whether the module the exercise asks to count by hand is built
(`_refers_to`). The grader compares every observation with the reference solution's, in a process of its own.
booktools/grading/mutants/08_variants.py holds the wrong answers these tests must reject and the right ones they must accept.
"""


def exercise_1():
    gen = torch.Generator().manual_seed(_seed(808))
    for shape in [(5, 7), (2, 3, 4), (1, 16)]:
        x, f, logits = (
            torch.randn(shape, generator=gen, dtype=torch.float64) * 2 for _ in range(3)
        )
        weights = torch.randn(shape, generator=gen, dtype=torch.float64)
        leaves = [t.clone().requires_grad_(True) for t in (x, f, logits)]
        got = shortcut_only_gating(*leaves)
        where = f"inputs of shape {shape}"
        _observe(
            f"inputs left alone, {where}",
            leaves,
            "leave the inputs x, f and gate_logits unchanged: compute a new tensor",
        )
        _observe(
            f"a tensor, {where}",
            isinstance(got, torch.Tensor),
            f"for {where}, return a tensor",
            student="return a tensor",
        )
        _observe(
            f"shape, {where}",
            list(got.shape),
            f"for {where}, return a tensor of their shape",
            student="return a tensor of the inputs' shape",
        )
        _observe(
            f"values, {where}",
            got,
            f"wrong values for {where}: relu((1 - sigmoid(gate_logits)) * x + f), element by element",
            close=(1e-12, 1e-12),
            student="wrong values: relu((1 - sigmoid(gate_logits)) * x + f), element by element",
        )
        _observe(
            f"gradient flows, {where}",
            got.requires_grad,
            "the gradient must flow back to x, f and the gate logits: no detach, no .item()",
        )
        grads = torch.autograd.grad((got * weights).sum(), leaves, allow_unused=True)
        for name, g in zip(["x", "f", "gate_logits"], grads):
            _observe(
                f"gradient of {name}, {where}",
                g,
                f"the gradient with respect to {name} is wrong: let it flow through the gate and both terms",
                close=(1e-10, 1e-12),
                student="a gradient is wrong: let it flow through the gate and both terms",
            )


def exercise_2():
    import random as _random

    _observe(
        "builds a DenseStack",
        _refers_to(dense_stack_parameters, DenseStack),
        "count by hand: dense_stack_parameters must not build a DenseStack",
    )
    gen = _random.Random(_seed(8080))
    cases = [(7, 5, 1), (1, 1, 6), (20, 3, 11), (50, 12, 60)] + [
        (gen.randint(1, 40), gen.randint(1, 12), gen.randint(1, 25)) for _ in range(10)
    ]
    for i, (width, growth, depth) in enumerate(cases):  # a draw may repeat a case
        _observe(
            f"case {i}: width {width}, growth {growth}, depth {depth}",
            dense_stack_parameters(width, growth, depth),
            f"width {width}, growth {growth}, depth {depth}: the count differs from the number of parameters of "
            "DenseStack(width, growth, depth)",
            student="the count differs from the number of parameters of DenseStack(width, growth, depth)",
        )


def exercise_3():
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
    for steps in (1, 3, 8):
        got = heun_flow(net, x, steps)
        _observe(
            f"shape, {steps} steps",
            list(getattr(got, "shape", ())),
            "return the final hidden state of the net passed in, of shape (40, 20) here (not the logits)",
        )
        _observe(
            f"hidden state, {steps} steps",
            got,
            f"wrong hidden state for steps = {steps}: one Heun step is k1 = F(x), k2 = F(x + h k1),"
            " x <- x + h/2 (k1 + k2), with h = 1/steps, starting from net.stem(x), using the net passed in",
            close=(1e-5, 1e-5 * float(got.abs().max())),
            student="wrong hidden state: one Heun step is k1 = F(x), k2 = F(x + h k1), x <- x + h/2 (k1 + k2), with h = 1/steps, starting from net.stem(x), using the net passed in",
        )


def exercise_4():
    # the block, and what builds or counts one: with these out of reach, an answer that builds the branch itself
    # must retype them first (no grader can tell; the instructors' page says so)
    for helper, name in (
        (BottleneckBlock, "BottleneckBlock"),
        (conv_bn, "conv_bn"),
        (projection_shortcut, "projection_shortcut"),
        (multiply_adds, "multiply_adds"),
    ):
        _observe(
            f"uses {name}",
            _refers_to(bottleneck_multiply_adds, helper),
            f"count by hand: bottleneck_multiply_adds must not build the block or count it with {name}",
            student="count by hand, with a formula: do not build the block or count it with the notebook's helpers",
        )
    gen = torch.Generator().manual_seed(_seed(8084))

    def draw(low, high):
        return int(torch.randint(low, high + 1, (), generator=gen))

    # fixed cases: no projection; a projection for the width alone; one for the
    # stride alone, on an odd side (the output side rounds up); a 2×2 output
    cases = [(64, 64, 9, 1), (32, 128, 7, 1), (128, 128, 15, 2), (96, 48, 3, 2)]
    for i in range(12):
        out_width = 4 * draw(1, 128)
        # every other case keeps the width, so that only the stride can call for a projection
        in_width = out_width if i % 2 == 0 else 4 * draw(1, 128)
        cases.append((in_width, out_width, draw(2, 64), draw(1, 2)))
    for i, (in_width, out_width, side, stride) in enumerate(cases):
        _observe(
            f"case {i}: in_width {in_width}, out_width {out_width}, side {side}, stride {stride}",
            bottleneck_multiply_adds(in_width, out_width, side, stride),
            f"in_width {in_width}, out_width {out_width}, side {side}, stride {stride}: the count "
            "differs from the multiply-adds per image of BottleneckBlock(in_width, out_width, stride) "
            "on a side × side input (the three convolutions, and the projection where the shapes change)",
            student="the count differs from the multiply-adds per image of BottleneckBlock(in_width, out_width, stride) on a side x side input (the three convolutions, and the projection where the shapes change)",
        )
