"""Mutant answers for chapter 05's exercises, graded by booktools/grading/mutation.py (in `make test`).

Each `# %% exercise N, mark M: what it is` line starts a mutant: the code below it, up to the next such line,
replaces the exercise's solution. Wrong answers (a constant, a plausible mistake, a special case) must get
mark 0; correct alternatives, written differently from the reference, mark 1.
"""


# %% exercise 1, mark 0: a constant: the self-check's peak rate
def warmup_lr(step, peak_lr, warmup_steps):
    return 1e-3


# %% exercise 1, mark 0: no warm-up at all
def warmup_lr(step, peak_lr, warmup_steps):
    return peak_lr


# %% exercise 1, mark 0: steps counted from 0, so step 1 gets a zero rate
def warmup_lr(step, peak_lr, warmup_steps):
    if warmup_steps <= 0:
        return peak_lr
    return peak_lr * min(1.0, (step - 1) / warmup_steps)


# %% exercise 1, mark 0: off by one: the peak reached at step warmup_steps + 1
def warmup_lr(step, peak_lr, warmup_steps):
    return peak_lr * min(1.0, step / (warmup_steps + 1))


# %% exercise 1, mark 0: not clamped: the rate keeps rising after warm-up
def warmup_lr(step, peak_lr, warmup_steps):
    if warmup_steps == 0:
        return peak_lr
    return peak_lr * step / warmup_steps


# %% exercise 1, mark 0: integer division: zero during warm-up
def warmup_lr(step, peak_lr, warmup_steps):
    if warmup_steps == 0:
        return peak_lr
    return peak_lr * min(1, step // warmup_steps)


# %% exercise 1, mark 0: warmup_steps = 0 not handled (ZeroDivisionError)
def warmup_lr(step, peak_lr, warmup_steps):
    return peak_lr * min(1.0, step / warmup_steps)


# %% exercise 1, mark 0: the Transformer's inverse-square-root decay after warm-up
def warmup_lr(step, peak_lr, warmup_steps):
    if warmup_steps == 0:
        return peak_lr
    return peak_lr * min(step / warmup_steps, math.sqrt(warmup_steps / step))


# %% exercise 1, mark 0: the self-check's exact inputs special-cased, the peak otherwise
def warmup_lr(step, peak_lr, warmup_steps):
    return {(1, 50): peak_lr / 50, (25, 50): peak_lr / 2}.get(
        (step, warmup_steps), peak_lr
    )


# %% exercise 1, mark 0: a lookup table on the rates, warm-ups and steps the hidden test once showed, the peak otherwise
_TABLE = {
    (step, peak, warmup): peak * min(1.0, step / warmup) if warmup else peak
    for peak in (3e-4, 0.02, 1.0, 7.5)
    for warmup in (0, 1, 3, 37, 200)
    for step in (*range(1, warmup + 4), 2 * warmup + 5, 10 * warmup + 17, 10**6)
}


def warmup_lr(step, peak_lr, warmup_steps):
    return _TABLE.get((step, peak_lr, warmup_steps), peak_lr)


# %% exercise 1, mark 1: correct alternative: min of the peak and the ramp
def warmup_lr(step, peak_lr, warmup_steps):
    return min(peak_lr, peak_lr * step / max(warmup_steps, 1))


# %% exercise 1, mark 1: correct alternative: a branch on the step
def warmup_lr(step, peak_lr, warmup_steps):
    if step >= warmup_steps:
        return peak_lr
    return peak_lr * step / warmup_steps


# %% exercise 1, mark 1: correct alternative: train_group's torch formula, in float32
def warmup_lr(step, peak_lr, warmup_steps):
    ramp = torch.tensor(step / max(warmup_steps, 1)).clamp(max=1)
    return float(peak_lr * ramp)


# %% exercise 2, mark 0: only attention gated; the FFN added in full
class ReZeroTransformerBlock(TransformerBlock):
    def __init__(self, width: int):
        super().__init__(width)
        self.alpha = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        x = x + self.alpha * self.attn(x)
        return x + self.ffn(x)


# %% exercise 2, mark 0: the LayerNorms kept: a gated pre-norm block
class ReZeroTransformerBlock(TransformerBlock):
    def __init__(self, width: int):
        super().__init__(width)
        self.alpha = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        x = x + self.alpha * self.attn(self.ln1(x))
        return x + self.alpha * self.ffn(self.ln2(x))


# %% exercise 2, mark 0: a LayerNorm after each addition, as in post-norm
class ReZeroTransformerBlock(TransformerBlock):
    def __init__(self, width: int):
        super().__init__(width)
        self.alpha = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        x = self.ln1(x + self.alpha * self.attn(x))
        return self.ln2(x + self.alpha * self.ffn(x))


# %% exercise 2, mark 0: parallel sublayers: the FFN reads x, not x + alpha Attn(x)
class ReZeroTransformerBlock(TransformerBlock):
    def __init__(self, width: int):
        super().__init__(width)
        self.alpha = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        return x + self.alpha * self.attn(x) + self.alpha * self.ffn(x)


# %% exercise 2, mark 0: alpha.item(): right values, no gradient reaches alpha
class ReZeroTransformerBlock(TransformerBlock):
    def __init__(self, width: int):
        super().__init__(width)
        self.alpha = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        a = self.alpha.item()
        x = x + a * self.attn(x)
        return x + a * self.ffn(x)


# %% exercise 2, mark 0: the input returned as is while alpha is 0, so alpha never gets a gradient
class ReZeroTransformerBlock(TransformerBlock):
    def __init__(self, width: int):
        super().__init__(width)
        self.alpha = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        if self.alpha == 0:
            return x
        x = x + self.alpha * self.attn(x)
        return x + self.alpha * self.ffn(x)


# %% exercise 2, mark 0: attention's output detached: no gradient reaches its weights
class ReZeroTransformerBlock(TransformerBlock):
    def __init__(self, width: int):
        super().__init__(width)
        self.alpha = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        x = x + self.alpha * self.attn(x).detach()
        return x + self.alpha * self.ffn(x)


# %% exercise 2, mark 0: in-place additions that change the caller's tensor
class ReZeroTransformerBlock(TransformerBlock):
    def __init__(self, width: int):
        super().__init__(width)
        self.alpha = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        x += self.alpha * self.attn(x)
        x += self.alpha * self.ffn(x)
        return x


# %% exercise 2, mark 0: a second gate for the FFN, where the exercise asks for one alpha per block
class ReZeroTransformerBlock(TransformerBlock):
    def __init__(self, width: int):
        super().__init__(width)
        self.alpha = nn.Parameter(torch.zeros(()))
        self.beta = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        x = x + self.alpha * self.attn(x)
        return x + self.beta * self.ffn(x)


# %% exercise 2, mark 1: correct alternative: a loop over the two sublayers
class ReZeroTransformerBlock(TransformerBlock):
    def __init__(self, width: int):
        super().__init__(width)
        self.alpha = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        for sublayer in (self.attn, self.ffn):
            x = x + self.alpha * sublayer(x)
        return x


# %% exercise 2, mark 1: correct alternative: torch.addcmul
class ReZeroTransformerBlock(TransformerBlock):
    def __init__(self, width: int):
        super().__init__(width)
        self.alpha = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        h = torch.addcmul(x, self.alpha, self.attn(x))
        return torch.addcmul(h, self.alpha, self.ffn(h))


# %% exercise 3, mark 0: a constant: d/2 per block, Lemma 2's lower bound at the notebook's width
@torch.no_grad()
def energy_increments(model, idx):
    return torch.full((len(model.blocks),), WIDTH / 2)


# %% exercise 3, mark 0: the energies after each block, not their increments
@torch.no_grad()
def energy_increments(model, idx):
    return stream_energy(model, idx)[1:]


# %% exercise 3, mark 0: off by one: the embeddings' energy left out, one increment short
@torch.no_grad()
def energy_increments(model, idx):
    energies = stream_energy(model, idx)
    return energies[2:] - energies[1:-1]


# %% exercise 3, mark 0: the self-check's 6 blocks hard-coded
@torch.no_grad()
def energy_increments(model, idx):
    energies = stream_energy(model, idx)
    return energies[1:7] - energies[:6]


# %% exercise 3, mark 0: increments of the norm, not of the squared norm
@torch.no_grad()
def energy_increments(model, idx):
    stream = []
    model(idx, stream)
    return torch.stack([x.norm(dim=-1).mean() for x in stream]).diff()


# %% exercise 3, mark 0: mean over every entry: the energy divided by the width
@torch.no_grad()
def energy_increments(model, idx):
    stream = []
    model(idx, stream)
    return torch.stack([x.pow(2).mean() for x in stream]).diff()


# %% exercise 3, mark 0: the energy of each block's write ||F||^2, without the cross term 2<x, F>
@torch.no_grad()
def energy_increments(model, idx):
    stream = []
    model(idx, stream)
    return torch.stack(
        [(b - a).pow(2).sum(-1).mean() for a, b in zip(stream, stream[1:])]
    )


# %% exercise 3, mark 0: the energy of the LayerNorm's output, what each block reads
@torch.no_grad()
def energy_increments(model, idx):
    stream = []
    model(idx, stream)
    energies = [
        block.ln1(x).pow(2).sum(-1).mean() for block, x in zip(model.blocks, stream)
    ]
    energies.append(model.ln_f(stream[-1]).pow(2).sum(-1).mean())
    return torch.stack(energies).diff()


# %% exercise 3, mark 0: the shortcut added a second time: x + block(x)
@torch.no_grad()
def energy_increments(model, idx):
    x = model.tok(idx) + model.pos[: idx.shape[-1]]
    energies = [x.pow(2).sum(-1).mean()]
    for block in model.blocks:
        x = x + block(x)
        energies.append(x.pow(2).sum(-1).mean())
    return torch.stack(energies).diff()


# %% exercise 3, mark 0: a fresh batch drawn instead of the idx passed in
@torch.no_grad()
def energy_increments(model, idx):
    fresh, _ = reversal_batch(len(idx), torch.Generator().manual_seed(SEED))
    return stream_energy(model, fresh).diff()


# %% exercise 3, mark 1: correct alternative: stream_energy's differences
def energy_increments(model, idx):
    return stream_energy(model, idx).diff()


# %% exercise 3, mark 1: correct alternative: the blocks run by hand, Python floats
@torch.no_grad()
def energy_increments(model, idx):
    x = model.tok(idx) + model.pos[: idx.shape[-1]]
    before, increments = torch.linalg.vector_norm(x, dim=-1).square().mean().item(), []
    for block in model.blocks:
        x = block(x)
        after = torch.linalg.vector_norm(x, dim=-1).square().mean().item()
        increments.append(after - before)
        before = after
    return torch.tensor(increments)


# Tampering: a wrong answer with code that would fool hidden tests run in the student's kernel. The scan holds
# each one, as `make grade` holds such an answer: it never runs, and scores 0.


# %% exercise 1, mark 0: tampering (patches json.dumps) on a constant
def warmup_lr(step, peak_lr, warmup_steps):
    import json

    dumps = json.dumps
    json.dumps = lambda o, *a, **k: dumps(
        {**o, "passed": True} if "exercise" in o else o, *a, **k
    )
    return 1e-3


# %% exercise 2, mark 0: tampering (an input transformer disarms asserts) on only attention gated; the FFN added in full
class ReZeroTransformerBlock(TransformerBlock):
    def __init__(self, width: int):
        get_ipython().input_transformers_post.append(
            lambda lines: [line.replace("assert ", "assert True or ") for line in lines]
        )
        super().__init__(width)
        self.alpha = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        x = x + self.alpha * self.attn(x)
        return x + self.ffn(x)


# %% exercise 3, mark 0: tampering (redefines self_check via __main__) on a constant
@torch.no_grad()
def energy_increments(model, idx):
    import __main__

    __main__.self_check = lambda number, check: print(f"Exercise {number}: correct.")
    return torch.full((len(model.blocks),), WIDTH / 2)
