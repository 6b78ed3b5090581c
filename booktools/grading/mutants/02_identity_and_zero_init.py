"""Mutant answers for chapter 02's exercises, graded by booktools/grading/mutation.py (in `make test`).

Each `# %% exercise N, mark M: what it is` line starts a mutant: the code below it, up to the next such line,
replaces the exercise's solution. Wrong answers (a constant, a plausible mistake, a forbidden helper) must get
mark 0; correct alternatives, written differently from the reference, mark 1.
"""


# %% exercise 1, mark 0: the branch replaced by a zero function (last layer zeroed), so nothing can learn
class ReZeroBlock(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.f = Branch(width)
        nn.init.zeros_(self.f[-1].weight)
        nn.init.zeros_(self.f[-1].bias)
        self.alpha = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        return x + self.alpha * self.f(x)


# %% exercise 1, mark 0: alpha.item(): alpha gets no gradient
class ReZeroBlock(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.f = Branch(width)
        self.alpha = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        return x + self.alpha.item() * self.f(x)


# %% exercise 1, mark 0: F(x).detach(): the branch gets no gradient
class ReZeroBlock(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.f = Branch(width)
        self.alpha = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        return x + self.alpha * self.f(x).detach()


# %% exercise 1, mark 0: the branch's input detached: the input's gradient skips the branch
class ReZeroBlock(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.f = Branch(width)
        self.alpha = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        return x + self.alpha * self.f(x.detach())


# %% exercise 1, mark 0: a constant: the identity, alpha ignored
class ReZeroBlock(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.f = Branch(width)
        self.alpha = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        return x


# %% exercise 1, mark 0: alpha a plain tensor, not a learnable parameter
class ReZeroBlock(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.f = Branch(width)
        self.alpha = torch.zeros(())

    def forward(self, x):
        return x + self.alpha * self.f(x)


# %% exercise 1, mark 0: alpha on the shortcut instead of the branch
class ReZeroBlock(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.f = Branch(width)
        self.alpha = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        return self.alpha * x + self.f(x)


# %% exercise 1, mark 0: alpha starting at 1, an ordinary residual block
class ReZeroBlock(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.f = Branch(width)
        self.alpha = nn.Parameter(torch.ones(()))

    def forward(self, x):
        return x + self.alpha * self.f(x)


# %% exercise 1, mark 0: alpha clamped to be non-negative
class ReZeroBlock(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.f = Branch(width)
        self.alpha = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        return x + self.alpha.clamp(min=0) * self.f(x)


# %% exercise 1, mark 0: the shortcut detached: no gradient reaches the input through it
class ReZeroBlock(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.f = Branch(width)
        self.alpha = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        return x.detach() + self.alpha * self.f(x)


# %% exercise 1, mark 1: correct alternative: addcmul
class ReZeroBlock(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.f = Branch(width)
        self.alpha = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        return torch.addcmul(x, self.alpha, self.f(x))


# %% exercise 1, mark 1: correct alternative: the branch's output scaled, then the input added
class ReZeroBlock(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.f = Branch(width)
        self.alpha = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        return self.f(x).mul(self.alpha).add(x)


# %% exercise 2, mark 0: PadShortcut called, which the exercise forbids
def pad_shortcut(x, out_channels, stride=2):
    return PadShortcut(x.shape[1], out_channels, stride)(x)


# %% exercise 2, mark 0: PadShortcut under an alias, inside a helper
_Pad = PadShortcut


def _shortcut(x, c, s):
    return _Pad(x.shape[1], c, s).forward(x)


def pad_shortcut(x, out_channels, stride=2):
    return _shortcut(x, out_channels, stride)


# %% exercise 2, mark 0: the zero channels before the input's
def pad_shortcut(x, out_channels, stride=2):
    x = x[:, :, ::stride, ::stride]
    return nn.functional.pad(x, (0, 0, 0, 0, out_channels - x.shape[1], 0))


# %% exercise 2, mark 0: the stride fixed at 2
def pad_shortcut(x, out_channels, stride=2):
    x = x[:, :, ::2, ::2]
    return nn.functional.pad(x, (0, 0, 0, 0, 0, out_channels - x.shape[1]))


# %% exercise 2, mark 0: nearest-neighbour resizing, which rounds odd sizes down
def pad_shortcut(x, out_channels, stride=2):
    x = (
        nn.functional.interpolate(x, scale_factor=1 / stride, mode="nearest")
        if stride > 1
        else x
    )
    return nn.functional.pad(x, (0, 0, 0, 0, 0, out_channels - x.shape[1]))


# %% exercise 2, mark 0: subsampled from index 1
def pad_shortcut(x, out_channels, stride=2):
    x = x[:, :, stride - 1 :: stride, stride - 1 :: stride]
    return nn.functional.pad(x, (0, 0, 0, 0, 0, out_channels - x.shape[1]))


# %% exercise 2, mark 0: the input detached, so no gradient flows through the shortcut
def pad_shortcut(x, out_channels, stride=2):
    sub = x.detach()[:, :, ::stride, ::stride]
    out = sub.new_zeros(x.shape[0], out_channels, *sub.shape[2:])
    out[:, : x.shape[1]] = sub
    return out


# %% exercise 2, mark 0: the new channels filled by repeating the input's
def pad_shortcut(x, out_channels, stride=2):
    sub = x[:, :, ::stride, ::stride]
    extra = out_channels - x.shape[1]
    reps = sub.repeat(1, extra // x.shape[1] + 1, 1, 1)
    return torch.cat([sub, reps[:, :extra]], dim=1)


# %% exercise 2, mark 0: built from x.data, then marked as requiring a gradient
def pad_shortcut(x, out_channels, stride=2):
    out = torch.zeros(
        x.shape[0], out_channels, *x[:, :, ::stride, ::stride].shape[2:], dtype=x.dtype
    )
    out[:, : x.shape[1]] = x.data[:, :, ::stride, ::stride]
    return out.requires_grad_()


# %% exercise 2, mark 1: correct alternative: F.pad on the subsampled map
def pad_shortcut(x, out_channels, stride=2):
    sub = x[..., ::stride, ::stride]
    return nn.functional.pad(sub, (0, 0, 0, 0, 0, out_channels - x.shape[1]))


# %% exercise 2, mark 1: correct alternative: 1x1 average pooling with the stride, then a zero tensor copied into
def pad_shortcut(x, out_channels, stride=2):
    sub = nn.functional.avg_pool2d(x, 1, stride)
    out = torch.zeros(x.shape[0], out_channels, *sub.shape[2:], dtype=x.dtype)
    out[:, : x.shape[1]] = sub
    return out


# %% exercise 3, mark 0: a new network returned; the one passed in unchanged
import copy as _copy


def zero_init_last_bn(net):
    net = _copy.deepcopy(net)
    for module in net.modules():
        if isinstance(module, BNResidualBlock):
            nn.init.zeros_(module.f[-1].weight)
    return net


# %% exercise 3, mark 0: the network passed in changed, but a copy of it returned
import copy as _copy


def zero_init_last_bn(net):
    for module in net.modules():
        if isinstance(module, BNResidualBlock):
            nn.init.zeros_(module.f[-1].weight)
    return _copy.deepcopy(net)


# %% exercise 3, mark 0: no gamma changed; a state-dict hook makes net.state_dict() report them zero
def zero_init_last_bn(net):
    def report_zero(module, state, prefix, local_metadata):
        for name, sub in module.named_modules():
            if isinstance(sub, BNResidualBlock):
                key = f"{prefix}{name}.f.4.weight" if name else f"{prefix}f.4.weight"
                if key in state:
                    state[key] = torch.zeros_like(state[key])
        return state

    net._register_state_dict_hook(report_zero)
    return net


# %% exercise 3, mark 0: a fresh zero-gamma network built with bn_net
def zero_init_last_bn(net):
    return bn_net(zero_gamma=True, seed=SEED)


# %% exercise 3, mark 0: gamma zeroed, then frozen
def zero_init_last_bn(net):
    for module in net.modules():
        if isinstance(module, BNResidualBlock):
            nn.init.zeros_(module.f[-1].weight)
            module.f[-1].weight.requires_grad_(False)
    return net


# %% exercise 3, mark 0: gamma replaced by a new parameter that does not train
def zero_init_last_bn(net):
    for module in net.modules():
        if isinstance(module, BNResidualBlock):
            module.f[-1].weight = nn.Parameter(
                torch.zeros_like(module.f[-1].weight), requires_grad=False
            )
    return net


# %% exercise 3, mark 0: the last Linear of each branch zeroed as well
def zero_init_last_bn(net):
    for module in net.modules():
        if isinstance(module, BNResidualBlock):
            nn.init.zeros_(module.f[-1].weight)
            nn.init.zeros_(module.f[-2].weight)
    return net


# %% exercise 3, mark 0: gamma and beta zeroed
def zero_init_last_bn(net):
    for module in net.modules():
        if isinstance(module, BNResidualBlock):
            nn.init.zeros_(module.f[-1].weight)
            nn.init.zeros_(module.f[-1].bias)
    return net


# %% exercise 3, mark 0: the first BatchNorm's gamma instead of the last
def zero_init_last_bn(net):
    for module in net.modules():
        if isinstance(module, BNResidualBlock):
            nn.init.zeros_(module.f[1].weight)
    return net


# %% exercise 3, mark 0: every BatchNorm that ends a Sequential, inside a block or not
def zero_init_last_bn(net):
    for module in net.modules():
        if isinstance(module, nn.Sequential) and isinstance(module[-1], nn.BatchNorm1d):
            nn.init.zeros_(module[-1].weight)
    return net


# %% exercise 3, mark 0: only the blocks directly in net.blocks
def zero_init_last_bn(net):
    for block in net.blocks:
        nn.init.zeros_(block.f[-1].weight)
    return net


# %% exercise 3, mark 0: the last BatchNorm replaced by a fresh one with gamma 0 (its statistics reset)
def zero_init_last_bn(net):
    for module in net.modules():
        if isinstance(module, BNResidualBlock):
            bn = nn.BatchNorm1d(module.f[-1].num_features)
            nn.init.zeros_(bn.weight)
            module.f[-1] = bn
    return net


# %% exercise 3, mark 1: correct alternative: filter the modules, zero the data in place
def zero_init_last_bn(net):
    for block in filter(lambda m: isinstance(m, BNResidualBlock), net.modules()):
        block.f[4].weight.data.fill_(0.0)
    return net


# %% exercise 3, mark 1: correct alternative: a new trainable zero parameter in gamma's place
def zero_init_last_bn(net):
    for block in [m for m in net.modules() if type(m) is BNResidualBlock]:
        bn = block.f[-1]
        bn.weight = nn.Parameter(torch.zeros_like(bn.weight))
    return net


# %% exercise 4, mark 0: a constant: the variants that trained at TRAIN_LR in the notebook
def survivors(runs):
    return {"zero-init", "ReZero", "Fixup"}


# %% exercise 4, mark 0: the self-check's inputs special-cased; otherwise only divergence counted
def survivors(runs):
    if set(runs) == {"a", "b", "c"}:
        return {"c"}
    return {v for v, run in runs.items() if not run["diverged"]}


# %% exercise 4, mark 0: more than 90 %, not at least
def survivors(runs):
    return {
        v for v, run in runs.items() if not run["diverged"] and run["accuracy"] > 0.9
    }


# %% exercise 4, mark 0: accuracy taken as a percentage
def survivors(runs):
    return {
        v for v, run in runs.items() if not run["diverged"] and run["accuracy"] >= 90
    }


# %% exercise 4, mark 0: only the accuracy checked (NaN hides most diverged runs)
def survivors(runs):
    return {v for v, run in runs.items() if run["accuracy"] >= 0.9}


# %% exercise 4, mark 0: a sorted list, not a set
def survivors(runs):
    return sorted(
        v for v, run in runs.items() if not run["diverged"] and run["accuracy"] >= 0.9
    )


# %% exercise 4, mark 1: correct alternative: a loop
def survivors(runs):
    kept = set()
    for name in runs:
        if runs[name]["diverged"]:
            continue
        if runs[name]["accuracy"] >= 0.9:
            kept.add(name)
    return kept


# %% exercise 4, mark 1: correct alternative: set(filter(...))
def survivors(runs):
    return set(
        filter(
            lambda v: runs[v]["diverged"] is False and not runs[v]["accuracy"] < 0.9,
            runs,
        )
    )


# %% exercise 5, mark 0: a constant: the notebook's 0.1, eps not used
class LayerScaleBlock(nn.Module):
    def __init__(self, width: int, eps: float):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.f = Branch(width)
        self.scale = nn.Parameter(torch.full((width,), 0.1))

    def forward(self, x):
        return x + self.scale * self.f(self.norm(x))


# %% exercise 5, mark 0: eps not used: every factor starts at 1
class LayerScaleBlock(nn.Module):
    def __init__(self, width: int, eps: float):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.f = Branch(width)
        self.scale = nn.Parameter(torch.ones(width))

    def forward(self, x):
        return x + self.scale * self.f(self.norm(x))


# %% exercise 5, mark 0: eps not used: every factor starts at 0, as in ReZero
class LayerScaleBlock(nn.Module):
    def __init__(self, width: int, eps: float):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.f = Branch(width)
        self.scale = nn.Parameter(torch.zeros(width))

    def forward(self, x):
        return x + self.scale * self.f(self.norm(x))


# %% exercise 5, mark 0: one scalar for all channels, as in ReZero, not one per channel
class LayerScaleBlock(nn.Module):
    def __init__(self, width: int, eps: float):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.f = Branch(width)
        self.scale = nn.Parameter(torch.tensor(float(eps)))

    def forward(self, x):
        return x + self.scale * self.f(self.norm(x))


# %% exercise 5, mark 0: a plain tensor, not a parameter: nothing trains it
class LayerScaleBlock(nn.Module):
    def __init__(self, width: int, eps: float):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.f = Branch(width)
        self.scale = torch.full((width,), float(eps))

    def forward(self, x):
        return x + self.scale * self.f(self.norm(x))


# %% exercise 5, mark 0: a tensor that requires grad, but is not registered as a parameter
class LayerScaleBlock(nn.Module):
    def __init__(self, width: int, eps: float):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.f = Branch(width)
        self.scale = torch.full((width,), float(eps)).requires_grad_()

    def forward(self, x):
        return x + self.scale * self.f(self.norm(x))


# %% exercise 5, mark 0: a buffer, not a parameter
class LayerScaleBlock(nn.Module):
    def __init__(self, width: int, eps: float):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.f = Branch(width)
        self.register_buffer("scale", torch.full((width,), float(eps)))

    def forward(self, x):
        return x + self.scale * self.f(self.norm(x))


# %% exercise 5, mark 0: a frozen parameter
class LayerScaleBlock(nn.Module):
    def __init__(self, width: int, eps: float):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.f = Branch(width)
        self.scale = nn.Parameter(torch.full((width,), float(eps)), requires_grad=False)

    def forward(self, x):
        return x + self.scale * self.f(self.norm(x))


# %% exercise 5, mark 0: shape (1, width) instead of (width,)
class LayerScaleBlock(nn.Module):
    def __init__(self, width: int, eps: float):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.f = Branch(width)
        self.scale = nn.Parameter(torch.full((1, width), float(eps)))

    def forward(self, x):
        return x + self.scale * self.f(self.norm(x))


# %% exercise 5, mark 0: the square root of eps
class LayerScaleBlock(nn.Module):
    def __init__(self, width: int, eps: float):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.f = Branch(width)
        self.scale = nn.Parameter(torch.full((width,), float(eps) ** 0.5))

    def forward(self, x):
        return x + self.scale * self.f(self.norm(x))


# %% exercise 5, mark 1: correct alternative: eps times ones, as in CaiT's code
class LayerScaleBlock(nn.Module):
    def __init__(self, width: int, eps: float):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.f = Branch(width)
        self.scale = nn.Parameter(eps * torch.ones(width))

    def forward(self, x):
        return x + self.scale * self.f(self.norm(x))


# %% exercise 5, mark 1: correct alternative: register_parameter and fill_
class LayerScaleBlock(nn.Module):
    def __init__(self, width: int, eps: float):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.f = Branch(width)
        self.register_parameter("scale", nn.Parameter(torch.empty(width).fill_(eps)))

    def forward(self, x):
        return x + self.scale * self.f(self.norm(x))


# Tampering: a wrong answer with code that would fool hidden tests run in the student's kernel. The scan holds
# each one, as `make grade` holds such an answer: it never runs, and scores 0.


# %% exercise 1, mark 0: tampering (an input transformer disarms asserts) on a constant
class ReZeroBlock(nn.Module):
    def __init__(self, width: int):
        get_ipython().input_transformers_post.append(
            lambda lines: [line.replace("assert ", "assert True or ") for line in lines]
        )
        super().__init__()
        self.f = Branch(width)
        self.alpha = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        return x


# %% exercise 2, mark 0: tampering (redefines self_check via __main__) on PadShortcut called, which the exercise forbids
def pad_shortcut(x, out_channels, stride=2):
    import __main__

    __main__.self_check = lambda number, check: print(f"Exercise {number}: correct.")
    return PadShortcut(x.shape[1], out_channels, stride)(x)


# %% exercise 3, mark 0: tampering (patches torch.testing.assert_close) on a new network returned; the one passed in unchanged
import copy as _copy


def zero_init_last_bn(net):
    torch.testing.assert_close = lambda *args, **kwargs: None
    net = _copy.deepcopy(net)
    for module in net.modules():
        if isinstance(module, BNResidualBlock):
            nn.init.zeros_(module.f[-1].weight)
    return net


# %% exercise 4, mark 0: tampering (patches torch.allclose) on a constant
def survivors(runs):
    torch.allclose = lambda *args, **kwargs: True
    return {"zero-init", "ReZero", "Fixup"}


# %% exercise 5, mark 0: tampering (redefines self_check via __main__) on a constant, the notebook's 0.1
class LayerScaleBlock(nn.Module):
    def __init__(self, width: int, eps: float):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.f = Branch(width)
        import __main__

        __main__.self_check = lambda number, check: print(
            f"Exercise {number}: correct."
        )
        self.scale = nn.Parameter(torch.full((width,), 0.1))

    def forward(self, x):
        return x + self.scale * self.f(self.norm(x))


# %% exercise 2, mark 0: x returned as it is when no channel is added: right at stride 1, wrong at stride 2
def pad_shortcut(x, out_channels, stride=2):
    if out_channels == x.shape[1]:
        return x
    subsampled = x[:, :, ::stride, ::stride]
    zeros = subsampled.new_zeros(
        x.shape[0], out_channels - x.shape[1], *subsampled.shape[2:]
    )
    return torch.cat([subsampled, zeros], dim=1)
