"""offset_r_squared against an independent loop over the entries, on matrices whose answer is known."""

import numpy as np
import pytest

import pe_lib


def r_squared_by_loops(a, rows):
    entries = [(a[i, j], i - j) for i in rows for j in range(i + 1)]
    groups = {}
    for value, offset in entries:
        groups.setdefault(offset, []).append(value)
    means = {offset: sum(v) / len(v) for offset, v in groups.items()}
    mean = sum(v for v, _ in entries) / len(entries)
    residual = sum((v - means[o]) ** 2 for v, o in entries)
    total = sum((v - mean) ** 2 for v, _ in entries)
    return 1 - residual / total


def test_a_toeplitz_matrix_is_explained_by_its_offsets():
    i, j = np.indices((10, 10))
    assert pe_lib.offset_r_squared(np.cos(i - j) + 0.1 * (i - j)) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("rows", [None, [5, 6, 7, 8, 9], [0, 9], [3]])
def test_matches_a_loop_over_the_entries(rows):
    a = np.random.default_rng(0).random((10, 10))
    expected = r_squared_by_loops(a, range(10) if rows is None else rows)
    assert pe_lib.offset_r_squared(a, queries=rows) == pytest.approx(expected, rel=1e-12)


def test_a_matrix_that_depends_on_the_query_only():
    i, _ = np.indices((6, 6))
    value = pe_lib.offset_r_squared(i.astype(float))
    assert value == pytest.approx(r_squared_by_loops(i.astype(float), range(6)), rel=1e-12)
    assert value < 0.5


def test_keys_after_the_query_are_ignored():
    a = np.random.default_rng(1).random((6, 6))
    b = a.copy()
    b[np.triu_indices(6, 1)] = 1e6
    assert pe_lib.offset_r_squared(a) == pe_lib.offset_r_squared(b)


@pytest.mark.parametrize("weights, queries, message", [
    (np.zeros((3, 4)), None, "square"),
    (np.zeros(4), None, "2-D"),
    (np.ones((4, 4)), None, "constant"),
    (np.eye(4), [4], "query rows"),
    (np.eye(4), [-1], "query rows"),
    (np.eye(4), [], "query rows"),
    (np.eye(4), [0.5], "query rows"),
])
def test_bad_input(weights, queries, message):
    with pytest.raises(ValueError, match=message):
        pe_lib.offset_r_squared(weights, queries=queries)
