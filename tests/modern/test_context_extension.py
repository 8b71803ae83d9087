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


# ---- YaRN: independent re-implementations from the published formulas, element by element ----------
def reference_code_ramp(d, length, base, beta_fast, beta_slow):
    """The ramp as jquesnelle/yarn and transformers' _compute_yarn_parameters compute it, in plain Python.

    find_correction_dim(r) = d * ln(L / (r * 2 pi)) / (2 ln base); low = floor(dim(beta_fast)) clamped
    at 0, high = ceil(dim(beta_slow)) clamped at d - 1; high += 0.001 if equal; the mask is
    clamp((i - low) / (high - low), 0, 1) for i = 0 .. d/2 - 1, and the kept fraction is 1 - mask.
    """
    def dim(rotations):
        return d * math.log(length / (rotations * 2 * math.pi)) / (2 * math.log(base))

    low, high = max(math.floor(dim(beta_fast)), 0), min(math.ceil(dim(beta_slow)), d - 1)
    if low == high:
        high += 0.001
    return [1 - min(max((i - low) / (high - low), 0.0), 1.0) for i in range(d // 2)]


def reference_paper_ramp(d, length, base, beta_fast, beta_slow):
    """Peng et al.'s gamma(r): 0 below beta_slow turns, 1 above beta_fast, linear in r in between."""
    out = []
    for i in range(d // 2):
        r = length / (2 * math.pi * base ** (2 * i / d))  # turns of pair i: L / lambda_i
        out.append(0.0 if r < beta_slow else 1.0 if r > beta_fast else (r - beta_slow) / (beta_fast - beta_slow))
    return out


def reference_yarn(d, scale, length, base, beta_fast, beta_slow, ramp):
    gamma = (reference_code_ramp if ramp == "code" else reference_paper_ramp)(d, length, base, beta_fast, beta_slow)
    return [g * base ** (-2 * i / d) + (1 - g) * base ** (-2 * i / d) / scale for i, g in enumerate(gamma)]


CONFIGS = [  # (d, scale, original_length, base, beta_fast, beta_slow): defaults and non-default arguments
    (128, 4.0, 2048, 10_000.0, 32.0, 1.0),  # Llama-style head, the chapter's example
    (128, 8.0, 4096, 10_000.0, 32.0, 1.0),
    (64, 16.0, 8192, 500_000.0, 16.0, 2.0),
    (96, 2.5, 1024, 1_000_000.0, 64.0, 0.5),
    (128, 32.0, 4096, 150_000.0, 32.0, 1.0),  # gpt-oss-like base and factor
    (16, 3.0, 300, 100.0, 8.0, 1.5),
]


@pytest.mark.parametrize("ramp", ["code", "paper"])
@pytest.mark.parametrize(("d", "s", "length", "base", "fast", "slow"), CONFIGS)
def test_yarn_matches_an_independent_reimplementation(d, s, length, base, fast, slow, ramp):
    kwargs = {"original_length": length, "base": base, "beta_fast": fast, "beta_slow": slow, "ramp": ramp}
    reference_ramp = reference_code_ramp if ramp == "code" else reference_paper_ramp
    np.testing.assert_allclose(pe_lib.yarn_ramp(d, **kwargs), reference_ramp(d, length, base, fast, slow),
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(pe_lib.yarn_frequencies(d, s, **kwargs),
                               reference_yarn(d, s, length, base, fast, slow, ramp), rtol=1e-12, atol=0)


@given(d=d_models_4, s=scales, length=st.integers(1, 1 << 20), base=st.floats(2.0, 1e7),
       fast=st.floats(2.0, 128.0), slow_fraction=st.floats(0.01, 0.99))
def test_yarn_code_ramp_matches_the_reference_everywhere(d, s, length, base, fast, slow_fraction):
    slow = fast * slow_fraction  # any 0 < beta_slow < beta_fast, including the clamped corner cases
    kwargs = {"original_length": length, "base": base, "beta_fast": fast, "beta_slow": slow}
    np.testing.assert_allclose(pe_lib.yarn_ramp(d, **kwargs), reference_code_ramp(d, length, base, fast, slow),
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(pe_lib.yarn_frequencies(d, s, **kwargs),
                               reference_yarn(d, s, length, base, fast, slow, "code"), rtol=1e-12, atol=0)


def test_yarn_code_ramp_boundaries_by_hand():
    # d = 128, L = 2048, base 10000: i(r) = 128 ln(2048 / (2 pi r)) / (2 ln 10000)
    # i(32) = 16.128 -> low = 16;  i(1) = 40.210 -> high = 41;  the ramp has 41 - 16 = 25 steps of 1/25
    assert pe_lib.yarn_correction_range(128, original_length=2048) == (16, 41)
    gamma = pe_lib.yarn_ramp(128, original_length=2048)
    np.testing.assert_array_equal(gamma[:17], 1.0)  # pairs 0..16 kept exactly
    np.testing.assert_array_equal(gamma[41:], 0.0)  # pairs 41..63 interpolated exactly
    assert gamma[17] == pytest.approx(1 - 1 / 25) and gamma[40] == pytest.approx(1 / 25)
    assert gamma[29] == pytest.approx(1 - 13 / 25)
    # non-default betas and base: d = 64, L = 4096, base 500000, beta_fast 16, beta_slow 2
    # i(16) = 64 ln(4096 / (32 pi)) / (2 ln 500000) = 9.04 -> 9; i(2) = 64 ln(4096 / (4 pi)) / (2 ln 5e5) = 14.11 -> 15
    assert pe_lib.yarn_correction_range(64, original_length=4096, base=500_000.0, beta_fast=16.0, beta_slow=2.0) \
        == (9, 15)
    gamma = pe_lib.yarn_ramp(64, original_length=4096, base=500_000.0, beta_fast=16.0, beta_slow=2.0)
    np.testing.assert_allclose(gamma[8:17], [1, 1, 5 / 6, 4 / 6, 3 / 6, 2 / 6, 1 / 6, 0, 0], atol=1e-15)


def test_yarn_code_ramp_corner_cases_of_the_source():
    # L = 6 < 2 pi: pair 0 turns fewer than once; i(1) is in (-1, 0], so low = high = 0 and the source
    # widens the ramp to 0.001: pair 0 is kept, every other pair interpolated
    assert pe_lib.yarn_correction_range(8, original_length=6) == (0, 0)
    np.testing.assert_array_equal(pe_lib.yarn_ramp(8, original_length=6), [1.0, 0.0, 0.0, 0.0])
    # L = 1, d = 128: i(1) = -12.77 -> high = -12 < low = 0: the clamped ramp keeps every pair
    assert pe_lib.yarn_correction_range(128, original_length=1) == (0, -12)
    np.testing.assert_array_equal(pe_lib.yarn_ramp(128, original_length=1), 1.0)
    # the paper's ramp has no such corners: every pair of L = 1 is interpolated
    np.testing.assert_array_equal(pe_lib.yarn_ramp(128, original_length=1, ramp="paper"), 0.0)


def test_yarn_paper_ramp_by_hand():
    # L = 2048, d = 4: omega = 1, 0.01 -> turns 2048/(2 pi) = 325.9 (kept) and 20.48/(2 pi) = 3.26
    gamma = pe_lib.yarn_ramp(4, original_length=2048, ramp="paper")
    assert gamma[0] == 1.0
    assert gamma[1] == pytest.approx((2048 * 0.01 / (2 * math.pi) - 1) / 31)
    # non-default betas: beta_fast 8, beta_slow 2 -> (3.2595 - 2) / 6
    gamma = pe_lib.yarn_ramp(4, original_length=2048, beta_fast=8.0, beta_slow=2.0, ramp="paper")
    assert gamma[1] == pytest.approx((2048 * 0.01 / (2 * math.pi) - 2) / 6)


def test_the_two_ramps_differ_by_up_to_038_for_the_chapter_example():
    code = np.array(reference_code_ramp(128, 2048, 10_000.0, 32.0, 1.0))
    paper = np.array(reference_paper_ramp(128, 2048, 10_000.0, 32.0, 1.0))
    gap = np.abs(pe_lib.yarn_ramp(128, original_length=2048) - pe_lib.yarn_ramp(128, original_length=2048,
                                                                                 ramp="paper"))
    assert gap.max() == pytest.approx(np.abs(code - paper).max()) == pytest.approx(0.3843, abs=5e-5)
    assert int(np.argmax(gap)) == 25


def test_yarn_frequencies_use_their_betas():
    # A YaRN that ignored beta_fast/beta_slow would return the default ramp: the pairs 17..40 would
    # differ. With beta_fast = 8 and beta_slow = 4 the kept and interpolated sets change.
    default = pe_lib.yarn_frequencies(128, 4.0, original_length=2048)
    narrow = pe_lib.yarn_frequencies(128, 4.0, original_length=2048, beta_fast=8.0, beta_slow=4.0)
    assert np.abs(narrow / default - 1).max() > 0.5
    np.testing.assert_allclose(narrow, reference_yarn(128, 4.0, 2048, 10_000.0, 8.0, 4.0, "code"), rtol=1e-12)
    paper = pe_lib.yarn_frequencies(128, 4.0, original_length=2048, beta_fast=8.0, beta_slow=4.0, ramp="paper")
    np.testing.assert_allclose(paper, reference_yarn(128, 4.0, 2048, 10_000.0, 8.0, 4.0, "paper"), rtol=1e-12)
    # and their base: the same ramp arguments with base 500000 give other frequencies
    np.testing.assert_allclose(pe_lib.yarn_frequencies(128, 4.0, original_length=2048, base=500_000.0),
                               reference_yarn(128, 4.0, 2048, 500_000.0, 32.0, 1.0, "code"), rtol=1e-12)


@pytest.mark.parametrize("ramp", ["code", "paper"])
@given(d=d_models_4, s=scales, length=st.integers(256, 8192))
def test_yarn_ramp_interpolates_between_pi_and_no_change(ramp, d, s, length):
    omega = pe_lib.frequencies(d)
    gamma = pe_lib.yarn_ramp(d, original_length=length, ramp=ramp)
    turns = length * omega / (2 * math.pi)
    assert np.all((gamma >= 0) & (gamma <= 1))
    assert np.all(np.diff(gamma) <= 0)  # faster pairs are kept more
    np.testing.assert_array_equal(gamma[turns >= 32], 1.0)  # L >= 2 pi 32: both ramps keep these exactly
    np.testing.assert_array_equal(gamma[turns <= 1], 0.0)
    yarn = pe_lib.yarn_frequencies(d, s, original_length=length, ramp=ramp)
    keep, interp = gamma == 1.0, gamma == 0.0
    np.testing.assert_allclose(yarn[keep], omega[keep])
    np.testing.assert_allclose(yarn[interp], pe_lib.pi_frequencies(d, s)[interp])
    assert np.all(yarn <= omega * (1 + 1e-12)) and np.all(yarn >= omega / s * (1 - 1e-12))


def test_pi_and_yarn_are_the_linear_and_yarn_rope_types():
    # pi_frequencies and the code-ramp yarn_frequencies are computed by rope_scaling_frequencies;
    # the paper's ramp is not a transformers type and differs in the mixed pairs
    np.testing.assert_array_equal(pe_lib.pi_frequencies(96, 3.0, base=5e5),
                                  pe_lib.rope_scaling_frequencies(96, {"type": "linear", "factor": 3.0}, base=5e5)[0])
    code = pe_lib.yarn_frequencies(128, 4.0, original_length=2048)
    hf = pe_lib.rope_scaling_frequencies(128, {"rope_type": "yarn", "factor": 4.0},
                                         max_position_embeddings=2048)[0]
    np.testing.assert_array_equal(code, hf)
    paper = pe_lib.yarn_frequencies(128, 4.0, original_length=2048, ramp="paper")
    assert np.abs(paper / hf - 1).max() > 0.1


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
         r"need 0 < beta_slow < beta_fast .* got 1.0 and 1.0"),
        (lambda: pe_lib.yarn_ramp(8, original_length=64, beta_slow=0.0, ramp="paper"), r"need 0 < beta_slow"),
        (lambda: pe_lib.yarn_ramp(8, original_length=64, ramp="neox"), r"ramp must be one of 'code', 'paper'"),
        (lambda: pe_lib.yarn_correction_range(8, original_length=64, base=1.0), r"base must be a finite number"),
        (lambda: pe_lib.yarn_correction_range(7, original_length=64), r"d must be a positive even integer"),
        (lambda: pe_lib.yarn_correction_range(8, original_length=0), r"original_length must be an integer >= 1"),
        (lambda: pe_lib.yarn_frequencies(8, 2.0, original_length=64, beta_fast=float("inf")),
         r"beta_fast must be a finite real number"),
        (lambda: pe_lib.yarn_frequencies(8, 0.9, original_length=64), r"must be >= 1, got 0.9"),
        (lambda: pe_lib.yarn_frequencies(8, 2.0, original_length=0), r"original_length must be an integer >= 1"),
        (lambda: pe_lib.yarn_frequencies(8, 2.0, original_length=64, beta_slow=0.0),
         r"need 0 < beta_slow < beta_fast"),  # not transformers' "0 means the default"
        (lambda: pe_lib.yarn_attention_factor("2"), r"scale must be a finite real number"),
    ],
)
def test_validation(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---- found by `make mutate` (each kills mutants that the tests above let live) ---------------------
def test_yarn_correction_range_default_base_is_10000():
    def bounds(d, length, base):  # floor(i(32)), ceil(i(1)) with i(r) = d ln(L / (2 pi r)) / (2 ln base)
        i = [d * math.log(length / (2 * math.pi * r)) / (2 * math.log(base)) for r in (32.0, 1.0)]
        return max(math.floor(i[0]), 0), min(math.ceil(i[1]), d - 1)

    # the first length from 4096 on whose bounds a base of 10001 would move (4712)
    length = next(n for n in range(4096, 200_000) if bounds(64, n, 10_000.0) != bounds(64, n, 10_001.0))
    assert pe_lib.yarn_correction_range(64, original_length=length) == bounds(64, length, 10_000.0)


@pytest.mark.parametrize(("call", "match"), [
    (lambda: pe_lib.ntk_base(7, 2.0), r"^d must be a positive even integer"),
    (lambda: pe_lib.yarn_ramp(7, original_length=4096, ramp="paper"), r"^d must be a positive even integer"),
    (lambda: pe_lib.yarn_ramp(8, original_length=0, ramp="paper"), r"^original_length must be an integer >= 1"),
    (lambda: pe_lib.yarn_frequencies(7, 2.0, original_length=4096), r"^d must be a positive even integer"),
    (lambda: pe_lib.yarn_frequencies(8, 2.0, original_length=4096, ramp="x"), r"^ramp must be one of"),
    (lambda: pe_lib.pi_frequencies(8, 0.5),
     r"^scale is the factor L'/L by which the context grows and must be >= 1, got 0.5; for a context of 8192 "
     r"tokens from 2048 pass scale=4.0$"),
])
def test_errors_name_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()
