r"""Linear probes with a held-out test set: how much of a quantity can a linear map read out of
a layer's vectors, on data it was not fitted to?

The probe is the least-squares map with intercept (:func:`fit_probe`). It is fitted on
training rows and scored on test rows by the out-of-sample coefficient of determination

.. math::

    R^2_\text{test} = 1 - \frac{\sum_{t \in \text{test}} \lVert \hat y_t - y_t \rVert^2}
                             {\sum_{t \in \text{test}} \lVert y_t - \bar y_\text{test} \rVert^2},

which is 1 for a perfect read-out, about 0 when the probe does no better than the test mean, and
can be negative when it does worse (over-fitting shows up here, unlike in the training fit).
"""

from __future__ import annotations

import numpy as np

from .._validate import check_positive_int


def _rows(a, *, name: str) -> np.ndarray:
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D or 2-D (samples, ...), got shape {arr.shape}")
    return arr.reshape(arr.shape[0], -1)


# A direction along which the centred vectors vary by less than this share of their size (about 4500
# float64 rounding steps) is taken as rounding noise, not as a signal (see :func:`fit_probe`).
NOISE_FLOOR = 1e-12


def fit_probe(x, y, *, scale=None) -> tuple[np.ndarray, np.ndarray]:
    r"""The least-squares probe :math:`\hat y = W^\top x + b`, through the centred normal equations.

    With the training means :math:`\bar x, \bar y` the intercept separates exactly:
    :math:`W` solves :math:`G W = X_c^\top Y_c` with :math:`X_c = x - \bar x` (``T`` rows, ``p`` columns),
    :math:`Y_c = y - \bar y` and :math:`G = X_c^\top X_c = V \Lambda V^\top`, and :math:`b = \bar y - W^\top \bar x`.
    Centring first keeps the Gram matrix in the features' own scale: with an intercept column of ones
    in it instead, features much smaller than 1 (a layer whose tokens have nearly collapsed onto one
    vector) fall below its rounding error and real directions are lost. ``G`` is only ``(p, p)``: the
    fit costs matrix products over the rows and one small eigendecomposition, far less than an SVD of
    the tall design (what ``numpy.linalg.lstsq`` does). Two kinds of direction are dropped:

    * :math:`\lambda_i \le \varepsilon\,p\,\lambda_\max`, below the rounding error of ``G``
      (as ``lstsq`` drops tiny singular values);
    * :math:`\lambda_i \le T\,(\texttt{NOISE\_FLOOR}\cdot\texttt{scale})^2`: along them the centred
      vectors vary by less than ``NOISE_FLOOR`` (1e-12) of ``scale``, the size of the vectors they were
      computed from, which is rounding noise (a layer whose tokens all carry one vector). ``scale``
      defaults to the RMS of ``x`` itself; pass the size of the uncentred vectors when ``x`` is already
      a difference (as :func:`layer_probe` does).

    Forming ``G`` squares the condition number; two steps of iterative refinement,
    :math:`W \leftarrow W + G^{+} X_c^\top (Y_c - X_c W)`, win back the lost digits (agreement with
    ``lstsq`` to about ``1e-10`` even where the features are ``1e-5`` of their mean).

    ``x``: ``(T, p)``; ``y``: ``(T,)`` or ``(T, r)``; ``scale``: a float >= 0 or ``None``.
    Returns ``(W, b)`` of shapes ``(p, r)`` and ``(r,)``.
    """
    x, y = _rows(x, name="x"), _rows(y, name="y")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("x and y must be finite, got NaN or infinity")
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"x and y must have as many rows, got {x.shape[0]} and {y.shape[0]}")
    if scale is None:
        scale = float(np.sqrt(np.mean(x**2)))
    elif isinstance(scale, bool) or not isinstance(scale, (int, float, np.floating, np.integer)) or not (
        np.isfinite(scale) and scale >= 0
    ):
        raise ValueError(f"scale must be a finite number >= 0 or None, got {scale!r}")
    x_mean, y_mean = x.mean(axis=0), y.mean(axis=0)
    xc, yc = x - x_mean, y - y_mean  # X_c, Y_c: (T, p), (T, r)
    lam, v = np.linalg.eigh(xc.T @ xc)  # G = X_c^T X_c = V diag(lam) V^T, lam ascending
    floor = max(np.finfo(float).eps * x.shape[1] * lam[-1], x.shape[0] * (NOISE_FLOOR * scale) ** 2)
    keep = lam > floor
    v, lam = v[:, keep], lam[keep]

    def solve(target):  # G^+ X_c^T target, on the kept directions
        return v @ ((v.T @ (xc.T @ target)) / lam[:, None])

    w = solve(yc)
    for _ in range(2):  # iterative refinement
        w = w + solve(yc - xc @ w)
    return w, y_mean - x_mean @ w


def heldout_r_squared(x_train, y_train, x_test, y_test, *, scale=None) -> float:
    r"""Fit ``y ≈ W^T x + b`` on the training rows (:func:`fit_probe`, which takes ``scale``), return
    :math:`R^2` on the test rows (see the module doc).

    ``x_*``: ``(T, p)``; ``y_*``: ``(T,)`` or ``(T, r)`` (a multi-output :math:`R^2` pools all
    outputs). Needs more training rows than the probe has parameters (``p + 1`` per output), so
    that a perfect training fit cannot come from counting alone. Returns a float.
    """
    x_train, x_test = _rows(x_train, name="x_train"), _rows(x_test, name="x_test")
    y_train, y_test = _rows(y_train, name="y_train"), _rows(y_test, name="y_test")
    if x_train.shape[1] != x_test.shape[1] or y_train.shape[1] != y_test.shape[1]:
        raise ValueError(
            f"train and test must have the same widths, got x {x_train.shape[1]} vs {x_test.shape[1]}, "
            f"y {y_train.shape[1]} vs {y_test.shape[1]}"
        )
    if y_test.shape[0] != x_test.shape[0]:
        raise ValueError(f"x_test and y_test must have as many rows, got {x_test.shape[0]} and {y_test.shape[0]}")
    n_params = x_train.shape[1] + 1
    if x_train.shape[0] <= n_params:
        raise ValueError(
            f"the probe has {n_params} parameters per output but only {x_train.shape[0]} training rows; "
            "use more training samples than features, or it can fit anything"
        )
    w, b = fit_probe(x_train, y_train, scale=scale)
    if not np.all(np.isfinite(x_test)):
        raise ValueError("x_test must be finite, got NaN or infinity")
    predicted = x_test @ w + b  # ŷ = W^T x + b
    total = np.sum((y_test - y_test.mean(axis=0)) ** 2)
    if total == 0:
        raise ValueError("y_test is constant, so R^2 is undefined; probe a quantity that varies")
    return float(1.0 - np.sum((predicted - y_test) ** 2) / total)


def layer_probe(states, target, *, n_train: int, center: bool = True) -> np.ndarray:
    r"""Held-out :math:`R^2` of a linear probe from every layer to a per-position target.

    ``states``: ``(n_layers + 1, batch, n, d)`` from :func:`pe_lib.run_stack` on ``batch`` sequences.
    ``target``: ``(n,)`` or ``(n, r)``, the quantity at each position (e.g. ``pos`` or ``PE(pos)``),
    the same for every sequence. The probe of each layer is fitted on the first ``n_train``
    sequences (``n_train * n`` rows) and scored on the other ``batch - n_train`` sequences, which
    hold different tokens: held-out sequences, same positions.

    ``center=True`` first subtracts from every vector the mean over its own sequence. A vector
    shared by all tokens of a sequence cannot say where a token is, but it varies from sequence to
    sequence and, when the tokens' differences are small, drowns them for a probe fitted on few
    sequences; centring is the same as giving every sequence its own intercept.
    Returns an array of shape ``(n_layers + 1,)``.
    """
    states = np.asarray(states, dtype=np.float64)
    if states.ndim != 4:
        raise ValueError(f"states must have shape (n_layers + 1, batch, n, d), got shape {states.shape}")
    _, batch, n, d = states.shape
    target = np.asarray(target, dtype=np.float64)
    if target.shape[:1] != (n,) or target.ndim > 2:
        raise ValueError(f"target must have shape ({n},) or ({n}, r), one row per position, got {target.shape}")
    n_train = check_positive_int(n_train, name="n_train")
    if n_train >= batch:
        raise ValueError(f"n_train must leave test sequences: got n_train={n_train} of batch={batch}")
    # the size of each layer's vectors before centring: what is below 1e-12 of it is rounding noise
    scales = np.sqrt(np.mean(states[:, :n_train] ** 2, axis=(1, 2, 3)))
    if center:
        states = states - states.mean(axis=2, keepdims=True)  # x_t - mean of x over its sequence
    y = np.broadcast_to(target.reshape(n, -1), (batch, n, target.reshape(n, -1).shape[1]))
    y_train, y_test = y[:n_train].reshape(n_train * n, -1), y[n_train:].reshape((batch - n_train) * n, -1)
    return np.array(
        [
            heldout_r_squared(s[:n_train].reshape(-1, d), y_train, s[n_train:].reshape(-1, d), y_test, scale=scale)
            for s, scale in zip(states, scales, strict=True)
        ]
    )


def token_spread(states) -> np.ndarray:
    r"""How different the tokens of a sequence still are, per layer:
    :math:`\lVert X - \mathbf 1\bar x^\top \rVert_F / \lVert X \rVert_F`, pooled over the batch.

    ``states``: ``(n_layers + 1, batch, n, d)`` (or ``(n_layers + 1, n, d)``). 0 means every token of
    every sequence carries the same vector (the "rank collapse" of deep attention without skip
    connections); 1 means the sequence means are zero. Returns shape ``(n_layers + 1,)``.
    """
    states = np.asarray(states, dtype=np.float64)
    if states.ndim not in (3, 4):
        raise ValueError(f"states must have shape (n_layers + 1, [batch,] n, d), got shape {states.shape}")
    states = states.reshape(states.shape[0], -1, *states.shape[-2:])
    deviation = states - states.mean(axis=2, keepdims=True)  # X - 1 x̄^T, per sequence
    total = np.sqrt(np.sum(states**2, axis=(1, 2, 3)))
    if np.any(total == 0):
        raise ValueError("a layer is all zeros, so its relative spread is undefined")
    return np.sqrt(np.sum(deviation**2, axis=(1, 2, 3))) / total
