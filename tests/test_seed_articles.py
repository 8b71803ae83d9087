"""The numbers printed in the source articles, recomputed. Where an article disagrees with the
formula, the test pins the correct value (see book/errata.md)."""

import numpy as np

import pe_lib


def test_four_positions_d4_base100_table():
    # The article's table for "I am a robot" (n=100, d=4), computed from the formula.
    table = pe_lib.sinusoidal(4, 4, base=100)
    omega1 = 100 ** (-2 / 4)  # 0.1
    expected = np.array([[np.sin(p), np.cos(p), np.sin(p * omega1), np.cos(p * omega1)] for p in range(4)])
    np.testing.assert_allclose(table, expected, rtol=0, atol=1e-15)
    # Printed digits that agree with the formula (8 decimals as printed):
    printed_ok = {(1, 0): 0.84147098, (1, 1): 0.54030231, (1, 2): 0.09983342, (1, 3): 0.99500417,
                  (2, 0): 0.90929743, (2, 1): -0.41614684, (2, 2): 0.19866933, (2, 3): 0.98006658,
                  (3, 0): 0.14112001, (3, 1): -0.9899925, (3, 3): 0.95533649}
    for (p, j), value in printed_ok.items():
        assert round(table[p, j], 8) == value
    # The article prints 0.29552023 for (3, 2); sin(0.3) rounds to 0.29552021.
    assert round(table[3, 2], 8) == 0.29552021
    assert round(table[3, 2], 8) != 0.29552023


def test_pe1_for_d512_rounded_and_truncated():
    pe1 = pe_lib.sinusoidal([1], 512)[0]
    cols = [0, 1, 2, 3, 510, 511]
    rounded = [round(float(pe1[c]), 4) for c in cols]
    truncated = [float(np.trunc(pe1[c] * 1e4) / 1e4) for c in cols]
    assert rounded == [0.8415, 0.5403, 0.8219, 0.5697, 0.0001, 1.0]
    # the article's list is the truncation: 0.8414, 0.5403, 0.8218, 0.5696, ..., 0.0001, 0.9999
    assert truncated == [0.8414, 0.5403, 0.8218, 0.5696, 0.0001, 0.9999]


def test_pe0_is_alternating_zeros_and_ones():
    assert np.array_equal(pe_lib.sinusoidal([0], 512)[0], np.tile([0.0, 1.0], 256))
