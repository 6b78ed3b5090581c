"""Hidden tests for notebooks/02_identity_and_zero_init.ipynb, run by `make grade` in each submission's
kernel after the notebook itself; they use the notebook's names (torch, nn, ReZeroBlock, ...).

Each test computes what it expects itself, on inputs the notebook never shows, and checks behaviour: gradients flow
where they should, the object passed in is the one changed and nothing else changes, and a class the exercise asks
to replace by hand is not used (`_refers_to`, from tests/hidden/_common.py).
tests/mutants/02_identity_and_zero_init.py holds the wrong answers these tests must reject and the right ones they
must accept.
"""


def exercise_1():
    import copy

    gen = torch.Generator().manual_seed(_seed(2025))
    for width, batch in ((3, 5), (24, 7)):
        torch.manual_seed(_seed(width))
        block = ReZeroBlock(width)
        assert (
            isinstance(block.alpha, nn.Parameter)
            and block.alpha.requires_grad
            and any(p is block.alpha for p in block.parameters())
        ), "alpha must stay a learnable nn.Parameter of the block"
        assert block.alpha.item() == 0, "alpha must start at 0"
        x, w = (
            torch.randn(batch, width, generator=gen),
            torch.randn(batch, width, generator=gen),
        )
        with torch.no_grad():
            fx = block.f(x)
        assert fx.abs().max() > 0, (
            "keep the branch F at PyTorch's default init: only alpha starts at 0"
        )

        # at alpha = 0: the identity, and alpha's gradient is sum(w * F(x))
        x0 = x.clone().requires_grad_()
        out = block(x0)
        assert torch.equal(out.detach(), x), (
            "a fresh ReZeroBlock must return its input exactly"
        )
        (out * w).sum().backward()
        assert block.alpha.grad is not None and torch.allclose(
            block.alpha.grad, (w * fx).sum(), rtol=1e-5
        ), (
            "alpha must get the gradient of x + alpha F(x): keep self.alpha in the graph (no .item(), no .detach())"
        )
        assert x0.grad is not None and torch.allclose(x0.grad, w), (
            "at alpha = 0 the gradient must pass back to the input unchanged, through the shortcut"
        )

        # at alpha != 0: compare the output and every gradient with x + alpha * F(x) built here
        block.zero_grad()
        with torch.no_grad():
            block.alpha.fill_(-1.7)
        branch = copy.deepcopy(block.f)
        xs, xr = x.clone().requires_grad_(), x.clone().requires_grad_()
        out, expected = block(xs), xr - 1.7 * branch(xr)
        assert torch.allclose(out, expected, rtol=1e-5, atol=1e-6), (
            "forward must compute x + alpha * F(x)"
        )
        (out * w).sum().backward()
        (expected * w).sum().backward()
        for p, q in zip(block.f.parameters(), branch.parameters()):
            assert p.grad is not None and torch.allclose(
                p.grad, q.grad, rtol=1e-5, atol=1e-6
            ), (
                "the branch's parameters must get their gradient through alpha * F(x): do not detach F(x)"
            )
        assert torch.allclose(xs.grad, xr.grad, rtol=1e-5, atol=1e-6), (
            "the gradient at the input must flow through both the shortcut and the branch"
        )


def exercise_2():
    assert not _refers_to(pad_shortcut, PadShortcut), (
        "write the shortcut by hand: pad_shortcut must not use PadShortcut"
    )
    gen = torch.Generator().manual_seed(_seed(7))
    for shape, c_out, stride in (
        ((3, 8, 10, 10), 24, 2),
        ((2, 5, 7, 9), 11, 2),
        ((1, 4, 8, 7), 6, 3),
        ((2, 6, 5, 5), 9, 1),
        ((2, 3, 6, 6), 3, 1),
    ):
        x = torch.randn(*shape, generator=gen, dtype=torch.float64).requires_grad_()
        y = pad_shortcut(x, c_out, stride)
        sub = x.detach()[:, :, ::stride, ::stride]
        expected = torch.cat(
            [sub, sub.new_zeros(shape[0], c_out - shape[1], *sub.shape[2:])], dim=1
        )
        where = f"an input of shape {shape}, out_channels = {c_out} and stride {stride}"
        assert isinstance(y, torch.Tensor) and y.shape == expected.shape, (
            f"for {where}, expected shape {tuple(expected.shape)}, got {tuple(getattr(y, 'shape', ()))}"
        )
        assert torch.equal(y[:, : shape[1]].detach(), sub), (
            f"for {where}, the first channels must be the input's, keeping every stride-th pixel from the first"
        )
        assert torch.equal(y.detach(), expected), (
            f"for {where}, the channels after the input's must be zeros"
        )
        assert y.requires_grad, (
            "the gradient must flow back through the shortcut: do not detach the input"
        )
        w = torch.randn(y.shape, generator=gen, dtype=torch.float64)
        (y * w).sum().backward()
        expected_grad = torch.zeros_like(x)
        expected_grad[:, :, ::stride, ::stride] = w[:, : shape[1]]
        assert x.grad is not None and torch.equal(x.grad, expected_grad), (
            "the gradient must flow back through the shortcut to the pixels it keeps: do not detach"
        )


def _bn_nets():
    """Two networks with BNResidualBlocks, every float parameter and statistic away from its default: a DigitsNet
    whose stem ends in a BatchNorm of its own, and nested Sequentials."""
    torch.manual_seed(_seed(31))
    width = 12
    stem = nn.Sequential(nn.Linear(64, width), nn.BatchNorm1d(width))
    digits = DigitsNet([BNResidualBlock(width) for _ in range(3)], width)
    digits.stem = stem
    blocks = [BNResidualBlock(width) for _ in range(3)]
    nested = nn.Sequential(
        nn.Linear(5, width),
        blocks[0],
        nn.Sequential(blocks[1], nn.ReLU(), nn.Sequential(blocks[2])),
        nn.Sequential(nn.Linear(width, width), nn.BatchNorm1d(width)),
        nn.Linear(width, 3),
    )
    gen = torch.Generator().manual_seed(_seed(32))
    with torch.no_grad():
        for net in (digits, nested):
            for t in net.state_dict().values():
                if t.is_floating_point():
                    t.copy_(torch.rand(t.shape, generator=gen) * 1.5 + 0.5)
    return digits, nested


def exercise_3():
    for net in _bn_nets():
        before = {name: t.clone() for name, t in net.state_dict().items()}
        gammas = {
            f"{name}.f.{len(m.f) - 1}.weight"
            for name, m in net.named_modules()
            if isinstance(m, BNResidualBlock)
        }
        returned = zero_init_last_bn(net)
        assert returned is net, "change the network passed in, and return it"
        after = net.state_dict()
        for name in sorted(gammas):
            assert not after[name].any(), (
                f"the last BatchNorm's gamma of every BNResidualBlock must be zero, nested ones too (not so for {name})"
            )
        for name, t in after.items():
            if name not in gammas:
                assert torch.equal(t, before[name]), (
                    f"{name} changed: set only the gamma of each block's last BatchNorm, and leave every other "
                    "parameter and statistic as it was"
                )
        for name, p in net.named_parameters():
            assert p.requires_grad, (
                f"{name} must stay trainable: set gamma's value to zero, do not freeze it"
            )


def exercise_4():
    nan = float("nan")

    def run(diverged, accuracy):
        return {
            "losses": [2.3, 1.0],
            "growth": [1.0, 1.2],
            "diverged": diverged,
            "accuracy": accuracy,
        }

    cases = [
        {
            "zero-init": run(True, nan),
            "ReZero": run(False, 0.9),
            "Fixup": run(False, 0.8999),
        },
        {
            "zero-init": run(False, 0.95),
            "ReZero": run(True, nan),
            "Fixup": run(False, 0.3),
        },
        {
            "late": run(True, 0.97),
            "early": run(True, nan),
            "slow": run(False, 0.12),
            "fine": run(False, 1.0),
        },
        {},
    ]
    gen = torch.Generator().manual_seed(_seed(404))
    for k in range(3):
        runs = {}
        for i in range(7):
            diverged = bool(torch.rand((), generator=gen) < 0.3)
            runs[f"variant {k}.{i}"] = run(
                diverged,
                nan if diverged else 0.8 + 0.2 * torch.rand((), generator=gen).item(),
            )
        cases.append(runs)
    for runs in cases:
        expected = {
            v for v, r in runs.items() if not r["diverged"] and r["accuracy"] >= 0.9
        }
        got = survivors(runs)
        assert isinstance(got, (set, frozenset)), (
            f"return a set, not a {type(got).__name__}"
        )
        assert got == expected, (
            "count a variant only if it did not diverge (run['diverged'] is False) and reached at least 90 % "
            "training accuracy (run['accuracy'] >= 0.9, a fraction)"
        )
