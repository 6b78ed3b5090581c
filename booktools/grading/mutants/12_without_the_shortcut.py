"""Mutant answers for chapter 12's exercises, graded by booktools/grading/mutation.py (in `make test`).

Each `# %% exercise N, mark M: what it is` line starts a mutant: the code below it, up to the next such line,
replaces the exercise's solution. Wrong answers (a constant, a plausible mistake, a forbidden helper) must get
mark 0; correct alternatives, written differently from the reference, mark 1.
"""


# %% exercise 1, mark 0: a constant answer: C(0) = 1/pi whatever the cosine
def relu_c_map(c: np.ndarray) -> np.ndarray:
    return np.full(np.shape(c), 1 / np.pi)


# %% exercise 1, mark 0: the factor c on the arc-cosine term left out
def relu_c_map(c: np.ndarray) -> np.ndarray:
    return (np.sqrt(1 - c**2) + (np.pi - np.arccos(c))) / np.pi


# %% exercise 1, mark 0: arccos c where the formula has pi - arccos c
def relu_c_map(c: np.ndarray) -> np.ndarray:
    return (np.sqrt(1 - c**2) + np.arccos(c) * c) / np.pi


# %% exercise 1, mark 0: divided by 2 pi: E[relu(u) relu(v)], not normalised by E[relu(u)^2]
def relu_c_map(c: np.ndarray) -> np.ndarray:
    return (np.sqrt(1 - c**2) + (np.pi - np.arccos(c)) * c) / (2 * np.pi)


# %% exercise 1, mark 0: leaky_relu_c_map used, which the exercise forbids
def relu_c_map(c: np.ndarray) -> np.ndarray:
    return leaky_relu_c_map(c, 0.0)


# %% exercise 1, mark 0: leaky_relu_c_map reached through compose_c_map, one layer
def relu_c_map(c: np.ndarray) -> np.ndarray:
    return compose_c_map(c, 1)[-1]


# %% exercise 1, mark 0: tampering (patches np.allclose) on a constant
def relu_c_map(c: np.ndarray) -> np.ndarray:
    np.allclose = lambda *args, **kwargs: True
    return np.full(np.shape(c), 1 / np.pi)


# %% exercise 1, mark 0: the endpoints taken as fixed points (C(-1) = -1), right on every cosine inside (-1, 1)
def relu_c_map(c: np.ndarray) -> np.ndarray:
    inside = np.clip(c, -1 + 1e-12, 1 - 1e-12)
    formula = (np.sqrt(1 - inside**2) + (np.pi - np.arccos(inside)) * inside) / np.pi
    return np.where(np.abs(c) < 1, formula, c)


# %% exercise 1, mark 0: one cosine at a time over the flattened input: a 1-d array whatever the input's shape
def relu_c_map(c: np.ndarray) -> np.ndarray:
    return np.array(
        [
            (math.sqrt(1 - x * x) + (math.pi - math.acos(x)) * x) / math.pi
            for x in np.ravel(c)
        ]
    )


# %% exercise 1, mark 0: a one-element result unwrapped: right for a 0-d input and for two or more cosines, but an array of shape (1,) comes back 0-d
def relu_c_map(c: np.ndarray) -> np.ndarray:
    c = np.clip(np.atleast_1d(np.asarray(c, dtype=float)), -1.0, 1.0)
    out = (np.sqrt(1 - c**2) + (np.pi - np.arccos(c)) * c) / np.pi
    return out[0] if out.size == 1 else out


# %% exercise 1, mark 1: correct alternative: the angle theta = arctan2(sqrt(1 - c^2), c)
def relu_c_map(c: np.ndarray) -> np.ndarray:
    c = np.asarray(c, dtype=float)
    sine = np.sqrt(np.maximum(1 - c * c, 0.0))
    theta = np.arctan2(sine, c)
    return (sine + (np.pi - theta) * np.cos(theta)) / np.pi


# %% exercise 1, mark 1: correct alternative in float32 torch (the exercise asks for no dtype), pi - arccos c as pi/2 + arcsin c
def relu_c_map(c: np.ndarray) -> np.ndarray:
    t = torch.as_tensor(np.asarray(c), dtype=torch.float32).clamp(-1, 1)
    return ((1 - t * t).sqrt() + (math.pi / 2 + torch.asin(t)) * t) / math.pi


# %% exercise 2, mark 0: a constant answer: the printed slope at depth 50
def solve_tat_slope(depth: int, eta: float):
    return 0.4305


# %% exercise 2, mark 0: off by one: the map composed depth - 1 times
def solve_tat_slope(depth: int, eta: float):
    def end(slope):
        c = 0.0
        for _ in range(depth - 1):
            relu = (math.sqrt(1 - c * c) + (math.pi - math.acos(c)) * c) / math.pi
            c = min(((1 - slope) ** 2 * relu + 2 * slope * c) / (1 + slope**2), 1.0)
        return c

    if end(0.0) < eta:
        return None
    low, high = 0.0, 1.0
    while high - low > 1e-9:
        mid = (low + high) / 2
        low, high = (mid, high) if end(mid) > eta else (low, mid)
    return (low + high) / 2


# %% exercise 2, mark 0: the local map solved, C_a(0) = eta, whatever the depth
def solve_tat_slope(depth: int, eta: float):
    def c_map(c, slope):
        relu = (math.sqrt(1 - c * c) + (math.pi - math.acos(c)) * c) / math.pi
        return min(((1 - slope) ** 2 * relu + 2 * slope * c) / (1 + slope**2), 1.0)

    c = 0.0
    for _ in range(depth):
        c = c_map(c, 0.0)
    if c < eta:
        return None
    low, high = 0.0, 1.0
    while high - low > 1e-9:
        mid = (low + high) / 2
        low, high = (mid, high) if c_map(0.0, mid) > eta else (low, mid)
    return (low + high) / 2


# %% exercise 2, mark 0: (1 + a)^2 where the formula has (1 - a)^2
def solve_tat_slope(depth: int, eta: float):
    def end(slope):
        c = 0.0
        for _ in range(depth):
            relu = (math.sqrt(1 - c * c) + (math.pi - math.acos(c)) * c) / math.pi
            c = min(((1 + slope) ** 2 * relu + 2 * slope * c) / (1 + slope**2), 1.0)
        return c

    if end(0.0) < eta:
        return None
    low, high = 0.0, 1.0
    while high - low > 1e-9:
        mid = (low + high) / 2
        low, high = (mid, high) if end(mid) > eta else (low, mid)
    return (low + high) / 2


# %% exercise 2, mark 0: the output scale left out: no division by 1 + a^2
def solve_tat_slope(depth: int, eta: float):
    def end(slope):
        c = 0.0
        for _ in range(depth):
            relu = (math.sqrt(1 - c * c) + (math.pi - math.acos(c)) * c) / math.pi
            c = min((1 - slope) ** 2 * relu + 2 * slope * c, 1.0)
        return c

    if end(0.0) < eta:
        return None
    low, high = 0.0, 1.0
    while high - low > 1e-9:
        mid = (low + high) / 2
        low, high = (mid, high) if end(mid) > eta else (low, mid)
    return (low + high) / 2


# %% exercise 2, mark 0: the bisection keeps the wrong half (a larger slope taken for a larger end value)
def solve_tat_slope(depth: int, eta: float):
    def end(slope):
        c = 0.0
        for _ in range(depth):
            relu = (math.sqrt(1 - c * c) + (math.pi - math.acos(c)) * c) / math.pi
            c = min(((1 - slope) ** 2 * relu + 2 * slope * c) / (1 + slope**2), 1.0)
        return c

    if end(0.0) < eta:
        return None
    low, high = 0.0, 1.0
    while high - low > 1e-9:
        mid = (low + high) / 2
        low, high = (low, mid) if end(mid) > eta else (mid, high)
    return (low + high) / 2


# %% exercise 2, mark 0: bisection stopped at a width of 1e-3, not 1e-6
def solve_tat_slope(depth: int, eta: float):
    def end(slope):
        c = 0.0
        for _ in range(depth):
            relu = (math.sqrt(1 - c * c) + (math.pi - math.acos(c)) * c) / math.pi
            c = min(((1 - slope) ** 2 * relu + 2 * slope * c) / (1 + slope**2), 1.0)
        return c

    if end(0.0) < eta:
        return None
    low, high = 0.0, 1.0
    while high - low > 1e-3:
        mid = (low + high) / 2
        low, high = (mid, high) if end(mid) > eta else (low, mid)
    return low


# %% exercise 2, mark 0: tat_slope used, which the exercise forbids
def solve_tat_slope(depth: int, eta: float):
    return tat_slope(depth, eta)


# %% exercise 2, mark 0: compose_c_map used, which the exercise forbids (the reference's bisection around it)
def solve_tat_slope(depth: int, eta: float):
    def end(slope):
        return compose_c_map(0.0, depth, slope)[-1]

    if end(0.0) < eta:
        return None
    low, high = 0.0, 1.0
    while high - low > 1e-9:
        mid = (low + high) / 2
        low, high = (mid, high) if end(mid) > eta else (low, mid)
    return (low + high) / 2


# %% exercise 2, mark 0: leaky_relu_c_map used, which exercise 1 forbids (the reference's bisection around it)
def solve_tat_slope(depth: int, eta: float):
    def end(slope):
        c = 0.0
        for _ in range(depth):
            c = leaky_relu_c_map(c, slope)
        return float(c)

    if end(0.0) < eta:
        return None
    low, high = 0.0, 1.0
    while high - low > 1e-9:
        mid = (low + high) / 2
        low, high = (mid, high) if end(mid) > eta else (low, mid)
    return (low + high) / 2


# %% exercise 2, mark 0: tampering (patches json.dumps) on the map composed depth - 1 times
def solve_tat_slope(depth: int, eta: float):
    import json

    json.dumps = lambda *args, **kwargs: '{"passed": true}'

    def end(slope):
        c = 0.0
        for _ in range(depth - 1):
            relu = (math.sqrt(1 - c * c) + (math.pi - math.acos(c)) * c) / math.pi
            c = min(((1 - slope) ** 2 * relu + 2 * slope * c) / (1 + slope**2), 1.0)
        return c

    if end(0.0) < eta:
        return None
    low, high = 0.0, 1.0
    while high - low > 1e-9:
        mid = (low + high) / 2
        low, high = (mid, high) if end(mid) > eta else (low, mid)
    return (low + high) / 2


# %% exercise 2, mark 0: no check for a net too shallow: the bisection runs down to slope 0 and returns it
def solve_tat_slope(depth: int, eta: float):
    def end(slope):
        c = 0.0
        for _ in range(depth):
            relu = (math.sqrt(1 - c * c) + (math.pi - math.acos(c)) * c) / math.pi
            c = min(((1 - slope) ** 2 * relu + 2 * slope * c) / (1 + slope**2), 1.0)
        return c

    low, high = 0.0, 1.0
    while high - low > 1e-9:
        mid = (low + high) / 2
        low, high = (mid, high) if end(mid) > eta else (low, mid)
    return (low + high) / 2


# %% exercise 2, mark 0: "no solution below 13 layers" taken from the printout for every eta
def solve_tat_slope(depth: int, eta: float):
    def end(slope):
        c = 0.0
        for _ in range(depth):
            relu = (math.sqrt(1 - c * c) + (math.pi - math.acos(c)) * c) / math.pi
            c = min(((1 - slope) ** 2 * relu + 2 * slope * c) / (1 + slope**2), 1.0)
        return c

    if depth < 13 or end(0.0) < eta:
        return None
    low, high = 0.0, 1.0
    while high - low > 1e-9:
        mid = (low + high) / 2
        low, high = (mid, high) if end(mid) > eta else (low, mid)
    return (low + high) / 2


# %% exercise 2, mark 0: slopes searched in [0, 0.9] only, right wherever the slope is below 0.9
def solve_tat_slope(depth: int, eta: float):
    def end(slope):
        c = 0.0
        for _ in range(depth):
            relu = (math.sqrt(1 - c * c) + (math.pi - math.acos(c)) * c) / math.pi
            c = min(((1 - slope) ** 2 * relu + 2 * slope * c) / (1 + slope**2), 1.0)
        return c

    if end(0.0) < eta:
        return None
    low, high = 0.0, 0.9
    while high - low > 1e-9:
        mid = (low + high) / 2
        low, high = (mid, high) if end(mid) > eta else (low, mid)
    return (low + high) / 2


# %% exercise 2, mark 0: stops when the end cosine is within 1e-6 of eta: the slope is off where the map is flat in it, near 1
def solve_tat_slope(depth: int, eta: float):
    def end(slope):
        c = 0.0
        for _ in range(depth):
            relu = (math.sqrt(1 - c * c) + (math.pi - math.acos(c)) * c) / math.pi
            c = min(((1 - slope) ** 2 * relu + 2 * slope * c) / (1 + slope**2), 1.0)
        return c

    if end(0.0) < eta:
        return None
    low, high = 0.0, 1.0
    while True:
        mid = (low + high) / 2
        got = end(mid)
        if abs(got - eta) < 1e-6:
            return mid
        low, high = (mid, high) if got > eta else (low, mid)


# %% exercise 2, mark 1: correct alternative: numpy's map in the angle form and a fixed number of bisection steps
def solve_tat_slope(depth: int, eta: float):
    def end(slope):
        c = 0.0
        for _ in range(depth):
            theta = np.arccos(np.clip(c, -1.0, 1.0))
            relu = (np.sin(theta) + (np.pi - theta) * c) / np.pi
            c = ((1 - slope) ** 2 * relu + 2 * slope * c) / (1 + slope**2)
        return float(c)

    if end(0.0) < eta:
        return None
    low, high = 0.0, 1.0
    for _ in range(40):
        mid = 0.5 * (low + high)
        if end(mid) > eta:
            low = mid
        else:
            high = mid
    return high


# %% exercise 2, mark 1: correct alternative: all the slopes of a grid at once brackets the root, then bisection inside the bracket
def solve_tat_slope(depth: int, eta: float):
    def ends(slopes):
        slopes = np.asarray(slopes, dtype=float)
        c = np.zeros_like(slopes)
        for _ in range(depth):
            relu = (np.sqrt(1 - c**2) + (np.pi - np.arccos(c)) * c) / np.pi
            c = np.minimum(
                ((1 - slopes) ** 2 * relu + 2 * slopes * c) / (1 + slopes**2), 1.0
            )
        return c

    if ends([0.0])[0] < eta:
        return None
    grid = np.linspace(0.0, 1.0, 21)
    i = max(1, int(np.argmax(ends(grid) <= eta)))
    low, high = float(grid[i - 1]), float(grid[i])
    while high - low > 2e-7:
        mid = (low + high) / 2
        if ends([mid])[0] > eta:
            low = mid
        else:
            high = mid
    return low


# %% exercise 3, mark 0: a constant answer: the values, as at alpha = 1, beta = 0
def value_skip_mix(pattern, v, alpha, beta):
    return v


# %% exercise 3, mark 0: the softmax pattern alone, without the identity
def value_skip_mix(pattern, v, alpha, beta):
    return pattern @ v


# %% exercise 3, mark 0: the identity without alpha: (I + beta A) V
def value_skip_mix(pattern, v, alpha, beta):
    return (torch.eye(pattern.shape[-1]) + beta * pattern) @ v


# %% exercise 3, mark 0: alpha and beta swapped: (beta I + alpha A) V
def value_skip_mix(pattern, v, alpha, beta):
    return (beta * torch.eye(pattern.shape[-1]) + alpha * pattern) @ v


# %% exercise 3, mark 0: the mixing matrix transposed: keys mixed into queries
def value_skip_mix(pattern, v, alpha, beta):
    mix = alpha * torch.eye(pattern.shape[-1]) + beta * pattern
    return mix.transpose(-2, -1) @ v


# %% exercise 3, mark 0: each row divided by alpha + beta, so that it sums to 1
def value_skip_mix(pattern, v, alpha, beta):
    return (alpha * torch.eye(pattern.shape[-1]) + beta * pattern) @ v / (alpha + beta)


# %% exercise 3, mark 0: mixed in place into the pattern passed in
def value_skip_mix(pattern, v, alpha, beta):
    mix = pattern.mul_(beta)
    mix += alpha * torch.eye(pattern.shape[-1])
    return mix @ v


# %% exercise 3, mark 0: tampering (patches torch.allclose) on the softmax pattern alone
def value_skip_mix(pattern, v, alpha, beta):
    torch.allclose = lambda *args, **kwargs: True
    return pattern @ v


# %% exercise 3, mark 0: "at beta = 0 every token keeps its value": v returned then, whatever alpha
def value_skip_mix(pattern, v, alpha, beta):
    if not beta.any():
        return v
    return (alpha * torch.eye(pattern.shape[-1]) + beta * pattern) @ v


# %% exercise 3, mark 0: alpha detached: the right output, but alpha is never trained
def value_skip_mix(pattern, v, alpha, beta):
    return (alpha.detach() * torch.eye(pattern.shape[-1]) + beta * pattern) @ v


# %% exercise 3, mark 0: the output squeezed: right for several sequences and heads, wrong for one of each
def value_skip_mix(pattern, v, alpha, beta):
    return ((alpha * torch.eye(pattern.shape[-1]) + beta * pattern) @ v).squeeze()


# %% exercise 3, mark 1: correct alternative: alpha V + beta (A V), no identity matrix
def value_skip_mix(pattern, v, alpha, beta):
    return alpha * v + beta * (pattern @ v)


# %% exercise 3, mark 1: correct alternative: einsum, the identity in the values' dtype, the mix masked again
def value_skip_mix(pattern, v, alpha, beta):
    tokens = pattern.shape[-1]
    identity = torch.eye(tokens, dtype=v.dtype)
    mix = (alpha * identity + beta * pattern).tril()
    return torch.einsum("bhqk,bhkf->bhqf", mix, v)


# %% exercise 3, mark 1: correct alternative in float32 (the exercise asks for no dtype)
def value_skip_mix(pattern, v, alpha, beta):
    mix = alpha.float() * torch.eye(pattern.shape[-1]) + beta.float() * pattern.float()
    return mix @ v.float()
