"""Summaries of repeated training runs (pe_lib.trained.runs), checked against plain loops and hand-made cases."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import pe_lib

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


@given(arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 4)), elements=finite))
def test_seed_spread_is_mean_min_max_over_the_first_axis(v):
    mean, lo, hi = pe_lib.seed_spread(v)
    for c in range(v.shape[1]):
        column = [float(x) for x in v[:, c]]
        assert mean[c] == pytest.approx(sum(column) / len(column), abs=1e-9)
        assert lo[c] == min(column) and hi[c] == max(column)


def test_spread_text_in_percent():
    assert pe_lib.spread_text([0.991, 1.0, 0.998]) == "99.6% (99.1%–100.0%)"
    assert pe_lib.spread_text([0.0625]) == "6.2%"  # one seed: no range; 6.25 rounds to even
    assert pe_lib.spread_text([0.5, 1.0], unit="") == "75.0 (50.0–100.0)"
    assert pe_lib.spread_text([150, 161], scale=1, decimals=0) == "156 (150–161)"  # no unit unless percent
    assert pe_lib.spread_text([1.234, 2.0], scale=1.0, decimals=2) == "1.62 (1.23–2.00)"
    assert pe_lib.spread_text([-0.0001, 0.0001], scale=1.0, decimals=1) == "0.0 (0.0–0.0)"  # no "-0.0"
    assert pe_lib.spread_text([-0.2, 0.0], scale=1.0, decimals=1) == "-0.1 (-0.2–0.0)"


def test_spread_table_layout():
    rows = {"rope": np.array([[1.0, 0.5], [0.98, 0.25]]), "none": np.array([[0.1, 0.1], [0.1, 0.1]])}
    table = pe_lib.spread_table(rows, ["1x", "2x"], label="encoding")
    lines = table.split("\n")
    assert lines[0].split() == ["encoding", "1x", "2x"]
    assert lines[1].split() == ["rope", "99.0%", "(98.0%–100.0%)", "37.5%", "(25.0%–50.0%)"]
    assert lines[2].split() == ["none", "10.0%", "(10.0%–10.0%)", "10.0%", "(10.0%–10.0%)"]
    assert len({len(line) for line in lines}) == 1  # aligned
    with_gap = pe_lib.spread_table({"learned": np.array([[1.0, np.nan], [0.5, np.nan]])}, ["1x", "2x"], missing="n/a")
    assert with_gap.split("\n")[1].split() == ["learned", "75.0%", "(50.0%–100.0%)", "n/a"]
    steps = pe_lib.spread_table({"rope": np.array([[60.0], [64.0]])}, ["steps"], scale=1, decimals=0)
    assert steps.split("\n")[1].split() == ["rope", "62", "(60–64)"]


@given(arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(1, 40)), elements=finite), st.integers(1, 40))
def test_running_mean_matches_a_loop(losses, window):
    if window > losses.shape[-1]:
        with pytest.raises(ValueError, match="window"):
            pe_lib.running_mean(losses, window)
        return
    got = pe_lib.running_mean(losses, window)
    steps = losses.shape[-1]
    assert got.shape == (losses.shape[0], steps - window + 1)
    for r in range(losses.shape[0]):
        for t in range(steps - window + 1):
            assert got[r, t] == pytest.approx(np.mean(losses[r, t:t + window]), abs=1e-9)


def brute_steps_to_loss(losses, threshold, window):
    for step in range(window, len(losses) + 1):  # step = number of steps taken
        if np.mean(losses[step - window:step]) < threshold:
            return step
    return -1


@given(arrays(np.float64, st.integers(5, 60), elements=st.floats(0, 5)), st.floats(0, 5), st.integers(1, 5))
def test_steps_to_loss_matches_a_loop(losses, threshold, window):
    assert int(pe_lib.steps_to_loss(losses, threshold, window=window)) == brute_steps_to_loss(losses, threshold, window)


def test_steps_to_loss_by_hand_and_over_runs():
    losses = np.array([[3.0, 2.0, 1.0, 0.5, 0.05, 0.01], [3.0, 3.0, 3.0, 3.0, 3.0, 3.0]])
    assert pe_lib.steps_to_loss(losses, 0.6, window=1).tolist() == [4, -1]  # step 4 has loss 0.5
    assert pe_lib.steps_to_loss(losses, 0.6, window=2).tolist() == [5, -1]  # mean(0.5, 0.05) < 0.6


def test_accuracy_by_position():
    predicted = np.array([[1, 2, 3, 4], [1, 0, 3, 0]])
    targets = np.array([[1, 2, 0, 4], [1, 2, 3, 4]])
    counts = np.array([False, True, True, True])
    got = pe_lib.accuracy_by_position(predicted, targets, counts)
    assert np.isnan(got[0])
    assert got[1:].tolist() == [0.5, 0.5, 0.5]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: pe_lib.seed_spread(np.zeros((0, 3))), "at least one seed"),
        (lambda: pe_lib.seed_spread(5.0), r"\(seeds, ...\)"),
        (lambda: pe_lib.seed_spread([1.0, np.nan]), "finite"),
        (lambda: pe_lib.spread_text([[1.0]]), "1-D"),
        (lambda: pe_lib.spread_text([1.0], decimals=-1), "decimals"),
        (lambda: pe_lib.spread_text([1.0], scale=np.inf), "scale"),
        (lambda: pe_lib.spread_text([1.0], unit=1), "unit"),
        (lambda: pe_lib.spread_table({}, ["a"]), "non-empty dict"),
        (lambda: pe_lib.spread_table([1.0], ["a"]), "non-empty dict"),
        (lambda: pe_lib.spread_table({"x": np.zeros((2, 3))}, ["a", "b"]), "3 columns but 2"),
        (lambda: pe_lib.spread_table({"x": np.zeros(3)}, ["a", "b", "c"]), r"\(seeds, columns\)"),
        (lambda: pe_lib.spread_table({"x": np.array([[1.0], [np.nan]])}, ["a"]), "finite"),
        (lambda: pe_lib.running_mean([1.0, 2.0], 0), "window"),
        (lambda: pe_lib.running_mean(1.0, 1), r"\(\.\.\., steps\)"),
        (lambda: pe_lib.steps_to_loss([1.0, 2.0], np.nan), "threshold"),
        (lambda: pe_lib.accuracy_by_position(np.zeros((2, 3)), np.zeros((2, 4)), np.ones(3, bool)), "both have"),
        (lambda: pe_lib.accuracy_by_position(np.zeros(3), np.zeros(3), np.ones(3, bool)), "both have"),
        (lambda: pe_lib.accuracy_by_position(np.zeros((2, 3)), np.zeros((2, 3)), np.ones(3)), "bool array"),
        (lambda: pe_lib.accuracy_by_position(np.zeros((2, 3)), np.zeros((2, 3)), np.ones(4, bool)), r"\(3,\)"),
    ],
)
def test_bad_input_is_refused_with_a_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: pe_lib.seed_spread(5.0), ValueError, r"values must have shape (seeds, ...), got shape ()"),
        (lambda: pe_lib.spread_text([[1.0]]), ValueError, "values must be 1-D, got shape (1, 1)"),
        (lambda: pe_lib.spread_text([1.0], scale=np.inf), ValueError, "scale must be a finite real number, got inf"),
        (lambda: pe_lib.spread_text([1.0], decimals=-1), ValueError, "decimals must be an integer >= 0, got -1"),
        (lambda: pe_lib.spread_table({"x": [["a"]]}, ["c"]), TypeError, "rows['x'] must hold real numbers"),
        (lambda: pe_lib.running_mean(1.0, 1), ValueError, "losses must have shape (..., steps), got shape ()"),
        (lambda: pe_lib.running_mean([1.0], 0), ValueError, "window must be an integer >= 1, got 0"),
        # (4, 3, 2): the steps are the last axis, 2 of them, not the 3 of axes 1 and -2
        (lambda: pe_lib.running_mean(np.zeros((4, 3, 2)), 5), ValueError,
         "window must be at most the number of steps 2, got 5"),
        (lambda: pe_lib.steps_to_loss([1.0], np.nan), ValueError, "threshold must be a finite real number, got nan"),
    ],
)
def test_errors_name_the_argument_in_full(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert str(info.value).startswith(message)


def test_defaults_and_options_by_hand():
    # the default window is 20: 20 zero losses first average below 0.5 at step 20
    assert int(pe_lib.steps_to_loss(np.zeros(20), 0.5)) == 20
    # each run on its own: the second reaches the threshold at step 2, the first never
    assert pe_lib.steps_to_loss(np.array([[3.0, 3.0, 3.0], [3.0, 0.0, 0.0]]), 1.0, window=1).tolist() == [-1, 2]
    # right 2 of 2 at position 0, 1 of 2 at position 1
    got = pe_lib.accuracy_by_position(np.array([[1, 2], [1, 0]]), np.array([[1, 2], [1, 2]]), np.ones(2, bool))
    assert got.tolist() == [1.0, 0.5]
    # no label: the first column is as wide as the row names; an all-NaN cell is "–"; the unit reaches every cell
    assert pe_lib.spread_table({"a": [[0.5]]}, ["c"]) == "       c\na  50.0%"
    assert pe_lib.spread_table({"a": [[np.nan]]}, ["c"]) == "   c\na  –"
    assert pe_lib.spread_table({"a": [[0.5]]}, ["c"], unit=" pts") == "          c\na  50.0 pts"
