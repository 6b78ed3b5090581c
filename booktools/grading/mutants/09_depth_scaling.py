"""Mutant answers for chapter 09's exercises, graded by booktools/grading/mutation.py (in `make test`).

Each `# %% exercise N, mark M: what it is` line starts a mutant: the code below it, up to the next such line,
replaces the exercise's solution. Wrong answers (a constant, a plausible mistake) must get mark 0; correct
alternatives, written differently from the reference, mark 1.
"""


# %% exercise 1, mark 0: the scale on the whole sum, h <- s (h + F(h)), instead of on the branch
def stream_rms(x, branches, scale):
    h = x
    sizes = [h.pow(2).mean().sqrt()]
    for branch in branches:
        h = scale * (h + branch(h))
        sizes.append(h.pow(2).mean().sqrt())
    return torch.stack(sizes)


# %% exercise 1, mark 0: the input's RMS left out: one value per block only
def stream_rms(x, branches, scale):
    h, sizes = x, []
    for branch in branches:
        h = h + scale * branch(h)
        sizes.append(h.pow(2).mean().sqrt())
    return torch.stack(sizes) if sizes else x.new_zeros(0)


# %% exercise 1, mark 0: every branch reads the input, not the stream
def stream_rms(x, branches, scale):
    h = x
    sizes = [h.pow(2).mean().sqrt()]
    for branch in branches:
        h = h + scale * branch(x)
        sizes.append(h.pow(2).mean().sqrt())
    return torch.stack(sizes)


# %% exercise 1, mark 0: the branch's input detached: the gradient skips the branches on its way back
def stream_rms(x, branches, scale):
    h = x
    sizes = [h.pow(2).mean().sqrt()]
    for branch in branches:
        h = h + scale * branch(h.detach())
        sizes.append(h.pow(2).mean().sqrt())
    return torch.stack(sizes)


# %% exercise 1, mark 0: the standard deviation instead of the root-mean-square
def stream_rms(x, branches, scale):
    h = x
    sizes = [h.std()]
    for branch in branches:
        h = h + scale * branch(h)
        sizes.append(h.std())
    return torch.stack(sizes)


# %% exercise 1, mark 0: a number per entry taken by .item(): no gradient
def stream_rms(x, branches, scale):
    h = x
    sizes = [h.pow(2).mean().sqrt().item()]
    for branch in branches:
        h = h + scale * branch(h)
        sizes.append(h.pow(2).mean().sqrt().item())
    return torch.tensor(sizes)


# %% exercise 1, mark 1: the norm over the square root of the number of entries, in place on a clone
def stream_rms(x, branches, scale):
    h = x.clone()
    out = [torch.linalg.vector_norm(h) / h.numel() ** 0.5]
    for f in branches:
        h = h + f(h) * scale
        out.append(torch.linalg.vector_norm(h) / h.numel() ** 0.5)
    return torch.stack(out)


# %% exercise 2, mark 0: counts only the net's top-level `blocks`, not nested blocks
def set_branch_scale_(net, rule):
    depth = len(getattr(net, "blocks", [])) or 1
    for module in net.modules():
        if isinstance(module, ScaledResidualBlock):
            module.scale = BRANCH_SCALES[rule](depth)
    return net


# %% exercise 2, mark 0: counts every module of the net, not the blocks
def set_branch_scale_(net, rule):
    depth = len(list(net.modules()))
    for module in net.modules():
        if isinstance(module, ScaledResidualBlock):
            module.scale = BRANCH_SCALES[rule](depth)
    return net


# %% exercise 2, mark 0: the rule ignored, always 1/sqrt(L)
def set_branch_scale_(net, rule):
    blocks = [m for m in net.modules() if isinstance(m, ScaledResidualBlock)]
    for block in blocks:
        block.scale = len(blocks) ** -0.5
    return net


# %% exercise 2, mark 0: the scale folded into the branch's last layer: the same output, but the weights change
def set_branch_scale_(net, rule):
    blocks = [m for m in net.modules() if isinstance(m, ScaledResidualBlock)]
    with torch.no_grad():
        for block in blocks:
            factor = BRANCH_SCALES[rule](len(blocks)) / block.scale
            block.f[-1].weight.mul_(factor)
            block.f[-1].bias.mul_(factor)
    return net


# %% exercise 2, mark 0: an off-by-one, L + 1 (counting the stem as a block)
def set_branch_scale_(net, rule):
    blocks = [m for m in net.modules() if isinstance(m, ScaledResidualBlock)]
    for block in blocks:
        block.scale = BRANCH_SCALES[rule](len(blocks) + 1)
    return net


# %% exercise 2, mark 1: counts first, then sets, by name
def set_branch_scale_(net, rule):
    count = sum(isinstance(m, ScaledResidualBlock) for m in net.modules())
    value = BRANCH_SCALES[rule](count)
    for _, module in net.named_modules():
        if type(module) is ScaledResidualBlock:
            module.scale = value
    return net


# %% exercise 2, mark 1: correct alternative: the blocks collected first, the scale stored as a float32 0-d tensor
def set_branch_scale_(net, rule):
    blocks = [m for m in net.modules() if isinstance(m, ScaledResidualBlock)]
    value = BRANCH_SCALES[rule](len(blocks))
    for m in blocks:
        m.scale = torch.tensor(float(value))
    return net


# %% exercise 3, mark 0: plain argmin, which does not skip nan and has no -1
def best_lr_index(losses):
    return losses.argmin(1)


# %% exercise 3, mark 0: nan turned into inf, but -inf taken as the best and no -1
def best_lr_index(losses):
    return losses.nan_to_num(nan=math.inf).argmin(1)


# %% exercise 3, mark 0: the last column of a tie
def best_lr_index(losses):
    finite = losses.isfinite()
    flipped = torch.where(finite, losses, math.inf).flip(1).argmin(1)
    index = losses.shape[1] - 1 - flipped
    return torch.where(finite.any(1), index, -1)


# %% exercise 3, mark 0: nans replaced in place, -1 never returned
def best_lr_index(losses):
    losses[~losses.isfinite()] = math.inf
    return losses.argmin(1)


# %% exercise 3, mark 1: a loop over the rows in plain Python
def best_lr_index(losses):
    out = []
    for row in losses.tolist():
        finite = [(v, i) for i, v in enumerate(row) if math.isfinite(v)]
        out.append(min(finite)[1] if finite else -1)
    return torch.tensor(out, dtype=torch.long)


# Tampering: a wrong answer with code that would fool hidden tests run in the student's kernel. The scan holds
# each one, as `make grade` holds such an answer: it never runs, and scores 0.


# %% exercise 1, mark 0: tampering (redefines self_check via __main__) on the input's RMS repeated
def stream_rms(x, branches, scale):
    import __main__

    __main__.self_check = lambda number, check: print(f"Exercise {number}: correct.")
    return x.pow(2).mean().sqrt().repeat(len(branches) + 1)


# %% exercise 2, mark 0: tampering (patches torch.testing.assert_close) on the rule ignored, every scale 1
def set_branch_scale_(net, rule):
    torch.testing.assert_close = lambda *args, **kwargs: None
    for module in net.modules():
        if isinstance(module, ScaledResidualBlock):
            module.scale = 1.0
    return net


# %% exercise 3, mark 0: tampering (patches torch.allclose) on a constant
def best_lr_index(losses):
    torch.allclose = lambda *args, **kwargs: True
    return torch.zeros(losses.shape[0], dtype=torch.long)
