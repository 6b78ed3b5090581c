"""Hidden tests for notebooks/06_failure_modes.ipynb, run by `make grade`, each with its exercise's answer alone in
a process of its own (booktools/grading/isolated.py).

Each test runs the answer on inputs the notebook never shows (its own seeded generators, other shapes, blocks of
different sizes) and observes what it did (`_observe`, from booktools/grading/hidden/_common.py): values, whether a helper the
exercise forbids is used (`_refers_to`), whether the input is left unchanged, and whether the measured run is a real
one through which gradients reach every block. The grader compares every observation with the reference solution's,
in a process of its own. booktools/grading/mutants/06_failure_modes.py holds the wrong answers these tests
must reject and the right ones they must accept.
"""


def exercise_1():
    _observe(
        "uses relative_residual",
        _refers_to(distance_from_rank_one, relative_residual),
        "compute the residual yourself: distance_from_rank_one must not use relative_residual",
    )
    gen = torch.Generator().manual_seed(_seed(6061))
    cases = [
        torch.randn(7, 5, generator=gen, dtype=torch.float64)
        + 3.0,  # tokens sharing a large common part
        torch.randn(3, 11, generator=gen, dtype=torch.float64)
        * torch.arange(1.0, 12.0, dtype=torch.float64),
        torch.randn(6, 6, generator=gen, dtype=torch.float64),
        torch.eye(4, dtype=torch.float64),
        torch.arange(1.0, 6.0, dtype=torch.float64)
        .expand(3, 5)
        .clone(),  # identical tokens
    ]
    for k, X in enumerate(cases):
        _observe(
            f"case {k}",
            float(distance_from_rank_one(X.clone())),
            f"wrong value for a {X.shape[0]} x {X.shape[1]} matrix (tokens are rows): subtract the mean token, "
            "the mean over rows, and divide the norm of what is left by the norm of X",
            close=(0, 1e-12),
            student="wrong value (tokens are rows): subtract the mean token, the mean over rows, and divide the norm of what is left by the norm of X",
        )


def _ch06_couplings():
    """[(F, G, y)]: couplings y = (x1 + F(x2), x2 + G(y1)) of inputs x that are gone before the answer runs, so that
    an answer that reads the stack's frames finds none."""
    gen = torch.Generator().manual_seed(_seed(6062))
    with torch.random.fork_rng():
        torch.manual_seed(_seed(6062))
        branches = Branch(5, 12).double(), Branch(5, 12).double()
    mix = torch.randn(4, 4, generator=gen, dtype=torch.float64)
    cases = [
        ((lambda t: t.pow(2)), (lambda t: torch.sin(3 * t)), torch.linspace(-1, 1, 24, dtype=torch.float64).reshape(3, 8)),
        (*branches, torch.randn(6, 10, generator=gen, dtype=torch.float64)),
        ((lambda t: torch.tanh(t @ mix)), (lambda t: (t @ mix.T).pow(3)), torch.randn(5, 8, generator=gen, dtype=torch.float64)),
    ]  # fmt: skip
    couplings = []
    with torch.no_grad():
        for f, g, x in cases:
            x1, x2 = x.chunk(2, dim=-1)
            y1 = x1 + f(x2)
            couplings.append((f, g, torch.cat([y1, x2 + g(y1)], dim=-1)))
    return couplings


def exercise_2():
    for k, (f, g, y) in enumerate(_ch06_couplings()):
        y_given = y.clone()
        with torch.no_grad():
            x_back = invert_coupling(f, g, y_given)
        _observe(
            f"y left alone, case {k}",
            y_given,
            "invert_coupling must not change y: compute new tensors",
        )
        _observe(
            f"a tensor, case {k}", isinstance(x_back, torch.Tensor), "return a tensor"
        )
        _observe(
            f"shape, case {k}",
            list(x_back.shape),
            f"for y of shape {tuple(y.shape)}, expected x of the same shape",
            student="expected x of the same shape as y",
        )
        _observe(
            f"x, case {k}",
            x_back,
            "x is not rebuilt: undo y2 first, x2 = y2 - G(y1), then x1 = y1 - F(x2), and keep x1 before x2",
            close=(0, 1e-12),
        )


def exercise_3():
    # blocks of different sizes: the first segment's blocks must be measured
    hidden = (16, 4, 24, 8, 12, 20, 4)
    with torch.random.fork_rng():
        torch.manual_seed(_seed(6063))
        blocks = [ResidualBlock(8, h) for h in hidden]
        x = torch.randn(5, 8)
    params = [p for block in blocks for p in block.parameters()]
    # 7 blocks in segments of 2 (2+2+2+1), 1, 3 (3+3+1), 4 (4+3) and 7
    for length in (2, 1, 3, 4, 7):
        for p in params:
            p.grad = None
        _observe(
            f"segments of {length}",
            backward_peak_bytes(blocks, x, length),
            f"segments of {length} of 7 blocks of different sizes: count one kept input per checkpointed segment, "
            "plus what the first segment's own blocks keep when they run without checkpointing",
            student="wrong count: one kept input per checkpointed segment, plus what the first segment's own blocks keep when they run without checkpointing",
        )
        _observe(
            f"every block reached, segments of {length}",
            [p.grad is not None for p in params],
            f"segments of {length}: the backward of the measured run reached only some blocks; run the blocks "
            "passed in, each segment's output feeding the next with no detach or no_grad in between",
            student="the backward of the measured run reached only some blocks; run the blocks passed in, each segment's output feeding the next with no detach or no_grad in between",
        )
        # past the first segment (which is also measured alone), each parameter's gradient is that of the
        # measured run's summed output: a run of these blocks, not a backward of something else
        _observe(
            f"gradients past the first segment, segments of {length}",
            [
                None if p.grad is None else p.grad.norm().item()
                for block in blocks[length:]
                for p in block.parameters()
            ],
            f"segments of {length}: the gradients of the blocks after the first segment are not those of the "
            "measured run; measure with saved_activation_bytes on the blocks passed in, in segments",
            close=(1e-4, 1e-7),
            student="the gradients of the blocks after the first segment are not those of the measured run; measure with saved_activation_bytes on the blocks passed in, in segments",
        )
    with torch.no_grad():
        _observe(
            "blocks left alone",
            nn.Sequential(*blocks)(x),
            "measuring must leave the blocks as they were",
        )
