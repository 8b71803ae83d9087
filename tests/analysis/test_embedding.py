"""Token embedding + positional encoding: random vocabularies, nearest-neighbour read-outs, cosines
of random vectors, and the parameter count of adding versus concatenating."""

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pe_lib


# ---- independent, slow reference implementations (loops, explicit distances) ---------------------
def _nearest_token_loop(e, n, base=10_000.0):
    pe = pe_lib.sinusoidal_loop(n, e.shape[1], base=base)
    hits = 0
    for v in range(e.shape[0]):
        for p in range(n):
            x = e[v] + pe[p]
            hits += int(np.argmin([np.sum((x - row) ** 2) for row in e]) == v)
    return hits / (e.shape[0] * n)


def _position_loop(e, n, tolerance=0, base=10_000.0):
    pe = pe_lib.sinusoidal_loop(n, e.shape[1], base=base)
    hits = 0
    for v in range(e.shape[0]):
        for p in range(n):
            x = e[v] + pe[p]
            p_hat = int(np.argmin([np.sum((x - row) ** 2) for row in pe]))
            hits += int(abs(p_hat - p) <= tolerance)
    return hits / (e.shape[0] * n)


# ---- random_embeddings -----------------------------------------------------------------------------
def test_embeddings_are_deterministic_and_seeded():
    a = pe_lib.random_embeddings(5, 8, seed=3)
    assert a.shape == (5, 8)
    np.testing.assert_array_equal(a, pe_lib.random_embeddings(5, 8, seed=3))
    assert not np.array_equal(a, pe_lib.random_embeddings(5, 8, seed=4))


def test_default_scale_is_sqrt_d_model_times_the_unscaled_init():
    unscaled = pe_lib.random_embeddings(7, 32, seed=1, scale=1.0)
    np.testing.assert_allclose(pe_lib.random_embeddings(7, 32, seed=1), np.sqrt(32) * unscaled, rtol=1e-15)
    np.testing.assert_allclose(pe_lib.random_embeddings(7, 32, seed=1, scale=2.5), 2.5 * unscaled, rtol=1e-15)


@pytest.mark.parametrize("d", [16, 128, 512])
def test_squared_norms_match_the_tensor2tensor_initialisation(d):
    # entries N(0, 1/d): E||e||^2 = 1; after the sqrt(d) factor E||e||^2 = d (std of the mean ~ 0.3%)
    unscaled = pe_lib.random_embeddings(4000, d, seed=0, scale=1.0)
    assert np.mean(np.sum(unscaled**2, axis=1)) == pytest.approx(1.0, rel=0.03)
    assert np.std(unscaled) == pytest.approx(d**-0.5, rel=0.03)
    scaled = pe_lib.random_embeddings(4000, d, seed=0)
    assert np.mean(np.sum(scaled**2, axis=1)) == pytest.approx(d, rel=0.03)


# ---- nearest-neighbour read-outs --------------------------------------------------------------------
@given(seed=st.integers(0, 1000), vocab=st.integers(1, 6), n=st.integers(1, 7),
       d=st.sampled_from([2, 4, 8]), scale=st.sampled_from([0.3, 1.0, 3.0]))
def test_fast_read_outs_agree_with_the_loops(seed, vocab, n, d, scale):
    e = pe_lib.random_embeddings(vocab, d, seed=seed, scale=scale)
    assert pe_lib.nearest_token_accuracy(e, n, base=50.0) == pytest.approx(_nearest_token_loop(e, n, base=50.0))
    for tol in (0, 1):
        assert pe_lib.position_recovery_accuracy(e, n, base=50.0, tolerance=tol) == pytest.approx(
            _position_loop(e, n, tolerance=tol, base=50.0))


def test_far_apart_tokens_are_always_recovered_and_tiny_ones_never_hide_the_position():
    big = 100.0 * np.eye(8)  # orthogonal tokens of norm 100; PE has norm 2 for d = 8
    assert pe_lib.nearest_token_accuracy(big, 20) == 1.0
    tiny = 1e-6 * np.eye(8)
    assert pe_lib.position_recovery_accuracy(tiny, 20) == 1.0
    # tokens that are identical cannot be told apart: argmin picks the first of each tie
    twins = np.vstack([big[0], big[0]])
    assert pe_lib.nearest_token_accuracy(twins, 5) == 0.5


def test_huge_tokens_drown_the_position_and_tolerance_helps():
    e = pe_lib.random_embeddings(30, 16, seed=0, scale=40.0)
    exact = pe_lib.position_recovery_accuracy(e, 32)
    assert exact < 0.5
    assert pe_lib.position_recovery_accuracy(e, 32, tolerance=2) > exact
    assert pe_lib.position_recovery_accuracy(e, 32, tolerance=31) == 1.0


def test_the_sqrt_d_scale_keeps_the_token_readable_and_the_unscaled_init_does_not():
    scaled = pe_lib.random_embeddings(100, 256, seed=0)
    unscaled = pe_lib.random_embeddings(100, 256, seed=0, scale=1.0)
    assert pe_lib.nearest_token_accuracy(scaled, 32) == 1.0
    assert pe_lib.nearest_token_accuracy(unscaled, 32) < 0.5
    assert pe_lib.position_recovery_accuracy(unscaled, 32) == 1.0


@pytest.mark.parametrize("d", [128, 512, 1024])
def test_neighbour_formula_predicts_the_measured_position_accuracy(d):
    measured = pe_lib.position_recovery_accuracy(pe_lib.random_embeddings(400, d, seed=2), 64)
    assert pe_lib.predicted_position_accuracy(d, 64) == pytest.approx(measured, abs=0.02)


def test_predicted_accuracy_limits():
    assert pe_lib.predicted_position_accuracy(64, 1) == 1.0  # a single position cannot be confused
    assert pe_lib.predicted_position_accuracy(64, 50, token_std=1e-3) == pytest.approx(1.0)
    loud = pe_lib.predicted_position_accuracy(64, 50, token_std=1e3)
    assert loud == pytest.approx(1 - 2 * 49 / 50 * 0.5, abs=1e-3)  # each neighbour wins half the time
    assert pe_lib.predicted_position_accuracy(64, 50, token_std=2.0) < pe_lib.predicted_position_accuracy(64, 50)


# ---- cosines ----------------------------------------------------------------------------------------
def test_cosine_matrix_matches_the_definition():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 5)), rng.normal(size=(4, 5))
    c = pe_lib.cosine_matrix(a, b)
    assert c.shape == (3, 4)
    assert c[1, 2] == pytest.approx(a[1] @ b[2] / np.linalg.norm(a[1]) / np.linalg.norm(b[2]))
    np.testing.assert_allclose(np.diag(pe_lib.cosine_matrix(a, a)), 1.0)
    np.testing.assert_allclose(pe_lib.cosine_matrix(a, -a).diagonal(), -1.0)


@pytest.mark.parametrize("dim", [4, 16, 100, 1000])
def test_mean_squared_cosine_is_one_over_dim(dim):
    c = pe_lib.random_cosines(dim, 20_000, seed=1)
    assert c.shape == (20_000,)
    assert np.all(np.abs(c) <= 1.0)
    assert np.mean(c**2) * dim == pytest.approx(1.0, rel=0.05)
    assert abs(np.mean(c)) < 4 / np.sqrt(20_000 * dim)  # mean 0, std of the mean 1/sqrt(n dim)
    np.testing.assert_array_equal(c, pe_lib.random_cosines(dim, 20_000, seed=1))


def test_random_cosines_agree_with_cosine_matrix():
    rng = np.random.default_rng(7)
    x, y = rng.normal(size=(5, 12)), rng.normal(size=(5, 12))
    np.testing.assert_allclose(pe_lib.random_cosines(12, 5, seed=7), np.diag(pe_lib.cosine_matrix(x, y)))


# ---- parameter counts -------------------------------------------------------------------------------
def _count_by_shapes(width, vocab, d_token, n_layers, d_ff, heads, d_k):
    inner = heads * d_k
    linear = lambda m, n: [(m, n), (n,)]  # noqa: E731 - weight and bias
    attention = linear(width, inner) * 3 + linear(inner, width)
    ffn = linear(width, d_ff) + linear(d_ff, width)
    norm = [(width,), (width,)]
    enc = attention + ffn + norm * 2
    dec = attention * 2 + ffn + norm * 3
    shapes = [(vocab, d_token)] + (enc + dec) * n_layers
    if width != d_token:
        shapes.append((width, vocab))
    return sum(int(np.prod(s)) for s in shapes)


@pytest.mark.parametrize(
    ("width", "d_token"), [(512, 512), (1024, 512), (576, 512), (8, 8), (12, 8)]
)
def test_parameter_total_matches_a_count_of_weight_shapes(width, d_token):
    got = pe_lib.transformer_parameters(width, vocab_size=37, d_token=d_token, n_layers=2, d_ff=24,
                                        num_heads=2, d_k=3)
    assert got["total"] == _count_by_shapes(width, 37, d_token, 2, 24, 2, 3)
    assert got["total"] == got["embedding"] + got["encoder"] + got["decoder"] + got["output_projection"]
    assert (got["output_projection"] == 0) == (width == d_token)


def test_output_tying_is_chosen_explicitly():
    # the paper's base model at a fixed width of 512: 448 word and 64 position coordinates
    cat = pe_lib.transformer_parameters(512, vocab_size=37000, d_token=448, tie_output=True)
    add = pe_lib.transformer_parameters(512, vocab_size=37000, d_token=512)
    assert cat["output_projection"] == 0 and cat["embedding"] == 37000 * 448
    assert cat["encoder"] == add["encoder"] and cat["decoder"] == add["decoder"]
    assert add["total"] - cat["total"] == 37000 * 64  # the 64 word coordinates the table no longer has
    untied = pe_lib.transformer_parameters(512, vocab_size=37000, d_token=512, tie_output=False)
    assert untied["output_projection"] == 512 * 37000
    assert untied["total"] == add["total"] + 512 * 37000
    # the default ties exactly when the widths agree
    assert pe_lib.transformer_parameters(512, vocab_size=37000, d_token=448)["output_projection"] == 512 * 37000
    widened = pe_lib.transformer_parameters(576, vocab_size=37000, d_token=512, tie_output=True)
    assert widened["output_projection"] == 0
    assert widened["total"] == _count_by_shapes(576, 37000, 512, 6, 2048, 8, 64) - 576 * 37000


def test_concatenation_costs_more_than_addition():
    add = pe_lib.transformer_parameters(512, vocab_size=37000, d_token=512)
    cat = pe_lib.transformer_parameters(1024, vocab_size=37000, d_token=512)
    assert add["embedding"] == cat["embedding"] == 37000 * 512
    assert cat["encoder"] > 1.5 * add["encoder"]
    assert cat["output_projection"] == 1024 * 37000


# ---- bad arguments ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: pe_lib.random_embeddings(0, 8), "vocab_size must be an integer >= 1, got 0"),
        (lambda: pe_lib.random_embeddings(4, 7), "d_model must be a positive even integer"),
        (lambda: pe_lib.random_embeddings(4, 8, seed=-1), "seed must be an integer >= 0, got -1"),
        (lambda: pe_lib.random_embeddings(4, 8, scale=0.0), r"scale must be positive \(None means sqrt"),
        (lambda: pe_lib.random_embeddings(4, 8, scale=np.nan), "scale must be a finite real number"),
        (lambda: pe_lib.random_embeddings(2**20, 2**10), "exceeds the limit"),
        (lambda: pe_lib.nearest_token_accuracy(np.ones(8), 4), r"2-D array .* got shape \(8,\)"),
        (lambda: pe_lib.nearest_token_accuracy(np.ones((0, 8)), 4), r"at least one row, got shape \(0, 8\)"),
        (lambda: pe_lib.nearest_token_accuracy(np.ones((3, 5)), 4), "the width of embeddings must be a positive even"),
        (lambda: pe_lib.nearest_token_accuracy(np.full((3, 4), np.nan), 4), "embeddings must be finite"),
        (lambda: pe_lib.nearest_token_accuracy(np.ones((3, 4)), 0), "n_positions must be an integer >= 1, got 0"),
        (lambda: pe_lib.position_recovery_accuracy(np.ones((3, 4)), 4, tolerance=-1),
         "tolerance must be an integer >= 0, got -1"),
        (lambda: pe_lib.position_recovery_accuracy(np.ones((3, 4)), 2**15), "exceeds the limit"),
        (lambda: pe_lib.predicted_position_accuracy(64, 10, token_std=0.0), "token_std must be positive, got 0.0"),
        (lambda: pe_lib.predicted_position_accuracy(63, 10), "d_model must be a positive even integer"),
        (lambda: pe_lib.cosine_matrix(np.ones((2, 3)), np.ones((2, 4))), "same number of columns"),
        (lambda: pe_lib.cosine_matrix(np.ones(3), np.ones((2, 3))), "must be 2-D"),
        (lambda: pe_lib.cosine_matrix(np.full((1, 3), np.inf), np.ones((2, 3))), "must be finite"),
        (lambda: pe_lib.cosine_matrix(np.zeros((1, 3)), np.ones((2, 3))), "zero vector is undefined"),
        (lambda: pe_lib.random_cosines(0, 3), "dim must be an integer >= 1, got 0"),
        (lambda: pe_lib.random_cosines(3, 0), "n_pairs must be an integer >= 1, got 0"),
        (lambda: pe_lib.transformer_parameters(256, vocab_size=10, d_token=512),
         r"d_token \(512\) cannot exceed the model width \(256\)"),
        (lambda: pe_lib.transformer_parameters(512, vocab_size=10, d_token=512, n_layers=0),
         "n_layers must be an integer >= 1, got 0"),
        (lambda: pe_lib.score_terms(np.ones((2, 4)), np.ones((3, 4)), np.ones((2, 4)), np.ones((2, 4)),
                                    np.ones((4, 2)), np.ones((4, 2))), "same shape, got e_query"),
        (lambda: pe_lib.score_terms(np.ones((2, 4)), np.ones((2, 4)), np.ones((2, 4)), np.ones((2, 4)),
                                    np.ones((4, 2)), np.ones((4, 3))), r"w_q and w_k must both have shape"),
        (lambda: pe_lib.score_terms(np.ones((2, 4)), np.ones((2, 4)), np.ones((2, 6)), np.ones((2, 6)),
                                    np.ones((4, 2)), np.ones((4, 2))), r"w_q and w_k must both have shape"),
        (lambda: pe_lib.score_terms(np.ones((2, 4)), np.ones((2, 4)), np.ones((2, 4)), np.ones((2, 4)),
                                    np.ones((5, 2)), np.ones((5, 2))), r"d_model = 4"),
        (lambda: pe_lib.score_terms(np.ones(4), np.ones((2, 4)), np.ones((2, 4)), np.ones((2, 4)),
                                    np.ones((4, 2)), np.ones((4, 2))), r"e_query must be 2-D"),
        (lambda: pe_lib.score_terms(np.ones((2, 4)), np.full((2, 4), np.nan), np.ones((2, 4)), np.ones((2, 4)),
                                    np.ones((4, 2)), np.ones((4, 2))), r"pe_query must be finite"),
    ],
)
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_tie_output_must_be_a_bool_or_none():
    with pytest.raises(TypeError, match="tie_output must be True, False or None, got 'yes'"):
        pe_lib.transformer_parameters(512, vocab_size=10, d_token=448, tie_output="yes")


# ---- the four terms of an attention score ----------------------------------------------------------------
def test_score_terms_are_the_four_bilinear_forms_and_add_up_to_the_score():
    rng = np.random.default_rng(3)
    n_q, n_k, d, d_k = 3, 5, 8, 4
    e_q, p_q, e_k, p_k = (rng.normal(size=(n, d)) for n in (n_q, n_q, n_k, n_k))
    w_q, w_k = rng.normal(size=(d, d_k)), rng.normal(size=(d, d_k))
    terms = pe_lib.score_terms(e_q, p_q, e_k, p_k, w_q, w_k)
    assert list(terms) == ["content-content", "content-position", "position-content", "position-position"]
    # each term entry by entry, as a loop over the bilinear form a^T W_Q W_K^T b
    pairs = {"content-content": (e_q, e_k), "content-position": (e_q, p_k),
             "position-content": (p_q, e_k), "position-position": (p_q, p_k)}
    for name, (a, b) in pairs.items():
        assert terms[name].shape == (n_q, n_k)
        for m in range(n_q):
            for n in range(n_k):
                expected = sum(a[m, i] * w_q[i, c] * w_k[j, c] * b[n, j]
                               for i in range(d) for j in range(d) for c in range(d_k))
                assert terms[name][m, n] == pytest.approx(expected, rel=1e-12, abs=1e-12)
    # the sum is the unscaled score of the summed inputs
    full = ((e_q + p_q) @ w_q) @ ((e_k + p_k) @ w_k).T
    np.testing.assert_allclose(sum(terms.values()), full, rtol=1e-12, atol=1e-12)
    # and pe_lib's attention weights are the softmax of that sum divided by sqrt(d_k)
    scores = sum(terms.values()) / np.sqrt(d_k)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    np.testing.assert_allclose(pe_lib.attention_weights((e_q + p_q) @ w_q, (e_k + p_k) @ w_k),
                               weights / weights.sum(axis=1, keepdims=True), rtol=1e-12)


# ---- found by `make mutate` (each kills mutants that the tests above let live) ---------------------
def _params_with(**bad):
    kwargs = {"width": 8, "vocab_size": 100, "d_token": 8, **bad}
    width = kwargs.pop("width")
    return pe_lib.transformer_parameters(width, **kwargs)


@pytest.mark.parametrize("name", ["width", "vocab_size", "d_token", "d_ff", "num_heads", "d_k"])
def test_transformer_parameters_errors_name_the_argument(name):
    with pytest.raises(ValueError, match=rf"^{name} must be an integer >= 1, got 0$"):
        _params_with(**{name: 0})


def test_embedding_errors_name_the_argument():
    e = np.eye(2)
    for call, match in [
        (lambda: pe_lib.nearest_token_accuracy([[0.0, np.nan]], 2),
         r"^embeddings must be finite, got NaN or infinity among them$"),
        (lambda: pe_lib.position_recovery_accuracy(e, 0), r"^n_positions must be an integer >= 1, got 0$"),
        (lambda: pe_lib.predicted_position_accuracy(8, 0), r"^n_positions must be an integer >= 1, got 0$"),
        (lambda: pe_lib.predicted_position_accuracy(8, 4, token_std=np.nan),
         r"^token_std must be a finite real number"),
        (lambda: pe_lib.cosine_matrix([[np.inf, 0.0]], e), r"^a and b must be finite, got NaN or infinity$"),
        (lambda: pe_lib.cosine_matrix(e, [[0.0, 0.0]]),
         r"^the cosine of a zero vector is undefined; remove the zero rows$"),
        (lambda: pe_lib.random_cosines(4, 2, seed=-1), r"^seed must be an integer >= 0, got -1$"),
    ]:
        with pytest.raises(ValueError, match=match):
            call()


@pytest.mark.parametrize("bad", ["pe_query", "e_key", "pe_key", "w_q", "w_k"])
def test_score_terms_need_two_dimensional_arguments(bad):
    args = {"e_query": np.eye(2), "pe_query": np.eye(2), "e_key": np.eye(2), "pe_key": np.eye(2),
            "w_q": np.eye(2), "w_k": np.eye(2)}
    args[bad] = np.ones(2)  # 1-D
    with pytest.raises(ValueError, match=rf"^{bad} must be 2-D, got shape \(2,\)$"):
        pe_lib.score_terms(**args)


def test_table_size_limits_name_the_table_and_its_size(monkeypatch):
    # a limit of 100 values (instead of 2**28) shows which size each function checks, without big arrays
    monkeypatch.setattr(pe_lib._validate, "MAX_TABLE_ELEMENTS", 100)
    e4 = np.eye(4, 2)  # V = 4 tokens of width 2
    for call, match in [
        (lambda: pe_lib.random_embeddings(26, 4), r"^a embedding table of 26 x 4 = 104 values exceeds"),
        (lambda: pe_lib.nearest_token_accuracy(e4, 7), r"^a distance table of 28 x 4 = 112 values"),  # (V n, V)
        (lambda: pe_lib.position_recovery_accuracy(e4, 6), r"^a distance table of 24 x 6 = 144 values"),  # (V n, n)
        (lambda: pe_lib.random_cosines(2, 26), r"^a sample of 52 x 2 = 104 values"),  # 2 n_pairs vectors
        (lambda: pe_lib.score_terms(np.ones((11, 2)), np.ones((11, 2)), np.ones((10, 2)), np.ones((10, 2)),
                                    np.eye(2), np.eye(2)), r"^a score matrix of 11 x 10 = 110 values"),
    ]:
        with pytest.raises(ValueError, match=match):
            call()
    # just under the limits: these must run
    assert pe_lib.random_cosines(2, 25).shape == (25,)
    assert 0.0 <= pe_lib.nearest_token_accuracy(e4, 6) <= 1.0


def test_defaults_are_used(monkeypatch):
    # mutmut's trampolines keep the original signature: compare default calls with explicit ones
    np.testing.assert_array_equal(pe_lib.random_embeddings(3, 4), pe_lib.random_embeddings(3, 4, seed=0))
    np.testing.assert_array_equal(pe_lib.random_cosines(4, 3), pe_lib.random_cosines(4, 3, seed=0))
    assert pe_lib.random_cosines(4, 3, seed=0).shape == (3,)  # seed 0 is allowed
    import pe_lib.analysis.embedding as embedding

    bases = []
    real = embedding.sinusoidal

    def spy(n, d, *, base):
        bases.append(base)
        return real(n, d, base=base)

    monkeypatch.setattr(embedding, "sinusoidal", spy)
    pe_lib.nearest_token_accuracy(np.eye(2), 3)
    pe_lib.position_recovery_accuracy(np.eye(2), 3)
    assert bases == [10_000.0, 10_000.0]


def _predicted_by_hand(d, n, base, sigma):
    # delta^2 = sum_k 4 sin^2(omega_k / 2); accuracy 1 - 2 (n - 1) / n * Phi(-delta / (2 sigma))
    omega = base ** (-np.arange(0, d, 2) / d)
    delta = np.sqrt(np.sum(4 * np.sin(omega / 2) ** 2))
    return 1 - 2 * (n - 1) / n * 0.5 * float(mpmath.erfc(delta / (2 * sigma) / mpmath.sqrt(2)))


def test_predicted_position_accuracy_by_hand():
    # d = 2: delta^2 = 4 sin^2(1/2) = 0.919 < 1 (must not be clipped); base 100 and the default 10000
    assert pe_lib.predicted_position_accuracy(2, 5) == pytest.approx(_predicted_by_hand(2, 5, 1e4, 1.0), rel=1e-12)
    assert pe_lib.predicted_position_accuracy(8, 5, base=100.0, token_std=0.3) == pytest.approx(
        _predicted_by_hand(8, 5, 100.0, 0.3), rel=1e-12)
    assert pe_lib.predicted_position_accuracy(8, 5, token_std=0.3) == pytest.approx(
        _predicted_by_hand(8, 5, 1e4, 0.3), rel=1e-12)


def test_read_outs_compute_in_float64():
    # int8 tokens 16 e_v: 16^2 wraps to 0 in int8; far apart (distance 22.6) against |PE| = 1, so every
    # pair keeps its token
    tokens = np.array([[16, 0], [0, 16]], dtype=np.int8)
    assert pe_lib.nearest_token_accuracy(tokens, 5) == 1.0
    # float32 rows: float32 norms of (1, 1, 1) and (1, 1, 0) are off by about 1e-8
    a32 = np.array([[1.0, 1.0, 1.0]], dtype=np.float32)
    b32 = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]], dtype=np.float32)
    expected = [[1 / np.sqrt(3), np.sqrt(2 / 3)]]
    np.testing.assert_allclose(pe_lib.cosine_matrix(a32, b32.astype(np.float64)), expected, rtol=1e-14)
    np.testing.assert_allclose(pe_lib.cosine_matrix(a32.astype(np.float64), b32), expected, rtol=1e-14)


def test_cosines_are_clipped_to_plus_minus_one():
    # this row's a.a / |a|^2 rounds to 1 + 2^-52: the cosine must still be exactly 1 (and -1 for -a)
    a = np.array([[0.1257302210933933, -0.1321048632913019, 0.6404226504432821, 0.10490011715303971,
                   -0.535669373161111]])
    assert (a @ a.T)[0, 0] / np.linalg.norm(a) ** 2 > 1.0
    np.testing.assert_array_equal(pe_lib.cosine_matrix(a, np.vstack([a, -a])), [[1.0, -1.0]])
    unit = [[1.0, 0.0, 0.0, 0.0, 0.0]]  # a unit row in b is fine
    np.testing.assert_allclose(pe_lib.cosine_matrix(a, unit), [[a[0, 0] / np.linalg.norm(a)]], rtol=1e-15)


def test_a_token_table_one_wider_than_the_model_is_refused():
    # d_token may equal the width (adding the encoding), not exceed it by even one (planted: d_token > width + 1)
    assert pe_lib.transformer_parameters(8, vocab_size=5, d_token=8)["embedding"] == 40
    with pytest.raises(ValueError, match=r"d_token \(9\) cannot exceed the model width \(8\)"):
        pe_lib.transformer_parameters(8, vocab_size=5, d_token=9)
