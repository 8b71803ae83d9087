"""What the base sets: slow pairs, distances between encodings, near-collisions."""

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import bases, d_models, offsets, positions

import pe_lib
import pe_lib.base_analysis as base_analysis


@given(d=d_models, p=positions, delta=offsets, base=bases)
def test_squared_distance_is_the_distance_of_the_encodings_at_any_position(d, p, delta, base):
    a, b = pe_lib.sinusoidal([p, p + delta], d, base=base)
    direct = np.sum((b - a) ** 2)
    got = pe_lib.squared_distance([delta], d, base=base)[0]
    assert abs(got - direct) <= 1e-11 * d * (1 + abs(p) + abs(delta))
    # and it is d - 2 f(delta)
    assert abs(got - (d - 2 * pe_lib.dot_profile([delta], d, base=base)[0])) <= 1e-12 * d * (1 + abs(delta))


@given(d=d_models, base=bases, p=positions)
def test_neighbour_distance_is_the_same_everywhere(d, base, p):
    a, b = pe_lib.sinusoidal([p, p + 1], d, base=base)
    assert abs(pe_lib.neighbour_distance(d, base=base) - np.linalg.norm(b - a)) <= 1e-11 * (1 + abs(p))


def test_squared_distance_is_accurate_when_tiny():
    # d = 4: omega = (1, 1/100) exactly; 50-digit reference for the near-collision at 1146053
    delta = 1_146_053
    mpmath.mp.dps = 50
    exact = sum(4 * mpmath.sin(mpmath.mpf(delta) * w / 2) ** 2 for w in (mpmath.mpf(1), mpmath.mpf(1) / 100))
    got = pe_lib.squared_distance([delta], 4, base=10_000)[0]
    assert got < 1e-9
    assert abs(got - float(exact)) <= 1e-5 * float(exact)


@given(d=d_models, length=st.integers(1, 10**6), base=bases)
def test_constant_pairs_counts_wavelengths_longer_than_length(d, length, base):
    lam = pe_lib.wavelengths(d, base=base)
    assert pe_lib.constant_pairs(d, length, base=base) == np.sum(lam > length)


@given(d=d_models, length=st.integers(1, 10**4), angle=st.floats(1e-3, 10.0))
def test_constant_pairs_is_monotone(d, length, angle):
    n = pe_lib.constant_pairs(d, length, max_angle=angle)
    assert 0 <= n <= d // 2
    assert pe_lib.constant_pairs(d, length + 1, max_angle=angle) <= n  # longer stretch: fewer slow pairs
    assert pe_lib.constant_pairs(d, length, max_angle=angle * 2) >= n  # looser threshold: more
    assert pe_lib.constant_pairs(d, length, base=1e5, max_angle=angle) >= n  # larger base: more slow pairs


def test_constant_pairs_fact_sheet_values():
    # values quoted in the project's fact sheet, recomputed here
    assert pe_lib.constant_pairs(512, 20) == 223
    assert pe_lib.constant_pairs(512, 512) == 133


def brute_nearest(d, lo, hi):
    delta = np.arange(lo, hi + 1)
    dist2 = pe_lib.squared_distance(delta, d)
    return int(delta[np.argmin(dist2)]), float(dist2.min())


@pytest.mark.parametrize("angles_per_chunk", [1, 5, 64, 2**22])
def test_scans_agree_with_a_plain_minimum_across_chunks(monkeypatch, angles_per_chunk):
    monkeypatch.setattr(base_analysis, "_ANGLES_PER_CHUNK", angles_per_chunk)
    for d in (2, 4, 8):
        for lo in (1, 2, 5):
            assert pe_lib.nearest_other_position(d, 300, min_offset=lo) == brute_nearest(d, lo, 300)
        dist2 = pe_lib.squared_distance(np.arange(301), d)
        closer = [delta for delta in range(2, 301) if dist2[delta] < dist2[1]]
        assert pe_lib.first_closer_than_neighbour(d, 300) == (closer[0] if closer else None)


def test_wide_encodings_have_the_adjacent_position_nearest():
    offset, dist2 = pe_lib.nearest_other_position(64, 20_000)
    assert offset == 1 and dist2 == pytest.approx(pe_lib.neighbour_distance(64) ** 2, rel=1e-14)
    assert pe_lib.first_closer_than_neighbour(64, 20_000) is None
    assert pe_lib.first_closer_than_neighbour(64, 1) is None


def test_narrow_encodings_come_back_close():
    # d = 4: pair 0 turns once every 2 pi, so 6 positions on it is nearer than 1
    delta = pe_lib.first_closer_than_neighbour(4, 100)
    d2 = pe_lib.squared_distance([1, delta], 4)
    assert delta == 6 and d2[1] < d2[0]
    far, far_d2 = pe_lib.nearest_other_position(4, 10_000, min_offset=2)
    assert far_d2 < d2[1] and far % 6 in (0, 1, 5)  # near a multiple of 2 pi


def test_base_summary():
    s = pe_lib.base_summary(512, 20)
    assert s["pairs"] == 256
    assert s["shortest_wavelength"] == pytest.approx(2 * np.pi)
    assert s["longest_wavelength"] == pytest.approx(2 * np.pi * 10_000 ** (510 / 512))
    assert s["slow_pairs"] == pe_lib.constant_pairs(512, 20)
    assert s["neighbour_distance"] == pe_lib.neighbour_distance(512)


def test_bad_arguments():
    with pytest.raises(ValueError, match=r"max_angle must be a positive angle in radians such as 2\*pi, got 0.0"):
        pe_lib.constant_pairs(8, 10, max_angle=0)
    with pytest.raises(ValueError, match=r"max_angle must be a finite real number"):
        pe_lib.constant_pairs(8, 10, max_angle=float("inf"))
    with pytest.raises(ValueError, match=r"length must be an integer >= 1, got 0"):
        pe_lib.constant_pairs(8, 0)
    with pytest.raises(ValueError, match=r"min_offset must not exceed max_offset, got 5 > 3"):
        pe_lib.nearest_other_position(8, 3, min_offset=5)
    with pytest.raises(ValueError, match=r"max_offset must be an integer >= 1, got 0"):
        pe_lib.first_closer_than_neighbour(8, 0)
    with pytest.raises(ValueError, match=r"d_model must be a positive even integer"):
        pe_lib.nearest_other_position(5, 3)
