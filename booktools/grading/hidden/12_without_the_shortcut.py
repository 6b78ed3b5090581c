"""Hidden tests for notebooks/12_without_the_shortcut.ipynb, each run with its exercise's answer alone, in a process
of its own (booktools/grading/isolated.py); they use the notebook's names (np, torch, relu_c_map, solve_tat_slope,
value_skip_mix, compose_c_map, ...).

Each test runs the answer on inputs the notebook never shows and observes what it did (`_observe`, from
booktools/grading/hidden/_common.py): the ReLU C map on cosines of other shapes, the endpoints -1 and 1 among them;
TAT's slope for other depths and targets, a net too shallow for any slope, a shallow one that has one, and a target
so small that the slope is close to 1; the value-skip-init mix of other batches, heads, tokens and features, with
beta = 0 and alpha away from 1, its gradients and whether it leaves its inputs alone; and whether a helper the
exercise asks to do without is used (`_refers_to`). The grader compares every observation with the reference
solution's, in a process of its own. booktools/grading/mutants/12_without_the_shortcut.py holds the wrong answers
these tests must reject and the right ones they must accept.
"""

# The exercises ask for no dtype: an answer that computes in float32 is right. The inputs are float64, so the
# reference is exact to far less than this; float32's rounding of the ReLU C map stays below 4e-7 on [-1, 1], and
# every wrong answer in the mutants misses by more than 1e-3.
_CH12_FLOAT32 = (1e-5, 1e-6)


def exercise_1():
    _observe(
        "uses leaky_relu_c_map",
        _refers_to(relu_c_map, leaky_relu_c_map),
        "write the arc-cosine formula yourself: relu_c_map must not use leaky_relu_c_map",
    )
    gen = np.random.default_rng(_seed(121))
    cases = [
        (gen.uniform(-1, 1, 40), "40 cosines drawn in (-1, 1)"),
        (gen.uniform(-1, 1, (3, 5)), "a 3 x 5 array of cosines in (-1, 1)"),
        (
            np.concatenate([[-1.0, 1.0, 0.0], gen.uniform(-1, 1, 5)]),
            "the endpoints -1 and 1, 0, and 5 cosines in (-1, 1)",
        ),
        (np.array(gen.uniform(-1, 1)), "a single cosine as a 0-d array"),
        (
            np.stack([1 - gen.uniform(0, 1e-3, 4), gen.uniform(0, 1e-3, 4) - 1]),
            "a 2 x 4 array of cosines within 1e-3 of 1 and of -1",
        ),
        # any shape: arrays of one element keep theirs
        (gen.uniform(-1, 1, 1), "one cosine in an array of shape (1,)"),
        (gen.uniform(-1, 1, (1, 1)), "one cosine in an array of shape (1, 1)"),
    ]
    for c, where in cases:
        out = np.asarray(relu_c_map(c), dtype=float)
        _observe(
            f"shape, {where}",
            list(out.shape),
            f"for {where}, return one cosine per input cosine, in the input's shape",
            student="return one cosine per input cosine, in the input's shape",
        )
        _observe(
            f"values, {where}",
            np.nan_to_num(out, nan=-9.0, posinf=-9.0, neginf=-9.0).tolist(),
            f"wrong C(c) for {where}: (sqrt(1 - c^2) + (pi - arccos c) c) / pi, which sends -1 to 0, 0 to 1/pi and "
            "1 to 1",
            close=_CH12_FLOAT32,
            student="wrong C(c) for some cosines: (sqrt(1 - c^2) + (pi - arccos c) c) / pi, which sends -1 to 0, 0 to "
            "1/pi and 1 to 1",
        )
        _observe(
            f"input left alone, {where}",
            c.tolist(),
            "leave the cosines passed in unchanged",
        )


def _ch12_relu_end(depth: int) -> float:
    """ReLU's C map composed `depth` times at 0: the largest target any slope reaches at that depth."""
    c = 0.0
    for _ in range(depth):
        c = (math.sqrt(1 - c * c) + (math.pi - math.acos(c)) * c) / math.pi
    return c


def _ch12_tat_cases(gen) -> list:
    """(depth, eta, what) for the slopes the test asks for: deep nets with a target below ReLU's end value (the
    common case); a shallow and a deep net whose target is above it (no slope: None); shallow nets, below 13
    layers, with a target they can reach; and a target so small that the slope is above 0.9."""
    cases = []
    for low, high in ((20, 40), (41, 70), (71, 120)):
        depth = int(gen.integers(low, high + 1))
        eta = float(gen.uniform(0.75, _ch12_relu_end(depth) - 0.01))
        cases.append((depth, eta, "a deep net"))
    depth = int(gen.integers(2, 13))
    cases.append(
        (
            depth,
            float(gen.uniform(_ch12_relu_end(depth) + 0.01, 0.99)),
            "a shallow net and a target above ReLU's",
        )
    )
    depth = int(gen.integers(30, 60))
    cases.append(
        (
            depth,
            float(gen.uniform(_ch12_relu_end(depth) + 0.001, 0.999)),
            "a deep net and a target above ReLU's",
        )
    )
    for low, high in ((1, 4), (5, 12)):
        depth = int(gen.integers(low, high + 1))
        cases.append(
            (
                depth,
                float(gen.uniform(0.05, _ch12_relu_end(depth) - 0.02)),
                "a net below 13 layers and a target it can reach",
            )
        )
    # the slope solving C_a(C_a(0)) = 1e-3 is 0.945 and falls with the target: these all lie above 0.95
    cases.append(
        (2, float(gen.uniform(1e-4, 5e-4)), "a target so small the slope is near 1")
    )
    return cases


def exercise_2():
    for helper, name in (
        (tat_slope, "tat_slope"),
        (compose_c_map, "compose_c_map"),
        (leaky_relu_c_map, "leaky_relu_c_map"),
    ):
        _observe(
            f"uses {name}",
            _refers_to(solve_tat_slope, helper),
            f"compose the map and solve for the slope yourself: solve_tat_slope must not use {name}",
            student="compose the map and solve for the slope yourself: solve_tat_slope must not use the helpers "
            "the exercise names",
        )
    for depth, eta, what in _ch12_tat_cases(np.random.default_rng(_seed(212))):
        where = f"{what}: depth {depth}, eta {eta:.6f}"
        slope = solve_tat_slope(depth, eta)
        _observe(
            f"no solution, {where}",
            slope is None,
            f"for {where}: return None exactly when even ReLU (slope 0), composed depth times, sends 0 below eta",
            student="return None exactly when even ReLU (slope 0), composed depth times, sends 0 below eta",
        )
        try:
            slope = None if slope is None else float(slope)
        except (TypeError, ValueError):
            slope = None
        _observe(
            f"slope, {where}",
            slope,
            f"wrong slope for {where}: the a in [0, 1] with the scaled leaky ReLU's C map, composed depth times, "
            "sending 0 to eta, to within 1e-6",
            close=(0.0, 1.1e-6),
            student="wrong slope: the a in [0, 1] with the scaled leaky ReLU's C map, composed depth times, sending 0 "
            "to eta, to within 1e-6",
        )


def _ch12_mix_inputs(gen, batch, heads, tokens, features, zero_beta):
    """A causal softmax pattern, values, and per-head alpha and beta (beta = 0 and alpha away from 1 if asked)."""
    scores = 2 * torch.randn(
        batch, heads, tokens, tokens, generator=gen, dtype=torch.float64
    )
    future = torch.ones(tokens, tokens, dtype=torch.bool).triu(1)
    pattern = scores.masked_fill(future, float("-inf")).softmax(-1)
    v = torch.randn(batch, heads, tokens, features, generator=gen, dtype=torch.float64)
    alpha = 0.5 + torch.rand(heads, 1, 1, generator=gen, dtype=torch.float64)
    if zero_beta:
        alpha = (
            alpha + 1.0
        )  # in [1.5, 2.5): an answer that returns v at beta = 0 is wrong
        beta = torch.zeros(heads, 1, 1, dtype=torch.float64)
    else:
        beta = torch.rand(heads, 1, 1, generator=gen, dtype=torch.float64) * 1.5 - 0.5
    return pattern, v, alpha, beta


def exercise_3():
    gen = torch.Generator().manual_seed(_seed(323))
    for batch, heads, tokens, features, zero_beta in (
        (2, 4, 8, 8, False),
        (3, 2, 5, 7, False),
        (2, 3, 6, 4, True),
        (1, 1, 7, 5, False),
    ):
        where = (
            f"{batch} sequence{'s' if batch > 1 else ''}, "
            f"{heads} head{'s' if heads > 1 else ''}, {tokens} tokens, {features} features"
            + (", beta = 0 and alpha away from 1" if zero_beta else "")
        )
        pattern, v, alpha, beta = _ch12_mix_inputs(
            gen, batch, heads, tokens, features, zero_beta
        )
        given = [t.clone() for t in (pattern, v, alpha, beta)]
        out = torch.as_tensor(value_skip_mix(pattern, v, alpha, beta)).detach()
        _observe(
            f"shape, {where}",
            list(out.shape),
            f"for {where}, return one output per value: the shape of v",
            student="return one output per value: the shape of v",
        )
        _observe(
            f"values, {where}",
            out.double() if out.shape == v.shape else None,
            f"wrong output for {where}: (alpha I + beta A) V per head, with alpha and beta of each head and the "
            "identity I over the tokens",
            close=_CH12_FLOAT32,
            student="wrong output: (alpha I + beta A) V per head, with alpha and beta of each head and the identity I "
            "over the tokens",
        )
        _observe(
            f"inputs left alone, {where}",
            [pattern, v, alpha, beta],
            "value_skip_mix must not change the pattern, the values, alpha or beta",
        )
        # the gradients of a weighted sum of the output: alpha and beta are trained, so both must get one
        leaves = [t.clone().requires_grad_() for t in given]
        weights = torch.randn(v.shape, generator=gen, dtype=torch.float64)
        grads = [None] * 4
        mixed = value_skip_mix(*leaves)
        if (
            isinstance(mixed, torch.Tensor)
            and mixed.shape == v.shape
            and mixed.requires_grad
        ):
            (mixed.double() * weights).sum().backward()
            grads = [t.grad for t in leaves]
        # the pattern's gradient on and below the diagonal only: a causal pattern is zero above it, and an answer
        # that masks the mixed matrix again is right
        grads[0] = None if grads[0] is None else grads[0].tril()
        for name, grad in zip(("pattern", "v", "alpha", "beta"), grads):
            _observe(
                f"gradient of {name}, {where}",
                grad,
                f"for {where}, the gradient of {name} is wrong or missing: keep the output a differentiable "
                "function of the pattern, the values, alpha and beta (alpha and beta are trained)",
                close=_CH12_FLOAT32,
                student="a gradient is wrong or missing: keep the output a differentiable function of the pattern, "
                "the values, alpha and beta (alpha and beta are trained)",
            )
