"""The clock's maths (pe_lib.encodings.hands): hands on the unit circle, the direction they turn."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import bases, d_models

import pe_lib


@given(d=d_models, base=bases)
def test_hands_are_the_table_pairs_on_the_unit_circle(d, base):
    hands = pe_lib.hand_positions(np.arange(50), d, base=base)
    table = pe_lib.sinusoidal(50, d, base=base)
    assert hands.shape == (50, d // 2, 2)
    np.testing.assert_array_equal(hands[..., 0], table[:, 0::2])  # x = sin
    np.testing.assert_array_equal(hands[..., 1], table[:, 1::2])  # y = cos
    np.testing.assert_allclose(np.hypot(hands[..., 0], hands[..., 1]), 1.0, atol=1e-14)


@given(d=d_models, base=bases, step=st.integers(min_value=1, max_value=10))
def test_cross_product_of_successive_hands_is_minus_sin_of_the_step_angle(d, base, step):
    hands = pe_lib.hand_positions(np.arange(0, 40 * step, step), d, base=base)
    z = pe_lib.cross_z(hands)
    expected = -np.sin(step * pe_lib.frequencies(d, base=base))  # x_t y_{t+s} - y_t x_{t+s} = -sin(s omega)
    np.testing.assert_allclose(z, np.broadcast_to(expected, z.shape), atol=1e-11)


@given(d=d_models, base=bases)
def test_every_hand_turns_clockwise_token_by_token(d, base):
    # 0 < omega_k <= 1 < pi, so -sin(omega_k) < 0 for every pair
    senses = pe_lib.rotation_sense(pe_lib.hand_positions(np.arange(30), d, base=base), atol=0.0)
    assert np.all(senses == "clockwise")


def test_sampled_every_four_tokens_the_fastest_hand_looks_counterclockwise():
    hands = pe_lib.hand_positions(np.arange(0, 40, 4), 512)
    senses = pe_lib.rotation_sense(hands)
    assert np.all(senses[:, 0] == "counterclockwise")  # 4 rad > pi: the short way round is backwards
    # in general pair k looks counterclockwise exactly when (4 omega_k mod 2 pi) > pi
    backwards = np.mod(4 * pe_lib.frequencies(512), 2 * np.pi) > np.pi
    assert backwards[:7].all() and not backwards[7:].any()
    np.testing.assert_array_equal(senses == "counterclockwise", np.broadcast_to(backwards, senses.shape))


def test_cos_sin_axes_reverse_the_direction():
    hands = pe_lib.hand_positions(np.arange(20), 8)
    assert np.all(pe_lib.rotation_sense(hands[..., ::-1]) == "counterclockwise")


def test_rotation_sense_still_and_errors():
    assert pe_lib.rotation_sense([[0.0, 1.0], [0.0, 1.0], [0.0, -1.0]]).tolist() == ["still", "still"]
    for bad in ([[0.0, 1.0]], [0.0, 1.0], np.zeros((3, 3))):
        with pytest.raises(ValueError, match="points must have shape"):
            pe_lib.cross_z(bad)


def test_embedded_positions_circle_the_word():
    x = np.random.default_rng(0).normal(size=16)
    out = pe_lib.embedded_positions(x, np.arange(100))
    assert out.shape == (100, 16)
    pairs = (out - x).reshape(100, 8, 2)
    np.testing.assert_allclose(np.hypot(pairs[..., 0], pairs[..., 1]), 1.0, atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(out - x, axis=1), np.sqrt(8), atol=1e-13)


@pytest.mark.parametrize(("x", "match"), [
    (np.zeros((2, 4)), "one vector of shape"),
    ([0.0, np.nan], "must be finite"),
    (np.zeros(3), "the length of embedding must be a positive even integer"),
])
def test_embedded_positions_rejects_bad_embeddings(x, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.embedded_positions(x, 4)
