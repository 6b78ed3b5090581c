"""Hidden tests for notebooks/03_gradient_flow.ipynb, run by `make grade` in each submission's kernel."""


def exercise_1():
    g = torch.tensor([1.0, 3.0, 2.0, 5.0, 4.0, 6.0])
    c = g - g.mean()
    for lag in (0, 1, 2):
        expected = ((c[lag:] * c[: len(c) - lag]).sum() / (c * c).sum()).item()
        assert abs(autocorrelation(g, lag) - expected) < 1e-6, f"wrong value at lag {lag}"
    assert isinstance(autocorrelation(g, 1), float), "return a Python float"


def exercise_2():
    for depth in (20, 80):
        ratio = scaled_input_grad_ratio(depth, 3)
        assert 1 / 3 < ratio < 3, f"at depth {depth} the ratio is {ratio:.3g}; expected near 1"


def exercise_3():
    scale = critical_scale(20, 1)
    assert 1.0 <= scale <= 3.0, f"{scale} is outside 1..3"
    grads = layer_norms(20, False, scale, 1)[1]
    assert 0.1 < grads[0] / grads[-1] < 10, "at the returned scale the gradient should neither vanish nor explode"
