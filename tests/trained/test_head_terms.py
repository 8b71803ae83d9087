"""The four-term split of a trained head's scores and the shift-commuting projection: the terms against
the model's own attention (JAX), the projection against pe_lib.shift_matrix, determinism, bad input."""

import dataclasses

import numpy as np
import pytest

import pe_lib
from pe_lib.trained import head_terms

pytest.importorskip("jax")

SHORT = dict(steps=13, d_model=16, n_layers=1, n_heads=2, batch_size=4, seq_len=8)


@pytest.fixture(scope="module")
def models():
    return {
        "sinusoidal": pe_lib.train_transformer("lookback", "sinusoidal", progress=False, **SHORT),
        "learned": pe_lib.train_transformer("reverse", "learned", progress=False, **SHORT),
    }


def softmax(scores, causal):
    n = scores.shape[-1]
    if causal:
        scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("name", ["sinusoidal", "learned"])
@pytest.mark.parametrize("head", [0, 1])
def test_the_four_terms_sum_to_the_scores_the_model_uses(models, name, head):
    model = models[name]
    tokens = pe_lib.task_batch(model.task, 5, model.seq_len, vocab_size=16, seed=3)[0]
    terms = pe_lib.head_score_terms(model, tokens, head=head)  # (4, 5, L, L)
    attention = pe_lib.trained_attention(model, tokens)[0, :, head]  # the JAX forward pass, (5, L, L)
    np.testing.assert_allclose(softmax(terms.sum(axis=0), model.config.causal), attention, atol=2e-6)
    assert terms.shape == (4, 5, model.seq_len, model.seq_len)


def test_one_sequence_gives_one_matrix_per_term(models):
    tokens = np.arange(8) % 16
    one = pe_lib.head_score_terms(models["sinusoidal"], tokens)
    batch = pe_lib.head_score_terms(models["sinusoidal"], tokens[None])
    np.testing.assert_array_equal(one, batch[:, 0])


def test_without_position_vectors_only_the_content_term_is_left(models):
    model = models["learned"]
    params = dict(model.params, pos=np.zeros_like(model.params["pos"]))  # a table of zeros
    blank = dataclasses.replace(model, params=params)
    tokens = np.arange(8)
    terms = pe_lib.head_score_terms(blank, tokens)
    np.testing.assert_array_equal(terms[1:], 0)
    attention = pe_lib.trained_attention(blank, tokens)[0, 0]
    np.testing.assert_allclose(softmax(terms[0], causal=False), attention, atol=2e-6)


def test_the_position_term_is_the_positional_form_over_the_norms(models):
    model = models["sinusoidal"]
    tokens = np.array([3, 1, 4, 1, 5, 9, 2, 6])
    p = pe_lib.sinusoidal(8, 16).astype(np.float32).astype(float)
    x = np.asarray(model.params["embed"], dtype=float)[tokens] + p
    sigma = np.sqrt(np.var(x, axis=1) + 1e-5)  # the layer norm's denominator, by hand
    expected = p @ pe_lib.positional_form(model, head=1) @ p.T / np.outer(sigma, sigma)
    np.testing.assert_allclose(pe_lib.head_score_terms(model, tokens, head=1)[3], expected, rtol=1e-5, atol=1e-7)


def test_deterministic(models):
    tokens = np.arange(8)
    np.testing.assert_array_equal(pe_lib.head_score_terms(models["learned"], tokens),
                                  pe_lib.head_score_terms(models["learned"], tokens))


def test_bad_input(models):
    rope = pe_lib.train_transformer("lookback", "rope", progress=False, **SHORT)
    with pytest.raises(ValueError, match="adds no position vector"):
        pe_lib.head_score_terms(rope, np.arange(8))
    with pytest.raises(ValueError, match="head must be in 0..1"):
        pe_lib.head_score_terms(models["sinusoidal"], np.arange(8), head=2)
    with pytest.raises(ValueError, match="head must be in 0..1"):
        pe_lib.positional_form(models["sinusoidal"], head=5)
    with pytest.raises(ValueError, match="vocabulary"):
        pe_lib.head_score_terms(models["sinusoidal"], np.arange(8) + 10)
    with pytest.raises(ValueError, match="TrainedTransformer"):
        pe_lib.positional_form("a model")


def test_term_shares_sum_to_one_and_match_covariances():
    rng = np.random.default_rng(0)
    terms = rng.standard_normal((4, 3, 6, 6))
    shares = pe_lib.term_shares(terms)
    keep = np.tril(np.ones((6, 6), dtype=bool))
    flat = terms[..., keep].reshape(4, -1)
    total = flat.sum(axis=0)
    expected = [np.cov(t, total, bias=True)[0, 1] / np.var(total) for t in flat]  # numpy's covariance
    np.testing.assert_allclose(shares, expected, rtol=1e-12)
    assert shares.sum() == pytest.approx(1.0, abs=1e-12)
    full = pe_lib.term_shares(terms, causal=False)
    assert full.sum() == pytest.approx(1.0, abs=1e-12)
    assert not np.allclose(full, shares)


def test_a_term_that_is_the_whole_score_has_share_one():
    s = np.arange(16.0).reshape(4, 4)
    np.testing.assert_allclose(pe_lib.term_shares(np.stack([s, 0 * s])), [1.0, 0.0])


@pytest.mark.parametrize("terms, message", [
    (np.zeros((2, 3, 4)), "square"),
    (np.zeros((2, 3)), r"^terms must have shape \(terms, \.\.\., L, L\), got shape \(2, 3\)$"),
    (np.arange(9.0).reshape(3, 3), r"^terms must have shape \(terms, \.\.\., L, L\), got shape \(3, 3\)$"),
    (np.ones((2, 3, 3)), "^the scores are constant, so the shares of their variance are undefined$"),
])
def test_term_shares_bad_input(terms, message):
    with pytest.raises(ValueError, match=message):
        pe_lib.term_shares(terms)


def test_the_projection_commutes_with_every_shift():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((16, 16))
    projected = pe_lib.commuting_projection(w)
    for phi in (1.0, 3.0, -2.5, 17.0):
        m = pe_lib.shift_matrix(phi, 16)  # chapter 6's rotation, an independent function
        np.testing.assert_allclose(projected @ m, m @ projected, atol=1e-12)
    assert not np.allclose(w @ pe_lib.shift_matrix(1.0, 16), pe_lib.shift_matrix(1.0, 16) @ w)


def test_the_projection_is_the_nearest_commuting_matrix():
    rng = np.random.default_rng(2)
    w = rng.standard_normal((8, 8))
    projected = pe_lib.commuting_projection(w)
    j = np.array([[0.0, -1.0], [1.0, 0.0]])
    for k in range(4):  # the residual is orthogonal to the basis I_k, J_k of the family
        for block in (np.eye(2), j):
            basis = np.zeros((8, 8))
            basis[2 * k:2 * k + 2, 2 * k:2 * k + 2] = block
            assert np.sum((w - projected) * basis) == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(pe_lib.commuting_projection(projected), projected)  # idempotent


def test_a_commuting_form_scores_by_offset_only():
    rng = np.random.default_rng(3)
    projected = pe_lib.commuting_projection(rng.standard_normal((16, 16)))
    pe = pe_lib.sinusoidal(40, 16)
    scores = pe @ projected @ pe.T
    for offset in range(-39, 40):
        assert np.ptp(np.diagonal(scores, offset)) < 1e-10
    assert pe_lib.offset_r_squared(scores) == pytest.approx(1.0, abs=1e-12)


def test_commuting_share():
    rng = np.random.default_rng(4)
    shares = [pe_lib.commuting_share(rng.standard_normal((64, 64))) for _ in range(20)]
    assert np.mean(shares) == pytest.approx(1 / 64, rel=0.15)  # d of the d^2 dimensions
    commuting = pe_lib.commuting_projection(rng.standard_normal((64, 64)))
    assert pe_lib.commuting_share(commuting) == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(ValueError, match="zero"):
        pe_lib.commuting_share(np.zeros((4, 4)))
    with pytest.raises(ValueError, match="even size"):
        head_terms.commuting_projection(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="even size"):
        head_terms.commuting_projection(np.zeros((4, 2)))


def terms_by_hand(model, tokens, head):
    """The module doc's formulas in float64, one step at a time (tokens: (B, L))."""
    block = model.params["blocks"][0]
    length, d = tokens.shape[1], model.config.d_model
    e = np.asarray(model.params["embed"], dtype=float)[tokens]
    if model.config.encoding == "learned":
        p = np.asarray(model.params["pos"], dtype=float)[:length]
    else:
        p = pe_lib.sinusoidal(length, d).astype(np.float32).astype(float)
    x = (e + p).astype(np.float32).astype(float)  # the model adds in float32
    sigma = np.sqrt(np.mean((x - x.mean(axis=2, keepdims=True)) ** 2, axis=2, keepdims=True) + 1e-5)
    g, beta = np.asarray(block["ln1_g"], dtype=float), np.asarray(block["ln1_b"], dtype=float)
    c = g * (e - e.mean(axis=2, keepdims=True)) / sigma + beta
    q = g * (p - p.mean(axis=1, keepdims=True)) / sigma
    w_q, w_k = (np.asarray(block[name][head], dtype=float) for name in ("w_q", "w_k"))
    w = w_q @ w_k.T / np.sqrt(w_q.shape[1])
    return np.stack([np.einsum("bid,de,bje->bij", a, w, b) for a, b in ((c, c), (c, q), (q, c), (q, q))])


@pytest.mark.parametrize("name", ["sinusoidal", "learned"])
def test_the_four_terms_of_shorter_sequences_by_hand_in_float64(models, name):
    # 5 tokens of a model trained on 8: the position table is cut to 5 rows; float64 throughout, so the
    # terms agree with the formulas to rounding (a float32 step would leave errors near 1e-7)
    model = models[name]
    tokens = np.array([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]])
    got = pe_lib.head_score_terms(model, tokens, head=1)
    assert got.dtype == np.float64 and got.shape == (4, 2, 5, 5)
    np.testing.assert_allclose(got, terms_by_hand(model, tokens, head=1), rtol=1e-11, atol=1e-13)


def test_positional_form_by_hand_in_float64(models):
    model = models["sinusoidal"]
    block = model.params["blocks"][0]
    d = model.config.d_model
    forms = []
    for head in (0, 1):
        w_q, w_k = (np.asarray(block[name][head], dtype=float) for name in ("w_q", "w_k"))
        w = w_q @ w_k.T / np.sqrt(w_q.shape[1])
        gamma = np.diag(np.asarray(block["ln1_g"], dtype=float))
        centre = np.eye(d) - np.full((d, d), 1 / d)
        forms.append(centre @ gamma @ w @ gamma @ centre)
    np.testing.assert_allclose(pe_lib.positional_form(model), forms[0], rtol=1e-12, atol=1e-15)  # head 0 by default
    np.testing.assert_allclose(pe_lib.positional_form(model, head=1), forms[1], rtol=1e-12, atol=1e-15)
    assert np.abs(forms[0] - forms[1]).max() > 1e-3  # the two heads differ


def test_a_bad_head_is_named(models):
    with pytest.raises(ValueError, match=r"^head must be an integer >= 0, got -1$"):
        pe_lib.positional_form(models["sinusoidal"], head=-1)


def test_a_constant_added_to_a_term_changes_no_share():
    # Cov(s_t + a, s + b) = Cov(s_t, s): however large the constants, the shares stay those of numpy's
    # covariances of the small integer terms (the constants are exact in float64)
    rng = np.random.default_rng(5)
    small = rng.integers(-5, 6, size=(4, 2, 6, 6)).astype(float)
    keep = np.tril(np.ones((6, 6), dtype=bool))
    flat = small[..., keep].reshape(4, -1)
    total = flat.sum(axis=0)
    expected = [np.cov(t, total, bias=True)[0, 1] / np.var(total) for t in flat]
    shifted = small + np.array([1e12, -1e12, 3e12, -2e12])[:, None, None, None]
    np.testing.assert_allclose(pe_lib.term_shares(shifted), expected, rtol=1e-9)


@pytest.mark.parametrize("function", [pe_lib.commuting_projection, pe_lib.commuting_share])
def test_commuting_functions_refuse_a_matrix_that_is_not_2d(function):
    with pytest.raises(ValueError, match=r"^w must be 2-D, got shape \(\)$"):
        function(np.float64(2.0))
    with pytest.raises(ValueError, match=r"^w must be 2-D, got shape \(4,\)$"):
        function(np.zeros(4))


def test_a_zero_matrix_has_no_commuting_share():
    with pytest.raises(ValueError, match="^w is zero, so the share of its norm is undefined$"):
        pe_lib.commuting_share(np.zeros((4, 4)))
