r"""Extending a RoPE model's context: transforms of the rotary frequencies :math:`\omega_i`.

A model trained on ``original_length`` = :math:`L` tokens is to be used on :math:`L' = sL` tokens
(``scale`` = :math:`s \ge 1`). With :math:`\omega_i = \mathrm{base}^{-2i/d}`, ``i = 0 .. d/2 - 1``:

* Position interpolation (Chen et al. 2023): positions :math:`m \to m/s`, i.e.
  :math:`\omega_i \to \omega_i / s` for every pair.
* NTK-aware scaling (bloc97, 2023): a larger base,
  :math:`\mathrm{base}' = \mathrm{base}\cdot s^{d/(d-2)}`; :math:`\omega_0 = 1` is kept and the
  slowest pair is divided by exactly :math:`s`.
* YaRN (Peng et al. 2023), "NTK-by-parts": with :math:`r_i = L/\lambda_i` full turns of pair ``i``
  within the training length, a ramp :math:`\gamma(r) = \mathrm{clip}((r-\alpha)/(\beta-\alpha), 0, 1)`
  (:math:`\alpha` = ``beta_slow`` = 1, :math:`\beta` = ``beta_fast`` = 32) mixes the two regimes:
  :math:`\omega_i \to (1-\gamma_i)\,\omega_i/s + \gamma_i\,\omega_i`. YaRN also scales queries and keys
  by :math:`\sqrt{1/t} = 0.1\ln s + 1` (:func:`yarn_attention_factor`).
"""

from __future__ import annotations

import math

import numpy as np

from ._validate import check_base, check_d_model, check_finite_real, check_positive_int
from .frequencies import frequencies


def _check_scale(scale) -> float:
    s = check_finite_real(scale, name="scale")
    if s < 1.0:
        raise ValueError(
            f"scale is the factor L'/L by which the context grows and must be >= 1, got {s!r}; "
            "for a context of 8192 tokens from 2048 pass scale=4.0"
        )
    return s


def pi_frequencies(d: int, scale: float, *, base: float = 10_000.0) -> np.ndarray:
    r"""Position interpolation: :math:`\omega_i / s` (positions scaled by :math:`L/L' = 1/s`). Shape ``(d/2,)``."""
    s = _check_scale(scale)
    return frequencies(check_d_model(d, name="d"), base=base) / s  # omega_i / s


def ntk_base(d: int, scale: float, *, base: float = 10_000.0) -> float:
    r"""NTK-aware base :math:`\mathrm{base}\cdot s^{d/(d-2)}` (needs ``d >= 4``)."""
    d = check_d_model(d, name="d")
    if d < 4:
        raise ValueError(f"NTK-aware scaling divides by d - 2, so d must be >= 4, got {d}")
    return check_base(base) * _check_scale(scale) ** (d / (d - 2))  # base * s^(d/(d-2))


def ntk_frequencies(d: int, scale: float, *, base: float = 10_000.0) -> np.ndarray:
    r"""NTK-aware frequencies :math:`\mathrm{base}'^{-2i/d}`, shape ``(d/2,)``."""
    return frequencies(d, base=ntk_base(d, scale, base=base))


def yarn_ramp(
    d: int, *, original_length: int, base: float = 10_000.0, beta_fast: float = 32.0, beta_slow: float = 1.0
) -> np.ndarray:
    r"""YaRN's ramp :math:`\gamma_i = \mathrm{clip}((r_i - \beta_s)/(\beta_f - \beta_s), 0, 1)` for each pair.

    :math:`\beta_f` = ``beta_fast`` (32), :math:`\beta_s` = ``beta_slow`` (1), in turns.

    :math:`r_i = L / \lambda_i = L\,\omega_i / 2\pi` is the number of full turns pair ``i`` makes within
    the original length :math:`L`. :math:`\gamma_i = 1`: keep the pair (fast, fewer than
    :math:`\lambda_i = L/\beta_\mathrm{fast}` tokens per turn); :math:`\gamma_i = 0`: interpolate it (a turn
    longer than :math:`L`). Shape ``(d/2,)``. This is the paper's continuous ramp; the reference code
    rounds its two ends to whole pair indices, which widens the ramp slightly.
    """
    length = check_positive_int(original_length, name="original_length")
    fast = check_finite_real(beta_fast, name="beta_fast")
    slow = check_finite_real(beta_slow, name="beta_slow")
    if not 0.0 <= slow < fast:
        raise ValueError(
            f"need 0 <= beta_slow < beta_fast (turns within the original length), got {slow!r} and {fast!r}"
        )
    turns = length * frequencies(check_d_model(d, name="d"), base=base) / (2.0 * math.pi)  # r_i = L / lambda_i
    return np.clip((turns - slow) / (fast - slow), 0.0, 1.0)  # gamma(r_i)


def yarn_frequencies(
    d: int,
    scale: float,
    *,
    original_length: int,
    base: float = 10_000.0,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
) -> np.ndarray:
    r"""YaRN / NTK-by-parts frequencies :math:`(1-\gamma_i)\,\omega_i/s + \gamma_i\,\omega_i`, shape ``(d/2,)``."""
    s = _check_scale(scale)
    gamma = yarn_ramp(d, original_length=original_length, base=base, beta_fast=beta_fast, beta_slow=beta_slow)
    omega = frequencies(d, base=base)
    return (1.0 - gamma) * omega / s + gamma * omega  # interpolate slow pairs, keep fast ones


def yarn_attention_factor(scale: float) -> float:
    r"""YaRN's :math:`\sqrt{1/t} = 0.1 \ln s + 1`, the factor applied to both queries and keys.

    The attention logits are therefore multiplied by :math:`1/t = (0.1\ln s + 1)^2`. Equals 1 at ``s = 1``.
    """
    return 0.1 * math.log(_check_scale(scale)) + 1.0  # sqrt(1/t) = 0.1 ln s + 1
