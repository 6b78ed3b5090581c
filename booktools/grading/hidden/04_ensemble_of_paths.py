"""Hidden tests for notebooks/04_ensemble_of_paths.ipynb, run by `make grade`, each with its exercise's answer alone
in a process of its own (booktools/grading/isolated.py).

Each test runs the answer on inputs the notebook never shows (its own seeded draws, other depths, a network of its
own) and observes what it did (`_observe`, from booktools/grading/hidden/_common.py): its values, whether the helper the exercise
asks to write by hand is called (`_refers_to`), and whether the network measured is left as it was found. The grader
compares every observation with the reference solution's, in a process of its own.
booktools/grading/mutants/04_ensemble_of_paths.py holds the wrong answers these tests must reject and the right ones they must
accept.
"""


def _ch04_cases(seed, count, n_max):
    """`count` draws (n, lo, hi) with 0 <= lo <= hi <= n <= n_max, from a generator of their own."""
    import random as _random

    gen = _random.Random(seed)
    cases = []
    for _ in range(count):
        n = gen.randint(2, n_max)
        lo = gen.randint(0, n)
        cases.append((n, lo, gen.randint(lo, n)))
    return cases


def exercise_1():
    _observe(
        "uses path_length_share",
        _refers_to(share_of_paths, path_length_share),
        "write the sum yourself: share_of_paths must not call path_length_share",
    )
    cases = [(7, 3, 3), (9, 0, 0), (9, 9, 9), (40, 0, 40), (33, 10, 20)] + _ch04_cases(
        _seed(404), 30, 120
    )
    for i, (n, lo, hi) in enumerate(
        cases
    ):  # a draw may repeat a case: keys carry the index
        _observe(
            f"case {i}: share_of_paths({n}, {lo}, {hi})",
            float(share_of_paths(n, lo, hi)),
            f"share_of_paths({n}, {lo}, {hi}) is wrong: the share of the 2^{n} paths whose length k satisfies"
            f" {lo} <= k <= {hi} (both ends included)",
            close=(1e-12, 0),
            student="wrong share: the share of the 2^n paths whose length k satisfies lo <= k <= hi (both ends included)",
        )


def exercise_2():
    import random as _random

    _observe(
        "uses kendall_tau_distance",
        _refers_to(kendall_distance, kendall_tau_distance),
        "write the count yourself: kendall_distance must not call kendall_tau_distance",
    )
    gen = _random.Random(_seed(4040))
    orders = [[1, 0], [0, 2, 1], [3, 0, 1, 2]]
    for n in (5, 7, 9, 13, 20):
        for _ in range(4):
            order = list(range(n))
            gen.shuffle(order)
            orders.append(order)
    for i, order in enumerate(
        orders
    ):  # a draw may repeat an order: keys carry the index
        _observe(
            f"case {i}: kendall_distance({order})",
            float(kendall_distance(list(order))),
            f"kendall_distance({order}) is wrong: count the pairs of positions i < j with order[i] > order[j],"
            " and divide by the number of such pairs",
            close=(0, 1e-12),
            student="wrong distance: count the pairs of positions i < j with order[i] > order[j], and divide by the number of such pairs",
        )


def exercise_3():
    import random as _random

    gen = _random.Random(_seed(4041))
    cases = [(7, 2.0), (12, 0.5), (30, 0.1), (5, 3.0), (40, 0.25)]
    while len(cases) < 60:
        cases.append((gen.randint(1, 150), 10 ** gen.uniform(-2, 1.3)))
    for i, (n, r) in enumerate(cases):
        got = float(predicted_peak(n, r))
        peak = (
            (n + 1) * r / (1 + r)
        )  # after the answer ran: no frame holds it while the answer runs
        if (
            abs(peak - round(peak)) < 1e-6
        ):  # a tie between two lengths: either would be right
            continue
        _observe(
            f"case {i}: predicted_peak({n}, {r!r})",
            got,
            f"predicted_peak({n}, {r:.4g}) is not the k that maximises C(n, k) r^k",
            student="not the k that maximises C(n, k) r^k",
        )


def _ch04_lesion_net(seed, width, depth):
    """A stem without a final ReLU, so that block 1's input has negative entries and deleting its branch (ReLU
    kept) differs from deleting the whole block; random weights and BatchNorm statistics and a fitted head, so
    that no trained result carries over."""
    with torch.random.fork_rng():  # the notebook's random stream is left where it was
        torch.manual_seed(seed)
        stem = nn.Sequential(nn.Linear(64, width, bias=False), nn.BatchNorm1d(width))
        blocks = nn.ModuleList(BNResidualBlock(width) for _ in range(depth))
        head = nn.Linear(width, 10)
        with torch.no_grad():  # BatchNorm as training leaves it, none at its default
            for m in [*stem.modules(), *blocks.modules()]:
                if isinstance(m, nn.BatchNorm1d):
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.normal_(0.0, 0.5)
                    m.running_mean.normal_(0.0, 0.3)
                    m.running_var.uniform_(0.5, 1.5)
            for block in blocks:  # small branches, as in a trained residual network
                block.f[-1].weight.uniform_(0.1, 0.4)
                block.f[-1].bias.normal_(0.0, 0.1)
    for module in (stem, blocks, head):
        module.eval()
    with torch.no_grad():  # a head fitted by ridge regression on the training set, so that lesions change the error
        h = stem(x_train)
        for block in blocks:
            h = block(h)
        feats = torch.cat([h, torch.ones(len(h), 1)], 1).double()
        targets = F.one_hot(y_train, 10).double()
        sol = torch.linalg.solve(
            feats.T @ feats + 1e-3 * torch.eye(width + 1, dtype=torch.float64),
            feats.T @ targets,
        )
        head.weight.copy_(sol[:-1].T)
        head.bias.copy_(sol[-1])
    return stem, blocks, head


@torch.no_grad()
def _ch04_lesion_errors(stem, blocks, head, keep_relu):
    """Test error (%) with each block's branch deleted: the block becomes its ReLU, or (keep_relu False) nothing."""
    errors = []
    for i in range(len(blocks)):
        h = stem(x_test)
        for j, block in enumerate(blocks):
            h = (F.relu(h) if keep_relu else h) if j == i else block(h)
        errors.append(100 * (head(h).argmax(1) != y_test).sum().item() / len(y_test))
    return errors


def _ch04_graded_net(width, depth):
    """A network on which deleting block 1's branch (its ReLU kept) and deleting the whole block give different
    errors, so that the two can be told apart (most seeds give one), and its candidate number. The errors are gone
    before the answer runs, so an answer that reads the stack's frames finds none."""
    for candidate in range(20):
        stem, blocks, head = _ch04_lesion_net(_seed(4042 + candidate), width, depth)
        kept = _ch04_lesion_errors(stem, blocks, head, keep_relu=True)
        if kept[0] != _ch04_lesion_errors(stem, blocks, head, keep_relu=False)[0]:
            return stem, blocks, head, candidate
    raise RuntimeError(
        "the hidden test found no network to grade on: report this to the instructor"
    )


def exercise_4():
    """Runs `branch_deleted_error` on a network of the test's own, put in `resnet`'s place for the duration."""
    # the notebook's sizes, so that an answer may use them
    width, depth = (WIDTH, N_BLOCKS)
    stem, blocks, head, candidate = _ch04_graded_net(width, depth)
    branches = [block.f for block in blocks]
    saved = resnet.stem, resnet.blocks, resnet.head
    resnet.stem, resnet.blocks, resnet.head = stem, blocks, head
    try:
        got = [branch_deleted_error(i) for i in range(depth)]
        after = {
            k: v.clone()
            for k, v in _tensors_of(nn.ModuleList([stem, blocks, head])).items()
        }
        modes = [
            m.training for module in (stem, blocks, head) for m in module.modules()
        ]
        # the branches the test holds, marked: a block of resnet's shows the mark only if its branch is one of them
        _mark(t for branch in branches for t in _tensors_of(branch).values())
        put_back = [
            {k: v.clone() for k, v in _tensors_of(block.f).items()}
            for block in resnet.blocks
        ]
    finally:
        resnet.stem, resnet.blocks, resnet.head = saved
    _observe(
        "network",
        candidate,
        "the hidden test graded on another network than the reference's",
    )
    why = "leave resnet as you found it: no weight, BatchNorm statistic or train/eval mode changed"
    _observe(
        "resnet's state after",
        after,
        why,
        student="leave resnet as you found it: no weight, BatchNorm statistic or train/eval mode changed",
    )
    _observe(
        "resnet's modes after",
        modes,
        why,
        student="leave resnet as you found it: no weight, BatchNorm statistic or train/eval mode changed",
    )
    _observe(
        "branches put back",
        put_back,
        "put every branch back after measuring: the same module that was there before",
    )
    for i in range(depth):
        _observe(
            f"block {i + 1}",
            float(got[i]),
            f"block {i + 1}: wrong test error; measure resnet on the test set with only that block's branch replaced"
            " by zeros (the block's ReLU kept), on a network whose blocks need not receive ReLU outputs",
            close=(0, 1e-6),
            student="wrong test error for a block: measure resnet on the test set with only that block's branch replaced by zeros (the block's ReLU kept), on a network whose blocks need not receive ReLU outputs",
        )


def _ch04_drop_rates(gen, count):
    """`count` drop rates from `gen`, half in [0.1, 0.35] and half in [0.65, 0.9]: never near 0.5, where keeping a
    row with probability r instead of 1 - r would look the same."""
    rates = []
    for i in range(count):
        low = 0.1 if i % 2 == 0 else 0.65
        rates.append(round(low + 0.25 * float(torch.rand((), generator=gen)), 4))
    return rates


def _ch04_band(centre, half):
    """The band centre +- half, for a `within` rule."""
    return (centre - half, centre + half)


def exercise_5():
    """Runs `drop_path` on batches of its own, in training and at test time, and records its raw outputs, the
    branch after the call and the gradient (`_raw`). What is measured from them (the share of rows kept, how they
    are scaled, how the draws are spread over calls and rows) the judge measures, in its own process
    (booktools/grading/measures.py), with the reference's inputs beside them."""
    gen = torch.Generator().manual_seed(_seed(4050))
    rows, calls, column = 500, 200, 40
    for case, rate in enumerate(_ch04_drop_rates(gen, 4)):
        width = int(torch.randint(2, 5, (), generator=gen))
        small = torch.randn(5, width, generator=gen)
        branch = torch.randn(rows, width, generator=gen)
        weights = torch.randn(rows, width, generator=gen)
        where = f"drop_path(branch, {rate}, training=False) on a batch of 5 rows of {width} features"
        for call in ("test time", "test time, twice"):
            _observe(
                f"case {case}: {call}",
                drop_path(small.clone(), rate, False),
                f"{where}{', called twice' if 'twice' in call else ''}: at test time the branch output passes "
                "unchanged, and nothing is random",
                close=(1e-6, 1e-7),
                student="at test time the branch output passes unchanged, and nothing is random",
            )
        where = f"drop_path(branch, {rate}, training=True) on a batch of {rows} rows of {width} features"
        x = branch.clone().requires_grad_(True)
        out = drop_path(x, rate, True)
        again = drop_path(branch.clone(), rate, True)
        if getattr(out, "requires_grad", False):  # else no gradient reaches the branch
            (out * weights).sum().backward()
        drawn = f"case {case}: drawn"
        _raw(drawn, [out, x, weights, x.grad, again])
        _observe(
            f"case {case}: shape",
            None,
            f"{where}: the output has the branch's shape",
            student="the output has the branch's shape",
            measure="shape",
            of=drawn,
        )
        _observe(
            f"case {case}: rows partly zeroed",
            None,
            f"{where}: each row is kept whole or zeroed whole (one draw per example, not per entry)",
            student="each row is kept whole or zeroed whole (one draw per example, not per entry)",
            measure="rows_partly_zero",
            of=drawn,
        )
        _observe(
            f"case {case}: some rows kept and some dropped",
            None,
            f"{where}: each example draws for itself, so one batch has both kept and dropped rows"
            " (one draw per row, not one for the whole batch)",
            student="each example draws for itself, so one batch has both kept and dropped rows (one draw per row, not one for the whole batch)",
            measure="kept_and_dropped",
            of=drawn,
        )
        _observe(
            f"case {case}: a fresh draw each call",
            None,
            f"{where}: every call draws afresh from torch's random generator",
            student="every call draws afresh from torch's random generator",
            measure="draws_differ",
            of=drawn,
        )
        _observe(
            f"case {case}: branch left unchanged",
            x,
            f"{where}: leave the tensor passed in unchanged (no in-place operation)",
            student="leave the tensor passed in unchanged (no in-place operation)",
        )
        _observe(
            f"case {case}: scale of the kept rows",
            None,
            f"{where}: a kept row is the branch's row divided by 1 - rate",
            student="a kept row is the branch's row divided by 1 - rate",
            measure="kept_scale",
            of=drawn,
            close=(1e-5, 0),
        )
        _observe(
            f"case {case}: gradient",
            None,
            f"{where}: the gradient reaches the kept rows, scaled as they are, and no dropped row",
            student="the gradient reaches the kept rows, scaled as they are, and no dropped row",
            measure="gradient_split",
            of=drawn,
            close=(1e-5, 1e-6),
        )
        # six standard deviations of the share kept
        _observe(
            f"case {case}: share of rows kept",
            None,
            f"{where}: each row is kept with probability 1 - rate",
            student="each row is kept with probability 1 - rate",
            measure="share_kept",
            of=drawn,
            within=_ch04_band(1 - rate, 6 * math.sqrt(rate * (1 - rate) / rows)),
        )
        # two calls, each after the same global seed: the same draw, from torch's global random generator
        with torch.random.fork_rng():
            seeded = []
            for _ in range(2):
                torch.manual_seed(_seed(4051))
                seeded.append(drop_path(torch.ones(column, 1), rate, True))
        seeded_key = f"case {case}: seeded"
        _raw(seeded_key, seeded)
        _observe(
            f"case {case}: the global generator",
            None,
            f"drop_path(torch.ones({column}, 1), {rate}, training=True), called twice, each time after "
            "torch.manual_seed with the same seed: draw from torch's global random generator, so that the seed "
            "decides the draw",
            student="draw from torch's global random generator, so that torch.manual_seed decides the draw",
            measure="draws_agree",
            of=seeded_key,
        )
        # many calls on a column of ones: how many rows each call keeps, and how often each row is kept
        where = f"drop_path(torch.ones({column}, 1), {rate}, training=True), called {calls} times"
        ones = torch.ones(column, 1)
        calls_key = f"case {case}: calls"
        _raw(calls_key, [drop_path(ones.clone(), rate, True) for _ in range(calls)])
        variance = column * rate * (1 - rate)  # of a binomial count of kept rows
        kurtosis = (1 - 6 * rate * (1 - rate)) / variance  # its excess kurtosis
        spread = variance * 6 * math.sqrt(2 / (calls - 1) + kurtosis / calls)
        _observe(
            f"case {case}: rows kept per call vary",
            None,
            f"{where}: the number of rows a call keeps must vary from call to call as independent draws do "
            "(variance n r (1 - r)), not be fixed",
            within=_ch04_band(variance, spread),
            student="each row draws for itself, independently of the others: the number of rows kept varies from "
            "call to call (no exact count)",
            measure="kept_count_variance",
            of=calls_key,
        )
        _observe(
            f"case {case}: every row position alike",
            None,
            f"{where}: every row position is kept about as often as the others",
            within=(-1.0, 6 * math.sqrt(rate * (1 - rate) / calls)),
            student="every row is kept with the same probability, wherever it is in the batch",
            measure="row_keep_spread",
            of=calls_key,
        )
    small = torch.randn(5, 4, generator=gen)
    _observe(
        "rate 0 in training",
        drop_path(small.clone(), 0.0, True),
        "drop_path(branch, 0.0, training=True): at rate 0 nothing is dropped and nothing is scaled",
        close=(1e-6, 1e-7),
    )
