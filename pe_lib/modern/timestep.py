r"""Sinusoidal embeddings of diffusion timesteps: positions that are real numbers.

A diffusion model's denoiser is told the noise level through the timestep :math:`t` (often
0 .. 999, in continuous-time models any real number), embedded with the sinusoids of the
Transformer. With :math:`h = \lfloor \text{dim}/2 \rfloor` frequencies

.. math::

    \omega_k = \exp\!\Big(-\ln(\text{max\_period})\,\frac{k}{h - \text{shift}}\Big), \qquad k = 0 .. h-1,

the embedding of :math:`t` is :math:`[\sin(\text{scale}\,t\,\omega_k)]_k` followed by
:math:`[\cos(\text{scale}\,t\,\omega_k)]_k` (the split layout), or cosines first when
``flip_sin_to_cos``; an odd ``dim`` gets a zero last column. ``shift`` =
``downscale_freq_shift``: 1 (diffusers' default) is the tensor2tensor/fairseq convention
:math:`\omega_k = \text{max\_period}^{-k/(h-1)}` that DDPM's code used; 0 is the paper's
:math:`\omega_k = \text{max\_period}^{-2k/\text{dim}}`, used with cosines first by ADM
(guided-diffusion's ``timestep_embedding``) and DiT.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_finite_array, check_finite_real, check_positive_int, check_table_size


def timestep_embedding(
    timesteps,
    dim: int,
    *,
    max_period: float = 10_000,
    flip_sin_to_cos: bool = False,
    downscale_freq_shift: float = 1.0,
    scale: float = 1.0,
) -> np.ndarray:
    r"""Sinusoidal embeddings of (real-valued) timesteps, as diffusers' ``get_timestep_embedding``.

    ``timesteps``: 1-D array of ``n`` timesteps, one per batch element (fractions allowed). ``dim``: the
    width of the embedding (odd allowed: the last column is then 0). With :math:`h = \lfloor\text{dim}/2\rfloor`,
    :math:`\omega_k = \exp(-\ln(\text{max\_period})\,k/(h - \text{downscale\_freq\_shift}))` and
    :math:`\theta_k = \text{scale}\cdot t\,\omega_k`, row ``t`` is
    ``[sin θ_0 .. sin θ_{h-1}, cos θ_0 .. cos θ_{h-1}]``, the halves swapped when ``flip_sin_to_cos``.

    Source: ``get_timestep_embedding`` in diffusers (``src/diffusers/models/embeddings.py``), with its
    argument names and defaults; guided-diffusion's (ADM) ``timestep_embedding`` is
    ``flip_sin_to_cos=True, downscale_freq_shift=0``; DDPM's ``get_timestep_embedding`` the defaults.
    Computed in float64 (diffusers: float32, so its angles :math:`\theta_k` carry float32 rounding, about
    :math:`10^{-7}|\theta_k|`). ``make reference`` compares the two with diffusers 0.42.1 over widths (odd
    ones too), both orders, shifts 0, 0.5 and 1, scales and real-valued timesteps: within
    :math:`4\varepsilon_{32}(1 + \max|\text{scale}\,t|)`. Returns shape ``(n, dim)``.
    """
    t = check_finite_array(timesteps, name="timesteps", ndim=1, shape_hint="(n,): one timestep per batch element")
    dim = check_positive_int(dim, name="dim")
    max_period = check_finite_real(max_period, name="max_period")
    if max_period <= 0.0:
        raise ValueError(f"max_period must be positive (diffusers uses 10000), got {max_period!r}")
    shift = check_finite_real(downscale_freq_shift, name="downscale_freq_shift")
    scale = check_finite_real(scale, name="scale")
    if not isinstance(flip_sin_to_cos, (bool, np.bool_)):
        raise ValueError(f"flip_sin_to_cos must be True or False, got {flip_sin_to_cos!r}")
    check_table_size(t.size, dim, what="timestep embedding")
    half = dim // 2
    if half > 0 and half - shift <= 0:
        raise ValueError(
            f"downscale_freq_shift must be below dim // 2 = {half} (the exponent divides by dim // 2 - shift), "
            f"got {shift!r}; diffusers uses 1 (DDPM) or 0 (ADM)"
        )
    k = np.arange(half)
    omega = np.exp(-np.log(max_period) * k / (half - shift))  # omega_k, shape (h,); empty for dim = 1
    theta = scale * np.multiply.outer(t, omega)  # theta[n, k] = scale * t_n * omega_k
    sin, cos = np.sin(theta), np.cos(theta)
    halves = [cos, sin] if flip_sin_to_cos else [sin, cos]  # [cos | sin] or [sin | cos]
    if dim % 2:
        halves.append(np.zeros((t.size, 1)))  # odd dim: a zero last column
    return np.concatenate(halves, axis=1)
