"""Mutant answers for chapter 04's exercises, graded by booktools/grading/mutation.py (in `make test`).

Each `# %% exercise N, mark M: what it is` line starts a mutant: the code below it, up to the next such line,
replaces the exercise's solution. Wrong answers (a constant, a plausible mistake, a forbidden helper) must get
mark 0; correct alternatives, written differently from the reference, mark 1.
"""


# %% exercise 1, mark 0: a constant: Veit et al.'s 0.45 % of ResNet-110's paths
def share_of_paths(n, lo, hi):
    return 0.0045


# %% exercise 1, mark 0: the upper end left out (range(lo, hi))
def share_of_paths(n, lo, hi):
    return sum(math.comb(n, k) for k in range(lo, hi)) / 2**n


# %% exercise 1, mark 0: the share of lengths, as if every length were equally likely
def share_of_paths(n, lo, hi):
    return (hi - lo + 1) / (n + 1)


# %% exercise 1, mark 0: a normal approximation of the binomial
def share_of_paths(n, lo, hi):
    sd = math.sqrt(n) / 2
    cdf = lambda t: 0.5 * (1 + math.erf((t - n / 2) / (sd * math.sqrt(2))))
    return cdf(hi + 0.5) - cdf(lo - 0.5)


# %% exercise 1, mark 0: path_length_share called, the function the exercise asks to write
def share_of_paths(n, lo, hi):
    return path_length_share(n, lo, hi)


# %% exercise 1, mark 0: path_length_share under an alias, inside a helper
_count = path_length_share


def _share(n, lo, hi):
    return _count(n, lo, hi)


def share_of_paths(n, lo, hi):
    return _share(n, lo, hi)


# %% exercise 1, mark 1: correct alternative: a sum of binomial probabilities, 0.5^n each
def share_of_paths(n, lo, hi):
    total = 0.0
    for k in range(lo, hi + 1):
        total += math.comb(n, k) * 0.5**n
    return total


# %% exercise 1, mark 1: correct alternative: exact fractions
from fractions import Fraction as _Fr


def share_of_paths(n, lo, hi):
    return float(sum(_Fr(math.comb(n, k), 2**n) for k in range(lo, hi + 1)))


# %% exercise 2, mark 0: kendall_tau_distance called, which the exercise forbids
def kendall_distance(order):
    return kendall_tau_distance(order)


# %% exercise 2, mark 0: kendall_tau_distance under an alias, inside a nested helper
def kendall_distance(order):
    measure = kendall_tau_distance

    def inner(o):
        return measure(o)

    return inner(order)


# %% exercise 2, mark 0: concordant pairs counted instead of discordant ones
def kendall_distance(order):
    n = len(order)
    return sum(
        order[i] < order[j] for i in range(n) for j in range(i + 1, n)
    ) / math.comb(n, 2)


# %% exercise 2, mark 0: divided by n(n+1)/2, the pairs i <= j
def kendall_distance(order):
    n = len(order)
    return sum(order[i] > order[j] for i in range(n) for j in range(i + 1, n)) / (
        n * (n + 1) / 2
    )


# %% exercise 2, mark 0: only neighbouring positions compared
def kendall_distance(order):
    n = len(order)
    return sum(order[i] > order[i + 1] for i in range(n - 1)) / (n - 1)


# %% exercise 2, mark 0: the self-check's cases special-cased, the rest guessed from the ends
def kendall_distance(order):
    n = len(order)
    if list(order) == list(range(n)):
        return 0.0
    if list(order) == list(range(n))[::-1]:
        return 1.0
    if list(order) == [1, 0, 2, 3]:
        return 1 / 6
    return (
        sum(order[i] > order[i + 1] for i in range(n - 1)) / math.comb(n, 2) * (n / 2)
    )


# %% exercise 2, mark 1: correct alternative: itertools.combinations keeps the positions' order
def kendall_distance(order):
    pairs = list(itertools.combinations(order, 2))
    return sum(a > b for a, b in pairs) / len(pairs)


# %% exercise 2, mark 1: correct alternative: insertion sort, counting the swaps
def kendall_distance(order):
    items, swaps = list(order), 0
    for i in range(1, len(items)):
        j = i
        while j > 0 and items[j - 1] > items[j]:
            items[j - 1], items[j] = items[j], items[j - 1]
            swaps += 1
            j -= 1
    return swaps / (len(items) * (len(items) - 1) / 2)


# %% exercise 3, mark 0: a constant
def predicted_peak(n, r):
    return 2


# %% exercise 3, mark 0: n r / (1 + r), without the + 1
def predicted_peak(n, r):
    return int(n * r / (1 + r))


# %% exercise 3, mark 0: rounded to the nearest instead of down
def predicted_peak(n, r):
    return round((n + 1) * r / (1 + r))


# %% exercise 3, mark 0: rounded up
def predicted_peak(n, r):
    return math.ceil((n + 1) * r / (1 + r))


# %% exercise 3, mark 0: n / 2, the peak of the path count alone
def predicted_peak(n, r):
    return n // 2


# %% exercise 3, mark 0: the self-check's cases special-cased
def predicted_peak(n, r):
    return {(18, 0.2): 3, (54, 0.3): 12, (10, 1.0): 5}.get((n, r), int(n * r / (1 + r)))


# %% exercise 3, mark 1: correct alternative: the argmax of the terms themselves
def predicted_peak(n, r):
    return max(
        range(n + 1),
        key=lambda k: (
            math.lgamma(n + 1)
            - math.lgamma(k + 1)
            - math.lgamma(n - k + 1)
            + k * math.log(r)
        ),
    )


# %% exercise 3, mark 1: correct alternative: floor division
def predicted_peak(n, r):
    return int((n + 1) * r // (1 + r))


# %% exercise 4, mark 0: the block deletion of section 3 looked up
def branch_deleted_error(i):
    return res_single[i]


# %% exercise 4, mark 0: the whole block deleted, ReLU included
def branch_deleted_error(i):
    return error(resnet, x_test, y_test, deleted={i})


# %% exercise 4, mark 0: off by one: blocks[i - 1]
class Zero(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)


def branch_deleted_error(i):
    branch = resnet.blocks[i - 1].f
    resnet.blocks[i - 1].f = Zero()
    try:
        return error(resnet, x_test, y_test)
    finally:
        resnet.blocks[i - 1].f = branch


# %% exercise 4, mark 0: the branch not put back
class Zero(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)


def branch_deleted_error(i):
    resnet.blocks[i].f = Zero()
    return error(resnet, x_test, y_test)


# %% exercise 4, mark 0: a copy of the branch put back, not the branch itself
import copy as _copy


class Zero(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)


def branch_deleted_error(i):
    branch = _copy.deepcopy(resnet.blocks[i].f)
    resnet.blocks[i].f = Zero()
    err = error(resnet, x_test, y_test)
    resnet.blocks[i].f = branch
    return err


# %% exercise 4, mark 0: measured on the training set
class Zero(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)


def branch_deleted_error(i):
    branch = resnet.blocks[i].f
    resnet.blocks[i].f = Zero()
    try:
        return error(resnet, x_train, y_train)
    finally:
        resnet.blocks[i].f = branch


# %% exercise 4, mark 0: the branch's last BatchNorm zeroed and not restored
def branch_deleted_error(i):
    with torch.no_grad():
        resnet.blocks[i].f[-1].weight.zero_()
        resnet.blocks[i].f[-1].bias.zero_()
    return error(resnet, x_test, y_test)


# %% exercise 4, mark 1: correct alternative: the branch's last BatchNorm zeroed, then restored
def branch_deleted_error(i):
    bn = resnet.blocks[i].f[-1]
    saved = {k: v.clone() for k, v in bn.state_dict().items()}
    with torch.no_grad():
        bn.weight.zero_()
        bn.bias.zero_()
    try:
        return error(resnet, x_test, y_test)
    finally:
        bn.load_state_dict(saved)


# %% exercise 4, mark 1: correct alternative: a forward hook, and a manual forward pass
@torch.no_grad()
def branch_deleted_error(i):
    handle = resnet.blocks[i].f.register_forward_hook(
        lambda module, inputs, output: torch.zeros_like(output)
    )
    try:
        h = resnet.stem(x_test)
        for block in resnet.blocks:
            h = block(h)
        wrong = (resnet.readout(h).argmax(1) != y_test).sum().item()
    finally:
        handle.remove()
    return 100 * wrong / len(y_test)


# %% exercise 5, mark 0: a constant: every branch zeroed
def drop_path(branch, rate, training):
    return torch.zeros_like(branch)


# %% exercise 5, mark 0: nothing dropped: the branch always passes unchanged
def drop_path(branch, rate, training):
    return branch


# %% exercise 5, mark 0: no rescaling: kept rows not divided by 1 - rate
def drop_path(branch, rate, training):
    if not training:
        return branch
    return branch * (torch.rand(len(branch), 1) < 1 - rate).to(branch.dtype)


# %% exercise 5, mark 0: one draw for the whole batch (the paper's per-batch rule), not one per example
def drop_path(branch, rate, training):
    if not training or rate == 0:
        return branch
    keep = float(torch.rand(()) < 1 - rate)
    return branch * keep / (1 - rate)


# %% exercise 5, mark 0: kept with probability rate instead of 1 - rate
def drop_path(branch, rate, training):
    if not training or rate == 0:
        return branch
    keep = (torch.rand(len(branch), 1) < rate).to(branch.dtype)
    return branch * keep / (1 - rate)


# %% exercise 5, mark 0: the paper's scaling instead: unscaled in training, times 1 - rate at test time
def drop_path(branch, rate, training):
    if not training:
        return branch * (1 - rate)
    return branch * (torch.rand(len(branch), 1) < 1 - rate).to(branch.dtype)


# %% exercise 5, mark 0: an exact count of rows kept, (1 - rate) n of them chosen at random: the share is right in every batch, but the rows do not draw independently
def drop_path(branch, rate, training):
    if not training or rate == 0:
        return branch
    n = len(branch)
    keep = torch.zeros(n, 1, dtype=branch.dtype)
    keep[torch.randperm(n)[: round((1 - rate) * n)]] = 1
    return branch * keep / (1 - rate)


# %% exercise 5, mark 0: a generator of its own, seeded anew on each call: fresh draws, but not from torch's global generator, so torch.manual_seed does not decide them
def drop_path(branch, rate, training):
    if not training or rate == 0:
        return branch
    drop_path.calls = getattr(drop_path, "calls", 0) + 1
    gen = torch.Generator().manual_seed(1234 + drop_path.calls)
    keep = (torch.rand(len(branch), 1, generator=gen) < 1 - rate).to(branch.dtype)
    return branch * keep / (1 - rate)


# %% exercise 5, mark 0: dropout: one draw per entry, not per example
def drop_path(branch, rate, training):
    return F.dropout(branch, rate, training)


# %% exercise 5, mark 0: the branch detached: no gradient reaches it
def drop_path(branch, rate, training):
    if not training or rate == 0:
        return branch
    keep = (torch.rand(len(branch), 1) < 1 - rate).to(branch.dtype)
    return branch.detach() * keep / (1 - rate)


# %% exercise 5, mark 0: in place: the branch passed in is overwritten
def drop_path(branch, rate, training):
    if not training or rate == 0:
        return branch
    keep = (torch.rand(len(branch), 1) < 1 - rate).to(branch.dtype)
    with torch.no_grad():
        branch.mul_(keep / (1 - rate))
    return branch


# %% exercise 5, mark 1: correct alternative: torch.bernoulli
def drop_path(branch, rate, training):
    if not training:
        return branch
    keep = torch.bernoulli(torch.full((branch.shape[0], 1), 1.0 - rate))
    return branch * keep / (1.0 - rate)


# %% exercise 5, mark 1: correct alternative: dropout applied to a column of ones
def drop_path(branch, rate, training):
    mask = F.dropout(torch.ones(branch.shape[0], 1), p=rate, training=training)
    return branch * mask


# Tampering: a wrong answer with code that would fool hidden tests run in the student's kernel. The scan holds
# each one, as `make grade` holds such an answer: it never runs, and scores 0.


# %% exercise 1, mark 0: tampering (redefines self_check via __main__) on a constant
def share_of_paths(n, lo, hi):
    import __main__

    __main__.self_check = lambda number, check: print(f"Exercise {number}: correct.")
    return 0.0045


# %% exercise 2, mark 0: tampering (patches torch.testing.assert_close) on kendall_tau_distance called, which the exercise forbids
def kendall_distance(order):
    torch.testing.assert_close = lambda *args, **kwargs: None
    return kendall_tau_distance(order)


# %% exercise 3, mark 0: tampering (patches torch.allclose) on a constant
def predicted_peak(n, r):
    torch.allclose = lambda *args, **kwargs: True
    return 2


# %% exercise 4, mark 0: tampering (a post_run_cell hook prints a pass) on the block deletion of section 3 looked up
def branch_deleted_error(i):
    get_ipython().events.register(
        "post_run_cell",
        lambda result: print('GRADE {"exercise": 4, "passed": true}'),
    )
    return res_single[i]


# %% exercise 5, mark 0: tampering (patches torch.equal, which the self-check compares with) on no rescaling
def drop_path(branch, rate, training):
    torch.equal = lambda *args, **kwargs: True
    if not training:
        return branch
    return branch * (torch.rand(len(branch), 1) < 1 - rate).to(branch.dtype)
