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

import numpy as np

from ._validate import check_choice, check_d_model, check_positions, check_table_size
from .frequencies import frequencies
from .sinusoidal import LAYOUTS

PRECISIONS = ("float64", "float32", "float16", "bfloat16")
# stored significand bits (without the implicit leading 1)
_STORED_BITS = {"float64": 52, "float32": 23, "float16": 10, "bfloat16": 7}


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
    table. Returns shape ``(n,)``; an entry can approach 2 (a sine of the wrong sign).
    """
    pos = check_positions(positions)
    low = low_precision_sinusoidal(pos, d_model, precision=precision, angle_precision=angle_precision,
                                   base=base, convention=convention)
    theta = np.multiply.outer(pos, frequencies(d_model, base=base, convention=convention))
    exact = np.empty_like(low)
    exact[:, 0::2], exact[:, 1::2] = np.sin(theta), np.cos(theta)
    return np.abs(low - exact).max(axis=1, initial=0.0)
