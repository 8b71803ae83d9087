r"""ALiBi (Press et al. 2022): no position vectors; each head subtracts slope x distance from its scores.

Head ``h`` of ``H`` adds :math:`-m_h\,(i - j)` to the score of query ``i`` and key ``j \le i``.
For ``H`` a power of two the slopes are the geometric sequence that starts at :math:`2^{-8/H}` and has
that same ratio:

.. math::

    m_h = 2^{-8(h+1)/H}, \qquad h = 0, \dots, H-1,

so 8 heads get :math:`1/2, 1/4, \dots, 1/256`. For other ``H`` the reference code takes the ``P``
slopes of the largest power of two :math:`P < H`, then the first :math:`H - P` of every other slope of
:math:`2P` heads (those at even index 0, 2, 4, ..., i.e. :math:`2^{-8(2t+1)/(2P)}`, which interleave
with the first ``P``).
"""

from __future__ import annotations

import numpy as np

from .._validate import check_positive_int


def _power_of_two_slopes(num_heads: int, count: int, *, step: int = 1) -> np.ndarray:
    # 2^(-8 h / num_heads) for h = 1, 1 + step, 1 + 2 step, ... (count values)
    h = 1 + step * np.arange(count)
    return 2.0 ** (-8.0 * h / num_heads)


def alibi_slopes(num_heads: int) -> np.ndarray:
    r"""ALiBi's fixed per-head slopes :math:`m_h`, shape ``(num_heads,)``.

    Power of two ``H``: :math:`m_h = 2^{-8(h+1)/H}`, ``h = 0 .. H-1``.
    Otherwise, with ``P`` the largest power of two below ``H``: the ``P`` slopes of ``P`` heads, then
    :math:`2^{-8(2t+1)/(2P)}` for ``t = 0 .. H-P-1`` (every other slope of ``2P`` heads).
    """
    num_heads = check_positive_int(num_heads, name="num_heads")
    closest = 1 << (num_heads.bit_length() - 1)  # largest power of two <= num_heads
    first = _power_of_two_slopes(closest, closest)
    if closest == num_heads:
        return first
    extra = _power_of_two_slopes(2 * closest, num_heads - closest, step=2)  # slopes 0, 2, 4, ... of 2P heads
    return np.concatenate([first, extra])


def alibi_bias(n: int, num_heads: int) -> np.ndarray:
    r"""ALiBi's additive attention bias :math:`B_{h,i,j} = -m_h\,|i - j|`, shape ``(num_heads, n, n)``.

    For keys at or before the query (``j <= i``) this is the paper's :math:`-m_h (i - j)`; ALiBi is
    used with a causal mask, which discards the entries above the diagonal whatever they hold. They
    are filled with the same formula in :math:`|i-j|` so that the matrix is defined everywhere.
    Pass it as ``bias`` to :func:`pe_lib.attention_weights` (with ``causal=True``).
    """
    n = check_positive_int(n, name="n")
    slopes = alibi_slopes(num_heads)
    idx = np.arange(n)
    distance = np.abs(idx[:, None] - idx[None, :])  # |i - j|
    return -slopes[:, None, None] * distance  # -m_h |i - j|
