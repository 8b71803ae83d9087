r"""How alike are the encodings of two positions?

For the paper's encoding, :math:`\mathrm{PE}(p)\cdot\mathrm{PE}(p+\Delta) = \sum_k \cos(\omega_k \Delta)`
for every ``p``: it depends on the offset only.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_d_model, check_positions, check_table_size
from ..encodings.frequencies import frequencies


def dot_profile(offsets, d_model: int, *, base: float = 10_000.0, convention: str = "paper") -> np.ndarray:
    r""":math:`f(\Delta) = \sum_{k=0}^{d_\mathrm{model}/2-1} \cos(\omega_k \Delta)` for each offset.

    ``offsets``: an int n (offsets 0..n-1) or a 1-D array of real offsets. Returns shape ``(n,)``;
    ``f(0) = d_model / 2`` and ``f(-Δ) = f(Δ)``.
    """
    delta = check_positions(offsets, name="offsets")
    check_table_size(delta.size, check_d_model(d_model) // 2, what="table of angles")
    omega = frequencies(d_model, base=base, convention=convention)
    return np.cos(np.multiply.outer(delta, omega)).sum(axis=1)  # sum_k cos(omega_k * delta)
