"""The held-out linear classifier: planted Gaussian classes against the Bayes accuracy, the closed
form against an independent computation, determinism and every bad input."""

import math

import numpy as np
import pytest

import pe_lib
from pe_lib.analysis import classifier


def gaussian_classes(rng, n, delta, d=4):
    """Two classes with identity covariance, means -delta/2 and +delta/2 along the first axis."""
    labels = rng.integers(0, 2, size=n)
    x = rng.standard_normal((n, d))
    x[:, 0] += delta * (labels - 0.5)
    return x, labels


@pytest.mark.parametrize("delta", [1.0, 2.0, 3.0])
def test_two_gaussian_classes_reach_the_bayes_accuracy(delta):
    # Bayes rule for two equal-covariance Gaussians at distance delta: accuracy Phi(delta / 2)
    rng = np.random.default_rng(0)
    x_train, y_train = gaussian_classes(rng, 4000, delta)
    x_test, y_test = gaussian_classes(rng, 40000, delta)
    bayes = 0.5 * (1 + math.erf(delta / 2 / math.sqrt(2)))
    assert pe_lib.heldout_accuracy(x_train, y_train, x_test, y_test) == pytest.approx(bayes, abs=0.01)


def test_the_weights_are_the_inverse_pooled_covariance_times_the_means():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((60, 3)) @ np.array([[2.0, 0.3, 0.0], [0.0, 1.0, 0.5], [0.0, 0.0, 0.2]])
    labels = np.repeat([0, 1, 2], 20)
    x[labels == 1] += [1.0, -2.0, 0.5]
    x[labels == 2] += [0.0, 3.0, -1.0]
    gamma = 0.25
    # independent: the class means and pooled covariance by loops, shrunk by hand, inverted by inv
    means = np.array([x[labels == c].mean(axis=0) for c in range(3)])
    scatter = sum(np.outer(row - means[c], row - means[c]) for row, c in zip(x, labels, strict=True))
    sigma = scatter / (60 - 3)
    shrunk = (1 - gamma) * sigma + gamma * np.trace(sigma) / 3 * np.eye(3)
    inv = np.linalg.inv(shrunk)
    w, b = pe_lib.fit_linear_discriminant(x, labels, shrinkage=gamma)
    np.testing.assert_allclose(w, inv @ means.T, rtol=1e-10)
    np.testing.assert_allclose(b, [-0.5 * m @ inv @ m + np.log(1 / 3) for m in means], rtol=1e-10)


def test_unequal_class_shares_enter_the_offsets():
    x = np.array([[0.0], [0.1], [-0.1], [1.0], [1.1]])
    labels = np.array([0, 0, 0, 1, 1])
    w, b = pe_lib.fit_linear_discriminant(x, labels)
    means = np.array([0.0, 1.05])  # the class means, by hand
    np.testing.assert_allclose(b + 0.5 * means * w[0], np.log([3 / 5, 2 / 5]), rtol=1e-12)


def test_a_planted_position_code_is_read_and_noise_is_not():
    rng = np.random.default_rng(2)
    n, d, batch = 32, 16, 20
    code = rng.standard_normal((n, d))  # one vector per position
    tokens = rng.standard_normal((batch, n, d))  # content noise
    states = np.stack([code + 0.3 * tokens, tokens])  # layer 0 carries the position, layer 1 does not
    acc = pe_lib.layer_classifier(states, np.arange(n), n_train=15)
    assert acc[0] == 1.0
    assert acc[1] < 3 / n  # chance is 1/32


def test_centring_removes_a_per_sequence_shift():
    rng = np.random.default_rng(3)
    n, d, batch = 8, 4, 12
    code = rng.standard_normal((n, d))
    shift = 100 * rng.standard_normal((batch, 1, d))  # the same vector for every token of a sequence
    states = (code + 0.05 * rng.standard_normal((batch, n, d)) + shift)[None]
    centred = pe_lib.layer_classifier(states, np.arange(n), n_train=8)
    raw = pe_lib.layer_classifier(states, np.arange(n), n_train=8, center=False)
    assert centred[0] == 1.0
    assert raw[0] < 0.5


def test_deterministic():
    rng = np.random.default_rng(4)
    states = rng.standard_normal((2, 6, 8, 5))
    a = pe_lib.layer_classifier(states, np.arange(8) % 4, n_train=4)
    b = pe_lib.layer_classifier(states.copy(), np.arange(8) % 4, n_train=4)
    np.testing.assert_array_equal(a, b)


def test_constant_features_predict_the_most_common_class():
    x = np.zeros((5, 2))
    labels = np.array([0, 0, 0, 1, 1])
    assert pe_lib.heldout_accuracy(x, labels, np.zeros((4, 2)), np.array([0, 0, 1, 0])) == 0.75


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: pe_lib.fit_linear_discriminant(np.zeros(4), [0, 0, 1, 1]), "shape"),
        (lambda: pe_lib.fit_linear_discriminant(np.zeros((0, 2)), []), "at least one sample"),
        (lambda: pe_lib.fit_linear_discriminant([[np.nan], [1], [2], [3]], [0, 0, 1, 1]), "finite"),
        (lambda: pe_lib.fit_linear_discriminant(np.zeros((4, 1)), [0.0, 0.0, 1.0, 1.0]), "integer"),
        (lambda: pe_lib.fit_linear_discriminant(np.zeros((4, 1)), [0, 0, 1]), "shape"),
        (lambda: pe_lib.fit_linear_discriminant(np.zeros((4, 1)), [0, 0, -1, -1]), ">= 0"),
        (lambda: pe_lib.fit_linear_discriminant(np.zeros((4, 1)), [0, 0, 0, 2]), "at least two"),
        (lambda: pe_lib.fit_linear_discriminant(np.eye(4), [0, 0, 1, 1], shrinkage=0), "shrinkage"),
        (lambda: pe_lib.fit_linear_discriminant(np.eye(4), [0, 0, 1, 1], shrinkage=1.5), "shrinkage"),
        (lambda: pe_lib.heldout_accuracy(np.eye(4), [0, 0, 1, 1], np.eye(3), [0, 1, 0]), "same number"),
        (lambda: pe_lib.heldout_accuracy(np.eye(4), [0, 0, 1, 1], np.eye(4), [0, 1, 2, 0]), "seen in training"),
        (lambda: pe_lib.layer_classifier(np.zeros((2, 3, 4)), np.arange(3), n_train=1), "shape"),
        (lambda: pe_lib.layer_classifier(np.zeros((1, 3, 4, 2)), np.arange(4), n_train=3), "leave test"),
        (lambda: pe_lib.layer_classifier(np.zeros((1, 3, 4, 2)), np.arange(3), n_train=1), "shape"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_shrinkage_must_be_a_number():
    with pytest.raises(ValueError, match="real number"):
        classifier.fit_linear_discriminant(np.eye(4), [0, 0, 1, 1], shrinkage="a little")


# ---- found by `make mutate` (each kills mutants that the tests above let live) ---------------------
def test_the_shrinkage_target_is_the_mean_variance_or_one_when_it_is_zero():
    # one feature: the target tr(Sigma)/p I is Sigma itself, so any gamma leaves Sigma = 0.04 / (4 - 2) = 0.02
    w, b = pe_lib.fit_linear_discriminant([[0.0], [0.2], [1.0], [1.2]], [0, 0, 1, 1], shrinkage=0.5)
    np.testing.assert_allclose(w, [[0.1 / 0.02, 1.1 / 0.02]], rtol=1e-12)  # mu_c / sigma
    np.testing.assert_allclose(b, [-0.5 * 0.1 * 5 + math.log(0.5), -0.5 * 1.1 * 55 + math.log(0.5)], rtol=1e-12)
    # every row equals its class mean: Sigma = 0, the target is 1 * I, so Sigma_gamma = 0.5
    w, _ = pe_lib.fit_linear_discriminant([[0.0], [0.0], [1.0], [1.0]], [0, 0, 1, 1], shrinkage=0.5)
    np.testing.assert_allclose(w, [[0.0, 2.0]], rtol=1e-12)
    w, _ = pe_lib.fit_linear_discriminant([[0.0], [0.0], [1.0], [1.0]], [0, 0, 1, 1], shrinkage=1.0)  # 1 allowed
    np.testing.assert_allclose(w, [[0.0, 1.0]], rtol=1e-12)


X4, Y4 = [[0.0], [0.2], [1.0], [1.2]], [0, 0, 1, 1]
STATES = np.random.default_rng(0).normal(size=(2, 3, 4, 2))


@pytest.mark.parametrize(("call", "match"), [
    (lambda: pe_lib.fit_linear_discriminant([[np.nan]] * 4, Y4), r"^x must be finite"),
    (lambda: pe_lib.fit_linear_discriminant(X4, [0, 0, 1]), r"^labels must be 4 integer class labels"),
    (lambda: pe_lib.fit_linear_discriminant(X4, [0, 0, 0, 1]),
     r"^every class 0 \.\. 1 needs at least two training rows, got counts from 1 to 3$"),
    (lambda: pe_lib.fit_linear_discriminant(X4, Y4, shrinkage=float("nan")), r"^shrinkage must be a finite"),
    (lambda: pe_lib.heldout_accuracy([[np.nan]] * 4, Y4, X4, Y4), r"^x_train must be finite"),
    (lambda: pe_lib.heldout_accuracy(X4, Y4, [[np.nan]], [0]), r"^x_test must be finite"),
    (lambda: pe_lib.heldout_accuracy(X4, Y4, X4, [0, 1]), r"^labels_test must be 4 integer class labels"),
    (lambda: pe_lib.heldout_accuracy(X4, Y4, X4, [0, 1, 2, 0]),
     r"^labels_test must be classes seen in training \(0 \.\. 1\), got"),
    (lambda: pe_lib.heldout_accuracy(X4, Y4, X4, Y4, shrinkage=2.0), r"^shrinkage must be in \(0, 1\]"),
    (lambda: pe_lib.layer_classifier(STATES, [0, 1, 0], n_train=1), r"^labels must be 4 integer class labels"),
    (lambda: pe_lib.layer_classifier(STATES, [0, 0, 1, 1], n_train=0), r"^n_train must be an integer >= 1"),
    (lambda: pe_lib.layer_classifier(STATES, [0, 0, 1, 1], n_train=1, shrinkage=2.0),
     r"^shrinkage must be in \(0, 1\]"),
])
def test_errors_name_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()
