"""What the judge computes itself from the raw values a hidden test observed (issue #41, item 2).

A hidden test in an answer's process observes raw values: what the answer returned, the inputs after the call,
gradients. Where a property is not a value but something measured from values (the share of rows a random mask
keeps, how many rows it zeroed in part, whether two draws differ), the test names a measure here
(`_observe(..., measure="name")`) and the judge computes it, in its own process, from the raw value the answer's run
observed and the reference's raw value under the same key. Which measure applies, and the band or tolerance it is
held to, come from the reference's record only: an answer's run says what it saw, never how it is measured.

Each measure takes (value, reference): the answer's raw value and the reference's (which also holds the inputs the
test drew: an answer cannot change what the judge divides by). Plain numpy; any error (a value of the wrong shape or
kind) fails the observation.
"""

import numpy as np


def _rows(value) -> np.ndarray:
    """A 2-D array of floats (rows of an output), or ValueError."""
    array = np.asarray(value, dtype=float)
    if array.ndim != 2:
        raise ValueError(f"expected rows, got an array of {array.ndim} dimensions")
    return array


# Drop path (chapter 04, exercise 5): a call's raw values are [output, the branch after the call, the weights of
# the loss sum(output * weights), the branch's gradient, the output of a second call on the same branch]; many
# calls' are a list of outputs, each a column of rows; two seeded calls' are [first output, second output].


def shape(value, reference):
    """The output's shape; None for an output that is not an array."""
    try:
        return list(np.asarray(value[0], dtype=float).shape)
    except (TypeError, ValueError):
        return None


def rows_partly_zero(value, reference):
    """How many rows of the output have some entries zero and others not: a row is kept whole or dropped whole."""
    zero = _rows(value[0]) == 0
    return int((zero.any(1) & ~zero.all(1)).sum())


def kept_and_dropped(value, reference):
    """Whether the output has both a dropped (all-zero) row and a kept one."""
    dropped = (_rows(value[0]) == 0).all(1)
    return bool(dropped.any() and not dropped.all())


def share_kept(value, reference):
    """The share of the output's rows that are not all zero."""
    return float((_rows(value[0]) != 0).any(1).mean())


def draws_differ(value, reference):
    """Whether the two calls' outputs on the same branch differ."""
    first, second = _rows(value[0]), _rows(value[4])
    return bool(first.shape != second.shape or not np.array_equal(first, second))


def draws_agree(value, reference):
    """Whether two calls made each after the same torch.manual_seed ([first, second]) drew the same: the mask comes
    from torch's global random generator, which the seed sets."""
    first, second = _rows(value[0]), _rows(value[1])
    return bool(first.shape == second.shape and np.array_equal(first, second))


def kept_scale(value, reference):
    """[smallest, largest] of output / branch over the kept rows, the branch as the test drew it (the reference's);
    None where no row is kept."""
    out, x = _rows(value[0]), _rows(reference[1])
    kept = (out != 0).any(1)
    if not kept.any():
        return None
    ratio = out[kept] / x[kept]
    return [float(ratio.min()), float(ratio.max())]


def gradient_split(value, reference):
    """[largest |gradient| on a dropped row, mean of gradient / weight over the kept rows], the weights as the test
    drew them (the reference's); None without a gradient."""
    if value[3] is None:
        return None
    out, grad, weights = _rows(value[0]), _rows(value[3]), _rows(reference[2])
    kept = (out != 0).any(1)
    return [
        float(np.abs(grad[~kept]).max()) if (~kept).any() else 0.0,
        float((grad[kept] / weights[kept]).mean()) if kept.any() else None,
    ]


def kept_count_variance(value, reference):
    """The variance, over many calls, of how many rows a call keeps. Independent draws per row give n r (1 - r); a
    mask that keeps an exact count of rows gives 0."""
    counts = [float((_rows(draw) != 0).any(1).sum()) for draw in value]
    return float(np.var(counts, ddof=1))


def row_keep_spread(value, reference):
    """How far, over many calls, the row position kept most or least often is from the share of all rows kept.
    Each row draws for itself with the same probability: a mask that favours some positions spreads them apart."""
    kept = np.stack([(_rows(draw) != 0).any(1) for draw in value]).astype(float)
    per_row, share = kept.mean(0), kept.mean()
    return float(np.abs(per_row - share).max())


MEASURES = {
    f.__name__: f
    for f in (
        shape,
        rows_partly_zero,
        kept_and_dropped,
        share_kept,
        draws_differ,
        draws_agree,
        kept_scale,
        gradient_split,
        kept_count_variance,
        row_keep_spread,
    )
}
