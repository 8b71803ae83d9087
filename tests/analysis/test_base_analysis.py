"""What the base sets: slow pairs, distances between encodings, near-collisions."""

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import bases, d_models, offsets, positions

import pe_lib
import pe_lib.analysis.base_analysis as base_analysis


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


@pytest.mark.parametrize(("per_chunk", "first", "fine"), [(1, 1, 1), (5, 2, 3), (64, 4, 7), (2**20, 2**12, 1024)])
def test_scans_agree_with_a_plain_minimum_across_chunks(monkeypatch, per_chunk, first, fine):
    monkeypatch.setattr(base_analysis, "_OFFSETS_PER_CHUNK", per_chunk)
    monkeypatch.setattr(base_analysis, "_FIRST_CHUNK", first)
    monkeypatch.setattr(base_analysis, "_FINE", fine)
    for d in (2, 4, 8):
        for lo in (1, 2, 5):
            assert pe_lib.nearest_other_position(d, 300, min_offset=lo) == brute_nearest(d, lo, 300)
        dist2 = pe_lib.squared_distance(np.arange(301), d)
        closer = [delta for delta in range(2, 301) if dist2[delta] < dist2[1]]
        assert pe_lib.first_closer_than_neighbour(d, 300) == (closer[0] if closer else None)


@pytest.mark.parametrize(("start", "count", "fine"), [(0, 1, 1024), (7, 10, 3), (1_999_000, 2500, 1024), (5, 4096, 64)])
def test_cos_sums_are_the_sum_of_cosines_per_offset(monkeypatch, start, count, fine):
    monkeypatch.setattr(base_analysis, "_FINE", fine)
    omega = pe_lib.frequencies(32)
    delta = np.arange(start, start + count, dtype=np.float64)
    direct = np.cos(np.multiply.outer(delta, omega)).sum(axis=1)  # one cosine per offset and pair
    np.testing.assert_allclose(base_analysis._cos_sums(omega, start, count), direct, rtol=0, atol=1e-9)


def test_the_scans_return_what_the_sine_form_returns_far_out():
    # the near-collisions of chapter 9, found by the fast scan and valued by the sine form
    offset, dist2 = pe_lib.nearest_other_position(4, 1_200_000, min_offset=1_100_000)
    assert offset == 1_146_053 and dist2 == pe_lib.squared_distance([1_146_053], 4)[0]
    window = np.arange(596_000, 596_275)
    adjacent = pe_lib.neighbour_distance(16) ** 2
    assert np.flatnonzero(pe_lib.squared_distance(window, 16) < adjacent).tolist() == [274]  # only 596274
    assert pe_lib.first_closer_than_neighbour(16, 596_274) == 596_274
    assert pe_lib.first_closer_than_neighbour(16, 596_273) is None


@given(d=d_models, n=st.integers(1, 3000), base=bases)
def test_mean_squared_distance_is_the_mean_over_the_offsets(d, n, base):
    table = pe_lib.sinusoidal(n + 1, d, base=base)
    direct = np.mean(np.sum((table[1:] - table[0]) ** 2, axis=1))  # ||PE(D) - PE(0)||^2, D = 1..n
    assert abs(pe_lib.mean_squared_distance(d, n, base=base) - direct) <= 1e-9 * d


def test_mean_squared_distance_far_out_is_about_d():
    # the cosines average out: the mean squared distance over many offsets approaches d_model
    assert pe_lib.mean_squared_distance(512, 100_000) == pytest.approx(512, rel=2e-3)
    assert pe_lib.mean_squared_distance(8, 1) == pytest.approx(pe_lib.neighbour_distance(8) ** 2, rel=1e-14)
    with pytest.raises(ValueError, match=r"max_offset must be an integer >= 1, got 0"):
        pe_lib.mean_squared_distance(8, 0)


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


# ---- found by `make mutate` (each kills mutants that the tests above let live) ---------------------
def test_the_scans_use_the_given_base():
    # d = 4, base 100: omega = (1, 0.1); brute force over offsets 1..100 of sum_k 4 sin^2(omega_k delta / 2)
    delta = np.arange(1, 101, dtype=float)
    dist = 4 * np.sin(delta / 2) ** 2 + 4 * np.sin(0.1 * delta / 2) ** 2
    offset, value = pe_lib.nearest_other_position(4, 100, base=100.0)
    assert offset == int(delta[np.argmin(dist)]) == 63  # 63 ~ 20 pi: both angles near a whole turn
    assert value == pytest.approx(dist.min(), rel=1e-12)
    closer = delta[1:][dist[1:] < dist[0]]
    assert pe_lib.first_closer_than_neighbour(4, 100, base=100.0) == int(closer[0])


def test_constant_pairs_counts_strictly_below_max_angle_and_defaults_to_base_10000():
    # d = 4: omega = (1, base^(-1/2)); over 10 positions pair 0 turns by exactly max_angle = 10: not counted
    assert pe_lib.constant_pairs(4, 10, base=10_000.0, max_angle=10.0) == 1

    def by_hand(d, length, base):
        return sum(base ** (-2 * k / d) * length < 2 * np.pi for k in range(d // 2))

    # the first length (d = 64) whose count a base of 10001 would change
    length = next(n for n in range(1, 100_000) if by_hand(64, n, 10_000.0) != by_hand(64, n, 10_001.0))
    assert pe_lib.constant_pairs(64, length) == by_hand(64, length, 10_000.0)


def test_a_range_of_one_offset_and_the_summary_uses_its_base():
    # offset 5 alone, d = 4, base 100: 4 sin^2(5/2) + 4 sin^2(0.5/2)
    assert pe_lib.nearest_other_position(4, 5, base=100.0, min_offset=5) == (
        5, pytest.approx(4 * np.sin(2.5) ** 2 + 4 * np.sin(0.25) ** 2, rel=1e-12))
    assert pe_lib.base_summary(4, 10, base=100.0)["longest_wavelength"] == pytest.approx(2 * np.pi * 10, rel=1e-15)
    with pytest.raises(ValueError, match=r"^min_offset must be an integer >= 1"):
        pe_lib.nearest_other_position(4, 5, min_offset=0)


def test_first_closer_than_neighbour_with_a_small_base_by_hand():
    # d = 4, base 4: omega = (1, 0.5); the first offset nearer than the neighbour is 12 (6 with base 10000)
    delta = np.arange(1, 200, dtype=float)
    dist = 4 * np.sin(delta / 2) ** 2 + 4 * np.sin(0.5 * delta / 2) ** 2
    assert pe_lib.first_closer_than_neighbour(4, 199, base=4.0) == int(delta[1:][dist[1:] < dist[0]][0]) == 12
    with pytest.raises(ValueError, match=r"^offsets must"):
        pe_lib.squared_distance([[1.0]], 4)


def sine_form(delta, d, base=10_000.0):
    # sum_k 4 sin^2(omega_k delta / 2), omega_k = base^(-2k/d): written out here, not pe_lib's
    omega = base ** (-np.arange(0, d, 2) / d)
    return (4 * np.sin(np.multiply.outer(np.asarray(delta, dtype=float), omega) / 2) ** 2).sum(axis=-1)


def plant_cos_sum_error(monkeypatch, target, up, down):
    # the fast distances d - 2 sum cos raised by `up` at offset `target` and lowered by `down` elsewhere
    real = base_analysis._cos_sums

    def skewed(omega, start, count):
        delta = np.arange(start, start + count)
        return real(omega, start, count) - np.where(delta == target, up, -down) / 2

    monkeypatch.setattr(base_analysis, "_cos_sums", skewed)


def test_nearest_other_position_is_exact_for_any_fast_error_within_half_the_margin(monkeypatch):
    # the filter keeps approx <= min + margin: errors up to margin / 2 either way must not lose the minimum.
    # A margin of 1 per pair (3 for d = 6) makes such errors big enough to reorder offsets 2..300.
    monkeypatch.setattr(base_analysis, "_MARGIN_PER_PAIR", 1.0)
    delta = np.arange(2, 301)
    dist = sine_form(delta, 6)
    target = int(delta[np.argmin(dist)])
    assert target == 132 and np.sort(dist)[1] - dist.min() < 0.05  # offset 138 is second, 0.048 behind
    plant_cos_sum_error(monkeypatch, target, up=0.45 * 3, down=0.45 * 3)
    assert pe_lib.nearest_other_position(6, 300, min_offset=2) == (132, pytest.approx(dist.min(), rel=1e-12))


def test_first_closer_than_neighbour_is_exact_for_any_fast_error_below_the_margin(monkeypatch):
    # the filter keeps approx < adjacent + margin: an error just below the margin must not lose an offset
    monkeypatch.setattr(base_analysis, "_MARGIN_PER_PAIR", 1.0)
    delta = np.arange(2, 301)
    closer = delta[sine_form(delta, 6) < sine_form(1, 6)]
    assert closer[:2].tolist() == [6, 7]
    plant_cos_sum_error(monkeypatch, 6, up=0.95 * 3, down=0.0)
    assert pe_lib.first_closer_than_neighbour(6, 300) == 6


def test_first_closer_than_neighbour_uses_the_base_for_the_neighbour_and_the_re_check():
    # d = 8, base 2: the first offset closer than the neighbour is 44; measured with base 10000 instead,
    # the neighbour's distance would give 232 and the candidates' distances 126 (found by brute force)
    delta = np.arange(2, 301)
    dist = sine_form(delta, 8, base=2.0)
    assert delta[dist < sine_form(1, 8, base=2.0)][0] == 44
    assert delta[dist < sine_form(1, 8)][0] == 232
    assert delta[(dist < sine_form(1, 8, base=2.0)) & (sine_form(delta, 8) < sine_form(1, 8, base=2.0))][0] == 126
    assert pe_lib.first_closer_than_neighbour(8, 300, base=2.0) == 44
