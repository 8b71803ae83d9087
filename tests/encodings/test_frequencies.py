"""The two frequency conventions and their wavelengths."""

import numpy as np
from hypothesis import given
from strategies import bases, d_models

import pe_lib


@given(d=d_models, base=bases)
def test_paper_frequencies_follow_the_formula(d, base):
    k = np.arange(d // 2)
    np.testing.assert_allclose(pe_lib.frequencies(d, base=base), base ** (-2.0 * k / d), rtol=1e-13)


@given(d=d_models.filter(lambda d: d >= 4), base=bases)
def test_tensor2tensor_frequencies_end_exactly_at_one_over_base(d, base):
    omega = pe_lib.frequencies(d, base=base, convention="tensor2tensor")
    assert omega[0] == 1.0
    np.testing.assert_allclose(omega[-1], 1.0 / base, rtol=1e-13)
    # geometric: constant ratio between neighbours
    ratios = omega[1:] / omega[:-1]
    np.testing.assert_allclose(ratios, ratios[0], rtol=1e-12)


@given(d=d_models, base=bases)
def test_wavelengths_are_two_pi_over_omega_and_increase(d, base):
    lam = pe_lib.wavelengths(d, base=base)
    np.testing.assert_allclose(lam * pe_lib.frequencies(d, base=base), 2 * np.pi, rtol=1e-15)
    assert lam[0] == 2 * np.pi
    assert np.all(np.diff(lam) > 0) or d == 2


def test_paper_longest_wavelength_falls_short_of_two_pi_base():
    # 2 pi * 10000^((d-2)/d): for d = 512 that is 2 pi * 9646.6..., not 2 pi * 10000
    lam = pe_lib.wavelengths(512)
    np.testing.assert_allclose(lam[-1] / (2 * np.pi), 10000 ** (510 / 512), rtol=1e-13)
    assert round(lam[-1] / (2 * np.pi), 1) == 9646.6
    lam_t2t = pe_lib.wavelengths(512, convention="tensor2tensor")
    np.testing.assert_allclose(lam_t2t[-1], 2 * np.pi * 10000, rtol=1e-13)


def test_the_default_base_is_10000_and_each_convention_by_hand():
    # written out for d_model = 8: 10000^(-2k/8) and, tensor2tensor, 10000^(-k/3)
    np.testing.assert_allclose(pe_lib.frequencies(8), [1.0, 0.1, 0.01, 0.001], rtol=1e-15)
    np.testing.assert_allclose(pe_lib.frequencies(8, convention="tensor2tensor"),
                               [1.0, 10000 ** (-1 / 3), 10000 ** (-2 / 3), 1e-4], rtol=1e-15)
    np.testing.assert_allclose(pe_lib.frequencies(4, convention="tensor2tensor"), [1.0, 1e-4], rtol=1e-15)


def test_errors_in_full():
    import warnings

    import pytest

    with pytest.raises(ValueError) as convention:
        pe_lib.frequencies(8, convention="x")
    assert str(convention.value) == "convention must be one of 'paper', 'tensor2tensor', got 'x'"
    with pytest.raises(ValueError) as two:
        pe_lib.frequencies(2, convention="tensor2tensor")
    assert str(two.value) == ("convention='tensor2tensor' divides by d_model/2 - 1, which is zero for d_model=2; "
                              "use d_model >= 4 or convention='paper'")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the overflow is reported once, as this error, not also as a warning
        with pytest.raises(ValueError) as huge:
            pe_lib.wavelengths(8, base=1e308, convention="tensor2tensor")
    assert str(huge.value) == ("base=1e+308 is so large that 2*pi/omega overflows float64; use a base below "
                               "1e300")
