"""Chunked prefill: each chunk gets the whole prompt's positions and sees every earlier slot, cached or not."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pe_lib


def test_bounds_by_hand():
    assert pe_lib.prefill_chunk_bounds(11, 4).tolist() == [0, 4, 8, 11]  # torch.split: the last chunk is shorter
    assert pe_lib.prefill_chunk_bounds(8, 4).tolist() == [0, 4, 8]
    assert pe_lib.prefill_chunk_bounds(3, 10).tolist() == [0, 3]
    assert pe_lib.prefill_chunk_bounds(3, 1).tolist() == [0, 1, 2, 3]


def test_a_chunk_by_hand():
    # one pad, then three real tokens; the chunk of slots 2 and 3 continues the positions 0, 1, 2 of the mask
    positions, allowed = pe_lib.prefill_chunk([[0, 1, 1, 1]], 2, 4)
    assert positions.tolist() == [[1, 2]]
    assert allowed.astype(int).tolist() == [[[0, 1, 1, 0], [0, 1, 1, 1]]]  # slot 1 is cached, still seen
    # a right-padded row: the pads of the last chunk are hidden from its real query and from themselves
    positions, allowed = pe_lib.prefill_chunk([[1, 1, 0, 0]], 1, 4)
    assert positions.tolist() == [[1, 0, 0]]
    assert allowed.astype(int).tolist() == [[[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 0, 0]]]


@given(lengths=st.lists(st.integers(1, 9), min_size=1, max_size=4), extra=st.integers(0, 3),
       chunk=st.integers(1, 13), side=st.sampled_from(["left", "right"]))
def test_the_chunks_together_are_the_one_pass_prefill(lengths, extra, chunk, side):
    mask = pe_lib.padding_mask(lengths, max(lengths) + extra, side=side)
    width = mask.shape[1]
    one_pass = np.tril(np.ones((width, width), dtype=bool))[None] & (mask[:, None, :] == 1)  # causal and padding
    bounds = pe_lib.prefill_chunk_bounds(width, chunk)
    rows, positions = [], []
    for start, stop in zip(bounds[:-1], bounds[1:], strict=True):
        p, a = pe_lib.prefill_chunk(mask, start, stop)
        assert a.shape == (len(lengths), stop - start, stop)
        rows.append(np.pad(a, ((0, 0), (0, 0), (0, width - stop))))
        positions.append(p)
    np.testing.assert_array_equal(np.concatenate(rows, axis=1), one_pass)
    np.testing.assert_array_equal(np.concatenate(positions, axis=1), pe_lib.position_ids_from_mask(mask))


@pytest.mark.parametrize(("call", "match"), [
    (lambda: pe_lib.prefill_chunk_bounds(0, 4), r"length must be an integer >= 1, got 0"),
    (lambda: pe_lib.prefill_chunk_bounds(5, 0), r"chunk_size must be an integer >= 1, got 0"),
    (lambda: pe_lib.prefill_chunk_bounds(5, 2.0), r"chunk_size must be an integer >= 1, got 2.0"),
    (lambda: pe_lib.prefill_chunk([[1, 1]], 1, 1), r"0 <= start < stop <= L = 2 .* got start=1, stop=1"),
    (lambda: pe_lib.prefill_chunk([[1, 1]], 0, 3), r"got start=0, stop=3"),
    (lambda: pe_lib.prefill_chunk([[1, 1]], -1, 1), r"got start=-1, stop=1"),
    (lambda: pe_lib.prefill_chunk([[1, 1]], 0.0, 1), r"got start=0.0, stop=1"),
    (lambda: pe_lib.prefill_chunk([[1, 1]], False, 1), r"got start=False, stop=1"),
    (lambda: pe_lib.prefill_chunk([[1, 1]], 0, True), r"got start=0, stop=True"),
    (lambda: pe_lib.prefill_chunk([[0, 0]], 0, 1), r"row 0 has none"),
    (lambda: pe_lib.prefill_chunk([[1, 2]], 0, 1), r"only 0 \(pad\) and 1"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
