"""Hidden tests for notebooks/11_residual_stream.ipynb, run by `make grade`, each with its exercise's answer alone in a
process of its own (booktools/grading/isolated.py); they use the notebook's names (torch, nn, TinyGPT, PreNormBlock,
VOCAB, TOKENS, ...).

Each test runs the answer on inputs the notebook never shows (other depths, widths, batches and sequence lengths,
LayerNorms with other gains, biases and eps, logits of other shapes), in float64, and observes what it did, to
within float32's rounding (_CH11_FLOAT32)
(`_observe`, from booktools/grading/hidden/_common.py): the values it returns, whether it leaves its inputs and the model alone,
and whether it uses a helper the exercise asks to do without (`_refers_to`). The grader compares every observation
with the reference solution's, in a process of its own.
booktools/grading/mutants/11_residual_stream.py holds the wrong answers these tests must reject and the right ones they must
accept.
"""

# The exercises ask for no dtype, and the notebook's model is float32: an answer that computes in float32 (its own
# buffers, a .float()) is right. The inputs are float64, so the reference is exact to far less than this; every wrong
# answer in booktools/grading/mutants/11_residual_stream.py misses by more than 1e-3.
_CH11_FLOAT32 = (1e-4, 1e-5)


def _random_model(seed, depth, width):
    """A pre-norm TinyGPT in float64 whose LayerNorms have gains and biases away from 1 and 0."""
    torch.manual_seed(_seed(seed))
    model = TinyGPT(PreNormBlock, depth, width).double()
    gen = torch.Generator().manual_seed(_seed(seed + 1))
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.copy_(
                    0.5 + torch.rand(m.weight.shape, generator=gen, dtype=torch.float64)
                )
                m.bias.copy_(
                    torch.randn(m.bias.shape, generator=gen, dtype=torch.float64)
                )
    return model


def exercise_1():
    _observe(
        "uses stream_writes",
        _refers_to(stream_after, stream_writes),
        "run the sublayers yourself: stream_after must not use stream_writes",
    )
    _observe(
        "uses stream_states",
        _refers_to(stream_after, stream_states),
        "run the sublayers yourself: stream_after must not use stream_states",
    )
    for seed, depth, width, batch, tokens in (
        (11, 2, 16, 3, TOKENS),
        (12, 3, 24, 2, 5),
    ):
        model = _random_model(seed, depth, width)
        idx = torch.randint(
            0,
            VOCAB + 2,
            (batch, tokens),
            generator=torch.Generator().manual_seed(_seed(seed + 2)),
        )
        where = f"a {depth}-block model of width {width}, {batch} sequences of {tokens} tokens"
        for k in range(2 * depth + 1):
            out = stream_after(model, idx.clone(), k)
            _observe(
                f"shape, k = {k}, {where}",
                list(torch.as_tensor(out).shape),
                f"for {where}, the stream has shape (batch, tokens, width) for every k",
                student="the stream has shape (batch, tokens, width) for every k",
            )
            _observe(
                f"stream after {k} sublayers, {where}",
                torch.as_tensor(out).detach(),
                f"wrong stream after k = {k} sublayers for {where}: start from model.embed(idx) (token and position "
                "embeddings), then add the write of each of the first k sublayers in the order attn 1, FFN 1, attn 2, "
                "...; each sublayer reads its own LayerNorm of the stream, and nothing normalises the stream itself",
                close=_CH11_FLOAT32,
                student="wrong stream after some k: start from model.embed(idx) (token and position embeddings), then add the write of each of the first k sublayers in the order attn 1, FFN 1, attn 2, ...; each sublayer reads its own LayerNorm of the stream, and nothing normalises the stream itself",
            )
        _observe(
            f"model left alone, {where}",
            _tensors_of(model),
            "stream_after must not change the model",
        )


def exercise_2():
    _observe(
        "uses frozen_ln_parts",
        _refers_to(frozen_parts, frozen_ln_parts),
        "write it yourself: frozen_parts must not use frozen_ln_parts",
    )
    gen = torch.Generator().manual_seed(_seed(21))
    for components, shape, eps in (
        (3, (5, 7), 1e-5),
        (5, (2, 3, 4), 0.3),
        (2, (6,), 2.0),
    ):
        width = shape[-1]
        ln = nn.LayerNorm(width, eps=eps).double()
        with torch.no_grad():
            ln.weight.copy_(0.5 + torch.rand(width, generator=gen, dtype=torch.float64))
            ln.bias.copy_(torch.randn(width, generator=gen, dtype=torch.float64))
        # components of different sizes and offsets, so that each one's own mean and scale differ from the sum's
        parts = torch.randn(components, *shape, generator=gen, dtype=torch.float64)
        parts = parts * (
            1
            + 3
            * torch.rand(
                components, *[1] * len(shape), generator=gen, dtype=torch.float64
            )
        )
        parts = parts + torch.randn(
            components, *shape[:-1], 1, generator=gen, dtype=torch.float64
        )
        out = frozen_parts(ln, parts)
        where = (
            f"{components} components of shape {shape} and a LayerNorm with eps = {eps}"
        )
        _observe(
            f"shape, {where}",
            list(torch.as_tensor(out).shape),
            f"for {where}, return one part per component: the shape of parts",
            student="return one part per component: the shape of parts",
        )
        _observe(
            f"parts, {where}",
            torch.as_tensor(out).detach(),
            f"wrong parts for {where}: subtract each component's own mean over the width, divide by the standard "
            "deviation of the whole sum (biased, over the width, with ln.eps inside the square root, as LayerNorm "
            "does), multiply by ln.weight, and leave ln.bias out",
            close=_CH11_FLOAT32,
            student="wrong parts: subtract each component's own mean over the width, divide by the standard deviation of the whole sum (biased, over the width, with ln.eps inside the square root, as LayerNorm does), multiply by ln.weight, and leave ln.bias out",
        )
        _observe(
            f"inputs left alone, {where}",
            [parts, ln.weight, ln.bias],
            "frozen_parts must not change parts or the LayerNorm",
        )


def exercise_3():
    _observe(
        "uses kl_to_final",
        _refers_to(lens_kl, kl_to_final),
        "write it yourself: lens_kl must not use kl_to_final",
    )
    gen = torch.Generator().manual_seed(_seed(31))
    for shape, scale in (
        ((4, 5, 8), 1.0),
        ((7, 3), 3.0),
        ((2, 3, 4, 6), 0.5),
        ((1, 11), 5.0),
    ):
        final = scale * torch.randn(*shape, generator=gen, dtype=torch.float64)
        lens = scale * torch.randn(*shape, generator=gen, dtype=torch.float64) + 2.0
        where = f"logits of shape {shape}"
        out = lens_kl(final.clone(), lens.clone())
        _observe(
            f"a scalar, {where}",
            torch.as_tensor(out).dim() == 0,
            f"for {where}, return a scalar: the mean over every position",
            student="return a scalar: the mean over every position",
        )
        _observe(
            f"KL, {where}",
            torch.as_tensor(out).detach().reshape(-1),
            f"wrong value for {where}: KL(p_final || p_lens) = sum over the last axis of p_final (log p_final - "
            "log p_lens), each p the softmax of its logits over the last axis, averaged over every other axis",
            close=(1e-4, 1e-6),  # float32's rounding, as _CH11_FLOAT32
            student="wrong value: KL(p_final || p_lens) = sum over the last axis of p_final (log p_final - log p_lens), each p the softmax of its logits over the last axis, averaged over every other axis",
        )
