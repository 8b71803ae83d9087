"""Held-out linear probes: 1 for a linear read-out, about 0 for noise, negative when over-fitted,
and the per-sequence centring and token spread used by the depth experiment."""

import numpy as np
import pytest

import pe_lib


def test_heldout_r_squared_is_one_for_a_linear_target():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 5))
    y = x @ rng.normal(size=(5, 2)) + 3.0
    assert pe_lib.heldout_r_squared(x[:200], y[:200], x[200:], y[200:]) == pytest.approx(1.0, abs=1e-12)


def test_heldout_r_squared_is_near_zero_for_unrelated_data():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(4000, 4)), rng.normal(size=4000)
    assert abs(pe_lib.heldout_r_squared(x[:2000], y[:2000], x[2000:], y[2000:])) < 0.01


def test_heldout_r_squared_exposes_overfitting_that_the_training_fit_hides():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(100, 40)), rng.normal(size=100)
    train_r2 = pe_lib.r_squared(x[:45], y[:45])  # 41 parameters, 45 rows: fits much of the noise
    assert train_r2 > 0.5
    assert pe_lib.heldout_r_squared(x[:45], y[:45], x[45:], y[45:]) < 0


@pytest.mark.parametrize(
    ("shapes", "match"),
    [
        (((10, 2), (10,), (5, 3), (5,)), "same widths, got x 2 vs 3"),
        (((10, 2), (10,), (5, 2), (5, 2)), "same widths"),
        (((10, 2), (10,), (5, 2), (4,)), "as many rows, got 5 and 4"),
        (((3, 2), (3,), (5, 2), (5,)), "3 parameters per output but only 3 training rows"),
        (((10, 2, 1), (10,), (5, 2), (5,)), r"x_train must be 1-D or 2-D \(samples, \.\.\.\), got shape \(10, 2, 1\)"),
    ],
)
def test_heldout_r_squared_rejects_bad_shapes(shapes, match):
    arrays = [np.arange(np.prod(s), dtype=float).reshape(s) ** 0.5 for s in shapes]
    with pytest.raises(ValueError, match=match):
        pe_lib.heldout_r_squared(*arrays)


def test_heldout_r_squared_rejects_constant_or_non_finite_test_data():
    x = np.random.default_rng(3).normal(size=(20, 2))
    with pytest.raises(ValueError, match="y_test is constant"):
        pe_lib.heldout_r_squared(x, x[:, 0], x, np.ones(20))
    with pytest.raises(ValueError, match="x_test must be finite"):
        pe_lib.heldout_r_squared(x, x[:, 0], np.full((2, 2), np.nan), np.ones(2))


def _states(batch=12, n=16, d=6, seed=0):
    """Layer 0: position written linearly into the vectors plus noise; layer 1: noise only."""
    rng = np.random.default_rng(seed)
    pos = np.arange(n, dtype=float)
    layer0 = np.outer(pos, rng.normal(size=d))[None] + 0.01 * rng.normal(size=(batch, n, d))
    layer1 = rng.normal(size=(batch, n, d))
    return np.stack([layer0, layer1]), pos


def test_layer_probe_reads_a_written_position_and_not_noise():
    states, pos = _states()
    r2 = pe_lib.layer_probe(states, pos, n_train=8)
    assert r2.shape == (2,)
    assert r2[0] > 0.999
    assert r2[1] < 0.1
    # a multi-output target, e.g. the encoding of the position
    r2_pe = pe_lib.layer_probe(states, pe_lib.sinusoidal(16, 4, base=10), n_train=8)
    assert r2_pe[0] > r2_pe[1]


def test_centring_removes_per_sequence_offsets():
    states, pos = _states(seed=4)
    offsets = np.random.default_rng(5).normal(scale=1e3, size=(1, 12, 1, 6))  # one vector per sequence
    np.testing.assert_allclose(
        pe_lib.layer_probe(states + offsets, pos, n_train=8), pe_lib.layer_probe(states, pos, n_train=8), atol=1e-8
    )
    # without centring, large offsets seen on only eight training sequences spoil the probe
    assert pe_lib.layer_probe(states + offsets, pos, n_train=8, center=False)[0] < 0.9


@pytest.mark.parametrize(
    ("states_shape", "target_shape", "n_train", "match"),
    [
        ((2, 12, 16), (16,), 8, r"states must have shape \(n_layers \+ 1, batch, n, d\)"),
        ((2, 12, 16, 6), (15,), 8, r"target must have shape \(16,\) or \(16, r\)"),
        ((2, 12, 16, 6), (16, 2, 2), 8, "one row per position"),
        ((2, 12, 16, 6), (16,), 12, "n_train must leave test sequences: got n_train=12 of batch=12"),
        ((2, 12, 16, 6), (16,), 0, "n_train must be an integer >= 1"),
    ],
)
def test_layer_probe_rejects_bad_arguments(states_shape, target_shape, n_train, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.layer_probe(np.ones(states_shape), np.arange(np.prod(target_shape)).reshape(target_shape),
                           n_train=n_train)


def test_token_spread():
    same = np.broadcast_to(np.arange(1.0, 5.0), (3, 2, 7, 4))  # every token identical
    np.testing.assert_array_equal(pe_lib.token_spread(same), 0.0)
    centred = np.array([[[1.0, -1.0], [-1.0, 1.0]]])  # (1 layer, n=2, d=2), sequence mean 0
    np.testing.assert_allclose(pe_lib.token_spread(centred), [1.0])
    half = np.array([[[2.0, 0.0], [0.0, 0.0]]])  # mean (1, 0): deviation norm sqrt(2), total 2
    np.testing.assert_allclose(pe_lib.token_spread(half), [np.sqrt(2) / 2])
    states = pe_lib.run_stack(np.random.default_rng(0).normal(size=(2, 5, 8)), pe_lib.init_blocks(2, 8))
    assert pe_lib.token_spread(states).shape == (3,)
    with pytest.raises(ValueError, match="states must have shape"):
        pe_lib.token_spread(np.ones((2, 3)))
    with pytest.raises(ValueError, match="a layer is all zeros"):
        pe_lib.token_spread(np.zeros((1, 2, 3)))


def _lstsq_probe(x, y):
    """The reference: numpy's SVD-based least squares on the design [x, 1]."""
    design = np.hstack([x, np.ones((x.shape[0], 1))])
    c, *_ = np.linalg.lstsq(design, y.reshape(x.shape[0], -1), rcond=None)
    return c[:-1], c[-1]


def test_fit_probe_recovers_an_exact_affine_map():
    rng = np.random.default_rng(10)
    x = rng.normal(size=(50, 3))
    w_true, b_true = np.array([[1.0, -2.0], [0.5, 0.0], [3.0, 1.0]]), np.array([4.0, -1.0])
    w, b = pe_lib.fit_probe(x, x @ w_true + b_true)
    np.testing.assert_allclose(w, w_true, atol=1e-12)
    np.testing.assert_allclose(b, b_true, atol=1e-12)
    w1, b1 = pe_lib.fit_probe(x, x[:, 0])  # a 1-D target is one output
    assert w1.shape == (3, 1) and b1.shape == (1,)
    np.testing.assert_allclose(w1[:, 0], [1.0, 0.0, 0.0], atol=1e-12)


@pytest.mark.parametrize("feature_scale", [1.0, 1e-5])
def test_fit_probe_agrees_with_lstsq_even_for_tiny_features(feature_scale):
    # features 1e-5 of the intercept square to 1e-10 in the Gram matrix: without the refinement
    # steps the noisy fit below loses several digits
    rng = np.random.default_rng(11)
    x = feature_scale * rng.normal(size=(400, 20)) @ rng.normal(size=(20, 20))
    y = rng.normal(size=(400, 2)) + 30.0
    w, b = pe_lib.fit_probe(x, y)
    w_ref, b_ref = _lstsq_probe(x, y)
    np.testing.assert_allclose(x @ w + b, x @ w_ref + b_ref, rtol=0, atol=1e-10)


def test_fit_probe_keeps_only_the_intercept_for_rounding_noise():
    rng = np.random.default_rng(12)
    y = rng.normal(size=300) + 7.0
    x = 1e-17 * rng.normal(size=(300, 8))  # rounding noise on vectors of size 1
    w, b = pe_lib.fit_probe(x, y, scale=1.0)
    assert np.abs(w).max() < 1e-12  # fitting the noise would need weights of about 1e17
    assert b[0] == pytest.approx(y.mean(), abs=1e-12)
    # the same numbers as vectors of their own size (scale = their RMS, the default) are a signal
    w_own, b_own = pe_lib.fit_probe(x, y)
    w_ref, b_ref = _lstsq_probe(x * 1e17, y)
    np.testing.assert_allclose(x @ w_own + b_own, x * 1e17 @ w_ref + b_ref, rtol=0, atol=1e-9)


@pytest.mark.parametrize(("spread", "kept"), [(1e-13, False), (1e-11, True)])
def test_fit_probe_noise_floor_is_1e_minus_12_of_scale(spread, kept):
    # centred vectors that vary by 1e-13 of the scale are noise, by 1e-11 a signal
    rng = np.random.default_rng(15)
    x = 5.0 + spread * rng.normal(size=(200, 3))
    y = x[:, 0] / spread
    w, _ = pe_lib.fit_probe(x, y, scale=1.0)
    assert (np.abs(w[0, 0] - 1 / spread) < 1e-3 / spread) == kept


def test_fit_probe_reads_a_collapsed_layer_as_lstsq_does():
    # vectors that all sit at one point and differ by 1e-6 of it (a layer whose tokens have nearly
    # collapsed, chapter 7): an intercept column of ones in the Gram matrix put their eigenvalues near
    # its rounding error and dropped some real directions (a held-out R^2 of -0.45 where lstsq
    # gives -0.87 in chapter 7's seed 4, layer 3); centred first, the fit is lstsq's
    rng = np.random.default_rng(16)
    directions = rng.normal(size=(30, 30)) * np.logspace(0, -2, 30)[:, None]  # a spread spectrum
    x = 1.0 + 1e-6 * rng.normal(size=(600, 30)) @ directions
    y = rng.normal(size=600) + 30.0
    w, b = pe_lib.fit_probe(x, y, scale=1.0)
    w_ref, b_ref = _lstsq_probe(x - 1.0, y)  # lstsq on the same differences, intercept apart
    np.testing.assert_allclose(x @ w + b, (x - 1.0) @ w_ref + b_ref, rtol=0, atol=1e-7)


def test_fit_probe_rejects_a_bad_scale():
    for bad in (-1.0, np.nan, np.inf, "1", True):
        with pytest.raises(ValueError, match=r"^scale must be a finite number >= 0 or None, got"):
            pe_lib.fit_probe(np.ones((5, 2)), np.arange(5.0), scale=bad)


def test_fit_probe_rejects_bad_data():
    with pytest.raises(ValueError, match="x and y must be finite"):
        pe_lib.fit_probe(np.full((5, 2), np.nan), np.ones(5))
    with pytest.raises(ValueError, match="as many rows, got 5 and 4"):
        pe_lib.fit_probe(np.ones((5, 2)), np.ones(4))


# ---- found by `make mutate` --------------------------------------------------------------------
def test_probe_errors_name_the_argument():
    bad = np.zeros((6, 2, 2))  # 3-D
    good_x, good_y = np.arange(12.0).reshape(6, 2) ** 2, np.arange(6.0)
    with pytest.raises(ValueError, match=r"^x must be 1-D or 2-D"):
        pe_lib.fit_probe(bad, good_y)
    with pytest.raises(ValueError, match=r"^y must be 1-D or 2-D"):
        pe_lib.fit_probe(good_x, bad)
    with pytest.raises(ValueError, match=r"^x and y must be finite, got NaN or infinity$"):
        pe_lib.fit_probe(good_x, np.full(6, np.inf))
    args = [good_x, good_y, good_x, good_y]
    for i, name in enumerate(["x_train", "y_train", "x_test", "y_test"]):
        with pytest.raises(ValueError, match=rf"^{name} must be 1-D or 2-D"):
            pe_lib.heldout_r_squared(*[bad if j == i else a for j, a in enumerate(args)])
    too_few = r"training rows; use more training samples than features, or it can fit anything$"
    with pytest.raises(ValueError, match=too_few):
        pe_lib.heldout_r_squared(good_x[:3], good_y[:3], good_x, good_y)
    with pytest.raises(ValueError, match=r"^x_test must be finite, got NaN or infinity$"):
        pe_lib.heldout_r_squared(good_x, good_y, np.full((6, 2), np.nan), good_y)
    with pytest.raises(ValueError, match=r"^y_test is constant, so R\^2 is undefined; probe a quantity that varies$"):
        pe_lib.heldout_r_squared(good_x, good_y, good_x, np.ones(6))
    with pytest.raises(ValueError, match=r"^a layer is all zeros, so its relative spread is undefined$"):
        pe_lib.token_spread(np.zeros((1, 2, 3)))


def test_heldout_r_squared_pools_outputs_around_each_output_mean():
    # x = y = identity read-out trained exactly; test outputs (1, 100), (2, 100), (3, 102): predicted
    # (1, 100), (2, 100), (3, 100): residual 2^2 = 4; spread around the column means (2, 100.67):
    # 1 + 0 + 1 + (4/9 + 4/9 + 16/9) = 2 + 8/3, so R^2 = 1 - 4 / (14/3) = 1/7
    x_train = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 3.0]])
    x_test = np.array([[1.0, 100.0], [2.0, 100.0], [3.0, 100.0]])
    y_test = np.array([[1.0, 100.0], [2.0, 100.0], [3.0, 102.0]])
    assert pe_lib.heldout_r_squared(x_train, x_train, x_test, y_test) == pytest.approx(1 / 7, rel=1e-12)


def test_heldout_r_squared_computes_in_float64_from_float32_data():
    rng = np.random.default_rng(13)
    x = rng.normal(size=(60, 3)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5]) + rng.normal(size=60) + 1000.0).astype(np.float32)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)  # the same numbers, exactly
    w, b = _lstsq_probe(x64[:40], y64[:40])
    residual = np.sum((x64[40:] @ w + b - y64[40:, None]) ** 2)
    expected = 1 - residual / np.sum((y64[40:] - y64[40:].mean()) ** 2)
    assert pe_lib.heldout_r_squared(x[:40], y[:40], x[40:], y[40:]) == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_fit_probe_drops_features_below_the_rounding_of_the_gram_matrix():
    # one feature of size 1 and 28 at 2.6e-8 of it: their eigenvalues, about 3 eps lambda_max, are below
    # the cut eps p lambda_max with p = 29, so only the first feature is used (as lstsq with that cut
    # on the singular values of the centred design)
    rng = np.random.default_rng(14)
    x = np.hstack([rng.normal(size=(300, 1)), np.sqrt(3 * np.finfo(float).eps) * rng.normal(size=(300, 28))])
    y = 2.0 * x[:, 0] + rng.normal(size=300) + 7.0
    w, b = pe_lib.fit_probe(x, y, scale=1.0)
    xc = x - x.mean(axis=0)
    c, *_ = np.linalg.lstsq(xc, y - y.mean(), rcond=np.sqrt(np.finfo(float).eps * 29))
    np.testing.assert_allclose(x @ w[:, 0] + b[0], xc @ c + y.mean(), rtol=0, atol=1e-9)
    np.testing.assert_allclose(w[1:, 0], 0.0, atol=1e-3)  # fitted, these would be about 1e7


def test_token_spread_is_per_layer_and_computed_in_float64():
    # layer 0: mean (1, 0), deviation sqrt(2), total 2; layer 1: sequence mean 0, spread 1
    two = np.array([[[2.0, 0.0], [0.0, 0.0]], [[1.0, -1.0], [-1.0, 1.0]]])
    np.testing.assert_allclose(pe_lib.token_spread(two), [np.sqrt(2) / 2, 1.0], rtol=1e-15)
    # int8 16^2 would wrap to 0: deviation (8, -8), (-8, 8): norm 16; total sqrt(512)
    small = np.array([[[16, 0], [0, 16]]], dtype=np.int8)
    np.testing.assert_allclose(pe_lib.token_spread(small), [16 / np.sqrt(512)], rtol=1e-15)


def test_layer_probe_centres_float32_states_in_float64():
    # float32 -> float64 is exact, so the same numbers must give the same R^2 (a float32 mean would not)
    states, pos = _states()
    states32 = (states + 1000.0).astype(np.float32)
    expected = pe_lib.layer_probe(states32.astype(np.float64), pos, n_train=8)
    np.testing.assert_allclose(pe_lib.layer_probe(states32, pos, n_train=8), expected, rtol=1e-13)


def test_token_spread_centres_each_sequence_on_its_own_mean():
    # two sequences, each of one repeated vector ([1, 0] and [0, 1]): within each sequence the tokens are alike,
    # so the spread is 0 although the sequences differ (planted: one mean over the whole batch, which gives
    # ||X - mean||_F / ||X||_F = sqrt(4 * 0.5) / sqrt(4) = 0.707)
    states = np.array([[[[1.0, 0.0]] * 2, [[0.0, 1.0]] * 2]])  # (1 layer, 2 sequences, 2 tokens, d = 2)
    np.testing.assert_array_equal(pe_lib.token_spread(states), [0.0])
