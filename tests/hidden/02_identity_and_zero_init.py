"""Hidden tests for notebooks/02_identity_and_zero_init.ipynb, run by `make grade` in each submission's
kernel after the notebook itself; they use the notebook's names (torch, nn, ReZeroBlock, ...)."""


def exercise_1():
    for width in (3, 32):
        block, x = ReZeroBlock(width), torch.randn(5, width)
        assert torch.equal(block(x), x), "a fresh ReZeroBlock must return its input exactly"
        with torch.no_grad():
            block.alpha.fill_(-2.0)
        assert torch.allclose(block(x), x - 2.0 * block.f(x), atol=1e-6), "forward must compute x + alpha * F(x)"
    assert any(p is block.alpha for p in block.parameters()), "alpha must stay a learnable parameter"


def exercise_2():
    x = torch.randn(3, 8, 10, 10)
    y = pad_shortcut(x, 24, stride=2)
    assert tuple(y.shape) == (3, 24, 5, 5), f"wrong shape {tuple(y.shape)}"
    assert torch.equal(y[:, :8], x[:, :, ::2, ::2]), "the input channels must be subsampled, not changed"
    assert not y[:, 8:].any(), "the added channels must be zero"
    assert torch.equal(pad_shortcut(x, 8, stride=1), x), "stride 1 with no new channels must be the identity"


def exercise_3():
    net = zero_init_last_bn(bn_net(zero_gamma=False, seed=1))
    assert isinstance(net, nn.Module), "return the network"
    for block in net.blocks:
        assert not block.f[-1].weight.any(), "every branch's last BatchNorm gamma must be zero"
        assert torch.equal(block.f[1].weight, torch.ones_like(block.f[1].weight)), "leave the first BatchNorm alone"
        assert not block.f[-1].bias.any(), "leave beta at its default, zero"


def exercise_4():
    runs = {
        "x": {"diverged": False, "accuracy": 0.9},
        "y": {"diverged": False, "accuracy": 0.899},
        "z": {"diverged": True, "accuracy": float("nan")},
    }
    assert survivors(runs) == {"x"}, "count a variant only if it did not diverge and reached >= 90 % accuracy"
