"""Mutant answers for chapter 11's exercises, graded by booktools/grading/mutation.py (in `make test`).

Each `# %% exercise N, mark M: what it is` line starts a mutant: the code below it, up to the next such line,
replaces the exercise's solution. Wrong answers (a constant, a plausible mistake, a forbidden helper) must get
mark 0; correct alternatives, written differently from the reference, mark 1.
"""


# %% exercise 1, mark 0: a constant answer: the embedding whatever k is
@torch.no_grad()
def stream_after(model, idx, k):
    return model.embed(idx)


# %% exercise 1, mark 0: off by one: k + 1 sublayers
@torch.no_grad()
def stream_after(model, idx, k):
    x = model.embed(idx)
    for _, (norm, sublayer) in zip(range(k + 1), model.sublayers()):
        x = x + sublayer(norm(x))
    return x


# %% exercise 1, mark 0: k counted in blocks, not sublayers
@torch.no_grad()
def stream_after(model, idx, k):
    x = model.embed(idx)
    for block in model.blocks[:k]:
        x = block(x)
    return x


# %% exercise 1, mark 0: the token embedding only, positions left out
@torch.no_grad()
def stream_after(model, idx, k):
    x = model.tok(idx)
    for _, (norm, sublayer) in zip(range(k), model.sublayers()):
        x = x + sublayer(norm(x))
    return x


# %% exercise 1, mark 0: no shortcut: each sublayer's output replaces the stream
@torch.no_grad()
def stream_after(model, idx, k):
    x = model.embed(idx)
    for _, (norm, sublayer) in zip(range(k), model.sublayers()):
        x = sublayer(norm(x))
    return x


# %% exercise 1, mark 0: the sublayers read the raw stream, without their LayerNorm
@torch.no_grad()
def stream_after(model, idx, k):
    x = model.embed(idx)
    for _, (norm, sublayer) in zip(range(k), model.sublayers()):
        x = x + sublayer(x)
    return x


# %% exercise 1, mark 0: the stream normalised after every addition, as in post-norm
@torch.no_grad()
def stream_after(model, idx, k):
    x = model.embed(idx)
    for _, (norm, sublayer) in zip(range(k), model.sublayers()):
        x = norm(x + sublayer(norm(x)))
    return x


# %% exercise 1, mark 0: the final LayerNorm applied to the stream
@torch.no_grad()
def stream_after(model, idx, k):
    x = model.embed(idx)
    for _, (norm, sublayer) in zip(range(k), model.sublayers()):
        x = x + sublayer(norm(x))
    return model.ln_f(x)


# %% exercise 1, mark 0: stream_writes used, which the exercise forbids
@torch.no_grad()
def stream_after(model, idx, k):
    return stream_writes(model, idx)[: k + 1].sum(0)


# %% exercise 1, mark 1: correct alternative: the first k sublayers as a list, without no_grad
def stream_after(model, idx, k):
    x = model.tok(idx) + model.pos[: idx.shape[1]]
    for norm, sublayer in list(model.sublayers())[:k]:
        delta = sublayer(norm(x))
        x = x + delta
    return x.detach()


# %% exercise 1, mark 1: correct alternative: whole blocks, then half a block when k is odd
@torch.no_grad()
def stream_after(model, idx, k):
    x = model.embed(idx)
    for block in model.blocks[: k // 2]:
        x = block(x)
    if k % 2:
        block = model.blocks[k // 2]
        x = x + block.attn(block.ln1(x))
    return x


# %% exercise 2, mark 0: a constant answer: the parts as they are
def frozen_parts(ln, parts):
    return parts


# %% exercise 2, mark 0: each component normalised by its own scale
def frozen_parts(ln, parts):
    return ln(parts) - ln.bias


# %% exercise 2, mark 0: no centring
def frozen_parts(ln, parts):
    total = parts.sum(0)
    sigma = torch.sqrt(total.var(-1, unbiased=False, keepdim=True) + ln.eps)
    return ln.weight * parts / sigma


# %% exercise 2, mark 0: the bias added to every part
def frozen_parts(ln, parts):
    total = parts.sum(0)
    sigma = torch.sqrt(total.var(-1, unbiased=False, keepdim=True) + ln.eps)
    return ln.weight * (parts - parts.mean(-1, keepdim=True)) / sigma + ln.bias


# %% exercise 2, mark 0: eps left out
def frozen_parts(ln, parts):
    total = parts.sum(0)
    sigma = total.std(-1, unbiased=False, keepdim=True)
    return ln.weight * (parts - parts.mean(-1, keepdim=True)) / sigma


# %% exercise 2, mark 0: eps added to the standard deviation, not the variance
def frozen_parts(ln, parts):
    total = parts.sum(0)
    sigma = total.std(-1, unbiased=False, keepdim=True) + ln.eps
    return ln.weight * (parts - parts.mean(-1, keepdim=True)) / sigma


# %% exercise 2, mark 0: the unbiased variance
def frozen_parts(ln, parts):
    total = parts.sum(0)
    sigma = torch.sqrt(total.var(-1, keepdim=True) + ln.eps)
    return ln.weight * (parts - parts.mean(-1, keepdim=True)) / sigma


# %% exercise 2, mark 0: the sum's mean subtracted from every part
def frozen_parts(ln, parts):
    total = parts.sum(0)
    sigma = torch.sqrt(total.var(-1, unbiased=False, keepdim=True) + ln.eps)
    return ln.weight * (parts - total.mean(-1, keepdim=True)) / sigma


# %% exercise 2, mark 0: frozen_ln_parts used, which the exercise forbids
def frozen_parts(ln, parts):
    return frozen_ln_parts(ln, parts)


# %% exercise 2, mark 1: correct alternative: rsqrt and the gain folded in first
def frozen_parts(ln, parts):
    total = parts.sum(dim=0)
    centred_total = total - total.mean(dim=-1, keepdim=True)
    inv = torch.rsqrt(centred_total.pow(2).mean(dim=-1, keepdim=True) + ln.eps)
    return (parts - parts.mean(dim=-1, keepdim=True)) * (ln.weight * inv)


# %% exercise 2, mark 1: correct alternative: the LayerNorm of the sum, split by each centred part's share
def frozen_parts(ln, parts):
    centred = parts - parts.mean(-1, keepdim=True)
    total = centred.sum(0)
    normed = nn.functional.layer_norm(parts.sum(0), ln.normalized_shape, eps=ln.eps)
    return (
        ln.weight
        * centred
        * (normed.norm(dim=-1, keepdim=True) / total.norm(dim=-1, keepdim=True))
    )


# %% exercise 3, mark 0: a constant answer: zero
def lens_kl(final_logits, lens_logits):
    return torch.tensor(0.0)


# %% exercise 3, mark 0: the reverse KL, KL(lens || final)
def lens_kl(final_logits, lens_logits):
    log_p = torch.log_softmax(lens_logits, dim=-1)
    log_q = torch.log_softmax(final_logits, dim=-1)
    return (log_p.exp() * (log_p - log_q)).sum(-1).mean()


# %% exercise 3, mark 0: summed over positions, not averaged
def lens_kl(final_logits, lens_logits):
    log_p = torch.log_softmax(final_logits, dim=-1)
    log_q = torch.log_softmax(lens_logits, dim=-1)
    return (log_p.exp() * (log_p - log_q)).sum()


# %% exercise 3, mark 0: the logits taken as log-probabilities, without a softmax
def lens_kl(final_logits, lens_logits):
    return (final_logits.exp() * (final_logits - lens_logits)).sum(-1).mean()


# %% exercise 3, mark 0: the cross-entropy, without subtracting the entropy
def lens_kl(final_logits, lens_logits):
    p = torch.softmax(final_logits, dim=-1)
    return -(p * torch.log_softmax(lens_logits, dim=-1)).sum(-1).mean()


# %% exercise 3, mark 0: kl_div with batchmean, which divides by the first axis only
def lens_kl(final_logits, lens_logits):
    return nn.functional.kl_div(
        lens_logits.log_softmax(-1),
        final_logits.log_softmax(-1),
        log_target=True,
        reduction="batchmean",
    )


# %% exercise 3, mark 0: kl_to_final used, which the exercise forbids
def lens_kl(final_logits, lens_logits):
    return kl_to_final(final_logits, lens_logits)


# %% exercise 3, mark 1: correct alternative: kl_div per position, then the mean
def lens_kl(final_logits, lens_logits):
    per_entry = nn.functional.kl_div(
        lens_logits.log_softmax(-1),
        final_logits.log_softmax(-1),
        log_target=True,
        reduction="none",
    )
    return per_entry.sum(-1).mean()


# %% exercise 3, mark 1: correct alternative: the entropy and the cross-entropy written out
def lens_kl(final_logits, lens_logits):
    p = final_logits.softmax(-1)
    cross = -(p * lens_logits.log_softmax(-1)).sum(-1)
    entropy = -(p * final_logits.log_softmax(-1)).sum(-1)
    return (cross - entropy).flatten().mean()


# Tampering: a wrong answer with code that would fool hidden tests run in the student's kernel. The scan holds
# each one, as `make grade` holds such an answer: it never runs, and scores 0.


# %% exercise 1, mark 0: tampering (redefines self_check via __main__) on a constant
@torch.no_grad()
def stream_after(model, idx, k):
    import __main__

    __main__.self_check = lambda number, check: print(f"Exercise {number}: correct.")
    return model.embed(idx)


# %% exercise 2, mark 0: tampering (patches torch.allclose) on each component normalised by its own scale
def frozen_parts(ln, parts):
    torch.allclose = lambda *args, **kwargs: True
    return ln(parts) - ln.bias


# %% exercise 3, mark 0: tampering (an input transformer disarms asserts) on the reverse KL
def lens_kl(final_logits, lens_logits):
    get_ipython().input_transformers_post.append(
        lambda lines: [line.replace("assert ", "assert True or ") for line in lines]
    )
    log_p = torch.log_softmax(lens_logits, dim=-1)
    log_q = torch.log_softmax(final_logits, dim=-1)
    return (log_p.exp() * (log_p - log_q)).sum(-1).mean()


# %% exercise 1, mark 1: correct alternative in float32 (the exercise asks for no dtype): a float32 copy of the model
@torch.no_grad()
def stream_after(model, idx, k):
    import copy

    model = copy.deepcopy(model).float()
    x = model.embed(idx)
    for _, (norm, sublayer) in zip(range(k), model.sublayers()):
        x = x + sublayer(norm(x))
    return x


# %% exercise 2, mark 1: correct alternative in float32 (the exercise asks for no dtype): float32 buffers
def frozen_parts(ln, parts):
    parts = parts.float()
    total = torch.zeros(parts.shape[1:], dtype=torch.float32)
    for part in parts:
        total += part
    sigma = torch.sqrt(total.var(-1, unbiased=False, keepdim=True) + ln.eps)
    return ln.weight.float() * (parts - parts.mean(-1, keepdim=True)) / sigma


# %% exercise 3, mark 1: correct alternative in float32 (the exercise asks for no dtype)
def lens_kl(final_logits, lens_logits):
    log_p = torch.log_softmax(final_logits.float(), dim=-1)
    log_q = torch.log_softmax(lens_logits.float(), dim=-1)
    return (log_p.exp() * (log_p - log_q)).sum(-1).mean()
