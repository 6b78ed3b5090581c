"""Hidden tests for notebooks/04_ensemble_of_paths.ipynb, run by `make grade` in each submission's kernel."""


def exercise_1():
    assert abs(share_of_paths(4, 2, 2) - 6 / 16) < 1e-12
    assert abs(share_of_paths(20, 0, 20) - 1) < 1e-12
    assert abs(share_of_paths(54, 19, 35) - sum(math.comb(54, k) for k in range(19, 36)) / 2**54) < 1e-12


def exercise_2():
    assert kendall_distance([0, 1, 2]) == 0
    assert abs(kendall_distance([2, 1, 0]) - 1) < 1e-12
    assert abs(kendall_distance([0, 2, 1, 3, 4]) - 1 / 10) < 1e-12


def exercise_3():
    for n, r in [(12, 0.5), (30, 0.1), (7, 2.0)]:
        terms = [math.comb(n, j) * r**j for j in range(n + 1)]
        assert predicted_peak(n, r) == int(np.argmax(terms)), f"n = {n}, r = {r}"


def exercise_4():
    i = N_BLOCKS // 2
    assert abs(branch_deleted_error(i) - res_single[i]) < 1e-9
    assert all(isinstance(b.f, nn.Sequential) for b in resnet.blocks), "every branch must be put back"
