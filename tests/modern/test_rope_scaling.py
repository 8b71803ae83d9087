"""rope_scaling_frequencies against independent re-implementations of each rope_type's published rule.

The references below are written from the formulas (papers, the Llama 3.1 release, the transformers
documentation of each ``rope_scaling`` key), one pair at a time, in plain Python floats or in a chosen
numpy dtype. transformers computes ``inv_freq`` in float32: the float32 evaluation of the same
formulas shows how far that rounding moves the values (about 1e-7 relative, more where llama3's and
YaRN's blends amplify it), and pe_lib (float64) must sit within that of it and within 1e-12 of the
float64 evaluation.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pe_lib
from pe_lib.modern.rope_scaling import check_betas, yarn_bounds


# ---- independent references, one pair at a time ------------------------------------------------------
def ref_omega(d, base, i, dtype=float):
    return dtype(1.0) / dtype(base) ** (dtype(2 * i) / dtype(d))  # base^(-2i/d)


def ref_default(d, base, dtype=float):
    return np.array([ref_omega(d, base, i, dtype) for i in range(d // 2)], dtype=np.float64)


def ref_linear(d, base, factor, dtype=float):
    return np.array([ref_omega(d, base, i, dtype) / dtype(factor) for i in range(d // 2)], dtype=np.float64)


def ref_dynamic(d, base, factor, max_len, seq_len, dtype=float):
    """NTK-aware base re-tuned to the current length l = max(seq_len, max_len) (emozilla's dynamic NTK)."""
    ell = max_len if seq_len is None or seq_len < max_len else seq_len
    new_base = base * (factor * ell / max_len - factor + 1) ** (d / (d - 2))
    return ref_default(d, new_base, dtype)


def ref_yarn(d, base, factor, original, beta_fast=32.0, beta_slow=1.0, truncate=True, dtype=float):
    """NTK-by-parts with the ramp linear in the pair index between i(beta_fast) and i(beta_slow),
    i(r) = d ln(L / (2 pi r)) / (2 ln base); rounded outwards when truncate; clamped to [0, d - 1]."""
    def index(turns):
        return d * math.log(original / (2 * math.pi * turns)) / (2 * math.log(base))

    low, high = index(beta_fast), index(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    if high == low:
        high = high + 0.001
    out = []
    for i in range(d // 2):
        keep = 1 - min(max((i - low) / (high - low), 0.0), 1.0)  # 1: extrapolate (keep), 0: interpolate
        omega = ref_omega(d, base, i, dtype)
        out.append(dtype(keep) * omega + dtype(1 - keep) * omega / dtype(factor))
    return np.array(out, dtype=np.float64)


def ref_yarn_attention(factor, mscale=None, mscale_all_dim=None):
    def m(scale, k):
        return 0.1 * k * math.log(scale) + 1.0 if scale > 1 else 1.0

    if mscale and mscale_all_dim:
        return m(factor, mscale) / m(factor, mscale_all_dim)
    return m(factor, 1.0)


def ref_longrope(d, base, short, long, original, seq_len, dtype=float):
    rescale = long if seq_len is not None and seq_len > original else short
    return np.array([ref_omega(d, base, i, dtype) / dtype(rescale[i]) for i in range(d // 2)], dtype=np.float64)


def ref_llama3(d, base, factor, low, high, original, dtype=float):
    """Llama 3.1: wavelength above L/low -> omega/factor, below L/high -> omega, between a blend linear in L/lambda."""
    out = []
    for i in range(d // 2):
        omega = ref_omega(d, base, i, dtype)
        lam = dtype(2 * math.pi) / omega
        if lam < original / high:
            out.append(omega)
        elif lam > original / low:
            out.append(omega / dtype(factor))
        else:
            kappa = (dtype(original) / lam - dtype(low)) / dtype(high - low)
            out.append((1 - kappa) * omega / dtype(factor) + kappa * omega)
    return np.array(out, dtype=np.float64)


def check(ours, ref64, ref32, *, float32_rtol=2e-6):
    """pe_lib equals the float64 reference and sits within float32 rounding of the float32 one."""
    np.testing.assert_allclose(ours, ref64, rtol=1e-12, atol=0)
    np.testing.assert_allclose(ours, ref32, rtol=float32_rtol, atol=0)


f32 = np.float32
BASES = [10_000.0, 500_000.0, 1_000_000.0, 150_000.0]


# ---- default and linear ----------------------------------------------------------------------------
@pytest.mark.parametrize("rope_scaling", [None, {"rope_type": "default"}, {"type": "default"}])
@pytest.mark.parametrize("base", BASES)
def test_default_is_plain_rope(rope_scaling, base):
    inv_freq, attention = pe_lib.rope_scaling_frequencies(128, rope_scaling, base=base)
    assert inv_freq.shape == (64,) and attention == 1.0
    check(inv_freq, ref_default(128, base), ref_default(128, base, f32))


@pytest.mark.parametrize("factor", [1.0, 2.0, 4.0, 8.0, 32.5])
@pytest.mark.parametrize(("head_dim", "base"), [(128, 10_000.0), (64, 500_000.0), (96, 1e6)])
def test_linear_divides_every_frequency(factor, head_dim, base):
    inv_freq, attention = pe_lib.rope_scaling_frequencies(head_dim, {"rope_type": "linear", "factor": factor},
                                                          base=base)
    assert attention == 1.0
    check(inv_freq, ref_linear(head_dim, base, factor), ref_linear(head_dim, base, factor, f32))
    np.testing.assert_allclose(inv_freq, pe_lib.pi_frequencies(head_dim, factor, base=base), rtol=0, atol=0)


def test_partial_rotary_factor_and_the_keys_of_transformers_5():
    # Phi-2-like: head 80, 40% rotated -> int(80 * 0.4) = 32 dimensions, 16 frequencies of base^(-2i/32)
    inv_freq, _ = pe_lib.rope_scaling_frequencies(80, None, partial_rotary_factor=0.4)
    check(inv_freq, ref_default(32, 10_000.0), ref_default(32, 10_000.0, f32))
    # transformers 5 keeps rope_theta and partial_rotary_factor inside rope_parameters
    params = {"rope_type": "linear", "factor": 2.0, "rope_theta": 500_000.0, "partial_rotary_factor": 0.5}
    np.testing.assert_array_equal(pe_lib.rope_scaling_frequencies(128, params)[0],
                                  pe_lib.rope_scaling_frequencies(128, {"rope_type": "linear", "factor": 2.0},
                                                                  base=500_000.0, partial_rotary_factor=0.5)[0])
    assert pe_lib.rope_scaling_frequencies(128, params, base=500_000.0)[0].shape == (32,)  # agreeing is fine
    # int() truncates as in transformers: int(96 * 0.33) = int(31.68) = 31 is odd -> refused (below)
    assert pe_lib.rope_scaling_frequencies(96, None, partial_rotary_factor=0.34)[0].shape == (16,)  # int(32.64)


# ---- dynamic ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("seq_len", [None, 1, 2048, 4095, 4096, 4097, 8192, 16_384, 100_000])
@pytest.mark.parametrize(("factor", "base", "head_dim"), [(2.0, 10_000.0, 128), (1.0, 10_000.0, 64), (8.0, 5e5, 96)])
def test_dynamic_matches_the_reference(seq_len, factor, base, head_dim):
    params = {"rope_type": "dynamic", "factor": factor}
    inv_freq, attention = pe_lib.rope_scaling_frequencies(head_dim, params, base=base, max_position_embeddings=4096,
                                                          seq_len=seq_len)
    assert attention == 1.0
    check(inv_freq, ref_dynamic(head_dim, base, factor, 4096, seq_len),
          ref_dynamic(head_dim, base, factor, 4096, seq_len, f32))


def test_dynamic_is_the_default_up_to_max_position_embeddings_and_changes_just_after():
    omega = pe_lib.frequencies(128)
    at = {n: pe_lib.rope_scaling_frequencies(128, {"rope_type": "dynamic", "factor": 2.0},
                                             max_position_embeddings=4096, seq_len=n)[0] for n in (1, 4096, 4097)}
    np.testing.assert_array_equal(at[1], omega)  # 2 * 4096/4096 - 1 = 1 exactly: base unchanged
    np.testing.assert_array_equal(at[4096], omega)
    # seq_len 4097: base' = base * (2 * 4097/4096 - 1)^(128/126) = base * (1 + 1/2048)^(64/63)
    expected = pe_lib.frequencies(128, base=10_000.0 * (1 + 1 / 2048) ** (64 / 63))
    np.testing.assert_allclose(at[4097], expected, rtol=1e-13)
    assert at[4097][-1] < omega[-1] * (1 - 1e-4)
    # an original_max_position_embeddings key is not used; transformers 5.23.0 warns that it does not know it
    with pytest.warns(pe_lib.RopeScalingWarning, match=r"'dynamic' does not use the keys \['original_max_position"):
        with_key = pe_lib.rope_scaling_frequencies(128, {"rope_type": "dynamic", "factor": 2.0,
                                                         "original_max_position_embeddings": 1024},
                                                   max_position_embeddings=4096, seq_len=4097)[0]
    np.testing.assert_array_equal(with_key, at[4097])


@given(d=st.integers(2, 64).map(lambda h: 2 * h), s=st.floats(1.0, 64.0), base=st.floats(2.0, 1e6),
       max_len=st.integers(16, 1 << 16), k=st.integers(1, 64))
def test_ntk_aware_is_dynamic_with_factor_one_at_the_extended_length(d, s, base, max_len, k):
    # dynamic with factor 1 at seq_len = k * max_len has base' = base * k^(d/(d-2)): NTK-aware with s = k
    dynamic = pe_lib.rope_scaling_frequencies(d, {"rope_type": "dynamic", "factor": 1.0}, base=base,
                                              max_position_embeddings=max_len, seq_len=k * max_len)[0]
    np.testing.assert_allclose(dynamic, pe_lib.ntk_frequencies(d, float(k), base=base), rtol=1e-12)


def test_dynamic_at_the_extended_length_uses_an_effective_scale_above_factor():
    # at seq_len = s * L the dynamic formula's scale is s * s - (s - 1) = s^2 - s + 1, not s: 3 for s = 2
    dyn = pe_lib.rope_scaling_frequencies(128, {"rope_type": "dynamic", "factor": 2.0},
                                          max_position_embeddings=4096, seq_len=8192)[0]
    np.testing.assert_allclose(dyn, pe_lib.ntk_frequencies(128, 3.0), rtol=1e-13)


# ---- yarn ------------------------------------------------------------------------------------------
YARN_CASES = [  # (head_dim, base, factor, original, extra keys)
    (128, 10_000.0, 4.0, 2048, {}),
    (128, 10_000.0, 16.0, 4096, {"beta_fast": 16.0, "beta_slow": 2.0}),
    (128, 150_000.0, 32.0, 4096, {"beta_fast": 32.0, "beta_slow": 1.0, "truncate": False}),  # gpt-oss-like
    (64, 10_000.0, 40.0, 4096, {"mscale": 1.0, "mscale_all_dim": 1.0}),  # DeepSeek-V3-like: ratio 1
    (64, 10_000.0, 40.0, 4096, {"mscale": 0.707, "mscale_all_dim": 1.0}),
    (96, 1e6, 4.0, 32_768, {"attention_factor": 1.25}),
    (16, 100.0, 3.0, 300, {"beta_fast": 8.0, "beta_slow": 1.5}),
    (128, 10_000.0, 1.0, 2048, {}),  # factor 1 changes nothing, attention 1
]


@pytest.mark.parametrize(("head_dim", "base", "factor", "original", "extra"), YARN_CASES)
def test_yarn_matches_the_reference(head_dim, base, factor, original, extra):
    params = {"rope_type": "yarn", "factor": factor, "original_max_position_embeddings": original, **extra}
    inv_freq, attention = pe_lib.rope_scaling_frequencies(head_dim, params, base=base)
    ramp = {k: extra[k] for k in ("beta_fast", "beta_slow", "truncate") if k in extra}
    check(inv_freq, ref_yarn(head_dim, base, factor, original, **ramp),
          ref_yarn(head_dim, base, factor, original, **ramp, dtype=f32), float32_rtol=5e-6)
    expected = extra.get("attention_factor") or ref_yarn_attention(factor, extra.get("mscale"),
                                                                   extra.get("mscale_all_dim"))
    assert attention == pytest.approx(expected, rel=1e-15)


@given(d=st.integers(2, 64).map(lambda h: 2 * h), s=st.floats(1.0, 64.0), base=st.floats(2.0, 1e7),
       original=st.integers(1, 1 << 20), fast=st.floats(2.0, 128.0), slow_fraction=st.floats(0.01, 1.0),
       truncate=st.booleans())
def test_yarn_matches_the_reference_everywhere(d, s, base, original, fast, slow_fraction, truncate):
    slow = fast * slow_fraction
    params = {"rope_type": "yarn", "factor": s, "original_max_position_embeddings": original,
              "beta_fast": fast, "beta_slow": slow, "truncate": truncate}
    np.testing.assert_allclose(pe_lib.rope_scaling_frequencies(d, params, base=base)[0],
                               ref_yarn(d, base, s, original, fast, slow, truncate), rtol=1e-12, atol=0)


def test_yarn_defaults_and_fallbacks_as_transformers():
    base_params = {"rope_type": "yarn", "factor": 8.0}
    explicit = pe_lib.rope_scaling_frequencies(128, {**base_params, "original_max_position_embeddings": 4096,
                                                     "beta_fast": 32.0, "beta_slow": 1.0, "truncate": True})
    # no original_max_position_embeddings in the dict: max_position_embeddings is the training length
    fallback = pe_lib.rope_scaling_frequencies(128, base_params, max_position_embeddings=4096)
    # beta None or 0 means the default (transformers: `beta_fast or 32`)
    zeros = pe_lib.rope_scaling_frequencies(128, {**base_params, "beta_fast": 0, "beta_slow": None},
                                            max_position_embeddings=4096)
    for other in (fallback, zeros):
        np.testing.assert_array_equal(other[0], explicit[0])
        assert other[1] == explicit[1] == pytest.approx(0.1 * math.log(8.0) + 1)
    # the dict's original length wins over max_position_embeddings (transformers warns that 131072 / 4096 is not 8)
    with pytest.warns(pe_lib.RopeScalingWarning, match=r"factor 8.0 differs from .* = 32.0; the factor is used"):
        np.testing.assert_array_equal(
            pe_lib.rope_scaling_frequencies(128, {**base_params, "original_max_position_embeddings": 4096},
                                            max_position_embeddings=131_072)[0], explicit[0])
    # mscale alone (without mscale_all_dim) is ignored, as in transformers
    assert pe_lib.rope_scaling_frequencies(128, {**base_params, "mscale": 0.5},
                                           max_position_embeddings=4096)[1] == explicit[1]


@pytest.mark.parametrize("original", [4096, 8192, 2048])
def test_yarn_with_equal_betas_as_in_kimi_k2(original):
    # Kimi K2's config has beta_fast = beta_slow = 1: the code's ramp is then one pair wide (or 0.001 wide when
    # i(1) is an integer); transformers computes it without a warning, and so does pe_lib
    params = {"rope_type": "yarn", "factor": 32.0, "beta_fast": 1.0, "beta_slow": 1.0,
              "original_max_position_embeddings": original, "mscale": 1.0, "mscale_all_dim": 1.0}
    inv_freq, attention = pe_lib.rope_scaling_frequencies(64, params, base=50_000.0)
    np.testing.assert_allclose(inv_freq, ref_yarn(64, 50_000.0, 32.0, original, 1.0, 1.0), rtol=1e-12)
    assert attention == 1.0
    keep = (inv_freq - pe_lib.frequencies(64, base=50_000.0) / 32) / (pe_lib.frequencies(64, base=50_000.0) * 31 / 32)
    assert np.sum((keep > 1e-12) & (keep < 1 - 1e-12)) <= 1  # at most one pair between kept and interpolated


def test_yarn_zero_width_ramp_guard():
    # L = 6 < 2 pi: i(1 turn) is in (-1, 0], so low = high = 0 and the source widens the ramp by 0.001:
    # pair 0 is kept, every other pair interpolated (without the guard: a division by zero)
    omega = pe_lib.frequencies(8)
    inv_freq = pe_lib.rope_scaling_frequencies(8, {"rope_type": "yarn", "factor": 2.0,
                                                   "original_max_position_embeddings": 6})[0]
    np.testing.assert_array_equal(inv_freq, [omega[0], omega[1] / 2, omega[2] / 2, omega[3] / 2])


def test_yarn_truncate_false_keeps_the_fractional_ramp_ends():
    # d = 128, L = 2048, base 10000: i(32) = 16.128, i(1) = 40.210 (chapter 13); truncate=False ramps between them
    params = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048, "truncate": False}
    inv_freq = pe_lib.rope_scaling_frequencies(128, params)[0]
    omega = pe_lib.frequencies(128)
    keep = (inv_freq - omega / 4) / (omega - omega / 4)  # recover gamma_i
    i_fast = 128 * math.log(2048 / (2 * math.pi * 32)) / (2 * math.log(10_000))
    i_slow = 128 * math.log(2048 / (2 * math.pi)) / (2 * math.log(10_000))
    assert keep[16] == 1.0 and keep[17] == pytest.approx(1 - (17 - i_fast) / (i_slow - i_fast), abs=1e-12)
    assert keep[40] == pytest.approx(1 - (40 - i_fast) / (i_slow - i_fast), abs=1e-12) and keep[41] == 0.0
    truncated = pe_lib.rope_scaling_frequencies(128, {**params, "truncate": True})[0]
    np.testing.assert_array_equal(truncated, pe_lib.yarn_frequencies(128, 4.0, original_length=2048))
    assert np.abs(truncated / inv_freq - 1).max() > 0.01


def test_yarn_frequencies_is_a_thin_use_of_it():
    for d, s, length, base, fast, slow in [(128, 4.0, 2048, 10_000.0, 32.0, 1.0), (64, 16.0, 8192, 5e5, 16.0, 2.0)]:
        params = {"rope_type": "yarn", "factor": s, "original_max_position_embeddings": length,
                  "beta_fast": fast, "beta_slow": slow}
        np.testing.assert_array_equal(
            pe_lib.yarn_frequencies(d, s, original_length=length, base=base, beta_fast=fast, beta_slow=slow),
            pe_lib.rope_scaling_frequencies(d, params, base=base)[0])


# ---- longrope --------------------------------------------------------------------------------------
def phi3_like(half, seed=0):
    rng = np.random.default_rng(seed)
    return [float(x) for x in rng.uniform(1.0, 1.2, half)], [float(x) for x in rng.uniform(1.0, 40.0, half)]


@pytest.mark.parametrize("seq_len", [None, 1, 4095, 4096, 4097, 131_072])
def test_longrope_switches_to_long_factors_only_beyond_the_original_length(seq_len):
    short, long = phi3_like(48)
    params = {"rope_type": "longrope", "short_factor": short, "long_factor": long,
              "original_max_position_embeddings": 4096}
    inv_freq, attention = pe_lib.rope_scaling_frequencies(96, params, max_position_embeddings=131_072,
                                                          seq_len=seq_len)
    check(inv_freq, ref_longrope(96, 10_000.0, short, long, 4096, seq_len),
          ref_longrope(96, 10_000.0, short, long, 4096, seq_len, f32))
    uses_long = seq_len is not None and seq_len > 4096  # 4096 itself: short
    np.testing.assert_allclose(inv_freq * np.array(long if uses_long else short), pe_lib.frequencies(96), rtol=1e-15)
    # Phi-3-mini-128k: factor = 131072 / 4096 = 32, attention sqrt(1 + ln 32 / ln 4096) = sqrt(1 + 5/12)
    assert attention == pytest.approx(math.sqrt(1 + 5 / 12), rel=1e-15)


def test_longrope_factor_and_attention_factor():
    short, long = phi3_like(32, seed=1)
    base_params = {"rope_type": "longrope", "short_factor": short, "long_factor": long}
    # a factor in the dict wins over max_position_embeddings / original (transformers 5)
    _, att = pe_lib.rope_scaling_frequencies(64, {**base_params, "factor": 8.0,
                                                  "original_max_position_embeddings": 2048},
                                             max_position_embeddings=131_072)
    assert att == pytest.approx(math.sqrt(1 + math.log(8.0) / math.log(2048)))
    # no original length in the dict: max_position_embeddings is the original length, factor 1 -> attention 1
    inv_freq, att = pe_lib.rope_scaling_frequencies(64, base_params, max_position_embeddings=4096, seq_len=4097)
    assert att == 1.0
    np.testing.assert_allclose(inv_freq, ref_longrope(64, 10_000.0, short, long, 4096, 4097), rtol=1e-12)
    _, att = pe_lib.rope_scaling_frequencies(64, {**base_params, "factor": 1.0}, max_position_embeddings=4096)
    assert att == 1.0
    _, att = pe_lib.rope_scaling_frequencies(64, {**base_params, "factor": 4.0, "attention_factor": 1.5},
                                             max_position_embeddings=4096)
    assert att == 1.5
    # the legacy key "type", as in Phi-3's config.json
    legacy = {"type": "longrope", "short_factor": short, "long_factor": long, "original_max_position_embeddings": 2048}
    np.testing.assert_array_equal(
        pe_lib.rope_scaling_frequencies(64, legacy, max_position_embeddings=8192, seq_len=3000)[0],
        pe_lib.frequencies(64) / np.array(long))


# ---- llama3 ----------------------------------------------------------------------------------------
LLAMA31 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
           "original_max_position_embeddings": 8192}


@pytest.mark.parametrize(("head_dim", "base", "params"), [
    (128, 500_000.0, LLAMA31),
    (128, 10_000.0, LLAMA31),
    (64, 500_000.0, {**LLAMA31, "factor": 32.0, "low_freq_factor": 2.0, "high_freq_factor": 3.0,
                     "original_max_position_embeddings": 1024}),
    (96, 1e6, {**LLAMA31, "factor": 2.0, "low_freq_factor": 0.5, "high_freq_factor": 8.0}),
])
def test_llama3_matches_the_reference(head_dim, base, params):
    inv_freq, attention = pe_lib.rope_scaling_frequencies(head_dim, params, base=base)
    args = (head_dim, base, params["factor"], params["low_freq_factor"], params["high_freq_factor"],
            params["original_max_position_embeddings"])
    # float32 rounding of a wavelength near a band edge is amplified by up to
    # (factor - 1) * high / (high - low): 1e-4 covers factor 32 with high/(high - low) = 3
    check(inv_freq, ref_llama3(*args), ref_llama3(*args, dtype=f32), float32_rtol=1e-4)
    assert attention == 1.0


def test_llama31_bands_by_hand():
    # lambda_i = 2 pi 500000^(i/64): above 8192 (= L/1) for i > 64 ln(8192 / 2pi) / ln(500000) = 34.99,
    # below 2048 (= L/4) for i < 64 ln(2048 / 2pi) / ln(500000) = 28.22: pairs 0..28 kept, 35..63 divided by 8
    inv_freq, _ = pe_lib.rope_scaling_frequencies(128, LLAMA31, base=500_000.0)
    omega = pe_lib.frequencies(128, base=500_000.0)
    np.testing.assert_array_equal(inv_freq[:29], omega[:29])
    np.testing.assert_array_equal(inv_freq[35:], omega[35:] / 8)
    ratio = inv_freq[29:35] / omega[29:35]
    assert np.all((ratio > 1 / 8) & (ratio < 1)) and np.all(np.diff(ratio) < 0)


@pytest.mark.parametrize(("factor", "low", "high", "original", "base"), [
    (8.0, 1.0, 4.0, 8192, 500_000.0), (32.0, 2.0, 3.0, 1024, 10_000.0), (2.0, 0.5, 8.0, 4096, 1e6)])
def test_llama3_is_the_yarn_papers_ramp_without_its_temperature(factor, low, high, original, base):
    # kappa = (L / lambda - low) / (high - low) and L / lambda is the number of turns r within L: the paper's
    # gamma(r) with beta_slow = low_freq_factor, beta_fast = high_freq_factor
    params = {"rope_type": "llama3", "factor": factor, "low_freq_factor": low, "high_freq_factor": high,
              "original_max_position_embeddings": original}
    paper = pe_lib.yarn_frequencies(128, factor, original_length=original, base=base, beta_fast=high, beta_slow=low,
                                    ramp="paper")
    np.testing.assert_allclose(pe_lib.rope_scaling_frequencies(128, params, base=base)[0], paper, rtol=1e-13)


def test_llama3_band_edges_exactly():
    # choose low/high_freq_factor so that pair 20's wavelength is exactly a band edge (L / factor == lambda)
    omega = pe_lib.frequencies(128, base=500_000.0)
    lam = 2 * np.pi / omega
    edge = next(k for k in range(10, 60) if 8192 / (8192 / lam[k]) == lam[k])
    at_low = {**LLAMA31, "low_freq_factor": 8192 / lam[edge], "high_freq_factor": 8192 / lam[edge] * 4}
    inv_freq = pe_lib.rope_scaling_frequencies(128, at_low, base=500_000.0)[0]
    assert inv_freq[edge] == omega[edge] / 8  # on the low-frequency edge: kappa = 0, divided by the factor
    assert omega[edge - 1] / 8 < inv_freq[edge - 1] < omega[edge - 1]  # just inside: blended
    at_high = {**LLAMA31, "low_freq_factor": 8192 / lam[edge] / 4, "high_freq_factor": 8192 / lam[edge]}
    inv_freq = pe_lib.rope_scaling_frequencies(128, at_high, base=500_000.0)[0]
    assert inv_freq[edge] == omega[edge]  # on the high-frequency edge: kappa = 1, kept
    assert omega[edge + 1] / 8 < inv_freq[edge + 1] < omega[edge + 1]
    # the map is continuous at the edges, so whether an edge counts as inside or outside cannot matter


# ---- bad input -------------------------------------------------------------------------------------
LONG = {"rope_type": "longrope", "short_factor": [1.0] * 64, "long_factor": [2.0] * 64}


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"head_dim": 0}, ValueError, r"head_dim must be an integer >= 1"),
        ({"rope_scaling": [("rope_type", "linear")]}, TypeError, r"rope_scaling must be None or a dict"),
        ({"rope_scaling": {"factor": 8.0}, "strict": True}, ValueError,
         r"needs a 'rope_type' \(or the legacy 'type'\) key"),
        ({"rope_scaling": {"rope_type": "ntk"}}, ValueError, r"rope_type must be one of 'default', .*got 'ntk'$"),
        ({"rope_scaling": {"type": "su"}}, ValueError, r"Phi-3's old name for 'longrope'"),
        ({"rope_scaling": {"type": "axial"}}, ValueError, r"'axial' is the 2-D RoPE of vision towers"),
        ({"rope_scaling": {"rope_type": "linear", "factor": 2.0}, "strict": "yes"}, TypeError,
         r"strict must be True or False"),
        ({"rope_scaling": {"rope_type": "linear"}}, ValueError, r"'linear' needs the keys \['factor'\]; missing"),
        ({"rope_scaling": {"rope_type": "llama3", "factor": 8.0}}, ValueError,
         r"missing \['low_freq_factor', 'high_freq_factor'\]"),
        ({"rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0}},
         ValueError, r"'llama3' needs the training length"),
        ({"rope_scaling": {"rope_type": "longrope", "short_factor": [1.0] * 64}}, ValueError,
         r"missing \['long_factor'\]"),
        ({"rope_scaling": {"rope_type": "linear", "factor": 2.0, "low_freq_factor": 1.0}, "strict": True}, ValueError,
         r"'linear' does not use the keys \['low_freq_factor'\]; it takes \['factor'\]"),
        ({"rope_scaling": {"rope_type": "default", "factor": 2.0}, "strict": True}, ValueError,
         r"it takes no other keys"),
        ({"rope_scaling": {"rope_type": "linear", "factor": 0.5}, "strict": True}, ValueError,
         r"factor .* should be >= 1, got 0.5 \(transformers only warns; strict=True refuses it\)"),
        ({"rope_scaling": {"rope_type": "linear", "factor": None}}, ValueError, r"factor must be a finite real number"),
        ({"rope_scaling": {"rope_type": "linear", "factor": 2.0, "rope_theta": 1e6}, "base": 5e5}, ValueError,
         r"rope_scaling\['rope_theta'\] = 1000000.0 disagrees with base=500000.0"),
        ({"base": 1.0}, ValueError, r"base must be a finite number greater than 1"),
        ({"partial_rotary_factor": 0.0}, ValueError, r"partial_rotary_factor is the rotated fraction .* got 0.0"),
        ({"partial_rotary_factor": 1.5}, ValueError, r"in \(0, 1\], got 1.5"),
        ({"partial_rotary_factor": float("nan")}, ValueError, r"partial_rotary_factor must be a finite real"),
        ({"head_dim": 96, "partial_rotary_factor": 0.33}, ValueError, r"int\(96 \* 0.33\) = 31 must be .* even"),
        ({"head_dim": 1}, ValueError, r"= 1 must be a positive even integer"),
        ({"max_position_embeddings": 0}, ValueError, r"max_position_embeddings must be an integer >= 1"),
        ({"seq_len": 2.5}, ValueError, r"seq_len must be an integer >= 1"),
        ({"rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}, ValueError, r"pass max_position_embeddings="),
        ({"rope_scaling": {"rope_type": "dynamic", "factor": 2.0}, "head_dim": 2, "max_position_embeddings": 64},
         ValueError, r"divides by d - 2, so the rotary dimension must be >= 4, got 2"),
        ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0}}, ValueError,
         r"'yarn' needs the training length: put 'original_max_position_embeddings'"),
        ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 0}}, ValueError,
         r"original_max_position_embeddings must be an integer >= 1"),
        ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "beta_fast": 1.0, "beta_slow": 2.0},
          "max_position_embeddings": 4096, "strict": True}, ValueError,
         r"beta_fast \(1.0\) should not be below beta_slow \(2.0\)"),
        ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "beta_slow": -1.0},
          "max_position_embeddings": 4096}, ValueError, r"need 0 < beta_slow <= beta_fast"),
        ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "truncate": "no"}, "max_position_embeddings": 4096},
         ValueError, r"truncate must be True or False, got 'no'"),
        ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "attention_factor": "x"},
          "max_position_embeddings": 4096}, ValueError, r"attention_factor must be a finite real number"),
        ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "mscale": 1.0, "mscale_all_dim": float("inf")},
          "max_position_embeddings": 4096}, ValueError, r"mscale_all_dim must be a finite real number"),
        ({"rope_scaling": {**LONG, "short_factor": [1.0] * 63}, "max_position_embeddings": 4096}, ValueError,
         r"short_factor must be a list of 64 numbers .* got shape \(63,\)"),
        ({"rope_scaling": {**LONG, "long_factor": [1.0] * 63 + [0.0]}, "max_position_embeddings": 4096}, ValueError,
         r"long_factor must hold finite positive numbers, got 0.0"),
        ({"rope_scaling": {**LONG, "long_factor": ["a"] * 64}, "max_position_embeddings": 4096}, TypeError,
         r"long_factor must hold real numbers"),
        ({"rope_scaling": LONG}, ValueError, r"'longrope' needs the training length"),
        ({"rope_scaling": LONG, "original_max_position_embeddings": 0}, ValueError,
         r"original_max_position_embeddings must be an integer >= 1"),
        ({"rope_scaling": {**LONG, "original_max_position_embeddings": 4096}}, ValueError,
         r"'longrope' without 'factor' uses max_position_embeddings"),
        ({"rope_scaling": {**LONG, "factor": 0.9}, "max_position_embeddings": 4096, "strict": True}, ValueError,
         r"got 0.9"),
        ({"rope_scaling": {**LONG, "factor": 2.0, "attention_factor": float("nan")}, "max_position_embeddings": 4096},
         ValueError, r"attention_factor must be a finite real number"),
        ({"rope_scaling": {**LLAMA31, "high_freq_factor": 1.0}, "strict": True}, ValueError,
         r"high_freq_factor \(1.0\) should be above low_freq_factor \(1.0\)"),
        ({"rope_scaling": {**LLAMA31, "low_freq_factor": 0.0}}, ValueError, r"low_freq_factor .* must be > 0, got 0.0"),
        ({"rope_scaling": LLAMA31, "max_position_embeddings": 8192, "strict": True}, ValueError,
         r"original_max_position_embeddings \(8192\) should be below max_position_embeddings \(8192\)"),
        ({"rope_scaling": {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096},
          "max_position_embeddings": 131_072, "strict": True}, ValueError, r"factor 8.0 differs"),
        ({"rope_scaling": {"rope_type": "proportional"}, "strict": True}, ValueError,
         r"'proportional' without partial_rotary_factor rotates every pair"),
        ({"rope_scaling": {"rope_type": "proportional", "partial_rotary_factor": 0.25, "factor": 0.0}}, ValueError,
         r"factor divides the frequencies and must be > 0, got 0.0"),
        ({"rope_scaling": {"rope_type": "proportional", "partial_rotary_factor": 0.5}, "head_dim": 9}, ValueError,
         r"head_dim must be even, got 9"),
        ({"rope_scaling": {**LLAMA31, "low_freq_factor": None}}, ValueError, r"low_freq_factor must be a finite real"),
        ({"rope_scaling": {**LLAMA31, "original_max_position_embeddings": 8192.0}}, ValueError,
         r"original_max_position_embeddings must be an integer >= 1"),
    ],
)
def test_bad_input_is_refused_with_what_is_expected(kwargs, error, match):
    kwargs = {"head_dim": 128, **kwargs}
    head_dim = kwargs.pop("head_dim")
    rope_scaling = kwargs.pop("rope_scaling", None)
    with pytest.raises(error, match=match):
        pe_lib.rope_scaling_frequencies(head_dim, rope_scaling, **kwargs)


def test_the_dict_is_not_modified():
    params = {"type": "yarn", "factor": 4.0, "beta_fast": None}
    pe_lib.rope_scaling_frequencies(128, params, max_position_embeddings=2048)
    assert params == {"type": "yarn", "factor": 4.0, "beta_fast": None}


# ---- what transformers 5.23.0 only warns about: pe_lib warns too and computes the same ---------------------
W = pe_lib.RopeScalingWarning


def ref_llama3_cut(d, base, factor, low, original):
    """transformers' llama3 rule when high_freq_factor <= low_freq_factor: its blend band is empty, so pairs
    with wavelength above L/low are divided by the factor and all others kept."""
    out = []
    for i in range(d // 2):
        omega = ref_omega(d, base, i)
        out.append(omega / factor if 2 * math.pi / omega > original / low else omega)
    return np.array(out)


@pytest.mark.parametrize(("low", "high"), [(1.0, 1.0), (2.0, 1.0), (4.0, 4.0)])
def test_llama3_without_a_blend_band_is_a_hard_cut_as_in_llama4_scout(low, high):
    # Llama 4 Scout: factor 16, low_freq_factor = high_freq_factor = 1, original length 8192, base 500000
    params = {"rope_type": "llama3", "factor": 16.0, "low_freq_factor": low, "high_freq_factor": high,
              "original_max_position_embeddings": 8192}
    with pytest.warns(W, match=r"should be above low_freq_factor .* cuts at wavelength"):
        inv_freq, attention = pe_lib.rope_scaling_frequencies(128, params, base=500_000.0)
    ref = ref_llama3_cut(128, 500_000.0, 16.0, low, 8192)
    np.testing.assert_allclose(inv_freq, ref, rtol=1e-12, atol=0)
    assert attention == 1.0
    stretch = pe_lib.frequencies(128, base=500_000.0) / inv_freq
    assert set(np.round(stretch, 12)) == {1.0, 16.0}  # nothing in between


def test_warn_only_cases_compute_what_transformers_computes():
    omega = pe_lib.frequencies(64)
    with pytest.warns(W, match=r"factor .* should be >= 1, got 0.5"):
        inv_freq, att = pe_lib.rope_scaling_frequencies(64, {"rope_type": "linear", "factor": 0.5})
    np.testing.assert_allclose(inv_freq, omega * 2, rtol=1e-15)
    assert att == 1.0
    with pytest.warns(W, match=r"should be >= 1, got 0.5"):  # yarn: get_mscale(s <= 1) = 1
        _, att = pe_lib.rope_scaling_frequencies(64, {"rope_type": "yarn", "factor": 0.5,
                                                      "original_max_position_embeddings": 4096})
    assert att == 1.0
    with pytest.warns(W, match=r"beta_fast \(1.0\) should not be below beta_slow \(32.0\)"):
        inv_freq, _ = pe_lib.rope_scaling_frequencies(64, {"rope_type": "yarn", "factor": 4.0, "beta_fast": 1.0,
                                                           "beta_slow": 32.0, "original_max_position_embeddings": 4096})
    np.testing.assert_allclose(inv_freq, ref_yarn(64, 10_000.0, 4.0, 4096, 1.0, 32.0), rtol=1e-12)
    # no rope_type: transformers reads "default" and warns about the keys it does not know
    with pytest.warns(W, match=r"'default' does not use the keys \['factor'\]"):
        inv_freq, _ = pe_lib.rope_scaling_frequencies(64, {"factor": 8.0})
    np.testing.assert_array_equal(inv_freq, omega)
    with pytest.warns(W, match=r"'linear' does not use the keys \['beta_fast'\]"):
        inv_freq, _ = pe_lib.rope_scaling_frequencies(64, {"rope_type": "linear", "factor": 2.0, "beta_fast": 3})
    np.testing.assert_array_equal(inv_freq, omega / 2)
    with pytest.warns(W, match=r"original_max_position_embeddings \(8192\) should be below"):
        pe_lib.rope_scaling_frequencies(128, LLAMA31, max_position_embeddings=8192)


def test_qwen_vl_mrope_keys_are_the_default_frequencies_without_a_warning():
    omega = pe_lib.frequencies(128, base=1e6)
    qwen2_vl = {"type": "mrope", "mrope_section": [16, 24, 24]}  # Qwen2VLTextConfig rewrites it to "default"
    qwen3_vl = {"rope_type": "default", "mrope_section": [24, 20, 20], "mrope_interleaved": True}
    import warnings
    for params in (qwen2_vl, qwen3_vl):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            inv_freq, att = pe_lib.rope_scaling_frequencies(128, params, base=1e6)
        np.testing.assert_array_equal(inv_freq, omega)
        assert att == 1.0


@pytest.mark.parametrize(("head_dim", "fraction", "factor", "base"),
                         [(512, 0.25, 1.0, 1e6), (256, 0.5, 8.0, 10_000.0), (128, 0.75, 2.0, 1e6), (10, 0.3, 1.0, 1e4)])
def test_proportional_turns_the_first_pairs_at_the_whole_heads_frequencies(head_dim, fraction, factor, base):
    # Gemma 4's full-attention layers: int(fraction * head_dim // 2) pairs at base^(-2i/head_dim) / factor, rest 0
    params = {"rope_type": "proportional", "partial_rotary_factor": fraction, "factor": factor}
    inv_freq, att = pe_lib.rope_scaling_frequencies(head_dim, params, base=base)
    rotated = int(fraction * head_dim // 2)
    ref = [ref_omega(head_dim, base, i) / factor if i < rotated else 0.0 for i in range(head_dim // 2)]
    np.testing.assert_allclose(inv_freq, ref, rtol=1e-12, atol=0)
    assert inv_freq.shape == (head_dim // 2,) and att == 1.0
    # the fraction may come as the argument, and factor defaults to 1
    np.testing.assert_array_equal(
        pe_lib.rope_scaling_frequencies(head_dim, {"rope_type": "proportional"}, base=base,
                                        partial_rotary_factor=fraction)[0], inv_freq * factor)
    with pytest.warns(W, match=r"without partial_rotary_factor"):
        everything, _ = pe_lib.rope_scaling_frequencies(head_dim, {"rope_type": "proportional"}, base=base)
    np.testing.assert_allclose(everything, [ref_omega(head_dim, base, i) for i in range(head_dim // 2)], rtol=1e-12)


def test_a_top_level_original_length_wins_as_in_phi35():
    # Phi-3.5-mini / Phi-4-mini keep original_max_position_embeddings (4096) outside rope_scaling; transformers
    # 5.23.0 copies it into the dict (it wins over the dict's own), so factor = 131072 / 4096 = 32
    short, long = phi3_like(48, seed=3)
    params = {"type": "longrope", "short_factor": short, "long_factor": long}
    for extra in ({}, {"original_max_position_embeddings": 131_072}):
        for seq_len, chosen in ((4096, short), (4097, long)):
            inv_freq, att = pe_lib.rope_scaling_frequencies(96, {**params, **extra}, max_position_embeddings=131_072,
                                                            original_max_position_embeddings=4096, seq_len=seq_len)
            assert att == pytest.approx(math.sqrt(1 + math.log(32) / math.log(4096)), rel=1e-15)
            np.testing.assert_allclose(inv_freq, ref_longrope(96, 10_000.0, short, long, 4096, seq_len), rtol=1e-12)
            np.testing.assert_array_equal(inv_freq, pe_lib.frequencies(96) / np.array(chosen))
    # without it, the training length falls back on max_position_embeddings: factor 1, short factors only
    inv_freq, att = pe_lib.rope_scaling_frequencies(96, params, max_position_embeddings=131_072, seq_len=4097)
    assert att == 1.0
    np.testing.assert_array_equal(inv_freq, pe_lib.frequencies(96) / np.array(short))


# ---- a whole config.json ----------------------------------------------------------------------------
def test_config_rope_frequencies_reads_the_fields_of_a_config_json():
    llama31 = {"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 500_000.0,
               "max_position_embeddings": 131_072, "rope_scaling": LLAMA31}
    np.testing.assert_array_equal(pe_lib.config_rope_frequencies(llama31)[0],
                                  pe_lib.rope_scaling_frequencies(128, LLAMA31, base=500_000.0)[0])
    # transformers 5: rope_parameters with rope_theta inside, head_dim given
    v5 = {"head_dim": 64, "hidden_size": 999, "num_attention_heads": 7, "max_position_embeddings": 4096,
          "rope_parameters": {"rope_type": "linear", "factor": 2.0, "rope_theta": 1e6}}
    np.testing.assert_array_equal(pe_lib.config_rope_frequencies(v5)[0], pe_lib.frequencies(64, base=1e6) / 2)
    # no rope_scaling at all: default, the top-level partial_rotary_factor and rope_theta
    phi2 = {"hidden_size": 2560, "num_attention_heads": 32, "partial_rotary_factor": 0.4, "rope_theta": 10_000.0}
    np.testing.assert_array_equal(pe_lib.config_rope_frequencies(phi2)[0], pe_lib.frequencies(32))
    # a multimodal config: the language model under text_config (Llama 4 Scout's fields)
    scout = {"architectures": ["Llama4ForConditionalGeneration"], "text_config": {
        "head_dim": 128, "hidden_size": 5120, "num_attention_heads": 40, "rope_theta": 500_000.0,
        "max_position_embeddings": 10_485_760,
        "rope_scaling": {"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0, "high_freq_factor": 1.0,
                         "original_max_position_embeddings": 8192}}}
    with pytest.warns(W):
        inv_freq, _ = pe_lib.config_rope_frequencies(scout)
    np.testing.assert_allclose(inv_freq, ref_llama3_cut(128, 500_000.0, 16.0, 1.0, 8192), rtol=1e-12)
    # Phi-3.5-like: original length at the top level
    short, long = phi3_like(48, seed=4)
    phi35 = {"hidden_size": 3072, "num_attention_heads": 32, "max_position_embeddings": 131_072,
             "original_max_position_embeddings": 4096, "rope_theta": 10_000.0,
             "rope_scaling": {"type": "longrope", "short_factor": short, "long_factor": long}}
    inv_freq, att = pe_lib.config_rope_frequencies(phi35, seq_len=5000)
    assert att == pytest.approx(math.sqrt(1 + math.log(32) / math.log(4096)))
    np.testing.assert_array_equal(inv_freq, pe_lib.frequencies(96) / np.array(long))
    # DeepSeek-V3: only qk_rope_head_dim = 64 of each head is rotated (hidden_size / heads would give 56)
    deepseek = {"hidden_size": 7168, "num_attention_heads": 128, "qk_rope_head_dim": 64, "rope_theta": 10000,
                "max_position_embeddings": 163840,
                "rope_scaling": {"type": "yarn", "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0,
                                 "original_max_position_embeddings": 4096}}
    inv_freq, att = pe_lib.config_rope_frequencies(deepseek)
    assert inv_freq.shape == (32,) and att == 1.0
    np.testing.assert_allclose(inv_freq, ref_yarn(64, 10_000.0, 40.0, 4096), rtol=1e-12)


def test_config_rope_frequencies_per_layer_type_as_in_gemma4():
    gemma4 = {"text_config": {
        "head_dim": 256, "global_head_dim": 512, "hidden_size": 2560, "num_attention_heads": 8,
        "layer_types": ["sliding_attention", "full_attention"], "max_position_embeddings": 131_072,
        "rope_parameters": {
            "sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0},
            "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1e6}}}}
    sliding, _ = pe_lib.config_rope_frequencies(gemma4, layer_type="sliding_attention")
    np.testing.assert_array_equal(sliding, pe_lib.frequencies(256))
    full, _ = pe_lib.config_rope_frequencies(gemma4, layer_type="full_attention")
    assert full.shape == (256,) and np.count_nonzero(full) == 64  # 512-wide head, a quarter of its pairs turn
    np.testing.assert_allclose(full[:64], [ref_omega(512, 1e6, i) for i in range(64)], rtol=1e-12)


def test_config_rope_frequencies_reads_an_old_gemma3_file_per_layer_type():
    # Gemma 3 4B/12B/27B's config.json before transformers 5: one flat rope_scaling, which the config class puts
    # into the full-attention layers only (base rope_theta); the sliding layers turn at rope_local_base_freq
    text = {"model_type": "gemma3_text", "head_dim": 256, "hidden_size": 2560, "num_attention_heads": 8,
            "rope_scaling": {"factor": 8.0, "rope_type": "linear"}, "rope_theta": 1_000_000.0,
            "rope_local_base_freq": 10_000.0}
    for config in (text, {"model_type": "gemma3", "text_config": text}):
        full, _ = pe_lib.config_rope_frequencies(config, layer_type="full_attention")
        np.testing.assert_allclose(full, [ref_omega(256, 1e6, i) / 8 for i in range(128)], rtol=1e-12)
        sliding, _ = pe_lib.config_rope_frequencies(config, layer_type="sliding_attention")
        np.testing.assert_allclose(sliding, [ref_omega(256, 1e4, i) for i in range(128)], rtol=1e-12)
    # the bases left out: the class defaults, 1e6 and 1e4; found by rope_local_base_freq alone as well
    bare = {"model_type": "gemma3n_text", "head_dim": 8, "rope_scaling": None}
    assert pe_lib.config_rope_frequencies(bare, layer_type="full_attention")[0][1] == pytest.approx(1e6 ** -0.25)
    assert pe_lib.config_rope_frequencies(bare, layer_type="sliding_attention")[0][1] == pytest.approx(1e4 ** -0.25)
    unnamed = {"head_dim": 8, "rope_local_base_freq": 100.0}
    assert pe_lib.config_rope_frequencies(unnamed, layer_type="sliding_attention")[0][1] == pytest.approx(100 ** -0.25)
    assert pe_lib.config_rope_frequencies(unnamed, layer_type="full_attention")[0][1] == pytest.approx(1e6 ** -0.25)
    # a nested rope_parameters keeps its own bases; a flat rope_scaling beside it still goes to the full layers
    nested = {"model_type": "gemma3_text", "head_dim": 8, "rope_theta": 7.0,
              "rope_scaling": {"factor": 2.0, "rope_type": "linear"},
              "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 16.0},
                                  "sliding_attention": None}}
    np.testing.assert_allclose(pe_lib.config_rope_frequencies(nested, layer_type="full_attention")[0],
                               [0.5, 0.25, 0.125, 0.0625], rtol=1e-12)  # 16^(-2i/8) / 2
    assert pe_lib.config_rope_frequencies(nested, layer_type="sliding_attention")[0][1] == pytest.approx(1e4 ** -0.25)


@pytest.mark.parametrize(("config", "kwargs", "error", "match"), [
    ([1, 2], {}, TypeError, r"config must be a dict \(a config.json read with json.load\), got list"),
    ({"head_dim": 64, "rope_parameters": {"full_attention": {"rope_type": "default"}}}, {}, ValueError,
     r"one rope dict per layer type, \['full_attention'\]: pass layer_type="),
    ({"head_dim": 64, "rope_scaling": {"rope_type": "default"}}, {"layer_type": "full_attention"}, ValueError,
     r"layer_type='full_attention' given, but this config has one rope dict for all layers"),
    ({"head_dim": 64, "rope_scaling": "linear"}, {}, TypeError, r"rope_scaling must be a dict or null, got str"),
    ({"model_type": "gemma3_text", "head_dim": 8, "rope_scaling": "linear"}, {"layer_type": "full_attention"},
     TypeError, r"rope_scaling must be a dict or null, got str"),
    ({"model_type": "gemma3_text", "head_dim": 8, "rope_parameters": {"rope_type": "default"}},
     {"layer_type": "full_attention"}, ValueError, r"Gemma 3 config's rope_parameters must hold one dict per layer"),
    ({"model_type": "gemma3_text", "head_dim": 8, "rope_parameters": [1]}, {"layer_type": "full_attention"},
     ValueError, r"Gemma 3 config's rope_parameters must hold one dict per layer"),
    ({"model_type": "gemma3_text", "head_dim": 8}, {}, ValueError, r"one rope dict per layer type"),
    ({"rope_theta": 1e4}, {}, ValueError, r"needs head_dim, or hidden_size and num_attention_heads"),
    ({"hidden_size": 64, "num_attention_heads": 0}, {}, ValueError, r"num_attention_heads must be an integer >= 1"),
])
def test_config_rope_frequencies_refuses_what_it_cannot_read(config, kwargs, error, match):
    with pytest.raises(error, match=match):
        pe_lib.config_rope_frequencies(config, **kwargs)


# ---- found by `make mutate` (each kills mutants that the tests above let live) ---------------------
def omega_by_hand(d, base):
    return np.array([base ** (-2 * i / d) for i in range(d // 2)])


def test_a_factor_of_one_or_below_two_is_not_warned_about():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for factor in (1.0, 1.5):  # >= 1 is allowed: only a factor below 1 shrinks the context
            inv_freq, _ = pe_lib.rope_scaling_frequencies(8, {"rope_type": "linear", "factor": factor})
            np.testing.assert_allclose(inv_freq, omega_by_hand(8, 10_000.0) / factor, rtol=1e-14)


@pytest.mark.parametrize(("rope_scaling", "kwargs"), [
    ({"rope_type": "dynamic", "factor": 0.5}, {"max_position_embeddings": 4096}),
    ({"rope_type": "yarn", "factor": 0.5}, {"original_max_position_embeddings": 4096}),
    ({**LLAMA31, "factor": 0.5}, {}),
])
def test_strict_refuses_a_factor_below_one_for_every_type(rope_scaling, kwargs):
    with pytest.raises(ValueError, match=r"^factor is the factor .* got 0.5 \(transformers only warns; strict=True"):
        pe_lib.rope_scaling_frequencies(64, rope_scaling, strict=True, **kwargs)
    with pytest.raises(ValueError, match=r"^factor is the factor"):  # config_rope_frequencies passes strict on
        pe_lib.config_rope_frequencies({"head_dim": 64, "rope_scaling": rope_scaling, **kwargs}, strict=True)


def test_a_warning_says_how_to_refuse():
    for rope_scaling in ({"rope_type": "linear", "factor": 0.5}, {"rope_type": "linear", "factor": 2.0, "mscale": 1}):
        with pytest.warns(W) as record:
            pe_lib.rope_scaling_frequencies(8, rope_scaling)
        assert str(record[0].message).endswith(" (transformers only warns, and so does pe_lib without strict=True)")


@pytest.mark.parametrize(("call", "match"), [
    (lambda: check_betas(32.0, "slow"), r"^beta_slow must be a finite real number, got 'slow'"),
    (lambda: pe_lib.rope_scaling_frequencies(64, {"rope_type": "yarn", "factor": 4.0, "beta_fast": "x"},
                                             original_max_position_embeddings=4096), r"^beta_fast must be a finite"),
    (lambda: pe_lib.rope_scaling_frequencies(64, {"rope_type": "yarn", "factor": 4.0, "beta_slow": "x"},
                                             original_max_position_embeddings=4096), r"^beta_slow must be a finite"),
    (lambda: pe_lib.rope_scaling_frequencies(64, {"rope_type": "yarn", "factor": 4.0, "mscale": "x",
                                                  "mscale_all_dim": 1.0}, original_max_position_embeddings=4096),
     r"^mscale must be a finite"),
    (lambda: pe_lib.rope_scaling_frequencies(128, {**LLAMA31, "high_freq_factor": "x"}),
     r"^high_freq_factor must be a finite"),
    (lambda: pe_lib.config_rope_frequencies({"hidden_size": 0, "num_attention_heads": 2}),
     r"^hidden_size must be an integer >= 1, got 0"),
    (lambda: pe_lib.config_rope_frequencies({"hidden_size": 64}),  # one of the two is not enough
     r"^the config needs head_dim, or hidden_size and num_attention_heads"),
])
def test_errors_name_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_check_betas_with_allow_equal_still_needs_a_positive_beta_slow():
    assert check_betas(1.0, 1.0, allow_equal=True) == (1.0, 1.0)
    with pytest.raises(ValueError, match=r"need 0 < beta_slow <= beta_fast"):
        check_betas(1.0, 0.0, allow_equal=True)


def test_yarn_bounds_truncate_by_default():
    # i(r) = d ln(L / (2 pi r)) / (2 ln base): 10.47 for r = 32 and 22.49 for r = 1 (d = 64, L = 4096)
    low = 64 * math.log(4096 / (2 * math.pi * 32)) / (2 * math.log(10_000))
    high = 64 * math.log(4096 / (2 * math.pi * 1)) / (2 * math.log(10_000))
    assert 10 < low < 11 and 22 < high < 23
    assert yarn_bounds(64, 4096, 10_000.0, 32.0, 1.0) == (10, 23)


def test_yarn_attention_factor_of_a_small_factor_and_of_deepseeks_ratio():
    yarn = {"rope_type": "yarn", "original_max_position_embeddings": 4096}
    _, att = pe_lib.rope_scaling_frequencies(64, {**yarn, "factor": 1.5})
    assert att == pytest.approx(0.1 * math.log(1.5) + 1.0, rel=1e-15)  # 1.0405
    _, att = pe_lib.rope_scaling_frequencies(64, {**yarn, "factor": 40.0, "mscale": 1.0, "mscale_all_dim": 0.5})
    assert att == pytest.approx((0.1 * math.log(40) + 1) / (0.05 * math.log(40) + 1), rel=1e-15)  # 1.156


def test_yarn_with_equal_betas_does_not_warn():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pe_lib.rope_scaling_frequencies(64, {"rope_type": "yarn", "factor": 4.0, "beta_fast": 1.0, "beta_slow": 1.0},
                                        original_max_position_embeddings=4096)


def test_longrope_attention_factor_of_a_small_factor():
    short, long = phi3_like(32)
    _, att = pe_lib.rope_scaling_frequencies(64, {**LONG, "short_factor": short, "long_factor": long, "factor": 1.5},
                                             original_max_position_embeddings=4096)
    assert att == pytest.approx(math.sqrt(1 + math.log(1.5) / math.log(4096)), rel=1e-15)  # 1.0241


def test_llama3_hard_cut_keeps_a_pair_exactly_at_the_cut_and_divides_by_no_zero():
    import warnings
    omega = pe_lib.frequencies(128, base=500_000.0)
    lam = 2 * np.pi / omega
    edge = next(k for k in range(10, 60) if 8192 / (8192 / lam[k]) == lam[k])
    cut = {**LLAMA31, "low_freq_factor": 8192 / lam[edge], "high_freq_factor": 8192 / lam[edge]}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no 0/0 blend when high == low
        with pytest.warns(W):
            inv_freq = pe_lib.rope_scaling_frequencies(128, cut, base=500_000.0)[0]
    assert inv_freq[edge] == omega[edge]  # wavelength == L / low is not above the cut: kept
    assert inv_freq[edge + 1] == omega[edge + 1] / 8 and inv_freq[edge - 1] == omega[edge - 1]
    with pytest.warns(W, match=r"cuts at wavelength original_max_position_embeddings / low_freq_factor = 4096\.0 "):
        pe_lib.rope_scaling_frequencies(128, {**LLAMA31, "low_freq_factor": 2.0, "high_freq_factor": 2.0})


@pytest.mark.parametrize("key", ["rope_theta", "rope_scaling", "rope_parameters"])
def test_a_config_with_its_own_rope_fields_is_not_read_in_text_config(key):
    own = {"rope_theta": 1e8, "rope_scaling": {"rope_type": "linear", "factor": 2.0},
           "rope_parameters": {"rope_type": "linear", "factor": 2.0}}[key]
    config = {"head_dim": 8, key: own, "text_config": {"head_dim": 8, "rope_theta": 10_000.0}}
    expected = [1.0, 1e-2, 1e-4, 1e-6] if key == "rope_theta" else [0.5, 0.05, 0.005, 0.0005]
    np.testing.assert_allclose(pe_lib.config_rope_frequencies(config)[0], expected, rtol=1e-14)


def test_rope_dicts_per_layer_type_are_found_by_the_configs_layer_types_or_the_two_usual_names():
    chunked = {"head_dim": 8, "layer_types": ["chunked_attention"],
               "rope_parameters": {"chunked_attention": {"rope_type": "default", "rope_theta": 1e8}}}
    np.testing.assert_allclose(pe_lib.config_rope_frequencies(chunked, layer_type="chunked_attention")[0],
                               [1.0, 1e-2, 1e-4, 1e-6], rtol=1e-14)
    no_list = {"head_dim": 8, "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 1e8},
                                                  "full_attention": {"rope_type": "default"}}}
    np.testing.assert_allclose(pe_lib.config_rope_frequencies(no_list, layer_type="sliding_attention")[0],
                               [1.0, 1e-2, 1e-4, 1e-6], rtol=1e-14)


def test_a_config_without_a_rope_dict_is_default_rope_even_under_strict():
    theta = {"head_dim": 8, "rope_theta": 1e8}
    np.testing.assert_allclose(pe_lib.config_rope_frequencies(theta, strict=True)[0], [1.0, 1e-2, 1e-4, 1e-6],
                               rtol=1e-14)
    half = {"head_dim": 8, "partial_rotary_factor": 0.5}  # d = 4: 10000^0, 10000^(-1/2)
    np.testing.assert_allclose(pe_lib.config_rope_frequencies(half, strict=True)[0], [1.0, 0.01], rtol=1e-14)


def test_proportional_with_a_partial_rotary_factor_in_the_dict_or_as_argument_does_not_warn():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        in_dict, _ = pe_lib.rope_scaling_frequencies(8, {"rope_type": "proportional", "partial_rotary_factor": 0.5})
        argument, _ = pe_lib.rope_scaling_frequencies(8, {"rope_type": "proportional"}, partial_rotary_factor=0.5)
        plain, _ = pe_lib.rope_scaling_frequencies(8, None, strict=True)  # None is "default", even under strict
    np.testing.assert_allclose(in_dict, [1.0, 0.1, 0.0, 0.0], rtol=1e-14)  # 10000^(-2i/8) for the first 2 pairs
    np.testing.assert_array_equal(argument, in_dict)
    np.testing.assert_allclose(plain, [1.0, 0.1, 0.01, 0.001], rtol=1e-14)
    with pytest.warns(W, match=r"^rope_type 'proportional' without partial_rotary_factor rotates every pair, which "
                               r"makes it 'linear' \(transformers"):
        pe_lib.rope_scaling_frequencies(8, {"rope_type": "proportional"})


@pytest.mark.parametrize(("head_dim", "rope_scaling", "kwargs", "message"), [
    (64, {"rope_type": "yarn", "factor": 4.0}, {},
     "rope_type 'yarn' needs the training length: put 'original_max_position_embeddings' into rope_scaling or pass "
     "original_max_position_embeddings= or max_position_embeddings="),
    (64, {"rope_type": "dynamic", "factor": 4.0}, {},
     "rope_type 'dynamic' scales by the current length over max_position_embeddings: pass max_position_embeddings="),
    (64, {**LONG, "short_factor": [1.0] * 32, "long_factor": [2.0] * 32}, {"original_max_position_embeddings": 4096},
     "rope_type 'longrope' without 'factor' uses max_position_embeddings / original_max_position_embeddings: put "
     "'factor' into rope_scaling or pass max_position_embeddings="),
    (64, {"factor": 8.0}, {"strict": True},
     "rope_scaling needs a 'rope_type' (or the legacy 'type') key, one of 'default', 'linear', 'dynamic', 'yarn', "
     "'longrope', 'llama3', 'proportional'; got the keys ['factor']"),
    (64, [("rope_type", "linear")], {}, "rope_scaling must be None or a dict like {'rope_type': 'linear', "
                                        "'factor': 4.0}, got list"),
    (8, {"rope_type": "proportional", "factor": "x", "partial_rotary_factor": 0.5}, {},
     "factor must be a finite real number, got 'x'"),
    (8, {"rope_type": "default", "partial_rotary_factor": 0.5}, {"partial_rotary_factor": 0.25},
     "rope_scaling['partial_rotary_factor'] = 0.5 disagrees with partial_rotary_factor=0.25; give one of them"),
])
def test_whole_error_messages(head_dim, rope_scaling, kwargs, message):
    with pytest.raises((ValueError, TypeError)) as error:
        pe_lib.rope_scaling_frequencies(head_dim, rope_scaling, **kwargs)
    assert str(error.value) == message


def test_yarn_keep_raises_a_zero_width_ramp_by_0_001_only():
    # equal betas without truncation give low == high == 2.5: the source's 0.001 guard makes a step, so pair 3,
    # half a pair past the edge, is interpolated (0), not half kept (planted: the width raised to 1 instead)
    from pe_lib.modern.rope_scaling import yarn_keep

    np.testing.assert_array_equal(yarn_keep(6, 2.5, 2.5), [1.0, 1.0, 1.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(yarn_keep(6, 2.0, 4.0), [1.0, 1.0, 1.0, 0.5, 0.0, 0.0])  # (i - 2) / 2
