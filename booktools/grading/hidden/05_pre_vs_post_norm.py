"""Hidden tests for notebooks/05_pre_vs_post_norm.ipynb, run by `make grade`, each with its exercise's answer alone in a
process of its own (booktools/grading/isolated.py); they use the notebook's names (torch, nn, TransformerBlock,
TinyGPT, PreNormBlock, ...).

Each test runs the answer on inputs the notebook never shows (other rates, warm-up lengths, widths, depths, sequence
lengths), in float64 where the answer is a tensor, and observes what it did (`_observe`, from
booktools/grading/hidden/_common.py): values, the gradients that reach alpha, the sublayers and the input, whether the input
tensor is left unchanged and the LayerNorms unused. The grader compares every observation with the reference
solution's, in a process of its own.
booktools/grading/mutants/05_pre_vs_post_norm.py holds the wrong answers these tests must reject and the right ones they must
accept.
"""


def _ch05_schedules(gen):
    """(peak_lr, warmup_steps, steps) to grade warmup_lr on, drawn from `gen`: four peak rates, in [1e-4, 1e-3),
    [1e-3, 1e-2), [1e-2, 1) and [1, 10) (three significant digits), each with no warm-up, a one-step warm-up and
    warm-ups of 2 to 9, 10 to 99 and 100 to 999 steps; the steps are the first three, the last two of the warm-up
    and the two after it, three drawn during the warm-up, two drawn after it, and a million."""

    def ints(low, high, n=1):
        return torch.randint(low, high, (n,), generator=gen).tolist()

    schedules = []
    for low, high in ((-4, -3), (-3, -2), (-2, 0), (0, 1)):  # the powers of ten
        exponent = low + (high - low) * float(torch.rand((), generator=gen))
        peak = float(f"{10**exponent:.3g}")
        for warmup in (0, 1, *ints(2, 10), *ints(10, 100), *ints(100, 1000)):
            steps = {1, 2, 3, warmup - 1, warmup, warmup + 1, warmup + 2, 10**6}
            steps |= {*ints(warmup + 1, 10 * warmup + 20, 2)}
            if warmup:
                steps |= {*ints(1, warmup + 1, 3)}
            schedules.append((peak, warmup, sorted(s for s in steps if s >= 1)))
    return schedules


def exercise_1():
    gen = torch.Generator().manual_seed(_seed(505))
    for peak, warmup, steps in _ch05_schedules(gen):
        for step in steps:
            if warmup == 0:
                what = "with warmup_steps = 0 the rate is peak_lr from step 1 on"
            elif step == 1:
                what = "at step 1 the rate is peak_lr / warmup_steps"
            elif step <= warmup:
                what = "during warm-up the rate rises linearly: peak_lr * step / warmup_steps"
            else:
                what = "after warm-up the rate stays at peak_lr"
            _observe(
                f"rate at step {step} of {warmup} to {peak}",
                float(warmup_lr(step, peak, warmup)),
                f"{what} (wrong at step {step} of a {warmup}-step warm-up to peak_lr = {peak})",
                close=(1e-6, 0),
                student="the rate is wrong at some steps: peak_lr * step / warmup_steps during warm-up (peak_lr / warmup_steps at step 1), then peak_lr; with warmup_steps = 0, peak_lr from step 1 on",
            )


def exercise_2():
    torch.manual_seed(_seed(2024))
    width = 12
    block = ReZeroTransformerBlock(width).double()
    gen = torch.Generator().manual_seed(_seed(2025))
    x0, w = (
        torch.randn(4, 6, width, generator=gen, dtype=torch.float64),
        torch.randn(4, 6, width, generator=gen, dtype=torch.float64),
    )
    _observe(
        "fresh block",
        block(x0),
        "a fresh ReZero block (alpha = 0) must return its input exactly",
    )
    sublayers = [
        (n, p) for n, p in block.named_parameters() if n.startswith(("attn.", "ffn."))
    ]
    norms = [p for n, p in block.named_parameters() if n.startswith(("ln1.", "ln2."))]
    for alpha in (
        -0.7,
        0.0,
        1.3,
    ):  # alpha = 0 too: the gate must still get a gradient there
        with torch.no_grad():
            block.alpha.fill_(alpha)
            x = x0.clone()
            block(x)
        _observe(
            f"input left alone at alpha {alpha}",
            x,
            "forward must not change its input tensor in place: write x = x + ..., not x += ...",
        )
        block.zero_grad(set_to_none=True)
        x = x0.clone().requires_grad_()
        out = block(x)
        (out * w).sum().backward()
        _observe(
            f"LayerNorms unused at alpha {alpha}",
            [p.grad is None or not p.grad.any() for p in norms],
            "the LayerNorms inherited from TransformerBlock must stay unused: ReZero has no normalisation",
        )
        _observe(
            f"output at alpha {alpha}",
            out,
            f"with alpha = {alpha} the block must compute h = x + alpha Attn(x), then h + alpha FFN(h)",
            close=(1e-10, 1e-10),
            student="the block must compute h = x + alpha Attn(x), then h + alpha FFN(h)",
        )
        _observe(
            f"alpha's gradient at alpha {alpha}",
            block.alpha.grad,
            f"alpha gets a wrong gradient, or none, at alpha = {alpha}: use the parameter self.alpha itself in "
            "forward (not .item(), .detach() or a shortcut taken when alpha is 0)",
            close=(1e-8, 1e-10),
            student="alpha gets a wrong gradient, or none: use the parameter self.alpha itself in forward (not .item(), .detach() or a shortcut taken when alpha is 0)",
        )
        for name, grad in [("x", x.grad), *((n, p.grad) for n, p in sublayers)]:
            _observe(
                f"gradient of {name} at alpha {alpha}",
                grad,
                f"the gradient with respect to {name} is wrong, or missing: the gradient must flow through both "
                "sublayers and the shortcut (detach nothing)",
                close=(1e-8, 1e-10),
                student="a gradient is wrong, or missing: the gradient must flow through both sublayers and the shortcut (detach nothing)",
            )


def exercise_3():
    for seed, depth, width, init, batch, tokens in (
        (7, 3, 24, "default", 5, SEQ_LEN - 1),
        (8, 7, 40, "xavier", 11, 5),
    ):
        torch.manual_seed(_seed(seed))
        model = TinyGPT(PreNormBlock, depth, width, init).double()
        idx = torch.randint(
            0,
            VOCAB + 1,
            (batch, tokens),
            generator=torch.Generator().manual_seed(_seed(seed)),
        )
        inc = energy_increments(model, idx)
        with (
            torch.no_grad()
        ):  # the stream's largest energy sets the tolerance (after the answer ran)
            x = model.tok(idx) + model.pos[:tokens]
            energies = [x.pow(2).sum(-1).mean().item()]
            for block in model.blocks:
                x = block(x)
                energies.append(x.pow(2).sum(-1).mean().item())
        where = f"a {depth}-block model of width {width} on a batch of {batch} sequences of {tokens} tokens"
        _observe(
            f"a tensor, {where}",
            isinstance(inc, torch.Tensor),
            f"expected a tensor with one increment per block for {where}",
            student="expected a tensor with one increment per block",
        )
        _observe(
            f"shape, {where}",
            list(inc.shape),
            f"expected a tensor with one increment per block, shape ({depth},), for {where}",
            student="expected a tensor with one increment per block, of shape (depth,)",
        )
        _observe(
            f"increments, {where}",
            inc,
            f"wrong increments for {where}: the mean over tokens of ||x_(l+1)||^2 - ||x_l||^2, with x_l the "
            "residual stream before block l+1 (use the model's stream argument and the idx passed in)",
            close=(1e-6, 1e-6 * max(energies)),
            student="wrong increments: the mean over tokens of ||x_(l+1)||^2 - ||x_l||^2, with x_l the residual stream before block l+1 (use the model's stream argument and the idx passed in)",
        )
