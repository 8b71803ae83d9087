"""Printing small magnitudes so that a chapter's output is the same on every machine.

An error that is rounding noise (say 2.2e-16) has last digits that depend on the CPU, the BLAS and
the order of summation, so printing it would make a stored notebook differ between machines; printing
``error < 1e-12`` instead hides the magnitude behind a boolean. :func:`magnitude_text` does neither: it
prints the value when it is above a floor and the bound when it is below.
"""

from __future__ import annotations

import math

from .._validate import check_finite_real


def magnitude_text(value, *, floor: float = 1e-12, digits: int = 1) -> str:
    """``value`` in scientific notation with ``digits`` decimals, or ``"< floor"`` if ``|value| < floor``.

    ``floor`` is a positive bound below which values count as rounding noise (the default ``1e-12``
    suits float64 results of size about 1). ``nan`` and infinities are printed as such. Returns a
    string, e.g. ``magnitude_text(3.1e-5) == "3.1e-05"`` and ``magnitude_text(2e-16) == "< 1e-12"``.
    """
    floor = check_finite_real(floor, name="floor")
    if floor <= 0:
        raise ValueError(f"floor must be positive, got {floor!r}")
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 0:
        raise ValueError(f"digits must be an integer >= 0, got {digits!r}")
    value = float(value)
    if math.isfinite(value) and abs(value) < floor:
        return f"< {floor:g}"
    return f"{value:.{digits}e}"
