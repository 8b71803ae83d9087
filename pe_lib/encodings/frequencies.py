r"""The angular frequencies of the sinusoidal encoding, and their wavelengths.

Two conventions are in use. With ``h = d_model / 2`` sin/cos pairs, indexed ``k = 0 .. h-1``:

* ``"paper"`` (Vaswani et al. 2017, section 3.5):
  :math:`\omega_k = \mathrm{base}^{-2k/d_\mathrm{model}}`, so the slowest pair has
  :math:`\omega_{h-1} = \mathrm{base}^{-(d_\mathrm{model}-2)/d_\mathrm{model}}`, a little faster than
  ``1/base``.
* ``"tensor2tensor"`` (tensor2tensor's ``get_timing_signal_1d``, fairseq):
  :math:`\omega_k = \mathrm{base}^{-k/(h-1)}`, which ends exactly at ``1/base``.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_base, check_choice, check_d_model

CONVENTIONS = ("paper", "tensor2tensor")


def frequencies(d_model: int, *, base: float = 10_000.0, convention: str = "paper") -> np.ndarray:
    r"""Angular frequencies :math:`\omega_k` of the ``d_model // 2`` sin/cos pairs.

    ``"paper"``:         :math:`\omega_k = \mathrm{base}^{-2k/d_\mathrm{model}}`, k = 0 .. d_model/2 - 1
    ``"tensor2tensor"``: :math:`\omega_k = \mathrm{base}^{-k/(d_\mathrm{model}/2 - 1)}`

    Returns a float64 array of shape ``(d_model // 2,)``, decreasing from ``omega[0] == 1``.
    """
    d_model = check_d_model(d_model)
    base = check_base(base)
    convention = check_choice(convention, CONVENTIONS, name="convention")
    half = d_model // 2
    k = np.arange(half, dtype=np.float64)
    if convention == "paper":
        exponent = 2.0 * k / d_model  # 2k / d_model
    else:
        if half == 1:
            raise ValueError(
                "convention='tensor2tensor' divides by d_model/2 - 1, which is zero for d_model=2; "
                "use d_model >= 4 or convention='paper'"
            )
        exponent = k / (half - 1)  # k / (d_model/2 - 1)
    # base ** (-exponent), written as exp(-exponent * ln base) as real implementations do
    return np.exp(-exponent * np.log(base))


def wavelengths(d_model: int, *, base: float = 10_000.0, convention: str = "paper") -> np.ndarray:
    r"""Wavelengths :math:`\lambda_k = 2\pi / \omega_k` of the sin/cos pairs, in positions.

    Shape ``(d_model // 2,)``, increasing geometrically from :math:`2\pi`.
    """
    omega = frequencies(d_model, base=base, convention=convention)
    with np.errstate(over="ignore"):
        lam = 2.0 * np.pi / omega  # lambda_k = 2 pi / omega_k
    if not np.all(np.isfinite(lam)):  # only for a base near the float64 limit (omega ~ 1/base)
        raise ValueError(f"base={base!r} is so large that 2*pi/omega overflows float64; use a base below 1e300")
    return lam
