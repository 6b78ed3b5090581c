"""Hidden tests for notebooks/07_loss_landscape.ipynb, run by `make grade`, each with its exercise's answer alone in
a process of its own (booktools/grading/isolated.py).

Each test runs the answer on inputs the notebook never shows (its own seeded generators, other shapes, a freshly
built net with BatchNorm statistics of its own), never on the notebook's trained nets, so that it holds for any
SEED, and observes what it did (`_observe`, from booktools/grading/hidden/_common.py): values, whether a helper the exercise
forbids is used (`_refers_to`), whether the net is left in training mode with its parameters and running statistics
untouched. The grader compares every observation with the reference solution's, in a process of its own.
booktools/grading/mutants/07_loss_landscape.py holds the wrong answers these tests must reject and the right ones they must
accept.
"""


def exercise_1():
    _observe(
        "uses filter_normalised_direction",
        _refers_to(normalise_filters, filter_normalised_direction),
        "rescale the rows yourself: normalise_filters must not use filter_normalised_direction",
    )
    gen = torch.Generator().manual_seed(_seed(7071))
    # a square matrix too: row and column norms must not mix
    for rows, cols in ((6, 6), (5, 7), (3, 11), (4, 1)):
        scales = torch.logspace(-2, 2, rows, dtype=torch.float64).unsqueeze(1)
        w = torch.randn(rows, cols, generator=gen, dtype=torch.float64) * scales
        d = torch.randn(rows, cols, generator=gen, dtype=torch.float64) * scales.flip(0)
        out = normalise_filters(d.clone(), w.clone())
        where = f"a {rows} x {cols} weight"
        _observe(
            f"a tensor, {where}",
            isinstance(out, torch.Tensor),
            f"for {where}, return a tensor",
            student="return a tensor",
        )
        _observe(
            f"shape, {where}",
            list(out.shape),
            f"for {where}, expected a direction of shape {(rows, cols)}",
            student="expected a direction of the weight's shape",
        )
        _observe(
            f"direction, {where}",
            out,
            f"wrong direction for {where}: each row of the direction must keep its own direction and take the norm "
            "of the same row of the weight",
            # 1e-6: room for the small constant that guards the division (Li et al.'s code adds 1e-10), far
            # less than a wrong normalisation moves a row
            close=(1e-6, 0),
            student="wrong direction: each row of the direction must keep its own direction and take the norm of the same row of the weight",
        )
    for n in (3, 64):
        bias = torch.randn(n, generator=gen)
        out = normalise_filters(torch.randn(n, generator=gen), bias)
        why = f"a 1-D parameter of size {n} must get a zero direction of the same shape"
        _observe(
            f"a tensor, size {n}",
            isinstance(out, torch.Tensor),
            why,
            student="a 1-D parameter must get a zero direction of the same shape",
        )
        _observe(
            f"direction, size {n}",
            out,
            why,
            student="a 1-D parameter must get a zero direction of the same shape",
        )


def exercise_2():
    _observe(
        "uses monotone_share",
        _refers_to(share_rising, monotone_share),
        "count the rays yourself: share_rising must not use monotone_share",
    )
    gen = torch.Generator().manual_seed(_seed(7072))
    # steps that are multiples of 1/64, so that every difference and every comparison with tol is exact
    start = torch.randint(0, 64, (40, 1), generator=gen).float() / 64
    steps = torch.randint(-3, 12, (40, 10), generator=gen).float() / 64
    steps[:5] = 0.0  # flat rays: no fall, and no rise either
    rays = torch.cat([start, start + steps.cumsum(dim=1)], dim=1)
    for tol in (0.0, 1 / 64, 2 / 64, 1e-3):
        got = share_rising(rays.clone(), tol)
        _observe(
            f"a float, tol {tol}",
            isinstance(got, float),
            "return a Python float (use .item())",
        )
        _observe(
            f"share, tol {tol}",
            got,
            f"wrong share for tol = {tol:g} on 40 rays of 11 radii (rays are rows): count the rays along which no "
            "step from one radius to the next falls by more than tol (a fall of exactly tol is allowed)",
            close=(0, 4 * torch.finfo(torch.float32).eps),
            student="wrong share: count the rays (rows) along which no step from one radius to the next falls by more than tol (a fall of exactly tol is allowed)",
        )


def exercise_3():
    with torch.random.fork_rng():
        torch.manual_seed(_seed(7073))
        nets = [DeepMLP(5, residual=True), DeepMLP(7, residual=False)]
    gen = torch.Generator().manual_seed(_seed(7073))
    for k, net in enumerate(nets):
        with torch.no_grad():  # BatchNorm as training leaves it, far from its defaults
            for m in net.modules():
                if isinstance(m, nn.BatchNorm1d):
                    m.weight.uniform_(0.5, 2.0, generator=gen)
                    m.bias.uniform_(-1.0, 1.0, generator=gen)
                    m.running_mean.uniform_(-2.0, 2.0, generator=gen)
                    m.running_var.uniform_(0.2, 5.0, generator=gen)
        net.train()
        loss = loss_in_eval_mode(net)
        _observe(
            f"modes of net {k}",
            [m.training for m in net.modules()],
            "leave the net, and every module in it, in training mode",
        )
        _observe(
            f"state of net {k}",
            _tensors_of(net),
            "computing the loss must not change the net: no parameter and no running statistic may move "
            "(a forward pass in training mode updates the running statistics)",
        )
        _observe(
            f"loss of net {k}",
            float(loss),
            "wrong loss: the mean cross-entropy on x_eval, y_eval, with every BatchNorm normalising with its "
            "running statistics (inference mode)",
            close=(1e-6, 0),
        )
