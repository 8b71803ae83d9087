r"""The sinusoidal positional encoding table of *Attention Is All You Need* (section 3.5).

For a position ``pos`` and pair index ``k = 0 .. d_model/2 - 1``:

.. math::

    \mathrm{PE}(pos, 2k) = \sin(pos\,\omega_k), \qquad
    \mathrm{PE}(pos, 2k+1) = \cos(pos\,\omega_k), \qquad
    \omega_k = \mathrm{base}^{-2k/d_\mathrm{model}}.

Two functions build the same table: :func:`sinusoidal_loop` with plain Python loops, as the
formula reads, and :func:`sinusoidal`, vectorized, which is the one to use.

Teaching note: how :func:`sinusoidal` avoids most sines and cosines
------------------------------------------------------------------

Evaluating ``sin`` and ``cos`` is the expensive part of the table: ``n * d_model`` of them.
Chapter 6's rotation says ``PE(p + r)`` is ``PE(p)`` rotated pair by pair by the angle ``r * omega_k``:

.. math::

    \begin{pmatrix} \sin\omega_k(p+r) \\ \cos\omega_k(p+r) \end{pmatrix}
    = M_k(r) \begin{pmatrix} \sin\omega_k p \\ \cos\omega_k p \end{pmatrix}.

For evenly spaced positions ``pos_j = start + j * step`` write ``j = q*B + r`` with
``B = ceil(sqrt(n))``. Then only ``sin``/``cos`` of the *coarse* positions ``start + q*B*step``
(about ``sqrt(n)`` of them) and of the *fine* offsets ``r*step`` (``B`` of them) are needed; every
row is one coarse row rotated by one fine angle: four multiplies and two adds per pair, written
straight into the output. In complex numbers the rotation is a single product: with
``z = sin + i cos`` (the memory order of an interleaved pair), ``M_k(r)`` is multiplication by
``exp(-i r omega_k)``, so the table is an outer product of two small complex grids.

Speed must not cost accuracy, so the small grids are computed *more* accurately than the plain
formula. The plain float64 formula rounds ``omega_k`` and then ``pos * omega_k`` to float64 before
taking the sine; each rounding moves the angle by up to ``pos * 1.1e-16``, about ``1e-11`` at
position 100 000. Here ``omega_k`` is carried as two float64 numbers, ``omega_hi + omega_lo``
(from an extended-precision exponential, good to ~1e-19), and ``pos * omega_hi`` is split exactly
into ``t_hi + t_lo`` (Dekker's error-free product), so the angle is never rounded; the sine of
``t_hi + t_lo`` follows from one more angle addition. Against the exact
``sin(pos * base**(-2k/d_model))`` the table is then off by a few units in the last place plus
about ``pos * 5e-20``: below ``1e-14`` up to position 100 000.
"""

from __future__ import annotations

import decimal
import functools
import math

import numpy as np

from .._validate import check_choice, check_d_model, check_positions, check_table_size
from .frequencies import CONVENTIONS, frequencies

LAYOUTS = ("interleaved", "split")
DTYPES = (np.float16, np.float32, np.float64)

# Evenly spaced integer positions with at least this many rows take the rotation path. Below it the
# two small grids save little, and short tables stay identical (to the last bit or two) to the
# plain formula of sinusoidal_loop.
ROTATION_MIN_POSITIONS = 64
# The rotation path needs integers of at most 26 bits on its grids, for an exact product pos * omega_hi:
# it is taken when |start| + n * |step| <= ROTATION_MAX_POSITION.
ROTATION_MAX_POSITION = 2.0**26
# Veltkamp's constant 2**27 + 1 splits a float64 into two halves of 26 significant bits.
_SPLITTER = 2.0**27 + 1.0


def _check_dtype(dtype) -> np.dtype:
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or dt.type not in DTYPES:
        raise ValueError(
            f"dtype must be numpy.float64 (default), numpy.float32 or numpy.float16, got {dtype!r}; "
            "for bfloat16 compute in float32 and round with pe_lib.round_to_bfloat16"
        )
    return dt


def sinusoidal(
    positions,
    d_model: int,
    *,
    base: float = 10_000.0,
    layout: str = "interleaved",
    convention: str = "paper",
    dtype=np.float64,
) -> np.ndarray:
    r"""Sinusoidal positional encodings, one row per position.

    ``positions``: an int ``n`` (positions ``0 .. n-1``) or a 1-D array-like of real positions
    (negative and fractional positions are allowed).

    ``layout="interleaved"`` (the paper): columns ``[sin w0 p, cos w0 p, sin w1 p, cos w1 p, ...]``.
    ``layout="split"`` (tensor2tensor, fairseq, Marian): ``[sin w0 p .. sin w_{h-1} p, cos w0 p ..]``.
    ``convention`` chooses the frequencies, see :func:`pe_lib.frequencies`.
    ``dtype`` is the precision of the whole computation, the angle ``pos * omega`` included
    (float32 and float16 show what real implementations lose; the default float64 does not).

    Accuracy (float64): the reference is the exact real number ``sin(pos * omega_k)`` with
    ``omega_k = base**(-2k/d_model)`` exactly (``base`` is the float64 value passed; 40-digit
    mpmath in the tests). For evenly spaced integer positions (an int ``n``, or e.g.
    ``numpy.arange(a, b, s)`` with integers; at least ``ROTATION_MIN_POSITIONS`` of them, with
    ``|a| + n|s| <= ROTATION_MAX_POSITION = 2**26``) the table comes from the rotation described in the module
    docstring; its error is a few 1e-16 plus ``|pos| * 5e-20`` (below ``1e-14`` up to position
    100 000). Other positions use the direct formula, whose error is about ``|pos| * 1e-16``
    (float64 rounding of ``omega_k`` and of the angle), and so do float32 and float16.

    Returns an array of shape ``(n, d_model)`` and the requested dtype.
    """
    pos = check_positions(positions)
    d_model = check_d_model(d_model)
    layout = check_choice(layout, LAYOUTS, name="layout")
    dt = _check_dtype(dtype)
    check_table_size(pos.size, d_model)
    omega = frequencies(d_model, base=base, convention=convention)  # also validates base, convention
    if dt != np.float64:
        _check_fits(pos, dt)
    progression = _integer_progression(pos) if dt == np.float64 else None
    if progression is None:
        return _direct(pos, omega, layout, dt)
    start, step = progression
    return _by_rotation(start, step, pos.size, d_model, float(base), convention, layout)


def _check_fits(pos: np.ndarray, dt: np.dtype) -> None:
    """Refuse positions that round to infinity in a low precision (float16 stops at 65504)."""
    with np.errstate(over="ignore"):
        too_big = ~np.isfinite(pos.astype(dt))
    if np.any(too_big):
        raise ValueError(
            f"positions must fit in {dt.name} (largest {float(np.finfo(dt).max):g}), got {float(pos[too_big][0])!r}; "
            "use a wider dtype"
        )


def _direct(pos: np.ndarray, omega: np.ndarray, layout: str, dt: np.dtype) -> np.ndarray:
    """The formula as written: one sine and one cosine per entry, angle in precision ``dt``."""
    half = omega.size
    # angle[p, k] = pos_p * omega_k, computed in the requested precision
    angle = np.multiply.outer(pos.astype(dt), omega.astype(dt))
    table = np.empty((pos.size, 2 * half), dtype=dt)
    if layout == "interleaved":
        np.sin(angle, out=table[:, 0::2])  # PE(pos, 2k)   = sin(pos * omega_k)
        np.cos(angle, out=table[:, 1::2])  # PE(pos, 2k+1) = cos(pos * omega_k)
    else:
        np.sin(angle, out=table[:, :half])  # PE(pos, k)         = sin(pos * omega_k)
        np.cos(angle, out=table[:, half:])  # PE(pos, k + d/2)   = cos(pos * omega_k)
    return table


def _integer_progression(pos: np.ndarray) -> tuple[float, float] | None:
    """``(start, step)`` if ``pos == start + step * arange(n)`` exactly with integer start and step
    (and enough, not too large positions for the rotation path), else ``None``. Costs O(n)."""
    if pos.size < ROTATION_MIN_POSITIONS:
        return None
    start, step = float(pos[0]), float(pos[1]) - float(pos[0])  # Python floats: overflow is inf, silently
    # every grid value (coarse positions up to one block past the end, fine offsets) is within |start| + n|step|
    small = abs(start) + pos.size * abs(step) <= ROTATION_MAX_POSITION
    if not (small and start.is_integer() and step.is_integer()):
        return None
    # integers below 2**53: start + step * j is exact, so equality means exactly evenly spaced
    if not np.array_equal(pos, start + step * np.arange(pos.size)):
        return None
    return start, step


def _by_rotation(start: float, step: float, n: int, d_model: int, base: float, convention: str,
                 layout: str) -> np.ndarray:
    """The table for positions ``start + j*step`` (``j < n``) from O(sqrt(n)) sines and cosines."""
    half = d_model // 2
    omega_hi, omega_lo = _omega_hi_lo(d_model, base, convention)  # omega_k = hi + lo, ~1e-19 relative
    fine = math.isqrt(n - 1) + 1  # B = ceil(sqrt(n)) rows per coarse block
    blocks = n // fine  # full blocks; row j = q*B + r
    # coarse: positions A_q = start + q*B*step, q = 0 .. blocks (one more than the full blocks, for the
    # last partial block); fine: offsets R_r = r*step, r = 0 .. B-1. One call evaluates both grids.
    grid = np.concatenate([start + fine * step * np.arange(blocks + 1), step * np.arange(fine)])
    sin_g, cos_g = _sin_cos_accurate(grid, omega_hi, omega_lo)
    z_coarse = np.empty((blocks + 1, half), np.complex128)
    z_coarse.real, z_coarse.imag = sin_g[: blocks + 1], cos_g[: blocks + 1]  # z = sin A + i cos A
    w_fine = np.empty((fine, half), np.complex128)
    w_fine.real, w_fine.imag = cos_g[blocks + 1 :], -sin_g[blocks + 1 :]  # w = exp(-i R) applies M_k(R)
    # (sin A + i cos A)(cos R - i sin R) = [sin A cos R + cos A sin R] + i [cos A cos R - sin A sin R]
    #                                   = sin(A + R) + i cos(A + R)
    table = np.empty((n, d_model))
    z = table.view(np.complex128) if layout == "interleaved" else np.empty((n, half), np.complex128)
    full = blocks * fine
    np.multiply(z_coarse[:blocks, None, :], w_fine[None, :, :], out=z[:full].reshape(blocks, fine, half))
    np.multiply(z_coarse[blocks], w_fine[: n - full], out=z[full:])  # the last, partial block
    if layout == "split":
        table[:, :half] = z.real  # PE(pos, k)       = sin(pos * omega_k)
        table[:, half:] = z.imag  # PE(pos, k + d/2) = cos(pos * omega_k)
    return table


def _sin_cos_accurate(x: np.ndarray, omega_hi: np.ndarray, omega_lo: np.ndarray):
    """``sin`` and ``cos`` of ``x_i * (omega_hi + omega_lo)_k``, shape ``(x.size, omega.size)``,
    without rounding the angle. ``x`` holds integers with ``|x| <= 2**26`` (26 significant bits)."""
    w_a, w_b = _split(omega_hi)  # omega_hi = w_a + w_b, with 26 and 27 significant bits
    x = x[:, None]
    t_hi = x * omega_hi  # the angle rounded to float64 ...
    # ... and exactly what that rounding lost (Dekker's product: x * w_a and x * w_b have at most
    # 52 and 53 bits, so they, and the differences below, are exact), plus the tiny x * omega_lo
    t_lo = ((x * w_a - t_hi) + x * w_b) + x * omega_lo  # angle = t_hi + t_lo, |t_lo| <= 4e-9
    s, c = np.sin(t_hi), np.cos(t_hi)
    # sin(t + e) = sin t + e cos t + O(e^2),  cos(t + e) = cos t - e sin t + O(e^2);  e^2 < 2e-17
    return s + t_lo * c, c - t_lo * s


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Veltkamp's split ``a = hi + lo``: ``hi`` has at most 26 significant bits, ``lo`` at most 27."""
    t = _SPLITTER * a
    hi = t - (t - a)
    return hi, a - hi


def _exponent_ratio(d_model: int, convention: str) -> tuple[int, int]:
    """``omega_k = base ** (-k * num / den)``: (num, den) = (2, d_model) or (1, d_model/2 - 1)."""
    return (2, d_model) if convention == CONVENTIONS[0] else (1, d_model // 2 - 1)


def _omega_extended(d_model: int, base: float, convention: str) -> tuple[np.ndarray, np.ndarray]:
    """``omega_k`` as ``hi + lo`` from numpy.longdouble (64-bit significand on x86, 113 on aarch64)."""
    num, den = _exponent_ratio(d_model, convention)
    k = np.arange(d_model // 2, dtype=np.longdouble)
    omega = np.exp(-(k * num / den) * np.log(np.longdouble(base)))  # base^(-k num/den), ~1e-19 relative
    hi = omega.astype(np.float64)
    return hi, (omega - hi).astype(np.float64)


@functools.lru_cache(maxsize=64)
def _omega_decimal(d_model: int, base: float, convention: str) -> tuple[np.ndarray, np.ndarray]:
    """``omega_k`` as ``hi + lo`` from Python's decimal module (36 digits): portable, slower, cached."""
    num, den = _exponent_ratio(d_model, convention)
    with decimal.localcontext() as ctx:
        ctx.prec = 36
        ratio = (-decimal.Decimal(num) / den * decimal.Decimal(base).ln()).exp()  # base^(-num/den)
        omega = [decimal.Decimal(1)]
        for _ in range(d_model // 2 - 1):
            omega.append(omega[-1] * ratio)  # omega_k = ratio^k: geometric, rounding errors ~1e-33
        hi = [float(w) for w in omega]
        lo = [float(w - decimal.Decimal(h)) for w, h in zip(omega, hi, strict=True)]
    hi_arr, lo_arr = np.array(hi), np.array(lo)
    hi_arr.flags.writeable = lo_arr.flags.writeable = False  # shared by the cache
    return hi_arr, lo_arr


def _extended_precision_is_good() -> bool:
    """True if numpy.longdouble has >= 64 significant bits and agrees with the decimal reference."""
    hi_x, lo_x = _omega_extended(64, 10_000.0, "paper")
    hi_d, lo_d = _omega_decimal(64, 10_000.0, "paper")
    # long double is plain float64 on Windows and macOS arm64: then the decimal path is used
    wide = np.finfo(np.longdouble).nmant >= 63
    return bool(wide and np.all(np.abs((hi_x - hi_d) + (lo_x - lo_d)) <= 1e-18 * hi_d))


_EXTENDED_OK = _extended_precision_is_good()


def _omega_hi_lo(d_model: int, base: float, convention: str) -> tuple[np.ndarray, np.ndarray]:
    """The frequencies ``omega_k = hi_k + lo_k`` to about 1e-19 relative (float64 gives 1e-16)."""
    if _EXTENDED_OK:
        return _omega_extended(d_model, base, convention)
    return _omega_decimal(d_model, base, convention)


def sinusoidal_loop(
    positions,
    d_model: int,
    *,
    base: float = 10_000.0,
    layout: str = "interleaved",
    convention: str = "paper",
) -> np.ndarray:
    """The same table as :func:`sinusoidal` (float64), written as the formula reads: two loops.

    Slow on purpose, for teaching and for checking the vectorized version.
    Returns an array of shape ``(n, d_model)``.
    """
    pos = check_positions(positions)
    d_model = check_d_model(d_model)
    layout = check_choice(layout, LAYOUTS, name="layout")
    check_table_size(pos.size, d_model)
    omega = frequencies(d_model, base=base, convention=convention)
    half = d_model // 2
    table = np.zeros((pos.size, d_model))
    for row, p in enumerate(pos):
        for k in range(half):
            angle = p * omega[k]
            sin_col, cos_col = (2 * k, 2 * k + 1) if layout == "interleaved" else (k, k + half)
            table[row, sin_col] = math.sin(angle)
            table[row, cos_col] = math.cos(angle)
    return table
