r"""Figures of the encoding table: heat maps, small multiples, and the binary-counting analogy.

Every figure is a :class:`matplotlib.figure.Figure` made without ``pyplot``: it holds no global
state, a widget can make one per slider move without leaking memory, and a notebook shows it by
ending a cell with it. Backgrounds are white so that figures stay legible in a dark page theme.

The binary analogy, stated exactly: bit :math:`b` of an integer :math:`n` is

.. math::

    \mathrm{bit}_b(n) = \lfloor n / 2^b \rfloor \bmod 2
                     = \big[\, \sin\!\big(\pi (n + \tfrac12) / 2^b\big) < 0 \,\big],

a square wave of wavelength :math:`2^{b+1}` — a thresholded sinusoid. The wavelengths of the bits
double from one bit to the next; those of the encoding grow by the factor
:math:`\mathrm{base}^{2/d_\mathrm{model}}` per pair.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from .._validate import check_finite_real, check_positions, check_positive_int

# Diverging map centred on 0: -1 blue, 0 white, +1 red. The range of every sin/cos entry is [-1, 1].
TABLE_CMAP = "RdBu_r"
POSITION_LABEL = "position $pos$"
DIMENSION_LABEL = "dimension $j$"


def new_figure(
    nrows: int = 1, ncols: int = 1, *, width: float = 6.4, height: float = 3.6, dpi: int = 100, **subplot_kw
):
    """A white ``Figure`` of ``width x height`` inches at ``dpi`` with an ``nrows x ncols`` grid of axes.

    Returns ``(fig, axes)`` with ``axes`` as ``Figure.subplots`` gives them: one ``Axes`` for a
    1 x 1 grid, else an array (pass ``squeeze=False`` for a 2-D array always). Extra keywords
    (``squeeze``, ``sharex``, ``width_ratios``, ...) go to ``Figure.subplots``. The figure uses
    matplotlib's constrained layout and is not registered with ``pyplot``; notebooks render it at
    ``dpi`` dots per inch, so a lower ``dpi`` makes a lighter PNG.
    """
    nrows = check_positive_int(nrows, name="nrows")
    ncols = check_positive_int(ncols, name="ncols")
    width = check_finite_real(width, name="width")
    height = check_finite_real(height, name="height")
    dpi = check_positive_int(dpi, name="dpi")
    if width <= 0 or height <= 0:
        raise ValueError(f"width and height must be positive (inches), got {width} x {height}")
    fig = Figure(figsize=(width, height), dpi=dpi, facecolor="white", layout="constrained")
    axes = fig.subplots(nrows, ncols, **subplot_kw)
    return fig, axes


def _check_table(table) -> np.ndarray:
    arr = np.asarray(table, dtype=np.float64)
    if arr.ndim != 2 or 0 in arr.shape:
        raise ValueError(
            f"table must be a non-empty 2-D array (positions x dimensions), got shape {arr.shape}; "
            "pass e.g. pe_lib.sinusoidal(16, 32)"
        )
    return arr


def heatmap(
    table,
    ax=None,
    *,
    title: str | None = None,
    colorbar: bool = True,
    vmin: float = -1.0,
    vmax: float = 1.0,
    cmap: str = TABLE_CMAP,
    xlabel: str = DIMENSION_LABEL,
    ylabel: str = POSITION_LABEL,
    interpolation: str = "auto",
):
    """Draw ``table`` (shape ``(n, d)``: one row per position) as a heat map, position 0 on top.

    Draws into ``ax`` or, if it is None, into a new 6.4 x 3.6 inch figure. Each cell is one entry,
    coloured on a fixed scale ``[vmin, vmax]`` (default ``[-1, 1]``) so that panels compare.
    ``interpolation`` is passed to ``imshow``: matplotlib's ``"auto"`` antialiases when there are
    fewer pixels than columns; ``"nearest"`` then drops columns and can show false stripes.
    Returns the ``AxesImage``; its ``.axes`` and ``.figure`` give the axes and the figure.
    """
    arr = _check_table(table)
    if ax is None:
        _, ax = new_figure()
    image = ax.imshow(arr, aspect="auto", interpolation=interpolation, cmap=cmap, vmin=vmin, vmax=vmax)
    n, d = arr.shape
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title if title is not None else f"{n} positions x {d} dimensions")
    if colorbar:
        ax.figure.colorbar(image, ax=ax, label="value")
    return image


def heatmap_grid(
    tables, *, ncols: int = 2, width: float = 10.0, height: float = 6.0, dpi: int = 100, interpolation: str = "auto"
) -> Figure:
    """Small multiples: one heat map per ``(title, table)`` pair, on one shared colour scale.

    ``tables`` is a sequence of ``(title, array of shape (n, d))``. The panels fill a grid of
    ``ncols`` columns row by row; unused cells are hidden; one colorbar serves all panels.
    Returns the figure.
    """
    items = list(tables)
    if not items:
        raise ValueError("tables must hold at least one (title, table) pair, got none")
    ncols = check_positive_int(ncols, name="ncols")
    nrows = -(-len(items) // ncols)  # ceil(len / ncols)
    fig, axes = new_figure(nrows, ncols, width=width, height=height, dpi=dpi, squeeze=False)
    flat = axes.ravel()
    image = None
    for ax, (title, table) in zip(flat, items, strict=False):
        image = heatmap(table, ax, title=title, colorbar=False, interpolation=interpolation)
    for ax in flat[len(items) :]:
        ax.set_visible(False)
    fig.colorbar(image, ax=list(flat[: len(items)]), label="value of PE(pos, j)", shrink=0.8)
    return fig


def binary_digits(positions, n_bits: int) -> np.ndarray:
    r"""Bits of each integer position, least significant first: shape ``(n, n_bits)``.

    Column ``b`` holds :math:`\lfloor pos / 2^b \rfloor \bmod 2` (0 or 1, as int64), so that column 0
    changes fastest, like column 0 of the encoding. ``positions`` must be non-negative integers
    (an int ``n`` means ``0 .. n-1``).
    """
    pos = check_positions(positions)
    n_bits = check_positive_int(n_bits, name="n_bits")
    if np.any(pos < 0) or np.any(pos != np.floor(pos)):
        raise ValueError("binary_digits needs non-negative integer positions, got negative or fractional ones")
    if n_bits > 62:
        raise ValueError(f"n_bits must be at most 62 (int64), got {n_bits}")
    b = np.arange(n_bits)
    return (pos.astype(np.int64)[:, None] >> b) & 1  # floor(pos / 2^b) mod 2


def bit_wave(positions, bit: int) -> np.ndarray:
    r"""The sinusoid whose sign gives bit ``bit``: :math:`s_b(x) = \sin(\pi (x + \tfrac12) / 2^b)`.

    For every integer :math:`n \ge 0`, :math:`\mathrm{bit}_b(n) = 1` exactly when
    :math:`s_b(n) < 0`; the wave has wavelength :math:`2^{b+1}`. ``positions`` may be real (to draw
    the curve). Returns shape ``(n,)``.
    """
    x = check_positions(positions)
    bit = check_positive_int(bit, name="bit", minimum=0)
    return np.sin(np.pi * (x + 0.5) / 2.0**bit)  # sin(pi (x + 1/2) / 2^b)


def zero_crossings(values) -> np.ndarray:
    """Indices ``t`` where a sampled curve changes sign between ``values[t]`` and ``values[t + 1]``.

    Zeros count with the sign of the next non-zero sample (a curve that touches 0 and turns back
    does not cross). Returns an int array, sorted.
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1:
        raise ValueError(f"values must be 1-D, got shape {v.shape}")
    sign = np.sign(v)
    nonzero = np.flatnonzero(sign)
    if nonzero.size < 2:
        return np.array([], dtype=np.int64)
    s = sign[nonzero]
    change = np.flatnonzero(s[1:] != s[:-1])  # sign flips between consecutive non-zero samples
    return nonzero[change + 1] - 1
