"""Mutant answers for chapter 03's exercises, graded by booktools/grading/mutation.py (in `make test`).

Each `# %% exercise N, mark M: what it is` line starts a mutant: the code below it, up to the next such line,
replaces the exercise's solution. Wrong answers (a constant, a plausible mistake, a forbidden helper) must get
mark 0; correct alternatives, written differently from the reference, mark 1.
"""


# %% exercise 1, mark 0: lag1_autocorrelation called at lag 1, which the exercise forbids
def autocorrelation(g, lag):
    if lag == 1:
        return lag1_autocorrelation(g)
    g = g.double() - g.double().mean()
    return ((g[lag:] * g[: len(g) - lag]).sum() / (g * g).sum()).item()


# %% exercise 1, mark 0: lag1_autocorrelation under an alias, inside a helper
_acf1 = lag1_autocorrelation


def _normalised(g, lag):
    if lag == 1:
        return _acf1(g)
    g = g.double() - g.double().mean()
    return ((g[lag:] * g[: len(g) - lag]).sum() / (g * g).sum()).item()


def autocorrelation(g, lag):
    return _normalised(g, lag)


# %% exercise 1, mark 0: the mean not subtracted
def autocorrelation(g, lag):
    g = g.double()
    return ((g[lag:] * g[: len(g) - lag]).sum() / (g * g).sum()).item()


# %% exercise 1, mark 0: each sum replaced by a mean over its own number of terms
def autocorrelation(g, lag):
    g = g.double() - g.double().mean()
    return ((g[lag:] * g[: len(g) - lag]).mean() / (g * g).mean()).item()


# %% exercise 1, mark 0: circular, with torch.roll
def autocorrelation(g, lag):
    g = g.double() - g.double().mean()
    return ((g * torch.roll(g, lag)).sum() / (g * g).sum()).item()


# %% exercise 1, mark 0: Pearson correlation of the two shifted slices, each centred on its own mean
def autocorrelation(g, lag):
    if lag == 0:
        return 1.0
    a, b = g[lag:].double(), g[: len(g) - lag].double()
    a, b = a - a.mean(), b - b.mean()
    return (a @ b / (a.norm() * b.norm())).item()


# %% exercise 1, mark 0: the mean subtracted in place, from the caller's tensor
def autocorrelation(g, lag):
    g = g.double()
    g -= g.mean()
    return ((g[lag:] * g[: len(g) - lag]).sum() / (g * g).sum()).item()


# %% exercise 1, mark 0: a tensor returned, not a float
def autocorrelation(g, lag):
    g = g.double() - g.double().mean()
    return (g[lag:] * g[: len(g) - lag]).sum() / (g * g).sum()


# %% exercise 1, mark 1: correct alternative: NumPy dot products
def autocorrelation(g, lag):
    a = g.detach().double().numpy()
    a = a - a.mean()
    return float(np.dot(a[lag:], a[: a.size - lag]) / np.dot(a, a))


# %% exercise 1, mark 1: correct alternative: in float32, with torch.dot
def autocorrelation(g, lag):
    c = g - g.mean()
    n = c.numel()
    return float(torch.dot(c[lag:], c[: n - lag]) / torch.dot(c, c))


# %% exercise 2, mark 0: a constant: 1.0
def scaled_input_grad_ratio(depth, seed):
    return 1.0


# %% exercise 2, mark 0: alpha = 1/L instead of 1/sqrt(L)
def scaled_input_grad_ratio(depth, seed):
    net = tanh_stack(depth, residual=True, seed=seed, alpha=1 / depth)
    x = torch.randn(BATCH, WIDTH, requires_grad=True)
    y = net(x)
    y.sum().backward()
    return x.grad.norm().item() / torch.ones_like(y).norm().item()


# %% exercise 2, mark 0: the branches left unscaled
def scaled_input_grad_ratio(depth, seed):
    net = tanh_stack(depth, residual=True, seed=seed)
    x = torch.randn(BATCH, WIDTH, requires_grad=True)
    net(x).sum().backward()
    return x.grad.norm().item() / math.sqrt(BATCH * WIDTH)


# %% exercise 2, mark 0: a plain stack
def scaled_input_grad_ratio(depth, seed):
    net = tanh_stack(depth, residual=False, seed=seed, alpha=depth**-0.5)
    x = torch.randn(BATCH, WIDTH, requires_grad=True)
    net(x).sum().backward()
    return x.grad.norm().item() / math.sqrt(BATCH * WIDTH)


# %% exercise 2, mark 0: the ratio upside down, output over input
def scaled_input_grad_ratio(depth, seed):
    net = tanh_stack(depth, residual=True, seed=seed, alpha=depth**-0.5)
    x = torch.randn(BATCH, WIDTH, requires_grad=True)
    net(x).sum().backward()
    return math.sqrt(BATCH * WIDTH) / x.grad.norm().item()


# %% exercise 2, mark 0: the input gradient's norm, not divided by the output's
def scaled_input_grad_ratio(depth, seed):
    net = tanh_stack(depth, residual=True, seed=seed, alpha=depth**-0.5)
    x = torch.randn(BATCH, WIDTH, requires_grad=True)
    net(x).sum().backward()
    return x.grad.norm().item()


# %% exercise 2, mark 0: the mean of the outputs backpropagated, still divided by sqrt(8 * 64)
def scaled_input_grad_ratio(depth, seed):
    net = tanh_stack(depth, residual=True, seed=seed, alpha=depth**-0.5)
    x = torch.randn(BATCH, WIDTH, requires_grad=True)
    net(x).mean().backward()
    return x.grad.norm().item() / math.sqrt(BATCH * WIDTH)


# %% exercise 2, mark 0: the self-check's inputs special-cased; 1/L otherwise
def scaled_input_grad_ratio(depth, seed):
    alpha = depth**-0.5 if seed == SEED and depth in (10, 50, 100) else 1 / depth
    net = tanh_stack(depth, residual=True, seed=seed, alpha=alpha)
    x = torch.randn(BATCH, WIDTH, requires_grad=True)
    net(x).sum().backward()
    return x.grad.norm().item() / math.sqrt(BATCH * WIDTH)


# %% exercise 2, mark 0: alpha = 0.9 / sqrt(L), a little off
def scaled_input_grad_ratio(depth, seed):
    net = tanh_stack(depth, residual=True, seed=seed, alpha=0.9 * depth**-0.5)
    x = torch.randn(BATCH, WIDTH, requires_grad=True)
    net(x).sum().backward()
    return x.grad.norm().item() / math.sqrt(BATCH * WIDTH)


# %% exercise 2, mark 0: alpha = 1 / sqrt(L + 1), the depth off by one
def scaled_input_grad_ratio(depth, seed):
    net = tanh_stack(depth, residual=True, seed=seed, alpha=(depth + 1) ** -0.5)
    x = torch.randn(BATCH, WIDTH, requires_grad=True)
    net(x).sum().backward()
    return x.grad.norm().item() / math.sqrt(BATCH * WIDTH)


# %% exercise 2, mark 1: correct alternative: its own generator, autograd.grad, and the measured output gradient
def scaled_input_grad_ratio(depth, seed):
    net = tanh_stack(depth, residual=True, seed=seed, alpha=1 / math.sqrt(depth))
    x = torch.randn(
        BATCH, WIDTH, generator=torch.Generator().manual_seed(1000 + seed)
    ).requires_grad_()
    y = net(x)
    gx, gy = torch.autograd.grad(y.mean(), [x, y])
    return (gx.norm() / gy.norm()).item()


# %% exercise 2, mark 1: correct alternative: in float64
def scaled_input_grad_ratio(depth, seed):
    net = tanh_stack(depth, True, seed, alpha=depth**-0.5).double()
    x = torch.randn(BATCH, WIDTH, dtype=torch.float64, requires_grad=True)
    net(x).sum().backward()
    return float(torch.linalg.vector_norm(x.grad) / math.sqrt(x.numel()))


# %% exercise 3, mark 0: the first scale within a factor 10, not the closest
def critical_scale(depth, seed):
    for k in range(21):
        scale = round(1.0 + 0.1 * k, 1)
        grads = layer_norms(depth, False, scale, seed)[1]
        if 0.1 < grads[0] / grads[-1] < 10:
            return scale
    return 3.0


# %% exercise 3, mark 0: a constant: the notebook's answer at SEED = 0, depth 40
def critical_scale(depth, seed):
    return 2.3


# %% exercise 3, mark 0: the smallest ratio, not the one closest to 1
def critical_scale(depth, seed):
    scales = np.round(np.arange(1.0, 3.0 + 1e-9, 0.1), 1)
    return float(
        min(
            scales,
            key=lambda s: (
                layer_norms(depth, False, float(s), seed)[1][0]
                / layer_norms(depth, False, float(s), seed)[1][-1]
            ),
        )
    )


# %% exercise 3, mark 0: closest on a linear scale, |ratio - 1|, not on a log scale
def critical_scale(depth, seed):
    scales = np.round(np.arange(1.0, 3.0 + 1e-9, 0.1), 1)

    def gap(scale):
        grads = layer_norms(depth, False, float(scale), seed)[1]
        return abs(grads[0] / grads[-1] - 1)

    return float(min(scales, key=gap))


# %% exercise 3, mark 0: a residual stack instead of a plain one
def critical_scale(depth, seed):
    scales = np.round(np.arange(1.0, 3.0 + 1e-9, 0.1), 1)

    def log_gap(scale):
        grads = layer_norms(depth, True, float(scale), seed)[1]
        return abs(math.log10(grads[0] / grads[-1]))

    return float(min(scales, key=log_gap))


# %% exercise 3, mark 0: the activations' norms instead of the gradients'
def critical_scale(depth, seed):
    scales = np.round(np.arange(1.0, 3.0 + 1e-9, 0.1), 1)

    def log_gap(scale):
        acts = layer_norms(depth, False, float(scale), seed)[0]
        return abs(math.log10(acts[0] / acts[-1]))

    return float(min(scales, key=log_gap))


# %% exercise 3, mark 0: steps of 0.5, not 0.1
def critical_scale(depth, seed):
    scales = [1.0, 1.5, 2.0, 2.5, 3.0]

    def log_gap(scale):
        grads = layer_norms(depth, False, scale, seed)[1]
        return abs(math.log10(grads[0] / grads[-1]))

    return min(scales, key=log_gap)


# %% exercise 3, mark 0: the depth argument ignored (LAYER_DEPTH used)
def critical_scale(depth, seed):
    scales = np.round(np.arange(1.0, 3.0 + 1e-9, 0.1), 1)

    def log_gap(scale):
        grads = layer_norms(LAYER_DEPTH, False, float(scale), seed)[1]
        return abs(math.log10(grads[0] / grads[-1]))

    return float(min(scales, key=log_gap))


# %% exercise 3, mark 0: the index of the best scale returned, not the scale
def critical_scale(depth, seed):
    gaps = [layer_norms(depth, False, 1.0 + 0.1 * k, seed)[1] for k in range(21)]
    return int(np.argmin([abs(np.log10(g[0] / g[-1])) for g in gaps]))


# %% exercise 3, mark 1: correct alternative: a loop over linspace, natural log
def critical_scale(depth, seed):
    best, best_gap = None, math.inf
    for scale in np.linspace(1.0, 3.0, 21):
        _, grads, _ = layer_norms(depth, False, float(scale), seed)
        gap = abs(math.log(grads[0]) - math.log(grads[-1]))
        if gap < best_gap:
            best, best_gap = round(float(scale), 1), gap
    return best


# %% exercise 3, mark 1: correct alternative: the ratio or its inverse, whichever is larger, minimised
def critical_scale(depth, seed):
    def spread(scale):
        grads = layer_norms(depth, False, scale, seed)[1]
        r = grads[0] / grads[-1]
        return max(r, 1 / r)

    return min((k / 10 for k in range(10, 31)), key=spread)


# Tampering: a wrong answer with code that would fool hidden tests run in the student's kernel. The scan holds
# each one, as `make grade` holds such an answer: it never runs, and scores 0.


# %% exercise 1, mark 0: tampering (a post_run_cell hook prints a pass) on lag1_autocorrelation called at lag 1, which the exercise forbids
def autocorrelation(g, lag):
    get_ipython().events.register(
        "post_run_cell",
        lambda result: print('GRADE {"exercise": 1, "passed": true}'),
    )
    if lag == 1:
        return lag1_autocorrelation(g)
    g = g.double() - g.double().mean()
    return ((g[lag:] * g[: len(g) - lag]).sum() / (g * g).sum()).item()


# %% exercise 2, mark 0: tampering (patches json.dumps) on a constant
def scaled_input_grad_ratio(depth, seed):
    import json

    dumps = json.dumps
    json.dumps = lambda o, *a, **k: dumps(
        {**o, "passed": True} if "exercise" in o else o, *a, **k
    )
    return 1.0


# %% exercise 3, mark 0: tampering (an input transformer disarms asserts) on a constant
def critical_scale(depth, seed):
    get_ipython().input_transformers_post.append(
        lambda lines: [line.replace("assert ", "assert True or ") for line in lines]
    )
    return 2.3
