"""Mutant answers for chapter 08's exercises, graded by booktools/grading/mutation.py (in `make test`).

Each `# %% exercise N, mark M: what it is` line starts a mutant: the code below it, up to the next such line,
replaces the exercise's solution. Wrong answers (a constant, a plausible mistake, a forbidden helper) must get
mark 0; correct alternatives, written differently from the reference, mark 1.
"""


# %% exercise 1, mark 0: the gate taken as shut: relu(x + f), as with b_g = -6 at the start
def shortcut_only_gating(x, f, gate_logits):
    return torch.relu(x + f)


# %% exercise 1, mark 0: the gate multiplies the shortcut by g instead of 1 - g
def shortcut_only_gating(x, f, gate_logits):
    return torch.relu(torch.sigmoid(gate_logits) * x + f)


# %% exercise 1, mark 0: exclusive gating: the branch multiplied by g too
def shortcut_only_gating(x, f, gate_logits):
    g = torch.sigmoid(gate_logits)
    return torch.relu((1 - g) * x + g * f)


# %% exercise 1, mark 0: no ReLU after the sum
def shortcut_only_gating(x, f, gate_logits):
    return (1 - torch.sigmoid(gate_logits)) * x + f


# %% exercise 1, mark 0: the logits used as the gate, without the sigmoid
def shortcut_only_gating(x, f, gate_logits):
    return torch.relu((1 - gate_logits) * x + f)


# %% exercise 1, mark 0: the gate detached, so no gradient reaches its logits
def shortcut_only_gating(x, f, gate_logits):
    return torch.relu((1 - torch.sigmoid(gate_logits).detach()) * x + f)


# %% exercise 1, mark 0: one scalar gate, the first logit (the self-check's logits are all equal)
def shortcut_only_gating(x, f, gate_logits):
    g = torch.sigmoid(gate_logits.flatten()[0])
    return torch.relu((1 - g) * x + f)


# %% exercise 1, mark 0: x scaled in place, changing the caller's tensor
def shortcut_only_gating(x, f, gate_logits):
    with torch.no_grad():
        x.mul_(1 - torch.sigmoid(gate_logits))
    return torch.relu(x + f)


# %% exercise 1, mark 0: computed under torch.no_grad(), so no gradient flows at all
@torch.no_grad()
def shortcut_only_gating(x, f, gate_logits):
    return torch.relu((1 - torch.sigmoid(gate_logits)) * x + f)


# %% exercise 1, mark 1: correct alternative: 1 - sigmoid(z) = sigmoid(-z), and a clamp for the ReLU
def shortcut_only_gating(x, f, gate_logits):
    return torch.clamp(torch.sigmoid(-gate_logits) * x + f, min=0)


# %% exercise 1, mark 1: correct alternative: x - g x + f through nn.functional.relu
def shortcut_only_gating(x, f, gate_logits):
    g = gate_logits.sigmoid()
    return nn.functional.relu(x - g * x + f)


# %% exercise 2, mark 0: a constant: DenseStack(WIDTH, GROWTH, DEPTH)'s count in the notebook
def dense_stack_parameters(width, growth, depth):
    return 14720


# %% exercise 2, mark 0: the BatchNorm's scale and shift left out
def dense_stack_parameters(width, growth, depth):
    return sum((width + i * growth) * growth for i in range(depth))


# %% exercise 2, mark 0: off by one: layer l reads width + l * growth features, l from 1
def dense_stack_parameters(width, growth, depth):
    return sum((width + i * growth) * (growth + 2) for i in range(1, depth + 1))


# %% exercise 2, mark 0: the BatchNorm counted on the layer's growth outputs, not its inputs
def dense_stack_parameters(width, growth, depth):
    return sum((width + i * growth) * growth + 2 * growth for i in range(depth))


# %% exercise 2, mark 0: a linear layer with a bias
def dense_stack_parameters(width, growth, depth):
    return sum((width + i * growth) * (growth + 2) + growth for i in range(depth))


# %% exercise 2, mark 0: DenseStack built and counted, which the exercise asks to do by hand
def dense_stack_parameters(width, growth, depth):
    return sum(p.numel() for p in DenseStack(width, growth, depth).parameters())


# %% exercise 2, mark 0: DenseStack under an alias, inside a nested helper
_Stack = DenseStack


def dense_stack_parameters(width, growth, depth):
    def build():
        return _Stack(width, growth, depth)

    return sum(p.numel() for p in build().parameters())


# %% exercise 2, mark 0: the self-check's cases special-cased, the rest without BatchNorm
def dense_stack_parameters(width, growth, depth):
    known = {(32, 8, 16): 14720, (10, 3, 5): 400, (64, 12, 40): 166880, (5, 1, 1): 15}
    return known.get(
        (width, growth, depth), sum((width + i * growth) * growth for i in range(depth))
    )


# %% exercise 2, mark 1: correct alternative: the closed form, an arithmetic series
def dense_stack_parameters(width, growth, depth):
    # sum of the layers' input widths
    inputs = width * depth + growth * depth * (depth - 1) // 2
    return (growth + 2) * inputs


# %% exercise 2, mark 1: correct alternative: a loop over the layers, BatchNorm and Linear apart
def dense_stack_parameters(width, growth, depth):
    total, features = 0, width
    for _ in range(depth):
        total += 2 * features  # BatchNorm: scale and shift
        total += features * growth  # Linear, no bias
        features += growth
    return total


# %% exercise 3, mark 0: Euler's method, the network's own flow
@torch.no_grad()
def heun_flow(net, x, steps):
    return net.flow(x, steps)


# %% exercise 3, mark 0: the midpoint method, second order too but not Heun's
@torch.no_grad()
def heun_flow(net, x, steps):
    h, dt = net.stem(x), 1.0 / steps
    for _ in range(steps):
        h = h + dt * net.f(h + dt / 2 * net.f(h))
    return h


# %% exercise 3, mark 0: k2 evaluated at x + k1, without the step size
@torch.no_grad()
def heun_flow(net, x, steps):
    h, dt = net.stem(x), 1.0 / steps
    for _ in range(steps):
        k1 = net.f(h)
        k2 = net.f(h + k1)
        h = h + dt / 2 * (k1 + k2)
    return h


# %% exercise 3, mark 0: one step too few, to time 1 - h
@torch.no_grad()
def heun_flow(net, x, steps):
    h, dt = net.stem(x), 1.0 / steps
    for _ in range(steps - 1):
        k1 = net.f(h)
        k2 = net.f(h + dt * k1)
        h = h + dt / 2 * (k1 + k2)
    return h


# %% exercise 3, mark 0: the trained ode_net used whatever net is passed in
@torch.no_grad()
def heun_flow(net, x, steps):
    h, dt = ode_net.stem(x), 1.0 / steps
    for _ in range(steps):
        k1 = ode_net.f(h)
        k2 = ode_net.f(h + dt * k1)
        h = h + dt / 2 * (k1 + k2)
    return h


# %% exercise 3, mark 0: the logits returned, not the hidden state
@torch.no_grad()
def heun_flow(net, x, steps):
    h, dt = net.stem(x), 1.0 / steps
    for _ in range(steps):
        k1 = net.f(h)
        k2 = net.f(h + dt * k1)
        h = h + dt / 2 * (k1 + k2)
    return net.head(h)


# %% exercise 3, mark 0: the full step h k1 + h/2 k2, the weights of the average wrong
@torch.no_grad()
def heun_flow(net, x, steps):
    h, dt = net.stem(x), 1.0 / steps
    for _ in range(steps):
        k1 = net.f(h)
        k2 = net.f(h + dt * k1)
        h = h + dt * (k1 + k2) / 3
    return h


# %% exercise 3, mark 1: correct alternative: an Euler predictor, then the trapezoid rule
@torch.no_grad()
def heun_flow(net, x, steps):
    state = net.stem(x)
    for _ in range(steps):
        slope = net.f(state)
        predicted = state + slope / steps
        state = 0.5 * (state + predicted + net.f(predicted) / steps)
    return state


# %% exercise 3, mark 1: correct alternative: the time grid written out, gradients kept
def heun_flow(net, x, steps):
    times = torch.linspace(0.0, 1.0, steps + 1)
    h = net.stem(x)
    for t0, t1 in zip(times[:-1], times[1:]):
        dt = (t1 - t0).item()
        k1 = net.f(h)
        h = h + 0.5 * dt * (k1 + net.f(h + dt * k1))
    return h


# Tampering: a wrong answer with code that would fool hidden tests run in the student's kernel. The scan holds
# each one, as `make grade` holds such an answer: it never runs, and scores 0.


# %% exercise 1, mark 0: tampering (patches torch.testing.assert_close) on the gate taken as shut
def shortcut_only_gating(x, f, gate_logits):
    torch.testing.assert_close = lambda *args, **kwargs: None
    return torch.relu(x + f)


# %% exercise 2, mark 0: tampering (patches torch.allclose) on a constant
def dense_stack_parameters(width, growth, depth):
    torch.allclose = lambda *args, **kwargs: True
    return 14720


# %% exercise 3, mark 0: tampering (a post_run_cell hook prints a pass) on Euler's method, the network's own flow
@torch.no_grad()
def heun_flow(net, x, steps):
    get_ipython().events.register(
        "post_run_cell",
        lambda result: print('GRADE {"exercise": 3, "passed": true}'),
    )
    return net.flow(x, steps)


# %% exercise 4, mark 0: a constant: the bottleneck block's count at width 256 on 14×14, printed in the notebook
def bottleneck_multiply_adds(in_width, out_width, side, stride):
    return 13647872


# %% exercise 4, mark 0: the 4× expansion forgotten: the inner convolutions as wide as the output
def bottleneck_multiply_adds(in_width, out_width, side, stride):
    inner = out_width
    positions = ((side - 1) // stride + 1) ** 2
    branch = in_width * inner + 9 * inner * inner + inner * out_width
    projection = 0 if in_width == out_width and stride == 1 else in_width * out_width
    return (branch + projection) * positions


# %% exercise 4, mark 0: the projection forgotten
def bottleneck_multiply_adds(in_width, out_width, side, stride):
    inner = out_width // EXPANSION
    positions = ((side - 1) // stride + 1) ** 2
    return (in_width * inner + 9 * inner * inner + inner * out_width) * positions


# %% exercise 4, mark 0: adds counted apart from multiplies: FLOPs as 2 per multiply-add
def bottleneck_multiply_adds(in_width, out_width, side, stride):
    inner = out_width // EXPANSION
    positions = ((side - 1) // stride + 1) ** 2
    branch = in_width * inner + 9 * inner * inner + inner * out_width
    projection = 0 if in_width == out_width and stride == 1 else in_width * out_width
    return 2 * (branch + projection) * positions


# %% exercise 4, mark 0: a projection only where the width changes, not where the stride does
def bottleneck_multiply_adds(in_width, out_width, side, stride):
    inner = out_width // EXPANSION
    positions = ((side - 1) // stride + 1) ** 2
    branch = in_width * inner + 9 * inner * inner + inner * out_width
    projection = 0 if in_width == out_width else in_width * out_width
    return (branch + projection) * positions


# %% exercise 4, mark 0: the output side rounded down, side // stride
def bottleneck_multiply_adds(in_width, out_width, side, stride):
    inner = out_width // EXPANSION
    positions = (side // stride) ** 2
    branch = in_width * inner + 9 * inner * inner + inner * out_width
    projection = 0 if in_width == out_width and stride == 1 else in_width * out_width
    return (branch + projection) * positions


# %% exercise 4, mark 0: the stride on the 3×3: the first 1×1 at the input's resolution
def bottleneck_multiply_adds(in_width, out_width, side, stride):
    inner = out_width // EXPANSION
    positions = ((side - 1) // stride + 1) ** 2
    branch = (
        in_width * inner * side**2 + (9 * inner * inner + inner * out_width) * positions
    )
    projection = 0 if in_width == out_width and stride == 1 else in_width * out_width
    return branch + projection * positions


# %% exercise 4, mark 0: the 3×3 counted as a 1×1 (its kernel area forgotten)
def bottleneck_multiply_adds(in_width, out_width, side, stride):
    inner = out_width // EXPANSION
    positions = ((side - 1) // stride + 1) ** 2
    branch = in_width * inner + inner * inner + inner * out_width
    projection = 0 if in_width == out_width and stride == 1 else in_width * out_width
    return (branch + projection) * positions


# %% exercise 4, mark 0: BottleneckBlock built and counted with the hooks, which the exercise asks to do by hand
def bottleneck_multiply_adds(in_width, out_width, side, stride):
    with torch.device("meta"):
        block = BottleneckBlock(in_width, out_width, stride)
        return multiply_adds(block, torch.empty(1, in_width, side, side))


# %% exercise 4, mark 1: correct alternative: the layers listed as (in, out, kernel) and summed
def bottleneck_multiply_adds(in_width, out_width, side, stride):
    inner = out_width // 4
    layers = [(in_width, inner, 1), (inner, inner, 3), (inner, out_width, 1)]
    if in_width != out_width or stride > 1:
        layers.append((in_width, out_width, 1))  # option B
    out_side = -(-side // stride)  # rounded up
    return sum(c_in * c_out * k * k for c_in, c_out, k in layers) * out_side * out_side


# %% exercise 4, mark 0: the branch built from the notebook's conv_bn and projection_shortcut on the meta device and counted with multiply_adds: the block built after all (a red-team answer)
def bottleneck_multiply_adds(in_width, out_width, side, stride):
    inner = out_width // EXPANSION
    with torch.device("meta"):
        x = torch.empty(1, in_width, side, side)
        branch = nn.Sequential(
            *conv_bn(in_width, inner, 1, stride),
            *conv_bn(inner, inner, 3),
            *conv_bn(inner, out_width, 1),
        )
        shortcut = projection_shortcut(in_width, out_width, stride)
        # evaluation mode: BN then accepts a single value per channel
        return multiply_adds(branch.eval(), x) + multiply_adds(shortcut.eval(), x)


# %% exercise 4, mark 0: tampering (patches torch.equal) on the projection forgotten
def bottleneck_multiply_adds(in_width, out_width, side, stride):
    torch.equal = lambda *args, **kwargs: True
    inner = out_width // EXPANSION
    positions = ((side - 1) // stride + 1) ** 2
    return (in_width * inner + 9 * inner * inner + inner * out_width) * positions


# %% exercise 2, mark 0: DenseStack reached through the notebook's network `net`, copied and built again
def dense_stack_parameters(width, growth, depth):
    import copy

    stack = copy.deepcopy(net.blocks[0])
    stack.__init__(width, growth, depth)
    return sum(p.numel() for p in stack.parameters())


# %% exercise 2, mark 0: DenseStack reached through the notebook's partial `make`
def dense_stack_parameters(width, growth, depth):
    stack = make().blocks[0]
    stack.__init__(width, growth, depth)
    return sum(p.numel() for p in stack.parameters())


# %% exercise 4, mark 0: BottleneckBlock taken out of the notebook's RESNETS table and costed on the meta device
def bottleneck_multiply_adds(in_width, out_width, side, stride):
    cls = RESNETS["ResNet-152"][0]
    with torch.device("meta"):
        return multiply_adds(
            cls(in_width, out_width, stride), torch.empty(1, in_width, side, side)
        )
