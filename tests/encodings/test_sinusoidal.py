"""Properties of the sinusoidal table, each stated with its ranges and checked numerically."""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import bases, d_models, positions

import pe_lib


@given(d=d_models, base=bases, pos=st.lists(positions, min_size=1, max_size=20))
def test_values_lie_in_unit_interval(d, base, pos):
    # every entry is a sine or a cosine, so -1 <= PE(p, j) <= 1 for all p and 0 <= j < d
    table = pe_lib.sinusoidal(pos, d, base=base)
    assert table.shape == (len(pos), d)
    assert np.all(np.abs(table) <= 1.0)


@given(d=d_models, base=bases, pos=st.lists(positions, min_size=1, max_size=20))
def test_squared_norm_is_half_d(d, base, pos):
    # ||PE(p)||^2 = sum_k (sin^2 + cos^2) = d/2 for every real p
    table = pe_lib.sinusoidal(pos, d, base=base)
    np.testing.assert_allclose(np.sum(table**2, axis=1), d / 2, rtol=1e-13)


@given(d=d_models, p=positions, q=positions)
def test_dot_product_depends_only_on_offset(d, p, q):
    # PE(p) . PE(q) = sum_k cos(omega_k (p - q)), for all real p, q
    a, b = pe_lib.sinusoidal([p, q], d)
    omega = pe_lib.frequencies(d)
    expected = np.sum(np.cos(omega * (p - q)))
    # each angle carries a rounding error of order eps * |p|, so the tolerance scales with |p|
    tol = 1e-12 * d * (1 + abs(p) + abs(q))
    assert abs(a @ b - expected) <= tol
    # and the same offset elsewhere gives the same dot product
    c, e = pe_lib.sinusoidal([p + 7.0, q + 7.0], d)
    assert abs(c @ e - a @ b) <= 2 * tol + 1e-12 * d * 14


@given(d=d_models, n=st.integers(min_value=0, max_value=40), base=bases)
def test_split_layout_is_a_column_permutation(d, n, base):
    interleaved = pe_lib.sinusoidal(n, d, base=base)
    split = pe_lib.sinusoidal(n, d, base=base, layout="split")
    perm = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])  # sines first, then cosines
    np.testing.assert_array_equal(split, interleaved[:, perm])
    assert split.shape == (n, d)
    if n:  # column d/2 of the split table is the first cosine, cos(p * 1): 1, cos 1, cos 2, ...
        np.testing.assert_allclose(split[:, d // 2], np.cos(np.arange(n)), rtol=0, atol=1e-15)


@given(d=d_models, n=st.integers(min_value=0, max_value=30), base=bases,
       convention=st.sampled_from(["paper", "tensor2tensor"]), layout=st.sampled_from(["interleaved", "split"]))
def test_loop_and_vectorized_agree(d, n, base, convention, layout):
    assume(not (convention == "tensor2tensor" and d == 2))  # undefined for d=2; tested in test_validation
    fast = pe_lib.sinusoidal(n, d, base=base, convention=convention, layout=layout)
    slow = pe_lib.sinusoidal_loop(n, d, base=base, convention=convention, layout=layout)
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-15)


def test_int_positions_mean_zero_to_n_minus_one():
    np.testing.assert_array_equal(pe_lib.sinusoidal(5, 8), pe_lib.sinusoidal(np.arange(5), 8))
    assert pe_lib.sinusoidal(0, 8).shape == (0, 8)


def test_position_zero_alternates_zero_and_one():
    np.testing.assert_array_equal(pe_lib.sinusoidal(1, 512)[0], np.tile([0.0, 1.0], 256))


def test_fractional_and_negative_positions():
    omega = pe_lib.frequencies(6)
    table = pe_lib.sinusoidal([-1.5, 0.25], 6)
    np.testing.assert_allclose(table[0, 0::2], np.sin(-1.5 * omega), rtol=0, atol=1e-16)
    np.testing.assert_allclose(table[1, 1::2], np.cos(0.25 * omega), rtol=0, atol=1e-16)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_dtype_is_respected(dtype):
    assert pe_lib.sinusoidal(10, 16, dtype=dtype).dtype == dtype


def test_float32_error_grows_with_position():
    # In float32 the angle pos * omega is rounded to 24 bits, so its absolute error grows like
    # pos * 2**-24: the worst error over a window of positions must rise with the window's start.
    d = 64
    starts = [10, 1_000, 100_000]
    errors = []
    for s in starts:
        pos = np.arange(s, s + 256)
        exact = pe_lib.sinusoidal(pos, d)
        low = pe_lib.sinusoidal(pos, d, dtype=np.float32).astype(np.float64)
        errors.append(np.abs(low - exact).max())
    assert errors[0] < errors[1] < errors[2]
    assert errors[0] < 1e-5 < errors[2]  # from float32 rounding noise to visibly wrong digits


@pytest.mark.parametrize("dtype", ["not-a-dtype", object(), "bfloat16"])
def test_an_unknown_or_unsupported_dtype_is_refused_by_name(dtype):
    # "not-a-dtype" and object() are not numpy dtypes at all (numpy raises TypeError); "bfloat16" may be
    # one once ml_dtypes (a JAX dependency) is imported, and is refused either way.
    with pytest.raises(ValueError, match="dtype must be numpy.float64"):
        pe_lib.sinusoidal(4, 8, dtype=dtype)


def test_errors_in_full():
    with pytest.raises(ValueError) as dtype:
        pe_lib.sinusoidal(4, 8, dtype="bfloat16")
    assert str(dtype.value) == ("dtype must be numpy.float64 (default), numpy.float32 or numpy.float16, got "
                                "'bfloat16'; for bfloat16 compute in float32 and round with pe_lib.round_to_bfloat16")
    for table in (pe_lib.sinusoidal, pe_lib.sinusoidal_loop):
        with pytest.raises(ValueError) as layout:
            table(4, 8, layout="x")
        assert str(layout.value) == "layout must be one of 'interleaved', 'split', got 'x'"


def test_veltkamp_split_halves_as_documented():
    """_split(a) = (hi, lo): hi + lo == a exactly, hi at most 26 and lo at most 27 significant bits (so that
    a position of up to 26 bits times either is exact, Dekker's product in _sin_cos_accurate)."""
    import importlib
    import math

    S = importlib.import_module("pe_lib.encodings.sinusoidal")
    a = np.random.default_rng(0).uniform(1e-6, 1.0, 500)
    hi, lo = S._split(a)

    def bits(v):  # significant bits of a float: the fewest n with frexp's mantissa * 2^n an integer
        m, n = math.frexp(v)[0], 0
        while m != int(m):
            m, n = 2 * m, n + 1
        return n

    assert np.array_equal(hi + lo, a)
    assert max(map(bits, hi)) <= 26 and max(bits(v) for v in lo if v) <= 27
