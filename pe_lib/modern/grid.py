r"""The 2-D sine-cosine position table of vision Transformers (MAE, DiT): half the width per axis.

An image cut into a ``grid_h`` x ``grid_w`` grid of patches becomes a sequence of
``grid_h * grid_w`` tokens in row-major order: token ``t = i * grid_w + j`` is the patch in row
``i`` and column ``j``. MAE's ``get_2d_sincos_pos_embed`` (copied by DiT and into diffusers) gives it

.. math::

    \mathrm{PE}_{2D}(i, j) = \big[\,\mathrm{PE}_{1D}(j) \;\big|\; \mathrm{PE}_{1D}(i)\,\big],

two 1-D tables of width :math:`d_\text{model}/2`, each in the split layout
:math:`[\sin j\omega_k \,|\, \cos j\omega_k]` with :math:`\omega_k = \mathrm{base}^{-2k/(d_\text{model}/2)}`,
:math:`k = 0 .. d_\text{model}/4 - 1`. The first half encodes the **column** ``j``: the source builds its
grid with ``np.meshgrid(grid_w, grid_h)``, whose first output varies along a row (the column index),
and feeds that first; its comment "use half of dimensions to encode grid_h" names the variable,
not the image axis.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_d_model, check_positive_int, check_table_size
from ..encodings.sinusoidal import sinusoidal


def sinusoidal_2d(grid_h: int, grid_w: int, d_model: int, *, base: float = 10_000.0) -> np.ndarray:
    r"""MAE's / DiT's 2-D sin-cos table for a ``grid_h`` x ``grid_w`` patch grid, one row per patch.

    Row ``t = i * grid_w + j`` (row-major, no class token) is
    ``[sin jω_0 .. sin jω_{q-1}, cos jω_0 .. cos jω_{q-1}, sin iω_0 .. sin iω_{q-1}, cos iω_0 .. cos iω_{q-1}]``
    with :math:`q = d_\text{model}/4` and :math:`\omega_k = \mathrm{base}^{-k/q}`: the column index ``j`` in
    the first half, the row index ``i`` in the second. ``d_model`` must be a multiple of 4.

    Source: ``get_2d_sincos_pos_embed`` in facebookresearch/mae (``util/pos_embed.py``), used by DiT.
    diffusers' function of that name (checked with diffusers 0.42.1 by ``make reference``) gives the same
    table for a square grid whose side equals its ``base_size``, with ``interpolation_scale`` 1; otherwise
    it divides the row positions by ``grid_h / base_size * interpolation_scale`` and the column positions
    by ``grid_w / base_size * interpolation_scale``, each axis by its own size, so a non-square grid has no
    ``base_size`` that gives this table. Its ``get_2d_sincos_pos_embed_from_grid``, given the integer
    grid, gives this table for any shape. Returns float64 of shape ``(grid_h * grid_w, d_model)``.
    """
    grid_h = check_positive_int(grid_h, name="grid_h")
    grid_w = check_positive_int(grid_w, name="grid_w")
    d_model = check_d_model(d_model)
    if d_model % 4:
        raise ValueError(f"d_model must be a multiple of 4 (two axes, each a sin/cos split table), got {d_model}; "
                         f"try {d_model + 2}")
    check_table_size(grid_h * grid_w, d_model, what="2-D position table")
    row = np.repeat(np.arange(grid_h, dtype=np.float64), grid_w)  # i of token t = i * grid_w + j
    col = np.tile(np.arange(grid_w, dtype=np.float64), grid_h)  # j
    half = d_model // 2
    by_column = sinusoidal(col, half, base=base, layout="split")  # [sin j w | cos j w], shape (n, d/2)
    by_row = sinusoidal(row, half, base=base, layout="split")  # [sin i w | cos i w]
    return np.concatenate([by_column, by_row], axis=1)  # [PE(j) | PE(i)]
