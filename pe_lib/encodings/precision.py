r"""What low-precision arithmetic does to the sinusoidal encoding.

A framework that builds the table "in float16" stores the positions and the frequencies in float16
and rounds the angle :math:`pos\cdot\omega_k` to float16 before taking its sine. The sine itself is
harmless (its value lies in [-1, 1], where float16 is fine-grained); the angle is not: a number near
:math:`2^e` is stored with a spacing of :math:`2^{e-m}` (``m`` stored significand bits), so at large
positions the angle can be off by whole radians.

numpy has float16 and float32 but no bfloat16, so :func:`round_to_bfloat16` emulates it: bfloat16 is
the upper half of a float32 bit pattern (1 sign, 8 exponent, 7 significand bits), and rounding a
float32 to it is round-to-nearest-even on the 16 bits that are dropped.

Precisions are named by strings: ``"float64"``, ``"float32"``, ``"float16"``, ``"bfloat16"``.
"""

from __future__ import annotations

import functools

import numpy as np

from .._validate import check_choice, check_d_model, check_positions, check_table_size
from .frequencies import frequencies
from .sinusoidal import LAYOUTS

PRECISIONS = ("float64", "float32", "float16", "bfloat16")
# stored significand bits (without the implicit leading 1)
_STORED_BITS = {"float64": 52, "float32": 23, "float16": 10, "bfloat16": 7}
# encoding_error works through its table in chunks of about this many angles (half a MB of float64)
_ANGLES_PER_CHUNK = 2**16


def round_to_bfloat16(x) -> np.ndarray:
    r"""Round to the nearest bfloat16 value, ties to even; returns float32 holding bfloat16 values.

    ``x`` is first converted to float32 (a float64 argument is therefore rounded twice, as when a
    float64 tensor is cast to float32 and then to bfloat16). On the float32 bit pattern ``b``:

    .. math:: b' = \bigl(b + \mathtt{0x7FFF} + (\lfloor b / 2^{16}\rfloor \bmod 2)\bigr) \;\&\; \mathtt{0xFFFF0000}

    i.e. add just under half a bfloat16 unit, plus one if the kept last bit is odd (ties to even),
    and drop the low 16 bits. A carry that runs into the exponent is exactly the right result
    (the next binade, or infinity beyond the largest finite bfloat16, 3.3895314e38). Infinities and
    signed zeros are kept; NaN stays NaN (the addition would otherwise turn some NaNs into infinity).
    Returns a float32 array of the same shape as ``x``.
    """
    x32 = np.asarray(x, dtype=np.float32)
    bits = x32.view(np.uint32).astype(np.uint64)  # uint64: the addition cannot wrap around
    keep_lsb = (bits >> 16) & 1  # last bit that bfloat16 keeps
    rounded = (bits + 0x7FFF + keep_lsb) & 0xFFFF0000  # round half to even on the dropped 16 bits
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x32), x32, out)


def round_to_precision(x, precision: str) -> np.ndarray:
    """Round ``x`` to the nearest value of ``precision`` and return it as float64 (same shape).

    ``"float64"`` returns ``x`` unchanged; ``"float32"``/``"float16"`` use numpy's correctly
    rounded casts; ``"bfloat16"`` uses :func:`round_to_bfloat16`.
    """
    precision = check_choice(precision, PRECISIONS, name="precision")
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore"):  # beyond the largest finite value the result is +-inf, as in IEEE
        if precision == "bfloat16":
            return round_to_bfloat16(x).astype(np.float64)
        return x.astype(precision).astype(np.float64)


def integer_limit(precision: str) -> int:
    r"""Largest ``N`` such that every integer ``0 .. N`` is exactly representable: :math:`2^{m+1}`.

    ``m`` is the number of stored significand bits (52, 23, 10, 7); ``N + 1`` is not representable.
    """
    precision = check_choice(precision, PRECISIONS, name="precision")
    return 2 ** (_STORED_BITS[precision] + 1)


def largest_finite(precision: str) -> float:
    """The largest finite value of ``precision`` (bfloat16: bit pattern 0x7F7F, about 3.3895e38)."""
    precision = check_choice(precision, PRECISIONS, name="precision")
    if precision == "bfloat16":
        return float(np.array(0x7F7F0000, dtype=np.uint32).view(np.float32))
    return float(np.finfo(precision).max)


def distinct_positions(n: int, precision: str) -> int:
    """How many different values the integer positions ``0 .. n-1`` take once rounded to ``precision``.

    Two positions that round to the same value get identical encodings in every column.
    """
    pos = check_positions(n, name="n")
    return int(np.unique(round_to_precision(pos, precision)).size)


def low_precision_angles(positions, d_model: int, precision: str, *, base: float = 10_000.0,
                         convention: str = "paper") -> np.ndarray:
    r"""Angles as computed in ``precision``: :math:`\mathrm{rd}(\mathrm{rd}(pos)\,\mathrm{rd}(\omega_k))`.

    ``rd`` rounds to ``precision``: positions and frequencies are stored in it, and their product
    (exact in float64 for the 16- and 32-bit formats) is rounded once, as a hardware multiply does.
    Returns float64 of shape ``(n, d_model // 2)``. Positions that overflow ``precision`` (float16
    stops at 65504) raise ``ValueError``.
    """
    pos = check_positions(positions)
    d_model = check_d_model(d_model)
    precision = check_choice(precision, PRECISIONS, name="precision")
    check_table_size(pos.size, d_model // 2)
    omega = frequencies(d_model, base=base, convention=convention)
    product = np.multiply.outer(round_to_precision(pos, precision), round_to_precision(omega, precision))
    theta = round_to_precision(product, precision)  # rd(rd(pos) * rd(omega_k))
    if not np.all(np.isfinite(theta)):
        largest = largest_finite(precision)
        raise ValueError(
            f"positions up to {float(np.max(np.abs(pos)))!r} overflow {precision} (largest finite value "
            f"about {largest:.5g}): the angles become infinite; ask for smaller positions"
        )
    return theta


def angle_error(positions, d_model: int, precision: str, *, base: float = 10_000.0,
                convention: str = "paper") -> np.ndarray:
    r"""``|low_precision_angles - pos*omega_k|`` in radians, shape ``(n, d_model // 2)``."""
    pos = check_positions(positions)
    exact = np.multiply.outer(pos, frequencies(d_model, base=base, convention=convention))
    return np.abs(low_precision_angles(pos, d_model, precision, base=base, convention=convention) - exact)


def low_precision_sinusoidal(positions, d_model: int, *, precision: str = "float32",
                             angle_precision: str | None = None, base: float = 10_000.0,
                             layout: str = "interleaved", convention: str = "paper") -> np.ndarray:
    r"""The sinusoidal table as a framework working in ``precision`` produces it, as float64 values.

    The angles come from :func:`low_precision_angles` in ``angle_precision`` (default: the same as
    ``precision``); their sines and cosines are rounded to ``precision``:
    :math:`\mathrm{PE}(pos, 2k) = \mathrm{rd}(\sin \theta_k)` with
    :math:`\theta_k = \mathrm{rd}_a(\mathrm{rd}_a(pos)\,\mathrm{rd}_a(\omega_k))`.
    ``angle_precision="float64"`` is the fix: compute the angles in float64, cast only the result.
    Returns shape ``(n, d_model)``.
    """
    precision = check_choice(precision, PRECISIONS, name="precision")
    angle_precision = precision if angle_precision is None else angle_precision
    layout = check_choice(layout, LAYOUTS, name="layout")
    theta = low_precision_angles(positions, d_model, angle_precision, base=base, convention=convention)
    sin, cos = round_to_precision(np.sin(theta), precision), round_to_precision(np.cos(theta), precision)
    if layout == "interleaved":
        table = np.empty((theta.shape[0], 2 * theta.shape[1]))
        table[:, 0::2], table[:, 1::2] = sin, cos  # [sin w0 p, cos w0 p, sin w1 p, ...]
        return table
    return np.hstack([sin, cos])  # [sin w0 p .. sin w_{h-1} p, cos w0 p .. cos w_{h-1} p]


def encoding_error(positions, d_model: int, precision: str, *, angle_precision: str | None = None,
                   base: float = 10_000.0, convention: str = "paper") -> np.ndarray:
    r"""Worst error of each encoding vector: :math:`\max_j |\widetilde{\mathrm{PE}}(pos, j) - \mathrm{PE}(pos, j)|`.

    :math:`\widetilde{\mathrm{PE}}` is :func:`low_precision_sinusoidal` (same arguments), PE the float64
    table: per pair, :math:`\max\big(|\mathrm{rd}(\sin\tilde\theta_k) - \sin\theta_k|,\,
    |\mathrm{rd}(\cos\tilde\theta_k) - \cos\theta_k|\big)` with :math:`\theta_k = pos\,\omega_k`.
    Returns shape ``(n,)``; an entry can approach 2 (a sine of the wrong sign). See
    :func:`encoding_errors` for several formats at once.
    """
    precision = check_choice(precision, PRECISIONS, name="precision")
    angle_precision = precision if angle_precision is None else angle_precision
    fmt = (precision, angle_precision)
    return encoding_errors(positions, d_model, [fmt], base=base, convention=convention)[fmt]


def encoding_errors(positions, d_model: int, formats, *, base: float = 10_000.0,
                    convention: str = "paper") -> dict[tuple[str, str], np.ndarray]:
    r""":func:`encoding_error` for several ``(precision, angle_precision)`` pairs, sharing the work.

    ``formats``: a sequence of pairs such as ``[("float16", "float16"), ("float16", "float32")]``.
    The float64 sines and cosines are computed once, the low-precision angles and their sines once
    per ``angle_precision`` (for float16 and bfloat16 angles, by looking up the sines of all 65536
    16-bit values, :func:`_sin_cos_of_16_bit_values`), and everything in chunks of positions that stay
    in cache. With ``angle_precision="float64"`` the angles are the exact ones, :math:`\tilde\theta = \theta`.
    Returns ``{(precision, angle_precision): worst error per position, shape (n,)}``.
    """
    pos = check_positions(positions)
    formats = _check_formats(formats)
    omega = frequencies(d_model, base=base, convention=convention)
    check_table_size(pos.size, omega.size)
    rows = max(1, _ANGLES_PER_CHUNK // omega.size)
    worst = {fmt: np.zeros(pos.size) for fmt in formats}
    for start in range(0, pos.size, rows):
        p = pos[start:start + rows]
        theta = np.multiply.outer(p, omega)  # theta_k = pos * omega_k (float64)
        exact = np.sin(theta), np.cos(theta)
        for angle_precision in dict.fromkeys(a for _, a in formats):  # each angle format once, in order
            if angle_precision == "float64":  # rd(rd(pos) rd(omega_k)) is theta itself
                low = exact
            else:
                low = _sin_cos(low_precision_angles(p, d_model, angle_precision, base=base, convention=convention),
                               angle_precision)
            for precision in (q for q, a in formats if a == angle_precision):
                errors = [np.abs(round_to_precision(lo, precision) - ex).max(axis=1)  # |rd(sin theta~) - sin theta|
                          for lo, ex in zip(low, exact, strict=True)]
                worst[precision, angle_precision][start:start + rows] = np.maximum(*errors)
    return worst


def _check_formats(formats) -> list[tuple[str, str]]:
    try:
        pairs = [tuple(f) for f in formats]
    except TypeError:
        pairs = None
    if not pairs or any(len(f) != 2 for f in pairs):
        raise ValueError(f"formats must be a non-empty sequence of (precision, angle_precision) pairs, got {formats!r}")
    for precision, angle_precision in pairs:
        check_choice(precision, PRECISIONS, name="precision")
        check_choice(angle_precision, PRECISIONS, name="angle_precision")
    return list(dict.fromkeys(pairs))


@functools.cache
def _sin_cos_of_16_bit_values(precision: str) -> tuple[np.ndarray, np.ndarray]:
    """``sin`` and ``cos`` (float64) of every float16 or bfloat16 value, indexed by its 16-bit pattern.

    Infinities and NaNs give NaN; the angles looked up are finite (:func:`low_precision_angles` checks).
    """
    bits = np.arange(2**16, dtype=np.uint32)
    with np.errstate(invalid="ignore"):  # the NaN patterns
        if precision == "float16":
            values = bits.astype(np.uint16).view(np.float16).astype(np.float64)
        else:  # bfloat16: the upper half of a float32
            values = (bits << 16).view(np.float32).astype(np.float64)
        return np.sin(values), np.cos(values)


def _sin_cos(theta: np.ndarray, precision: str) -> tuple[np.ndarray, np.ndarray]:
    """``(sin theta, cos theta)`` in float64 for angles that are values of ``precision``."""
    if precision == "float16":
        index = theta.astype(np.float16).view(np.uint16)  # exact: theta holds float16 values
    elif precision == "bfloat16":
        index = (theta.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)  # the bfloat16 bits
    else:
        return np.sin(theta), np.cos(theta)
    sin_table, cos_table = _sin_cos_of_16_bit_values(precision)
    return sin_table[index], cos_table[index]
