"""Context extension for RoPE: position interpolation, NTK-aware base, YaRN's ramp and temperature."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import bases

import pe_lib

d_models_4 = st.integers(min_value=2, max_value=64).map(lambda h: 2 * h)
scales = st.floats(min_value=1.0, max_value=64.0)


@given(d=d_models_4, s=scales, base=bases, m=st.floats(0, 4096))
def test_pi_gives_position_m_times_s_the_old_angle_of_m(d, s, base, m):
    np.testing.assert_allclose(m * s * pe_lib.pi_frequencies(d, s, base=base), m * pe_lib.frequencies(d, base=base),
                               rtol=1e-12, atol=1e-12)


@given(d=d_models_4, s=scales, base=bases)
def test_ntk_keeps_the_fastest_pair_and_divides_the_slowest_by_s(d, s, base):
    omega = pe_lib.frequencies(d, base=base)
    ntk = pe_lib.ntk_frequencies(d, s, base=base)
    assert ntk[0] == 1.0 == omega[0]
    assert ntk[-1] == pytest.approx(omega[-1] / s, rel=1e-10)
    assert np.all(ntk <= omega * (1 + 1e-12))  # every pair slowed down, by at most s
    assert np.all(ntk >= omega / s * (1 - 1e-10))
    assert pe_lib.ntk_base(d, s, base=base) == pytest.approx(base * s ** (d / (d - 2)))


def test_ntk_hand_computed():
    # d = 128, s = 4: base' = 10000 * 4^(128/126)
    assert pe_lib.ntk_base(128, 4.0) == pytest.approx(10_000 * 4 ** (64 / 63))
    assert pe_lib.ntk_base(4, 2.0, base=100.0) == pytest.approx(400.0)  # 100 * 2^2


@given(d=d_models_4, s=scales, length=st.integers(16, 8192))
def test_yarn_ramp_interpolates_between_pi_and_no_change(d, s, length):
    omega = pe_lib.frequencies(d)
    gamma = pe_lib.yarn_ramp(d, original_length=length)
    turns = length * omega / (2 * math.pi)
    assert np.all((gamma >= 0) & (gamma <= 1))
    assert np.all(np.diff(gamma) <= 0)  # faster pairs are kept more
    np.testing.assert_array_equal(gamma[turns >= 32], 1.0)
    np.testing.assert_array_equal(gamma[turns <= 1], 0.0)
    yarn = pe_lib.yarn_frequencies(d, s, original_length=length)
    keep, interp = gamma == 1.0, gamma == 0.0
    np.testing.assert_allclose(yarn[keep], omega[keep])
    np.testing.assert_allclose(yarn[interp], pe_lib.pi_frequencies(d, s)[interp])
    assert np.all(yarn <= omega * (1 + 1e-12)) and np.all(yarn >= omega / s * (1 - 1e-12))


def test_yarn_ramp_hand_computed():
    # L = 2048, d = 4: omega = 1, 0.01 -> turns 2048/(2 pi) = 325.9 (kept) and 20.48/(2 pi) = 3.26
    gamma = pe_lib.yarn_ramp(4, original_length=2048)
    assert gamma[0] == 1.0
    assert gamma[1] == pytest.approx((2048 * 0.01 / (2 * math.pi) - 1) / 31)


def test_yarn_attention_factor():
    assert pe_lib.yarn_attention_factor(1.0) == 1.0
    assert pe_lib.yarn_attention_factor(math.e) == pytest.approx(1.1)
    assert pe_lib.yarn_attention_factor(16.0) == pytest.approx(0.1 * math.log(16) + 1)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: pe_lib.pi_frequencies(8, 0.5), r"scale is the factor L'/L .* must be >= 1, got 0.5"),
        (lambda: pe_lib.pi_frequencies(7, 2.0), r"d must be a positive even integer"),
        (lambda: pe_lib.ntk_base(2, 2.0), r"d must be >= 4, got 2"),
        (lambda: pe_lib.ntk_base(8, float("nan")), r"scale must be a finite real number"),
        (lambda: pe_lib.ntk_frequencies(8, 2.0, base=0.5), r"base must be a finite number greater than 1"),
        (lambda: pe_lib.yarn_ramp(8, original_length=0), r"original_length must be an integer >= 1"),
        (lambda: pe_lib.yarn_ramp(8, original_length=64, beta_fast=1.0, beta_slow=1.0),
         r"need 0 <= beta_slow < beta_fast .* got 1.0 and 1.0"),
        (lambda: pe_lib.yarn_ramp(8, original_length=64, beta_slow=-1.0), r"need 0 <= beta_slow"),
        (lambda: pe_lib.yarn_frequencies(8, 0.9, original_length=64), r"must be >= 1, got 0.9"),
        (lambda: pe_lib.yarn_attention_factor("2"), r"scale must be a finite real number"),
    ],
)
def test_validation(call, match):
    with pytest.raises(ValueError, match=match):
        call()
