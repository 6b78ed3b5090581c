"""Hidden tests for notebooks/05_pre_vs_post_norm.ipynb, run by `make grade` in each submission's kernel after the
notebook itself; they use the notebook's names (torch, nn, TransformerBlock, TinyGPT, PreNormBlock, ...).

Each test computes what it expects itself, on inputs the notebook never shows (other rates, warm-up lengths, widths,
depths, sequence lengths), in float64 where the answer is a tensor, and checks behaviour: gradients reach alpha, the
sublayers and the input; the input tensor is left unchanged; the LayerNorms stay unused.
tests/mutants/05_pre_vs_post_norm.py holds the wrong answers these tests must reject and the right ones they must
accept.
"""


def exercise_1():
    for peak in (3e-4, 0.02, 1.0, 7.5):
        for warmup in (0, 1, 3, 37, 200):
            steps = [*range(1, warmup + 4), 2 * warmup + 5, 10 * warmup + 17, 10**6]
            for step in steps:
                # train_group's schedule, for one model
                expected = peak * min(1.0, step / warmup) if warmup > 0 else peak
                got = float(warmup_lr(step, peak, warmup))
                if warmup == 0:
                    what = "with warmup_steps = 0 the rate is peak_lr from step 1 on"
                elif step == 1:
                    what = "at step 1 the rate is peak_lr / warmup_steps"
                elif step <= warmup:
                    what = "during warm-up the rate rises linearly: peak_lr * step / warmup_steps"
                else:
                    what = "after warm-up the rate stays at peak_lr"
                assert math.isclose(got, expected, rel_tol=1e-6), (
                    f"{what} (wrong at step {step} of a {warmup}-step warm-up to peak_lr = {peak})"
                )


def exercise_2():
    torch.manual_seed(_seed(2024))
    width = 12
    names = {n for n, _ in ReZeroTransformerBlock(width).named_parameters()}
    assert names == {n for n, _ in TransformerBlock(width).named_parameters()} | {
        "alpha"
    }, (
        "a ReZero block has one learnable alpha, shared by both sublayers, and no other new parameter"
    )
    block = ReZeroTransformerBlock(width).double()
    x0, w = (
        torch.randn(4, 6, width, dtype=torch.float64),
        torch.randn(4, 6, width, dtype=torch.float64),
    )
    assert torch.equal(block(x0), x0), (
        "a fresh ReZero block (alpha = 0) must return its input exactly"
    )
    sublayers = {
        n: p for n, p in block.named_parameters() if n.startswith(("attn.", "ffn."))
    }
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
        assert torch.equal(x, x0), (
            "forward must not change its input tensor in place: write x = x + ..., not x += ..."
        )

        block.zero_grad(set_to_none=True)
        x = x0.clone().requires_grad_()
        out = block(x)
        (out * w).sum().backward()
        mine = {
            "alpha": block.alpha.grad,
            "x": x.grad,
            **{n: p.grad for n, p in sublayers.items()},
        }
        assert all(p.grad is None or not p.grad.any() for p in norms), (
            "the LayerNorms inherited from TransformerBlock must stay unused: ReZero has no normalisation"
        )

        block.zero_grad(set_to_none=True)
        x = x0.clone().requires_grad_()
        h = x + block.alpha * block.attn(x)
        expected = h + block.alpha * block.ffn(h)
        (expected * w).sum().backward()
        ref = {
            "alpha": block.alpha.grad,
            "x": x.grad,
            **{n: p.grad for n, p in sublayers.items()},
        }

        assert torch.allclose(out, expected, rtol=1e-10, atol=1e-10), (
            f"with alpha = {alpha} the block must compute h = x + alpha Attn(x), then h + alpha FFN(h)"
        )
        assert mine["alpha"] is not None and torch.allclose(
            mine["alpha"], ref["alpha"], rtol=1e-8, atol=1e-10
        ), (
            f"alpha gets a wrong gradient, or none, at alpha = {alpha}: use the parameter self.alpha itself in "
            "forward (not .item(), .detach() or a shortcut taken when alpha is 0)"
        )
        for name in ref:
            assert mine[name] is not None and torch.allclose(
                mine[name], ref[name], rtol=1e-8, atol=1e-10
            ), (
                f"the gradient with respect to {name} is wrong, or missing: the gradient must flow through both "
                "sublayers and the shortcut (detach nothing)"
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
        with torch.no_grad():
            x = model.tok(idx) + model.pos[:tokens]
            energies = [x.pow(2).sum(-1).mean()]
            for block in model.blocks:
                x = block(x)
                energies.append(x.pow(2).sum(-1).mean())
            energies = torch.stack(energies)
        expected = energies[1:] - energies[:-1]
        where = f"a {depth}-block model of width {width} on a batch of {batch} sequences of {tokens} tokens"
        assert isinstance(inc, torch.Tensor) and tuple(inc.shape) == (depth,), (
            f"expected a tensor with one increment per block, shape ({depth},), for {where}"
        )
        assert torch.allclose(
            inc.detach().double(),
            expected,
            rtol=1e-6,
            atol=1e-6 * energies.max().item(),
        ), (
            f"wrong increments for {where}: the mean over tokens of ||x_(l+1)||^2 - ||x_l||^2, with x_l the "
            "residual stream before block l+1 (use the model's stream argument and the idx passed in)"
        )
