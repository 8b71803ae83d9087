"""Moving cached RoPE keys: the same as rotating from scratch at the new position (pe_lib.rope)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import bases, d_models, offsets

import pe_lib


@given(d_models, bases, offsets, st.sampled_from(["interleaved", "split"]))
def test_shift_equals_rotating_at_the_new_position(d, base, delta, layout):
    x = np.random.default_rng(d).normal(size=(2, 5, d))  # two heads, five cached keys
    positions = np.array([0.0, 1.0, 7.0, 30.0, 100.0])
    cached = pe_lib.rope(x, positions, base=base, layout=layout)
    moved = pe_lib.rope_shift(cached, delta, base=base, layout=layout)
    np.testing.assert_allclose(moved, pe_lib.rope(x, positions + delta, base=base, layout=layout), atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(moved, axis=-1), np.linalg.norm(x, axis=-1))  # a rotation


def test_hand_worked_pair_and_own_frequencies():
    # one pair at frequency 1: (1, 0) turned by 90 degrees is (0, 1)
    np.testing.assert_allclose(pe_lib.rope_shift([1.0, 0.0], np.pi / 2), [0.0, 1.0], atol=1e-15)
    inv_freq = np.array([0.5, 0.25])  # a scaled model's own frequencies
    got = pe_lib.rope_shift([1.0, 0.0, 0.0, 1.0], 2.0, inv_freq=inv_freq, layout="split")
    # split pairs: (x0, x2) = (1, 0) turns by 1 rad, (x1, x3) = (0, 1) turns by 0.5 rad
    np.testing.assert_allclose(got, [np.cos(1.0), -np.sin(0.5), np.sin(1.0), np.cos(0.5)], atol=1e-15)
    keys = np.random.default_rng(1).normal(size=(3, 8))
    np.testing.assert_allclose(pe_lib.rope_shift(pe_lib.rope_shift(keys, 5.0), -5.0), keys, atol=1e-12)
    np.testing.assert_array_equal(pe_lib.rope_shift(keys, 0.0), keys)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: pe_lib.rope_shift(np.ones(3), 1), "even integer"),
        (lambda: pe_lib.rope_shift(np.ones(4), np.inf), "delta must be a finite real number"),
        (lambda: pe_lib.rope_shift(np.ones(4), "1"), "delta must be a finite real number"),
        (lambda: pe_lib.rope_shift(np.full(4, np.nan), 1), "must be finite"),
        (lambda: pe_lib.rope_shift(np.ones(4), 1, layout="neox"), "layout must be one of"),
        (lambda: pe_lib.rope_shift(np.ones(4), 1, base=1.0), "greater than 1"),
        (lambda: pe_lib.rope_shift(np.ones(4), 1, inv_freq=[1.0]), r"one frequency per pair: 2 .* got shape \(1,\)"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ---- found by `make mutate` (each kills mutants that the tests above let live) ---------------------
def test_the_default_base_is_10000():
    # interleaved, d = 4: pair 1 = dimensions (2, 3) turns at 10000^(-1/2) = 0.01, by 10 rad over 1000 positions
    out = pe_lib.rope_shift(np.array([0.0, 0.0, 1.0, 0.0]), 1000)
    np.testing.assert_allclose(out, [0.0, 0.0, np.cos(10.0), np.sin(10.0)], rtol=0, atol=1e-12)


@pytest.mark.parametrize(("keys", "kwargs", "message"), [
    (np.float64(1.0), {}, "keys must have shape (..., d), got shape ()"),
    (np.zeros(3), {}, "the last axis of keys (the head dimension d) must be a positive even integer (each "
                      "frequency fills a sin/cos pair), got 3; try 4"),
    (np.zeros(4), {"inv_freq": [[1.0, 1.0]]}, "inv_freq must be 1-D, got shape (1, 2)"),
])
def test_whole_error_messages(keys, kwargs, message):
    with pytest.raises(ValueError) as error:
        pe_lib.rope_shift(keys, 1, **kwargs)
    assert str(error.value) == message


# ---- the roles of the new tokens after a stale cache (issue 29) -------------------------------------
def loop_roles(n_cached, length, delta, lookback):
    """Independent re-implementation: where does each new token's target sit, and what else looks like it?"""
    roles = []
    apparent = {j: j + delta for j in range(n_cached)}  # cached token j appears at j + delta
    for i in range(length):
        target = i - lookback
        if i < n_cached or target < 0:
            roles.append(3)
        elif target < n_cached:
            roles.append(0)
        elif any(pos == target for j, pos in apparent.items() if delta):
            roles.append(1)
        else:
            roles.append(2)
    return roles


@pytest.mark.parametrize("delta", [0, 1, 2, 4, 8, 16, 40])
@pytest.mark.parametrize(("n_cached", "length", "lookback"), [(16, 32, 3), (5, 12, 1), (3, 20, 7)])
def test_stale_cache_roles_against_a_loop(n_cached, length, delta, lookback):
    got = pe_lib.stale_cache_roles(n_cached, length, delta, lookback)
    assert got.tolist() == loop_roles(n_cached, length, delta, lookback)
    assert got.dtype == np.int64


def test_stale_cache_roles_by_hand():
    # chapter 19's case: 16 cached, 32 tokens, look back 3
    roles = pe_lib.stale_cache_roles(16, 32, 8, 3)
    assert [int((roles == r).sum()) for r in range(4)] == [3, 8, 5, 16]
    assert pe_lib.stale_cache_roles(16, 32, 1, 3)[16:20].tolist() == [0, 0, 0, 1]
    assert len(pe_lib.STALE_ROLES) == 4


@pytest.mark.parametrize(("args", "message"), [
    ((16, 16, 1, 3), "n_cached must be below length"),
    ((0, 16, 1, 3), "n_cached must be an integer >= 1"),
    ((4, 16, -1, 3), "delta must be an integer >= 0"),
    ((4, 16, 1, 0), "lookback must be an integer >= 1"),
    ((4, 16.0, 1, 2), "length must be an integer"),
])
def test_stale_cache_roles_bad_input(args, message):
    with pytest.raises(ValueError, match=message):
        pe_lib.stale_cache_roles(*args)
