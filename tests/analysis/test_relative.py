"""A fixed attention head that looks k tokens back, built from the offset map and the encodings alone."""

import inspect

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import bases, d_models, offsets

import pe_lib
import pe_lib.analysis.relative as relative


def brute_first_rise(d, n, base=10_000.0):
    f = pe_lib.dot_profile(n + 1, d, base=base)
    rises = [delta for delta in range(1, n + 1) if f[delta] > f[delta - 1]]
    return rises[0] if rises else None


def brute_first_negative(d, n, base=10_000.0):
    f = pe_lib.dot_profile(n + 1, d, base=base)
    negative = [delta for delta in range(1, n + 1) if f[delta] < 0]
    return negative[0] if negative else None


@given(d=d_models, base=bases)
def test_first_rise_and_first_negative_match_a_plain_scan(d, base):
    assert pe_lib.first_rise(d, base=base, max_offset=3000) == brute_first_rise(d, 3000, base)
    assert pe_lib.first_negative(d, base=base, max_offset=3000) == brute_first_negative(d, 3000, base)


@pytest.mark.parametrize("chunk", [1, 2, 7, 64])
def test_scans_are_the_same_across_chunk_boundaries(monkeypatch, chunk):
    monkeypatch.setattr(relative, "_CHUNK", chunk)
    for d in (2, 16, 64, 128):
        assert pe_lib.first_rise(d, max_offset=200) == brute_first_rise(d, 200)
        assert pe_lib.first_negative(d, max_offset=2000) == brute_first_negative(d, 2000)


def test_the_profile_is_not_monotone_and_goes_negative_for_every_width():
    for d in (16, 64, 128, 512):
        rise, negative = pe_lib.first_rise(d), pe_lib.first_negative(d)
        f = pe_lib.dot_profile(negative + 1, d)
        assert np.all(np.diff(f[:rise]) < 0) and f[rise] > f[rise - 1]
        assert np.all(f[:negative] >= 0) and f[negative] < 0
    # a wider encoding keeps its profile positive and decreasing for longer
    assert pe_lib.first_rise(16) < pe_lib.first_rise(64) < pe_lib.first_rise(512)
    assert pe_lib.first_negative(16) < pe_lib.first_negative(64) < pe_lib.first_negative(512)


def test_none_when_nothing_happens_in_range():
    assert pe_lib.first_rise(512, max_offset=10) is None
    assert pe_lib.first_negative(512, max_offset=100) is None


@given(d=d_models, phi=offsets, s=st.floats(-10, 10, allow_nan=False), base=bases)
def test_scores_are_the_shifted_profile(d, phi, s, base):
    w_q, w_k = pe_lib.offset_attention_projections(phi, d, base=base, scale=s)
    pe = pe_lib.sinusoidal(12, d, base=base)
    scores = (pe @ w_q) @ (pe @ w_k).T
    i, j = np.meshgrid(np.arange(12), np.arange(12), indexing="ij")
    expected = s * pe_lib.dot_profile((j - i + phi).ravel(), d, base=base).reshape(12, 12)
    np.testing.assert_allclose(scores, expected, atol=1e-9 * d * (1 + abs(s)) * (1 + abs(phi)))
    # each query is the encoding of the position phi places back
    np.testing.assert_allclose(pe @ w_q, s * pe_lib.sinusoidal(np.arange(12) - phi, d, base=base),
                               atol=1e-11 * (1 + abs(s)) * (1 + abs(phi)))
    np.testing.assert_array_equal(w_k, np.eye(d))


@given(d=d_models, phi=offsets, seed=st.integers(0, 2**16))
def test_pair_weights_weight_each_cosine(d, phi, seed):
    a = np.random.default_rng(seed).uniform(-2, 2, size=d // 2)
    w_q, w_k = pe_lib.offset_attention_projections(phi, d, pair_weights=a)
    pe = pe_lib.sinusoidal(8, d)
    scores = (pe @ w_q) @ (pe @ w_k).T
    delta = np.subtract.outer(np.arange(8), np.arange(8)).T + phi  # j - i + phi
    expected = np.cos(np.multiply.outer(delta, pe_lib.frequencies(d))) @ a
    np.testing.assert_allclose(scores, expected, atol=1e-9 * d * (1 + abs(phi)))


@given(d=d_models.filter(lambda d: d >= 4), k=st.integers(0, 23), s=st.floats(0.1, 200), causal=st.booleans())
def test_every_query_with_a_target_attends_most_to_it(d, k, s, causal):
    n = 24
    w = pe_lib.offset_attention(n, k, d, scale=s, causal=causal)
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    np.testing.assert_array_equal(np.argmax(w[k:], axis=1), np.arange(n - k))
    mass = pe_lib.mass_on_offset(w, k)
    assert mass.shape == (n - k,)
    np.testing.assert_array_equal(mass, w[np.arange(k, n), np.arange(n - k)])


@given(d=d_models.filter(lambda d: d >= 4), k=st.integers(0, 15))
def test_a_larger_scale_concentrates_more_mass_on_the_target(d, k):
    masses = [pe_lib.mass_on_offset(pe_lib.offset_attention(16, k, d, scale=s), k) for s in (0.5, 2.0, 8.0, 32.0)]
    for lower, higher in zip(masses, masses[1:], strict=False):
        assert np.all(higher > lower - 1e-15)
    # strictly, wherever the query has more than one key to choose from (row 0 has only itself)
    first = 1 if k == 0 else 0
    assert np.all(masses[-1][first:] > masses[0][first:])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"pair_weights": np.ones(3)}, r"one weight per sin/cos pair, shape \(4,\), got shape \(3,\)"),
        ({"pair_weights": [1.0, np.nan, 1.0, 1.0]}, r"pair_weights must be finite"),
        ({"scale": float("nan")}, r"scale must be a finite real number"),
    ],
)
def test_bad_projection_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.offset_attention_projections(2, 8, **kwargs)


def test_bad_scan_and_mass_arguments():
    with pytest.raises(ValueError, match=r"max_offset must be an integer >= 1, got 0"):
        pe_lib.first_rise(8, max_offset=0)
    with pytest.raises(ValueError, match=r"d_model must be a positive even integer"):
        pe_lib.first_negative(7)
    with pytest.raises(ValueError, match=r"square \(n, n\) attention matrix, got shape \(2, 3\)"):
        pe_lib.mass_on_offset(np.ones((2, 3)), 1)
    with pytest.raises(ValueError, match=r"offset must be smaller than the number of positions 4, got 4"):
        pe_lib.mass_on_offset(np.eye(4), 4)
    with pytest.raises(ValueError, match=r"offset must be an integer >= 0, got -1"):
        pe_lib.mass_on_offset(np.eye(4), -1)
    with pytest.raises(ValueError, match=r"n must be an integer >= 1, got 0"):
        pe_lib.offset_attention(0, 1, 8)


# ---- found by `make mutate` --------------------------------------------------------------------
def test_documented_defaults():
    # base 10000 (the paper), unit scale, causal: the same as passing them
    np.testing.assert_array_equal(pe_lib.offset_attention(8, 2, 16),
                                  pe_lib.offset_attention(8, 2, 16, base=10_000.0, scale=1.0, causal=True))
    assert pe_lib.first_rise(2) == pe_lib.first_rise(2, base=10_000.0, max_offset=100_000) == 4
    for scan in (pe_lib.first_rise, pe_lib.first_negative):
        defaults = {k: p.default for k, p in inspect.signature(scan).parameters.items() if k != "d_model"}
        assert defaults == {"base": 10_000.0, "max_offset": 100_000}


def test_messages_name_the_argument():
    with pytest.raises(ValueError, match=r"^max_offset must be an integer >= 1, got 0"):
        pe_lib.first_negative(8, max_offset=0)
    with pytest.raises(ValueError, match=r"^offset must be a finite real number, got nan"):
        pe_lib.offset_attention_projections(float("nan"), 8)
    with pytest.raises(ValueError, match=r"^pair_weights must be finite, got NaN or infinity among them$"):
        pe_lib.offset_attention_projections(1.0, 4, pair_weights=[1.0, np.inf])


def test_mass_on_offset_reads_weights_as_float():
    mass = pe_lib.mass_on_offset(np.eye(3, dtype=int), 0)
    assert mass.dtype == np.float64
    np.testing.assert_array_equal(mass, [1.0, 1.0, 1.0])


def test_the_scans_use_their_default_base_and_range(monkeypatch):
    # a spy for the profile (mutmut's trampolines keep the original signature, so the defaults must be
    # seen in use): a profile that never rises nor turns negative makes both scans run to max_offset
    seen = []

    def never(delta, d_model, *, base):
        seen.append((base, delta[-1]))
        return d_model / 2 - 1e-6 * delta  # falling and positive over 0 .. 100 000

    monkeypatch.setattr(relative, "dot_profile", never)
    for scan in (pe_lib.first_rise, pe_lib.first_negative):
        seen.clear()
        assert scan(8) is None
        assert {base for base, _ in seen} == {10_000.0}
        assert max(last for _, last in seen) == 100_000.0
