"""Reference values for every formula in pe_lib's core modules, computed independently of pe_lib.

Each expected value here is worked out by hand (the arithmetic is in the comments) or recomputed with
the scalar ``math`` module in plain loops, never with the function under test, and with non-default
arguments (``base``, ``scale``, ``convention``, ``causal=False``, ...) so that an argument that is
ignored shows. Boundaries are tested on both sides. These tests were written against single-line bugs
planted in pe_lib that the property tests alone did not catch: attention without 1/sqrt(d_k), keys
computed with W_Q, ``offset_attention`` ignoring ``causal=False``, ``rope_decay_bound`` ignoring
``base``, an off-by-one at the chunk boundary in relative.py and the table-size limit of _validate.py.
"""

from __future__ import annotations

import cmath
import math

import numpy as np
import pytest

import pe_lib
import pe_lib.analysis.relative as relative
from pe_lib import _validate

# ---- references in plain Python ------------------------------------------------------------------


def omega_ref(d, base=10_000.0, convention="paper"):
    """omega_k = base^(-2k/d) (paper) or base^(-k/(d/2-1)) (tensor2tensor), from math.pow."""
    h = d // 2
    if convention == "paper":
        return [math.pow(base, -2.0 * k / d) for k in range(h)]
    return [math.pow(base, -k / (h - 1)) for k in range(h)]


def pe_ref(pos, d, base=10_000.0, convention="paper", layout="interleaved"):
    """One row of the table, entry by entry."""
    om = omega_ref(d, base, convention)
    sin, cos = [math.sin(pos * w) for w in om], [math.cos(pos * w) for w in om]
    if layout == "split":
        return sin + cos
    return [v for pair in zip(sin, cos, strict=True) for v in pair]


def softmax_ref(row):
    top = max(row)
    e = [0.0 if s == -math.inf else math.exp(s - top) for s in row]
    return [v / sum(e) for v in e]


def matmul_ref(a, b):
    return [[sum(a[i][t] * b[t][j] for t in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]


def attention_ref(q, k, bias=None, causal=False):
    """softmax(q k^T / sqrt(d_k) + bias), masked, row by row."""
    d_k = len(q[0])
    rows = []
    for i, qi in enumerate(q):
        scores = []
        for j, kj in enumerate(k):
            s = sum(a * b for a, b in zip(qi, kj, strict=True)) / math.sqrt(d_k)
            s += 0.0 if bias is None else bias[i][j]
            scores.append(-math.inf if causal and j > i else s)
        rows.append(softmax_ref(scores))
    return rows


def profile_ref(delta, d, base=10_000.0, convention="paper"):
    return sum(math.cos(w * delta) for w in omega_ref(d, base, convention))


# ---- attention.py -------------------------------------------------------------------------------


def test_softmax_hand_values():
    # softmax(0, ln 2, ln 5) = (1, 2, 5) / 8
    np.testing.assert_allclose(pe_lib.softmax([0.0, math.log(2), math.log(5)]), [1 / 8, 2 / 8, 5 / 8], rtol=1e-15)
    # along axis 0: each column separately; a -inf entry gets weight exactly 0
    s = np.array([[0.0, 0.0], [math.log(3), -np.inf]])
    np.testing.assert_allclose(pe_lib.softmax(s, axis=0), [[1 / 4, 1.0], [3 / 4, 0.0]], rtol=1e-15)
    np.testing.assert_allclose(pe_lib.softmax(s, axis=-1), [[1 / 2, 1 / 2], [1.0, 0.0]], rtol=1e-15)


def test_causal_mask_hand_values():
    expected = [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]
    np.testing.assert_array_equal(pe_lib.causal_mask(4), np.array(expected, dtype=bool))
    np.testing.assert_array_equal(pe_lib.causal_mask(1), [[True]])


def test_attention_divides_the_scores_by_sqrt_dk():
    # d_k = 4: q . k_j = (2, 0, -2), divided by sqrt(4) = 2 -> scores (1, 0, -1)
    q = [[2.0, 0.0, 0.0, 0.0]]
    k = [[1.0, 0.0, 0.0, 0.0], [0.0, 5.0, 0.0, 0.0], [-1.0, 0.0, 0.0, 0.0]]
    e = [math.e, 1.0, 1 / math.e]
    np.testing.assert_allclose(pe_lib.attention_weights(q, k), [[v / sum(e) for v in e]], rtol=1e-14)
    # d_k = 9: q . k = (3, 0), divided by 3 -> scores (1, 0): weights e/(e+1), 1/(e+1)
    q9, k9 = np.zeros((1, 9)), np.zeros((2, 9))
    q9[0, 0], k9[0, 0] = 3.0, 1.0
    np.testing.assert_allclose(pe_lib.attention_weights(q9, k9), [[math.e / (math.e + 1), 1 / (math.e + 1)]])


def test_attention_bias_and_causal_mask_hand_values():
    # equal scores: the bias alone decides; bias (ln 3, 0) -> weights (3/4, 1/4)
    q, k = np.zeros((2, 3)), np.zeros((2, 3))
    w = pe_lib.attention_weights(q, k, bias=[[math.log(3), 0.0], [0.0, math.log(3)]])
    np.testing.assert_allclose(w, [[3 / 4, 1 / 4], [1 / 4, 3 / 4]], rtol=1e-15)
    # causal: row i spreads evenly over keys 0..i
    w = pe_lib.attention_weights(np.zeros((3, 2)), np.zeros((3, 2)), causal=True)
    np.testing.assert_allclose(w, [[1, 0, 0], [1 / 2, 1 / 2, 0], [1 / 3, 1 / 3, 1 / 3]], rtol=1e-15)
    # causal=False (the default) lets row 0 see every key
    np.testing.assert_allclose(pe_lib.attention_weights(np.zeros((3, 2)), np.zeros((3, 2)))[0], [1 / 3] * 3)


def test_attention_matches_a_loop_reference_with_bias_and_mask():
    rng = np.random.default_rng(7)
    q, k, bias = rng.normal(size=(5, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 5))
    for causal in (False, True):
        got = pe_lib.attention_weights(q, k, bias=bias, causal=causal)
        np.testing.assert_allclose(got, attention_ref(q.tolist(), k.tolist(), bias.tolist(), causal), rtol=1e-13)
    heads = rng.normal(size=(2, 5, 4))  # one bias per head, 4 keys
    k4 = rng.normal(size=(4, 3))
    got = pe_lib.attention_weights(q, k4, bias=heads)
    for h in range(2):
        np.testing.assert_allclose(got[h], attention_ref(q.tolist(), k4.tolist(), heads[h].tolist()), rtol=1e-13)


def test_self_attention_uses_each_projection_for_its_role():
    # hand-computed: x = I (2 tokens, width 2). Q = W_Q, K = W_K, V = W_V.
    x = np.eye(2)
    w_q = np.array([[2.0, 0.0], [0.0, 0.0]])  # token 0 queries along axis 0 with length 2
    w_k = np.array([[0.0, 0.0], [math.sqrt(2) * math.log(3), 0.0]])  # only token 1's key points along axis 0
    w_v = np.array([[1.0, 0.0], [0.0, 10.0]])
    # scores of token 0: (q0 . k0, q0 . k1) / sqrt(2) = (0, 2 sqrt(2) ln 3) / sqrt(2) = (0, 2 ln 3): weights (1, 9)/10
    # token 1 has a zero query: weights (1/2, 1/2). Output = weights @ V.
    out = pe_lib.self_attention(x, w_q, w_k, w_v)
    np.testing.assert_allclose(out, [[0.1, 9.0], [0.5, 5.0]], rtol=1e-14)
    # keys made with W_Q, or values with W_K, would give other numbers:
    assert not np.allclose(pe_lib.self_attention(x, w_q, w_q, w_v), out)


def test_self_attention_matches_a_loop_reference():
    rng = np.random.default_rng(11)
    x = rng.normal(size=(4, 6))
    w_q, w_k, w_v = rng.normal(size=(6, 3)), rng.normal(size=(6, 3)), rng.normal(size=(6, 5))
    xl = x.tolist()
    for causal in (False, True):
        weights = attention_ref(matmul_ref(xl, w_q.tolist()), matmul_ref(xl, w_k.tolist()), causal=causal)
        expected = matmul_ref(weights, matmul_ref(xl, w_v.tolist()))
        np.testing.assert_allclose(pe_lib.self_attention(x, w_q, w_k, w_v, causal=causal), expected, rtol=1e-12)


# ---- frequencies.py, sinusoidal.py, similarity.py, shift.py ------------------------------------------


def test_frequencies_hand_values():
    np.testing.assert_allclose(pe_lib.frequencies(4, base=100), [1.0, 0.1], rtol=1e-15)  # 100^(-2k/4)
    np.testing.assert_allclose(pe_lib.frequencies(8, base=16), [1.0, 0.5, 0.25, 0.125], rtol=1e-15)  # 16^(-k/4)
    np.testing.assert_allclose(pe_lib.frequencies(6, base=100, convention="tensor2tensor"), [1.0, 0.1, 0.01],
                               rtol=1e-15)  # 100^(-k/2)
    # exp(-x ln 10000) with x ln 10000 up to 9.17: the product's last-bit rounding alone moves the result by
    # up to 9.17 * 2^-53 = 1.0e-15 relative, and numpy's vectorized exp (AVX2 or AVX-512, by processor) adds
    # its own ulps; measured 1.05e-15 on an AMD EPYC. 4e-15 still fails on any wrong exponent (>= 1e-3).
    np.testing.assert_allclose(pe_lib.frequencies(512)[[0, 1, 255]],
                               [1.0, 10_000 ** (-2 / 512), 10_000 ** (-510 / 512)], rtol=4e-15)
    np.testing.assert_allclose(pe_lib.wavelengths(4, base=100), [2 * math.pi, 20 * math.pi], rtol=1e-15)
    np.testing.assert_allclose(pe_lib.wavelengths(6, base=100, convention="tensor2tensor"),
                               [2 * math.pi, 20 * math.pi, 200 * math.pi], rtol=1e-15)


def test_sinusoidal_hand_values():
    # d = 4, base 100: omega = (1, 0.1); at position 3 the angles are 3 and 0.3
    row = [math.sin(3), math.cos(3), math.sin(0.3), math.cos(0.3)]
    np.testing.assert_allclose(pe_lib.sinusoidal([3], 4, base=100)[0], row, rtol=0, atol=2e-16)
    np.testing.assert_allclose(pe_lib.sinusoidal([3], 4, base=100, layout="split")[0],
                               [row[0], row[2], row[1], row[3]], rtol=0, atol=2e-16)
    # tensor2tensor, d = 6, base 100: omega = (1, 0.1, 0.01); position -2.5
    angles = [-2.5, -0.25, -0.025]
    expected = [f(a) for a in angles for f in (math.sin, math.cos)]
    np.testing.assert_allclose(pe_lib.sinusoidal([-2.5], 6, base=100, convention="tensor2tensor")[0], expected,
                               rtol=0, atol=2e-16)
    np.testing.assert_allclose(pe_lib.sinusoidal_loop([3], 4, base=100)[0], row, rtol=0, atol=2e-16)
    np.testing.assert_allclose(pe_lib.sinusoidal_loop([-2.5], 6, base=100, convention="tensor2tensor",
                                                      layout="split")[0], expected[0::2] + expected[1::2], atol=2e-16)


@pytest.mark.parametrize(
    ("positions", "d", "kwargs"),
    [
        (np.arange(100), 8, {"base": 50.0}),  # the rotation path (>= 64 evenly spaced integers)
        (np.arange(1000, 1300, 3), 6, {"base": 123.0, "convention": "tensor2tensor", "layout": "split"}),
        (-7 + 5 * np.arange(70), 10, {"layout": "split"}),
        (np.arange(63), 4, {"base": 2.0}),  # one short of the rotation path: the direct formula
        (np.linspace(-3, 3, 13), 6, {"base": 1e6}),
    ],
)
def test_sinusoidal_matches_the_formula_entry_by_entry(positions, d, kwargs):
    expected = [pe_ref(float(p), d, **kwargs) for p in positions]
    atol = 1e-15 + 4e-16 * float(np.abs(positions).max())
    np.testing.assert_allclose(pe_lib.sinusoidal(positions, d, **kwargs), expected, rtol=0, atol=atol)


def test_low_precision_tables_compute_the_angle_in_that_precision():
    # float32: the angle is the float32 product of float32(pos) and float32(omega)
    omega = np.float32(100.0 ** -0.5)  # base 100, d = 4, pair 1
    pos = np.float32(1234567.0)
    got = pe_lib.sinusoidal([1234567.0], 4, base=100, dtype=np.float32)[0]
    assert got.dtype == np.float32
    assert got[2] == np.sin(pos * omega, dtype=np.float32) and got[0] == np.sin(pos, dtype=np.float32)
    assert abs(float(got[2]) - math.sin(1234567.0 * 0.1)) > 1e-5  # float32 loses digits here


def test_dot_profile_hand_values():
    # d = 4, base 100: f(D) = cos D + cos(D / 10)
    for delta in (0.0, 1.0, 2.5, -7.0, 31.0):
        assert pe_lib.dot_profile([delta], 4, base=100)[0] == pytest.approx(math.cos(delta) + math.cos(delta / 10),
                                                                             abs=1e-15)
    # tensor2tensor, d = 6, base 100: f(D) = cos D + cos(D/10) + cos(D/100)
    got = pe_lib.dot_profile([5.0], 6, base=100, convention="tensor2tensor")[0]
    assert got == pytest.approx(math.cos(5) + math.cos(0.5) + math.cos(0.05), abs=1e-15)
    np.testing.assert_allclose(pe_lib.dot_profile(5, 16, base=30.0), [profile_ref(t, 16, 30.0) for t in range(5)],
                               atol=1e-14)


def test_shift_matrix_hand_values():
    # d = 4, base 100, phi = 2: blocks rotate by 2 and 0.2
    c0, s0, c1, s1 = math.cos(2), math.sin(2), math.cos(0.2), math.sin(0.2)
    expected = [[c0, s0, 0, 0], [-s0, c0, 0, 0], [0, 0, c1, s1], [0, 0, -s1, c1]]
    np.testing.assert_allclose(pe_lib.shift_matrix(2.0, 4, base=100), expected, rtol=0, atol=2e-16)


def test_apply_shift_hand_values():
    # d = 4, base 100, phi = pi/2: pair 0 turns by pi/2, pair 1 by pi/20
    # (a, b) -> (a cos t + b sin t, -a sin t + b cos t)
    t = math.pi / 20
    got = pe_lib.apply_shift([[1.0, 0.0, 0.0, 1.0], [0.0, 2.0, 3.0, 0.0]], math.pi / 2, base=100)
    expected = [[0.0, -1.0, math.sin(t), math.cos(t)], [2.0, 0.0, 3 * math.cos(t), -3 * math.sin(t)]]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-15)
    # and it maps PE(p) to PE(p + phi) for that base
    np.testing.assert_allclose(pe_lib.apply_shift(pe_ref(4.0, 6, 50.0), 3.0, base=50.0), pe_ref(7.0, 6, 50.0),
                               atol=1e-15)


# ---- relative.py --------------------------------------------------------------------------------


def first_ref(d, stop, base, test):
    """Smallest 1 <= D <= stop with test(f(D - 1), f(D)), from the math-module profile."""
    f = [profile_ref(t, d, base) for t in range(stop + 1)]
    return next((t for t in range(1, stop + 1) if test(f[t - 1], f[t])), None)


def rises(before, now):
    return now > before


def negative(_, now):
    return now < 0


def test_first_rise_and_first_negative_hand_values():
    # d = 2: f(D) = cos D, which falls until pi and rises after: cos 4 > cos 3, and cos 2 < 0 < cos 1
    assert pe_lib.first_rise(2) == 4 and pe_lib.first_negative(2) == 2
    assert first_ref(2, 10, 10_000.0, rises) == 4 and first_ref(2, 10, 10_000.0, negative) == 2


@pytest.mark.parametrize(("d", "base"), [(2, 10_000.0), (16, 10_000.0), (16, 30.0), (64, 200.0)])
def test_scans_stop_exactly_at_max_offset_and_across_chunks(monkeypatch, d, base):
    for name, test in (("first_rise", rises), ("first_negative", negative)):
        scan = getattr(pe_lib, name)
        target = first_ref(d, 5000, base, test)
        assert target is not None and scan(d, base=base, max_offset=5000) == target
        for chunk in sorted({1, 2, max(1, target - 1), target, target + 1, 4096}):
            monkeypatch.setattr(relative, "_CHUNK", chunk)
            assert scan(d, base=base, max_offset=target) == target, (name, chunk)  # the last offset is scanned
            assert scan(d, base=base, max_offset=target - 1 or 1) == (target if target == 1 else None), (name, chunk)
            assert scan(d, base=base, max_offset=target + 1) == target, (name, chunk)


def test_offset_projections_hand_values():
    # d = 4, base 100, offset 2, scale 3, pair weights (0.5, -1): W_Q = s M(2) D, W_K = I
    c0, s0, c1, s1 = math.cos(2), math.sin(2), math.cos(0.2), math.sin(0.2)
    w_q, w_k = pe_lib.offset_attention_projections(2.0, 4, base=100, scale=3.0, pair_weights=[0.5, -1.0])
    expected = [[1.5 * c0, 1.5 * s0, 0, 0], [-1.5 * s0, 1.5 * c0, 0, 0], [0, 0, -3 * c1, -3 * s1],
                [0, 0, 3 * s1, -3 * c1]]
    np.testing.assert_allclose(w_q, expected, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(w_k, np.eye(4))


@pytest.mark.parametrize("causal", [False, True])
def test_offset_attention_matches_a_loop_reference(causal):
    # score(i, j) = s sum_k a_k cos(omega_k (j - i + phi)) / sqrt(d), then softmax, masked if causal
    n, phi, d, base, s, a = 6, 2.0, 4, 30.0, 5.0, [1.0, 0.5]
    om = omega_ref(d, base)
    scores = [[s * sum(ak * math.cos(w * (j - i + phi)) for ak, w in zip(a, om, strict=True)) / math.sqrt(d)
               for j in range(n)] for i in range(n)]
    expected = [softmax_ref([v if not causal or j <= i else -math.inf for j, v in enumerate(row)])
                for i, row in enumerate(scores)]
    got = pe_lib.offset_attention(n, phi, d, base=base, scale=s, pair_weights=a, causal=causal)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)
    assert (got[0, 1] > 0.01) is not causal  # without the mask the first query sees later keys


def test_mass_on_offset_hand_values():
    w = np.arange(16.0).reshape(4, 4)
    np.testing.assert_array_equal(pe_lib.mass_on_offset(w, 0), [0, 5, 10, 15])
    np.testing.assert_array_equal(pe_lib.mass_on_offset(w, 1), [4, 9, 14])
    np.testing.assert_array_equal(pe_lib.mass_on_offset(w, 3), [12])


# ---- rope.py ------------------------------------------------------------------------------------


@pytest.mark.parametrize("base", [100.0, 10_000.0, 7.0])
def test_rope_decay_bound_hand_values(base):
    # d = 4: omega = (1, w) with w = base^(-1/2); S_1 = e^{iD}, S_2 = e^{iD} + e^{iwD}
    # mean (|S_1| + |S_2|) / 2 = (1 + 2 |cos((1 - w) D / 2)|) / 2
    w = base**-0.5
    deltas = [0.0, 1.0, 2.5, -4.0, 17.0, 300.0]
    expected = [(1 + 2 * abs(math.cos((1 - w) * t / 2))) / 2 for t in deltas]
    np.testing.assert_allclose(pe_lib.rope_decay_bound(deltas, 4, base=base), expected, rtol=1e-13)
    # d = 6, by the definition with cmath
    om = omega_ref(6, base)
    ref = [sum(abs(sum(cmath.exp(1j * t * om[i]) for i in range(j))) for j in (1, 2, 3)) / 3 for t in deltas]
    np.testing.assert_allclose(pe_lib.rope_decay_bound(deltas, 6, base=base), ref, rtol=1e-13)


def test_rope_hand_values_with_a_base():
    # d = 4, base 100, position 2: pair 0 turns (1, 0) by 2 rad, pair 1 turns (0, 1) by 0.2 rad
    got = pe_lib.rope([[1.0, 0.0, 0.0, 1.0]], [2.0], base=100)
    np.testing.assert_allclose(got, [[math.cos(2), math.sin(2), -math.sin(0.2), math.cos(0.2)]], atol=2e-16)
    got = pe_lib.rope([[1.0, 0.0, 0.0, 1.0]], [2.0], base=100, layout="split")  # pairs (0, 2) and (1, 3)
    np.testing.assert_allclose(got, [[math.cos(2), -math.sin(0.2), math.sin(2), math.cos(0.2)]], atol=2e-16)


# ---- alibi.py -----------------------------------------------------------------------------------


def test_alibi_bias_hand_values():
    # 2 heads: slopes 2^-4 and 2^-8; B[h, i, j] = -m_h |i - j|
    dist = np.array([[0, 1, 2], [1, 0, 1], [2, 1, 0]], dtype=float)
    np.testing.assert_array_equal(pe_lib.alibi_bias(3, 2), [-dist / 16, -dist / 256])
    np.testing.assert_array_equal(pe_lib.alibi_slopes(1), [2.0**-8])
    np.testing.assert_array_equal(pe_lib.alibi_slopes(2), [2.0**-4, 2.0**-8])
    np.testing.assert_array_equal(pe_lib.alibi_slopes(4), [2.0**-2, 2.0**-4, 2.0**-6, 2.0**-8])
    # 5 heads: the 4 of 4 heads, then slope 0 of 8 heads, 2^-1
    np.testing.assert_array_equal(pe_lib.alibi_slopes(5), [2.0**-2, 2.0**-4, 2.0**-6, 2.0**-8, 2.0**-1])
    np.testing.assert_array_equal(pe_lib.alibi_slopes(7), [2.0**-e for e in (2, 4, 6, 8, 1, 3, 5)])


# ---- linear_fit.py ------------------------------------------------------------------------------


def test_least_squares_hand_values():
    # points (0, 0), (1, 1), (2, 3)
    x, y = [[0.0], [1.0], [2.0]], [0.0, 1.0, 3.0]
    # through the origin: M = sum xy / sum x^2 = 7/5; residuals (0, -0.4, 0.2); rms = sqrt(0.2 / 3)
    m, rms = pe_lib.fit_linear_map(x, y)
    np.testing.assert_allclose(m, [[1.4]], rtol=1e-14)
    assert rms == pytest.approx(math.sqrt(0.2 / 3), rel=1e-14)
    # with intercept: slope 3/2, intercept 4/3 - 3/2 = -1/6; residuals (1/6, -1/3, 1/6); rms = sqrt(1/18)
    m, rms = pe_lib.fit_linear_map(x, y, intercept=True)
    np.testing.assert_allclose(m, [[1.5, -1 / 6]], rtol=1e-13)
    assert rms == pytest.approx(math.sqrt(1 / 18), rel=1e-13)
    # two targets, y and 2y: the rms averages over all T * r = 6 residuals: sqrt((0.2 + 0.8) / 6)
    m, rms = pe_lib.fit_linear_map(x, np.array([y, [2 * v for v in y]]).T)
    np.testing.assert_allclose(m, [[1.4], [2.8]], rtol=1e-14)
    assert rms == pytest.approx(math.sqrt(1 / 6), rel=1e-14)
    # R^2 = 1 - SS_res / SS_tot with SS_tot = sum (y - 4/3)^2 = 14/3:
    assert pe_lib.r_squared(x, y) == pytest.approx(1 - (1 / 6) / (14 / 3), rel=1e-13)  # 27/28
    assert pe_lib.r_squared(x, y, intercept=False) == pytest.approx(1 - 0.2 / (14 / 3), rel=1e-13)  # 67/70


# ---- _validate.py: the size limit, on both sides --------------------------------------------------


def test_the_table_size_limit_is_two_gib_of_float64_and_inclusive():
    assert _validate.MAX_TABLE_ELEMENTS == 2**28  # 2**28 * 8 bytes = 2 GiB
    _validate.check_table_size(2**28, 1)  # exactly at the limit: allowed
    _validate.check_table_size(2**14, 2**14)
    with pytest.raises(ValueError, match=r"268,435,457 values exceeds the limit"):
        _validate.check_table_size(2**28 + 1, 1)
    with pytest.raises(ValueError, match=r"16384 x 16385 = 268,451,840 values exceeds"):
        _validate.check_table_size(2**14, 2**14 + 1)
    assert _validate.check_d_model(2**28) == 2**28
    with pytest.raises(ValueError, match=r"is too large: at most 268,435,456"):
        _validate.check_d_model(2**28 + 2)
    with pytest.raises(ValueError, match=r"134,217,729 positions exceeds the limit"):
        _validate.check_positions(2**27 + 1)


def test_position_count_limit_is_inclusive(monkeypatch):
    # with a small limit the accepted side can be checked without allocating 1 GiB
    monkeypatch.setattr(_validate, "MAX_TABLE_ELEMENTS", 100)
    np.testing.assert_array_equal(_validate.check_positions(50), np.arange(50.0))
    with pytest.raises(ValueError, match=r"51 positions exceeds the limit of 100"):
        _validate.check_positions(51)


# ---- defaults: the paper's base when none is given (found by `make mutate`) -----------------------


def test_the_default_base_is_the_papers():
    # d = 110 is a width where f(D) grazes zero near D = 1147: base 10000 first goes negative at 1347,
    # a base of 10001 already at 1147, so the answer shows which base was used
    assert first_ref(110, 2000, 10_000.0, negative) == 1347
    assert pe_lib.first_negative(110) == 1347
    x = np.random.default_rng(0).normal(size=(3, 8))
    np.testing.assert_array_equal(pe_lib.apply_shift(x, 1000.0), pe_lib.apply_shift(x, 1000.0, base=10_000.0))
    np.testing.assert_array_equal(pe_lib.rope_decay_bound(50, 8), pe_lib.rope_decay_bound(50, 8, base=10_000.0))
    np.testing.assert_allclose(pe_lib.frequencies(8), [math.pow(10_000.0, -2 * k / 8) for k in range(4)], rtol=1e-15)
