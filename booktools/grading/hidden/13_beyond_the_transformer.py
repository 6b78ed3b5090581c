"""Hidden tests for notebooks/13_beyond_the_transformer.ipynb, each run with its exercise's answer alone in a process
of its own (booktools/grading/isolated.py); they use the notebook's names (torch, nn, similarity, mp_sum, GCNLayer,
ResidualMessagePassing, ...).

Each test runs the answer on inputs the notebook never shows and observes what it did (`_observe`, from
booktools/grading/hidden/_common.py): the measure mu for feature matrices of other shapes, scales and dtypes, and for
one almost collapsed onto v1 (mu below 1e-8 in float64, where only an answer that subtracts the projection keeps its
digits); the magnitude-preserving sum for other shapes and weights, t = 0 and t = 1 included; the residual layer's
outputs and gradients for symmetric and random-walk propagation matrices and for inputs with and without negative
entries; whether the inputs were left alone, and whether a helper the exercise asks to do without is used
(`_refers_to`, and for `lerp`, a library method, the names the answer's code reads). The grader compares every
observation with the reference solution's, in a process of its own.
booktools/grading/mutants/13_beyond_the_transformer.py holds the wrong answers these tests must reject and the right
ones they must accept.
"""

# The exercises name no dtype for their results: judged at float32's rounding, as chapter 11 does. Every wrong answer
# in the mutants misses by more than 1e-3 on some input.
_CH13_FLOAT32 = (1e-4, 1e-5)
# The almost collapsed features of exercise 1: mu near 1e-8 in float64, asked for in x's dtype. Subtracting the
# projection keeps about 8 digits of it; the Pythagorean shortcut, or a float32 copy, keeps none.
_CH13_COLLAPSED = (1e-5, 0.0)


def _ch13_names(fn) -> set:
    """Every name, attribute name and string constant that `fn`'s code and the functions it defines or wraps read:
    how the test sees a library method (`lerp`) that no global holds."""
    found = set()
    for _, code in _code_objects([fn]):
        found |= set(code.co_names) | {c for c in code.co_consts if isinstance(c, str)}
    return found


def _ch13_unit(n, gen, dtype=torch.float64, positive=False):
    v = torch.randn(n, generator=gen, dtype=torch.float64)
    if positive:  # like sqrt(deg + 1): every entry of one sign
        v = v.abs() + 0.5
    return (v / v.norm()).to(dtype)


def exercise_1():
    _observe(
        "uses similarity",
        _refers_to(node_similarity, similarity),
        "write the measure yourself: node_similarity must not use similarity",
    )
    gen = torch.Generator().manual_seed(_seed(131))
    cases = []
    # random features of other shapes and scales, v1 with entries of both signs
    for n, d, scale, dtype in (
        (40, 7, 3.7, torch.float64),
        (25, 1, 0.2, torch.float32),
        (12, 30, 50.0, torch.float64),
    ):
        v1 = _ch13_unit(n, gen, dtype)
        x = scale * torch.randn(n, d, generator=gen, dtype=torch.float64).to(dtype)
        cases.append(
            (x, v1, f"x of shape ({n}, {d}), scale {scale:g}, {str(dtype)[6:]}")
        )
    # partly smoothed: a v1 of one sign (as sqrt(deg + 1)), features along it plus a smaller rest, columns of
    # different sizes and offsets
    n, d = 30, 6
    v1 = _ch13_unit(n, gen, positive=True)
    c = torch.randn(d, generator=gen, dtype=torch.float64) * 4
    rest = torch.randn(n, d, generator=gen, dtype=torch.float64) * torch.linspace(
        0.1, 2.0, d, dtype=torch.float64
    )
    cases.append(
        (
            torch.outer(v1, c) + rest + 1.5,
            v1,
            "x of shape (30, 6), partly along a positive v1, float64",
        )
    )
    for x, v1, where in cases:
        _ch13_measure(x, v1, where, _CH13_FLOAT32)
    # almost collapsed onto v1, as after many plain layers: mu near 1e-8, in float64 (the noise's 1e-9 per entry)
    n, d = 50, 8
    v1 = _ch13_unit(n, gen, positive=True)
    c = torch.randn(d, generator=gen, dtype=torch.float64)
    noise = torch.randn(n, d, generator=gen, dtype=torch.float64) * 1e-9
    _ch13_measure(
        torch.outer(v1, c) + noise,
        v1,
        "x of shape (50, 8), almost collapsed onto v1 (mu near 1e-8), float64",
        _CH13_COLLAPSED,
    )


def _ch13_measure(x, v1, where, tolerance):
    out = node_similarity(x, v1)
    _observe(
        f"a one-number tensor, {where}",
        isinstance(out, torch.Tensor) and out.numel() == 1,
        "return the measure as a tensor with one number, as the signature says",
    )
    try:
        value = float(torch.as_tensor(out).double().reshape(-1)[0])
    except (TypeError, ValueError, RuntimeError, IndexError):
        value = None
    _observe(
        f"mu, {where}",
        value,
        f"for {where}, wrong measure: subtract the projection v1 v1^T x from x itself, in x's dtype, and divide "
        "the Frobenius norm of what is left by that of x",
        close=tolerance,
        student="wrong measure for some input: subtract the projection v1 v1^T x from x itself, in x's dtype, and "
        "divide the Frobenius norm of what is left by that of x",
    )
    _observe(
        f"inputs left alone, {where}",
        [x, v1],
        "node_similarity must not change x or v1",
    )


def exercise_2():
    _observe(
        "uses mp_sum",
        _refers_to(mp_sum_by_hand, mp_sum),
        "write the sum yourself: mp_sum_by_hand must not use mp_sum",
    )
    _observe(
        "uses lerp",
        "lerp" in _ch13_names(mp_sum_by_hand),
        "write the weighted sum yourself: mp_sum_by_hand must not use lerp",
    )
    gen = torch.Generator().manual_seed(_seed(232))
    drawn = [0.05 + 0.9 * float(torch.rand((), generator=gen)) for _ in range(3)]
    for shape, t, dtype in (
        ((7,), drawn[0], torch.float32),
        ((3, 5), drawn[1], torch.float32),
        ((2, 3, 4), drawn[2], torch.float64),
        ((4, 4), 0.5, torch.float32),
        ((6,), 0.0, torch.float32),
        ((2, 5), 1.0, torch.float64),
    ):
        a = (2 * torch.randn(shape, generator=gen, dtype=torch.float64) + 0.5).to(dtype)
        b = (0.5 * torch.randn(shape, generator=gen, dtype=torch.float64) - 1).to(dtype)
        out = mp_sum_by_hand(a, b, t)
        where = f"a and b of shape {shape} ({str(dtype)[6:]}), t = {t:.3f}"
        _observe(
            f"shape, {where}",
            list(torch.as_tensor(out).shape),
            f"for {where}, the sum has the shape of a and b",
            student="the sum has the shape of a and b",
        )
        _observe(
            f"values, {where}",
            torch.nan_to_num(
                torch.as_tensor(out).double(), nan=-1e9, posinf=-1e9, neginf=-1e9
            ),
            f"for {where}, wrong sum: (1 - t) a + t b, divided by sqrt((1 - t)^2 + t^2), for every t from 0 to 1",
            close=_CH13_FLOAT32,
            student="wrong sum for some t: (1 - t) a + t b, divided by sqrt((1 - t)^2 + t^2), for every t from 0 "
            "to 1",
        )
        _observe(
            f"inputs left alone, {where}",
            [a, b],
            "mp_sum_by_hand must not change a or b",
        )


def _ch13_graph(n, gen, walk):
    """A random graph's propagation matrix: D^-1/2 (A + I) D^-1/2 (symmetric) or D^-1 (A + I) (a random walk)."""
    upper = torch.triu(torch.rand(n, n, generator=gen) < 0.4, 1)
    a = (upper | upper.T).float() + torch.eye(n)
    deg = a.sum(1)
    if walk:
        return a / deg[:, None]
    return a * deg.rsqrt()[:, None] * deg.rsqrt()[None, :]


def exercise_3():
    for part in (ResidualMessagePassing.__init__, ResidualMessagePassing.forward):
        _observe(
            f"uses GCNLayer in {part.__name__}",
            _refers_to(part, GCNLayer),
            "write the layer yourself: ResidualMessagePassing must not use GCNLayer",
            student="write the layer yourself: ResidualMessagePassing must not use GCNLayer",
        )
    gen = torch.Generator().manual_seed(_seed(333))
    for n, width, kind, signs in (
        (9, 5, "symmetric", "with negative entries"),
        (7, 4, "random-walk", "with negative entries"),
        (8, 6, "symmetric", "non-negative"),
        (6, 1, "dense random", "with negative entries"),
    ):
        if kind == "dense random":
            P = torch.rand(n, n, generator=gen) * 0.6
        else:
            P = _ch13_graph(n, gen, kind == "random-walk")
        h = torch.randn(n, width, generator=gen)
        if signs == "non-negative":
            h = h.abs()
        layer = ResidualMessagePassing(width)
        with torch.no_grad():
            layer.lin.weight.copy_(torch.randn(width, width, generator=gen))
            layer.lin.bias.copy_(torch.randn(width, generator=gen))
        where = f"{n} nodes of width {width}, a {kind} P, h {signs}"
        given = (h.clone(), P.clone())
        with torch.no_grad():
            out = layer(h, P)
        _observe(
            f"shape, {where}",
            list(torch.as_tensor(out).shape),
            f"for {where}, the layer returns one row per node, of the input's width",
            student="the layer returns one row per node, of the input's width",
        )
        _observe(
            f"output, {where}",
            torch.as_tensor(out).double(),
            f"for {where}, wrong output: h + relu(lin(P @ h)), with P applied once, before the linear map, and "
            "the ReLU on the branch only",
            close=_CH13_FLOAT32,
            student="wrong output for some input: h + relu(lin(P @ h)), with P applied once, before the linear "
            "map, and the ReLU on the branch only",
        )
        _observe(
            f"inputs left alone, {where}",
            [h, P],
            "the layer must not change h or P",
        )
        # gradients of a random projection of the output, to the input and to the linear map
        x = given[0].clone().requires_grad_(True)
        layer.zero_grad()
        weights = torch.randn(n, width, generator=gen)
        (layer(x, P) * weights).sum().backward()
        for name, grad in (
            ("h", x.grad),
            ("lin.weight", layer.lin.weight.grad),
            ("lin.bias", layer.lin.bias.grad),
        ):
            _observe(
                f"gradient to {name}, {where}",
                None if grad is None else grad.double(),
                f"for {where}, wrong gradient to {name}: the gradient flows through the shortcut and the branch, "
                "nothing detached",
                close=_CH13_FLOAT32,
                student="wrong gradient to the input or the linear map: the gradient flows through the shortcut "
                "and the branch, nothing detached",
            )
