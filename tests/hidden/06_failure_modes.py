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
    expected = x
    for b in blocks:
        expected = b(expected)
    assert torch.allclose(segment_checkpointed(blocks, x, 3), expected, atol=1e-6), "7 blocks in segments of 3, 3 and 1"

    class Run(nn.Module):
        def __init__(self, k):
            super().__init__()
            self.blocks, self.k = nn.ModuleList(blocks), k

        def forward(self, x):
            return segment_checkpointed(blocks, x, self.k)

    assert saved_activation_bytes(Run(7), x) < saved_activation_bytes(Run(1), x)
