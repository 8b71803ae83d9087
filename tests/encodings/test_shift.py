"""The offset map M(phi): PE(p + phi) = M(phi) PE(p), with M orthogonal and independent of p."""

import numpy as np
import pytest
from hypothesis import given
from strategies import bases, d_models, offsets, positions

import pe_lib


@given(d=d_models, phi=offsets, base=bases)
def test_shift_matrix_is_orthogonal(d, phi, base):
    m = pe_lib.shift_matrix(phi, d, base=base)
    np.testing.assert_allclose(m @ m.T, np.eye(d), atol=1e-13)


@given(d=d_models, p=positions, phi=offsets, base=bases)
def test_shift_matrix_maps_pe_p_to_pe_p_plus_phi(d, p, phi, base):
    m = pe_lib.shift_matrix(phi, d, base=base)
    pe_p, pe_shifted = pe_lib.sinusoidal([p, p + phi], d, base=base)
    # angle rounding error is of order eps * |p|, so the tolerance scales with the positions
    np.testing.assert_allclose(m @ pe_p, pe_shifted, atol=1e-12 * (1 + abs(p) + abs(phi)))


@given(d=d_models, phi=offsets)
def test_shift_matrix_blocks(d, phi):
    m = pe_lib.shift_matrix(phi, d)
    theta = phi * pe_lib.frequencies(d)
    for k in [0, d // 2 - 1]:
        block = m[2 * k : 2 * k + 2, 2 * k : 2 * k + 2]
        c, s = np.cos(theta[k]), np.sin(theta[k])
        np.testing.assert_array_equal(block, [[c, s], [-s, c]])
    # nothing outside the 2x2 blocks
    mask = np.kron(np.eye(d // 2), np.ones((2, 2))).astype(bool)
    assert np.all(m[~mask] == 0)


@given(d=d_models, phi=offsets, base=bases)
def test_apply_shift_equals_matrix_product(d, phi, base):
    rng = np.random.default_rng(d)
    x = rng.normal(size=(3, 5, d))
    expected = x @ pe_lib.shift_matrix(phi, d, base=base).T
    np.testing.assert_allclose(pe_lib.apply_shift(x, phi, base=base), expected, atol=1e-12)


def test_shifts_compose():
    a, b = 3.25, -11.0
    np.testing.assert_allclose(
        pe_lib.shift_matrix(a, 16) @ pe_lib.shift_matrix(b, 16), pe_lib.shift_matrix(a + b, 16), atol=1e-14
    )


def test_apply_shift_messages_name_the_argument():
    # found by `make mutate`: the messages must start with the argument's name, as written
    with pytest.raises(TypeError, match=r"^vectors must hold real numbers"):
        pe_lib.apply_shift(["a", "b"], 1.0)
    with pytest.raises(ValueError, match=r"^vectors must have shape \(\.\.\., d_model\), got a scalar$"):
        pe_lib.apply_shift(1.0, 1.0)
    with pytest.raises(ValueError, match=r"^vectors must be finite, got NaN or infinity among them$"):
        pe_lib.apply_shift([np.nan, 1.0], 1.0)


def test_the_default_base_moves_the_paper_encoding():
    # apply_shift's default base is the encoding's: PE(pos) moved by k is PE(pos + k) (base 10000, by hand)
    def pe(pos):
        omega = 10000.0 ** (-np.arange(0, 8, 2) / 8)
        return np.stack([np.sin(pos * omega), np.cos(pos * omega)], axis=-1).ravel()

    np.testing.assert_allclose(pe_lib.apply_shift(pe(3.0), 5.0), pe(8.0), atol=1e-12)
    np.testing.assert_allclose(pe(3.0) @ pe_lib.shift_matrix(5.0, 8).T, pe(8.0), atol=1e-12)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: pe_lib.shift_matrix(float("inf"), 4), "offset must be a finite real number, got inf"),
        (lambda: pe_lib.shift_matrix(1.0, 20_000),
         "a shift matrix of 20000 x 20000 = 400,000,000 values exceeds the limit of 268,435,456 (2 GiB of "
         "float64); ask for fewer positions or a smaller d_model"),
        (lambda: pe_lib.apply_shift(np.ones(3), 1.0),
         "the last axis of vectors must be a positive even integer (each frequency fills a sin/cos pair), got 3; "
         "try 4"),
        (lambda: pe_lib.apply_shift(np.ones(4), float("nan")), "offset must be a finite real number, got nan"),
    ],
)
def test_errors_in_full(call, message):
    with pytest.raises(ValueError) as error:
        call()
    assert str(error.value) == message
