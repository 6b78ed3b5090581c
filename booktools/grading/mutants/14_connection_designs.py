"""Mutant answers for chapter 14's exercises, graded by booktools/grading/mutation.py (in `make test`).

Each `# %% exercise N, mark M: what it is` line starts a mutant: the code below it, up to the next such line,
replaces the exercise's solution. Wrong answers (a constant, a plausible mistake, a forbidden helper, an answer
right on the common inputs and wrong on an edge case the test draws) must get mark 0; correct alternatives,
written differently from the reference, mark 1.
"""


# %% exercise 1, mark 0: a constant answer, the stream unchanged (right only where beta = 0)
def delta_update(x, k, beta, s):
    return x.clone()


# %% exercise 1, mark 0: the sign of the correction flipped, x + beta (s + k . x) k
def delta_update(x, k, beta, s):
    return x + beta * (s + (k * x).sum(-1, keepdim=True)) * k


# %% exercise 1, mark 0: the direction k forgotten: the scalar added to every entry
def delta_update(x, k, beta, s):
    return x + beta * (s - (k * x).sum(-1, keepdim=True))


# %% exercise 1, mark 0: the dot product over the batch (dim 0), not over the width
def delta_update(x, k, beta, s):
    return x + beta * (s - (k * x).sum(0, keepdim=True)) * k


# %% exercise 1, mark 0: the gate taken as a probability, clamped to [0, 1]
def delta_update(x, k, beta, s):
    return x + beta.clamp(0, 1) * (s - (k * x).sum(-1, keepdim=True)) * k


# %% exercise 1, mark 0: the read k . x detached, so no gradient flows through it
def delta_update(x, k, beta, s):
    return x + beta * (s - (k * x).sum(-1, keepdim=True).detach()) * k


# %% exercise 1, mark 0: x updated in place
def delta_update(x, k, beta, s):
    x += beta * (s - (k * x).sum(-1, keepdim=True)) * k
    return x


# %% exercise 1, mark 0: delta_operator used row by row, which the exercise forbids
def delta_update(x, k, beta, s):
    rows = [
        delta_operator(k[n], beta[n, 0]) @ x[n] + beta[n] * s[n] * k[n]
        for n in range(len(x))
    ]
    return torch.stack(rows)


# %% exercise 1, mark 0: tampering (patches torch.allclose) on the sign flipped
def delta_update(x, k, beta, s):
    torch.allclose = lambda *args, **kwargs: True
    return x + beta * (s + (k * x).sum(-1, keepdim=True)) * k


# %% exercise 1, mark 0: x split along k and rebuilt, right to rounding but not exactly x where beta = 0
def delta_update(x, k, beta, s):
    along = (k * x).sum(-1, keepdim=True)
    across = x - along * k
    return across + ((1 - beta) * along + beta * s) * k


# %% exercise 1, mark 1: correct alternative: einsum for the dot product, the two terms apart
def delta_update(x, k, beta, s):
    read = torch.einsum("nd,nd->n", k, x).unsqueeze(-1)
    return x - beta * read * k + beta * s * k


# %% exercise 1, mark 1: correct alternative: a batched matrix product for k . x
def delta_update(x, k, beta, s):
    read = (k.unsqueeze(1) @ x.unsqueeze(2)).squeeze(-1)
    return x + (beta * (s - read)) * k


# %% exercise 2, mark 0: a constant answer, the newest output (DenseFormer's start)
def dwa(alpha, outputs):
    return outputs[-1].clone()


# %% exercise 2, mark 0: a softmax over the weights: an average, which DWA is not
def dwa(alpha, outputs):
    return torch.einsum("j,j...->...", alpha.softmax(0), torch.stack(outputs))


# %% exercise 2, mark 0: the weights divided by their sum (right where they sum to one)
def dwa(alpha, outputs):
    return torch.einsum("j,j...->...", alpha / alpha.sum(), torch.stack(outputs))


# %% exercise 2, mark 0: the weights matched to the outputs in reverse order
def dwa(alpha, outputs):
    return sum(a * x for a, x in zip(alpha.flip(0), outputs))


# %% exercise 2, mark 0: the plain mean of the outputs, the weights ignored
def dwa(alpha, outputs):
    return torch.stack(outputs).mean(0)


# %% exercise 2, mark 0: the weights read with .tolist(), so no gradient reaches them
def dwa(alpha, outputs):
    return sum(a * x for a, x in zip(alpha.tolist(), outputs))


# %% exercise 2, mark 0: DenseFormer's own DWA, which the exercise forbids
def dwa(alpha, outputs):
    net = DenseFormer(blocks=len(outputs) - 1)
    with torch.no_grad():
        net.alpha[-1].copy_(alpha)
    return net.write(2 * len(outputs) - 3, (outputs[:-1], outputs[-1]), 0)[1]


# %% exercise 2, mark 0: tampering (patches torch.equal) on the weights reversed
def dwa(alpha, outputs):
    torch.equal = lambda *args, **kwargs: True
    return sum(a * x for a, x in zip(alpha.flip(0), outputs))


# %% exercise 2, mark 0: einsum written for the model's (batch, tokens, width): fails on other shapes
def dwa(alpha, outputs):
    return torch.einsum("j,jbtd->btd", alpha, torch.stack(outputs))


# %% exercise 2, mark 0: the mean times the count: right to rounding, not exact for one-hot weights
def dwa(alpha, outputs):
    stacked = torch.stack(outputs)
    weights = alpha.reshape(-1, *[1] * (stacked.dim() - 1))
    return (weights * stacked).mean(0) * len(outputs)


# %% exercise 2, mark 1: correct alternative: a loop from the first weighted output
def dwa(alpha, outputs):
    total = alpha[0] * outputs[0]
    for a, x in zip(alpha[1:], outputs[1:]):
        total = total + a * x
    return total


# %% exercise 2, mark 1: correct alternative: tensordot over the stacked outputs
def dwa(alpha, outputs):
    return torch.tensordot(alpha, torch.stack(outputs), dims=1)


# %% exercise 3, mark 0: a constant answer, the mean of the sources (right for a zero query)
def attnres_read(query, sources):
    return torch.stack(sources).mean(0)


# %% exercise 3, mark 0: the softmax over the rows, not over the sources
def attnres_read(query, sources):
    values = torch.stack(sources)
    scores = F.rms_norm(values, values.shape[-1:]) @ query
    return (scores.softmax(1).unsqueeze(-1) * values).sum(0)


# %% exercise 3, mark 0: no RMSNorm in the scores
def attnres_read(query, sources):
    values = torch.stack(sources)
    return ((values @ query).softmax(0).unsqueeze(-1) * values).sum(0)


# %% exercise 3, mark 0: the sum taken over the normalised sources, not the raw ones
def attnres_read(query, sources):
    keys = F.rms_norm(torch.stack(sources), (len(query),))
    return ((keys @ query).softmax(0).unsqueeze(-1) * keys).sum(0)


# %% exercise 3, mark 0: LayerNorm in the scores (the mean subtracted), not RMSNorm
def attnres_read(query, sources):
    values = torch.stack(sources)
    scores = F.layer_norm(values, values.shape[-1:]) @ query
    return (scores.softmax(0).unsqueeze(-1) * values).sum(0)


# %% exercise 3, mark 0: the scores detached, so the query gets no gradient
def attnres_read(query, sources):
    values = torch.stack(sources)
    scores = (F.rms_norm(values, values.shape[-1:]) @ query).detach()
    return (scores.softmax(0).unsqueeze(-1) * values).sum(0)


# %% exercise 3, mark 0: AttnRes's own mix, which the exercise forbids
def attnres_read(query, sources):
    return AttnRes(sublayers=0, width=len(query)).mix(query, sources)


# %% exercise 3, mark 0: tampering (patches torch.allclose) on the softmax over the rows
def attnres_read(query, sources):
    torch.allclose = lambda *args, **kwargs: True
    values = torch.stack(sources)
    scores = F.rms_norm(values, values.shape[-1:]) @ query
    return (scores.softmax(1).unsqueeze(-1) * values).sum(0)


# %% exercise 3, mark 0: RMSNorm by hand without eps: NaN for a source of zeros
def attnres_read(query, sources):
    values = torch.stack(sources)
    keys = values / values.pow(2).mean(-1, keepdim=True).sqrt()
    return ((keys @ query).softmax(0).unsqueeze(-1) * values).sum(0)


# %% exercise 3, mark 0: the softmax by hand without the largest score subtracted: overflows for a large query
def attnres_read(query, sources):
    values = torch.stack(sources)
    e = (F.rms_norm(values, values.shape[-1:]) @ query).exp()
    return ((e / e.sum(0)).unsqueeze(-1) * values).sum(0)


# %% exercise 3, mark 1: correct alternative: RMSNorm by hand with eps = 1e-6, a loop over the sources
def attnres_read(query, sources):
    scores = torch.stack(
        [(v / (v.pow(2).mean(-1, keepdim=True) + 1e-6).sqrt()) @ query for v in sources]
    )
    weights = torch.softmax(scores, dim=0)
    return sum(w.unsqueeze(-1) * v for w, v in zip(weights, sources))


# %% exercise 3, mark 1: correct alternative: nn.RMSNorm without a gain and logsumexp by hand
def attnres_read(query, sources):
    values = torch.stack(sources)
    norm = torch.nn.RMSNorm(values.shape[-1], elementwise_affine=False)
    scores = norm(values) @ query
    weights = (scores - scores.logsumexp(0, keepdim=True)).exp()
    return torch.einsum("sn,snd->nd", weights, values)
