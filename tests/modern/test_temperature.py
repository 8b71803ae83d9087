"""Llama 4's NoPE temperature, Scalable-Softmax, entropy and the target weight: values by hand, limits, bad input."""

import math

import numpy as np
import pytest

import pe_lib


def test_nope_temperature_by_hand():
    # F = 8192, a = 0.1: 1 until p + 1 reaches 8192, then 1 + 0.1 ln 2, 1 + 0.1 ln 3, ...
    got = pe_lib.nope_temperature([0, 8190, 8191, 16382, 16383, 81919])
    want = [1.0, 1.0, 1 + 0.1 * math.log(2), 1 + 0.1 * math.log(2), 1 + 0.1 * math.log(3), 1 + 0.1 * math.log(11)]
    np.testing.assert_allclose(got, want, rtol=1e-15)
    np.testing.assert_allclose(pe_lib.nope_temperature(np.array([[3]]), floor_scale=2, attn_scale=1.0),
                               [[1 + math.log(3)]], rtol=1e-15)  # floor(4/2) = 2, ln 3
    assert pe_lib.nope_temperature([10**6], attn_scale=0.0)[0] == 1.0


@pytest.mark.parametrize("kwargs, match", [
    (dict(positions=[-1]), "whole numbers"), (dict(positions=[1.5]), "whole numbers"),
    (dict(positions=[np.inf]), "whole numbers"), (dict(positions=[1], floor_scale=0), "floor_scale"),
    (dict(positions=[1], attn_scale=-0.1), "attn_scale"), (dict(positions=[1], floor_scale=np.nan), "floor_scale"),
])
def test_nope_temperature_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.nope_temperature(**kwargs)
    with pytest.raises(TypeError):
        pe_lib.nope_temperature("12")


def test_softmax_entropy_limits():
    assert pe_lib.softmax_entropy([1.0, 0.0, 0.0]) == 0.0
    np.testing.assert_allclose(pe_lib.softmax_entropy(np.full((2, 8), 1 / 8)), [math.log(8)] * 2, rtol=1e-15)
    np.testing.assert_allclose(pe_lib.softmax_entropy([0.5, 0.5]), math.log(2), rtol=1e-15)
    for bad in ([0.5, 0.6], [-0.5, 1.5], [np.nan, 1.0], 1.0):
        with pytest.raises(ValueError):
            pe_lib.softmax_entropy(bad)


def test_scalable_softmax_is_softmax_of_scaled_logits():
    z = np.array([[2.0, 0.0, -1.0, 0.5], [1.0, -np.inf, 0.0, -np.inf]])
    got = pe_lib.scalable_softmax(z, 0.5)
    row0 = np.exp(0.5 * math.log(4) * z[0])  # n = 4 keys
    row1 = np.exp(0.5 * math.log(2) * np.array([1.0, 0.0]))  # n = 2 unmasked keys
    np.testing.assert_allclose(got[0], row0 / row0.sum(), rtol=1e-14)
    np.testing.assert_allclose(got[1], [row1[0] / row1.sum(), 0, row1[1] / row1.sum(), 0], rtol=1e-14)
    # s ln n = 1: the plain softmax
    np.testing.assert_allclose(pe_lib.scalable_softmax([[1.0, 2.0, 3.0]], 1 / math.log(3)),
                               pe_lib.softmax([[1.0, 2.0, 3.0]]), rtol=1e-14)
    with pytest.raises(ValueError, match="s must be > 0"):
        pe_lib.scalable_softmax([1.0], 0.0)
    with pytest.raises(ValueError, match="at least one axis"):
        pe_lib.scalable_softmax(1.0, 1.0)


def test_target_weight_by_hand_and_its_limits():
    np.testing.assert_allclose(pe_lib.target_weight([1, 2, 11], math.log(10)), [1.0, 10 / 11, 0.5], rtol=1e-15)
    # with s m = 1 the weight is n / (2n - 1): it tends to 1/2 instead of 0
    np.testing.assert_allclose(pe_lib.target_weight([3, 1000], 2.0, s=0.5), [3 / 5, 1000 / 1999], rtol=1e-14)
    for kwargs in (dict(n=[0], margin=1.0), dict(n=[2.5], margin=1.0), dict(n=[2], margin=1.0, s=-1.0)):
        with pytest.raises(ValueError):
            pe_lib.target_weight(**kwargs)


def test_entropy_by_length_grows_like_log_n_and_ssmax_stops_it():
    lengths = [16, 256, 4096]
    plain = pe_lib.entropy_by_length(lengths, seed=3, sigma=1.0, samples=32)
    # large n: ln n - sigma^2 / 2 (a lognormal's weights); already within 0.1 at n = 256
    np.testing.assert_allclose(plain[1:], np.log(lengths[1:]) - 0.5, atol=0.1)
    flat = pe_lib.entropy_by_length([5, 50], sigma=0.0, samples=1)
    np.testing.assert_allclose(flat, np.log([5, 50]), rtol=1e-14)  # equal logits: uniform weights
    ssmax = pe_lib.entropy_by_length(lengths, seed=3, sigma=1.0, samples=32, s=1.0)
    assert np.all(np.diff(ssmax) < 0) and np.all(np.diff(plain) > 0)
    for kwargs in (dict(lengths=[0]), dict(lengths=[4], sigma=-1.0), dict(lengths=[4], samples=0),
                   dict(lengths=[10**9], samples=64)):
        with pytest.raises(ValueError):
            pe_lib.entropy_by_length(**kwargs)


def test_entropy_refuses_weights_whose_sum_is_off_by_more_than_1e_9():
    # the documented tolerance: a sum 1 + 1e-6 is refused, 1 + 1e-12 accepted (planted: atol 1e-3)
    with pytest.raises(ValueError, match="must sum to 1"):
        pe_lib.softmax_entropy([0.5, 0.5 + 1e-6])
    assert pe_lib.softmax_entropy([0.5, 0.5 + 1e-12]) == pytest.approx(math.log(2))
