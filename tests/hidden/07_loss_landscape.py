"""Hidden tests for notebooks/07_loss_landscape.ipynb, run by `make grade` in each submission's kernel."""


def exercise_1():
    w = torch.tensor([[3.0, 4.0], [0.0, 2.0]])
    d = torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    expected = torch.tensor([[5.0, 0.0], [2**0.5, 2**0.5]])
    assert torch.allclose(normalise_filters(d, w), expected, atol=1e-6)
    assert torch.equal(normalise_filters(torch.ones(3), torch.ones(3)), torch.zeros(3))


def exercise_2():
    rays = torch.tensor([[0.0, 0.5, 1.0], [1.0, 0.0, 2.0], [0.0, 0.0, 0.0]])
    # The share is a float32 mean: the sum of a few 0/1 values is exact, and the division rounds once, to
    # within half an ulp (eps / 2 relative) of the exact fraction; 4 eps also allows another summation order.
    # (2/3 itself is not a float32: 1e-9 failed the reference solution.)
    tol = 4 * torch.finfo(torch.float32).eps
    assert abs(share_rising(rays) - 2 / 3) < tol
    assert abs(share_rising(rays, tol=2.0) - 1.0) < tol


def exercise_3():
    net = NETS[DEPTHS[0], "plain"]
    loss = loss_in_eval_mode(net)
    assert net.training, "leave the net in training mode"
    net.eval()
    with torch.no_grad():
        expected = F.cross_entropy(net(x_eval), y_eval).item()
    net.train()
    assert abs(loss - expected) < 1e-6
