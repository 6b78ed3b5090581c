"""Hidden tests for notebooks/09_depth_scaling.ipynb, run by `make grade`, each with its exercise's answer alone in a
process of its own (booktools/grading/isolated.py); they use the notebook's names (torch, nn, Branch,
ScaledResidualBlock, DigitsNet, BRANCH_SCALES, ...).

Each test runs the answer on inputs the notebook never shows and observes what it did (`_observe`, from
booktools/grading/hidden/_common.py): the stream's sizes and the gradients that reach the input and the branches (none where
something was detached), whether the net passed in is the one changed and what else changed, and the best column of
loss tables with diverged runs in them. The grader compares every observation with the reference solution's, in a
process of its own. Exercise 2's answer is the blocks' scales: its test keeps them and the weights as arrays, and
`observe_2` observes them in a process no answer has run in. booktools/grading/mutants/09_depth_scaling.py holds the
wrong answers these tests must reject and the right ones they must accept.
"""


def exercise_1():
    gen = torch.Generator().manual_seed(_seed(909))
    for width, batch, blocks, scale in (
        (3, 4, 5, 0.5),
        (6, 2, 9, 1.0),
        (5, 3, 7, -0.3),
        (4, 5, 3, 0.0),
        (7, 3, 12, 1 / 12),
        (4, 2, 0, 2.0),
    ):
        torch.manual_seed(_seed(100 + width * blocks))
        branches = [Branch(width) for _ in range(blocks)]
        x = torch.randn(batch, width, generator=gen) * 3
        w = torch.randn(blocks + 1, generator=gen)
        where = (
            f"{blocks} branches of width {width}, a batch of {batch}, scale {scale:g}"
        )
        x_in = x.clone().requires_grad_()
        sizes = stream_rms(x_in, branches, scale)
        _observe(
            f"a tensor, {where}",
            torch.is_tensor(sizes),
            f"for {where}, return a tensor",
            student="return a tensor",
        )
        _observe(
            f"shape, {where}",
            list(sizes.shape) if torch.is_tensor(sizes) else None,
            f"for {where}, return one value for the input and one after every block: a 1-D tensor",
            student="return one value for the input and one after every block: a 1-D tensor",
        )
        _observe(
            f"sizes, {where}",
            sizes,
            f"for {where}, the values must be the RMS over all entries of h, at the input and after each "
            "h <- h + scale * F(h), in the order of the list",
            close=(1e-4, 1e-6),
            student="the values must be the RMS over all entries of h, at the input and after each h <- h + scale * F(h), in the order of the list",
        )
        _observe(
            f"input unchanged, {where}",
            x_in,
            "leave the input tensor as it was: build new tensors, do not update it in place",
        )
        if blocks == 0:
            continue
        (sizes * w).sum().backward()
        _observe(
            f"input's gradient, {where}",
            x_in.grad,
            "the gradient must flow back to the input through every block, shortcut and branch: do not detach",
            close=(1e-4, 1e-6),
        )
        _observe(
            f"branches' gradients, {where}",
            [p.grad for branch in branches for p in branch.parameters()],
            "the branches' parameters must get their gradient through scale * F(h): do not detach, and use "
            "every branch once, in order",
            close=(1e-4, 1e-6),
        )


def _ch09_scaled_nets():
    """Nets whose ScaledResidualBlocks sit at different depths of nesting, beside modules that are not blocks."""
    torch.manual_seed(_seed(31))
    width = 5
    digits = DigitsNet([ScaledResidualBlock(width, 0.7) for _ in range(7)], width)
    nested = nn.Sequential(
        nn.Linear(3, width),
        ScaledResidualBlock(width),
        nn.Sequential(
            ScaledResidualBlock(width, 2.0),
            nn.ReLU(),
            nn.Sequential(ScaledResidualBlock(width)),
        ),
        Branch(width),
        nn.Sequential(*[ScaledResidualBlock(width, 0.1) for _ in range(2)]),
        nn.Linear(width, 2),
    )
    single = DigitsNet([ScaledResidualBlock(width, 3.0)], width)
    return [(digits, 64), (nested, 3), (single, 64)]


def exercise_2():
    """Runs set_branch_scale_ on three networks under each rule and keeps, as arrays, the network passed in (its
    weights and its blocks' scales) and what it returned; the judge's process observes them (`observe_2`)."""
    for r, rule in enumerate(BRANCH_SCALES):
        for k, (net, _) in enumerate(_ch09_scaled_nets()):
            returned = set_branch_scale_(net, rule)
            where = f"net {k}, rule {r}"
            _keep(f"weights, {where}", _tensors_of(net))
            _keep(f"scales, {where}", _ch09_scales(net))
            # what was returned shows this mark only if it is the network passed in
            for m in net.modules():
                if isinstance(m, ScaledResidualBlock):
                    m.scale = 1.0 + float(m.scale)
            _keep(
                f"returned scales, {where}",
                _ch09_scales(returned) if isinstance(returned, nn.Module) else [],
            )


def _ch09_scales(net) -> list:
    """The scale of every ScaledResidualBlock in a network, in the order of net.modules()."""
    return [float(m.scale) for m in net.modules() if isinstance(m, ScaledResidualBlock)]


def observe_2(kept):
    """In a process no answer has run in: the answer's weights and scales loaded into networks of this process's
    own, built from the same seeds as the answer's, then run there."""
    gen = torch.Generator().manual_seed(_seed(32))
    for r, rule in enumerate(BRANCH_SCALES):
        for k, (net, fan_in) in enumerate(_ch09_scaled_nets()):
            x = torch.randn(4, fan_in, generator=gen)
            where = f"net {k} with rule {rule!r}"
            state = _kept_state(kept, f"weights, net {k}, rule {r}")
            # none: the answer's run stopped before it, and the judge reports its error
            if not state:
                continue
            scales = kept[f"scales, net {k}, rule {r}"].tolist()
            returned = kept[f"returned scales, net {k}, rule {r}"].tolist()
            _observe(
                f"returns the net, {where}",
                returned == [1.0 + s for s in scales],
                "change the network passed in, and return it",
            )
            _observe(
                f"scales, {where}",
                scales,
                f"for {where}, every ScaledResidualBlock's scale must be BRANCH_SCALES[rule](L), where L counts "
                "the ScaledResidualBlocks anywhere inside the net, nested ones too, and nothing else",
                # a scale stored in float32 (a 0-d tensor, as the branch computes in) is right too: it is off by at
                # most float32's rounding, 2**-24 ~ 6e-8 relative; a wrong L (L + 1, or 1 for L = 5 or 7) or rule is
                # off by several percent
                close=(1e-6, 0),
                student="every ScaledResidualBlock's scale must be BRANCH_SCALES[rule](L), where L counts the ScaledResidualBlocks anywhere inside the net, nested ones too, and nothing else",
            )
            _observe(
                f"weights unchanged, {where}",
                state,
                "set only each block's scale: leave every weight and bias as it was",
            )
            blocks = [m for m in net.modules() if isinstance(m, ScaledResidualBlock)]
            if state.keys() != net.state_dict().keys() or len(scales) != len(blocks):
                continue
            net.load_state_dict(state)
            for block, scale in zip(blocks, scales):
                block.scale = scale
            with torch.no_grad():
                out = net(x)
            _observe(
                f"output, {where}",
                out,
                f"for {where}, the net's output must be that of its blocks with the new scales",
                close=(1e-5, 1e-6),
                student="the net's output must be that of its blocks with the new scales",
            )


def exercise_3():
    nan, inf = float("nan"), float("inf")
    cases = [
        [[0.3, nan, 0.1, 0.1, inf]],
        [[nan, nan], [inf, -inf], [2.0, nan]],
        [[-inf, 0.5, 0.4], [0.4, 0.4, -0.2]],
        [[1.0]],
    ]
    gen = torch.Generator().manual_seed(_seed(77))
    for _ in range(4):
        rows, cols = torch.randint(1, 6, (2,), generator=gen).tolist()
        table = torch.rand(rows, cols, generator=gen).round(decimals=1)
        kinds = torch.rand(rows, cols, generator=gen)
        table[kinds < 0.2] = nan
        table[(kinds >= 0.2) & (kinds < 0.3)] = inf
        table[(kinds >= 0.3) & (kinds < 0.35)] = -inf
        cases.append(table.tolist())
    for i, case in enumerate(cases):
        losses = torch.tensor(case)
        index = best_lr_index(losses)
        _observe(f"a tensor, case {i}", torch.is_tensor(index), "return a tensor")
        _observe(
            f"integers, case {i}",
            str(index.dtype) if torch.is_tensor(index) else None,
            "return integers: a torch.long tensor",
        )
        _observe(
            f"best columns, case {i}",
            index.tolist() if torch.is_tensor(index) else index,
            f"for the losses {case}: for each row, the first column of its lowest finite loss (skip nan, inf "
            "and -inf), or -1 where no loss in the row is finite",
            student="for each row, the first column of its lowest finite loss (skip nan, inf and -inf), or -1 where no loss in the row is finite",
        )
        _observe(
            f"losses unchanged, case {i}",
            losses,
            "leave the losses as they were: do not replace their nans in place",
        )
