"""Padded batches: positions from the mask (hand-worked examples, a loop that counts, bad input)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pe_lib


def count_positions(mask):
    """Independent re-implementation: walk each row, number the real tokens 0, 1, ..., leave pads at 0."""
    out = np.zeros((len(mask), len(mask[0])), dtype=np.int64)
    for b, row in enumerate(mask):
        seen = 0
        for t, real in enumerate(row):
            if real:
                out[b, t] = seen
                seen += 1
    return out


def test_hand_worked_positions():
    mask = [[0, 0, 1, 1, 1], [1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 0, 1, 0, 1]]
    expected = [[0, 0, 0, 1, 2], [0, 1, 2, 3, 4], [0, 1, 2, 0, 0], [0, 0, 1, 0, 2]]
    got = pe_lib.position_ids_from_mask(np.array(mask, dtype=bool))
    assert got.dtype == np.int64 and got.tolist() == expected


@given(st.lists(st.integers(1, 12), min_size=1, max_size=6), st.integers(0, 5), st.sampled_from(["left", "right"]))
def test_real_tokens_are_numbered_from_zero(lengths, extra, side):
    width = max(lengths) + extra
    mask = pe_lib.padding_mask(lengths, width, side=side)
    assert mask.shape == (len(lengths), width) and mask.sum(axis=1).tolist() == lengths
    positions = pe_lib.position_ids_from_mask(mask)
    np.testing.assert_array_equal(positions, count_positions(mask.tolist()))
    for b, n in enumerate(lengths):
        assert sorted(positions[b][mask[b] == 1].tolist()) == list(range(n))


def test_padding_mask_sides():
    assert pe_lib.padding_mask([2, 3]).tolist() == [[0, 1, 1], [1, 1, 1]]
    assert pe_lib.padding_mask([2, 3], 4, side="right").tolist() == [[1, 1, 0, 0], [1, 1, 1, 0]]


def test_generation_continues_from_the_last_slot():
    left = [[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]]
    assert pe_lib.generation_position_ids(left, 2).tolist() == [[0, 0, 0, 1, 2, 3, 4], [0, 1, 2, 3, 4, 5, 6]]
    right = [[1, 1, 1, 0, 0]]  # the last slot is a pad at position 0: new tokens restart at 1
    assert pe_lib.generation_position_ids(right, 3).tolist() == [[0, 1, 2, 0, 0, 1, 2, 3]]
    assert pe_lib.generation_position_ids(left, 0).shape == (2, 5)


def test_pad_batch_moves_each_sequence():
    tokens = np.arange(12).reshape(2, 6)
    padded, mask = pe_lib.pad_batch(tokens, [3, 6])
    assert padded.tolist() == [[0, 0, 0, 0, 1, 2], [6, 7, 8, 9, 10, 11]]
    assert mask.tolist() == [[0, 0, 0, 1, 1, 1], [1] * 6]
    padded, mask = pe_lib.pad_batch(tokens, [2, 5], side="right", pad_id=-1)
    assert padded.tolist() == [[0, 1, -1, -1, -1, -1], [6, 7, 8, 9, 10, -1]]
    assert padded.dtype == tokens.dtype


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: pe_lib.position_ids_from_mask([[0, 2, 1]]), "only 0 .pad. and 1 .real token., got 2"),
        (lambda: pe_lib.position_ids_from_mask([1, 1, 0]), r"shape \(batch, L\)"),
        (lambda: pe_lib.position_ids_from_mask(np.zeros((2, 0))), r"shape \(batch, L\)"),
        (lambda: pe_lib.position_ids_from_mask([["a", "b"]]), "0s and 1s, got dtype"),
        (lambda: pe_lib.position_ids_from_mask([[1, 1], [0, 0]]), "row 1 has none"),
        (lambda: pe_lib.generation_position_ids([[1, 1]], -1), "n_new must be an integer >= 0"),
        (lambda: pe_lib.generation_position_ids([[1, 1]], 1.5), "n_new must be an integer >= 0"),
        (lambda: pe_lib.padding_mask([3, 0]), "must all be >= 1"),
        (lambda: pe_lib.padding_mask([3, 2.5]), "must hold integers >= 1"),
        (lambda: pe_lib.padding_mask([[3]]), "1-D sequence"),
        (lambda: pe_lib.padding_mask([]), "non-empty 1-D"),
        (lambda: pe_lib.padding_mask("34"), "got a string"),
        (lambda: pe_lib.padding_mask([3, 4], 3), "at least the longest length 4, got 3"),
        (lambda: pe_lib.padding_mask([3], side="middle"), "side must be one of"),
        (lambda: pe_lib.pad_batch(np.zeros((2, 3), int), [1]), "one length per row of tokens .2., got 1"),
        (lambda: pe_lib.pad_batch(np.zeros((2, 3)), [1, 1]), "integer array of shape"),
        (lambda: pe_lib.pad_batch(np.zeros((2, 3), int), [1, 1], pad_id=0.5), "pad_id must be an integer"),
        (lambda: pe_lib.pad_batch(np.zeros((2, 3), int), [1, 4]), "at least the longest length 4, got 3"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ---- found by `make mutate` (each kills mutants that the tests above let live) ---------------------
def test_a_single_token_batch_and_two_left_padded_rows():
    padded, mask = pe_lib.pad_batch([[5]], [1])
    assert padded.tolist() == [[5]] and mask.tolist() == [[1]]
    padded, mask = pe_lib.pad_batch([[1, 2, 3], [4, 5, 6]], [2, 3], side="left", pad_id=9)
    assert padded.tolist() == [[9, 1, 2], [4, 5, 6]] and mask.tolist() == [[0, 1, 1], [1, 1, 1]]


def test_padding_mask_is_int64_and_errors_name_the_argument():
    assert pe_lib.padding_mask([2, 1]).dtype == np.int64
    with pytest.raises(ValueError, match=r"^width must be an integer >= 1"):
        pe_lib.padding_mask([2, 1], 0)
    with pytest.raises(ValueError, match=r"^attention_mask must be an array of 0s and 1s, got dtype <U1"):
        pe_lib.position_ids_from_mask([["a"]])


# ---- cache_position against position_ids (issue 29) -------------------------------------------------
def test_cache_positions_count_slots_and_position_ids_count_tokens():
    mask = [[0, 0, 1, 1], [1, 1, 1, 1]]
    assert pe_lib.cache_positions(mask, 2).tolist() == [[0, 1, 2, 3, 4, 5]] * 2
    assert pe_lib.cache_positions(mask).shape == (2, 4)
    # the gap is the number of pads before each real token: 2 on row 0, 0 on row 1
    gap = pe_lib.cache_positions(mask, 2) - pe_lib.generation_position_ids(mask, 2)
    assert gap.tolist() == [[0, 1, 2, 2, 2, 2], [0, 0, 0, 0, 0, 0]]
    with pytest.raises(ValueError, match="n_new must be an integer >= 0"):
        pe_lib.cache_positions(mask, -1)
    with pytest.raises(ValueError, match="n_new must be an integer >= 0"):
        pe_lib.cache_positions(mask, True)
    with pytest.raises(ValueError, match="needs at least one real token"):
        pe_lib.cache_positions([[0, 0]])


# ---- ALiBi under padding: BLOOM counts tokens, MPT slots (issue 29) ---------------------------------
def test_alibi_key_bias_by_hand():
    mask = [[0, 0, 1, 1, 1]]
    slopes = [0.5, 0.25]
    tokens = pe_lib.alibi_key_bias(mask, slopes)
    slots = pe_lib.alibi_key_bias(mask, slopes, counts="slots")
    assert tokens.shape == slots.shape == (1, 2, 5)
    np.testing.assert_array_equal(tokens[0, 0], [0.0, 0.0, 0.0, 0.5, 1.0])  # 0.5 * (0, 0, 0, 1, 2)
    np.testing.assert_array_equal(slots[0, 1], [-1.0, -0.75, -0.5, -0.25, 0.0])  # 0.25 * (j - 4)
    assert pe_lib.ALIBI_COUNTS == ("tokens", "slots")


def test_left_padding_shifts_alibi_by_a_constant_and_right_padding_does_not():
    slopes = pe_lib.alibi_slopes(4)
    left = pe_lib.padding_mask([3, 6, 1], 6, side="left")
    gap = pe_lib.alibi_key_bias(left, slopes) - pe_lib.alibi_key_bias(left, slopes, counts="slots")
    for b in range(3):
        real = gap[b][:, left[b] == 1]
        np.testing.assert_allclose(real - real[:, :1], 0.0, atol=1e-15)  # one constant per row and head
    # a right-padded prompt of 3, two pads, then two generated tokens: the slots count the pads
    right = np.array([[1, 1, 1, 0, 0, 1, 1]])
    gap = pe_lib.alibi_key_bias(right, slopes) - pe_lib.alibi_key_bias(right, slopes, counts="slots")
    real = gap[0][:, right[0] == 1]
    np.testing.assert_allclose(real[:, 3] - real[:, 0], -2 * slopes)  # two pads' worth of distance


def test_alibi_key_bias_bad_input():
    with pytest.raises(ValueError, match="counts must be one of"):
        pe_lib.alibi_key_bias([[1, 1]], [0.5], counts="positions")
    with pytest.raises(ValueError, match="slopes"):
        pe_lib.alibi_key_bias([[1, 1]], [[0.5]])
    with pytest.raises(ValueError, match="only 0"):
        pe_lib.alibi_key_bias([[1, 2]], [0.5])
