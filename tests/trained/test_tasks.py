"""The synthetic tasks of pe_lib.trained.tasks: targets written out by hand, masks, shapes, bad input."""

import numpy as np
import pytest

import pe_lib
from pe_lib.trained.tasks import DEFAULT_VOCAB_SIZE, is_causal


def test_lookback_targets_by_hand():
    tokens = np.array([[5, 1, 4, 1, 5, 9, 2]])
    targets = pe_lib.task_targets("lookback", tokens, offset=3)
    # i = 3..6 copy the token 3 places back: tokens[0..3] = 5, 1, 4, 1; i < 3 are not scored (0)
    np.testing.assert_array_equal(targets, [[0, 0, 0, 5, 1, 4, 1]])
    np.testing.assert_array_equal(pe_lib.scored_positions("lookback", 7, offset=3), [0, 0, 0, 1, 1, 1, 1])


def test_lookback_offset_one_is_the_previous_token():
    np.testing.assert_array_equal(pe_lib.task_targets("lookback", np.array([7, 8, 9]), offset=1), [0, 7, 8])


def test_reverse_targets_by_hand():
    tokens = np.array([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]])
    np.testing.assert_array_equal(pe_lib.task_targets("reverse", tokens), [[5, 1, 4, 1, 3], [3, 5, 6, 2, 9]])
    assert pe_lib.scored_positions("reverse", 5).all()


def test_causal_only_for_lookback():
    assert is_causal("lookback") and not is_causal("reverse")


def test_batch_shapes_range_and_determinism():
    tokens, targets, counts = pe_lib.task_batch("lookback", 6, 10, vocab_size=5, offset=2, seed=3)
    assert tokens.shape == targets.shape == (6, 10) and counts.shape == (10,)
    assert tokens.dtype == np.int32 and tokens.min() >= 0 and tokens.max() <= 4
    assert len(np.unique(tokens)) == 5  # 60 draws from 5 tokens use them all
    np.testing.assert_array_equal(targets[:, 2:], tokens[:, :-2])
    again, _, _ = pe_lib.task_batch("lookback", 6, 10, vocab_size=5, offset=2, seed=3)
    np.testing.assert_array_equal(tokens, again)
    other, _, _ = pe_lib.task_batch("lookback", 6, 10, vocab_size=5, offset=2, seed=4)
    assert not np.array_equal(tokens, other)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: pe_lib.task_batch("sort", 2, 8), "task must be one of 'lookback', 'reverse'"),
        (lambda: pe_lib.task_batch("reverse", 0, 8), "n_sequences must be an integer >= 1"),
        (lambda: pe_lib.task_batch("reverse", 2, 0), "seq_len must be an integer >= 1"),
        (lambda: pe_lib.task_batch("reverse", 2, 8, vocab_size=1), "vocab_size must be an integer >= 2"),
        (lambda: pe_lib.task_batch("lookback", 2, 3, offset=3), "needs seq_len > k"),
        (lambda: pe_lib.scored_positions("lookback", 8, offset=0), "offset must be an integer >= 1"),
        (lambda: pe_lib.task_targets("reverse", np.array([0.5, 1.0])), "integer array"),
        (lambda: pe_lib.task_targets("reverse", np.int64(3)), "integer array"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_first_copies_the_first_token():
    tokens = np.array([[4, 1, 2, 3], [7, 7, 0, 5]])
    assert pe_lib.task_targets("first", tokens).tolist() == [[4, 4, 4, 4], [7, 7, 7, 7]]
    assert pe_lib.scored_positions("first", 4).tolist() == [False, True, True, True]
    tokens, targets, counts = pe_lib.task_batch("first", 5, 6, seed=2)
    np.testing.assert_array_equal(targets[:, counts], np.repeat(tokens[:, :1], 5, axis=1))
    with pytest.raises(ValueError, match="first needs seq_len >= 2"):
        pe_lib.scored_positions("first", 1)


def test_the_default_seed_is_0():  # found by `make mutate`: the chapters' stored batches rely on it
    tokens, _, _ = pe_lib.task_batch("lookback", 4, 8)
    np.testing.assert_array_equal(tokens, np.random.default_rng(0).integers(0, DEFAULT_VOCAB_SIZE, (4, 8)))


def test_the_batch_counts_follow_the_offset_and_errors_name_seq_len():  # found by `make mutate`
    np.testing.assert_array_equal(pe_lib.task_batch("lookback", 2, 8, offset=5)[2], np.arange(8) >= 5)
    with pytest.raises(ValueError, match="seq_len"):
        pe_lib.scored_positions("reverse", 0)


def test_text_batch_is_windows_of_the_training_text_and_their_next_characters():
    """task_batch("text") reads windows of the corpus's training text, starts drawn by default_rng(seed)
    on 0 .. n - L - 1, and the characters one place later as targets (checked on the text itself)."""
    from pe_lib.trained.corpus import corpus_split

    train = corpus_split()[0]
    tokens, targets, counts = pe_lib.task_batch("text", 3, 5, seed=7)
    assert tokens.shape == targets.shape == (3, 5) and counts.tolist() == [True] * 5
    starts = np.random.default_rng(7).integers(0, len(train) - 5, size=3)
    for b, s in enumerate(starts):
        assert bytes(tokens[b].astype(np.uint8)).decode() == train[s : s + 5]
        assert bytes(targets[b].astype(np.uint8)).decode() == train[s + 1 : s + 6]


def test_text_targets_are_not_made_from_the_window():
    with pytest.raises(ValueError, match=r"^the targets of 'text' are the next characters of the corpus, beyond "
                                         r"the window: draw them with task_batch\('text', \.\.\.\)$"):
        pe_lib.task_targets("text", np.array([[1, 2, 3]]))


def test_the_shortest_sequences_each_task_accepts():
    """first: 2 tokens (one scored); lookback: k + 1; reverse: 1. The masks are bools."""
    assert pe_lib.scored_positions("first", 2).tolist() == [False, True]
    assert pe_lib.scored_positions("lookback", 4, offset=3).tolist() == [False, False, False, True]
    counts = pe_lib.scored_positions("reverse", 1)
    assert counts.dtype == bool and counts.tolist() == [True]
    with pytest.raises(ValueError, match=r"^seq_len must be an integer >= 1, got 0$"):
        pe_lib.scored_positions("reverse", 0)
