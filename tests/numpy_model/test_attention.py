"""Scaled dot-product attention: rows sum to one, masks and biases act as documented, and
self-attention without positions is permutation-equivariant."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pe_lib


def _weights(seed, d=8, d_k=4):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(d, d_k)), rng.normal(size=(d, d_k)), rng.normal(size=(d, d_k))


@given(seed=st.integers(0, 10_000), n=st.integers(1, 9))
def test_self_attention_is_permutation_equivariant(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 8))
    w_q, w_k, w_v = _weights(seed)
    perm = rng.permutation(n)
    out = pe_lib.self_attention(x, w_q, w_k, w_v)
    np.testing.assert_allclose(pe_lib.self_attention(x[perm], w_q, w_k, w_v), out[perm], atol=1e-12)


def test_softmax_rows_sum_to_one_and_ignore_shift():
    s = np.array([[1.0, 2.0, 3.0], [1000.0, 1000.0, -np.inf]])
    p = pe_lib.softmax(s)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_allclose(p[1], [0.5, 0.5, 0.0])
    np.testing.assert_allclose(pe_lib.softmax(s[0] + 50.0), p[0])


def test_causal_mask_and_weights():
    np.testing.assert_array_equal(pe_lib.causal_mask(3), [[1, 0, 0], [1, 1, 0], [1, 1, 1]])
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(4, 2)), rng.normal(size=(4, 2))
    w = pe_lib.attention_weights(q, k, causal=True)
    assert np.all(w[np.triu_indices(4, 1)] == 0)
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    assert w[0, 0] == 1.0


def test_bias_is_added_to_scores_per_head():
    q = np.zeros((2, 2))
    k = np.zeros((3, 2))
    bias = np.array([[[0.0, np.log(3.0), 0.0]] * 2, [[0.0, 0.0, 0.0]] * 2])  # (2 heads, 2, 3)
    w = pe_lib.attention_weights(q, k, bias=bias)
    assert w.shape == (2, 2, 3)
    np.testing.assert_allclose(w[0, 0], [0.2, 0.6, 0.2])
    np.testing.assert_allclose(w[1, 1], [1 / 3] * 3)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: pe_lib.softmax([np.nan, 1.0]), "must not contain NaN or \\+inf"),
        (lambda: pe_lib.softmax([-np.inf, -np.inf]), "fully masked row"),
        (lambda: pe_lib.causal_mask(0), "n must be an integer >= 1, got 0"),
        (lambda: pe_lib.attention_weights(np.ones((2, 3)), np.ones((2, 4))), "same width d_k, got 3 and 4"),
        (lambda: pe_lib.attention_weights(np.ones(3), np.ones((2, 3))), "q must be 2-D, got shape \\(3,\\)"),
        (lambda: pe_lib.attention_weights(np.ones((2, 3)), np.ones((3, 3)), causal=True),
         "as many queries as keys, got 2 and 3"),
        (lambda: pe_lib.attention_weights(np.ones((2, 3)), np.ones((2, 3)), bias=np.ones((3, 3))),
         "bias must have shape \\(2, 2\\)"),
        (lambda: pe_lib.attention_weights(np.ones((2, 3)), np.ones((2, 3)), bias=np.ones((1, 1, 2, 2))),
         "bias must have shape"),
        (lambda: pe_lib.self_attention(np.ones((2, 3)), np.ones((4, 2)), np.ones((3, 2)), np.ones((3, 2))),
         "w_q must have 3 rows"),
        (lambda: pe_lib.self_attention([[np.inf, 0.0]], np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2))),
         "x must be finite"),
    ],
)
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---- found by `make mutate`: arguments that were accepted silently or named wrongly ----------------
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: pe_lib.attention_weights(np.ones((2, 3)), np.ones(3)), r"^k must be 2-D, got shape \(3,\)"),
        (lambda: pe_lib.attention_weights(np.ones((2, 3)), np.ones((2, 3)), bias=[[np.nan, 0], [0, 0]]),
         r"^bias must be finite"),
        (lambda: pe_lib.attention_weights(np.ones((2, 4)), np.ones((3, 4)), causal=True),
         r"as many queries as keys, got 2 and 3$"),
        (lambda: pe_lib.self_attention(np.ones(3), np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2))),
         r"^x must be 2-D, got shape \(3,\)"),
        (lambda: pe_lib.self_attention(np.ones((2, 3)), np.ones(3), np.ones((3, 2)), np.ones((3, 2))),
         r"^w_q must be 2-D, got shape \(3,\)"),
        (lambda: pe_lib.self_attention(np.ones((2, 3)), np.ones((3, 2)), np.ones(3), np.ones((3, 2))),
         r"^w_k must be 2-D, got shape \(3,\)"),
        (lambda: pe_lib.self_attention(np.ones((2, 3)), np.ones((3, 2)), np.ones((3, 2)), np.ones(3)),
         r"^w_v must be 2-D, got shape \(3,\)"),
        (lambda: pe_lib.self_attention(np.ones((2, 3)), np.ones((3, 2)), np.ones((4, 2)), np.ones((3, 2))),
         r"^w_k must have 3 rows \(the width of x\), got shape \(4, 2\)"),
        (lambda: pe_lib.self_attention(np.ones((2, 3)), np.ones((3, 2)), np.ones((3, 2)), np.ones((2, 2))),
         r"^w_v must have 3 rows \(the width of x\), got shape \(2, 2\)"),
        (lambda: pe_lib.self_attention(np.ones((2, 2)), np.eye(2), np.full((2, 2), 1e308), np.eye(2)),
         r"^x @ w_k overflow"),
        (lambda: pe_lib.self_attention(np.ones((2, 2)), np.eye(2), np.eye(2), np.full((2, 2), 1e308)),
         r"^x @ w_v overflow"),
        (lambda: pe_lib.softmax([np.inf, 1.0]), r"^scores must not contain NaN or \+inf"),
        (lambda: pe_lib.softmax(["a"]), r"^scores must hold real numbers"),
        (lambda: pe_lib.softmax([[-np.inf, -np.inf]]), r"^every softmax slice needs at least one entry"),
        (lambda: pe_lib.softmax([1.0, 2.0], axis=1), r"axis must be an integer from -1 to 0, got 1"),
        (lambda: pe_lib.softmax(3.0, axis=1), r"axis must be an integer from -1 to 0, got 1"),
    ],
)
def test_messages_name_the_argument(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_overflow_is_an_error_not_a_warning():
    # q k^T has +inf and -inf terms: their sum is NaN (an 'invalid' operation), reported as overflow
    big = np.array([[1e200, 1e200]])
    with pytest.raises(ValueError, match=r"^the scores q k\^T / sqrt\(d_k\) \(\+ bias\) overflow float64"):
        pe_lib.attention_weights(big, np.array([[1e200, -1e200]]))
    # finite scores plus a finite bias can overflow too
    with pytest.raises(ValueError, match=r"overflow float64"):
        pe_lib.attention_weights([[1e154]], [[1e154]], bias=[[1.7e308]])
    with pytest.raises(ValueError, match=r"^x @ w_q overflow"):
        pe_lib.self_attention([[1e200, 1e200]], [[1e200], [-1e200]], np.ones((2, 1)), np.ones((2, 1)))


def test_softmax_of_a_scalar_and_the_mask_dtype():
    assert pe_lib.softmax(3.0) == 1.0
    assert pe_lib.causal_mask(3).dtype == np.bool_


def test_self_attention_passes_the_bias_on():
    # equal scores (x @ w_q = 0): the bias alone sets the weights, ln 3 -> (3/4, 1/4)
    x, zero, v = np.eye(2), np.zeros((2, 2)), np.array([[1.0, 0.0], [0.0, 1.0]])
    out = pe_lib.self_attention(x, zero, zero, v, bias=[[np.log(3), 0.0], [0.0, 0.0]])
    np.testing.assert_allclose(out, [[0.75, 0.25], [0.5, 0.5]], rtol=1e-15)


def test_scores_are_divided_by_the_root_of_the_key_width_not_of_the_number_of_keys():
    # one query (1, 1, 1, 1) and two keys, e_0 and 0, of width d_k = 4: scores 1/sqrt(4) = 0.5 and 0, so the
    # weights are e^0.5 / (e^0.5 + 1) and 1 / (e^0.5 + 1) (planted: divided by sqrt(2 keys))
    import math

    q = np.ones((1, 4))
    k = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    first = math.exp(0.5) / (math.exp(0.5) + 1)
    np.testing.assert_allclose(pe_lib.attention_weights(q, k), [[first, 1 - first]], rtol=1e-14)
