"""Mutant answers for chapter 10's exercises, graded by booktools/grading/mutation.py (in `make test`).

Each `# %% exercise N, mark M: what it is` line starts a mutant: the code below it, up to the next such line,
replaces the exercise's solution. Wrong answers (a constant, a plausible mistake, a forbidden helper) must get
mark 0; correct alternatives, written differently from the reference, mark 1.
"""


# %% exercise 1, mark 0: the product in the wrong order (the later layer on the right)
def composite_gains(h_res):
    product = torch.eye(h_res.shape[-1], dtype=h_res.dtype)
    for layer in h_res:
        product = product @ layer
    return {
        "forward": product.sum(1).abs().max().item(),
        "backward": product.sum(0).abs().max().item(),
    }


# %% exercise 1, mark 0: forward and backward swapped (columns for the forward gain)
def composite_gains(h_res):
    product = torch.eye(h_res.shape[-1], dtype=h_res.dtype)
    for layer in h_res:
        product = layer @ product
    return {
        "forward": product.sum(0).abs().max().item(),
        "backward": product.sum(1).abs().max().item(),
    }


# %% exercise 1, mark 0: the sums of absolute values (the infinity norm), not the absolute sums
def composite_gains(h_res):
    product = torch.eye(h_res.shape[-1], dtype=h_res.dtype)
    for layer in h_res:
        product = layer @ product
    return {
        "forward": product.abs().sum(1).max().item(),
        "backward": product.abs().sum(0).max().item(),
    }


# %% exercise 1, mark 0: no absolute value: the largest signed sum
def composite_gains(h_res):
    product = torch.eye(h_res.shape[-1], dtype=h_res.dtype)
    for layer in h_res:
        product = layer @ product
    return {
        "forward": product.sum(1).max().item(),
        "backward": product.sum(0).max().item(),
    }


# %% exercise 1, mark 0: the gains of each layer multiplied, not the gain of the product
def composite_gains(h_res):
    forward = backward = 1.0
    for layer in h_res:
        forward *= layer.sum(1).abs().max().item()
        backward *= layer.sum(0).abs().max().item()
    return {"forward": forward, "backward": backward}


# %% exercise 1, mark 0: the last layer forgotten (an off-by-one in the loop)
def composite_gains(h_res):
    product = torch.eye(h_res.shape[-1], dtype=h_res.dtype)
    for layer in h_res[:-1]:
        product = layer @ product
    return {
        "forward": product.sum(1).abs().max().item(),
        "backward": product.sum(0).abs().max().item(),
    }


# %% exercise 1, mark 0: composite_maps and gains used, which the exercise forbids
def composite_gains(h_res):
    g = gains(composite_maps(h_res)[-1])
    return {"forward": g["forward"].item(), "backward": g["backward"].item()}


# %% exercise 1, mark 0: a constant, the gain of a doubly stochastic stack
def composite_gains(h_res):
    return {"forward": 1.0, "backward": 1.0}


# %% exercise 1, mark 0: tampering (patches torch.allclose) on the product in the wrong order
def composite_gains(h_res):
    torch.allclose = lambda *args, **kwargs: True
    product = torch.eye(h_res.shape[-1], dtype=h_res.dtype)
    for layer in h_res:
        product = product @ layer
    return {
        "forward": product.sum(1).abs().max().item(),
        "backward": product.sum(0).abs().max().item(),
    }


# %% exercise 1, mark 1: correct alternative: one multi_dot over the reversed stack
def composite_gains(h_res):
    layers = list(h_res.flip(0))
    product = torch.linalg.multi_dot(layers) if len(layers) > 1 else layers[0]
    ones = torch.ones(h_res.shape[-1], dtype=h_res.dtype)
    return {
        "forward": (product @ ones).abs().max().item(),
        "backward": (ones @ product).abs().max().item(),
    }


# %% exercise 2, mark 0: exp first, then the plain iteration: overflows for large logits
def log_sinkhorn(logits, iters=SINKHORN_ITERS):
    m = logits.exp()
    for _ in range(iters):
        m = m / m.sum(-2, keepdim=True)
        m = m / m.sum(-1, keepdim=True)
    return m


# %% exercise 2, mark 0: rows first, then columns
def log_sinkhorn(logits, iters=SINKHORN_ITERS):
    log_m = logits
    for _ in range(iters):
        log_m = log_m - torch.logsumexp(log_m, dim=-1, keepdim=True)
        log_m = log_m - torch.logsumexp(log_m, dim=-2, keepdim=True)
    return log_m.exp()


# %% exercise 2, mark 0: the logarithms returned, exp forgotten
def log_sinkhorn(logits, iters=SINKHORN_ITERS):
    log_m = logits
    for _ in range(iters):
        log_m = log_m - torch.logsumexp(log_m, dim=-2, keepdim=True)
        log_m = log_m - torch.logsumexp(log_m, dim=-1, keepdim=True)
    return log_m


# %% exercise 2, mark 0: one iteration too few
def log_sinkhorn(logits, iters=SINKHORN_ITERS):
    log_m = logits
    for _ in range(iters - 1):
        log_m = log_m - torch.logsumexp(log_m, dim=-2, keepdim=True)
        log_m = log_m - torch.logsumexp(log_m, dim=-1, keepdim=True)
    return log_m.exp()


# %% exercise 2, mark 0: a softmax over the rows only, no iteration
def log_sinkhorn(logits, iters=SINKHORN_ITERS):
    return torch.softmax(logits, dim=-1)


# %% exercise 2, mark 0: sinkhorn called, which the exercise forbids (and overflows)
def log_sinkhorn(logits, iters=SINKHORN_ITERS):
    return sinkhorn(logits, iters)


# %% exercise 2, mark 0: tampering (redefines self_check via __main__) on rows first
def log_sinkhorn(logits, iters=SINKHORN_ITERS):
    import __main__

    __main__.self_check = lambda number, check: print(f"Exercise {number}: correct.")
    log_m = logits
    for _ in range(iters):
        log_m = log_m - torch.logsumexp(log_m, dim=-1, keepdim=True)
        log_m = log_m - torch.logsumexp(log_m, dim=-2, keepdim=True)
    return log_m.exp()


# %% exercise 2, mark 1: correct alternative: log_softmax over the columns, then over the rows
def log_sinkhorn(logits, iters=SINKHORN_ITERS):
    log_m = logits
    for _ in range(iters):
        log_m = log_m.log_softmax(dim=-2).log_softmax(dim=-1)
    return log_m.exp()


# %% exercise 2, mark 1: correct alternative: the largest entry subtracted by hand before exp
def log_sinkhorn(logits, iters=SINKHORN_ITERS):
    def lse(a, dim):
        top = a.amax(dim, keepdim=True)
        return top + (a - top).exp().sum(dim, keepdim=True).log()

    log_m = logits.clone()
    for _ in range(iters):
        log_m = log_m - lse(log_m, -2)
        log_m = log_m - lse(log_m, -1)
    return log_m.exp()


# %% exercise 3, mark 0: the rows checked instead of the columns (they are exact: stops at once)
def sinkhorn_until(logits, tol, max_iters=1000):
    m = logits.exp()
    for t in range(1, max_iters + 1):
        m = m / m.sum(0, keepdim=True)
        m = m / m.sum(1, keepdim=True)
        if (m.sum(1) - 1).abs().max() <= tol:
            return m, t
    return m, max_iters


# %% exercise 3, mark 0: the columns checked between the two steps, where they are exact
def sinkhorn_until(logits, tol, max_iters=1000):
    m = logits.exp()
    for t in range(1, max_iters + 1):
        m = m / m.sum(0, keepdim=True)
        done = (m.sum(0) - 1).abs().max() <= tol
        m = m / m.sum(1, keepdim=True)
        if done:
            return m, t
    return m, max_iters


# %% exercise 3, mark 0: the count off by one (iterations counted from 0)
def sinkhorn_until(logits, tol, max_iters=1000):
    m = logits.exp()
    for t in range(max_iters):
        m = m / m.sum(0, keepdim=True)
        m = m / m.sum(1, keepdim=True)
        if (m.sum(0) - 1).abs().max() <= tol:
            return m, t
    return m, max_iters


# %% exercise 3, mark 0: checks before the iteration, so it always does one too many
def sinkhorn_until(logits, tol, max_iters=1000):
    m, t = logits.exp(), 0
    done = False
    while t < max_iters and not done:
        done = (m.sum(0) - 1).abs().max() <= tol and t > 0
        m = m / m.sum(0, keepdim=True)
        m = m / m.sum(1, keepdim=True)
        t += 1
    return m, t


# %% exercise 3, mark 0: the cap ignored: always returns the count it stopped at, even past max_iters
def sinkhorn_until(logits, tol, max_iters=1000):
    m, t = logits.exp(), 0
    while True:
        m = m / m.sum(0, keepdim=True)
        m = m / m.sum(1, keepdim=True)
        t += 1
        if (m.sum(0) - 1).abs().max() <= tol or t >= 10 * max_iters:
            return m, t


# %% exercise 3, mark 0: the paper's 20 iterations, whatever the tolerance
def sinkhorn_until(logits, tol, max_iters=1000):
    return sinkhorn(logits, 20), 20


# %% exercise 3, mark 0: tampering (patches torch.testing.assert_close) on the rows checked
def sinkhorn_until(logits, tol, max_iters=1000):
    torch.testing.assert_close = lambda *args, **kwargs: None
    m = logits.exp()
    for t in range(1, max_iters + 1):
        m = m / m.sum(0, keepdim=True)
        m = m / m.sum(1, keepdim=True)
        if (m.sum(1) - 1).abs().max() <= tol:
            return m, t
    return m, max_iters


# %% exercise 3, mark 1: correct alternative: a while loop and allclose with rtol = 0
def sinkhorn_until(logits, tol, max_iters=1000):
    m, t = logits.exp(), 0
    ones = torch.ones(logits.shape[-1], dtype=logits.dtype)
    while t < max_iters:
        m = m / m.sum(0, keepdim=True)
        m = m / m.sum(1, keepdim=True)
        t += 1
        if torch.allclose(m.sum(0), ones, rtol=0, atol=tol):
            break
    return m, t


# %% exercise 3, mark 1: correct alternative: the pair returned as a list [m, t]
def sinkhorn_until(logits, tol, max_iters=1000):
    m = logits.exp()
    for t in range(1, max_iters + 1):
        m = m / m.sum(-2, keepdim=True)
        m = m / m.sum(-1, keepdim=True)
        if (m.sum(-2) - 1).abs().max() <= tol:
            return [m, t]
    return [m, max_iters]


# %% exercise 2, mark 0: exp first in float64, then the plain iteration: right for logits below about 709
def log_sinkhorn(logits, iters=SINKHORN_ITERS):
    m = logits.double().exp()
    for _ in range(iters):
        m = m / m.sum(-2, keepdim=True)
        m = m / m.sum(-1, keepdim=True)
    return m.to(logits.dtype)
