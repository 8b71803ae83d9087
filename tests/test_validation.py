"""Every bad argument gets a ValueError (or TypeError) whose message says what to pass instead."""

import numpy as np
import pytest

import pe_lib


@pytest.mark.parametrize(
    ("d_model", "match"),
    [
        (3, r"d_model must be a positive even integer .* got 3; try 4"),
        (0, r"d_model must be a positive even integer .* got 0; try 2"),
        (-4, r"d_model must be a positive even integer .* got -4"),
        (8.0, r"d_model must be a positive even integer such as 512, got 8.0 of type float \(use int"),
        (7.5, r"d_model must be a positive even integer such as 512, got 7.5 of type float$"),
        ("512", r"got '512' of type str"),
        (True, r"got True of type bool"),
    ],
)
def test_bad_d_model(d_model, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.sinusoidal(4, d_model)
    with pytest.raises(ValueError, match=match):
        pe_lib.frequencies(d_model)


@pytest.mark.parametrize(
    ("base", "match"),
    [
        (1.0, r"base must be a finite number greater than 1 \(the paper uses 10000.0\), got 1.0"),
        (0.5, r"greater than 1 .* got 0.5"),
        (-10, r"got -10.0"),
        (float("nan"), r"got nan"),
        (float("inf"), r"got inf"),
        ("10000", r"base must be a real number greater than 1 such as 10000.0, got '10000'"),
        (None, r"got None"),
    ],
)
def test_bad_base(base, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.sinusoidal(4, 8, base=base)
    with pytest.raises(ValueError, match=match):
        pe_lib.shift_matrix(1.0, 8, base=base)


@pytest.mark.parametrize(
    ("positions", "error", "match"),
    [
        ([0.0, float("nan")], ValueError, r"positions must all be finite, got nan"),
        ([float("inf")], ValueError, r"got inf"),
        (np.zeros((2, 3)), ValueError, r"positions must be 1-D .* got shape \(2, 3\); flatten it"),
        (np.float64(3.0), ValueError, r"got shape \(\)"),
        (-1, ValueError, r"count of positions and must be >= 0, got -1"),
        ("abc", TypeError, r"got a string 'abc'"),
        (["a", "b"], TypeError, r"must hold real numbers, got an array of dtype <U1"),
        ([[1, 2], [3]], ValueError, r"positions must be a rectangular array of real numbers"),
        (True, TypeError, r"got True"),
        ([1 + 2j], TypeError, r"dtype complex128"),
    ],
)
def test_bad_positions(positions, error, match):
    with pytest.raises(error, match=match):
        pe_lib.sinusoidal(positions, 8)
    with pytest.raises(error, match=match):
        pe_lib.sinusoidal_loop(positions, 8)


def test_bad_layout_and_convention():
    with pytest.raises(ValueError, match=r"layout must be one of 'interleaved', 'split', got 'halves'"):
        pe_lib.sinusoidal(4, 8, layout="halves")
    with pytest.raises(ValueError, match=r"convention must be one of 'paper', 'tensor2tensor', got 'fairseq'"):
        pe_lib.frequencies(8, convention="fairseq")


def test_tensor2tensor_needs_d_model_at_least_4():
    with pytest.raises(ValueError, match=r"zero for d_model=2; use d_model >= 4 or convention='paper'"):
        pe_lib.sinusoidal(4, 2, convention="tensor2tensor")


@pytest.mark.parametrize("dtype", [np.int32, np.complex64, "bfloat16", object])
def test_bad_dtype(dtype):
    with pytest.raises(ValueError, match=r"dtype must be numpy.float64 \(default\), numpy.float32 or numpy.float16"):
        pe_lib.sinusoidal(4, 8, dtype=dtype)


def test_absurd_sizes_fail_fast():
    with pytest.raises(ValueError, match=r"exceeds the limit .* ask for fewer positions or a smaller d_model"):
        pe_lib.sinusoidal(10**9, 512)
    with pytest.raises(ValueError, match=r"exceeds the limit"):
        pe_lib.sinusoidal_loop(10**9, 512)


@pytest.mark.parametrize("offset", [float("nan"), float("inf"), "3", None])
def test_bad_offset(offset):
    with pytest.raises(ValueError, match=r"offset must be a finite real number"):
        pe_lib.shift_matrix(offset, 8)
    with pytest.raises(ValueError, match=r"offset must be a finite real number"):
        pe_lib.apply_shift(np.ones(8), offset)


def test_apply_shift_bad_vectors():
    with pytest.raises(ValueError, match=r"the last axis of vectors must be a positive even integer .* got 3"):
        pe_lib.apply_shift(np.ones((2, 3)), 1.0)
    with pytest.raises(ValueError, match=r"got a scalar"):
        pe_lib.apply_shift(1.0, 1.0)
    with pytest.raises(ValueError, match=r"vectors must be finite"):
        pe_lib.apply_shift([np.nan, 1.0], 1.0)


@pytest.mark.parametrize(("value", "match"), [(0, r"n must be an integer >= 1, got 0"), (2.0, r"got 2.0"),
                                              (True, r"got True")])
def test_check_positive_int(value, match):
    from pe_lib._validate import check_positive_int

    with pytest.raises(ValueError, match=match):
        check_positive_int(value, name="n")
    assert check_positive_int(3, name="n") == 3


# ---- found by `make mutate` (each kills mutants that the tests above let live) ---------------------
def test_check_positions_of_a_count_are_float64_and_too_many_are_refused_in_full():
    from pe_lib._validate import MAX_TABLE_ELEMENTS, check_finite_array, check_positions
    assert check_positions(3).dtype == np.float64 and check_positions(3).tolist() == [0.0, 1.0, 2.0]
    n = MAX_TABLE_ELEMENTS // 2 + 1
    with pytest.raises(ValueError) as error:
        check_positions(n)
    assert str(error.value) == (f"positions: a table of {n:,} positions exceeds the limit of {MAX_TABLE_ELEMENTS:,} "
                                "values (2 GiB of float64) even at d_model = 2; ask for fewer positions or a smaller "
                                "d_model")
    with pytest.raises(ValueError) as error:
        check_finite_array(np.float64(1.0), name="x", min_ndim=1)
    assert str(error.value) == "x must be at least 1-D, got shape ()"


# The shared checks of pe_lib._validate called directly (issue 32 item 6): each test failed with the named one-line
# bug planted in _validate.py, which the module tests alone let through.

def test_check_finite_real_refuses_a_bool():
    from pe_lib._validate import check_finite_real

    assert check_finite_real(2, name="x") == 2.0
    with pytest.raises(ValueError, match="x must be a finite real number"):
        check_finite_real(True, name="x")  # planted: the bool test removed (True is a numbers.Real)


def test_check_table_size_allows_exactly_the_limit():
    from pe_lib._validate import MAX_TABLE_ELEMENTS, check_table_size

    check_table_size(MAX_TABLE_ELEMENTS // 4, 4)  # 2**28 elements: allowed (nothing is allocated)
    with pytest.raises(ValueError):
        check_table_size(MAX_TABLE_ELEMENTS // 4 + 1, 4)  # 4 more: refused (planted: limit doubled)


def test_check_choice_takes_a_str_only():
    from pe_lib._validate import check_choice

    assert check_choice("split", ("interleaved", "split"), name="layout") == "split"
    # a 0-d numpy string compares equal to "split" but is no str (planted: the str test removed)
    with pytest.raises(ValueError, match="layout must be one of 'interleaved', 'split'"):
        check_choice(np.array("split"), ("interleaved", "split"), name="layout")


def test_check_finite_array_refuses_nan_and_infinity():
    from pe_lib._validate import check_finite_array

    np.testing.assert_array_equal(check_finite_array([1, 2], name="x"), [1.0, 2.0])
    for bad in (np.nan, np.inf, -np.inf):
        with pytest.raises(ValueError, match="x must be finite"):  # planted: the finiteness check removed
            check_finite_array([1.0, bad], name="x")
