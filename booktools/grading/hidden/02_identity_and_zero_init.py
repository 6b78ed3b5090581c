"""Hidden tests for notebooks/02_identity_and_zero_init.ipynb, run by `make grade`, each with its exercise's answer
alone in a process of its own (booktools/grading/isolated.py); they use the notebook's names (torch, nn, ReZeroBlock,
...).

Each test runs the answer on inputs the notebook never shows and observes what it did (`_observe`, from
booktools/grading/hidden/_common.py): outputs, the gradients that reach alpha, the branch and the input (none where something
was detached), whether the object passed in is the one changed and nothing else changed, and whether a class the
exercise asks to replace by hand is used (`_refers_to`). The grader compares every observation with the reference
solution's, in a process of its own. Exercise 3's answer is a network's weights: its test keeps them as arrays, and
`observe_3` observes them in a process no answer has run in. booktools/grading/mutants/02_identity_and_zero_init.py
holds the wrong answers these tests must reject and the right ones they must accept.
"""


def exercise_1():
    gen = torch.Generator().manual_seed(_seed(2025))
    for width, batch in ((3, 5), (24, 7)):
        torch.manual_seed(_seed(width))
        block = ReZeroBlock(width)
        x, w = (
            torch.randn(batch, width, generator=gen),
            torch.randn(batch, width, generator=gen),
        )
        where = f"width {width}"
        # at alpha = 0: the identity; alpha's gradient is sum(w * F(x)), the input's is w
        x0 = x.clone().requires_grad_()
        out = block(x0)
        _observe(
            f"output at alpha 0, {where}",
            out,
            "a fresh ReZeroBlock must return its input exactly",
        )
        (out * w).sum().backward()
        _observe(
            f"alpha's gradient at alpha 0, {where}",
            block.alpha.grad,
            "alpha must get the gradient of x + alpha F(x): keep self.alpha in the graph (no .item(), no .detach())",
            close=(1e-5, 1e-6),
        )
        _observe(
            f"input's gradient at alpha 0, {where}",
            x0.grad,
            "at alpha = 0 the gradient must pass back to the input unchanged, through the shortcut",
            close=(1e-5, 1e-6),
        )
        # at alpha != 0: the output and every gradient of x + alpha * F(x)
        block.zero_grad()
        with torch.no_grad():
            block.alpha.fill_(-1.7)
        xs = x.clone().requires_grad_()
        out = block(xs)
        _observe(
            f"output at alpha -1.7, {where}",
            out,
            "forward must compute x + alpha * F(x)",
            close=(1e-5, 1e-6),
        )
        (out * w).sum().backward()
        _observe(
            f"branch's gradients at alpha -1.7, {where}",
            [p.grad for p in block.f.parameters()],
            "the branch's parameters must get their gradient through alpha * F(x): do not detach F(x)",
            close=(1e-5, 1e-6),
        )
        _observe(
            f"input's gradient at alpha -1.7, {where}",
            xs.grad,
            "the gradient at the input must flow through both the shortcut and the branch",
            close=(1e-5, 1e-6),
        )


def exercise_2():
    _observe(
        "uses PadShortcut",
        _refers_to(pad_shortcut, PadShortcut),
        "write the shortcut by hand: pad_shortcut must not use PadShortcut",
    )
    gen = torch.Generator().manual_seed(_seed(7))
    for shape, c_out, stride in (
        ((3, 8, 10, 10), 24, 2),
        ((2, 5, 7, 9), 11, 2),
        ((1, 4, 8, 7), 6, 3),
        ((2, 6, 5, 5), 9, 1),
        ((2, 3, 6, 6), 3, 1),
        ((2, 4, 7, 7), 4, 2),  # no padding, but a stride: still subsample
    ):
        x = torch.randn(*shape, generator=gen, dtype=torch.float64).requires_grad_()
        w = torch.randn(
            shape[0],
            c_out,
            *x[:, :, ::stride, ::stride].shape[2:],
            generator=gen,
            dtype=torch.float64,
        )
        y = pad_shortcut(x, c_out, stride)
        where = f"an input of shape {shape}, out_channels = {c_out} and stride {stride}"
        _observe(
            f"a tensor, {where}",
            isinstance(y, torch.Tensor),
            f"for {where}, return a tensor",
            student="return a tensor",
        )
        _observe(
            f"shape, {where}",
            list(y.shape),
            f"for {where}, the shape is wrong",
            student="the shape is wrong for some of the inputs graded",
        )
        _observe(
            f"values, {where}",
            y,
            f"for {where}, the first channels must be the input's, keeping every stride-th pixel from the first, "
            "and the channels after them zeros",
            student="the first channels must be the input's, keeping every stride-th pixel from the first, and the channels after them zeros",
        )
        _observe(
            f"gradient flows, {where}",
            y.requires_grad,
            "the gradient must flow back through the shortcut: do not detach the input",
        )
        (y * w).sum().backward()
        _observe(
            f"input's gradient, {where}",
            x.grad,
            "the gradient must flow back through the shortcut to the pixels it keeps: do not detach",
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
    """Runs zero_init_last_bn on two networks and keeps, as arrays, the network passed in and what it returned; the
    judge's process observes them (`observe_3`)."""
    for k, net in enumerate(_bn_nets()):
        returned = zero_init_last_bn(net)
        state = _tensors_of(net)  # as it is, not as a hooked state_dict() would say
        _keep(f"net {k}", state)
        _keep(
            f"trainable {k}",
            {
                n: t.requires_grad
                for n, t in state.items()
                if isinstance(t, nn.Parameter)
            },
        )
        # what was returned shows the mark only if it is the network passed in
        _mark(state.values())
        _keep(
            f"returned {k}",
            _tensors_of(returned) if isinstance(returned, nn.Module) else {},
        )


def observe_3(kept):
    """In a process no answer has run in: the answer's state loaded into networks of this process's own, built from
    the same seeds as the answer's, then read and run there."""
    gen = torch.Generator().manual_seed(_seed(33))
    for k, (net, fan_in) in enumerate(zip(_bn_nets(), (64, 5))):
        gammas = {
            f"{name}.f.{len(m.f) - 1}.weight"
            for name, m in net.named_modules()
            if isinstance(m, BNResidualBlock)
        }
        state, returned = (
            _kept_state(kept, f"net {k}"),
            _kept_state(kept, f"returned {k}"),
        )
        x = torch.randn(6, fan_in, generator=gen)  # drawn whatever the answer did
        # none: the answer's run stopped before it, and the judge reports its error
        if not state:
            continue
        _observe(
            f"returns the net {k}",
            _shows_mark(state, returned),
            "change the network passed in, and return it",
        )
        entries = {name: list(t.shape) for name, t in state.items()}
        _observe(
            f"entries of net {k}",
            entries,
            "keep the network's parameters and statistics: the same names and shapes, none added or taken away",
        )
        if entries != {name: list(t.shape) for name, t in net.state_dict().items()}:
            continue
        net.load_state_dict(state)
        after = net.state_dict()
        _observe(
            f"gammas of net {k}",
            {name: after[name] for name in gammas},
            "the last BatchNorm's gamma of every BNResidualBlock must be zero, nested ones too",
        )
        _observe(
            f"everything else of net {k}",
            {name: t for name, t in after.items() if name not in gammas},
            "set only the gamma of each block's last BatchNorm, and leave every other parameter and statistic as it was",
        )
        _observe(
            f"trainable in net {k}",
            {name: bool(t) for name, t in _kept_state(kept, f"trainable {k}").items()},
            "every parameter must stay trainable: set gamma's value to zero, do not freeze it",
        )
        with torch.no_grad():
            out = net.eval()(x)
        _observe(
            f"output of net {k}",
            out,
            "the network must compute what the reference's does once its gammas are zero",
            close=(1e-5, 1e-6),
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
    for i, runs in enumerate(cases):
        got = survivors(runs)
        _observe(
            f"a set, case {i}",
            isinstance(got, (set, frozenset)),
            "return a set",
        )
        _observe(
            f"survivors, case {i}",
            got,
            "count a variant only if it did not diverge (run['diverged'] is False) and reached at least 90 % "
            "training accuracy (run['accuracy'] >= 0.9, a fraction)",
        )


def _ch02_registered(block, scale):
    """How much the block's parameter named "scale" moves, on average, when block.scale (`scale`) is marked (1 added
    to it): 1 only if that parameter is block.scale itself, 0 if it is another tensor; None if there is no such
    parameter or block.scale is no tensor. block.scale is then as it was."""
    registered = dict(block.named_parameters()).get("scale")
    if not isinstance(scale, torch.Tensor) or registered is None:
        return None
    before, saved = registered.detach().clone(), scale.detach().clone()
    _mark([scale])
    moved = float((registered.detach() - before).double().mean())
    with torch.no_grad():
        scale.copy_(saved)
    return moved


def exercise_5():
    gen = torch.Generator().manual_seed(_seed(5150))
    for width, batch in ((3, 4), (10, 6)):
        # away from the notebook's 0.1 and from 1, so that neither a constant nor a missing scale passes
        eps = 0.2 + 0.5 * torch.rand((), generator=gen).item()
        x = torch.randn(batch, width, generator=gen)
        w = torch.randn(batch, width, generator=gen)
        for e in (eps, 0.0):
            torch.manual_seed(_seed(width))
            block = LayerScaleBlock(width, e)
            where = f"width {width}, eps {e:.4f}"
            scale = block.scale
            _observe(
                f"scale is a parameter of the block, {where}",
                _ch02_registered(block, scale),
                "self.scale must be an nn.Parameter of the block, so that an optimiser sees it",
                # 1 for the same tensor, up to float32's rounding of the mark; 0 for another
                close=(0, 1e-3),
            )
            _observe(
                f"scale trains, {where}",
                bool(getattr(scale, "requires_grad", False)),
                "self.scale must be trainable (requires_grad)",
            )
            _observe(
                f"scale's shape, {where}",
                list(torch.as_tensor(scale).shape),
                f"for {where}, self.scale needs one factor per channel: a vector of shape (width,)",
                student="self.scale needs one factor per channel: a vector of shape (width,)",
            )
            _observe(
                f"scale at init, {where}",
                torch.as_tensor(scale).detach().clone(),
                f"for {where}, every factor of self.scale must start at eps",
                close=(1e-6, 1e-7),
                student="every factor of self.scale must start at eps",
            )
            xs = x.clone().requires_grad_()
            out = block(xs)
            _observe(
                f"output, {where}",
                out,
                f"for {where}, the block must return x + eps * F(LN(x)) at init",
                close=(1e-5, 1e-6),
                student="the block must return x + eps * F(LN(x)) at init",
            )
            (out * w).sum().backward()
            _observe(
                f"scale's gradient, {where}",
                getattr(scale, "grad", None),
                f"for {where}, each factor must get its own gradient, sum over the batch of w_c F_c(LN(x))",
                close=(1e-4, 1e-5),
                student="each factor must get its own gradient, sum over the batch of w_c F_c(LN(x))",
            )
            _observe(
                f"branch's gradients, {where}",
                [p.grad for p in block.f.parameters()],
                f"for {where}, the branch's gradients are those of x + eps * F(LN(x)): exactly zero at eps = 0",
                close=(1e-4, 1e-6),
                student="the branch's gradients are those of x + eps * F(LN(x)): exactly zero at eps = 0",
            )
            _observe(
                f"input's gradient, {where}",
                xs.grad,
                f"for {where}, the gradient must reach the input through the shortcut and the branch",
                close=(1e-4, 1e-6),
                student="the gradient must reach the input through the shortcut and the branch",
            )
