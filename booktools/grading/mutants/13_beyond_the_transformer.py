"""Mutant answers for chapter 13's exercises, graded by booktools/grading/mutation.py (in `make test`).

Each `# %% exercise N, mark M: what it is` line starts a mutant: the code below it, up to the next such line,
replaces the exercise's solution. Wrong answers (a constant, a plausible mistake, a forbidden helper) must get
mark 0; correct alternatives, written differently from the reference, mark 1.
"""


# %% exercise 1, mark 0: each feature's mean over the nodes subtracted, not the projection onto v1
def node_similarity(x, v1):
    return (x - x.mean(0, keepdim=True)).norm() / x.norm()


# %% exercise 1, mark 0: not divided by the norm of x
def node_similarity(x, v1):
    return (x - torch.outer(v1, v1 @ x)).norm()


# %% exercise 1, mark 0: the norm of the projection, not of what is left
def node_similarity(x, v1):
    return torch.outer(v1, v1 @ x).norm() / x.norm()


# %% exercise 1, mark 0: the squared ratio
def node_similarity(x, v1):
    return (x - torch.outer(v1, v1 @ x)).norm() ** 2 / x.norm() ** 2


# %% exercise 1, mark 0: each feature's ratio, averaged (right when every column has the same one)
def node_similarity(x, v1):
    rest = x - torch.outer(v1, v1 @ x)
    return (rest.norm(dim=0) / x.norm(dim=0)).mean()


# %% exercise 1, mark 0: similarity used, which the exercise forbids
def node_similarity(x, v1):
    return similarity(x, v1)


# %% exercise 1, mark 0: a constant, the self-check's 0.8
def node_similarity(x, v1):
    return torch.tensor(0.8)


# %% exercise 1, mark 0: tampering (patches torch.allclose) on the mean subtracted
def node_similarity(x, v1):
    torch.allclose = lambda *args, **kwargs: True
    return (x - x.mean(0, keepdim=True)).norm() / x.norm()


# %% exercise 1, mark 0: the projection subtracted from x in place, which changes the caller's features
def node_similarity(x, v1):
    total = x.norm()
    x -= torch.outer(v1, v1 @ x)
    return x.norm() / total


# %% exercise 1, mark 0: Pythagoras, sqrt(1 - |v1^T x|^2 / |x|^2): right until the features almost collapse
def node_similarity(x, v1):
    along = (v1 @ x).norm() / x.norm()
    return (1 - along**2).clamp(min=0).sqrt()


# %% exercise 1, mark 0: computed in float32: right at float32's rounding, not for almost collapsed features
def node_similarity(x, v1):
    x, v1 = x.float(), v1.float()
    return (x - torch.outer(v1, v1 @ x)).norm() / x.norm()


# %% exercise 1, mark 1: correct alternative: the projector I - v1 v1^T, and torch.linalg.norm
def node_similarity(x, v1):
    projector = torch.eye(len(v1), dtype=x.dtype) - torch.outer(v1, v1)
    return torch.linalg.norm(projector @ x) / torch.linalg.norm(x)


# %% exercise 1, mark 1: correct alternative: broadcasting, the coefficients of v1 as a row
def node_similarity(x, v1):
    coefficients = x.T @ v1
    rest = x - v1[:, None] * coefficients[None, :]
    return rest.pow(2).sum().sqrt() / x.pow(2).sum().sqrt()


# %% exercise 2, mark 0: divided by (1 - t) + t, which is 1: a plain lerp
def mp_sum_by_hand(a, b, t):
    return ((1 - t) * a + t * b) / ((1 - t) + t)


# %% exercise 2, mark 0: divided by sqrt(2) whatever t (right at t = 0.5 only)
def mp_sum_by_hand(a, b, t):
    return ((1 - t) * a + t * b) / 2**0.5


# %% exercise 2, mark 0: t and 1 - t swapped (right at t = 0.5 only)
def mp_sum_by_hand(a, b, t):
    return (t * a + (1 - t) * b) / ((1 - t) ** 2 + t**2) ** 0.5


# %% exercise 2, mark 0: the plain sum a + b
def mp_sum_by_hand(a, b, t):
    return a + b


# %% exercise 2, mark 0: no square root on the normaliser
def mp_sum_by_hand(a, b, t):
    return ((1 - t) * a + t * b) / ((1 - t) ** 2 + t**2)


# %% exercise 2, mark 0: lerp used, which the exercise forbids
def mp_sum_by_hand(a, b, t):
    return torch.lerp(a, b, t) / ((1 - t) ** 2 + t**2) ** 0.5


# %% exercise 2, mark 0: mp_sum used, which the exercise forbids
def mp_sum_by_hand(a, b, t):
    return mp_sum(a, b, t)


# %% exercise 2, mark 0: a constant, the self-check's 0.919
def mp_sum_by_hand(a, b, t):
    return torch.full_like(a, 0.919)


# %% exercise 2, mark 0: tampering (patches torch.allclose) on t and 1 - t swapped
def mp_sum_by_hand(a, b, t):
    torch.allclose = lambda *args, **kwargs: True
    return (t * a + (1 - t) * b) / ((1 - t) ** 2 + t**2) ** 0.5


# %% exercise 2, mark 0: computed in place in a, which changes the caller's tensor
def mp_sum_by_hand(a, b, t):
    return a.mul_(1 - t).add_(b, alpha=t).div_(((1 - t) ** 2 + t**2) ** 0.5)


# %% exercise 2, mark 0: b's weight written as t / (1 - t) with 1 - t factored out: divides by zero at t = 1
def mp_sum_by_hand(a, b, t):
    return (a + t / (1 - t) * b) * (1 - t) / ((1 - t) ** 2 + t**2) ** 0.5


# %% exercise 2, mark 0: t factored out of the normaliser: divides by zero at t = 0
def mp_sum_by_hand(a, b, t):
    return ((1 - t) * a + t * b) / (t * (((1 - t) / t) ** 2 + 1) ** 0.5)


# %% exercise 2, mark 1: correct alternative: a + t (b - a) by hand, and math.hypot
def mp_sum_by_hand(a, b, t):
    import math

    return (a + t * (b - a)) / math.hypot(1 - t, t)


# %% exercise 2, mark 1: correct alternative: both terms scaled first, then added with torch.add
def mp_sum_by_hand(a, b, t):
    norm = ((1 - t) ** 2 + t**2) ** 0.5
    return torch.add(a * ((1 - t) / norm), b, alpha=t / norm)


# %% exercise 3, mark 0: the ReLU on the sum, relu(h + lin(P h)), as in the first ResNet block
class ResidualMessagePassing(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, h, P):
        return torch.relu(h + self.lin(P @ h))


# %% exercise 3, mark 0: a second ReLU after the sum: right for non-negative h, wrong where h has negative entries
class ResidualMessagePassing(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, h, P):
        return torch.relu(h + torch.relu(self.lin(P @ h)))


# %% exercise 3, mark 0: P transposed: right for a symmetric P, wrong for a random walk's
class ResidualMessagePassing(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, h, P):
        return h + torch.relu(self.lin(P.T @ h))


# %% exercise 3, mark 0: P applied twice
class ResidualMessagePassing(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, h, P):
        return h + torch.relu(self.lin(P @ (P @ h)))


# %% exercise 3, mark 0: the shortcut missing: a plain GCN layer
class ResidualMessagePassing(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, h, P):
        return torch.relu(self.lin(P @ h))


# %% exercise 3, mark 0: the linear map before P, so P also mixes the bias (right where P's rows sum to 1)
class ResidualMessagePassing(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, h, P):
        return h + torch.relu(P @ self.lin(h))


# %% exercise 3, mark 0: the shortcut detached: no gradient through it
class ResidualMessagePassing(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, h, P):
        return h.detach() + torch.relu(self.lin(P @ h))


# %% exercise 3, mark 0: the branch added to h in place, which changes the caller's features
class ResidualMessagePassing(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, h, P):
        h += torch.relu(self.lin(P @ h))
        return h


# %% exercise 3, mark 0: GCNLayer used, which the exercise forbids
class ResidualMessagePassing(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, h, P):
        layer = GCNLayer(self.lin.in_features, residual=True)
        layer.lin = self.lin
        return layer(h, P)


# %% exercise 3, mark 0: a constant, the self-check's expected output
class ResidualMessagePassing(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, h, P):
        return torch.tensor([[7.0, -2.0], [5.0, 6.0]])


# %% exercise 3, mark 0: tampering (patches torch.allclose) on the ReLU on the sum
class ResidualMessagePassing(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, h, P):
        torch.allclose = lambda *args, **kwargs: True
        return torch.relu(h + self.lin(P @ h))


# %% exercise 3, mark 1: correct alternative: the weights on h first, then P, then the bias (linear, so the same)
class ResidualMessagePassing(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, h, P):
        branch = P @ (h @ self.lin.weight.T) + self.lin.bias
        return h + branch.clamp(min=0)


# %% exercise 3, mark 1: correct alternative: F.linear and torch.add
class ResidualMessagePassing(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, h, P):
        message = torch.matmul(P, h)
        return torch.add(h, F.relu(F.linear(message, self.lin.weight, self.lin.bias)))
