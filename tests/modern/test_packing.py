"""Packing: positions that restart, the block-diagonal mask, documents read back from positions."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pe_lib

lengths_lists = st.lists(st.integers(1, 9), min_size=1, max_size=6)


def loop_positions(lengths, start=0):
    """Independent re-implementation: one document after the other, counting from ``start``."""
    out = []
    for n in lengths:
        out += [start + t for t in range(n)]
    return out


def test_hand_worked_pack():
    assert pe_lib.packed_position_ids([3, 2, 1]).tolist() == [0, 1, 2, 0, 1, 0]
    assert pe_lib.packed_position_ids([3, 2, 1], start=2).tolist() == [2, 3, 4, 2, 3, 2]
    assert pe_lib.packed_document_ids([3, 2, 1]).tolist() == [0, 0, 0, 1, 1, 2]
    assert pe_lib.cu_seq_lens([3, 2, 1]).tolist() == [0, 3, 5, 6]
    assert pe_lib.cu_seq_lens([3]).dtype == np.int32
    causal = [[1, 0, 0], [1, 1, 0], [0, 0, 1]]
    assert pe_lib.packed_attention_mask([2, 1]).astype(int).tolist() == causal
    assert pe_lib.packed_attention_mask([2, 1], causal=False).astype(int).tolist() == [[1, 1, 0], [1, 1, 0], [0, 0, 1]]


@given(lengths_lists, st.integers(0, 3))
def test_positions_restart_and_documents_come_back(lengths, start):
    positions = pe_lib.packed_position_ids(lengths, start=start)
    assert positions.tolist() == loop_positions(lengths, start)
    documents = pe_lib.documents_from_position_ids(positions)
    np.testing.assert_array_equal(documents, pe_lib.packed_document_ids(lengths))
    mask = pe_lib.packed_attention_mask(lengths)
    i, j = np.indices(mask.shape)
    np.testing.assert_array_equal(mask, (documents[i] == documents[j]) & (j <= i))
    assert mask.sum() == sum(n * (n + 1) // 2 for n in lengths)


def test_positions_that_run_on_are_one_document():
    assert pe_lib.documents_from_position_ids(np.arange(6)).tolist() == [0] * 6
    two_rows = np.array([[0, 1, 0, 1], [5, 6, 7, 8]])
    assert pe_lib.documents_from_position_ids(two_rows).tolist() == [[0, 0, 1, 1], [0, 0, 0, 0]]
    assert pe_lib.documents_from_position_ids([0, 0, 0]).tolist() == [0, 1, 2]  # documents of one token


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: pe_lib.packed_position_ids([3, 0]), "an empty document"),
        (lambda: pe_lib.packed_position_ids([3, -1]), "must all be >= 1"),
        (lambda: pe_lib.packed_position_ids([2.0, 3.0]), "must hold integers >= 1"),
        (lambda: pe_lib.packed_position_ids([3], start=-1), "start must be an integer >= 0"),
        (lambda: pe_lib.packed_position_ids([3], start=True), "start must be an integer >= 0"),
        (lambda: pe_lib.packed_attention_mask([3], causal=1), "causal must be True"),
        (lambda: pe_lib.cu_seq_lens([]), "non-empty 1-D"),
        (lambda: pe_lib.documents_from_position_ids([0.0, 1.0]), "integer array"),
        (lambda: pe_lib.documents_from_position_ids(np.zeros((1, 1, 2), int)), "integer array"),
        (lambda: pe_lib.documents_from_position_ids(np.zeros(0, int)), "non-empty"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ---- found by `make mutate` (each kills mutants that the tests above let live) ---------------------
def test_lengths_error_shows_the_first_four_values():
    with pytest.raises(ValueError) as error:
        pe_lib.packed_document_ids([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    assert str(error.value) == "lengths must hold integers >= 1 (token counts), got dtype float64: [1.0, 2.0, 3.0, 4.0]"


def test_document_ids_are_int64():
    assert pe_lib.documents_from_position_ids([0, 1, 0, 1, 2]).dtype == np.int64
    assert pe_lib.documents_from_position_ids([0, 1, 0, 1, 2]).tolist() == [0, 0, 1, 1, 1]


# ---- what transformers 5.23.0 makes of a pack without a mask (issue 29) ----------------------------
def test_the_mask_path_separates_documents_only_without_a_cache():
    positions = [0, 1, 2, 0, 1, 0]  # documents of 3, 2 and 1 tokens
    assert pe_lib.documents_in_transformers_mask(positions, use_cache=False).tolist() == [0, 0, 0, 1, 1, 2]
    # the default call: use_cache=True creates a DynamicCache before the mask, and the detection is skipped
    assert pe_lib.documents_in_transformers_mask(positions).tolist() == [0] * 6
    assert pe_lib.documents_in_transformers_mask(positions, use_cache=False, attention_mask=np.ones((1, 6))).tolist() \
        == [0] * 6
    two_rows = np.array([[0, 1, 0, 1], [3, 4, 5, 6]])
    assert pe_lib.documents_in_transformers_mask(two_rows, use_cache=False).tolist() == [[0, 0, 1, 1], [0, 0, 0, 0]]
    assert pe_lib.documents_in_transformers_mask(two_rows).shape == (2, 4)


@given(lengths_lists, st.integers(0, 3))
def test_the_flash_path_cuts_where_the_position_is_smallest(lengths, start):
    positions = pe_lib.packed_position_ids(lengths, start=start)
    np.testing.assert_array_equal(pe_lib.cu_seq_lens_from_position_ids(positions), pe_lib.cu_seq_lens(lengths))
    np.testing.assert_array_equal(pe_lib.cu_seq_lens_from_position_ids(positions[None]), pe_lib.cu_seq_lens(lengths))


def test_the_flash_path_and_the_mask_path_differ():
    # a second document that restarts at 1 instead of 0: a step != 1 for the mask path, not the minimum for flash
    positions = [0, 1, 2, 1, 2]
    assert pe_lib.documents_from_position_ids(positions).tolist() == [0, 0, 0, 1, 1]
    assert pe_lib.cu_seq_lens_from_position_ids(positions).tolist() == [0, 5]
    assert pe_lib.cu_seq_lens_from_position_ids([4, 5, 4, 4]).dtype == np.int32
    assert pe_lib.cu_seq_lens_from_position_ids([4, 5, 4, 4]).tolist() == [0, 2, 3, 4]


def test_packed_labels_ignore_every_first_token():
    labels = pe_lib.packed_labels([[5, 6, 7], [8], [9, 10]])
    assert labels.tolist() == [-100, 6, 7, -100, -100, 10]
    assert labels.dtype == np.int64
    assert pe_lib.packed_labels([np.array([3, 4])], separator_id=-1).tolist() == [-1, 4]
    # the loss pairs the logits at t - 1 with the label at t: no pair crosses a document boundary
    lengths = [3, 1, 2]
    documents = pe_lib.packed_document_ids(lengths)
    trained = labels[1:] != -100
    assert (documents[1:][trained] == documents[:-1][trained]).all()
    assert trained.sum() == sum(lengths) - len(lengths)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: pe_lib.documents_in_transformers_mask([0, 1], use_cache=None), "use_cache must be True or False"),
        (lambda: pe_lib.documents_in_transformers_mask([0.0, 1.0]), "integer array"),
        (lambda: pe_lib.cu_seq_lens_from_position_ids([0.0, 1.0]), "integer array"),
        (lambda: pe_lib.cu_seq_lens_from_position_ids(np.zeros((2, 3), int)), r"\(1, T\)"),
        (lambda: pe_lib.cu_seq_lens_from_position_ids(np.zeros((1, 1, 3), int)), "integer array"),
        (lambda: pe_lib.cu_seq_lens_from_position_ids(np.zeros(0, int)), "non-empty"),
        (lambda: pe_lib.packed_labels([[1, 2]], separator_id=True), "separator_id must be an integer"),
        (lambda: pe_lib.packed_labels([[1, 2]], separator_id=-100.0), "separator_id must be an integer"),
        (lambda: pe_lib.packed_labels([]), "non-empty list"),
        (lambda: pe_lib.packed_labels("abc"), "non-empty list"),
        (lambda: pe_lib.packed_labels(np.array([1, 2])), "non-empty list"),
        (lambda: pe_lib.packed_labels(5), "non-empty list"),
        (lambda: pe_lib.packed_labels([[1, 2], []]), "document 1"),
        (lambda: pe_lib.packed_labels([[1.0, 2.0]]), "document 0"),
        (lambda: pe_lib.packed_labels([[[1, 2]]]), "document 0"),
    ],
)
def test_bad_input_to_the_transformers_rules(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_position_that_jumps_forward_starts_a_document_too():
    # "does not go up by exactly one": a jump by 3 starts a document as a fall does (planted: step < 1 only)
    assert pe_lib.documents_from_position_ids([0, 1, 2, 5, 6, 0]).tolist() == [0, 0, 0, 1, 1, 2]
