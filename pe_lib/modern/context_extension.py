r"""Extending a RoPE model's context: transforms of the rotary frequencies :math:`\omega_i`.

A model trained on ``original_length`` = :math:`L` tokens is to be used on :math:`L' = sL` tokens
(``scale`` = :math:`s \ge 1`). With :math:`\omega_i = \mathrm{base}^{-2i/d}`, ``i = 0 .. d/2 - 1``:

* Position interpolation (Chen et al. 2023): positions :math:`m \to m/s`, i.e.
  :math:`\omega_i \to \omega_i / s` for every pair.
* NTK-aware scaling (bloc97, 2023): a larger base,
  :math:`\mathrm{base}' = \mathrm{base}\cdot s^{d/(d-2)}`; :math:`\omega_0 = 1` is kept and the
  slowest pair is divided by exactly :math:`s`.
* YaRN (Peng et al. 2023), "NTK-by-parts": a ramp :math:`\gamma_i \in [0, 1]` per pair mixes the two
  regimes, :math:`\omega_i \to (1-\gamma_i)\,\omega_i/s + \gamma_i\,\omega_i` (1 = keep the pair, 0 =
  interpolate it), with ``beta_fast`` = 32 and ``beta_slow`` = 1 turns within the training length as
  the two ends. The ramp comes in two forms (``ramp``):

  - ``"code"`` (default), what the reference implementations compute and models run
    (``find_correction_range`` / ``linear_ramp_mask`` in the YaRN repository, jquesnelle/yarn, and
    ``_compute_yarn_parameters`` in Hugging Face transformers): linear in the *pair index* ``i``,
    between the index where pairs make ``beta_fast`` turns rounded down and the index where they
    make ``beta_slow`` turns rounded up;
  - ``"paper"``: the paper's :math:`\gamma(r) = \mathrm{clip}((r - \beta_s)/(\beta_f - \beta_s), 0, 1)`,
    linear in the number of turns :math:`r_i = L\omega_i/2\pi` of pair ``i``.

  When the fastest pair makes at least ``beta_fast`` turns within :math:`L` (:math:`L \ge 2\pi\beta_f`,
  202 tokens for 32 turns), both keep exactly the pairs with at least ``beta_fast`` turns and fully
  interpolate exactly those with at most ``beta_slow``; in between they differ, by up to 0.38 for
  ``d = 128``, ``L = 2048``. YaRN also scales queries and keys by
  :math:`\sqrt{1/t} = 0.1\ln s + 1` (:func:`yarn_attention_factor`).

How these relate to the ``rope_scaling`` types of model configs (:func:`pe_lib.rope_scaling_frequencies`,
which reproduces Hugging Face transformers): :func:`pi_frequencies` is ``"linear"`` and
:func:`yarn_frequencies` with ``ramp="code"`` is ``"yarn"`` (both computed by it). :func:`ntk_frequencies`
is the NTK-aware form of the 2023 post, for which transformers has no type of its own; it equals
``"dynamic"`` with ``factor = 1`` at ``seq_len = s * max_position_embeddings``, where the dynamic
formula :math:`\mathrm{base}\,(f\ell/L - (f-1))^{d/(d-2)}` becomes :math:`\mathrm{base}\,s^{d/(d-2)}`.
"""

from __future__ import annotations

import math

import numpy as np

from .._validate import check_base, check_choice, check_d_model, check_finite_real, check_positive_int
from ..encodings.frequencies import frequencies
from .rope_scaling import check_betas, rope_scaling_frequencies, yarn_bounds, yarn_keep


def _check_scale(scale) -> float:
    s = check_finite_real(scale, name="scale")
    if s < 1.0:
        raise ValueError(
            f"scale is the factor L'/L by which the context grows and must be >= 1, got {s!r}; "
            "for a context of 8192 tokens from 2048 pass scale=4.0"
        )
    return s


def pi_frequencies(d: int, scale: float, *, base: float = 10_000.0) -> np.ndarray:
    r"""Position interpolation: :math:`\omega_i / s` (positions scaled by :math:`L/L' = 1/s`). Shape ``(d/2,)``.

    The ``"linear"`` type of :func:`pe_lib.rope_scaling_frequencies` with ``factor = s``.
    """
    s = _check_scale(scale)
    d = check_d_model(d, name="d")
    return rope_scaling_frequencies(d, {"rope_type": "linear", "factor": s}, base=base)[0]  # omega_i / s


def ntk_base(d: int, scale: float, *, base: float = 10_000.0) -> float:
    r"""NTK-aware base :math:`\mathrm{base}\cdot s^{d/(d-2)}` (needs ``d >= 4``)."""
    d = check_d_model(d, name="d")
    if d < 4:
        raise ValueError(f"NTK-aware scaling divides by d - 2, so d must be >= 4, got {d}")
    return check_base(base) * _check_scale(scale) ** (d / (d - 2))  # base * s^(d/(d-2))


def ntk_frequencies(d: int, scale: float, *, base: float = 10_000.0) -> np.ndarray:
    r"""NTK-aware frequencies :math:`\mathrm{base}'^{-2i/d}`, :math:`\mathrm{base}' = \mathrm{base}\,s^{d/(d-2)}`.

    The form of the 2023 post (bloc97), static in ``s``. Hugging Face has no type for it; its
    ``"dynamic"`` type with ``factor = 1`` gives the same frequencies at ``seq_len = s * max_position_embeddings``.
    Shape ``(d/2,)``.
    """
    return frequencies(d, base=ntk_base(d, scale, base=base))


YARN_RAMPS = ("code", "paper")


def yarn_correction_range(
    d: int, *, original_length: int, base: float = 10_000.0, beta_fast: float = 32.0, beta_slow: float = 1.0
) -> tuple[int, int]:
    r"""The pair indices ``(low, high)`` between which the reference code's YaRN ramp runs.

    Pair ``i`` makes :math:`r_i = L\,\mathrm{base}^{-2i/d}/2\pi` turns within :math:`L` = ``original_length``
    tokens. Solved for ``i``, the (real) pair index that makes ``r`` turns is

    .. math:: i(r) = \frac{d\,\ln\!\big(L / (2\pi r)\big)}{2\ln \mathrm{base}},

    and the code rounds outwards and clamps: ``low = max(floor(i(beta_fast)), 0)``,
    ``high = min(ceil(i(beta_slow)), d - 1)`` (``d - 1``, not ``d/2 - 1``, as in the source).
    Source: ``find_correction_dim`` / ``find_correction_range`` in jquesnelle/yarn
    (``scaled_rope/LlamaYaRNScaledRotaryEmbedding.py``) and ``_compute_yarn_parameters`` in
    transformers' ``modeling_rope_utils.py`` (with its default ``truncate=True``). Returns two ints.
    """
    d = check_d_model(d, name="d")
    length = check_positive_int(original_length, name="original_length")
    base = check_base(base)
    fast, slow = check_betas(beta_fast, beta_slow)
    return yarn_bounds(d, length, base, fast, slow, truncate=True)


def yarn_ramp(
    d: int,
    *,
    original_length: int,
    base: float = 10_000.0,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    ramp: str = "code",
) -> np.ndarray:
    r"""YaRN's ramp :math:`\gamma_i` for each pair: 1 = keep the pair, 0 = interpolate it. Shape ``(d/2,)``.

    ``ramp="code"`` (default; what models run): with ``(low, high)`` from :func:`yarn_correction_range`,
    :math:`\gamma_i = 1 - \mathrm{clip}\big((i - \mathrm{low})/(\mathrm{high} - \mathrm{low}), 0, 1\big)`,
    linear in the pair index ``i``; ``high`` is raised by 0.001 when it equals ``low`` (as in the source).

    ``ramp="paper"`` (Peng et al. 2023, eq. for :math:`\gamma(r)`):
    :math:`\gamma_i = \mathrm{clip}\big((r_i - \beta_s)/(\beta_f - \beta_s), 0, 1\big)` with
    :math:`r_i = L\,\omega_i/2\pi` the turns of pair ``i`` within the original length :math:`L`,
    :math:`\beta_f` = ``beta_fast`` (32), :math:`\beta_s` = ``beta_slow`` (1): linear in the turns.

    When :math:`L \ge 2\pi\beta_f` (pair 0 makes at least ``beta_fast`` turns), both give exactly 1 for
    the pairs with at least ``beta_fast`` turns and exactly 0 for those with at most ``beta_slow``; they
    differ in between. For shorter ``L`` the code's clamps decide instead (pair 0 is always kept, and
    every pair once :math:`i(\beta_s) \le -1`); this is reproduced as the source computes it.
    """
    ramp = check_choice(ramp, YARN_RAMPS, name="ramp")
    if ramp == "paper":
        d = check_d_model(d, name="d")
        length = check_positive_int(original_length, name="original_length")
        fast, slow = check_betas(beta_fast, beta_slow)
        turns = length * frequencies(d, base=base) / (2.0 * math.pi)  # r_i = L omega_i / (2 pi), shape (d/2,)
        return np.clip((turns - slow) / (fast - slow), 0.0, 1.0)  # gamma(r_i)
    low, high = yarn_correction_range(
        d, original_length=original_length, base=base, beta_fast=beta_fast, beta_slow=beta_slow
    )
    return yarn_keep(d // 2, low, high)  # 1 - clip((i - low) / (high - low), 0, 1)


def yarn_frequencies(
    d: int,
    scale: float,
    *,
    original_length: int,
    base: float = 10_000.0,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    ramp: str = "code",
) -> np.ndarray:
    r"""YaRN / NTK-by-parts frequencies :math:`(1-\gamma_i)\,\omega_i/s + \gamma_i\,\omega_i`, shape ``(d/2,)``.

    :math:`\gamma_i` is :func:`yarn_ramp` with the same arguments: by default the reference code's ramp,
    computed by :func:`pe_lib.rope_scaling_frequencies` as Hugging Face's ``_compute_yarn_parameters``
    does (``"yarn"`` with ``factor = s``, ``original_max_position_embeddings = original_length``); with
    ``ramp="paper"`` the paper's. Computed in float64 (the reference code uses float32).
    """
    s = _check_scale(scale)
    ramp = check_choice(ramp, YARN_RAMPS, name="ramp")
    if ramp == "code":
        d = check_d_model(d, name="d")
        original_length = check_positive_int(original_length, name="original_length")
        check_betas(beta_fast, beta_slow)  # before transformers' "0 means the default" can hide a 0
        params = {"rope_type": "yarn", "factor": s, "original_max_position_embeddings": original_length,
                  "beta_fast": beta_fast, "beta_slow": beta_slow}
        return rope_scaling_frequencies(d, params, base=base)[0]
    gamma = yarn_ramp(
        d, original_length=original_length, base=base, beta_fast=beta_fast, beta_slow=beta_slow, ramp=ramp
    )
    omega = frequencies(d, base=base)
    return (1.0 - gamma) * omega / s + gamma * omega  # interpolate slow pairs, keep fast ones


def yarn_attention_factor(scale: float) -> float:
    r"""YaRN's :math:`\sqrt{1/t} = 0.1 \ln s + 1`, the factor applied to both queries and keys.

    The attention logits are therefore multiplied by :math:`1/t = (0.1\ln s + 1)^2`. Equals 1 at ``s = 1``.
    """
    return 0.1 * math.log(_check_scale(scale)) + 1.0  # sqrt(1/t) = 0.1 ln s + 1
