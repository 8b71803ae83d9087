"""Argument checks shared by every public function of ``pe_lib``.

Each check raises ``ValueError`` (``TypeError`` only for positions that are not numbers at all) with a message
that names the argument, repeats what was received and says what to pass instead, so that a
learner who moves a slider to a bad value reads what went wrong rather than a numpy traceback.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

# A table bigger than this (in elements) is refused before numpy tries to allocate it:
# 2**28 float64 values are 2 GiB, far beyond anything a chapter or a real model needs.
MAX_TABLE_ELEMENTS = 2**28


def check_d_model(d_model, *, name: str = "d_model") -> int:
    """Return ``d_model`` as an int if it is a positive even integer, else raise."""
    if isinstance(d_model, bool) or not isinstance(d_model, numbers.Integral):
        if isinstance(d_model, numbers.Real) and float(d_model).is_integer():
            hint = f" (use int({d_model!r}))"
        else:
            hint = ""
        raise ValueError(
            f"{name} must be a positive even integer such as 512, got {d_model!r} "
            f"of type {type(d_model).__name__}{hint}"
        )
    d_model = int(d_model)
    if d_model <= 0 or d_model % 2:
        raise ValueError(
            f"{name} must be a positive even integer (each frequency fills a sin/cos pair), "
            f"got {d_model}; try {max(2, d_model + (d_model % 2))}"
        )
    if d_model > MAX_TABLE_ELEMENTS:  # refuse before anything of this width is allocated
        raise ValueError(
            f"{name} = {d_model:,} is too large: at most {MAX_TABLE_ELEMENTS:,} (one row of it is 2 GiB); "
            "real models use 512 to 16384"
        )
    return d_model


def check_base(base, *, name: str = "base") -> float:
    """Return ``base`` as a float if it is a finite real number greater than 1, else raise."""
    if isinstance(base, bool) or not isinstance(base, numbers.Real):
        raise ValueError(f"{name} must be a real number greater than 1 such as 10000.0, got {base!r}")
    base = float(base)
    if not math.isfinite(base) or base <= 1.0:
        raise ValueError(
            f"{name} must be a finite number greater than 1 (the paper uses 10000.0), got {base!r}"
        )
    return base


def check_choice(value, allowed: tuple[str, ...], *, name: str) -> str:
    """Return ``value`` if it is one of ``allowed``, else raise naming the allowed values."""
    if not isinstance(value, str) or value not in allowed:
        choices = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def check_positive_int(value, *, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an int if it is an integer >= ``minimum``, else raise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {int(value)}")
    return int(value)


def check_finite_real(value, *, name: str) -> float:
    """Return ``value`` as a float if it is a finite real number, else raise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    return value


def check_positions(positions, *, name: str = "positions") -> np.ndarray:
    """Turn ``positions`` into a 1-D float64 array of finite positions.

    ``positions`` is either an int ``n`` (meaning positions 0, 1, ..., n-1) or a 1-D array-like
    of real positions (negative and fractional values are allowed).
    """
    if isinstance(positions, bool):
        raise TypeError(f"{name} must be an int n or a 1-D sequence of real numbers, got {positions!r}")
    if isinstance(positions, numbers.Integral):
        n = int(positions)
        if n < 0:
            raise ValueError(f"{name} as an int is a count of positions and must be >= 0, got {n}")
        if n > MAX_TABLE_ELEMENTS // 2:  # every table has >= 2 columns: refuse before allocating
            raise ValueError(
                f"{name}: a table of {n:,} positions exceeds the limit of {MAX_TABLE_ELEMENTS:,} values "
                "(2 GiB of float64) even at d_model = 2; ask for fewer positions or a smaller d_model"
            )
        return np.arange(n, dtype=np.float64)
    if isinstance(positions, (str, bytes)):
        raise TypeError(f"{name} must be an int n or a 1-D sequence of real numbers, got a string {positions!r}")
    arr = as_real_array(positions, name=name)
    if arr.ndim != 1:
        raise ValueError(
            f"{name} must be 1-D (one position per row of the table), got shape {arr.shape}; "
            "flatten it with numpy.ravel or pass an int n for positions 0..n-1"
        )
    if not np.all(np.isfinite(arr)):
        bad = arr[~np.isfinite(arr)][0]
        raise ValueError(f"{name} must all be finite, got {float(bad)!r} among them")
    return arr


def as_real_array(x, *, name: str) -> np.ndarray:
    """Return ``x`` as a float64 array; ``TypeError`` if it does not hold real numbers (strings,
    complex, objects), ``ValueError`` if it is ragged. Finiteness and shape are the caller's to check."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be an array of real numbers, got a string {x!r}")
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError) as exc:  # ragged nested lists
        raise ValueError(f"{name} must be a rectangular array of real numbers: {exc}") from None
    if arr.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} must hold real numbers, got an array of dtype {arr.dtype}; pass a numpy float array"
        )
    return arr.astype(np.float64, copy=False)


def check_table_size(n: int, d: int, *, what: str = "table") -> None:
    """Refuse requests whose ``n * d`` table would not fit comfortably in memory."""
    if n * d > MAX_TABLE_ELEMENTS:
        raise ValueError(
            f"a {what} of {n} x {d} = {n * d:,} values exceeds the limit of "
            f"{MAX_TABLE_ELEMENTS:,} (2 GiB of float64); ask for fewer positions or a smaller d_model"
        )


def check_finite_array(x, *, name: str, ndim: int | None = None, min_ndim: int | None = None,
                       shape_hint: str | None = None) -> np.ndarray:
    """Return ``x`` as a float64 array with exactly ``ndim`` (or at least ``min_ndim``) axes and only
    finite values, else raise (``TypeError`` for non-real data, ``ValueError`` otherwise).

    ``shape_hint`` (e.g. ``"(..., n, d)"``) is named in the error when the number of axes is wrong.
    """
    arr = as_real_array(x, name=name)
    wrong = (ndim is not None and arr.ndim != ndim) or (min_ndim is not None and arr.ndim < min_ndim)
    if wrong:
        if shape_hint:
            expected = f"have shape {shape_hint}"
        else:
            expected = f"be {ndim}-D" if ndim is not None else f"be at least {min_ndim}-D"
        raise ValueError(f"{name} must {expected}, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got NaN or infinity among its values")
    return arr
