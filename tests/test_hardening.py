"""Hardening of pe_lib's foundation API, property-based.

Valid random inputs, drawn from wide ranges (bases from just above 1 to 1e300, positions up to 1e9),
give results that satisfy the identities and never a numpy warning. Invalid random inputs raise
ValueError or TypeError whose message names the argument: never a warning (every warning is an
error in this module), a silent NaN, a MemoryError or an exception from deep inside numpy.
"""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pe_lib
from pe_lib._validate import MAX_TABLE_ELEMENTS

pytestmark = pytest.mark.filterwarnings("error")

# ---- valid inputs, wider than tests/strategies.py ---------------------------------------------------
wide_d = st.integers(min_value=1, max_value=1024).map(lambda h: 2 * h)
wide_base = st.one_of(
    st.floats(min_value=1.0 + 1e-9, max_value=2.0),
    st.floats(min_value=2.0, max_value=1e300),
)
wide_pos = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False, allow_infinity=False)
conventions = st.sampled_from(["paper", "tensor2tensor"])
moderate = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)

# ---- invalid inputs ---------------------------------------------------------------------------------
bad_d_model = st.one_of(
    st.integers(max_value=0),  # zero and negative
    st.integers(min_value=0, max_value=10**6).map(lambda h: 2 * h + 1),  # odd
    st.integers(min_value=MAX_TABLE_ELEMENTS // 2 + 1, max_value=10**30).map(lambda h: 2 * h),  # huge
    st.floats(allow_nan=True, allow_infinity=True),  # floats, even integer-valued ones
    st.booleans(),
    st.text(max_size=5),
    st.none(),
)
bad_base = st.one_of(
    st.floats(max_value=1.0),  # base <= 1, including -inf
    st.just(math.nan),
    st.just(math.inf),
    st.text(max_size=5),
    st.none(),
    st.booleans(),
)
non_finite = st.sampled_from([math.nan, math.inf, -math.inf])


@st.composite
def bad_positions(draw):
    kind = draw(st.sampled_from(["non-finite", "2-D", "string", "strings", "complex", "negative n", "huge n"]))
    if kind == "non-finite":
        values = draw(st.lists(moderate, min_size=0, max_size=10))
        values.insert(draw(st.integers(0, len(values))), draw(non_finite))
        return values
    if kind == "2-D":
        return draw(hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=3, max_side=4), elements=moderate))
    if kind == "string":
        return draw(st.text(max_size=8))
    if kind == "strings":
        return draw(st.lists(st.text(min_size=1, max_size=3), min_size=1, max_size=4))
    if kind == "complex":
        return [complex(draw(moderate), draw(moderate.filter(lambda v: v != 0)))]
    if kind == "negative n":
        return draw(st.integers(max_value=-1))
    return draw(st.integers(min_value=MAX_TABLE_ELEMENTS, max_value=10**40))


bad_choice = st.one_of(st.text(max_size=12), st.none(), st.integers())

ERRORS = (ValueError, TypeError)


def raises_naming(fn, name):
    """``fn()`` raises ValueError/TypeError whose message mentions ``name``; returns the message."""
    with pytest.raises(ERRORS) as info:
        fn()
    message = str(info.value)
    assert name in message, message
    return message


D_MODEL_CALLS = {
    "frequencies": lambda d: pe_lib.frequencies(d),
    "wavelengths": lambda d: pe_lib.wavelengths(d),
    "sinusoidal": lambda d: pe_lib.sinusoidal(4, d),
    "sinusoidal_loop": lambda d: pe_lib.sinusoidal_loop(2, d),
    "shift_matrix": lambda d: pe_lib.shift_matrix(1.0, d),
    "dot_profile": lambda d: pe_lib.dot_profile(3, d),
}
BASE_CALLS = {
    "frequencies": lambda b: pe_lib.frequencies(8, base=b),
    "wavelengths": lambda b: pe_lib.wavelengths(8, base=b),
    "sinusoidal": lambda b: pe_lib.sinusoidal(100, 8, base=b),
    "sinusoidal_loop": lambda b: pe_lib.sinusoidal_loop(2, 8, base=b),
    "shift_matrix": lambda b: pe_lib.shift_matrix(1.0, 8, base=b),
    "apply_shift": lambda b: pe_lib.apply_shift(np.ones(8), 1.0, base=b),
    "dot_profile": lambda b: pe_lib.dot_profile(3, 8, base=b),
}
POSITION_CALLS = {
    "sinusoidal": (lambda p: pe_lib.sinusoidal(p, 8), "positions"),
    "sinusoidal_loop": (lambda p: pe_lib.sinusoidal_loop(p, 8), "positions"),
    "dot_profile": (lambda p: pe_lib.dot_profile(p, 8), "offsets"),
}


@pytest.mark.parametrize("call", D_MODEL_CALLS.values(), ids=D_MODEL_CALLS.keys())
@given(d=bad_d_model)
def test_bad_d_model_is_refused_by_name(call, d):
    raises_naming(lambda: call(d), "d_model")


@pytest.mark.parametrize("call", BASE_CALLS.values(), ids=BASE_CALLS.keys())
@given(base=bad_base)
def test_bad_base_is_refused_by_name(call, base):
    raises_naming(lambda: call(base), "base")


@pytest.mark.parametrize(("call", "name"), POSITION_CALLS.values(), ids=POSITION_CALLS.keys())
@given(positions=bad_positions())
def test_bad_positions_are_refused_by_name(call, name, positions):
    raises_naming(lambda: call(positions), name)


@given(layout=bad_choice.filter(lambda v: v not in ("interleaved", "split")))
def test_unknown_layout_is_refused(layout):
    raises_naming(lambda: pe_lib.sinusoidal(4, 8, layout=layout), "layout must be one of 'interleaved', 'split'")
    raises_naming(lambda: pe_lib.sinusoidal_loop(4, 8, layout=layout), "layout")


@given(convention=bad_choice.filter(lambda v: v not in ("paper", "tensor2tensor")))
def test_unknown_convention_is_refused(convention):
    for call in (pe_lib.frequencies, pe_lib.wavelengths):
        raises_naming(lambda call=call: call(8, convention=convention), "convention must be one of")
    raises_naming(lambda: pe_lib.sinusoidal(4, 8, convention=convention), "convention")
    raises_naming(lambda: pe_lib.dot_profile(4, 8, convention=convention), "convention")


@given(offset=st.one_of(non_finite, st.text(max_size=4), st.none()))
def test_bad_offset_is_refused(offset):
    raises_naming(lambda: pe_lib.shift_matrix(offset, 8), "offset")
    raises_naming(lambda: pe_lib.apply_shift(np.ones(8), offset), "offset")


@st.composite
def poisoned(draw, shape):
    """A float array of ``shape`` with one NaN/inf, or a string/complex/ragged stand-in."""
    kind = draw(st.sampled_from(["non-finite", "string", "strings", "complex", "ragged"]))
    if kind == "non-finite":
        arr = np.ones(shape)
        arr.flat[draw(st.integers(0, arr.size - 1))] = draw(non_finite)
        return arr
    if kind == "string":
        return draw(st.text(max_size=6))
    if kind == "strings":
        return np.full(shape, "a")
    if kind == "complex":
        return np.ones(shape) + 1j
    return [[1.0, 2.0], [3.0]]


@given(bad=poisoned((3, 4)))
def test_array_arguments_are_checked(bad):
    good2, good4 = np.ones((3, 2)), np.ones((4, 2))
    raises_naming(lambda: pe_lib.apply_shift(bad, 1.0), "vectors")
    raises_naming(lambda: pe_lib.attention_weights(bad, np.ones((2, 4))), "q")
    raises_naming(lambda: pe_lib.attention_weights(np.ones((2, 4)), bad), "k")
    raises_naming(lambda: pe_lib.attention_weights(np.ones((3, 1)), np.ones((4, 1)), bias=bad), "bias")
    raises_naming(lambda: pe_lib.self_attention(bad, good4, good4, good4), "x")
    raises_naming(lambda: pe_lib.self_attention(np.ones((5, 3)), bad, np.ones((3, 4)), np.ones((3, 4))), "w_q")
    raises_naming(lambda: pe_lib.fit_linear_map(bad, np.ones(3)), "x")
    raises_naming(lambda: pe_lib.fit_linear_map(good2, bad), "y")
    raises_naming(lambda: pe_lib.r_squared(bad, np.arange(3.0)), "x")


@given(bad=poisoned((3, 4)))
def test_softmax_scores_are_checked(bad):
    if isinstance(bad, np.ndarray) and bad.dtype.kind == "f" and not np.any(np.isnan(bad) | (bad == np.inf)):
        assert np.all(np.isfinite(pe_lib.softmax(bad)))  # -inf alone is a legitimate mask (weight 0)
    else:
        raises_naming(lambda: pe_lib.softmax(bad), "scores")


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: pe_lib.shift_matrix(0.0, 2**16), "shift matrix of 65536 x 65536"),
        (lambda: pe_lib.dot_profile(10**6, 2**12), "table of angles of 1000000 x 2048 = "),
        (lambda: pe_lib.sinusoidal(10**6, 2**10), "table of 1000000 x 1024"),
        (lambda: pe_lib.sinusoidal(10**12, 2), "a table of 1,000,000,000,000 positions exceeds the limit"),
        (lambda: pe_lib.frequencies(2**40), "d_model = 1,099,511,627,776 is too large"),
        (lambda: pe_lib.causal_mask(10**6), "causal mask of 1000000 x 1000000"),
        (lambda: pe_lib.attention_weights(np.ones((10**5, 1)), np.ones((10**5, 1))), "score matrix of 100000 x 100000"),
    ],
)
def test_absurd_memory_requests_fail_fast(call, match):
    # each of these would need 2 GiB to 8 TiB; the refusal comes before any large allocation
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: pe_lib.softmax(np.zeros((3, 0))), r"no entries along axis -1"),
        (lambda: pe_lib.softmax(np.zeros((3, 2)), axis=2), r"axis must be an integer from -2 to 1, got 2"),
        (lambda: pe_lib.softmax(np.zeros(3), axis=0.5), r"axis must be an integer"),
        (lambda: pe_lib.attention_weights(np.ones((2, 0)), np.ones((2, 0))), r"needs d_k >= 1"),
        (lambda: pe_lib.attention_weights(np.ones((2, 3)), np.ones((0, 3))), r"at least one key"),
        (lambda: pe_lib.attention_weights(np.full((2, 2), 1e200), np.full((2, 2), 1e200)), r"scores .* overflow"),
        (lambda: pe_lib.self_attention(np.full((2, 2), 1e200), np.full((2, 2), 1e200), np.eye(2), np.eye(2)),
         r"x @ w_q overflow"),
        (lambda: pe_lib.fit_linear_map(np.zeros((0, 2)), np.zeros(0)), r"at least one sample, got shape \(0, 2\)"),
        (lambda: pe_lib.fit_linear_map(np.array([[1e300], [2e300]]), np.array([1e300, -1e300])), r"overflows float64"),
        (lambda: pe_lib.wavelengths(8, base=1.7e308, convention="tensor2tensor"), r"overflows float64"),
        (lambda: pe_lib.sinusoidal([0.0, 1e39], 8, dtype=np.float32), r"must fit in float32"),
    ],
)
def test_edge_cases_raise_instead_of_warning(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_softmax_of_extreme_finite_scores_is_exact():
    # s - max(s) overflows to -inf here: the weight is 0, without a warning
    np.testing.assert_array_equal(pe_lib.softmax([1e308, -1e308]), [1.0, 0.0])


# ---- valid inputs: identities hold and nothing warns ------------------------------------------------
@settings(max_examples=60)
@given(d=wide_d, base=wide_base, convention=conventions)
def test_frequencies_and_wavelengths_over_wide_bases(d, base, convention):
    assume(not (convention == "tensor2tensor" and d == 2))  # undefined; see test_validation
    omega = pe_lib.frequencies(d, base=base, convention=convention)
    assert omega.shape == (d // 2,) and omega[0] == 1.0
    assert np.all(np.diff(omega) <= 0) and np.all(omega > 0)
    np.testing.assert_allclose(pe_lib.wavelengths(d, base=base, convention=convention) * omega, 2 * np.pi, rtol=1e-15)


@settings(max_examples=60)
@given(d=st.integers(1, 64).map(lambda h: 2 * h), base=wide_base,
       pos=st.lists(wide_pos, min_size=1, max_size=8), layout=st.sampled_from(["interleaved", "split"]))
def test_sinusoidal_over_wide_inputs(d, base, pos, layout):
    table = pe_lib.sinusoidal(pos, d, base=base, layout=layout)
    assert table.shape == (len(pos), d) and np.all(np.isfinite(table))
    np.testing.assert_allclose(np.sum(table**2, axis=1), d / 2, rtol=1e-13)  # sin^2 + cos^2 = 1 per pair


@settings(max_examples=60)
@given(d=st.integers(1, 64).map(lambda h: 2 * h), base=wide_base, phi=wide_pos,
       seed=st.integers(0, 2**32 - 1))
def test_apply_shift_is_a_rotation(d, base, phi, seed):
    x = np.random.default_rng(seed).normal(size=(3, d))
    y = pe_lib.apply_shift(x, phi, base=base)
    # each (sin, cos) pair is rotated: pairwise norms are kept; the inverse shift undoes it
    np.testing.assert_allclose(np.hypot(y[:, 0::2], y[:, 1::2]), np.hypot(x[:, 0::2], x[:, 1::2]), rtol=1e-12)
    np.testing.assert_allclose(pe_lib.apply_shift(y, -phi, base=base), x, atol=1e-12)


@settings(max_examples=60)
@given(scores=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=6),
                         elements=st.floats(-1e300, 1e300)),
       shift=st.floats(-1e3, 1e3))
def test_softmax_sums_to_one_for_any_finite_scores(scores, shift):
    w = pe_lib.softmax(scores)
    assert np.all((w >= 0) & (w <= 1))
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=1e-12)
    if np.abs(scores).max(initial=0.0) < 1e6:  # adding a constant to every score changes nothing
        np.testing.assert_allclose(pe_lib.softmax(scores + shift), w, atol=1e-9)


@settings(max_examples=40)
@given(n=st.integers(1, 8), m=st.integers(1, 8), d_k=st.integers(1, 6), seed=st.integers(0, 2**32 - 1))
def test_attention_weights_are_distributions(n, m, d_k, seed):
    rng = np.random.default_rng(seed)
    w = pe_lib.attention_weights(rng.normal(size=(n, d_k)), rng.normal(size=(m, d_k)))
    assert w.shape == (n, m)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=1e-12)
    wc = pe_lib.attention_weights(rng.normal(size=(n, d_k)), rng.normal(size=(n, d_k)), causal=True)
    assert np.all(wc[np.triu_indices(n, k=1)] == 0)


@settings(max_examples=40)
@given(t=st.integers(8, 40), p=st.integers(1, 4), r=st.integers(1, 3), seed=st.integers(0, 2**32 - 1))
def test_fit_linear_map_recovers_an_exact_map(t, p, r, seed):
    rng = np.random.default_rng(seed)
    x, m = rng.normal(size=(t, p)), rng.normal(size=(r, p))
    fitted, rms = pe_lib.fit_linear_map(x, x @ m.T)
    np.testing.assert_allclose(fitted, m, atol=1e-9)
    assert rms < 1e-9
    assert pe_lib.r_squared(x, x @ m.T + 1.0) == pytest.approx(1.0, abs=1e-9)


@settings(max_examples=40)
@given(d=st.integers(1, 128).map(lambda h: 2 * h), base=wide_base, p=st.floats(-1e3, 1e3), delta=st.floats(-1e3, 1e3))
def test_dot_profile_is_the_dot_product(d, base, p, delta):
    a, b = pe_lib.sinusoidal([p, p + delta], d, base=base)
    f = pe_lib.dot_profile([delta], d, base=base)[0]
    assert abs(f - a @ b) <= 1e-12 * d * (1 + abs(p) + abs(delta))
