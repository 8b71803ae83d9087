"""T5's relative position buckets: exact near the query, logarithmic further away, one side each."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pe_lib


def test_hand_computed_defaults():
    # 32 buckets, bidirectional: 16 per side, 8 exact; log buckets ln(a/8)/ln(16) * 8, capped at 15
    cases = {0: 0, -1: 1, -7: 7, -8: 8, -11: 8, -12: 9, -16: 10, -32: 12, -64: 14, -127: 15, -128: 15,
             -10_000: 15, 1: 17, 7: 23, 8: 24, 16: 26, 128: 31, 10_000: 31}
    rel = np.array(list(cases))
    np.testing.assert_array_equal(pe_lib.t5_relative_bucket(rel), list(cases.values()))


def test_hand_computed_unidirectional():
    # decoder: 32 buckets for the past, 16 exact; future keys share bucket 0
    rel = np.array([5, 1, 0, -1, -15, -16, -32, -64, -128, -500])
    np.testing.assert_array_equal(pe_lib.t5_relative_bucket(rel, bidirectional=False),
                                  [0, 0, 0, 1, 15, 16, 21, 26, 31, 31])


def reference_bucket(rel, bidirectional, num_buckets, max_distance):
    """T5's _relative_position_bucket for one integer, written out from the paper's code (mesh_tensorflow)."""
    n = num_buckets
    ret = 0
    if bidirectional:
        n //= 2
        if rel > 0:
            ret += n
        distance = abs(rel)
    else:
        distance = max(-rel, 0)
    exact = n // 2
    if distance < exact:
        return ret + distance
    large = exact + int(math.log(distance / exact) / math.log(max_distance / exact) * (n - exact))
    return ret + min(large, n - 1)


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize(("num_buckets", "max_distance"), [(32, 128), (64, 256), (16, 50), (8, 1000)])
def test_matches_an_independent_reimplementation(bidirectional, num_buckets, max_distance):
    rel = np.arange(-3 * max_distance, 3 * max_distance + 1)
    expected = [reference_bucket(int(r), bidirectional, num_buckets, max_distance) for r in rel]
    got = pe_lib.t5_relative_bucket(rel, bidirectional=bidirectional, num_buckets=num_buckets,
                                    max_distance=max_distance)
    np.testing.assert_array_equal(got, expected)


def test_where_the_last_bucket_starts():
    # Encoder (16 buckets a side, 8 exact): bucket 15 needs 8 + floor(8 ln(a/8) / ln 16) >= 15,
    # i.e. a >= 8 * 16^(7/8) = 90.51: from distance 91 on, not from max_distance = 128.
    assert pe_lib.t5_relative_bucket(-90) == 14 and pe_lib.t5_relative_bucket(-91) == 15
    assert pe_lib.t5_relative_bucket(90) == 30 and pe_lib.t5_relative_bucket(91) == 31
    # Decoder (32 buckets for the past, 16 exact): 16 + floor(16 ln(a/16) / ln 8) >= 31 from a >= 16 * 8^(15/16)
    # = 112.40, i.e. from distance 113 on.
    assert pe_lib.t5_relative_bucket(-112, bidirectional=False) == 30
    assert pe_lib.t5_relative_bucket(-113, bidirectional=False) == 31
    # non-default: 64 buckets, max_distance 256, encoder: 16 + floor(16 ln(a/16) / ln 16) >= 31 from
    # a >= 16 * 16^(15/16) = 215.27 -> 216
    kwargs = {"num_buckets": 64, "max_distance": 256}
    assert pe_lib.t5_relative_bucket(-215, **kwargs) == 30 and pe_lib.t5_relative_bucket(-216, **kwargs) == 31


@given(bidirectional=st.booleans(), half=st.integers(2, 32), max_distance=st.integers(1, 1000))
def test_range_monotonicity_and_exact_region(bidirectional, half, max_distance):
    num_buckets = 2 * half
    per_side = half if bidirectional else num_buckets
    exact = per_side // 2
    if max_distance <= exact:
        max_distance = exact + 1
    past = pe_lib.t5_relative_bucket(-np.arange(0, 3 * max_distance), bidirectional=bidirectional,
                                     num_buckets=num_buckets, max_distance=max_distance)
    assert past.min() == 0 and past.max() <= per_side - 1
    assert np.all(np.diff(past) >= 0)  # farther never means a smaller bucket
    np.testing.assert_array_equal(past[:exact], np.arange(exact))  # one bucket per small distance
    assert np.all(past[max_distance:] == per_side - 1)  # everything from max_distance on shares the last
    future = pe_lib.t5_relative_bucket(np.arange(1, 3 * max_distance), bidirectional=bidirectional,
                                       num_buckets=num_buckets, max_distance=max_distance)
    if bidirectional:
        np.testing.assert_array_equal(future, per_side + past[1:])  # mirror image in the upper half
    else:
        assert np.all(future == 0)


def test_shapes_and_scalars():
    i = np.arange(6)
    rel = i[None, :] - i[:, None]  # key - query
    buckets = pe_lib.t5_relative_bucket(rel)
    assert buckets.shape == (6, 6) and buckets.dtype == np.int64
    np.testing.assert_array_equal(np.diag(buckets), 0)
    assert pe_lib.t5_relative_bucket(-3) == 3
    assert pe_lib.t5_relative_bucket(np.int32(3)) == 19


@pytest.mark.parametrize(
    ("rel", "kwargs", "match"),
    [
        (np.array([1.5]), {}, r"relative_position must hold integers .* got an array of dtype float64"),
        ("3", {}, r"relative_position must hold integers"),
        (True, {}, r"relative_position must hold integers"),
        (1, {"bidirectional": 1}, r"bidirectional must be True or False, got 1"),
        (1, {"num_buckets": 2}, r"num_buckets must be an integer >= 4, got 2"),
        (1, {"num_buckets": 1, "bidirectional": False}, r"num_buckets must be an integer >= 2, got 1"),
        (1, {"num_buckets": 33}, r"num_buckets must be even when bidirectional .* got 33"),
        (1, {"max_distance": 0}, r"max_distance must be an integer >= 1, got 0"),
        (1, {"max_distance": 8}, r"max_distance must exceed the 8 exactly-bucketed distances .* got 8"),
    ],
)
def test_validation(rel, kwargs, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.t5_relative_bucket(rel, **kwargs)


@pytest.mark.parametrize(("bidirectional", "exact", "divisor"), [(True, 8, 4), (False, 16, 2)])
def test_max_distance_error_in_full(bidirectional, exact, divisor):
    with pytest.raises(ValueError) as error:
        pe_lib.t5_relative_bucket(np.arange(3), bidirectional=bidirectional, num_buckets=32, max_distance=4)
    assert str(error.value) == (f"max_distance must exceed the {exact} exactly-bucketed distances (num_buckets // "
                                f"{divisor}), got 4")


def test_causal_buckets_are_integers():
    buckets = pe_lib.t5_relative_bucket(np.arange(-20, 1), bidirectional=False)
    assert buckets.dtype == np.int64
    assert buckets[-1] == 0 and buckets[-17] == 16  # offsets 0 and -16: exact up to 15, then logarithmic
