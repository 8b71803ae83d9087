r"""The sinusoidal positional encoding table of *Attention Is All You Need* (section 3.5).

For a position ``pos`` and pair index ``k = 0 .. d_model/2 - 1``:

.. math::

    \mathrm{PE}(pos, 2k) = \sin(pos\,\omega_k), \qquad
    \mathrm{PE}(pos, 2k+1) = \cos(pos\,\omega_k), \qquad
    \omega_k = \mathrm{base}^{-2k/d_\mathrm{model}}.

Two functions build the same table: :func:`sinusoidal_loop` with plain Python loops, as the
formula reads, and :func:`sinusoidal`, vectorized, which is the one to use.
"""

from __future__ import annotations

import math

import numpy as np

from ._validate import check_choice, check_d_model, check_positions, check_table_size
from .frequencies import frequencies

LAYOUTS = ("interleaved", "split")
DTYPES = (np.float16, np.float32, np.float64)


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

    Returns an array of shape ``(n, d_model)`` and the requested dtype.
    """
    pos = check_positions(positions)
    d_model = check_d_model(d_model)
    layout = check_choice(layout, LAYOUTS, name="layout")
    dt = _check_dtype(dtype)
    check_table_size(pos.size, d_model)
    omega = frequencies(d_model, base=base, convention=convention)
    half = d_model // 2
    # angle[p, k] = pos_p * omega_k, computed in the requested precision
    angle = np.multiply.outer(pos.astype(dt), omega.astype(dt))
    table = np.empty((pos.size, d_model), dtype=dt)
    if layout == "interleaved":
        np.sin(angle, out=table[:, 0::2])  # PE(pos, 2k)   = sin(pos * omega_k)
        np.cos(angle, out=table[:, 1::2])  # PE(pos, 2k+1) = cos(pos * omega_k)
    else:
        np.sin(angle, out=table[:, :half])  # PE(pos, k)         = sin(pos * omega_k)
        np.cos(angle, out=table[:, half:])  # PE(pos, k + d/2)   = cos(pos * omega_k)
    return table


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
