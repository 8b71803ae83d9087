r"""Printing a difference that is at the level of floating-point rounding.

Two computations of the same number in float64 often differ in the last bits: the sums are added in
another order, ``sin`` comes from another library, a table is built along another path. The size of
such a difference depends on the processor and the library versions, so a chapter that prints it as
``3.3e-16`` would print something else elsewhere. :func:`below` prints a bound instead: the smallest
power of ten above *twice* the difference, so that a difference of one or two units in the last
place more or less does not change the text.
"""

from __future__ import annotations

import math

from .._validate import check_finite_real


def below(x) -> str:
    r"""``"below 1e-N"`` for the smallest power of ten :math:`10^{-N} > 2|x|`; ``"0"`` for ``x == 0``.

    For example ``below(3.3e-16) == "below 1e-15"`` and ``below(6e-16) == "below 1e-14"``
    (:math:`2 \cdot 6\cdot10^{-16} = 1.2\cdot10^{-15}`). Returns a string.
    """
    x = abs(check_finite_real(x, name="x"))
    if x == 0:
        return "0"
    exponent = math.floor(math.log10(2.0 * x)) + 1  # 10^(exponent - 1) <= 2|x| < 10^exponent
    return f"below 1e{exponent}"
