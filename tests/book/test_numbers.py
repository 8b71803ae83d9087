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


def test_seed_table_puts_the_range_under_the_mean_written_out_by_hand():
    rows = {"rope": [[2.0, 3.5], [2.5, 4.0], [3.0, 4.5]], "learned": [[1.0, np.nan], [2.0, np.nan], [0.0, np.nan]]}
    assert pe_lib.seed_table(rows, ["128 (1x)", "256"], label="plan", width=8).splitlines() == [
        "plan          128 (1x)           256",
        "rope             2.500         4.000",
        "           2.000–3.000   3.500–4.500",
        "learned          1.000             –",
        "           0.000–2.000",  # no trailing blanks where a column is missing
    ]
    assert pe_lib.seed_table({"a": [[1.25]]}, ["x"], decimals=1, width=2).splitlines()[1:] == [
        "a" + " " * 12 + "1.2", " " * 9 + "1.2–1.2"]  # one seed: its value, and a range of width 0


@pytest.mark.parametrize(("rows", "columns", "kwargs", "message"), [
    ({}, ["x"], {}, "rows must be a non-empty dict"),
    ({"a": [1.0, 2.0]}, ["x", "y"], {},
     r"rows\['a'\] must have shape \(seeds, 2\) with at least one seed, got shape \(2,\)"),
    ({"a": [[1.0, 2.0]]}, ["x"], {}, r"must have shape \(seeds, 1\)"),
    ({"a": np.zeros((0, 1))}, ["x"], {}, r"got shape \(0, 1\)"),
    ({"a": [[1.0], [np.nan]]}, ["x"], {}, r"column 'x': every seed needs a finite value .* got \[1.0, nan\]"),
    ({"a": [[1.0], [np.inf]]}, ["x"], {}, "every seed needs a finite value"),
    ({"a": [[1.0]]}, ["x"], {"width": 0}, "width must be an integer >= 1, got 0"),
    ({"a": [[1.0]]}, ["x"], {"decimals": -1}, "decimals must be an integer >= 0, got -1"),
])
def test_seed_table_refuses_what_it_cannot_print(rows, columns, kwargs, message):
    with pytest.raises(ValueError, match=message):
        pe_lib.seed_table(rows, columns, **kwargs)
