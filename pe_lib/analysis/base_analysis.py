r"""What the base sets: slow pairs, how far apart encodings are, and where they almost repeat.

Everything here uses one identity. For every position ``p`` and offset :math:`\Delta`,

.. math::

    \lVert \mathrm{PE}(p+\Delta) - \mathrm{PE}(p) \rVert^2
    = \sum_k \big(2 - 2\cos(\omega_k\Delta)\big)
    = \sum_k 4\sin^2(\omega_k\Delta/2) = d_\mathrm{model} - 2 f(\Delta),

so the distance between two encodings depends on the offset only, never on ``p``. The sine form is
used in the code: it stays accurate when the distance is tiny (no cancellation of ``d - 2f``).
"""

from __future__ import annotations

import numpy as np

from .._validate import check_d_model, check_finite_real, check_positions, check_positive_int
from ..encodings.frequencies import frequencies, wavelengths

# Scanning millions of offsets: offsets per chunk (a few MB of float64), and the first chunk of
# first_closer_than_neighbour, which doubles from there (an early answer needs no big chunk)
_OFFSETS_PER_CHUNK = 2**20
_FIRST_CHUNK = 2**12
# Width of the fine grid b in Delta = start + a F + b (see _cos_sums)
_FINE = 1024
# The angle-addition sums and the sine form differ by rounding only: at most about 4e-11 per pair
# for offsets up to two million (both round the angle omega_k Delta, near 1e-16 relative). Offsets
# within this margin per pair (250 times that) of the best are re-evaluated with the sine form,
# so that every scan returns exactly what a scan with the sine form alone would.
_MARGIN_PER_PAIR = 1e-8


def constant_pairs(d_model: int, length: int, *, base: float = 10_000.0, max_angle: float = 2 * np.pi) -> int:
    r"""Number of pairs that turn by less than ``max_angle`` radians over ``length`` positions.

    Pair ``k`` counts if :math:`\omega_k \cdot \mathrm{length} < \mathrm{max\_angle}`. With the default
    ``max_angle = 2*pi`` this is the number of pairs whose wavelength exceeds ``length``
    (:math:`\lambda_k > L`): over a stretch of ``length`` tokens they do not complete one turn.
    Returns an int between 0 and ``d_model // 2``.
    """
    length = check_positive_int(length, name="length")
    max_angle = check_finite_real(max_angle, name="max_angle")
    if max_angle <= 0:
        raise ValueError(f"max_angle must be a positive angle in radians such as 2*pi, got {max_angle}")
    omega = frequencies(d_model, base=base)
    return int(np.count_nonzero(omega * length < max_angle))  # omega_k * L < max_angle


def squared_distance(offsets, d_model: int, *, base: float = 10_000.0) -> np.ndarray:
    r""":math:`\lVert \mathrm{PE}(p+\Delta) - \mathrm{PE}(p)\rVert^2 = \sum_k 4\sin^2(\omega_k\Delta/2)` per offset.

    The same for every ``p``. ``offsets``: an int n (offsets 0..n-1) or a 1-D array of real offsets.
    Returns shape ``(n,)``, values in ``[0, 2 d_model]``.
    """
    delta = check_positions(offsets, name="offsets")
    omega = frequencies(d_model, base=base)
    half_angle = np.multiply.outer(delta, omega) / 2.0  # omega_k * Delta / 2
    return (4.0 * np.sin(half_angle) ** 2).sum(axis=1)  # sum_k 2 - 2 cos(omega_k Delta)


def mean_squared_distance(d_model: int, max_offset: int, *, base: float = 10_000.0) -> float:
    r"""Mean of :math:`\lVert\mathrm{PE}(p+\Delta)-\mathrm{PE}(p)\rVert^2` over the offsets :math:`\Delta = 1 .. N`.

    In closed form, with :math:`N` = ``max_offset`` and Lagrange's sum of cosines
    :math:`\sum_{\Delta=1}^{N}\cos\omega\Delta = \sin(N\omega/2)\cos\big((N+1)\omega/2\big)/\sin(\omega/2)`:

    .. math::

        \frac1N\sum_{\Delta=1}^{N}\sum_k \big(2 - 2\cos\omega_k\Delta\big)
        = d_\mathrm{model} - \frac2N\sum_k \frac{\sin(N\omega_k/2)\,\cos\big((N+1)\omega_k/2\big)}{\sin(\omega_k/2)},

    :math:`O(d)` work for any ``N`` (every :math:`0 < \omega_k \le 1`, so :math:`\sin(\omega_k/2) > 0`).
    Returns a float; its square root is the root-mean-square distance of an encoding to the next ``N``.
    """
    n = check_positive_int(max_offset, name="max_offset")
    omega = frequencies(check_d_model(d_model), base=base)
    cos_sums = np.sin(n * omega / 2) * np.cos((n + 1) * omega / 2) / np.sin(omega / 2)  # sum_D cos(omega_k D)
    return float(d_model - 2.0 * cos_sums.sum() / n)


def neighbour_distance(d_model: int, *, base: float = 10_000.0) -> float:
    r"""Distance between the encodings of neighbouring positions, :math:`\lVert\mathrm{PE}(p+1)-\mathrm{PE}(p)\rVert`.

    Equal to :math:`\sqrt{\sum_k 4\sin^2(\omega_k/2)} = \sqrt{d_\mathrm{model} - 2f(1)}`, for every ``p``.
    """
    return float(np.sqrt(squared_distance(np.array([1.0]), d_model, base=base)[0]))


def _cos_sums(omega: np.ndarray, start: int, count: int) -> np.ndarray:
    r""":math:`\sum_k \cos(\omega_k\Delta)` for the integer offsets ``start .. start + count - 1``.

    With :math:`\Delta = \mathrm{start} + aF + b` (:math:`0 \le b < F`), the angle-addition identity

    .. math:: \cos\omega_k\Delta = \cos\omega_k(\mathrm{start} + aF)\,\cos\omega_k b
                                  - \sin\omega_k(\mathrm{start} + aF)\,\sin\omega_k b

    turns the sum over ``k`` for all ``(a, b)`` into two matrix products, :math:`C c^\top - S s^\top`:
    :math:`O((A + F)\,h)` cosines instead of one per offset and pair. Returns shape ``(count,)``.
    """
    fine = min(count, _FINE)  # F
    coarse = -(-count // fine)  # A, with A F >= count
    big = (start + np.arange(coarse, dtype=np.float64) * fine)[:, None] * omega  # omega_k (start + a F), (A, h)
    small = np.arange(fine, dtype=np.float64)[:, None] * omega  # omega_k b, (F, h)
    sums = np.cos(big) @ np.cos(small).T - np.sin(big) @ np.sin(small).T  # (A, F): sum_k cos(omega_k Delta)
    return sums.ravel()[:count]


def _distance_chunks(d_model: int, min_offset: int, max_offset: int, base: float, first: int | None = None):
    r"""Yield ``(delta, approximate squared distance)`` for integer offsets ``min_offset .. max_offset``.

    Chunks start with ``first`` offsets (default: ``_OFFSETS_PER_CHUNK``) and double up to
    ``_OFFSETS_PER_CHUNK``. The distances come from :func:`_cos_sums`
    (:math:`d - 2\sum_k\cos\omega_k\Delta`) and agree with :func:`squared_distance` to well within
    ``_MARGIN_PER_PAIR`` per pair; the callers re-check their candidates with the sine form.
    """
    omega = frequencies(d_model, base=base)
    start, size = min_offset, min(first or _OFFSETS_PER_CHUNK, _OFFSETS_PER_CHUNK)
    while start <= max_offset:
        count = min(size, max_offset + 1 - start)
        delta = np.arange(start, start + count, dtype=np.float64)
        yield delta, d_model - 2.0 * _cos_sums(omega, start, count)  # sum_k 2 - 2 cos(omega_k Delta)
        start, size = start + count, min(2 * size, _OFFSETS_PER_CHUNK)


def _check_offset_range(d_model, max_offset, min_offset) -> tuple[int, int, int]:
    d_model = check_d_model(d_model)
    max_offset = check_positive_int(max_offset, name="max_offset")
    min_offset = check_positive_int(min_offset, name="min_offset")
    if min_offset > max_offset:
        raise ValueError(f"min_offset must not exceed max_offset, got {min_offset} > {max_offset}")
    return d_model, max_offset, min_offset


def nearest_other_position(
    d_model: int, max_offset: int, *, base: float = 10_000.0, min_offset: int = 1
) -> tuple[int, float]:
    r"""The offset :math:`\Delta \in [\text{min\_offset}, \text{max\_offset}]` whose encoding is closest.

    Minimises :math:`\lVert\mathrm{PE}(p+\Delta)-\mathrm{PE}(p)\rVert^2` over integer offsets (the
    same for every ``p``, and for :math:`-\Delta`), scanning in chunks so that millions of offsets
    fit in memory. Ties go to the smallest offset. Returns ``(offset, squared_distance)``.
    """
    d_model, max_offset, min_offset = _check_offset_range(d_model, max_offset, min_offset)
    margin = _MARGIN_PER_PAIR * (d_model // 2)
    best_offset, best = 0, np.inf
    for delta, approx in _distance_chunks(d_model, min_offset, max_offset, base):
        # every offset that may be the minimum, evaluated exactly (sine form); ties to the smallest
        near = delta[approx <= approx.min() + margin]
        exact = squared_distance(near, d_model, base=base)
        i = int(np.argmin(exact))
        if exact[i] < best:
            best_offset, best = int(near[i]), float(exact[i])
    return best_offset, best


def first_closer_than_neighbour(d_model: int, max_offset: int, *, base: float = 10_000.0) -> int | None:
    r"""Smallest :math:`\Delta \ge 2` with :math:`\lVert\mathrm{PE}(p+\Delta)-\mathrm{PE}(p)\rVert <
    \lVert\mathrm{PE}(p+1)-\mathrm{PE}(p)\rVert`, or ``None`` if there is none up to ``max_offset``.

    A far position whose encoding is nearer than the adjacent one: the encoding's notion of
    "close" breaks down there.
    """
    d_model, max_offset, _ = _check_offset_range(d_model, max_offset, 1)
    margin = _MARGIN_PER_PAIR * (d_model // 2)
    adjacent = squared_distance(np.array([1.0]), d_model, base=base)[0]
    for delta, approx in _distance_chunks(d_model, 2, max_offset, base, first=_FIRST_CHUNK):
        near = delta[approx < adjacent + margin]  # candidates, checked exactly (sine form) in order
        closer = np.flatnonzero(squared_distance(near, d_model, base=base) < adjacent)
        if closer.size:
            return int(near[closer[0]])
    return None


def base_summary(d_model: int, length: int, *, base: float = 10_000.0) -> dict:
    r"""The numbers the base explorer shows, for one ``(d_model, base, length)``.

    Returns a dict with ``pairs`` (``d_model // 2``), ``shortest_wavelength`` (:math:`2\pi`),
    ``longest_wavelength`` (:math:`2\pi\,\mathrm{base}^{(d-2)/d}`), ``slow_pairs`` (pairs with
    wavelength > ``length``, :func:`constant_pairs`) and ``neighbour_distance``.
    """
    lam = wavelengths(d_model, base=base)
    return {
        "pairs": int(lam.size),
        "shortest_wavelength": float(lam[0]),
        "longest_wavelength": float(lam[-1]),
        "slow_pairs": constant_pairs(d_model, length, base=base),
        "neighbour_distance": neighbour_distance(d_model, base=base),
    }
