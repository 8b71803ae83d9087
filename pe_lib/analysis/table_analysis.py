r"""Four looks at any position table :math:`P \in \mathbb R^{n \times d}` (row :math:`p`: the vector of
position :math:`p`), used on a real model's table in chapters 13 and 20.

* :func:`cosine_profile`: the mean cosine of rows :math:`\Delta` apart,
  :math:`c(\Delta) = \frac{1}{n-\Delta}\sum_p \cos(P_p, P_{p+\Delta})` (the diagonals of the similarity matrix);
* :func:`dot_by_offset`: the same for the dot product,
  :math:`g(\Delta) = \frac{1}{n-\Delta}\sum_p P_p\cdot P_{p+\Delta}`
  (for the sinusoidal table it is :func:`pe_lib.dot_profile` exactly, whatever :math:`p`);
* :func:`column_frequencies`: the strongest frequency of every column :math:`P_{:,k}` along the positions
  (argmax of :math:`|\mathrm{DFT}|` after removing the column's mean), in cycles per position;
* :func:`principal_components`: the rows, centred, projected on their top principal directions (SVD of
  :math:`P - \bar P`), with the share of the variance each direction holds; :func:`principal_directions`
  gives the directions themselves and :func:`components_for_variance` how many hold a given share;
* :func:`position_regression_error`: whether a row tells its position linearly, as Wang & Chen (2020)
  ask of BERT's and GPT-2's tables: a least-squares map :math:`\hat p = P_p w + b` fitted on four fifths
  of the rows, scored by :math:`|\mathrm{round}(\hat p) - p|` on the fifth left out;
  :func:`position_regression_splits` repeats it over many random splits, optionally on principal components
  fitted to each fold's training rows alone.

Numpy only; shapes are given with each function.
"""

from __future__ import annotations

import numpy as np

from .probe import fit_probe


def check_table(table) -> np.ndarray:
    """``table`` as a float64 ``(n, d)`` array with ``n >= 2`` finite rows, else ``ValueError``."""
    table = np.asarray(table, dtype=np.float64)
    if table.ndim != 2 or table.shape[0] < 2 or table.shape[1] < 1:
        raise ValueError(f"a position table is a 2-D array (positions, width) with >= 2 rows, got shape {table.shape}")
    if not np.all(np.isfinite(table)):
        raise ValueError("the position table has non-finite entries")
    return table


def dot_by_offset(table) -> np.ndarray:
    r""":math:`g(\Delta) = \mathrm{mean}_p\, P_p \cdot P_{p+\Delta}` for :math:`\Delta = 0 \dots n-1`,
    shape ``(n,)``."""
    table = check_table(table)
    gram = table @ table.T  # P_p . P_q
    return np.array([np.diagonal(gram, delta).mean() for delta in range(table.shape[0])])


def cosine_profile(table) -> np.ndarray:
    r""":math:`c(\Delta) = \mathrm{mean}_p \cos(P_p, P_{p+\Delta})` for :math:`\Delta = 0 \dots n-1`, shape ``(n,)``;
    ``ValueError`` if a row is zero (no direction)."""
    table = check_table(table)
    norms = np.linalg.norm(table, axis=1)
    if np.any(norms == 0):
        raise ValueError("a row of the table is zero: its cosine with other rows is undefined")
    return dot_by_offset(table / norms[:, None])


def column_frequencies(table) -> np.ndarray:
    r"""The strongest frequency :math:`f_k` (cycles per position, in :math:`[0, 1/2]`) of every column, shape ``(d,)``:
    :math:`f_k = \arg\max_{f > 0} |\sum_p (P_{pk} - \bar P_k) e^{-2\pi i f p}|` over :math:`f = 1/n, 2/n, \dots`."""
    table = check_table(table)
    spectrum = np.abs(np.fft.rfft(table - table.mean(axis=0), axis=0))[1:]  # |DFT| at f = 1/n, 2/n, ...
    return (1 + spectrum.argmax(axis=0)) / table.shape[0]


def principal_components(table, k: int = 3) -> tuple[np.ndarray, np.ndarray]:
    r"""``(coordinates, shares)``: the centred rows :math:`P - \bar P` on their top ``k`` principal directions,
    ``(n, k)``, and the share of the total variance of each of the ``min(n, d)`` directions, ``(min(n, d),)``
    (from the singular values :math:`s`: :math:`s_j^2 / \sum s^2`). Signs follow numpy's SVD."""
    table = check_table(table)
    _check_k(k, table)
    u, s, _ = _centred_svd(table)
    return u[:, :k] * s[:k], s**2 / np.sum(s**2)


def _centred_svd(table: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """numpy's thin SVD of the centred rows, :math:`P - \\bar P = U \\operatorname{diag}(s) V^\\top`."""
    return np.linalg.svd(table - table.mean(axis=0), full_matrices=False)


def _check_k(k, table: np.ndarray) -> None:
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not 1 <= k <= min(table.shape):
        raise ValueError(f"k must be an integer between 1 and {min(table.shape)}, got {k!r}")


def principal_directions(table, k: int = 3) -> tuple[np.ndarray, np.ndarray]:
    r"""``(directions, shares)``: the top ``k`` principal directions of the centred rows as unit rows, ``(k, d)``
    (the first ``k`` rows of :math:`V^\top` in :math:`P - \bar P = U \operatorname{diag}(s) V^\top`, largest
    variance first), and the share of the total variance of each of the ``min(n, d)`` directions,
    ``(min(n, d),)``, as :func:`principal_components` gives it. ``(P - P.mean(0)) @ directions.T`` are
    :func:`principal_components`' coordinates; ``x @ directions.T`` are any vectors' components along them
    (chapter 2 measures how much of a word vector lies in the position table's directions). Signs follow
    numpy's SVD."""
    table = check_table(table)
    _check_k(k, table)
    _, s, vt = _centred_svd(table)
    return vt[:k], s**2 / np.sum(s**2)


def components_for_variance(shares, fraction: float) -> int:
    r"""The fewest leading directions that hold at least ``fraction`` of the variance: the smallest :math:`k` with
    :math:`\sum_{j<k} \mathrm{shares}_j \ge` ``fraction``, for ``shares`` as :func:`principal_components` returns
    them (non-negative, largest first, summing to 1) and ``fraction`` in :math:`(0, 1]`. Rounding in the sum
    never makes it exceed ``len(shares)``."""
    shares = np.asarray(shares, dtype=np.float64)
    if shares.ndim != 1 or shares.size == 0 or not np.all(np.isfinite(shares)) or np.any(shares < 0):
        raise ValueError(f"shares must be a non-empty 1-D array of finite non-negative numbers, got {shares!r}")
    if abs(shares.sum() - 1) > 1e-9:
        raise ValueError(f"shares must sum to 1 (each direction's share of the variance), got sum {shares.sum()!r}")
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float, np.floating)) or not 0 < fraction <= 1:
        raise ValueError(f"fraction must be a number in (0, 1], got {fraction!r}")
    return int(min(np.searchsorted(np.cumsum(shares), fraction) + 1, shares.size))


def position_regression_error(table, *, seed: int, folds: int = 5) -> tuple[float, float]:
    r"""Wang & Chen's (2020) test of absolute position, as in their released ``absolute.py``
    (github.com/MiuLab/PE-Study): the rows are shuffled (``numpy.random.default_rng(seed)``) and cut into
    ``folds`` parts; for each part a least-squares map :math:`\hat p = P_p w + b` (:func:`pe_lib.fit_probe`)
    is fitted on the other rows, and every row's prediction is rounded to a whole position.

    Returns ``(held_out, fitted)``: the mean :math:`|\mathrm{round}(\hat p) - p|` over the rows left out,
    and over the rows the map was fitted to, each averaged over the folds (in positions). A table whose
    rows are a linear function of the position scores ``(0.0, 0.0)``; with as many columns as rows a map
    can fit any rows, so only ``held_out`` says whether the position is really there.
    ``folds`` from 2 to the number of rows."""
    table = check_table(table)
    n = table.shape[0]
    if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or not 2 <= folds <= n:
        raise ValueError(f"folds must be a whole number from 2 to the number of rows ({n}), got {folds!r}")
    order = np.random.default_rng(seed).permutation(n)
    held_out, fitted = [], []
    for f in range(folds):
        test = order[f::folds]  # every folds-th row of the shuffled order
        train = np.setdiff1d(order, test)
        w, b = fit_probe(table[train], train.astype(np.float64))
        guess = np.round((table @ w + b).ravel())  # (n,) every row's predicted position
        held_out.append(np.abs(guess[test] - test).mean())
        fitted.append(np.abs(guess[train] - train).mean())
    return float(np.mean(held_out)), float(np.mean(fitted))


def position_regression_splits(table, components=(None,), *, splits: int = 200, folds: int = 5) -> np.ndarray:
    r"""Wang & Chen's test of absolute position (:func:`position_regression_error`) over ``splits`` random
    five-fold (``folds``-fold) splits, optionally on principal components fitted to the training rows only.

    Split ``s`` shuffles the rows with ``numpy.random.default_rng(s)`` and holds out every ``folds``-th row of
    the shuffled order in turn, as :func:`position_regression_error` with ``seed=s`` does. In each fold, with
    the training rows' mean :math:`\bar x`, their centred rows :math:`X_c` and positions' mean :math:`\bar p`,
    :math:`G = X_c^\top X_c = V \Lambda V^\top` (largest :math:`\lambda` first), the map is

    .. math::

        \hat p(x) = \bar p + (x - \bar x)\, V_k \Lambda_k^{-1} V_k^\top X_c^\top (p - \bar p),

    least squares on the first ``k`` principal components of the *training* rows (principal component
    regression: the held-out rows take no part in choosing the directions). ``k = None`` keeps every
    direction with :math:`\lambda > \varepsilon\, d\, \lambda_\max`, above the rounding error of ``G``
    (the rule of :func:`pe_lib.fit_probe`): ordinary least squares on all ``d`` columns with an intercept,
    the minimum-norm map when the training rows do not determine it. In singular values of :math:`X_c`
    the cut is at :math:`\sqrt{\varepsilon d}` (about ``3e-7`` for ``d = 384``) of the largest, where
    ``numpy.linalg.lstsq`` cuts at :math:`\varepsilon \max(t, d)`: a direction between the two is dropped
    here. Predictions are rounded to whole positions.

    ``table``: ``(n, d)``; ``components``: a sequence of ``None`` or whole numbers from 1 to
    ``min(d, t - 1)``, ``t`` the rows of the smallest training set (:math:`n - \lceil n / \text{folds}\rceil`).
    Returns ``(len(components), splits, 2)``: for each setting and split, the mean
    :math:`|\mathrm{round}(\hat p) - p|` over the held-out rows and over the fitted rows, each averaged over
    the folds. One eigendecomposition per fold serves every setting. Costs ``splits * folds``
    eigendecompositions of a ``(d, d)`` matrix."""
    table = check_table(table)
    n, d = table.shape
    if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or not 2 <= folds <= n:
        raise ValueError(f"folds must be a whole number from 2 to the number of rows ({n}), got {folds!r}")
    if isinstance(splits, bool) or not isinstance(splits, (int, np.integer)) or splits < 1:
        raise ValueError(f"splits must be a whole number >= 1, got {splits!r}")
    fitted_rows = n - -(-n // folds)  # the smallest training set: n minus the largest fold
    if fitted_rows < 2:
        raise ValueError(f"the table has {n} rows: a {folds}-fold split fits on only {fitted_rows}, and a fit "
                         "needs at least 2")
    components = tuple(components) if isinstance(components, (list, tuple)) else None
    limit = min(d, fitted_rows - 1)  # the centred training rows span at most fitted_rows - 1 directions
    if not components or not all(k is None or (isinstance(k, (int, np.integer)) and not isinstance(k, bool)
                                               and 1 <= k <= limit) for k in components):
        raise ValueError(f"components must be a non-empty list or tuple of None or whole numbers from 1 to {limit} "
                         f"(the width {d}, and one less than the {fitted_rows} rows of the smallest training "
                         "set), got " + repr(components))
    positions = np.arange(n, dtype=np.float64)
    masks = np.zeros((splits * folds, n), dtype=bool)  # (splits * folds, n): True on a fold's training rows
    for s in range(splits):
        order = np.random.default_rng(s).permutation(n)
        for f in range(folds):
            masks[s * folds + f] = True
            masks[s * folds + f, order[f::folds]] = False
    errors = np.empty((len(components), splits * folds, 2))
    chunk = max(1, 4_000_000 // (n * d))  # folds at a time: a few (chunk, n, d) arrays of about 32 MB
    for start in range(0, len(masks), chunk):
        train = masks[start:start + chunk]  # (c, n)
        weight = train / train.sum(axis=1, keepdims=True)  # (c, n): each training row 1/t
        mean_x, mean_p = weight @ table, weight @ positions  # (c, d), (c,)
        centred = table[None] - mean_x[:, None]  # (c, n, d): every row, centred on the training mean
        fit_on = centred * train[..., None]  # X_c with the held-out rows zeroed
        gram = fit_on.transpose(0, 2, 1) @ fit_on  # (c, d, d)
        lam, vec = np.linalg.eigh(gram)  # ascending
        lam, vec = lam[:, ::-1], vec[:, :, ::-1]  # largest first
        target = ((positions - mean_p[:, None])[:, None] @ fit_on @ vec)[:, 0]  # (c, d): V^T X_c^T (p - p̄)
        for i, k in enumerate(components):
            keep = lam > np.finfo(np.float64).eps * d * lam[:, :1] if k is None else np.arange(d) < k
            coef = np.where(keep, target / np.where(keep, lam, 1.0), 0.0)  # (c, d): Λ_k^{-1} V_k^T X_c^T (p - p̄)
            beta = (vec @ coef[..., None])[..., 0]  # (c, d): the map V_k Λ_k^{-1} V_k^T X_c^T (p - p̄) in the columns
            guess = np.round(mean_p[:, None] + (centred @ beta[..., None])[..., 0])  # (c, n)
            miss = np.abs(guess - positions)
            errors[i, start:start + chunk, 0] = (miss * ~train).sum(axis=1) / (~train).sum(axis=1)
            errors[i, start:start + chunk, 1] = (miss * train).sum(axis=1) / train.sum(axis=1)
    return errors.reshape(len(components), splits, folds, 2).mean(axis=2)
