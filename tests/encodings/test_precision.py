"""bfloat16 rounding against an independent reference, and the low-precision encoding helpers."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pe_lib
import pe_lib.encodings.precision as precision_module
from pe_lib.encodings.precision import (
    angle_error,
    distinct_positions,
    encoding_error,
    encoding_errors,
    integer_limit,
    largest_finite,
    low_precision_angles,
    low_precision_sinusoidal,
    round_to_bfloat16,
    round_to_precision,
)

TWO_128 = 2.0**128  # where bfloat16 (like float32) would put its next binade: rounding beyond max gives inf


def _from_bits(bits):
    return np.asarray(bits, dtype=np.uint32).view(np.float32)


def reference_bfloat16(x32: np.ndarray) -> np.ndarray:
    """Round float32 values to bfloat16 by comparing distances to the two neighbours (no bit trick).

    For finite v, lo is v with its low 16 significand bits cleared (towards zero) and hi the next
    bfloat16 value away from zero (2**128 in magnitude past the largest finite one). The nearer one
    wins; on a tie the one whose last kept bit is 0 (even) wins; a win for 2**128 means infinity.
    Differences are computed in float64, where they are exact.
    """
    x32 = np.asarray(x32, dtype=np.float32)
    bits = x32.view(np.uint32).astype(np.uint64)
    sign = np.where(bits >> 31, -1.0, 1.0)
    mag_bits = bits & 0x7FFFFFFF
    lo_bits = mag_bits & 0x7FFF0000
    hi_bits = lo_bits + 0x10000
    hi_is_inf = hi_bits >= 0x7F800000
    # NaN and infinite inputs produce invalid casts and inf - inf here; they are handled at the end
    with np.errstate(invalid="ignore"):
        lo = lo_bits.astype(np.uint32).view(np.float32).astype(np.float64)
        hi_finite = np.minimum(hi_bits, 0x7F7F0000).astype(np.uint32).view(np.float32).astype(np.float64)
        hi = np.where(hi_is_inf, TWO_128, hi_finite)
        v = np.abs(x32.astype(np.float64))
        d_lo, d_hi = v - lo, hi - v
    lo_even = ((lo_bits >> 16) & 1) == 0
    pick_hi = (d_hi < d_lo) | ((d_hi == d_lo) & ~lo_even)
    mag = np.where(pick_hi, np.where(hi_is_inf, np.inf, hi), lo)
    out = (sign * mag).astype(np.float32)  # exact: mag is a bfloat16 value or inf
    special = ~np.isfinite(x32)  # inf stays inf, nan stays nan
    return np.where(special, x32, out)


def _same(a, b):
    """Bitwise equality, except that any NaN equals any NaN."""
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    both_nan = np.isnan(a) & np.isnan(b)
    return np.all(both_nan | (a.view(np.uint32) == b.view(np.uint32)))


def test_every_upper_half_with_critical_lower_halves():
    # all 65536 sign/exponent/upper-significand patterns, each with the lower halves where rounding
    # decides: exact, just below half, exactly half (tie), just above half, just below the next value
    upper = np.arange(2**16, dtype=np.uint64) << 16
    for low in (0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF):
        x = _from_bits((upper | low).astype(np.uint32))
        finite = np.isfinite(x)
        assert _same(round_to_bfloat16(x)[finite], reference_bfloat16(x)[finite]), hex(low)


def test_random_bit_patterns():
    rng = np.random.default_rng(2026)
    x = _from_bits(rng.integers(0, 2**32, size=400_000, dtype=np.uint64).astype(np.uint32))
    assert _same(round_to_bfloat16(x), reference_bfloat16(x))


def test_ties_go_to_even():
    # 1 + 2^-8 lies halfway between 1 (last kept bit 0) and 1 + 2^-7 (last bit 1): goes down
    # 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even): goes up
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-8), -(1 + 3 * 2**-8)], dtype=np.float32)
    np.testing.assert_array_equal(round_to_bfloat16(x), [1.0, 1 + 2**-6, -1.0, -(1 + 2**-6)])
    # just off the tie, the nearer neighbour wins
    above = np.nextafter(np.float32(1 + 2**-8), np.float32(2))
    assert round_to_bfloat16(above) == np.float32(1 + 2**-7)


def test_signed_zero_and_subnormals():
    out = round_to_bfloat16(np.array([0.0, -0.0], dtype=np.float32))
    assert out[0] == 0 and not np.signbit(out[0])
    assert out[1] == 0 and np.signbit(out[1])
    # float32 subnormals: 0x00008000 is a tie between 0 and 0x00010000 -> 0 (even);
    # 0x00018000 is a tie between 0x00010000 (odd) and 0x00020000 (even) -> 0x00020000
    x = _from_bits([0x00000001, 0x00008000, 0x00008001, 0x00018000, 0x80008001])
    np.testing.assert_array_equal(round_to_bfloat16(x).view(np.uint32),
                                  [0x00000000, 0x00000000, 0x00010000, 0x00020000, 0x80010000])


def test_infinities_nans_and_overflow():
    inf = np.float32(np.inf)
    out = round_to_bfloat16(np.array([inf, -inf], dtype=np.float32))
    np.testing.assert_array_equal(out, [inf, -inf])
    # NaNs with payloads in the low bits would become infinities under the plain bit trick
    nans = _from_bits([0x7F800001, 0x7FC00000, 0x7FFFFFFF, 0xFF800001, 0xFFFFFFFF])
    assert np.all(np.isnan(round_to_bfloat16(nans)))
    largest = largest_finite("bfloat16")
    assert largest == pytest.approx(3.3895314e38, rel=1e-7)
    assert _from_bits(0x7F7F0000) == np.float32(largest)
    assert round_to_bfloat16(np.float32(largest)) == np.float32(largest)
    # halfway between the largest finite bfloat16 and 2^128 is a tie with an odd last bit: infinity
    halfway = _from_bits(0x7F7F8000)
    assert round_to_bfloat16(halfway) == inf and round_to_bfloat16(-halfway) == -inf
    assert round_to_bfloat16(_from_bits(0x7F7F7FFF)) == np.float32(largest)
    assert round_to_bfloat16(np.finfo(np.float32).max) == inf


def test_shape_and_dtype_are_kept():
    x = np.linspace(-3, 3, 12).reshape(3, 4)
    out = round_to_bfloat16(x)
    assert out.shape == (3, 4) and out.dtype == np.float32
    assert round_to_bfloat16(2.5).shape == ()


@given(st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_rounding_is_idempotent_monotone_and_close(v):
    r = round_to_bfloat16(np.float32(v))
    assert round_to_bfloat16(r) == r
    assert round_to_bfloat16(np.nextafter(np.float32(v), np.float32(np.inf))) >= r
    if np.isfinite(r) and abs(v) >= np.finfo(np.float32).tiny:
        assert abs(float(r) - v) <= 2.0**-8 * abs(v)  # half a unit of 8 significand bits


def test_round_to_precision():
    x = np.array([1 / 3, 2049.0, 1e5, -0.1])
    np.testing.assert_array_equal(round_to_precision(x, "float64"), x)
    np.testing.assert_array_equal(round_to_precision(x, "float32"), x.astype(np.float32).astype(float))
    f16 = round_to_precision(x, "float16")
    assert f16[1] == 2048.0 and f16[2] == np.inf  # 2049 is a tie -> even; 1e5 > 65504 overflows quietly
    np.testing.assert_array_equal(round_to_precision(x, "bfloat16"), reference_bfloat16(x.astype(np.float32)))
    assert round_to_precision(x, "bfloat16").dtype == np.float64
    with pytest.raises(ValueError, match="precision must be one of"):
        round_to_precision(x, "float8")


@pytest.mark.parametrize("precision", ["float16", "bfloat16"])
def test_integer_limit_by_brute_force(precision):
    n = integer_limit(precision)
    ints = np.arange(n + 2, dtype=np.float64)
    exact = round_to_precision(ints, precision) == ints
    assert np.all(exact[: n + 1]) and not exact[n + 1]


def test_integer_limits():
    assert [integer_limit(p) for p in ("float16", "bfloat16", "float32", "float64")] == [2**11, 2**8, 2**24, 2**53]
    assert round_to_precision(2.0**24 + 1, "float32") != 2.0**24 + 1


@pytest.mark.parametrize(("n", "precision"), [(4096, "float16"), (2048, "bfloat16"), (3000, "float32")])
def test_distinct_positions_against_a_set(n, precision):
    if precision == "bfloat16":
        rounded = reference_bfloat16(np.arange(n, dtype=np.float32)).tolist()
    else:
        rounded = [float(np.dtype(precision).type(p)) for p in range(n)]
    assert distinct_positions(n, precision) == len(set(rounded))


def test_distinct_positions_counts_by_binade():
    # float16: 0..2048 exact (2049 values), then every second integer up to 4096: 1024 more
    assert distinct_positions(4096, "float16") == 2049 + 1024
    # bfloat16: 0..256 exact, then 128 values in each binade [256, 512), [512, 1024), [1024, 2048]
    assert distinct_positions(2048, "bfloat16") == 257 + 3 * 128
    assert distinct_positions(5000, "float64") == 5000


def test_low_precision_table_matches_native_numpy_dtypes():
    # numpy computes the float16/float32 table natively; the emulation may differ by one unit in the last place
    for precision, ulp in (("float16", 2.0**-11), ("float32", 2.0**-24)):
        native = pe_lib.sinusoidal(3000, 32, dtype=np.dtype(precision)).astype(np.float64)
        emulated = low_precision_sinusoidal(3000, 32, precision=precision)
        assert np.abs(native - emulated).max() <= ulp


def test_angles_and_the_gpt_neox_example():
    # rotary dimension 32: inv_freq[1] = 10000^(-2/32) = 0.56234..., stored in float16 as 0.5625
    assert round_to_precision(10_000 ** (-2 / 32), "float16") == 0.5625
    theta = low_precision_angles([1857], 32, "float16")
    assert theta[0, 1] == 1045.0
    assert 1857 * 10_000 ** (-2 / 32) == pytest.approx(1044.27, abs=0.005)
    err = angle_error([1857], 32, "float16")
    assert err[0, 1] == pytest.approx(1045.0 - 1857 * 10_000 ** (-2 / 32))
    assert angle_error(10, 8, "float64").max() == 0.0


def test_error_grows_and_the_fix_removes_it():
    pos = np.arange(4096)
    err16 = encoding_error(pos, 128, "float16")
    # small positions: only the rounding of omega and of the result (a few units of 2^-11);
    # beyond 2048 the positions themselves are rounded and the error reaches whole units
    assert err16[:8].max() < 2.0**-7 < 1.0 < err16[2048:].max() <= 2.0
    assert err16[:256].max() < err16[256:2048].max() < err16[2048:].max()
    assert np.abs(encoding_error(pos, 128, "float64")).max() == 0.0
    # angles in float64, result rounded: only the final rounding remains (half a unit of [0.5, 1));
    # bfloat16 rounds float64 -> float32 -> bfloat16, so it may exceed that by half a float32 unit
    for precision, half_ulp in (("float16", 2.0**-12), ("bfloat16", 2.0**-9 + 2.0**-25), ("float32", 2.0**-25)):
        fixed = encoding_error(pos, 128, precision, angle_precision="float64")
        assert fixed.max() <= half_ulp
        assert fixed.max() > 0.0


def test_split_layout_and_shape():
    inter = low_precision_sinusoidal(50, 16, precision="bfloat16")
    split = low_precision_sinusoidal(50, 16, precision="bfloat16", layout="split")
    perm = np.concatenate([np.arange(0, 16, 2), np.arange(1, 16, 2)])
    np.testing.assert_array_equal(split, inter[:, perm])
    assert encoding_error(0, 16, "float16").shape == (0,)


def test_overflow_and_bad_arguments():
    with pytest.raises(ValueError, match="overflow float16"):
        low_precision_angles([70_000], 8, "float16")
    with pytest.raises(ValueError, match="precision must be one of"):
        low_precision_sinusoidal(4, 8, precision="half")
    with pytest.raises(ValueError, match="precision must be one of"):
        low_precision_sinusoidal(4, 8, angle_precision="double")
    with pytest.raises(ValueError, match="layout must be one of"):
        low_precision_sinusoidal(4, 8, layout="pairs")
    with pytest.raises(ValueError, match="d_model"):
        encoding_error(4, 7, "float16")
    with pytest.raises(ValueError, match="precision must be one of"):
        integer_limit("int8")
    with pytest.raises(ValueError, match="precision must be one of"):
        largest_finite("float8")
    assert largest_finite("float16") == 65504.0


def _reference_errors(pos, d, precision, angle_precision):
    """max_j |low-precision table - float64 table|, both tables built entry by entry as written."""
    low = low_precision_sinusoidal(pos, d, precision=precision, angle_precision=angle_precision)
    theta = np.multiply.outer(np.asarray(pos, dtype=np.float64), pe_lib.frequencies(d))
    exact = np.empty_like(low)
    exact[:, 0::2], exact[:, 1::2] = np.sin(theta), np.cos(theta)
    return np.abs(low - exact).max(axis=1)


FORMATS = [(p, a) for p in ("float16", "bfloat16", "float32") for a in ("float16", "bfloat16", "float32", "float64")]


@pytest.mark.parametrize("angles_per_chunk", [1, 7, 2**16])
def test_encoding_errors_match_the_tables_entry_by_entry(monkeypatch, angles_per_chunk):
    monkeypatch.setattr(precision_module, "_ANGLES_PER_CHUNK", angles_per_chunk)
    pos = np.concatenate([np.arange(0, 3000, 37), [2049.0, 2051.5, -700.25, 40_000.0]])
    got = encoding_errors(pos, 16, FORMATS)
    assert list(got) == FORMATS
    for precision, angle_precision in FORMATS:
        reference = _reference_errors(pos, 16, precision, angle_precision)
        np.testing.assert_array_equal(got[precision, angle_precision], reference)
        np.testing.assert_array_equal(encoding_error(pos, 16, precision, angle_precision=angle_precision), reference)


@pytest.mark.parametrize("precision", ["float16", "bfloat16"])
def test_sines_of_16_bit_angles_are_looked_up_exactly(precision):
    rng = np.random.default_rng(3)
    theta = round_to_precision(rng.uniform(-6e4, 6e4, 5000), precision)
    theta[:4] = [0.0, -0.0, 2048.0, round_to_precision(np.pi, precision)]
    sin, cos = precision_module._sin_cos(theta, precision)
    np.testing.assert_array_equal(sin, np.sin(theta))
    np.testing.assert_array_equal(cos, np.cos(theta))


def test_encoding_errors_known_values_and_bad_formats():
    # pair 0 at position 3001: float16 stores 3000, so the sine is off by |sin 3000 - sin 3001|
    err = encoding_errors([3001], 2, [("float64", "float16"), ("float16", "float64")])
    assert err["float64", "float16"][0] == pytest.approx(max(abs(np.sin(3000) - np.sin(3001)),
                                                             abs(np.cos(3000) - np.cos(3001))), abs=1e-15)
    assert 0 < err["float16", "float64"][0] <= 2.0**-12  # one rounding of a value in [-1, 1]
    assert encoding_errors(0, 8, [("float16", "float16")])["float16", "float16"].shape == (0,)
    for bad in ([], [("float16",)], "float16", 3):
        with pytest.raises(ValueError, match="formats must be a non-empty sequence"):
            encoding_errors(4, 8, bad)
    with pytest.raises(ValueError, match="angle_precision must be one of"):
        encoding_errors(4, 8, [("float16", "half")])
    with pytest.raises(ValueError, match="overflow float16"):
        encoding_errors([70_000], 8, [("float32", "float16")])


def _f32(values):
    """Round float64 values to float32 and back: numpy's correctly rounded cast, written out here."""
    return np.asarray(values, dtype=np.float64).astype(np.float32).astype(np.float64)


def test_base_and_convention_reach_every_function():
    """Each function of a base and a convention computes with the ones it is given (base 500, tensor2tensor),
    rebuilt here from float32 casts: theta = rd(rd(pos) rd(omega_k)), the table rd(sin theta), rd(cos theta),
    and the worst error against the float64 table."""
    pos = np.array([0.0, 7.0, 1000.0, 4099.0])
    kw = dict(base=500.0, convention="tensor2tensor")
    omega = 500.0 ** (-np.arange(4) / 3)  # tensor2tensor, d_model = 8: base^(-k/(d/2 - 1))
    np.testing.assert_allclose(pe_lib.frequencies(8, **kw), omega, rtol=1e-15)
    theta = _f32(np.multiply.outer(_f32(pos), _f32(pe_lib.frequencies(8, **kw))))
    np.testing.assert_array_equal(pe_lib.low_precision_angles(pos, 8, "float32", **kw), theta)
    exact = np.multiply.outer(pos, omega)
    np.testing.assert_allclose(pe_lib.angle_error(pos, 8, "float32", **kw), np.abs(theta - exact), rtol=0,
                               atol=1e-12)
    table = pe_lib.low_precision_sinusoidal(pos, 8, precision="float32", **kw)
    np.testing.assert_array_equal(table[:, 0::2], _f32(np.sin(theta)))
    np.testing.assert_array_equal(table[:, 1::2], _f32(np.cos(theta)))
    worst = np.maximum(np.abs(_f32(np.sin(theta)) - np.sin(exact)), np.abs(_f32(np.cos(theta)) - np.cos(exact)))
    np.testing.assert_allclose(pe_lib.encoding_error(pos, 8, "float32", **kw), worst.max(axis=1), rtol=0,
                               atol=1e-12)
    np.testing.assert_allclose(pe_lib.encoding_errors(pos, 8, [("float32", "float32")], **kw)["float32", "float32"],
                               worst.max(axis=1), rtol=0, atol=1e-12)
    assert np.abs(pe_lib.angle_error(pos, 8, "float32") - pe_lib.angle_error(pos, 8, "float32", **kw)).max() > 1e-6
    # and the default base is the paper's 10000 (frequencies 10000^(-2k/8) = 1, 0.1, 0.01, 0.001)
    np.testing.assert_array_equal(pe_lib.low_precision_angles(pos, 8, "float32"),
                                  _f32(np.multiply.outer(pos, _f32([1.0, 0.1, 0.01, 0.001]))))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: pe_lib.distinct_positions(-1, "float16"),
         "n as an int is a count of positions and must be >= 0, got -1"),
        (lambda: pe_lib.encoding_error(np.arange(3), 8, "z"),
         "precision must be one of 'float64', 'float32', 'float16', 'bfloat16', got 'z'"),
        (lambda: pe_lib.encoding_errors(np.arange(3), 8, [("x", "float32")]),
         "precision must be one of 'float64', 'float32', 'float16', 'bfloat16', got 'x'"),
        (lambda: pe_lib.encoding_errors(np.arange(3), 8, [("float32", "y")]),
         "angle_precision must be one of 'float64', 'float32', 'float16', 'bfloat16', got 'y'"),
    ],
)
def test_errors_name_their_argument(call, message):
    with pytest.raises(ValueError) as error:
        call()
    assert str(error.value) == message


def test_bfloat16_rounding_needs_neither_jax_nor_ml_dtypes():
    """numpy alone has no bfloat16 (ml_dtypes, which JAX brings, adds one): rounding to it must work without."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys; sys.modules['ml_dtypes'] = None; sys.modules['jax'] = None\n"
            "import pe_lib; print(pe_lib.round_to_precision([1.00390625, 1.01171875], 'bfloat16').tolist())")
    done = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2],
                          capture_output=True, text=True, timeout=120)
    # 1 + 2^-8 and 1 + 3 * 2^-8 are ties between bfloat16 neighbours (7 stored bits): to the even one
    assert done.returncode == 0 and done.stdout.strip() == "[1.0, 1.015625]", done.stderr[-500:]
