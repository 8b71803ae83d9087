"""Printing magnitudes robustly (pe_lib.book.numbers): the value above the floor, the bound below it."""

import numpy as np
import pytest

import pe_lib


@pytest.mark.parametrize(("value", "kwargs", "text"), [
    (3.14159e-5, {}, "3.1e-05"),
    (-3.14159e-5, {}, "-3.1e-05"),
    (2.2e-16, {}, "< 1e-12"),
    (-9.99e-13, {}, "< 1e-12"),
    (1e-12, {}, "1.0e-12"),  # the floor itself is printed: only values below it are noise
    (0.0, {"floor": 1e-15}, "< 1e-15"),
    (4.9e7, {"digits": 0}, "5e+07"),
    (np.float64(123.0), {"digits": 2}, "1.23e+02"),
    (float("nan"), {}, "nan"),
    (float("inf"), {}, "inf"),
])
def test_magnitude_text(value, kwargs, text):
    assert pe_lib.magnitude_text(value, **kwargs) == text


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"floor": 0.0}, "floor must be positive, got 0.0"),
    ({"floor": float("nan")}, "floor must be a finite real number"),
    ({"digits": -1}, "digits must be an integer >= 0, got -1"),
    ({"digits": 1.5}, "digits must be an integer >= 0"),
    ({"digits": True}, "digits must be an integer >= 0"),
])
def test_magnitude_text_rejects_bad_settings(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.magnitude_text(1.0, **kwargs)
