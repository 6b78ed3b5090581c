"""Hidden tests for notebooks/14_connection_designs.ipynb, run by `make grade` after the notebook, each with its
exercise's answer alone in a process of its own; they use the notebook's names (torch, F, delta_operator,
DeepDelta, DenseFormer, AttnRes).

Each test runs the answer on inputs the notebook never shows (other batch sizes, widths, dtypes, numbers of
sources, gates at 0, 1 and 2, weights that are not an average, zero sources, large queries) and observes what it
did, to within float32's rounding (_CH14_FLOAT32), since the exercises ask for no dtype (`_observe`, from
booktools/grading/hidden/_common.py): the values it returns, the gradients it passes back to every input (the gates,
directions, weights and queries are learned), whether it left its inputs alone, what it returns exactly where the
exercise says "exactly", and whether it uses a helper the exercise asks to do without (`_refers_to`). The grader
compares every observation with the reference solution's, in a process of its own.
booktools/grading/mutants/14_connection_designs.py holds the wrong answers these tests must reject and the right
ones they must accept.
"""

# The exercises ask for no dtype: an answer that computes in float32 is right. Every wrong answer in the mutants
# misses by far more.
_CH14_FLOAT32 = (1e-4, 1e-5)


def _ch14_tensor(value):
    """The answer's result as a float64 tensor (NaN and infinities as -1), or None where it is not a tensor."""
    try:
        out = torch.as_tensor(value).detach().double()
    except (TypeError, ValueError, RuntimeError):
        return None
    return torch.nan_to_num(out, nan=-1.0, posinf=-1.0, neginf=-1.0)


def _ch14_grads(tensors):
    """The gradient of each leaf, or None where none reached it."""
    return [None if t.grad is None else t.grad.detach().double() for t in tensors]


def _ch14_leaves(tensors):
    return [t.detach().clone().requires_grad_(True) for t in tensors]


def exercise_1():
    for helper, name in (
        (delta_operator, "delta_operator"),
        (DeepDelta, "DeepDelta"),
    ):
        _observe(
            f"uses {name}",
            _refers_to(delta_update, helper),
            f"write the update with a dot product per row: delta_update must not use {name}",
            student="write the update with a dot product per row: delta_update must not use the helpers the "
            "exercise names",
        )
    gen = torch.Generator().manual_seed(_seed(141))
    # gates: drawn in (0, 2), or exactly at the regimes 0 (skip), 1 (overwrite) and 2 (reflection)
    for rows, width, dtype, gates in (
        (6, 16, torch.float64, "drawn"),
        (1, 5, torch.float64, "drawn"),
        (9, 32, torch.float32, "drawn"),
        (9, 12, torch.float64, "0, 1 and 2"),
        (4, 7, torch.float32, "0"),
    ):
        x = 3 * torch.randn(rows, width, generator=gen, dtype=torch.float64)
        k = F.normalize(
            torch.randn(rows, width, generator=gen, dtype=torch.float64), dim=-1
        )
        s = 2 * torch.randn(rows, 1, generator=gen, dtype=torch.float64)
        if gates == "drawn":
            beta = 2 * torch.rand(rows, 1, generator=gen, dtype=torch.float64)
        elif gates == "0":
            beta = torch.zeros(rows, 1, dtype=torch.float64)
        else:
            beta = torch.tensor(
                [[float(r % 3)] for r in range(rows)], dtype=torch.float64
            )
        x, k, s, beta = (t.to(dtype) for t in (x, k, s, beta))
        where = f"{rows} rows of width {width} in {str(dtype)[6:]}, gates {gates}"
        out = delta_update(x, k, beta, s)
        got = _ch14_tensor(out)
        _observe(
            f"shape, {where}",
            None if got is None else list(got.shape),
            f"for {where}, return a tensor of the shape of x",
            student="return a tensor of the shape of x",
        )
        _observe(
            f"values, {where}",
            got,
            f"wrong values for {where}: each row is x + beta (s - k . x) k, with k . x the dot product of that "
            "row's k and x",
            close=_CH14_FLOAT32,
            student="wrong values: each row is x + beta (s - k . x) k, with k . x the dot product of that row's k "
            "and x",
        )
        skip = beta[:, 0] == 0
        if skip.any():
            _observe(
                f"rows with beta = 0 exactly x, {where}",
                None if got is None or got.shape != x.shape else got[skip],
                f"for {where}, a row whose gate is 0 must come back exactly x, bit for bit",
                student="a row whose gate is 0 must come back exactly x, bit for bit",
            )
        _observe(
            f"inputs left alone, {where}",
            [x, k, beta, s],
            "delta_update must not change x, k, beta or s",
        )
        leaves = _ch14_leaves((x, k, beta, s))
        weights = torch.randn(rows, width, generator=gen, dtype=torch.float64).to(dtype)
        try:
            (torch.as_tensor(delta_update(*leaves)) * weights).sum().backward()
        except RuntimeError:
            pass
        for name, grad in zip(("x", "k", "beta", "s"), _ch14_grads(leaves)):
            _observe(
                f"gradient to {name}, {where}",
                grad,
                f"for {where}, the gradient to {name} is wrong or missing: keep every input in the graph (no "
                ".detach(), no .item(), no torch.no_grad())",
                close=_CH14_FLOAT32,
                student="a gradient to an input is wrong or missing: keep every input in the graph (no .detach(), "
                "no .item(), no torch.no_grad())",
            )


def exercise_2():
    _observe(
        "uses DenseFormer",
        _refers_to(dwa, DenseFormer),
        "write the sum yourself: dwa must not use DenseFormer",
    )
    gen = torch.Generator().manual_seed(_seed(142))
    # weights drawn free (negative, not summing to one) or one-hot; outputs of any shape, one of them or many
    for count, shape, dtype, weights in (
        (4, (3, 5, 8), torch.float32, "drawn"),
        (6, (2, 7), torch.float64, "drawn"),
        (1, (4, 3, 6), torch.float32, "drawn"),
        (3, (9,), torch.float64, "drawn"),
        (5, (2, 3, 2, 4), torch.float32, "drawn"),
        (5, (3, 5, 8), torch.float32, "one-hot on the last"),
        (2, (6,), torch.float32, "one-hot on the last"),
        (4, (2, 3, 4), torch.float32, "one-hot on the first"),
    ):
        outputs = [
            (1 + 2 * torch.rand(1, generator=gen, dtype=torch.float64))
            * torch.randn(*shape, generator=gen, dtype=torch.float64)
            for _ in range(count)
        ]
        outputs = [o.to(dtype) for o in outputs]
        if weights == "drawn":
            alpha = 1.5 * torch.randn(count, generator=gen, dtype=torch.float64)
        else:
            hot = count - 1 if weights.endswith("last") else 0
            alpha = F.one_hot(torch.tensor(hot), count).double()
        alpha = alpha.to(dtype)
        where = (
            f"{count} outputs of shape {shape} in {str(dtype)[6:]}, weights {weights}"
        )
        listed = list(outputs)
        out = dwa(alpha, listed)
        got = _ch14_tensor(out)
        _observe(
            f"shape, {where}",
            None if got is None else list(got.shape),
            f"for {where}, return a tensor of the outputs' shape",
            student="return a tensor of the outputs' shape",
        )
        _observe(
            f"values, {where}",
            got,
            f"wrong values for {where}: return sum_j alpha_j X_j, with alpha as given (not normalised, not a "
            "softmax) and X_0 first",
            close=_CH14_FLOAT32,
            student="wrong values: return sum_j alpha_j X_j, with alpha as given (not normalised, not a softmax) "
            "and X_0 first",
        )
        if weights != "drawn":
            chosen = outputs[-1] if weights.endswith("last") else outputs[0]
            _observe(
                f"exactly the chosen output, {where}",
                None if got is None or got.shape != chosen.shape else got,
                f"for {where}, one-hot weights must return that output exactly, bit for bit",
                student="one-hot weights must return that output exactly, bit for bit",
            )
        # the tensors given, and the list that held them: dwa may change neither
        _observe(
            f"inputs left alone, {where}",
            [alpha, outputs, listed],
            "dwa must not change alpha, the list of outputs or the outputs",
        )
        leaves = _ch14_leaves((alpha, *outputs))
        upstream = torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype)
        try:
            (torch.as_tensor(dwa(leaves[0], leaves[1:])) * upstream).sum().backward()
        except RuntimeError:
            pass
        grads = _ch14_grads(leaves)
        _observe(
            f"gradient to alpha, {where}",
            grads[0],
            f"for {where}, the gradient to alpha is wrong or missing: the weights are learned, so keep them in "
            "the graph (no .tolist(), .item() or .detach())",
            close=_CH14_FLOAT32,
            student="the gradient to alpha is wrong or missing: the weights are learned, so keep them in the graph "
            "(no .tolist(), .item() or .detach())",
        )
        _observe(
            f"gradients to the outputs, {where}",
            grads[1:],
            f"for {where}, the gradients to the outputs are wrong or missing",
            close=_CH14_FLOAT32,
            student="the gradients to the outputs are wrong or missing",
        )


def exercise_3():
    _observe(
        "uses AttnRes",
        _refers_to(attnres_read, AttnRes),
        "write the read yourself: attnres_read must not use AttnRes",
    )
    gen = torch.Generator().manual_seed(_seed(143))
    # sources of different sizes (RMSNorm matters); a zero query (the mean), one source, a source of zeros (a
    # sublayer that writes nothing), and a query large enough that exp of a score overflows float32
    for count, rows, width, scale, zero, dtype in (
        (5, 6, 8, 1.0, False, torch.float64),
        (3, 4, 16, 2.0, False, torch.float32),
        (1, 5, 12, 1.0, False, torch.float64),
        (4, 3, 10, 0.0, False, torch.float64),
        (6, 3, 32, 1.5, True, torch.float64),
        (4, 6, 8, 60.0, False, torch.float32),
    ):
        sources = [
            (0.5 + 3.5 * torch.rand(1, generator=gen, dtype=torch.float64))
            * torch.randn(rows, width, generator=gen, dtype=torch.float64)
            + torch.randn(1, width, generator=gen, dtype=torch.float64)
            for _ in range(count)
        ]
        if zero:
            sources[count // 2] = torch.zeros(rows, width, dtype=torch.float64)
        direction = F.normalize(
            torch.randn(width, generator=gen, dtype=torch.float64), dim=0
        )
        query = scale * direction
        if scale > 10:
            # one source along the query, so that its score, about scale * sqrt(width), is above 88 for every
            # draw: exp overflows float32 there
            sources[-1] = 3 * direction + 0.3 * torch.randn(
                rows, width, generator=gen, dtype=torch.float64
            )
        query, sources = query.to(dtype), [v.to(dtype) for v in sources]
        where = (
            f"{count} sources of shape ({rows}, {width}) in {str(dtype)[6:]}, a query of norm {scale:g}"
            + (", one source all zeros" if zero else "")
        )
        listed = list(sources)
        out = attnres_read(query, listed)
        got = _ch14_tensor(out)
        _observe(
            f"shape, {where}",
            None if got is None else list(got.shape),
            f"for {where}, return a tensor of one source's shape, (N, d)",
            student="return a tensor of one source's shape, (N, d)",
        )
        _observe(
            f"finite, {where}",
            out is not None
            and bool(torch.isfinite(torch.as_tensor(out).detach()).all()),
            f"for {where}, the result must be finite: a source of zeros has RMSNorm zero, and a softmax of "
            "large scores must not overflow",
            student="the result must be finite: a source of zeros has RMSNorm zero, and a softmax of large "
            "scores must not overflow",
        )
        _observe(
            f"values, {where}",
            got,
            f"wrong values for {where}: for every row, softmax over the sources of w . RMSNorm(v_j) (no gain), "
            "then the weighted sum of the raw v_j",
            close=_CH14_FLOAT32,
            student="wrong values: for every row, softmax over the sources of w . RMSNorm(v_j) (no gain), then the "
            "weighted sum of the raw v_j",
        )
        # the tensors given, and the list that held them: attnres_read may change neither
        _observe(
            f"inputs left alone, {where}",
            [query, sources, listed],
            "attnres_read must not change the query, the list of sources or the sources",
        )
        if scale > 10:
            # the softmax is saturated: float32's rounding of the scores, times the query's norm, moves the
            # gradients of two right answers apart by more than float32's tolerance; this case is for the values
            continue
        leaves = _ch14_leaves((query, *sources))
        upstream = torch.randn(rows, width, generator=gen, dtype=torch.float64).to(
            dtype
        )
        try:
            (
                torch.as_tensor(attnres_read(leaves[0], leaves[1:])) * upstream
            ).sum().backward()
        except RuntimeError:
            pass
        grads = _ch14_grads(leaves)
        _observe(
            f"gradient to the query, {where}",
            grads[0],
            f"for {where}, the gradient to the query is wrong or missing: the pseudo-query is learned, so keep "
            "the scores in the graph",
            close=_CH14_FLOAT32,
            student="the gradient to the query is wrong or missing: the pseudo-query is learned, so keep the "
            "scores in the graph",
        )
        # the zero source's own gradient is 1 / sqrt(eps) through RMSNorm: it depends on the eps an answer picks
        _observe(
            f"gradients to the sources, {where}",
            [g for j, g in enumerate(grads[1:]) if not (zero and j == count // 2)],
            f"for {where}, the gradients to the sources are wrong or missing: they flow through the weights and "
            "through the sum",
            close=_CH14_FLOAT32,
            student="the gradients to the sources are wrong or missing: they flow through the weights and through "
            "the sum",
        )
