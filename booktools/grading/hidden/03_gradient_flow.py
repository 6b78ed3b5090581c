"""Hidden tests for notebooks/03_gradient_flow.ipynb, run by `make grade`, each with its exercise's answer alone in a
process of its own (booktools/grading/isolated.py); they use the notebook's names (torch, np, tanh_stack,
layer_norms, ...).

Each test runs the answer on inputs, depths and seeds the notebook never shows and observes what it did (`_observe`,
from booktools/grading/hidden/_common.py): its values, whether the tensor passed in is left alone, and whether a function the
exercise asks to replace by hand is used (`_refers_to`). The grader compares every observation with the reference
solution's, in a process of its own; where an answer draws a batch of its own, the reference's run sets the band
its value must land in.
booktools/grading/mutants/03_gradient_flow.py holds the wrong answers these tests must reject and the right ones they must accept.
"""


def exercise_1():
    _observe(
        "uses lag1_autocorrelation",
        _refers_to(autocorrelation, lag1_autocorrelation),
        "compute it by hand: autocorrelation must not use lag1_autocorrelation",
    )
    gen = torch.Generator().manual_seed(_seed(303))
    for n, lags, dtype in (
        (37, (0, 1, 2, 5, 36), torch.float32),
        (200, (0, 1, 3, 17, 199), torch.float64),
    ):
        # correlated, with a mean far from 0
        g = torch.randn(n, generator=gen, dtype=dtype).cumsum(0) * 0.3 + 2.0
        for lag in lags:
            got = autocorrelation(g, lag)
            _observe(
                f"a float, n {n}, lag {lag}",
                isinstance(got, float),
                "return a Python float (use .item())",
            )
            # 1e-6: float32 arithmetic on these sequences is good to about 1e-7
            _observe(
                f"value, n {n}, lag {lag}",
                got,
                f"wrong value at lag {lag} for a sequence of length {n}",
                close=(0, 1e-6),
                student="wrong value at some lags, for some of the sequences graded",
            )
        _observe(
            f"input left alone, n {n}",
            g,
            "leave the tensor passed in unchanged: subtract the mean from a copy",
        )


def _ch03_ratio_band(depth, seed, alpha, k=100):
    """Where a batch's ratio lands for this network: mean +- 6 standard deviations over k batches of BATCH
    standard normal inputs (an answer's batch is one more draw of them)."""
    net = tanh_stack(depth, residual=True, seed=seed, alpha=alpha)
    x = torch.randn(
        BATCH * k,
        WIDTH,
        generator=torch.Generator().manual_seed(seed + 1),
        requires_grad=True,
    )
    net(x).sum().backward()
    ratios = x.grad.double().pow(2).sum(1).view(k, BATCH).sum(1).sqrt() / math.sqrt(
        BATCH * WIDTH
    )
    return (
        (ratios.mean() - 6 * ratios.std()).item(),
        (ratios.mean() + 6 * ratios.std()).item(),
    )


# The networks chosen so far, {(depth, the secret's first seed): seed}. The choice does not depend on the answer, so
# `_prepare_2` and `_prepare_3` make it once for all the answers graded together (isolated.prepare_source) and each
# run starts from theirs (`_PREPARED`); a network missing there is chosen here. Only seeds, which the answer is
# passed anyway.
_CH03_NETWORKS = dict(globals().get("_PREPARED") or {})


def _ch03_band_network(depth, wrong_alphas, k):
    """The seed of a network on which the right scaling can be told from the wrong ones: its band excludes 1 (the
    ratio of unscaled-looking answers and of a constant) and the whole band of each of `wrong_alphas`; the first of
    20 candidates almost surely qualifies. Only the seed leaves: the bands are gone before the answer runs, so an
    answer that reads the stack's frames finds none."""
    key = (depth, _seed(0))
    if key not in _CH03_NETWORKS:
        _CH03_NETWORKS[key] = _ch03_choose_network(depth, wrong_alphas, k)
    return _CH03_NETWORKS[key]


def _ch03_choose_network(depth, wrong_alphas, k):
    for candidate in range(20):
        seed = _seed(100 * depth + candidate)
        low, high = _ch03_ratio_band(depth, seed, depth**-0.5, k)
        if low < 1 < high:
            continue
        if all(
            wrong_high < low or wrong_low > high
            for wrong_low, wrong_high in (
                _ch03_ratio_band(depth, seed, a, k) for a in wrong_alphas
            )
        ):
            return seed
    raise RuntimeError(
        f"the hidden test found no network of depth {depth} to grade on: report this to the instructor"
    )


# (depth, the batch the answer is graded with, batches in a band, the scalings it must tell apart from 1/sqrt(L)).
# A batch of 8 (the notebook's BATCH) leaves a band of about +-4 %, wide enough for alpha = 0.9/sqrt(L) or
# 1/sqrt(L + 1) to land in it; graded with a batch of 512 read from BATCH, the ratio's band is 8 times narrower
# and both land outside it (at depth 3, the depth off by one moves alpha by 13 %).
_CH03_CASES = (
    (3, 512, 40, ("1/L", "0.9", "1.1", "L+1", "L-1")),
    (20, 512, 40, ("1/L", "0.9", "1.1")),
    (90, 8, 100, ("1/L",)),
)


def _ch03_wrong_alphas(depth, names):
    alphas = {
        "1/L": 1 / depth,
        "0.9": 0.9 * depth**-0.5,
        "1.1": 1.1 * depth**-0.5,
        "L+1": (depth + 1) ** -0.5,
        "L-1": (depth - 1) ** -0.5,
    }
    return [alphas[name] for name in names]


def _ch03_networks():
    """Each case's (depth, k, seed of its network), with BATCH set to the case's batch while the caller uses it
    (the answer reads the batch size from BATCH, as the exercise asks), and the notebook's BATCH back after."""
    global BATCH
    notebook_batch = BATCH
    try:
        for depth, batch, k, wrong in _CH03_CASES:
            BATCH = batch
            yield (
                depth,
                k,
                _ch03_band_network(depth, _ch03_wrong_alphas(depth, wrong), k),
            )
    finally:
        BATCH = notebook_batch


def _prepare_2():
    for _ in _ch03_networks():
        pass
    return _CH03_NETWORKS


def exercise_2():
    for depth, k, seed in _ch03_networks():
        _observe(
            f"network at depth {depth}",
            seed,
            "the hidden test graded on another network than the reference's",
        )
        ratio = float(scaled_input_grad_ratio(depth, seed))
        _observe(
            f"ratio at depth {depth}",
            ratio,
            f"at depth {depth} the ratio is not what a residual stack with alpha = depth ** -0.5 gives for a "
            "batch of BATCH standard normal inputs; check alpha (1/sqrt(depth), no more, no less), that you "
            "use BATCH and WIDTH, that you backpropagate the sum of the outputs, and that you divide the input "
            "gradient's norm by the output's",
            within=_ch03_ratio_band(
                depth, seed, depth**-0.5, k
            ),  # computed after the answer ran
            student="the ratio is not what a residual stack with alpha = depth ** -0.5 gives for a batch of BATCH standard normal inputs; check alpha, that you use BATCH and WIDTH, that you backpropagate the sum of the outputs, and that you divide the input gradient's norm by the output's",
        )


def _ch03_ratios(depth, seed, scales):
    """{scale: input gradient / output gradient} of the plain stack."""
    ratios = {}
    for s in scales:
        grads = layer_norms(depth, False, s, seed)[1]
        ratios[s] = grads[0] / grads[-1]
    return ratios


def _ch03_log_gaps(depth, seed, scales):
    """{scale: |log10(input gradient / output gradient)|} of the plain stack."""
    return {s: abs(math.log10(r)) for s, r in _ch03_ratios(depth, seed, scales).items()}


def _ch03_scale_network(depth, scales):
    """The seed of a network whose closest scale tells the search from shortcuts, chosen once per depth and secret
    (kept in _CH03_NETWORKS, as for exercise 2)."""
    key = ("edge", depth, _seed(0))
    if key not in _CH03_NETWORKS:
        _CH03_NETWORKS[key] = _ch03_choose_scale_network(depth, scales)
    return _CH03_NETWORKS[key]


def _ch03_choose_scale_network(depth, scales):
    """The first candidate whose closest scale differs from the closest scale at the notebook's depth (LAYER_DEPTH,
    same seed), is not on a coarser grid of steps of 0.5, and is not 2.3, the notebook's printed answer (about half
    of all seeds qualify)."""
    for candidate in range(30):
        seed = _seed(100 * depth + candidate)
        best = min(scales, key=_ch03_log_gaps(depth, seed, scales).get)
        at_notebook_depth = min(
            scales, key=_ch03_log_gaps(LAYER_DEPTH, seed, scales).get
        )
        if best != at_notebook_depth and best != 2.3 and round(best * 2) != best * 2:
            return seed
    raise RuntimeError(
        f"the hidden test found no network of depth {depth} to grade on: report this to the instructor"
    )


# A stand-in for layer_norms, for exercise 3: the plain stack's gradient ratio, input over output, is 0.55 one step
# below the edge and 1.7 at it, a factor 1.7 / 0.55 per step of 0.1. On a log scale the edge is closest to 1
# (|log10| 0.23 against 0.26); on a linear scale the step below it is (|ratio - 1| 0.45 against 0.7), and within a
# factor 10, two steps below it already is. Its residual stack, its activations and any other depth have their
# edges elsewhere. Real stacks are too smooth in the scale to tell |log ratio| from |ratio - 1| on most seeds.
_CH03_EDGES = (1.3, 1.4, 1.6, 1.7, 1.8, 1.9, 2.1, 2.2, 2.4)
_CH03_STAND_IN_DEPTH = 50


def _ch03_stand_in(edge):
    def layer_norms(depth, residual, init_scale, seed, init="default"):
        at = edge
        if depth != _CH03_STAND_IN_DEPTH:
            at += 0.3 if edge < 2 else -0.3
        if residual:
            at += 0.5 if edge < 1.5 else -0.2
        ratio = 1.7 * (1.7 / 0.55) ** ((float(init_scale) - at) / 0.1)
        grads = ratio ** (1 - np.arange(depth + 1) / depth)
        return np.ones(depth + 1), grads, np.ones(depth + 1)

    return layer_norms


_CH03_SCALES = [round(1.0 + 0.1 * k, 1) for k in range(21)]
_CH03_SCALE_DEPTHS = (20, 70)


def _prepare_3():
    for depth in _CH03_SCALE_DEPTHS:
        _ch03_scale_network(depth, _CH03_SCALES)
    return _CH03_NETWORKS


def exercise_3():
    global layer_norms
    scales = _CH03_SCALES
    edge = _CH03_EDGES[_seed(3) % len(_CH03_EDGES)]
    notebook_layer_norms = layer_norms
    layer_norms = _ch03_stand_in(edge)
    try:
        scale = float(critical_scale(_CH03_STAND_IN_DEPTH, _seed(4)))
    finally:
        layer_norms = notebook_layer_norms
    _observe(
        "scale on a stand-in stack",
        scale,
        "on a stack whose gradient ratio (input over output) is 0.55 one scale below its edge and 1.7 at the edge, "
        "the answer did not return the edge: compare the gradients on a log scale (|log ratio|, not |ratio - 1|), "
        "and call the notebook's layer_norms inside critical_scale, with the depth and seed it is given",
        one_of=[edge],
    )
    for depth in _CH03_SCALE_DEPTHS:
        seed = _ch03_scale_network(depth, scales)
        _observe(
            f"network at depth {depth}",
            seed,
            "the hidden test graded on another network than the reference's",
        )
        scale = float(critical_scale(depth, seed))
        gaps = _ch03_log_gaps(depth, seed, scales)  # after the answer ran
        _observe(
            f"scale at depth {depth}",
            scale,
            f"at depth {depth}, the answer is not the scale among 1.0, 1.1, ..., 3.0 that brings the plain stack's "
            "input gradient closest to its output gradient on a log scale: return the closest of all the scales "
            "tried",
            one_of=[s for s in scales if gaps[s] <= min(gaps.values()) + 1e-6],
            student="the answer is not the scale among 1.0, 1.1, ..., 3.0 that brings the plain stack's input gradient closest to its output gradient on a log scale: return the closest of all the scales tried",
        )
