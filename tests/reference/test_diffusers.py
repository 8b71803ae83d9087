r"""``pe_lib.timestep_embedding`` and ``pe_lib.sinusoidal_2d`` against diffusers' functions of those tables.

Tolerances. ``get_timestep_embedding`` works in float32: the angle :math:`\theta = \text{scale}\cdot t\,\omega_k`
is a float32 product, off by up to a few float32 epsilons of :math:`|\theta|`, and sine and cosine pass that
absolute error on. So the bound is :math:`4\varepsilon_{32}(1 + \max|\theta|)` in absolute terms: 4.8e-7
for timesteps below 1, 4.8e-4 for :math:`t` = 999 (where a float32 angle is only good to about 1e-4 rad).
``get_2d_sincos_pos_embed`` computes the table in float64 (its positions are float32, but small integers
are exact in float32): 1e-12.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import EPS32, record
from diffusers.models.embeddings import (
    get_2d_sincos_pos_embed,
    get_2d_sincos_pos_embed_from_grid,
    get_timestep_embedding,
)

import pe_lib

TABLE_TOL = 1e-12

TIMESTEPS = {
    "ddpm": np.arange(0, 1000, 37, dtype=np.float64),  # integer steps 0 .. 999
    "last": np.array([999.0, 998.0, 500.0, 1.0, 0.0]),
    "fractions": np.array([0.0, 0.001, 0.25, 0.5, 0.999, 0.73]),  # continuous time in [0, 1]
    "real": np.array([3.5, 17.25, 123.456, 640.125, 0.1]),
}


# (timesteps, scale, max_period): scale 1000 is for timesteps in [0, 1] (continuous-time models)
SCALES = [(name, 1.0, 10_000) for name in TIMESTEPS] + [("fractions", 1000.0, 10_000), ("real", 0.5, 1000)]
# (dim, downscale_freq_shift) with dim // 2 - shift > 0 (else diffusers divides by zero or flips the sign)
WIDTHS = [(dim, shift) for dim in (1, 2, 3, 4, 7, 32, 33, 128, 320, 1281) for shift in (0.0, 0.5, 1.0)
          if dim // 2 == 0 or dim // 2 - shift > 0]


@pytest.mark.parametrize("timesteps, scale, max_period", SCALES)
@pytest.mark.parametrize("dim, shift", WIDTHS)
@pytest.mark.parametrize("flip_sin_to_cos", [False, True])
def test_timestep_embedding(timesteps, scale, max_period, dim, shift, flip_sin_to_cos):
    t = TIMESTEPS[timesteps]
    # diffusers takes the timesteps in float32 (as a model passes them); we give pe_lib those same numbers
    t32 = torch.tensor(t, dtype=torch.float32)
    theirs = get_timestep_embedding(t32, dim, flip_sin_to_cos=flip_sin_to_cos, downscale_freq_shift=shift,
                                    scale=scale, max_period=max_period).double().numpy()
    ours = pe_lib.timestep_embedding(t32.double().numpy(), dim, flip_sin_to_cos=flip_sin_to_cos,
                                     downscale_freq_shift=shift, scale=scale, max_period=max_period)
    assert ours.shape == theirs.shape == (t.size, dim)
    largest_angle = scale * np.max(np.abs(t))  # omega_0 = 1
    tolerance = 4 * EPS32 * (1.0 + largest_angle)
    name = "timestep_embedding, |scale t| <= 1" if largest_angle <= 1.0 else "timestep_embedding, |scale t| <= 999"
    record(name, float(np.max(np.abs(ours - theirs))) if ours.size else 0.0, tolerance,
           "max |Δ|, bound 4 eps32 (1 + max |scale t|)")
    if dim % 2:
        assert np.all(theirs[:, -1] == 0) and np.all(ours[:, -1] == 0)  # odd width: a zero last column


def test_timestep_embedding_guided_diffusion_convention():
    """ADM's timestep_embedding is diffusers' with flip_sin_to_cos=True, downscale_freq_shift=0."""
    t = torch.tensor([0.0, 10.0, 250.0, 999.0])
    theirs = get_timestep_embedding(t, 256, flip_sin_to_cos=True, downscale_freq_shift=0).double().numpy()
    omega = 10_000.0 ** (-np.arange(128) / 128)  # ADM: exp(-ln(max_period) k / half)
    adm = np.concatenate([np.cos(np.outer(t.numpy(), omega)), np.sin(np.outer(t.numpy(), omega))], axis=1)
    ours = pe_lib.timestep_embedding(t.numpy(), 256, flip_sin_to_cos=True, downscale_freq_shift=0)
    np.testing.assert_allclose(ours, adm, atol=1e-12)
    record("timestep_embedding, ADM convention", float(np.max(np.abs(ours - theirs))), 4 * EPS32 * 1000.0,
           "max |Δ|, bound 4 eps32 (1 + max |t|)")


# ---- 2-D sine-cosine table -------------------------------------------------------------------------

@pytest.mark.parametrize("grid", [1, 2, 7, 14, 16, 32])
@pytest.mark.parametrize("d_model", [4, 8, 64, 768, 1152])
def test_sinusoidal_2d_square_grid(grid, d_model):
    """``get_2d_sincos_pos_embed(d, g, base_size=g)``: positions 0 .. g-1 on both axes."""
    theirs = get_2d_sincos_pos_embed(d_model, grid, base_size=grid, output_type="pt").double().numpy()
    ours = pe_lib.sinusoidal_2d(grid, grid, d_model)
    record("sinusoidal_2d, square grid", float(np.max(np.abs(ours - theirs))), TABLE_TOL, "max |Δ|")


@pytest.mark.parametrize("grid_h, grid_w", [(1, 5), (3, 7), (7, 3), (14, 20), (24, 16)])
@pytest.mark.parametrize("d_model", [8, 64, 1152])
def test_sinusoidal_2d_any_grid_from_positions(grid_h, grid_w, d_model):
    """The table from integer positions: ``get_2d_sincos_pos_embed_from_grid`` with a grid built here.

    The grid is built as MAE's code describes it: ``meshgrid(columns, rows)`` in "xy" order, so the
    first coordinate is the column index j and the second the row index i, each of shape (grid_h, grid_w).
    """
    rows, cols = np.arange(grid_h, dtype=np.float64), np.arange(grid_w, dtype=np.float64)
    j, i = np.meshgrid(cols, rows, indexing="xy")  # j varies along a row: the column index
    grid = torch.tensor(np.stack([j, i])[:, None])  # shape (2, 1, grid_h, grid_w)
    theirs = get_2d_sincos_pos_embed_from_grid(d_model, grid, output_type="pt").double().numpy()
    ours = pe_lib.sinusoidal_2d(grid_h, grid_w, d_model)
    record("sinusoidal_2d, any grid, from positions", float(np.max(np.abs(ours - theirs))), TABLE_TOL, "max |Δ|")


@pytest.mark.parametrize("grid_h, grid_w, base_size", [(3, 7, 16), (14, 20, 16), (24, 16, 24), (16, 24, 16)])
def test_sinusoidal_2d_non_square_grid_scales_each_axis(grid_h, grid_w, base_size):
    """diffusers' ``get_2d_sincos_pos_embed((h, w), base_size=b)`` divides the row positions by h / b and
    the column positions by w / b, each axis by its own size: a non-square grid has no ``base_size``
    for which it is ``sinusoidal_2d``'s integer-position table. It is the same construction at the
    positions ``i * b / h`` and ``j * b / w`` (both spanning ``[0, b)``), which we build from
    ``pe_lib.sinusoidal``."""
    d_model = 64
    theirs = get_2d_sincos_pos_embed(d_model, (grid_h, grid_w), base_size=base_size, output_type="pt").double().numpy()
    row = np.repeat(np.arange(grid_h), grid_w) * (base_size / grid_h)  # i * b / h of token t = i * grid_w + j
    col = np.tile(np.arange(grid_w), grid_h) * (base_size / grid_w)  # j * b / w
    scaled = np.concatenate([pe_lib.sinusoidal(col, d_model // 2, layout="split"),
                             pe_lib.sinusoidal(row, d_model // 2, layout="split")], axis=1)
    # float32 positions: i * b / h is rounded to float32 before the float64 table is computed
    record("sinusoidal_2d, non-square, diffusers' scaled positions", float(np.max(np.abs(scaled - theirs))),
           4 * EPS32 * base_size, "max |Δ|, bound 4 eps32 base_size")
    assert np.max(np.abs(pe_lib.sinusoidal_2d(grid_h, grid_w, d_model) - theirs)) > 0.1  # not the integer table
