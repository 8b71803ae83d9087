r"""A held-out linear classifier: which of ``K`` classes (e.g. the position ``0 .. L-1``) can a linear
rule read from a layer's vectors, on sequences it was not fitted to?

A scalar probe (:func:`pe_lib.layer_probe` with the target ``pos``) asks whether the position is a
*linear function* of the vector, one number along one direction. A representation can hold the
position in a way no single direction reads, for example on a curve; a classifier asks the weaker
question whether the positions are *linearly separable*: a score :math:`s_c(x) = x^\top w_c + b_c`
per class, the prediction :math:`\arg\max_c s_c(x)`.

The rule is linear discriminant analysis (Fisher 1936; Hastie, Tibshirani and Friedman, *The
Elements of Statistical Learning*, 2nd ed., section 4.3): with the class means :math:`\mu_c`, the
pooled within-class covariance :math:`\Sigma` and the class shares :math:`\pi_c` of the training rows,

.. math::

    w_c = \Sigma^{-1}\mu_c, \qquad b_c = -\tfrac12\,\mu_c^\top\Sigma^{-1}\mu_c + \ln\pi_c,

the Bayes rule when every class is Gaussian with the same covariance. :math:`\Sigma` is shrunk a
little towards a multiple of the identity, :math:`(1-\gamma)\Sigma + \gamma\,\frac{\operatorname{tr}\Sigma}{p} I`
(regularised discriminant analysis, ibid. section 4.3.1): in a direction where the training vectors
barely vary (the float32 rounding of a model's states) the raw inverse would give huge weights to
rounding noise. It is fitted in closed form (one small eigendecomposition, no iterations), so it is
cheap and deterministic.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_finite_real, check_positive_int


def _features(x, *, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] == 0:
        raise ValueError(f"{name} must have shape (samples, features) with at least one sample, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got NaN or infinity")
    return arr


def _labels(labels, n: int, *, name: str) -> np.ndarray:
    arr = np.asarray(labels)
    if arr.shape != (n,) or arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must be {n} integer class labels, shape ({n},), got dtype {arr.dtype} and "
                         f"shape {arr.shape}")
    if arr.min() < 0:
        raise ValueError(f"{name} must be >= 0 (classes 0 .. K-1), got {arr.min()}")
    return arr.astype(np.int64)


SHRINKAGE = 1e-3  # gamma: the default weight of the identity in the shrunk covariance


def _check_shrinkage(shrinkage) -> float:
    value = check_finite_real(shrinkage, name="shrinkage")
    if not 0 < value <= 1:
        raise ValueError(f"shrinkage must be in (0, 1], got {shrinkage!r}")
    return value


def fit_linear_discriminant(x, labels, *, shrinkage: float = SHRINKAGE) -> tuple[np.ndarray, np.ndarray]:
    r"""Linear discriminant analysis: the weights :math:`w_c` and offsets :math:`b_c` of the module doc.

    ``x``: ``(T, p)`` training vectors; ``labels``: ``(T,)`` integers in ``0 .. K-1``, every class
    present at least twice. :math:`\Sigma = \frac{1}{T-K}\sum_t (x_t - \mu_{c_t})(x_t - \mu_{c_t})^\top`,
    shrunk by ``shrinkage`` :math:`= \gamma \in (0, 1]` (module doc); if :math:`\Sigma = 0` (every row equals its
    class mean) the identity is used.
    Returns ``(W, b)`` of shapes ``(p, K)`` and ``(K,)``: the prediction is ``argmax(x @ W + b)``.
    """
    x = _features(x, name="x")
    labels = _labels(labels, x.shape[0], name="labels")
    n_classes = int(labels.max()) + 1
    counts = np.bincount(labels, minlength=n_classes)
    if counts.min() < 2:
        raise ValueError(f"every class 0 .. {n_classes - 1} needs at least two training rows, got counts "
                         f"from {counts.min()} to {counts.max()}")
    means = np.zeros((n_classes, x.shape[1]))
    np.add.at(means, labels, x)
    means /= counts[:, None]  # mu_c
    centred = x - means[labels]  # x_t - mu_{c_t}
    sigma = centred.T @ centred / (x.shape[0] - n_classes)  # pooled within-class covariance
    scale = np.trace(sigma) / x.shape[1]
    gamma = _check_shrinkage(shrinkage)
    shrunk = (1 - gamma) * sigma + gamma * (scale if scale > 0 else 1.0) * np.eye(x.shape[1])
    w = np.linalg.solve(shrunk, means.T)  # w_c = Sigma_gamma^-1 mu_c, (p, K)
    b = -0.5 * np.sum(means.T * w, axis=0) + np.log(counts / x.shape[0])  # -mu_c^T Sigma_gamma^-1 mu_c / 2 + ln pi_c
    return w, b


def heldout_accuracy(x_train, labels_train, x_test, labels_test, *, shrinkage: float = SHRINKAGE) -> float:
    r"""Fit :func:`fit_linear_discriminant` on the training rows; return the fraction of test rows whose
    class it predicts, in [0, 1] (chance: about ``1/K`` for ``K`` balanced classes).

    ``x_*``: ``(T, p)``; ``labels_*``: ``(T,)`` integers; the test labels must be among the training classes.
    """
    x_train, x_test = _features(x_train, name="x_train"), _features(x_test, name="x_test")
    if x_train.shape[1] != x_test.shape[1]:
        raise ValueError(f"x_train and x_test must have the same number of features, got {x_train.shape[1]} "
                         f"and {x_test.shape[1]}")
    w, b = fit_linear_discriminant(x_train, labels_train, shrinkage=shrinkage)
    labels_test = _labels(labels_test, x_test.shape[0], name="labels_test")
    if labels_test.max() >= b.shape[0]:
        raise ValueError(f"labels_test must be classes seen in training (0 .. {b.shape[0] - 1}), got "
                         f"{labels_test.max()}")
    predicted = np.argmax(x_test @ w + b, axis=1)
    return float(np.mean(predicted == labels_test))


def layer_classifier(states, labels, *, n_train: int, center: bool = True,
                     shrinkage: float = SHRINKAGE) -> np.ndarray:
    r"""Held-out accuracy of a linear classifier (:func:`heldout_accuracy`) from every layer to a
    per-position class, such as the position itself.

    ``states``: ``(n_layers + 1, batch, n, d)``, as for :func:`pe_lib.layer_probe`; ``labels``:
    ``(n,)`` integers, the class of each position, the same in every sequence. Fitted on the first
    ``n_train`` sequences, scored on the other ``batch - n_train``: held-out sequences, same
    positions. ``center=True`` first subtracts from every vector the mean over its own sequence
    (as :func:`pe_lib.layer_probe` does). Returns ``(n_layers + 1,)`` accuracies in [0, 1].
    """
    states = np.asarray(states, dtype=np.float64)
    if states.ndim != 4:
        raise ValueError(f"states must have shape (n_layers + 1, batch, n, d), got shape {states.shape}")
    _, batch, n, d = states.shape
    labels = _labels(labels, n, name="labels")
    n_train = check_positive_int(n_train, name="n_train")
    if n_train >= batch:
        raise ValueError(f"n_train must leave test sequences: got n_train={n_train} of batch={batch}")
    if center:
        states = states - states.mean(axis=2, keepdims=True)  # x_t - mean of x over its sequence
    y_train, y_test = np.tile(labels, n_train), np.tile(labels, batch - n_train)
    return np.array([heldout_accuracy(s[:n_train].reshape(-1, d), y_train, s[n_train:].reshape(-1, d), y_test,
                                      shrinkage=shrinkage) for s in states])
