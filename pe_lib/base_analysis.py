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

from ._validate import check_d_model, check_finite_real, check_positions, check_positive_int
from .frequencies import frequencies, wavelengths

# about 4 million angles per chunk (32 MB of float64) when scanning millions of offsets
_ANGLES_PER_CHUNK = 2**22


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


def neighbour_distance(d_model: int, *, base: float = 10_000.0) -> float:
    r"""Distance between the encodings of neighbouring positions, :math:`\lVert\mathrm{PE}(p+1)-\mathrm{PE}(p)\rVert`.

    Equal to :math:`\sqrt{\sum_k 4\sin^2(\omega_k/2)} = \sqrt{d_\mathrm{model} - 2f(1)}`, for every ``p``.
    """
    return float(np.sqrt(squared_distance(np.array([1.0]), d_model, base=base)[0]))


def _distance_chunks(d_model: int, min_offset: int, max_offset: int, base: float):
    """Yield ``(delta, squared distance)`` for integer offsets ``min_offset .. max_offset`` in chunks."""
    chunk = max(1, _ANGLES_PER_CHUNK // (d_model // 2))
    for start in range(min_offset, max_offset + 1, chunk):
        delta = np.arange(start, min(start + chunk, max_offset + 1), dtype=np.float64)
        yield delta, squared_distance(delta, d_model, base=base)


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
    best_offset, best = 0, np.inf
    for delta, dist2 in _distance_chunks(d_model, min_offset, max_offset, base):
        i = int(np.argmin(dist2))
        if dist2[i] < best:
            best_offset, best = int(delta[i]), float(dist2[i])
    return best_offset, best


def first_closer_than_neighbour(d_model: int, max_offset: int, *, base: float = 10_000.0) -> int | None:
    r"""Smallest :math:`\Delta \ge 2` with :math:`\lVert\mathrm{PE}(p+\Delta)-\mathrm{PE}(p)\rVert <
    \lVert\mathrm{PE}(p+1)-\mathrm{PE}(p)\rVert`, or ``None`` if there is none up to ``max_offset``.

    A far position whose encoding is nearer than the adjacent one: the encoding's notion of
    "close" breaks down there.
    """
    d_model, max_offset, _ = _check_offset_range(d_model, max_offset, 1)
    adjacent = squared_distance(np.array([1.0]), d_model, base=base)[0]
    for delta, dist2 in _distance_chunks(d_model, 2, max_offset, base):
        closer = np.flatnonzero(dist2 < adjacent)
        if closer.size:
            return int(delta[closer[0]])
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
