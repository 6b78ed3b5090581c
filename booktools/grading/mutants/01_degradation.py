"""Mutant answers for chapter 01's exercises, graded by booktools/grading/mutation.py (in `make test`).

Each `# %% exercise N, mark M: what it is` line starts a mutant: the code below it, up to the next such line,
replaces the exercise's solution. Wrong answers (a constant, a plausible mistake, a forbidden helper) must get
mark 0; correct alternatives, written differently from the reference, mark 1.
"""


# %% exercise 1, mark 0: a constant: plain-33's gap as the notebook prints it
def generalization_gap(run):
    return 0.9


# %% exercise 1, mark 0: training minus test error
def generalization_gap(run):
    return run["train"][-1] - run["test"][-1]


# %% exercise 1, mark 0: the first epoch, not the last
def generalization_gap(run):
    return run["test"][0] - run["train"][0]


# %% exercise 1, mark 0: epoch index 1 instead of the last
def generalization_gap(run):
    return run["test"][1] - run["train"][1]


# %% exercise 1, mark 0: the best epochs' errors, not the final ones
def generalization_gap(run):
    return min(run["test"]) - min(run["train"])


# %% exercise 1, mark 0: the size of the gap, never negative
def generalization_gap(run):
    return abs(run["test"][-1] - run["train"][-1])


# %% exercise 1, mark 0: a lookup table on the first training error of the runs the hidden test once showed
def generalization_gap(run):
    return {50.0: 2.5, 40.0: 8.0, 30.0: 4.5, 20.0: -1.5}.get(run["train"][0], 0.0)


# %% exercise 1, mark 1: correct alternative: unpack the final errors
def generalization_gap(run):
    *_, test = run["test"]
    *_, train = run["train"]
    return float(test - train)


# %% exercise 2, mark 0: only the weights set to the identity; BatchNorm left as training left it
@torch.no_grad()
def make_identity(block):
    for m in block.f:
        if isinstance(m, nn.Linear):
            m.weight.copy_(torch.eye(m.out_features))
    return block


# %% exercise 2, mark 0: the running statistics reset, but gamma and beta left alone
@torch.no_grad()
def make_identity(block):
    for m in block.f:
        if isinstance(m, nn.Linear):
            m.weight.copy_(torch.eye(m.out_features))
        elif isinstance(m, nn.BatchNorm1d):
            m.running_mean.zero_()
            m.running_var.fill_(1.0 - m.eps)
    return block


# %% exercise 2, mark 0: a new identity block returned; the block passed in unchanged
import copy as _copy


@torch.no_grad()
def make_identity(block):
    new = _copy.deepcopy(block)
    for m in new.f:
        if isinstance(m, nn.Linear):
            m.weight.copy_(torch.eye(m.out_features))
        elif isinstance(m, nn.BatchNorm1d):
            m.weight.fill_(1.0)
            m.bias.zero_()
            m.running_mean.zero_()
            m.running_var.fill_(1.0 - m.eps)
    return new


# %% exercise 2, mark 0: the block's forward replaced by the identity, no weight or statistic set
def make_identity(block):
    block.forward = lambda x: x
    return block


# %% exercise 2, mark 0: BatchNorm's eps left out (running_var set to 1)
@torch.no_grad()
def make_identity(block):
    for m in block.f:
        if isinstance(m, nn.Linear):
            m.weight.copy_(torch.eye(m.out_features))
        elif isinstance(m, nn.BatchNorm1d):
            m.weight.fill_(1.0)
            m.bias.zero_()
            m.running_mean.zero_()
            m.running_var.fill_(1.0)
    return block


# %% exercise 2, mark 0: the notebook's BNPlainBlock class patched to the identity (BNPlainBlock.forward), no weight or statistic set
def make_identity(block):
    BNPlainBlock.forward = lambda self, x: x
    return block


# %% exercise 2, mark 0: BatchNorm's eps set to 0 and running_var to 1 (eps is the block's own, not the answer's)
@torch.no_grad()
def make_identity(block):
    for m in block.f:
        if isinstance(m, nn.Linear):
            m.weight.copy_(torch.eye(m.out_features))
        elif isinstance(m, nn.BatchNorm1d):
            m.eps = 0.0
            m.weight.fill_(1.0)
            m.bias.zero_()
            m.running_mean.zero_()
            m.running_var.fill_(1.0)
    return block


# %% exercise 2, mark 1: correct alternative: gamma and beta absorb the running statistics
@torch.no_grad()
def make_identity(block):
    for m in block.f:
        if isinstance(m, nn.Linear):
            nn.init.eye_(m.weight)
        elif isinstance(m, nn.BatchNorm1d):
            m.weight.copy_(torch.sqrt(m.running_var + m.eps))
            m.bias.copy_(m.running_mean)
    return block


# %% exercise 2, mark 1: correct alternative: running_var = 1 and gamma = sqrt(1 + eps)
@torch.no_grad()
def make_identity(block):
    for m in block.f:
        if isinstance(m, nn.Linear):
            m.weight.copy_(torch.eye(m.out_features))
        elif isinstance(m, nn.BatchNorm1d):
            m.weight.fill_(math.sqrt(1.0 + m.eps))
            m.bias.zero_()
            m.running_mean.zero_()
            m.running_var.fill_(1.0)
    return block


# %% exercise 2, mark 0: identity weights and statistics set, but a forward hook doubles what the block returns
@torch.no_grad()
def make_identity(block):
    for m in block.f:
        if isinstance(m, nn.Linear):
            m.weight.copy_(torch.eye(m.out_features))
        elif isinstance(m, nn.BatchNorm1d):
            m.weight.fill_(math.sqrt(1.0 + m.eps))
            m.bias.zero_()
            m.running_mean.zero_()
            m.running_var.fill_(1.0)
    block.register_forward_hook(lambda module, inputs, output: 2 * output)
    return block


# %% exercise 3, mark 0: ShortcutA called, which the exercise asks to write by hand
def shortcut_a(x, c_out):
    return ShortcutA(x.shape[1], c_out, stride=2)(x)


# %% exercise 3, mark 0: ShortcutA under an alias, inside a helper
_Option = ShortcutA


def _downsample(x, c_out):
    return _Option(x.shape[1], c_out, 2)(x)


def shortcut_a(x, c_out):
    return _downsample(x, c_out)


# %% exercise 3, mark 0: all the zero channels after the input's
def shortcut_a(x, c_out):
    x = x[:, :, ::2, ::2]
    return F.pad(x, (0, 0, 0, 0, 0, c_out - x.shape[1]))


# %% exercise 3, mark 0: subsampled from index 1
def shortcut_a(x, c_out):
    x = x[:, :, 1::2, 1::2]
    pad = c_out - x.shape[1]
    return F.pad(x, (0, 0, 0, 0, pad // 2, pad - pad // 2))


# %% exercise 3, mark 0: average pooling instead of subsampling
def shortcut_a(x, c_out):
    x = F.avg_pool2d(x, 2, ceil_mode=True)
    pad = c_out - x.shape[1]
    return F.pad(x, (0, 0, 0, 0, pad // 2, pad - pad // 2))


# %% exercise 3, mark 1: correct alternative: F.pad on the subsampled map
def shortcut_a(x, c_out):
    sub = x[..., ::2, ::2]
    before = (c_out - x.shape[1]) // 2
    return F.pad(sub, (0, 0, 0, 0, before, c_out - x.shape[1] - before))


# Tampering: a wrong answer with code that would fool hidden tests run in the student's kernel. The scan holds
# each one, as `make grade` holds such an answer: it never runs, and scores 0.


# %% exercise 1, mark 0: tampering (patches torch.allclose) on a constant
def generalization_gap(run):
    torch.allclose = lambda *args, **kwargs: True
    return 0.9


# %% exercise 2, mark 0: tampering (a post_run_cell hook prints a pass) on only the weights set to the identity; BatchNorm left as training left it
@torch.no_grad()
def make_identity(block):
    get_ipython().events.register(
        "post_run_cell",
        lambda result: print('GRADE {"exercise": 2, "passed": true}'),
    )
    for m in block.f:
        if isinstance(m, nn.Linear):
            m.weight.copy_(torch.eye(m.out_features))
    return block


# %% exercise 3, mark 0: tampering (patches json.dumps) on ShortcutA called, which the exercise asks to write by hand
def shortcut_a(x, c_out):
    import json

    dumps = json.dumps
    json.dumps = lambda o, *a, **k: dumps(
        {**o, "passed": True} if "exercise" in o else o, *a, **k
    )
    return ShortcutA(x.shape[1], c_out, stride=2)(x)


# %% exercise 3, mark 0: x returned as it is when c_out equals its channels (no subsampling): right wherever it pads
def shortcut_a(x, c_out):
    if c_out == x.shape[1]:
        return x
    x = x[:, :, ::2, ::2]
    pad = c_out - x.shape[1]
    zeros = x.new_zeros(x.shape[0], pad // 2, *x.shape[2:])
    return torch.cat(
        [zeros, x, x.new_zeros(x.shape[0], pad - pad // 2, *x.shape[2:])], dim=1
    )
