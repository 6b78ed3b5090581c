"""Hidden tests for notebooks/06_failure_modes.ipynb, run by `make grade` in each submission's kernel."""


def exercise_1():
    eye = torch.eye(4, dtype=torch.float64)
    assert abs(distance_from_rank_one(eye) - math.sqrt(0.75)) < 1e-12
    row = torch.arange(1.0, 6.0, dtype=torch.float64)
    assert abs(distance_from_rank_one(row.expand(3, 5).clone())) < 1e-12
    two = torch.tensor([[1.0, 0.0], [-1.0, 0.0]], dtype=torch.float64)
    assert abs(distance_from_rank_one(two) - 1.0) < 1e-12


def exercise_2():
    f, g = (lambda t: t.pow(2)), (lambda t: torch.sin(3 * t))
    x = torch.linspace(-1, 1, 24, dtype=torch.float64).reshape(3, 8)
    x1, x2 = x.chunk(2, dim=-1)
    y1 = x1 + f(x2)
    y = torch.cat([y1, x2 + g(y1)], dim=-1)
    assert torch.allclose(invert_coupling(f, g, y), x, atol=1e-12)


def exercise_3():
    torch.manual_seed(SEED)
    blocks = [ResidualBlock(8, 16) for _ in range(7)]
    x = torch.randn(5, 8)
    with torch.no_grad():
        before = nn.Sequential(*blocks)(x)
    s, a = x.nbytes, 5 * (8 + 16) * 4  # one stream tensor; one block's input and hidden activation, float32
    for length in (1, 2, 3, 7):  # 7 blocks in segments of 1, 2 (2+2+2+1), 3 (3+3+1) and 7
        expected = math.ceil(7 / length) * s + length * a  # kept inputs + the longest segment, rebuilt in backward
        got = backward_peak_bytes(blocks, x, length)
        assert got == expected, f"segments of {length}: expected {expected} bytes, got {got}"
    with torch.no_grad():
        assert torch.equal(nn.Sequential(*blocks)(x), before), "measuring must leave the blocks as they were"
