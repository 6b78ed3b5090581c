"""Hidden tests for notebooks/05_pre_vs_post_norm.ipynb, run by `make grade` in each submission's kernel."""


def exercise_1():
    assert math.isclose(warmup_lr(3, 0.01, 0), 0.01)
    assert math.isclose(warmup_lr(10, 0.01, 40), 0.0025)
    assert math.isclose(warmup_lr(400, 0.01, 40), 0.01)


def exercise_2():
    block, x = ReZeroBlock(8), torch.randn(3, 4, 8)
    assert torch.equal(block(x), x), "a fresh ReZero block must be the identity"
    with torch.no_grad():
        block.alpha.fill_(-1.5)
    h = x - 1.5 * block.attn(x)
    assert torch.allclose(block(x), h - 1.5 * block.ffn(h), atol=1e-5)


def exercise_3():
    model = TinyGPT(PreNormBlock, 4, width=16)
    idx, _ = reversal_batch(8, torch.Generator().manual_seed(3))
    inc = energy_increments(model, idx)
    assert tuple(inc.shape) == (4,)
    assert torch.allclose(inc, stream_energy(model, idx).diff(), rtol=1e-4, atol=1e-4)
