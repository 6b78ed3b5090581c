"""Mutant answers for chapter 06's exercises, graded by booktools/grading/mutation.py (in `make test`).

Each `# %% exercise N, mark M: what it is` line starts a mutant: the code below it, up to the next such line,
replaces the exercise's solution. Wrong answers (a constant, a plausible mistake, a forbidden helper) must get
mark 0; correct alternatives, written differently from the reference, mark 1.
"""


# %% exercise 1, mark 0: a constant: random tokens' relative residual at layer 0, about 1
def distance_from_rank_one(X):
    return 1.0


# %% exercise 1, mark 0: relative_residual called, which the exercise forbids
def distance_from_rank_one(X):
    return relative_residual(X)


# %% exercise 1, mark 0: relative_residual under an alias, inside a helper
_measure = relative_residual


def _spread(X):
    return _measure(X)


def distance_from_rank_one(X):
    return _spread(X)


# %% exercise 1, mark 0: the mean over features (columns), not over tokens
def distance_from_rank_one(X):
    return ((X - X.mean(dim=1, keepdim=True)).norm() / X.norm()).item()


# %% exercise 1, mark 0: the residual's norm, not divided by ||X||
def distance_from_rank_one(X):
    return (X - X.mean(dim=0, keepdim=True)).norm().item()


# %% exercise 1, mark 0: off by one: the mean token as the sum over n - 1 tokens
def distance_from_rank_one(X):
    mean_token = X.sum(dim=0) / (X.shape[0] - 1)
    return ((X - mean_token).norm() / X.norm()).item()


# %% exercise 1, mark 1: correct alternative: the centring matrix I - 11^T / n
def distance_from_rank_one(X):
    n = X.shape[0]
    centring = torch.eye(n, dtype=X.dtype) - torch.full((n, n), 1.0 / n, dtype=X.dtype)
    return float(torch.linalg.matrix_norm(centring @ X) / torch.linalg.matrix_norm(X))


# %% exercise 2, mark 0: y returned unchanged
def invert_coupling(f, g, y):
    return y.clone()


# %% exercise 2, mark 0: x1 rebuilt with F(y2) instead of F(x2)
def invert_coupling(f, g, y):
    y1, y2 = y.chunk(2, dim=-1)
    return torch.cat([y1 - f(y2), y2 - g(y1)], dim=-1)


# %% exercise 2, mark 0: F and G swapped
def invert_coupling(f, g, y):
    y1, y2 = y.chunk(2, dim=-1)
    x2 = y2 - f(y1)
    x1 = y1 - g(x2)
    return torch.cat([x1, x2], dim=-1)


# %% exercise 2, mark 0: the branches added instead of subtracted
def invert_coupling(f, g, y):
    y1, y2 = y.chunk(2, dim=-1)
    x2 = y2 + g(y1)
    x1 = y1 + f(x2)
    return torch.cat([x1, x2], dim=-1)


# %% exercise 2, mark 0: the halves concatenated in the wrong order
def invert_coupling(f, g, y):
    y1, y2 = y.chunk(2, dim=-1)
    x2 = y2 - g(y1)
    x1 = y1 - f(x2)
    return torch.cat([x2, x1], dim=-1)


# %% exercise 2, mark 0: right values, but y overwritten in place
def invert_coupling(f, g, y):
    y1, y2 = y.chunk(2, dim=-1)
    y2 -= g(y1)
    y1 -= f(y2)
    return y


# %% exercise 2, mark 1: correct alternative: slices and torch.split
def invert_coupling(f, g, y):
    half = y.shape[-1] // 2
    y1, y2 = torch.split(y, [half, y.shape[-1] - half], dim=-1)
    x2 = y2 - g(y1)
    return torch.cat((y1 - f(x2), x2), dim=-1)


# %% exercise 3, mark 0: a constant: the self-check's lowest peak, 30 stream tensors of 16 x 32 float32
def backward_peak_bytes(blocks, x, segment_length):
    return 30 * 16 * 32 * 4


# %% exercise 3, mark 0: only the kept inputs, not the rebuilt segment
def backward_peak_bytes(blocks, x, segment_length):
    segments = nn.ModuleList(
        nn.Sequential(*blocks[i : i + segment_length])
        for i in range(0, len(blocks), segment_length)
    )

    class Segmented(nn.Module):
        def __init__(self):
            super().__init__()
            self.segments = segments

        def forward(self, h):
            for segment in self.segments:
                h = checkpoint(segment, h, use_reentrant=False)
            return h

    return saved_activation_bytes(Segmented(), x)


# %% exercise 3, mark 0: x.detach() between checkpoint segments
def backward_peak_bytes(blocks, x, segment_length):
    segments = nn.ModuleList(
        nn.Sequential(*blocks[i : i + segment_length])
        for i in range(0, len(blocks), segment_length)
    )

    class Segmented(nn.Module):
        def __init__(self):
            super().__init__()
            self.segments = segments

        def forward(self, h):
            for segment in self.segments:
                h = checkpoint(segment, h.detach(), use_reentrant=False)
            return h

    return saved_activation_bytes(Segmented(), x) + saved_activation_bytes(
        segments[0], x
    )


# %% exercise 3, mark 0: the rebuilt segment taken to be the last one
def backward_peak_bytes(blocks, x, segment_length):
    segments = nn.ModuleList(
        nn.Sequential(*blocks[i : i + segment_length])
        for i in range(0, len(blocks), segment_length)
    )

    class Segmented(nn.Module):
        def __init__(self):
            super().__init__()
            self.segments = segments

        def forward(self, h):
            for segment in self.segments:
                h = checkpoint(segment, h, use_reentrant=False)
            return h

    return saved_activation_bytes(Segmented(), x) + saved_activation_bytes(
        segments[-1], x
    )


# %% exercise 3, mark 0: Chen's formula with the first block's cost, not a measured run
def backward_peak_bytes(blocks, x, segment_length):
    a = saved_activation_bytes(blocks[0], x)
    return math.ceil(len(blocks) / segment_length) * x.nbytes + segment_length * a


# %% exercise 3, mark 0: the segments run without checkpointing, then the first segment added
def backward_peak_bytes(blocks, x, segment_length):
    run = nn.Sequential(*blocks)
    return saved_activation_bytes(run, x) + saved_activation_bytes(
        nn.Sequential(*blocks[:segment_length]), x
    )


# %% exercise 3, mark 0: the right count from shapes, every gradient touched by a backward of something else
def backward_peak_bytes(blocks, x, segment_length):
    kept = math.ceil(len(blocks) / segment_length) * x.nbytes
    rebuilt = saved_activation_bytes(nn.Sequential(*blocks[:segment_length]), x)
    sum(p.sum() for block in blocks for p in block.parameters()).backward()
    return kept + rebuilt


# %% exercise 3, mark 1: correct alternative: the rebuilt segment measured on a copy of its blocks
import copy as _copy


def backward_peak_bytes(blocks, x, segment_length):
    parts = [
        nn.Sequential(*blocks[i : i + segment_length])
        for i in range(0, len(blocks), segment_length)
    ]

    class _Run(nn.Module):
        def __init__(self):
            super().__init__()
            self.parts = nn.ModuleList(parts)

        def forward(self, h):
            for part in self.parts:
                h = checkpoint(part, h, use_reentrant=False)
            return h

    return saved_activation_bytes(_Run(), x) + saved_activation_bytes(
        _copy.deepcopy(parts[0]), x
    )


# %% exercise 3, mark 1: correct alternative: a module class of its own, checkpoint under an alias
from torch.utils.checkpoint import checkpoint as _recompute


class _Chunked(nn.Module):
    def __init__(self, blocks, length):
        super().__init__()
        self.parts = nn.ModuleList(
            nn.Sequential(*blocks[i : i + length])
            for i in range(0, len(blocks), length)
        )

    def forward(self, h):
        for part in self.parts:
            h = _recompute(part, h, use_reentrant=False)
        return h


def backward_peak_bytes(blocks, x, segment_length):
    kept = saved_activation_bytes(_Chunked(blocks, segment_length), x)
    return kept + saved_activation_bytes(nn.Sequential(*blocks[:segment_length]), x)


# Tampering: a wrong answer with code that would fool hidden tests run in the student's kernel. The scan holds
# each one, as `make grade` holds such an answer: it never runs, and scores 0.


# %% exercise 1, mark 0: tampering (patches torch.testing.assert_close) on a constant
def distance_from_rank_one(X):
    torch.testing.assert_close = lambda *args, **kwargs: None
    return 1.0


# %% exercise 2, mark 0: tampering (patches torch.allclose) on y returned unchanged
def invert_coupling(f, g, y):
    torch.allclose = lambda *args, **kwargs: True
    return y.clone()


# %% exercise 3, mark 0: tampering (a post_run_cell hook prints a pass) on a constant
def backward_peak_bytes(blocks, x, segment_length):
    get_ipython().events.register(
        "post_run_cell",
        lambda result: print('GRADE {"exercise": 3, "passed": true}'),
    )
    return 30 * 16 * 32 * 4
