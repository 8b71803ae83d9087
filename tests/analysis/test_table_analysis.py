"""Looks at a position table (pe_lib.analysis.table_analysis): tables whose answers are known by hand."""

from fractions import Fraction

import numpy as np
import pytest

import pe_lib


def test_dot_by_offset_by_hand():
    table = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]])
    # offset 0: (1 + 2 + 4) / 3; offset 1: (P0.P1 + P1.P2) / 2 = (1 + 2) / 2; offset 2: P0.P2 = 0
    np.testing.assert_allclose(pe_lib.dot_by_offset(table), [7 / 3, 1.5, 0.0])


def test_sinusoidal_dot_profile_is_the_formula():
    np.testing.assert_allclose(pe_lib.dot_by_offset(pe_lib.sinusoidal(64, 16))[:20], pe_lib.dot_profile(20, 16),
                               atol=1e-12)


def test_cosine_profile_ignores_row_lengths():
    table = np.array([[1.0, 0.0], [0.0, 3.0], [-2.0, 0.0]])  # 90 degrees between neighbours, 180 at offset 2
    np.testing.assert_allclose(pe_lib.cosine_profile(table), [1.0, 0.0, -1.0], atol=1e-15)


def test_column_frequencies_find_planted_waves():
    p = np.arange(64)
    table = np.stack([np.cos(2 * np.pi * 5 * p / 64), np.sin(2 * np.pi * 12 * p / 64) + 3.0], axis=1)
    np.testing.assert_allclose(pe_lib.column_frequencies(table), [5 / 64, 12 / 64])


def test_principal_components_of_a_line_and_a_circle():
    t = np.linspace(0, 1, 9)
    line = np.outer(t, [3.0, 4.0, 0.0])  # all variance along one direction
    coords, shares = pe_lib.principal_components(line, 1)
    np.testing.assert_allclose(shares, [1.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(np.abs(coords[:, 0]), np.abs(5 * (t - t.mean())), atol=1e-12)
    angle = 2 * np.pi * np.arange(8) / 8
    circle = np.stack([np.cos(angle), np.sin(angle), np.zeros(8)], axis=1)
    _, shares = pe_lib.principal_components(circle, 2)
    np.testing.assert_allclose(shares, [0.5, 0.5, 0.0], atol=1e-12)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: pe_lib.dot_by_offset(np.ones(4)), r"2-D array.*got shape \(4,\)"),
        (lambda: pe_lib.dot_by_offset(np.ones((1, 4))), ">= 2 rows"),
        (lambda: pe_lib.dot_by_offset([[1.0, np.nan], [0.0, 1.0]]), "non-finite"),
        (lambda: pe_lib.cosine_profile([[1.0, 0.0], [0.0, 0.0]]), "a row of the table is zero"),
        (lambda: pe_lib.principal_components(np.eye(3), 4), "k must be an integer between 1 and 3"),
        (lambda: pe_lib.principal_components(np.eye(3), True), "k must be an integer"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ---- found by `make mutate` (each kills mutants that the tests above let live) ---------------------
def test_an_integer_table_is_read_as_float64_and_one_column_is_enough():
    big = np.array([[4_000_000_000, 0], [0, 4_000_000_000]])  # 1.6e19 overflows int64
    np.testing.assert_allclose(pe_lib.dot_by_offset(big), [1.6e19, 0.0], rtol=1e-15)
    np.testing.assert_array_equal(pe_lib.column_frequencies([[0.0], [1.0], [0.0], [1.0]]), [0.5])  # period 2


def test_principal_components_default_k_and_k_up_to_the_smaller_side():
    table = np.random.default_rng(0).normal(size=(6, 4))
    assert pe_lib.principal_components(table)[0].shape == (6, 3)
    assert pe_lib.principal_components(table, k=4)[0].shape == (6, 4)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: pe_lib.dot_by_offset([[0.0, np.nan], [1.0, 1.0]]), "the position table has non-finite entries"),
    (lambda: pe_lib.cosine_profile([[0.0, 0.0], [1.0, 1.0]]),
     "a row of the table is zero: its cosine with other rows is undefined"),
])
def test_whole_error_messages(call, message):
    with pytest.raises(ValueError) as error:
        call()
    assert str(error.value) == message


# ---- position_regression_error (Wang & Chen's test of absolute position) ----------------------------
def test_a_table_linear_in_the_position_tells_every_position():
    pos = np.arange(40.0)
    table = np.column_stack([3.0 * pos + 1.0, np.full(40, 2.0), -0.5 * pos])  # rows linear in pos
    assert pe_lib.position_regression_error(table, seed=0) == (0.0, 0.0)


def test_rows_that_say_nothing_are_guessed_as_the_mean_position():
    # every row the same: the best linear map predicts the mean of the positions it was fitted to
    n, folds, seed = 12, 4, 7
    table = np.ones((n, 3))
    order = np.random.default_rng(seed).permutation(n)
    held, fitted = [], []
    for f in range(folds):
        test = np.sort(order[f::folds])
        train = np.array(sorted(set(range(n)) - set(test.tolist())))
        guess = round(sum(train.tolist()) / len(train))  # the mean, computed apart from the probe
        held.append(sum(abs(guess - t) for t in test.tolist()) / len(test))
        fitted.append(sum(abs(guess - t) for t in train.tolist()) / len(train))
    got = pe_lib.position_regression_error(table, seed=seed, folds=folds)
    assert got == pytest.approx((sum(held) / folds, sum(fitted) / folds), abs=1e-12)
    assert got[0] > 2.0  # positions 0..11 guessed as one number: far from 0


def test_as_many_columns_as_rows_fit_the_rows_but_not_the_rest():
    table = np.random.default_rng(1).normal(size=(30, 30))  # random rows: no position in them
    held_out, fitted = pe_lib.position_regression_error(table, seed=2)
    assert fitted < 1.0 < 5.0 < held_out  # 24 rows and 31 coefficients: fitted exactly, held-out far off


@pytest.mark.parametrize("folds", [1, 41, 2.5, True, "5"])
def test_folds_must_be_a_whole_number_from_2_to_the_rows(folds):
    with pytest.raises(ValueError, match=r"folds must be a whole number from 2 to the number of rows \(40\), got"):
        pe_lib.position_regression_error(np.ones((40, 2)), seed=0, folds=folds)


# ---- principal_directions and components_for_variance (chapter 2: how much of a word row lies along the
# position table's leading directions) ---------------------------------------------------------------------
def test_principal_directions_of_a_cross_found_by_hand():
    # four rows +-2 along (3, 4)/5 and +-1 along (-4, 3)/5, centred already: variances 8 and 2 (shares 0.8, 0.2)
    u, v = np.array([3.0, 4.0]) / 5, np.array([-4.0, 3.0]) / 5
    table = np.stack([2 * u, -2 * u, v, -v]) + [10.0, -7.0]  # an offset the centring removes
    directions, shares = pe_lib.principal_directions(table, 2)
    np.testing.assert_allclose(shares, [0.8, 0.2], atol=1e-12)
    np.testing.assert_allclose(np.abs(directions @ u), [1.0, 0.0], atol=1e-12)  # first: along u (either sign)
    np.testing.assert_allclose(np.abs(directions @ v), [0.0, 1.0], atol=1e-12)
    # a vector's components along them: (1, 0) has 3/5 along u and -4/5 along v
    np.testing.assert_allclose(np.abs(np.array([1.0, 0.0]) @ directions.T), [0.6, 0.8], atol=1e-12)


def test_principal_directions_agree_with_principal_components():
    table = np.random.default_rng(3).normal(size=(7, 5))
    directions, shares = pe_lib.principal_directions(table, 3)
    coordinates, same_shares = pe_lib.principal_components(table, 3)
    assert directions.shape == (3, 5)
    np.testing.assert_allclose(directions @ directions.T, np.eye(3), atol=1e-12)
    np.testing.assert_allclose((table - table.mean(axis=0)) @ directions.T, coordinates, atol=1e-12)
    np.testing.assert_array_equal(shares, same_shares)
    assert pe_lib.principal_directions(table)[0].shape == (3, 5)  # k defaults to 3


@pytest.mark.parametrize(
    ("fraction", "expected"),
    [(0.4, 1), (0.5, 1), (0.6, 2), (0.85, 3), (0.9, 3), (0.96, 4), (1.0, 4), (1, 4)],
)
def test_components_for_variance_counted_by_hand(fraction, expected):
    # running sums 0.5, 0.75, 0.9375, 1 (exact in binary)
    assert pe_lib.components_for_variance([0.5, 0.25, 0.1875, 0.0625], fraction) == expected


def test_components_for_variance_never_exceeds_the_number_of_directions():
    shares = np.full(10, 0.1)  # sums to 0.9999999999999999 in floating point
    assert pe_lib.components_for_variance(shares, 1.0) == 10


@pytest.mark.parametrize(
    ("shares", "fraction", "message"),
    [
        ([0.5, 0.5], 0.0, r"fraction must be a number in \(0, 1\], got 0.0"),
        ([0.5, 0.5], 1.5, r"got 1.5"),
        ([0.5, 0.5], True, r"got True"),
        ([0.5, 0.5], "0.9", r"got '0.9'"),
        ([0.6, 0.6], 0.9, "shares must sum to 1"),
        ([1.2, -0.2], 0.9, "non-negative"),
        ([], 0.9, "non-empty"),
        ([[0.5, 0.5]], 0.9, "1-D"),
        ([np.nan, 1.0], 0.9, "finite"),
    ],
)
def test_components_for_variance_refuses_bad_input(shares, fraction, message):
    with pytest.raises(ValueError, match=message):
        pe_lib.components_for_variance(shares, fraction)


def test_principal_directions_refuses_a_bad_k():
    with pytest.raises(ValueError, match="k must be an integer between 1 and 3, got 4"):
        pe_lib.principal_directions(np.eye(3), 4)


def test_folds_may_be_as_many_as_rows():
    # "folds from 2 to the number of rows": leave-one-out (folds = n) is allowed, n + 1 is not (planted: folds < n)
    pos = np.arange(6.0)
    table = np.column_stack([2.0 * pos, np.cos(pos)])
    held_out, fitted = pe_lib.position_regression_error(table, seed=0, folds=6)
    assert held_out == 0.0 and fitted == 0.0  # linear in the position: every row guessed exactly
    with pytest.raises(ValueError, match=r"from 2 to the number of rows \(6\), got 7"):
        pe_lib.position_regression_error(table, seed=0, folds=7)


# ---- position_regression_splits (issue 27: many splits; principal components fitted on the training rows) --------
def _by_hand(table, k, splits, folds):
    # independent of the Gram/eigh path: numpy's SVD of the training rows alone, then numpy.linalg.lstsq
    n = len(table)
    out = []
    for s in range(splits):
        order = np.random.default_rng(s).permutation(n)
        held, fitted = [], []
        for f in range(folds):
            test = order[f::folds]
            train = np.setdiff1d(np.arange(n), test)
            mean = table[train].mean(axis=0)
            z = table - mean
            if k is not None:
                z = z @ np.linalg.svd(z[train], full_matrices=False)[2][:k].T  # training rows' directions only
            design = np.column_stack([z, np.ones(n)])
            coef = np.linalg.lstsq(design[train], train.astype(float), rcond=None)[0]
            miss = np.abs(np.round(design @ coef) - np.arange(n))
            held.append(miss[test].mean())
            fitted.append(miss[train].mean())
        out.append([np.mean(held), np.mean(fitted)])
    return np.array(out)


def _weak_signal():
    rng = np.random.default_rng(0)
    table = rng.normal(size=(30, 12))
    table[:, 0] += 0.08 * np.arange(30)  # a weak trend under noise
    return table


def test_splits_agree_with_lstsq_on_training_components_and_with_the_one_split_function():
    table = _weak_signal()
    got = pe_lib.position_regression_splits(table, (None, 3), splits=20, folds=5)
    assert got.shape == (2, 20, 2)
    np.testing.assert_allclose(got[0], _by_hand(table, None, 20, 5), atol=1e-12)
    np.testing.assert_allclose(got[1], _by_hand(table, 3, 20, 5), atol=1e-12)
    one = [pe_lib.position_regression_error(table, seed=s) for s in range(20)]  # fit_probe, another path
    np.testing.assert_allclose(got[0], one, atol=1e-12)


def test_components_fitted_on_all_rows_give_a_different_leakier_number():
    # the planted error: principal components computed on every row, held-out rows included (issue 27)
    table = _weak_signal()
    fold_only = pe_lib.position_regression_splits(table, (3,), splits=20)[0, :, 0].mean()
    leaky = pe_lib.position_regression_splits(pe_lib.principal_components(table, 3)[0], splits=20)[0, :, 0].mean()
    assert fold_only == pytest.approx(_by_hand(table, 3, 20, 5)[:, 0].mean(), abs=1e-12)
    assert leaky < fold_only - 0.2  # measured: 5.54 against 5.82


def test_the_position_in_the_second_component_found_by_hand():
    # column 0 flips sign every row (variance 100, no order), column 1 is the position (variance < 100 here):
    # one component sees only the parity, so each row is guessed as the mean training position of its
    # parity; two components see the position exactly
    n, folds, splits = 20, 5, 3  # splits chosen so that no group mean is a tie x.5 (asserted below)
    pos = np.arange(n)
    table = np.column_stack([10.0 * (-1.0) ** pos, 0.1 * pos])
    got = pe_lib.position_regression_splits(table, (1, 2, None), splits=splits, folds=folds)
    np.testing.assert_array_equal(got[1:], 0.0)
    expected = []
    for s in range(splits):
        order = np.random.default_rng(s).permutation(n)
        held, fitted = [], []
        for f in range(folds):
            test = set(order[f::folds].tolist())
            train = [p for p in range(n) if p not in test]
            means = {parity: Fraction(sum(p for p in train if p % 2 == parity), sum(p % 2 == parity for p in train))
                     for parity in (0, 1)}
            assert all(m.denominator != 2 for m in means.values())  # no tie for rounding to settle
            guess = {parity: round(m) for parity, m in means.items()}
            held.append(sum(abs(guess[p % 2] - p) for p in test) / len(test))
            fitted.append(sum(abs(guess[p % 2] - p) for p in train) / len(train))
        expected.append([sum(held) / folds, sum(fitted) / folds])
    np.testing.assert_allclose(got[0], expected, atol=1e-12)
    assert got[0, :, 0].min() > 3.0


@pytest.mark.parametrize(
    ("table", "kwargs", "message"),
    [
        (np.ones((40, 3)), {"splits": 0}, r"^splits must be a whole number >= 1, got 0$"),
        (np.ones((40, 3)), {"splits": 2.0}, r"got 2.0"),
        (np.ones((40, 3)), {"splits": True}, r"got True"),
        (np.ones((40, 3)), {"folds": 41}, r"folds must be a whole number from 2 to the number of rows \(40\), got 41"),
        (np.ones((3, 3)), {"folds": 2}, r"^the table has 3 rows: a 2-fold split fits on only 1, and a fit needs at "
                                        r"least 2$"),
        (np.ones((40, 3)), {"components": (4,)}, r"from 1 to 3 \(the width 3, and one less than the 32 rows"),
        (np.ones((10, 30)), {"components": (8,)}, r"from 1 to 7 \(the width 30, and one less than the 8 rows"),
        (np.ones((40, 3)), {"components": (0,)}, r"got \(0,\)"),
        (np.ones((40, 3)), {"components": ()}, r"non-empty"),
        (np.ones((40, 3)), {"components": 2}, r"got None"),
        (np.ones((40, 3)), {"components": (True,)}, r"got \(True,\)"),
        (np.ones((40,)), {}, r"2-D array"),
    ],
)
def test_position_regression_splits_refuses_bad_input(table, kwargs, message):
    with pytest.raises(ValueError, match=message):
        pe_lib.position_regression_splits(table, **kwargs)


def test_columns_that_repeat_leave_the_all_column_fit_exact():
    # rank 2 in 5 columns (a repeat, a constant, a sum): the directions with no variance are dropped, as lstsq
    # drops tiny singular values; dividing by their rounding-noise eigenvalues instead would spoil the map
    pos = np.arange(40.0)
    wave = np.cos(pos)
    table = np.column_stack([0.5 * pos, wave, 0.5 * pos, np.full(40, 3.0), 0.5 * pos + wave])
    got = pe_lib.position_regression_splits(table, (None, 1), splits=4)
    np.testing.assert_array_equal(got[0], 0.0)
    np.testing.assert_allclose(got, np.stack([_by_hand(table, None, 4, 5), _by_hand(table, 1, 4, 5)]), atol=1e-12)


def test_a_direction_below_the_rounding_error_of_the_gram_matrix_is_dropped():
    # the position at 1e-9 of the other column: its eigenvalue of G is 1e-18 of the largest, under the cut
    # (eps * d = 4.4e-16), so the map sees the cosine column alone (lstsq, cutting singular values at about
    # 1e-14 of the largest, would keep it and read every position)
    pos = np.arange(40.0)
    table = np.column_stack([np.cos(pos), 1e-9 * pos])
    got = pe_lib.position_regression_splits(table, splits=4)[0]
    np.testing.assert_allclose(got, _by_hand(table[:, :1], None, 4, 5), atol=1e-12)
    assert got[:, 0].min() > 5.0
    np.testing.assert_array_equal(_by_hand(table, None, 4, 5), 0.0)
