"""Rotary position embedding: a rotation per pair, scores depend on n - m only, two layouts."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import bases, d_models, offsets, positions

import pe_lib


def _rng_vectors(seed, shape):
    return np.random.default_rng(seed).normal(size=shape)


def _meta_style(x, pos, base=10_000.0):
    """Reference: Meta LLaMA's view of pairs (2i, 2i+1) as complex numbers times e^{i pos omega}."""
    d = x.shape[-1]
    z = x[..., 0::2] + 1j * x[..., 1::2]
    z = z * np.exp(1j * np.outer(pos, pe_lib.frequencies(d, base=base)))
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out


def _hf_style(x, pos, base=10_000.0):
    """Reference: Hugging Face's x * cos + rotate_half(x) * sin with cos, sin repeated over both halves."""
    d = x.shape[-1]
    theta = np.outer(pos, pe_lib.frequencies(d, base=base))
    cos, sin = np.concatenate([np.cos(theta)] * 2, axis=-1), np.concatenate([np.sin(theta)] * 2, axis=-1)
    rotate_half = np.concatenate([-x[..., d // 2 :], x[..., : d // 2]], axis=-1)
    return x * cos + rotate_half * sin


@given(d=d_models, seed=st.integers(0, 1000), base=bases)
def test_interleaved_matches_complex_multiplication(d, seed, base):
    x = _rng_vectors(seed, (2, 5, d))
    pos = np.array([0.0, 1.0, 7.0, 100.0, -3.5])
    np.testing.assert_allclose(pe_lib.rope(x, pos, base=base), _meta_style(x, pos, base), atol=1e-12)


@given(d=d_models, seed=st.integers(0, 1000), base=bases)
def test_split_matches_rotate_half(d, seed, base):
    x = _rng_vectors(seed, (5, d))
    pos = np.array([0.0, 2.0, 9.0, 512.0, -1.0])
    np.testing.assert_allclose(pe_lib.rope(x, pos, base=base, layout="split"), _hf_style(x, pos, base), atol=1e-12)


@given(d=d_models, seed=st.integers(0, 1000), m=positions, n=positions)
def test_score_depends_only_on_relative_position(d, seed, m, n):
    q, k = _rng_vectors(seed, (2, 1, d))
    for layout in ("interleaved", "split"):
        score = np.sum(pe_lib.rope(q, [m], layout=layout) * pe_lib.rope(k, [n], layout=layout))
        relative = np.sum(q * pe_lib.rope(k, [n - m], layout=layout))  # q^T R(n - m) k
        scale = np.linalg.norm(q) * np.linalg.norm(k)
        assert abs(score - relative) <= 1e-11 * scale * (1 + abs(m) + abs(n))


@given(d=d_models, p=positions, seed=st.integers(0, 1000))
def test_rope_is_the_transpose_of_the_shift_matrix(d, p, seed):
    # R(p) = M(p)^T = M(-p): RoPE turns pairs the other way round from the (sin, cos) shift map
    x = _rng_vectors(seed, (1, d))
    expected = x @ pe_lib.shift_matrix(p, d)
    np.testing.assert_allclose(pe_lib.rope(x, [p]), expected, atol=1e-12 * (1 + abs(p)))
    np.testing.assert_allclose(pe_lib.rope(x, [p]), x @ pe_lib.shift_matrix(-p, d).T, atol=1e-12 * (1 + abs(p)))


@given(d=d_models, seed=st.integers(0, 1000), p=positions)
def test_layouts_differ_by_a_fixed_permutation(d, seed, p):
    x = _rng_vectors(seed, (3, d))
    perm = pe_lib.layout_permutation(d)
    pos = [p, p + 1.0, 0.0]
    np.testing.assert_allclose(pe_lib.rope(x[:, perm], pos, layout="split"), pe_lib.rope(x, pos)[:, perm], atol=1e-12)


def test_permutation_is_the_hf_weight_permutation():
    # convert_llama_weights_to_hf.py: rows of one head viewed as (d/2, 2), transposed to (2, d/2)
    d = 8
    perm = pe_lib.layout_permutation(d)
    np.testing.assert_array_equal(perm, np.arange(d).reshape(d // 2, 2).T.ravel())
    np.testing.assert_array_equal(perm, [0, 2, 4, 6, 1, 3, 5, 7])
    np.testing.assert_array_equal(np.sort(perm), np.arange(d))


@given(d=d_models, seed=st.integers(0, 1000), a=offsets, b=offsets)
def test_rotations_compose_and_preserve_norm(d, seed, a, b):
    x = _rng_vectors(seed, (2, d))
    for layout in ("interleaved", "split"):
        once = pe_lib.rope(pe_lib.rope(x, [a, b], layout=layout), [b, a], layout=layout)
        np.testing.assert_allclose(once, pe_lib.rope(x, [a + b, a + b], layout=layout), atol=1e-11)
        np.testing.assert_allclose(np.linalg.norm(pe_lib.rope(x, [a, b], layout=layout), axis=-1),
                                   np.linalg.norm(x, axis=-1), rtol=1e-12)


def test_position_zero_is_the_identity_and_int_positions_count():
    x = _rng_vectors(0, (4, 3, 6))
    np.testing.assert_array_equal(pe_lib.rope(x, [0.0, 0.0, 0.0]), x)
    np.testing.assert_array_equal(pe_lib.rope(x, 3), pe_lib.rope(x, [0, 1, 2]))
    # hand-computed: d=2, position 1 turns (1, 0) by one radian
    np.testing.assert_allclose(pe_lib.rope([[1.0, 0.0]], [1]), [[np.cos(1.0), np.sin(1.0)]])


def test_decay_bound_at_zero_and_bounds_scores():
    d = 16
    # at offset 0 every partial sum S_j = j, so the mean is (d/2 + 1) / 2
    assert pe_lib.rope_decay_bound([0.0], d)[0] == pytest.approx((d / 2 + 1) / 2)
    rng = np.random.default_rng(3)
    deltas = np.arange(-300, 301)
    bound_mean = pe_lib.rope_decay_bound(deltas, d)
    np.testing.assert_allclose(bound_mean, pe_lib.rope_decay_bound(-deltas, d))  # even in the offset
    for _ in range(20):
        q, k = rng.normal(size=(2, 1, d))
        h = (q[0, 0::2] + 1j * q[0, 1::2]) * np.conj(k[0, 0::2] + 1j * k[0, 1::2])
        step = np.max(np.abs(np.diff(np.append(h, 0.0))))  # max |h_{i+1} - h_i| with h_{d/2} = 0
        scores = np.array([np.sum(pe_lib.rope(q, [m]) * k) for m in deltas])  # query at m, key at 0
        assert np.all(np.abs(scores) <= step * bound_mean * (d / 2) + 1e-9)


def _decay_mean_by_hand(delta, d, base):
    """(1 / (d/2)) sum_j |sum_{i<j} exp(i delta base^(-2i/d))|, term by term with cmath."""
    import cmath

    partial, total = 0j, 0.0
    for i in range(d // 2):
        partial += cmath.exp(1j * delta * base ** (-2 * i / d))
        total += abs(partial)
    return total / (d // 2)


@pytest.mark.parametrize(("d", "base"), [(8, 10_000.0), (16, 500.0), (12, 1e6), (64, 2.0)])
def test_decay_bound_matches_the_formula_for_any_base(d, base):
    deltas = np.array([0.0, 1.0, 3.0, 17.5, 250.0, -40.0])
    expected = [_decay_mean_by_hand(t, d, base) for t in deltas]
    np.testing.assert_allclose(pe_lib.rope_decay_bound(deltas, d, base=base), expected, rtol=1e-12)
    # the base matters: 500 and 10000 give different partial sums away from offset 0
    if base != 10_000.0:
        assert np.abs(pe_lib.rope_decay_bound(deltas[1:], d, base=base)
                      - pe_lib.rope_decay_bound(deltas[1:], d)).max() > 1e-3


def _score_bound_by_hand(q, k, delta, base):
    """max_i |h_{i+1} - h_i| * sum_j |S_j(delta)| for one interleaved pair of vectors."""
    d = len(q)
    h = [complex(q[2 * i], q[2 * i + 1]) * complex(k[2 * i], k[2 * i + 1]).conjugate() for i in range(d // 2)]
    step = max(abs(b - a) for a, b in zip(h, [*h[1:], 0j], strict=True))
    return step * (d // 2) * _decay_mean_by_hand(delta, d, base)


@pytest.mark.parametrize("base", [10_000.0, 300.0])
def test_score_bound_matches_the_formula_and_bounds_every_score(base):
    rng = np.random.default_rng(5)
    d = 16
    q, k = rng.normal(size=(2, 40, d))
    deltas = np.array([0.0, 1.0, 2.0, 9.0, 60.0, 1000.0, -7.0])
    bound = pe_lib.rope_score_bound(q, k, deltas, base=base)
    assert bound.shape == (40, deltas.size)
    for row in (0, 17, 39):
        np.testing.assert_allclose(bound[row], [_score_bound_by_hand(q[row], k[row], t, base) for t in deltas],
                                   rtol=1e-12)
    for layout in ("interleaved", "split"):
        b = pe_lib.rope_score_bound(q, k, deltas, base=base, layout=layout)
        # query at position delta, key at 0: the score is <R_delta q, k>
        scores = np.stack([np.sum(pe_lib.rope(q, np.full(40, t), base=base, layout=layout) * k, axis=1)
                           for t in deltas], axis=1)
        assert np.all(np.abs(scores) <= b * (1 + 1e-12))
    # the split layout pairs (i, i + d/2): the same bound as the interleaved one on permuted vectors
    perm = pe_lib.layout_permutation(d)
    np.testing.assert_allclose(pe_lib.rope_score_bound(q[:, perm], k[:, perm], deltas, base=base, layout="split"),
                               bound, rtol=1e-12)


def test_score_bound_by_hand_for_all_ones():
    # q = k = (1, ..., 1): every h_i = (1 + i)(1 - i) = 2, so every step is 0 except the last,
    # |h_{d/2} - h_{d/2-1}| = |0 - 2| = 2. At offset 0, S_j = j and the bound is 2 * (1 + 2 + 3 + 4) = 20
    # for d = 8, against the score |q|^2 = 8.
    ones = np.ones(8)
    assert pe_lib.rope_score_bound(ones, ones, [0.0])[0] == pytest.approx(20.0)
    assert np.sum(pe_lib.rope(ones[None], [0.0]) * ones) == pytest.approx(8.0)


def test_score_bound_broadcasts_and_validates():
    q = np.ones(8)
    k = np.ones((3, 8))
    assert pe_lib.rope_score_bound(q, k, 5).shape == (3, 5)
    with pytest.raises(ValueError, match=r"q and k must have the same last axis .* got 8 and 6"):
        pe_lib.rope_score_bound(q, np.ones(6), 5)
    with pytest.raises(ValueError, match=r"the last axis of q and k \(the head dimension d\) must be a positive even"):
        pe_lib.rope_score_bound(np.ones(7), np.ones(7), 5)
    with pytest.raises(ValueError, match=r"layout must be one of 'interleaved', 'split', got 'neox'"):
        pe_lib.rope_score_bound(q, q, 5, layout="neox")
    with pytest.raises(ValueError, match=r"k must be finite"):
        pe_lib.rope_score_bound(q, np.full(8, np.nan), 5)


def test_all_ones_score_is_twice_the_sinusoidal_dot_profile():
    d = 64
    ones = np.ones((1, d))
    deltas = np.arange(0, 200)
    scores = np.array([np.sum(pe_lib.rope(ones, [float(t)]) * ones) for t in deltas])
    np.testing.assert_allclose(scores, 2 * pe_lib.dot_profile(deltas, d), atol=1e-10)


@pytest.mark.parametrize(
    ("x", "positions", "kwargs", "match"),
    [
        (np.ones(4), [0], {}, r"x must have shape \(\.\.\., n, d\), got shape \(4,\)"),
        (np.ones((2, 3)), [0, 1], {}, r"the last axis of x \(the head dimension d\) must be a positive even"),
        (np.ones((2, 4)), [0, 1, 2], {}, r"one position per row of x: x has 2 rows .* got 3 positions"),
        (np.ones((2, 4)), [0, 1], {"layout": "neox"}, r"layout must be one of 'interleaved', 'split', got 'neox'"),
        (np.full((1, 4), np.nan), [0], {}, r"x must be finite"),
        ([[1.0, 2.0], [3.0]], [0, 1], {}, r"x must be a rectangular array of real numbers"),
        (np.ones((1, 4)), [np.inf], {}, r"positions must all be finite"),
        (np.ones((1, 4)), [0], {"base": 1.0}, r"base must be a finite number greater than 1"),
    ],
)
def test_rope_validation(x, positions, kwargs, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.rope(x, positions, **kwargs)


@pytest.mark.parametrize(
    ("x", "match"),
    [
        ([["a", "b"]], r"x must hold real numbers, got an array of dtype <U1"),
        (np.ones((1, 2), dtype=complex), r"x must hold real numbers, got an array of dtype complex128"),
    ],
)
def test_rope_refuses_non_real_data_with_a_type_error(x, match):
    with pytest.raises(TypeError, match=match):
        pe_lib.rope(x, [0])


def test_bound_validation():
    with pytest.raises(ValueError, match=r"d must be a positive even integer"):
        pe_lib.rope_decay_bound(4, 7)
    with pytest.raises(ValueError, match=r"offsets must all be finite"):
        pe_lib.rope_decay_bound([np.nan], 8)


def test_score_bound_default_base_and_shape_errors_in_full():
    # q = k = e_0 (d = 4): g = (1, 0), max_k |g_{k+1} - g_k| = 1 with g_2 = 0, so the bound is
    # 1 * (d/2) * rope_decay_bound at the paper's base 10000
    e0 = np.array([1.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(pe_lib.rope_score_bound(e0, e0, 5),
                               2 * pe_lib.rope_decay_bound(5, 4, base=10_000.0), rtol=1e-15)
    for call, message in [
        (lambda: pe_lib.rope_score_bound(np.float64(1.0), np.ones(4), 3), "q must have shape (..., d), got shape ()"),
        (lambda: pe_lib.rope_score_bound(np.ones(4), np.float64(1.0), 3), "k must have shape (..., d), got shape ()"),
        (lambda: pe_lib.rope(np.ones(4), 3), "x must have shape (..., n, d), got shape (4,)"),
    ]:
        with pytest.raises(ValueError) as error:
            call()
        assert str(error.value) == message
