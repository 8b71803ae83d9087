"""Positions in today's models: rope_scaling as model configs write it, context extension
(PI, NTK, YaRN), diffusion timesteps, 2-D grids, M-RoPE and resampled position tables.
Numpy only. Used by chapters 13, 17 and 18.
"""

from .context_extension import (
    ntk_base,
    ntk_frequencies,
    pi_frequencies,
    yarn_attention_factor,
    yarn_correction_range,
    yarn_frequencies,
    yarn_ramp,
)
from .grid import sinusoidal_2d
from .mrope import mrope, mrope_positions
from .resample import cubic_kernel, resample_grid, resample_weights
from .rope_scaling import ROPE_TYPES, rope_scaling_frequencies
from .timestep import timestep_embedding

__all__ = [
    "cubic_kernel",
    "mrope",
    "mrope_positions",
    "ntk_base",
    "ntk_frequencies",
    "pi_frequencies",
    "resample_grid",
    "resample_weights",
    "rope_scaling_frequencies",
    "ROPE_TYPES",
    "sinusoidal_2d",
    "timestep_embedding",
    "yarn_attention_factor",
    "yarn_correction_range",
    "yarn_frequencies",
    "yarn_ramp",
]
